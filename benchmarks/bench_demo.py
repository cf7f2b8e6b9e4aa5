"""Wall, CPU and peak memory of ``glotbench demo``: first run, then a second run.

    PYTHONPATH=src python benchmarks/bench_demo.py            # ~1.5 minutes on 2 cores
    PYTHONPATH=src python benchmarks/bench_demo.py --all-models

Each run is a fresh ``python -m glotbench demo --out DIR`` subprocess in the
same temporary folder: the first computes everything (runs, analyses, pages),
the second finds the runs stored, the analysis in the store's cache
(``<store>.cache/``, keyed by the store's content and the request) and the
pages unchanged. Prints wall and CPU seconds (the child's user + system) and
its peak RSS, and the load average around each run.
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

from _common import load_average


def run_demo(folder: Path, extra: list[str]) -> tuple[float, float, float]:
    """Wall s, CPU s and peak RSS MB of one demo process (``os.wait4``: this child only;
    ``RUSAGE_CHILDREN`` would report the largest of all earlier children as well)."""
    start = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "glotbench", "demo", "--out", str(folder), *extra],
        stdout=subprocess.DEVNULL,
        env={**os.environ},
    )
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    if child.returncode:
        raise subprocess.CalledProcessError(child.returncode, child.args)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--all-models", action="store_true", help="include langdetect")
    args = parser.parse_args()
    extra = ["--all-models"] if args.all_models else []
    folder = Path(tempfile.mkdtemp(prefix="glotbench-bench-demo-"))
    try:
        for label in ("first run", "second run"):
            load = load_average()
            wall, cpu, rss = run_demo(folder / "out", extra)
            print(
                f"{label}: {wall:6.1f} s wall, {cpu:6.1f} s CPU, peak RSS {rss:,.0f} MB "
                f"(load before: {load})",
                flush=True,
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
