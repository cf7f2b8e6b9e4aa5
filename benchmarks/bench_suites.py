"""Wall and CPU time of the papers' built-in suites, CI-sized and in full.

    PYTHONPATH=src python benchmarks/bench_suites.py --data-dir ../shared/data            # CI-sized
    PYTHONPATH=src python benchmarks/bench_suites.py --data-dir ../shared/data --full     # + full

Runs ``glotbench run SUITE`` (``glotbench.api.run_benchmark``) into a fresh
temporary store, then the analysis the suite exists for, and prints wall
seconds, CPU seconds (this process and its children), jobs, runs written and
the machine's load average:

* ``datasize-parsers`` → ``analyze datasize --metric las`` (van der Goot et al.);
* ``scandi-transfer``  → ``analyze transfer --store`` (ScandEval §3.3).

CI-sized: ``--iterations 2`` and the sizes the tests use. Full: the suite's own
protocol (10 or 3 iterations, 1,024-sentence training splits).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import _cpu_now, load_average

from glotbench import api

SIZES = {
    "datasize-parsers": {"train": 64, "test": 128},
    "scandi-transfer": {"train": 200, "validation": 50, "test": 200},
}


def analyse(suite: str, store: Path) -> str:
    if suite == "datasize-parsers":
        out = []
        for dataset, language in (("ud-en", "en"), ("ud-nb", "nb")):
            result = api.analyze_datasize(
                store=store, dataset=dataset, task="parsing", language=language, metric="las"
            )
            out.append(f"{dataset}: {len(result.to_frame())} rows")
        return "datasize " + ", ".join(out)
    result = api.analyze_transfer(store=store)
    best = result.groups.iloc[0]["mean_f"]
    return f"transfer: best group {', '.join(result.best)} (mean F {best:.2f})"


def run(suite: str, data_dir: Path, full: bool) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="glotbench-bench-suites-"))
    try:
        store = folder / "s.duckdb"
        wall, cpu = time.perf_counter(), _cpu_now()
        summary = api.run_benchmark(
            suite,
            store=store,
            data_dir=data_dir,
            iterations=None if full else 2,
            split_sizes=None if full else SIZES[suite],
        )
        run_wall, run_cpu = time.perf_counter() - wall, _cpu_now() - cpu
        wall, cpu = time.perf_counter(), _cpu_now()
        what = analyse(suite, store)
        return {
            "suite": suite,
            "size": "full" if full else "CI",
            "jobs": summary.jobs,
            "runs": summary.runs_written,
            "run wall s": round(run_wall, 1),
            "run CPU s": round(run_cpu, 1),
            "analysis wall s": round(time.perf_counter() - wall, 1),
            "analysis CPU s": round(_cpu_now() - cpu, 1),
            "result": what,
        }
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=Path("../shared/data"))
    parser.add_argument("--full", action="store_true", help="also run the full suites")
    parser.add_argument("--suite", action="append", choices=sorted(SIZES))
    args = parser.parse_args()
    print(f"load average before: {load_average()}")
    for suite in args.suite or sorted(SIZES):
        for full in (False, True) if args.full else (False,):
            row = run(suite, args.data_dir, full)
            print(" | ".join(f"{k}: {v}" for k, v in row.items()), flush=True)
    print(f"load average after: {load_average()}")


if __name__ == "__main__":
    main()
