"""How fast does ``glotbench import lm-eval`` store per-example records?

    python benchmarks/bench_import.py                 # 1,000,000 samples (≈ 350 MB of JSONL)
    python benchmarks/bench_import.py --records 200000 --tasks 20

Writes a synthetic lm-evaluation-harness output folder (one results JSON and
one samples_<task>_<timestamp>.jsonl per task, records shaped like the
harness's: doc, arguments, resps, filtered_resps, hashes, ``acc`` and
``acc_norm``) into a temporary folder, then times the import into a fresh
store in three parts:

* read + validate (JSON parsing of every sample line, statistics matrices);
* write (``Store.write_run``: one transaction per run, Arrow → DuckDB);
* the same write split by run count, to show ``write_run``'s per-run overhead.

Every sample carries two per-example metrics (acc, acc_norm), so 1 M samples
are 2 M rows of example statistics.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from glotbench.core import Store
from glotbench.importers.common import check_against_store, check_same_examples
from glotbench.importers.lm_eval import import_lm_eval, read_lm_eval

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
    args = parser.parse_args()
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
            for run in todo:
                store.write_run(run.record, run.example_ids, run.stats)
            t_write = time.perf_counter() - t
            print(
                f"write           : {t_write:6.2f} s  ({rows / t_write:,.0f} stat rows/s, "
                f"{1000 * t_write / len(todo):.1f} ms per run)"
            )

        # per-run overhead: the same rows in 10x more, 10x smaller runs
        many = []
        for run in data.runs[:10]:
            for j, part in enumerate(np.array_split(np.arange(run.example_ids.size), 100)):
                rec = run.record.model_copy(update={"seed": j})
                many.append((rec, run.example_ids[part], run.stats[part]))
        with Store.open(tmp / "store2.duckdb") as store:
            t = time.perf_counter()
            for rec, ids, stats in many:
                store.write_run(rec, ids, stats)
            t_many = time.perf_counter() - t
        n_rows = sum(ids.size for _, ids, _ in many)
        print(
            f"write_run overhead: {len(many)} runs of ~{n_rows // len(many)} rows: "
            f"{t_many:.2f} s = {1000 * t_many / len(many):.1f} ms per run"
        )

        with Store.open(tmp / "store3.duckdb") as store:
            t = time.perf_counter()
            result = import_lm_eval(store, folder)
            t_all = time.perf_counter() - t
        print(f"end to end (import_lm_eval): {t_all:6.2f} s  -> {result.message}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
