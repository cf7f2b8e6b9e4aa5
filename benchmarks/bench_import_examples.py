"""Peak memory and time of ``glotbench import examples`` (streaming) by file size.

    python benchmarks/bench_import_examples.py                      # 1M and 3M rows
    python benchmarks/bench_import_examples.py --rows 1000000 3000000 10000000

For each size a tidy CSV of per-example accuracy records is generated
(runs of 10,000 examples: ``model, task, language, seed, example_id, metric,
score``; about 32 bytes per row) and imported into a fresh store by
``glotbench.api.import_examples`` in a **fresh subprocess**, which reports its
peak resident set size (``resource.getrusage(...).ru_maxrss``) and the
import's wall time. ``--interleave`` writes the runs' rows round-robin (every
run spans the whole file) instead of one run after the other.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

RUN_SIZE = 10_000

CHILD = """
import json, resource, sys, time
from glotbench import api
t = time.perf_counter()
r = api.import_examples(sys.argv[1], store=sys.argv[2])
seconds = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "peak_mb": peak, "runs": r.runs_added, "rows": r.rows}))
"""


def write_csv(path: Path, rows: int, interleave: bool = False, seed: int = 0) -> None:
    """A tidy examples CSV of ``rows`` records in runs of RUN_SIZE examples."""
    rng = np.random.default_rng(seed)
    runs = max(1, rows // RUN_SIZE)
    per_run = rows // runs
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("model,task,language,seed,example_id,metric,score\n")
        if not interleave:
            for r in range(runs):
                scores = rng.integers(0, 2, per_run)
                prefix = f"m{r % 10},t{r // 10},xx,0,"
                fh.writelines(f"{prefix}e{i},accuracy,{s}\n" for i, s in enumerate(scores))
        else:
            step = 1000
            for start in range(0, per_run, step):
                for r in range(runs):
                    scores = rng.integers(0, 2, step)
                    prefix = f"m{r % 10},t{r // 10},xx,0,"
                    fh.writelines(
                        f"{prefix}e{start + i},accuracy,{s}\n" for i, s in enumerate(scores)
                    )


def measure(csv: Path, store: Path) -> dict[str, float]:
    """Import ``csv`` into ``store`` in a fresh interpreter; its peak RSS and time."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(csv), str(store)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 3_000_000])
    parser.add_argument("--interleave", action="store_true")
    args = parser.parse_args()
    run_sizes(args.rows, args.interleave)


def run_sizes(sizes: list[int], interleave: bool = False) -> None:
    """Generate, import and report each size in turn."""
    tmp = Path(tempfile.mkdtemp(prefix="glotbench-bench-examples-"))
    try:
        for rows in sizes:
            csv = tmp / f"e{rows}.csv"
            t = time.perf_counter()
            write_csv(csv, rows, interleave=interleave)
            size = csv.stat().st_size / 1e6
            gen = time.perf_counter() - t
            m = measure(csv, tmp / f"s{rows}.duckdb")
            print(
                f"{rows:>11,} rows ({size:5.0f} MB CSV, written in {gen:4.1f} s): "
                f"import {m['seconds']:6.1f} s, peak RSS {m['peak_mb']:6.0f} MB, "
                f"{m['runs']} runs"
            )
            csv.unlink()
            for f in tmp.glob(f"s{rows}.duckdb*"):
                f.unlink()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
