"""How fast does ``glotbench import lm-eval`` store per-example records?

    python benchmarks/bench_import.py                 # 1,000,000 samples (≈ 680 MB of JSONL)
    python benchmarks/bench_import.py --records 200000 --tasks 20
    python benchmarks/bench_import.py --records 0 --examples-rows 1000000 3000000 10000000

Writes a synthetic lm-evaluation-harness output folder (one results JSON and
one samples_<task>_<timestamp>.jsonl per task, records shaped like the
harness's: doc, arguments, resps, filtered_resps, hashes, ``acc`` and
``acc_norm``) into a temporary folder, then times the import into a fresh
store:

* read + validate (JSON parsing of every sample line, statistics matrices);
* write (``store.runs.write_batches``: transactions of whole runs);
* end to end (``import_lm_eval``), with the process's peak RSS.

Every sample carries two per-example metrics (acc, acc_norm), so 1 M samples
are 2 M rows of example statistics.

``--examples-rows N ...``: peak memory and time of the streaming tidy
``import examples`` for CSV files of N rows, each in a fresh subprocess
(``bench_import_examples.py``).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from glotbench.importers.lm_eval import import_lm_eval, read_lm_eval
from glotbench.importers.writer import check_against_store, check_same_examples
from glotbench.store import Store

STAMP = "2026-01-01T00-00-00.000000"


def make_folder(root: Path, records: int, tasks: int, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    out = root / "bench-model"
    out.mkdir(parents=True)
    per_task = records // tasks
    results, configs = {}, {}
    for t in range(tasks):
        task = f"xnli_l{t:03d}" if t < 26 * 26 else f"task{t}"
        acc = rng.random(per_task) < 0.6
        acc_norm = rng.random(per_task) < 0.55
        with open(out / f"samples_{task}_{STAMP}.jsonl", "w", encoding="utf-8") as fh:
            for i in range(per_task):
                rec = {
                    "doc_id": i,
                    "doc": {
                        "premise": "ein kurzer Satz",
                        "hypothesis": "noch einer",
                        "label": i % 3,
                    },
                    "target": str(i % 3),
                    "arguments": {
                        "gen_args_0": {"arg_0": "", "arg_1": "ein kurzer Satz, richtig? Ja"}
                    },
                    "resps": [[["-12.5", "False"]], [["-11.25", "False"]], [["-13.0", "False"]]],
                    "filtered_resps": [["-12.5", "False"], ["-11.25", "False"], ["-13.0", "False"]],
                    "filter": "none",
                    "metrics": ["acc", "acc_norm"],
                    "doc_hash": "0" * 64,
                    "prompt_hash": "1" * 64,
                    "target_hash": "2" * 64,
                    "acc": float(acc[i]),
                    "acc_norm": float(acc_norm[i]),
                }
                fh.write(json.dumps(rec) + "\n")
        results[task] = {
            "alias": task,
            "acc,none": float(acc.mean()),
            "acc_stderr,none": float(acc.std(ddof=1) / np.sqrt(per_task)),
            "acc_norm,none": float(acc_norm.mean()),
            "acc_norm_stderr,none": float(acc_norm.std(ddof=1) / np.sqrt(per_task)),
        }
        configs[task] = {
            "metric_list": [
                {"metric": "acc", "aggregation": "mean"},
                {"metric": "acc_norm", "aggregation": "mean"},
            ]
        }
    payload = {
        "results": results,
        "group_subtasks": {t: [] for t in results},
        "configs": configs,
        "n-samples": {t: {"original": per_task, "effective": per_task} for t in results},
        "config": {"model": "hf", "model_args": "pretrained=bench-model", "fewshot_seed": 1234},
        "model_name": "bench-model",
    }
    (out / f"results_{STAMP}.json").write_text(json.dumps(payload), encoding="utf-8")
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--examples-rows", type=int, nargs="*", default=[])
    args = parser.parse_args()
    if args.examples_rows:
        from bench_import_examples import run_sizes

        run_sizes(args.examples_rows)
    if not args.records:
        return
    tmp = Path(tempfile.mkdtemp(prefix="glotbench-bench-import-"))
    try:
        t = time.perf_counter()
        folder = make_folder(tmp / "out", args.records, args.tasks)
        size = sum(p.stat().st_size for p in folder.rglob("*")) / 1e6
        print(
            f"wrote {args.records:,} samples in {args.tasks} tasks ({size:.0f} MB) "
            f"in {time.perf_counter() - t:.1f} s"
        )

        t = time.perf_counter()
        data = read_lm_eval(folder)
        t_read = time.perf_counter() - t
        rows = sum(r.example_ids.size for r in data.runs)
        print(
            f"read + validate : {t_read:6.2f} s  ({len(data.runs)} runs, {rows:,} stat rows, "
            f"{args.records / t_read:,.0f} samples/s)"
        )

        with Store.open(tmp / "store.duckdb") as store:
            t = time.perf_counter()
            check_same_examples(data.runs)
            todo = check_against_store(store, data.runs)
            done = store.runs.write_batches((r.record, r.example_ids, r.stats) for r in todo)
            t_write = time.perf_counter() - t
            print(
                f"write (batched) : {t_write:6.2f} s  ({rows / t_write:,.0f} stat rows/s, "
                f"{len(todo)} runs in {done.batches} transactions)"
            )
        del data

        with Store.open(tmp / "store3.duckdb") as store:
            t = time.perf_counter()
            result = import_lm_eval(store, folder)
            t_all = time.perf_counter() - t
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"end to end (import_lm_eval): {t_all:6.2f} s  -> {result.message} "
            f"(process peak RSS so far {peak:.0f} MB)"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
