"""Writing and reading a store at leaderboard scale: time and memory.

Design: 200 models × 50 languages = 10,000 runs of accuracy (k = 2
statistics), ``--examples`` examples per run (the same test set for every
model of a language). Steps timed, each in a fresh store:

1. batched write — ``store.runs.write_batches`` (one transaction per batch of
   whole runs, one Arrow insert per table, the "already stored" check one
   anti-join per batch);
2. resume — the same call again: every run is found stored and skipped;
3. read back — ``store.runs.frame()`` and one aligned ``stats_matrix`` per language
   (200 runs × n × 2), the reads every paired analysis starts from; the
   scores recomputed from them are checked against the simulated truth;
4. for reference, the per-run path (``store.runs.write``: one transaction, an
   existence query and two inserts per run) on the first ``--per-run`` runs,
   extrapolated to all runs.

Wall-clock and CPU seconds are printed (CPU time depends much less on other
load on a shared machine), with the peak resident memory of the process.

Run: PYTHONPATH=src python benchmarks/bench_scale_store.py [--examples 500]
         [--per-run 500] [--json out.json]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from _common import load_average, machine_info, timed_cpu, write_json

from glotbench.store import RunRecord, Store


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def simulate(
    n_models: int, n_languages: int, n_examples: int, seed: int
) -> tuple[list[tuple[RunRecord, np.ndarray, np.ndarray]], np.ndarray]:
    """Runs (record, example ids, n × 2 statistics) and each run's true accuracy."""
    rng = np.random.default_rng(seed)
    ids = np.array([f"ex{i:06d}" for i in range(n_examples)], dtype=object)
    skill = rng.normal(0, 0.5, n_models)
    runs, truth = [], []
    ones = np.ones(n_examples)
    for language in range(n_languages):
        difficulty = rng.normal(0, 0.8)
        for model in range(n_models):
            p = 1 / (1 + np.exp(-(skill[model] - difficulty)))
            correct = (rng.random(n_examples) < p).astype(np.float64)
            record = RunRecord(
                model=f"model_{model:03d}",
                dataset="bench",
                task="bench",
                language=f"lang_{language:02d}",
                seed=0,
                metric="accuracy",
                stat_names=("correct", "count"),
                source="bench_scale_store",
            )
            runs.append((record, ids, np.column_stack([correct, ones])))
            truth.append(correct.mean())
    return runs, np.asarray(truth)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--models", type=int, default=200)
    parser.add_argument("--languages", type=int, default=50)
    parser.add_argument("--examples", type=int, default=500, help="examples per run")
    parser.add_argument("--per-run", type=int, default=500, help="runs for the per-run path")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--json", default=None, help="also write the results as JSON")
    args = parser.parse_args()

    info = machine_info(["duckdb", "pyarrow", "numpy"])
    runs, truth = simulate(args.models, args.languages, args.examples, seed=0)
    n_runs = len(runs)
    rows = n_runs * args.examples
    print(
        f"design: {args.models} models × {args.languages} languages = {n_runs:,} runs × "
        f"{args.examples} examples = {rows:,} example rows; load {load_average()}"
    )
    print(f"peak RSS after simulating the data: {peak_rss_mib():.0f} MiB")
    tmp = Path(tempfile.mkdtemp(prefix="glotbench-bench-store-"))
    results: dict[str, Any] = {}
    try:
        counter = iter(range(10**6))

        def write_fresh() -> Any:
            path = tmp / f"store{next(counter)}.duckdb"
            with Store.open(path) as store:
                return path, store.runs.write_batches(runs)

        write = timed_cpu(write_fresh, args.repeats)
        path, written = write.result
        assert written.written == n_runs and written.examples == rows
        rss_write = peak_rss_mib()
        size_mib = path.stat().st_size / 2**20
        print(
            f"  batched write      {write.seconds:7.2f} s wall  {write.cpu_seconds:7.2f} s CPU  "
            f"({written.batches} transactions, {1000 * write.seconds / n_runs:.2f} ms per run, "
            f"{rows / write.seconds:,.0f} rows/s; store {size_mib:.0f} MiB)"
        )

        def resume() -> Any:
            with Store.open(path) as store:
                return store.runs.write_batches(runs)

        again = timed_cpu(resume, args.repeats)
        assert again.result.written == 0 and again.result.skipped == n_runs
        print(f"  resume (all stored){again.seconds:7.2f} s wall  {again.cpu_seconds:7.2f} s CPU")

        def read_back() -> np.ndarray:
            scores = []
            with Store.open(path, read_only=True) as store:
                table = store.runs.frame()
                assert len(table) == n_runs
                for language in sorted(table["language"].unique()):
                    matrix = store.stats.matrix("bench", "bench", language, "accuracy")
                    scores.append(matrix.scores())
            return np.concatenate(scores)

        read = timed_cpu(read_back, args.repeats)
        # runs() orders by model within a language; the simulation by language, then model
        expected = truth.reshape(args.languages, args.models).ravel()
        np.testing.assert_allclose(read.result, expected, rtol=0, atol=1e-12)
        print(
            f"  read back          {read.seconds:7.2f} s wall  {read.cpu_seconds:7.2f} s CPU  "
            f"(runs() + {args.languages} stats_matrix of {args.models} runs; scores = truth)"
        )

        per_run = runs[: args.per_run]

        def one_by_one() -> None:
            with Store.open(tmp / f"per_run{next(counter)}.duckdb") as store:
                for record, ids, stats in per_run:
                    store.runs.write(record, ids, stats)

        single = timed_cpu(one_by_one, 1)
        ms = 1000 * single.seconds / len(per_run)
        print(
            f"  per-run write_run  {single.seconds:7.2f} s wall  {single.cpu_seconds:7.2f} s CPU "
            f"for {len(per_run)} runs = {ms:.1f} ms per run "
            f"(≈ {ms * n_runs / 1000:.0f} s for {n_runs:,} runs)"
        )
        print(f"peak RSS: {peak_rss_mib():.0f} MiB (after the batched write: {rss_write:.0f} MiB)")
        results = {
            "design": {
                "models": args.models,
                "languages": args.languages,
                "examples": args.examples,
                "runs": n_runs,
                "rows": rows,
            },
            "batched_write": {
                "seconds": write.seconds,
                "cpu_seconds": write.cpu_seconds,
                "transactions": written.batches,
                "store_mib": size_mib,
            },
            "resume": {"seconds": again.seconds, "cpu_seconds": again.cpu_seconds},
            "read_back": {"seconds": read.seconds, "cpu_seconds": read.cpu_seconds},
            "per_run": {
                "runs": len(per_run),
                "seconds": single.seconds,
                "cpu_seconds": single.cpu_seconds,
                "ms_per_run": ms,
            },
            "peak_rss_mib": peak_rss_mib(),
            "peak_rss_after_write_mib": rss_write,
            "load_average_end": load_average(),
            "machine": info,
            "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    write_json(args.json, results)


if __name__ == "__main__":
    main()
