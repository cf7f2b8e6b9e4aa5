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
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import load_average


def run_demo(folder: Path, extra: list[str]) -> tuple[float, float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "glotbench", "demo", "--out", str(folder), *extra],
        check=True,
        stdout=subprocess.DEVNULL,
        env={**os.environ},
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss / 1024


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
