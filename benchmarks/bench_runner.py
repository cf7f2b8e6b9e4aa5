"""Runner overhead per example against the model's own inference time; Ray scaling.

Usage::

    python benchmarks/bench_runner.py [--data-dir ../shared/data] [--ray]

1. Overhead: a POS dataset (UD Danish, or a synthetic tagging set when the
   shared data is absent) and the scikit-learn tagger. The job's wall time is
   split into the model's own time (fit + predict, measured by the runner)
   and everything else (dataset handling, statistics, the store write), per
   test example.
2. Ray scaling (``--ray``, needs ray): the same 8 jobs through the local
   executor and a local Ray with 1 and 2 CPUs; the stored statistics are
   checked to be identical.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from glotbench import api
from glotbench.core import Store


def _suite(folder: Path, data_dir: Path | None, iterations: int) -> Path:
    if data_dir is not None and (data_dir / "ud").is_dir():
        ds = (
            "{name: pos-da, task: pos, language: da, loader: conllu, "
            'paths: ["ud/UD_Danish-DDT/*.conllu"]}'
        )
    else:
        rows = []
        for i in range(3000):
            toks = (
                ["the", "cat", "sees", "Oslo"] if i % 2 else ["a", "dog", "likes", "Bergen", "now"]
            )
            tags = ["DET", "NOUN", "VERB", "PROPN"] + ([] if i % 2 else ["ADV"])
            rows.append(json.dumps({"id": f"t{i}", "tokens": toks, "tags": tags}))
        (folder / "pos.jsonl").write_text("\n".join(rows), encoding="utf-8")
        ds = "{name: pos-syn, task: pos, language: xx, loader: jsonl, paths: [pos.jsonl]}"
    suite = folder / "bench.yaml"
    suite.write_text(
        f"name: bench\nprotocol: {{iterations: {iterations}, speed_repeats: 0}}\n"
        f"datasets:\n  - {ds}\nmodels:\n  - {{name: tagger, kind: tagger}}\n"
        "  - {name: majority, kind: majority}\n",
        encoding="utf-8",
    )
    return suite


def overhead(suite: Path, data_dir: Path | None, folder: Path) -> None:
    store = folder / "overhead.duckdb"
    start = time.perf_counter()
    summary = api.run_benchmark(suite, store=store, data_dir=data_dir)
    total = time.perf_counter() - start
    with Store.open(store, read_only=True) as handle:
        runs = handle.runs()
    first = runs.drop_duplicates(["model", "seed"])
    model_time = sum(m["fit_seconds"] + m["predict_seconds"] for m in first["model_metadata"])
    n = int(first["n_examples"].sum())
    print("| quantity | value |\n| --- | --- |")
    print(f"| jobs | {summary.completed} |")
    print(f"| test examples evaluated | {n} |")
    print(f"| wall time (incl. dataset build) | {total:.2f} s |")
    print(f"| model time (fit + predict) | {model_time:.2f} s |")
    print(f"| runner overhead per example | {(total - model_time) / n * 1e6:.1f} µs |")


def ray_scaling(suite: Path, data_dir: Path | None, folder: Path) -> None:
    try:
        import ray
    except ImportError:
        print("ray is not installed; skipping the scaling benchmark")
        return
    rows, digests = [], []
    for executor, cpus in (("local", None), ("ray", 1), ("ray", 2)):
        store = folder / f"{executor}{cpus}.duckdb"
        start = time.perf_counter()
        api.run_benchmark(suite, store=store, data_dir=data_dir, executor=executor, num_cpus=cpus)
        rows.append((executor, cpus, time.perf_counter() - start))
        with Store.open(store, read_only=True) as handle:
            digests.append(
                sorted(
                    handle.connection.execute("SELECT run_id, stats_sha256 FROM runs").fetchall()
                )
            )
        if ray.is_initialized():
            ray.shutdown()
    print("\n| executor | CPUs | wall time |\n| --- | --- | --- |")
    for executor, cpus, secs in rows:
        print(f"| {executor} | {cpus or 1} | {secs:.2f} s |")
    print(f"\nidentical statistics across executors: {all(d == digests[0] for d in digests)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--iterations", type=int, default=4)
    parser.add_argument("--ray", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        suite = _suite(folder, args.data_dir, args.iterations)
        overhead(suite, args.data_dir, folder)
        if args.ray:
            ray_scaling(suite, args.data_dir, folder)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
