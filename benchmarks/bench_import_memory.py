"""Peak memory and time of every streaming import, by input size, each in a fresh process.

    python benchmarks/bench_import_memory.py                                  # all, 1M rows
    python benchmarks/bench_import_memory.py --kinds scores parquet --rows 1000000 10000000
    python benchmarks/bench_import_memory.py --kinds lm-eval --rows 200000 1000000

For each kind and size an input is generated in a temporary folder, then
imported into a fresh store through ``glotbench.api`` in a **fresh
subprocess**, which reports its peak resident set size
(``resource.getrusage(...).ru_maxrss``) and the import's wall time. The
machine's load average (1 minute) is printed before and after each import:
the machine may be shared, and times (not memory) depend on it.

Kinds (``--rows`` counts rows of the imported table):

* ``scores`` — a tidy scores CSV (``model, task, language, metric, score,
  seed, stderr, n``; every key distinct) → ``api.import_scores``;
* ``examples`` — a tidy examples CSV (runs of 10,000 accuracy records, as
  ``bench_import_examples.py``) → ``api.import_examples``;
* ``parquet`` — a Parquet snapshot (``glotbench export``) of a store holding
  that many example rows in runs of 10,000 *and* that many scores rows →
  ``api.import_parquet``;
* ``lm-eval`` — an lm-evaluation-harness output folder of that many samples
  over ``--lm-eval-tasks`` tasks (default 100; two metrics a sample, as
  ``bench_import.py``) → ``api.import_lm_eval``. ``--lm-eval-tasks 1`` puts
  every sample in one task, so each of its two runs has ``--rows`` examples:
  the case where memory used to grow with the largest run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

CHILD = """
import json, resource, sys, time
from glotbench import api
kind, source, store = sys.argv[1:4]
t = time.perf_counter()
if kind == "scores":
    r = api.import_scores(source, store=store)
    what = r.scores_added
elif kind == "examples":
    r = api.import_examples(source, store=store)
    what = r.runs_added
elif kind == "parquet":
    r = api.import_parquet(source, store=store)
    what = (r.runs_added, r.scores_added)
else:
    r = api.import_lm_eval(source, store=store)
    what = (r.runs_added, r.examples_added)
seconds = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "peak_mb": peak, "added": what}))
"""


def write_scores_csv(path: Path, rows: int, seed: int = 0) -> None:
    """``rows`` distinct accuracy scores (model × task × language × seed)."""
    rng = np.random.default_rng(seed)
    step = 1_000_000
    for start in range(0, rows, step):
        i = np.arange(start, min(rows, start + step))
        frame = pd.DataFrame(
            {
                "model": np.char.add("m", (i % 100).astype(str)),
                "task": np.char.add("t", ((i // 100) % 1000).astype(str)),
                "language": "xx",
                "metric": "accuracy",
                "score": rng.uniform(0, 1, len(i)).round(6),
                "seed": i // 100_000,
                "stderr": rng.uniform(0, 0.05, len(i)).round(6),
                "n": 1000,
            }
        )
        frame.to_csv(path, mode="a", header=start == 0, index=False)


def write_snapshot(folder: Path, rows: int, tmp: Path) -> None:
    """A snapshot of a store with ``rows`` example rows (runs of 10,000) and ``rows`` scores."""
    from glotbench.store import Store
    from glotbench.store.schema import RunRecord

    rng = np.random.default_rng(0)
    store_path = tmp / "snapshot-source.duckdb"
    run_size = 10_000
    ids = np.asarray([f"e{i}" for i in range(run_size)], dtype=object)
    with Store.open(store_path) as store:

        def runs():  # type: ignore[no-untyped-def]
            for r in range(max(1, rows // run_size)):
                record = RunRecord(
                    model=f"m{r % 10}",
                    dataset=f"t{r // 10}",
                    task=f"t{r // 10}",
                    language="xx",
                    seed=0,
                    metric="accuracy",
                    stat_names=("value", "count"),
                )
                values = rng.integers(0, 2, run_size).astype(np.float64)
                yield record, ids, np.column_stack([values, np.ones(run_size)])

        store.runs.write_batches(runs())
        scores_csv = tmp / "snapshot-scores.csv"
        write_scores_csv(scores_csv, rows)
        from glotbench.ingest.tidy import import_scores_file

        import_scores_file(store, scores_csv)
        scores_csv.unlink()
        store.exports.write(folder)
    for f in tmp.glob("snapshot-source.duckdb*"):
        f.unlink()


def make_input(kind: str, rows: int, tmp: Path, tasks: int = 100) -> Path:
    if kind == "scores":
        path = tmp / f"scores{rows}.csv"
        write_scores_csv(path, rows)
    elif kind == "examples":
        from bench_import_examples import write_csv

        path = tmp / f"examples{rows}.csv"
        write_csv(path, rows)
    elif kind == "parquet":
        path = tmp / f"snapshot{rows}"
        write_snapshot(path, rows, tmp)
    else:
        from bench_import import make_folder

        path = make_folder(tmp / f"lm-eval{rows}", rows, tasks)
    return path


def _make(kind: str, rows: int, tmp: Path, tasks: int = 100) -> Path:
    """Generate the input in a child process, so this process stays small.

    Linux keeps ``ru_maxrss`` across ``fork``/``exec``: a measuring child
    started by a process that grew while generating the input would report
    that process's peak (a 3 M-row snapshot: 1,157 MB instead of 565 MB).
    """
    out = subprocess.run(
        [sys.executable, __file__, "--make", kind, str(rows), str(tmp), str(tasks)],
        check=True,
        capture_output=True,
        text=True,
    )
    return Path(out.stdout.strip().splitlines()[-1])


def measure(kind: str, source: Path, store: Path) -> dict[str, object]:
    """Import ``source`` into ``store`` in a fresh interpreter; its peak RSS and time."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD, kind, str(source), str(store)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _size_mb(path: Path) -> float:
    if path.is_file():
        return path.stat().st_size / 1e6
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--kinds",
        nargs="+",
        default=["scores", "examples", "parquet", "lm-eval"],
        choices=["scores", "examples", "parquet", "lm-eval"],
    )
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000])
    parser.add_argument(
        "--lm-eval-tasks", type=int, default=100, help="tasks of the lm-eval input (default 100)"
    )
    parser.add_argument("--make", nargs=4, help=argparse.SUPPRESS)  # KIND ROWS DIR TASKS
    args = parser.parse_args()
    if args.make:  # input generation in its own process (see _make)
        kind, rows, folder, tasks = args.make
        print(make_input(kind, int(rows), Path(folder), int(tasks)))
        return
    print(f"{os.cpu_count()} CPUs; python {sys.version.split()[0]}")
    for kind in args.kinds:
        for rows in args.rows:
            tmp = Path(tempfile.mkdtemp(prefix="glotbench-bench-memory-"))
            try:
                t = time.perf_counter()
                source = _make(kind, rows, tmp, args.lm_eval_tasks)
                made = time.perf_counter() - t
                load_before = os.getloadavg()[0]
                m = measure(kind, source, tmp / "store.duckdb")
                load_after = os.getloadavg()[0]
                print(
                    f"{kind:>8} {rows:>11,} rows ({_size_mb(source):6.0f} MB input, made in "
                    f"{made:5.1f} s): import {m['seconds']:7.1f} s, peak RSS "
                    f"{m['peak_mb']:5.0f} MB, added {m['added']}, load {load_before:.1f} → "
                    f"{load_after:.1f}",
                    flush=True,
                )
            finally:
                shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
