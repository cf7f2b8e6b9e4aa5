"""Readers during a write, and what locking the store per job costs the writer.

Design (issue 14, item 3). A base store of ``--base-runs`` runs of
``--examples`` examples (accuracy, k = 1) is written once with
``store.runs.write_batches``; every step starts from a copy of it.

1. writer throughput — ``--jobs`` jobs, each ``store.runs.write_many`` of
   ``--runs-per-job`` runs (a runner job with several metrics):
   a. *held*: one read-write connection for all jobs (``hold=True``, the
      behaviour before: readers locked out for the whole run);
   b. *per job*: ``hold=False``, each job in ``store.held()`` — open (lock),
      write, commit, close (DuckDB checkpoints the WAL into the file), as
      ``glotbench run`` now does.
   The difference per job is the price of letting readers in.
2. reader latency — a writer process writes jobs as in 1b with
   ``--job-seconds`` of simulated model time between them, while this
   process, for ``--seconds``, repeatedly opens the store read-only, reads the
   summary (``glotbench show``'s query) and closes it. Latency (open → result)
   percentiles are compared with the same reads on an idle store. Every read
   checks that each run has all its examples.

Run: PYTHONPATH=src python benchmarks/bench_concurrency.py [--base-runs 2000]
         [--examples 200] [--jobs 100] [--seconds 6] [--json out.json]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from _common import load_average, machine_info, print_header, print_table, write_json

from glotbench.store import RunRecord, Store

WRITER = """
import sys, time
import numpy as np
from glotbench.store import RunRecord, Store
from pathlib import Path
path, stop = sys.argv[1], sys.argv[2]
n, per_job, pause = int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
rng = np.random.default_rng(1)
jobs = 0
with Store.open(path, hold=False) as store:
    while not Path(stop).exists():
        runs = [(RunRecord(model=f"w{jobs}", dataset="d", task="t", language=f"l{r}", seed=0,
                           metric="accuracy", stat_names=("correct",)),
                 [f"e{i}" for i in range(n)], rng.integers(0, 2, (n, 1)).astype(float))
                for r in range(per_job)]
        t = time.perf_counter()
        with store.held():
            store.runs.write_many(runs)
        print(f"{time.perf_counter() - t:.6f}", flush=True)
        jobs += 1
        time.sleep(pause)
"""


def _run(model: str, language: str, n: int, rng: np.random.Generator) -> tuple[Any, ...]:
    record = RunRecord(
        model=model,
        dataset="d",
        task="t",
        language=language,
        seed=0,
        metric="accuracy",
        stat_names=("correct",),
    )
    return record, [f"e{i}" for i in range(n)], rng.integers(0, 2, (n, 1)).astype(float)


def build_base(path: Path, runs: int, n: int) -> float:
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    with Store.open(path) as store:
        store.runs.write_batches(_run(f"m{i // 50}", f"l{i % 50}", n, rng) for i in range(runs))
    return time.perf_counter() - start


def writer_throughput(base: Path, work: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    rows = []
    for mode in ("held", "per job"):
        path = work / f"throughput-{mode.replace(' ', '-')}.duckdb"
        shutil.copyfile(base, path)
        rng = np.random.default_rng(2)
        jobs = [
            [_run(f"j{j}", f"l{r}", args.examples, rng) for r in range(args.runs_per_job)]
            for j in range(args.jobs)
        ]
        times = []
        start = time.perf_counter()
        with Store.open(path, hold=(mode == "held")) as store:
            for job in jobs:
                t = time.perf_counter()
                with store.held():
                    store.runs.write_many(job)
                times.append(time.perf_counter() - t)
        total = time.perf_counter() - start
        arr = np.asarray(times) * 1e3
        rows.append(
            {
                "mode": mode,
                "jobs": args.jobs,
                "seconds": round(total, 3),
                "ms_per_job_median": round(float(np.median(arr)), 2),
                "ms_per_job_p95": round(float(np.percentile(arr, 95)), 2),
                "jobs_per_second": round(args.jobs / total, 1),
            }
        )
    return rows


def _read_once(path: Path) -> tuple[float, int]:
    start = time.perf_counter()
    with Store.open(path, read_only=True) as store:
        summary = store.summary()
        bad = store.connection.execute(
            "SELECT count(*) FROM runs r WHERE r.n_examples <> "
            "(SELECT count(*) FROM example_stats e WHERE e.run_id = r.run_id)"
        ).fetchall()[0][0]
    if bad:
        raise AssertionError(f"{bad} incomplete run(s) seen by a reader")
    return time.perf_counter() - start, int(summary.counts["runs"])


def _latencies(path: Path, seconds: float) -> tuple[list[float], list[int]]:
    out: list[float] = []
    runs: list[int] = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        latency, count = _read_once(path)
        out.append(latency)
        runs.append(count)
    return out, runs


def _summary(name: str, latencies: list[float], extra: dict[str, Any]) -> dict[str, Any]:
    arr = np.asarray(latencies) * 1e3
    return {
        "readers": name,
        "reads": arr.size,
        "ms_median": round(float(np.median(arr)), 1),
        "ms_p95": round(float(np.percentile(arr, 95)), 1),
        "ms_max": round(float(arr.max()), 1),
        **extra,
    }


def reader_latency(base: Path, work: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    path = work / "latency.duckdb"
    shutil.copyfile(base, path)
    idle, _ = _latencies(path, args.seconds / 2)
    rows = [_summary("idle store", idle, {"writer_jobs": 0, "runs_seen": "-"})]
    stop = work / "stop"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), str(stop), str(args.examples),
         str(args.runs_per_job), str(args.job_seconds)],
        stdout=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    assert writer.stdout is not None
    writer.stdout.readline()  # the first job is stored: the writer is running
    busy, seen = _latencies(path, args.seconds)
    stop.touch()
    write_ms = [float(line) * 1e3 for line in writer.stdout]
    writer.wait(timeout=120)
    rows.append(
        _summary(
            f"writer every {args.job_seconds * 1e3:g} ms",
            busy,
            {
                "writer_jobs": len(write_ms) + 1,
                "runs_seen": f"{min(seen)}–{max(seen)}",
                "writer_ms_per_job_median": round(float(np.median(write_ms)), 1),
            },
        )
    )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-runs", type=int, default=2000)
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=100)
    parser.add_argument("--runs-per-job", type=int, default=2)
    parser.add_argument("--job-seconds", type=float, default=0.05)
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    info = machine_info(["duckdb", "numpy", "pyarrow"])
    print_header("Store concurrency: readers during writes, per-job locking cost", info)
    print(f"load average at start: {load_average()}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        base = work / "base.duckdb"
        built = build_base(base, args.base_runs, args.examples)
        size_mb = base.stat().st_size / 2**20
        print(
            f"base store: {args.base_runs} runs × {args.examples} examples "
            f"({size_mb:.1f} MB, written in {built:.1f} s)\n"
        )
        throughput = writer_throughput(base, work, args)
        print("1. writer throughput")
        print_table(throughput, list(throughput[0]))
        latency = reader_latency(base, work, args)
        print("\n2. reader latency (open read-only + summary + close)")
        print_table(latency, list(latency[-1]))
    print(f"\nload average at end: {load_average()}")
    write_json(
        args.json,
        {
            "machine": info,
            "args": vars(args),
            "base_mb": size_mb,
            "throughput": throughput,
            "latency": latency,
        },
    )


if __name__ == "__main__":
    main()
