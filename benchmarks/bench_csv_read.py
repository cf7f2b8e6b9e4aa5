"""Reading a replicated-scores CSV: ``load_replicated(input=...)`` and ``analyze ranks --input``.

Issue 27: ``glotbench analyze ranks --input scores.csv`` at 1,000 models × 100
task-language cells × 200 replicates (20,000,000 records: the ``ranks-cli``
design of ``bench_scale_analysis.py``, ``synthetic(1000, 2, 200)``) within 20 s
CPU, CSV in, JSON out. This script writes that file (and a 2,000,000-record
one: 100 models) once under ``--dir`` (not the repository) in the tidy format
of docs/formats.md (model, task, language, seed, replicate, score), then
measures, each in a fresh subprocess (CPU user+sys via ``os.wait4``, peak RSS):

* ``read``: ``load_replicated(input=FILE)`` alone;
* ``floor``: pyarrow's bare read of the file (``pyarrow.csv.read_csv``, one
  thread, types inferred): the CSV parse floor;
* ``parse``: the streaming parse the fast path makes (typed columns, names
  dictionary-encoded, blocks of 1 MiB), nothing done with the blocks;
* ``cli``: ``python -m glotbench analyze ranks --input FILE --json`` (stdout to
  /dev/null), whole command;
* ``bad``: ``load_replicated`` of a copy of the file whose last line's score is
  ``nan`` (``scores-SIZE-bad.csv``): the time and memory to the error (file,
  line, field), which the script checks is the same before and after.

``--before CHECKOUT`` runs ``read`` / ``cli`` also with that checkout's ``src``.

Run: PYTHONPATH=src python benchmarks/bench_csv_read.py [--rows 2M 20M]
         [--cases read floor parse cli bad] [--before /work/wt/before4] [--dir /tmp/glotbench-bench]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from bench_scale_analysis import synthetic  # noqa: E402

SIZES = {"2M": 100, "20M": 1000}  # models; × 100 cells × 200 replicates

READ = """
import sys
from glotbench.analysis.sources.inputs import load_replicated
r = load_replicated(input=sys.argv[1])
assert r.values.shape[0] > 0
"""

FLOOR = """
import sys
import pyarrow.csv as pv
t = pv.read_csv(sys.argv[1], read_options=pv.ReadOptions(use_threads=False))
assert t.num_rows > 0
"""

PARSE = """
import sys
from pathlib import Path
from glotbench.analysis.sources.csv_replicates import _open, _types
names = ["model", "task", "language", "seed", "replicate", "score"]
assert sum(b.num_rows for b in _open(sys.argv[1], names, _types(names), skip_rows=1)) > 0
"""

BAD = """
import sys
from glotbench.analysis.sources.inputs import load_replicated
from glotbench.errors import InputError
try:
    load_replicated(input=sys.argv[1])
except InputError as exc:
    print(exc)
else:
    raise SystemExit("no error")
"""


def write_bad_copy(path: Path, bad: Path) -> None:
    """``path`` with its last line's score replaced by ``nan``."""
    tmp = bad.with_suffix(".part")
    size = path.stat().st_size
    with open(path, "rb") as src, open(tmp, "wb") as out:
        src.seek(max(0, size - 4096))
        tail = src.read()
        keep = size - len(tail) + tail.rstrip(b"\n").rfind(b"\n") + 1
        src.seek(0)
        left = keep
        while left:
            block = src.read(min(left, 1 << 24))
            out.write(block)
            left -= len(block)
        last = src.read().rstrip(b"\n")
        out.write(last[: last.rfind(b",") + 1] + b"nan\n")
    tmp.rename(bad)


def write_csv(path: Path, n_models: int) -> None:
    """The tidy CSV of ``synthetic(n_models, 2, 200)``, written model by model."""
    import pyarrow as pa
    import pyarrow.csv as pv

    scores = synthetic(n_models, 2, 200)
    n_units, n_reps = len(scores.units), scores.values.shape[3]
    tasks = np.repeat([u.task for u in scores.units], n_reps)
    languages = np.repeat([u.language for u in scores.units], n_reps)
    reps = np.tile(np.arange(n_reps), n_units)
    tmp = path.with_suffix(".part")
    with open(tmp, "wb") as fh:
        fh.write(b"model,task,language,seed,replicate,score\n")
        for m, model in enumerate(scores.models):
            table = pa.table(
                {
                    "model": pa.array([model] * (n_units * n_reps)),
                    "task": tasks,
                    "language": languages,
                    "seed": np.zeros(n_units * n_reps, dtype=np.int64),
                    "replicate": reps,
                    "score": scores.values[m, :, 0, :].ravel(),
                }
            )
            pv.write_csv(table, fh, pv.WriteOptions(include_header=False, quoting_style="none"))
    tmp.rename(path)


def run(code: list[str], src: str, output: Path | None = None) -> tuple[float, float]:
    """(CPU user+sys s, peak RSS MiB) of a subprocess with ``src`` first on PYTHONPATH
    (its standard output to ``output``, else discarded)."""
    env = dict(os.environ, PYTHONPATH=src)
    with open(output or os.devnull, "wb") as out:
        proc = subprocess.Popen(["nice", *code], env=env, stdout=out)
        _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise SystemExit(f"{code} failed with status {status}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def bad_case(size: str, path: Path, trees: list[tuple[str, str]]) -> None:
    """The ``bad`` case: time and memory to the error, the same error in every tree."""
    bad = path.with_name(f"scores-{size}-bad.csv")
    if not bad.exists():
        write_bad_copy(path, bad)
    messages = set()
    for name, src in trees:
        out = bad.with_suffix(f".{name}.txt")
        cpu, rss = run([sys.executable, "-c", BAD, str(bad)], src, out)
        message = out.read_text().strip()
        out.unlink()
        messages.add(message)
        print(
            f"{size} bad {name}: {cpu:.2f} s CPU, {rss:,.0f} MiB, load {os.getloadavg()[0]:.1f}"
            f"\n  {message}",
            flush=True,
        )
    if len(messages) != 1:
        raise SystemExit(f"the errors differ: {sorted(messages)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", nargs="+", default=["2M"], choices=list(SIZES))
    parser.add_argument("--cases", nargs="+", default=["read", "floor", "parse", "cli"])
    parser.add_argument("--before", default=None)
    parser.add_argument("--dir", default="/tmp/glotbench-bench")
    args = parser.parse_args()
    here = str(Path(__file__).resolve().parents[1] / "src")
    trees = [("after", here)] + (
        [("before", str(Path(args.before) / "src"))] if args.before else []
    )
    Path(args.dir).mkdir(parents=True, exist_ok=True)
    print(f"load average at start: {os.getloadavg()}")
    for size in args.rows:
        path = Path(args.dir) / f"scores-{size}.csv"
        if not path.exists():
            write_csv(path, SIZES[size])
        print(f"{path}: {path.stat().st_size / 2**20:,.0f} MiB")
        for case in args.cases:
            if case == "bad":
                bad_case(size, path, trees)
                continue
            if case in ("floor", "parse"):
                cmd = [sys.executable, "-c", FLOOR if case == "floor" else PARSE, str(path)]
                cpu, rss = run(cmd, here)
                print(
                    f"{size} {case}: {cpu:.2f} s CPU, {rss:,.0f} MiB, load {os.getloadavg()[0]:.1f}"
                )
                continue
            for name, src in trees:
                if case == "read":
                    cmd = [sys.executable, "-c", READ, str(path)]
                else:
                    cmd = [
                        sys.executable,
                        "-m",
                        "glotbench",
                        "analyze",
                        "ranks",
                        "--input",
                        str(path),
                        "--json",
                    ]
                cpu, rss = run(cmd, src)
                print(
                    f"{size} {case} {name}: {cpu:.2f} s CPU, {rss:,.0f} MiB, "
                    f"load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
