"""Wall, CPU and peak memory of ``glotbench demo``: first run, then a second run.

    PYTHONPATH=src python benchmarks/bench_demo.py            # ~1.5 minutes on 2 cores
    PYTHONPATH=src python benchmarks/bench_demo.py --all-models
    PYTHONPATH=src python benchmarks/bench_demo.py --before ../before/src --repeats 2

Each run is a fresh ``python -m glotbench demo --out DIR`` subprocess in the
same temporary folder: the first computes everything (runs, analyses, pages),
the second finds the runs stored, the analysis in the store's cache
(``<store>.cache/``, keyed by the store's content and the request) and the
pages unchanged. Prints wall and CPU seconds (the child's user + system) and
its peak RSS, and the load average around each run. With ``--before SRC`` the
same runs of the code in SRC (an older checkout's ``src``), alternating with
this code's, and the ratio of the first runs' CPU; on a shared machine CPU is
the comparable figure, and CPU / 2 the wall floor on 2 cores.
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


def run_demo(folder: Path, extra: list[str], src: str | None = None) -> tuple[float, float, float]:
    """Wall s, CPU s and peak RSS MB of one demo process (``os.wait4``: this child only;
    ``RUSAGE_CHILDREN`` would report the largest of all earlier children as well).
    ``src``: the package source to run (default: this process's ``PYTHONPATH``)."""
    env = {**os.environ}
    if src is not None:
        env["PYTHONPATH"] = src
    start = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "glotbench", "demo", "--out", str(folder), *extra],
        stdout=subprocess.DEVNULL,
        env=env,
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
    parser.add_argument("--before", help="also run the code in this src folder, alternating")
    parser.add_argument("--repeats", type=int, default=1, help="first/second run pairs each")
    args = parser.parse_args()
    extra = ["--all-models"] if args.all_models else []
    codes: list[tuple[str, str | None]] = [("now", None)]
    if args.before:
        codes.insert(0, ("before", str(Path(args.before).resolve())))
    first_cpu: dict[str, list[float]] = {label: [] for label, _ in codes}
    for _repeat in range(args.repeats):
        for code, src in codes:
            folder = Path(tempfile.mkdtemp(prefix="glotbench-bench-demo-"))
            try:
                for label in ("first run", "second run"):
                    load = load_average()
                    wall, cpu, rss = run_demo(folder / "out", extra, src)
                    if label == "first run":
                        first_cpu[code].append(cpu)
                    print(
                        f"{code:6s} {label}: {wall:6.1f} s wall, {cpu:6.1f} s CPU "
                        f"(2-core floor CPU/2 {cpu / 2:5.1f} s), peak RSS {rss:,.0f} MB "
                        f"(load before: {load})",
                        flush=True,
                    )
            finally:
                shutil.rmtree(folder, ignore_errors=True)
    if args.before:
        before, now = min(first_cpu["before"]), min(first_cpu["now"])
        print(f"first run, best CPU: before {before:.1f} s, now {now:.1f} s ({before / now:.2f}x)")


if __name__ == "__main__":
    main()
