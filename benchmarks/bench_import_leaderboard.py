"""Streaming import at Open-LLM-Leaderboard scale, measured on proportional slices (issue 27).

    python benchmarks/bench_import_leaderboard.py --models 50 200

For each model count, ``generate_leaderboard_store.py`` writes its per-example
Parquet files (``--tasks`` tasks × ``--examples`` examples × models, one seed a
model; in its own process), and a **fresh process** imports them all, file
after file, into one new store with ``glotbench.api.import_examples`` (what
``glotbench import examples`` calls), reporting each file's time, the peak
resident set size (``ru_maxrss``), the rows per second and the process's CPU
time (user + system). The 1-minute load average is printed before and after:
the machine may be shared, and wall times (not CPU time or memory) depend on it.

The last line extrapolates to the goal's 5,000 models × 6 tasks × 10,000
examples (300M rows) linearly from the largest slice — import time is linear
in rows when memory is flat in models (shown by the slices side by side) —
and compares with the goal (≤ 30 min, ≤ 2 GB).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
GOAL_ROWS = 5_000 * 6 * 10_000
GOAL_SECONDS = 30 * 60
GOAL_MB = 2_000

CHILD = """
import json, os, resource, sys, time
from glotbench import api
store, files = sys.argv[1], sys.argv[2:]
t0 = time.perf_counter()
for f in files:
    t = time.perf_counter()
    r = api.import_examples(f, store=store)
    print(json.dumps({"file": os.path.basename(f), "seconds": time.perf_counter() - t,
                      "runs": r.runs_added, "rows": r.rows,
                      "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}),
          flush=True)
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"total_seconds": time.perf_counter() - t0,
                  "cpu_seconds": usage.ru_utime + usage.ru_stime,
                  "peak_mb": usage.ru_maxrss / 1024}))
"""


def measure(models: int, tasks: int, examples: int, tmp: Path) -> dict[str, float]:
    out = tmp / f"lb{models}"
    made = subprocess.run(
        [sys.executable, str(HERE / "generate_leaderboard_store.py"), "--out", str(out)]
        + ["--models", str(models), "--tasks", str(tasks), "--examples", str(examples)],
        check=True,
        capture_output=True,
        text=True,
    )
    files = json.loads(made.stdout.strip().splitlines()[-1])["files"]
    load_before = os.getloadavg()[0]
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp / f"lb{models}.duckdb"), *files],
        check=True,
        capture_output=True,
        text=True,
    )
    load_after = os.getloadavg()[0]
    lines = [json.loads(line) for line in proc.stdout.strip().splitlines()]
    rows = sum(int(line["rows"]) for line in lines[:-1])
    seconds = float(lines[-1]["total_seconds"])
    cpu = float(lines[-1]["cpu_seconds"])  # with the imports (~1 s); what an idle core needs
    peak = float(lines[-1]["peak_mb"])
    per_file = ", ".join(f"{line['seconds']:.1f}" for line in lines[:-1])
    print(
        f"{models:>6} models × {tasks} × {examples:,} = {rows:>12,} rows: {seconds:7.1f} s "
        f"({rows / seconds:,.0f} rows/s; per file {per_file} s), CPU {cpu:.1f} s "
        f"({rows / cpu:,.0f} rows per CPU-second), peak RSS {peak:5.0f} MB, "
        f"load {load_before:.1f} → {load_after:.1f}",
        flush=True,
    )
    shutil.rmtree(out, ignore_errors=True)
    for f in tmp.glob(f"lb{models}.duckdb*"):
        f.unlink()
    return {"rows": rows, "seconds": seconds, "cpu": cpu, "peak_mb": peak}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=int, nargs="+", default=[50, 200])
    parser.add_argument("--tasks", type=int, default=6)
    parser.add_argument("--examples", type=int, default=10_000)
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs; python {sys.version.split()[0]}")
    tmp = Path(tempfile.mkdtemp(prefix="glotbench-bench-leaderboard-"))
    try:
        results = [measure(m, args.tasks, args.examples, tmp) for m in args.models]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    last = results[-1]
    minutes = last["seconds"] * GOAL_ROWS / last["rows"] / 60
    cpu_minutes = last["cpu"] * GOAL_ROWS / last["rows"] / 60
    peaks = ", ".join(f"{r['peak_mb']:.0f}" for r in results)
    print(
        f"extrapolated to {GOAL_ROWS:,} rows (linear in rows from the largest slice): "
        f"{minutes:.0f} min wall at this load, {cpu_minutes:.0f} min of CPU (an idle machine; "
        f"goal ≤ {GOAL_SECONDS // 60}); peak RSS by slice {peaks} MB (goal ≤ {GOAL_MB:,})"
    )


if __name__ == "__main__":
    main()
