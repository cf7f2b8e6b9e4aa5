"""CPU time of the command line: start-up, and every command's first output line.

Goals (issue 27, "an instant CLI"): ``glotbench --help`` in at most 0.3 s of
CPU; **every command prints its first line within 0.5 s of CPU** and loads
heavy modules only when used; a **repeated analysis** (answered from the
store's cache) in at most 0.3 s.

Two tables:

* start-up: ``--version``, ``--help``, a sub-group's and a command's help,
  ``import glotbench.api``, next to the floors (Python importing typer +
  rich; that plus pandas and DuckDB). Minimum over ``--repeats`` fresh
  processes of the child's CPU time (user + system, ``os.wait4``).
* first line: every command group (``run``, ``import``, ``analyze …``,
  ``show``, ``export``, ``examples``, ``leaderboard``, ``report``) on small
  stores made first (30 imported scores; a ``run`` of the offline starter suite
  with kept outputs), each as a person runs it: stdout a pipe, **stderr a
  terminal** (a pseudo-terminal of 100 columns). The script reads both until
  the first complete line on either, stops the child (SIGSTOP), reads its CPU
  time from ``/proc/<pid>/stat`` (utime + stime, clock ticks of 10 ms) and
  whether numpy and pandas are mapped into it (``/proc/<pid>/maps``), then lets
  it finish and takes its total CPU time from ``os.wait4``. A child that
  computes is asked with ``GLOTBENCH_NO_CACHE=1``; "repeated" cases ask a
  question a first call has answered (on a glotbench without the answer cache
  they compute again). The time between the child's write and the stop is
  counted, so the first-line figure can only be too high.

Then ``python -X importtime`` of each command (pipes, one process each):
which of numpy, pandas, scipy, matplotlib, duckdb, statsmodels, sklearn it
imported, and the slowest top-level imports of three cases.

    python benchmarks/bench_cli_startup.py [--repeats 5] [--json out.json]

Run it with ``PYTHONPATH`` on another tree to measure that tree (the
"before" column of benchmarks/results/demo-and-cli.md).
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import re
import selectors
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import time
from collections.abc import Callable
from pathlib import Path

from _common import load_average, machine_info, print_header, print_table, write_json

GLOTBENCH = ("-m", "glotbench")

#: start-up cases: whole processes (CPU of the child)
START_CASES: dict[str, list[str]] = {
    "floor: import typer + rich": ["-c", "import typer; from rich.console import Console"],
    "floor: typer + rich + pandas + duckdb": [
        "-c",
        "import typer, pandas, duckdb; from rich.console import Console",
    ],
    "glotbench --version": [*GLOTBENCH, "--version"],
    "glotbench --help": [*GLOTBENCH, "--help"],
    "glotbench analyze --help": [*GLOTBENCH, "analyze", "--help"],
    "glotbench analyze compare --help": [*GLOTBENCH, "analyze", "compare", "--help"],
    "import glotbench.api": ["-c", "import glotbench.api"],
}

#: modules that only an analysis that uses them should import
HEAVY = (
    "numpy",
    "pandas",
    "scipy",
    "scipy.special",
    "scipy.stats",
    "scipy.optimize",
    "sklearn",
    "matplotlib",
    "duckdb",
    "statsmodels",
)
TICKS = os.sysconf("SC_CLK_TCK")


def import_profile(
    args: list[str], cwd: Path, top: int = 8
) -> tuple[list[dict[str, object]], list[str]]:
    """``python -X importtime``: the ``top`` slowest top-level imports (cumulative µs of
    the child's own clock) and which :data:`HEAVY` modules were imported at all."""
    child = subprocess.run(
        [sys.executable, "-X", "importtime", *args], capture_output=True, text=True, cwd=cwd
    )
    rows, loaded = [], set()
    for line in child.stderr.splitlines():
        parts = line.split("|")
        if not line.startswith("import time:") or len(parts) != 3 or not parts[1].strip().isdigit():
            continue
        module = parts[2].strip()
        loaded.add(module)
        if not parts[2].startswith("  "):  # a top-level import (nested ones are indented)
            rows.append({"module": module, "cumulative_ms": int(parts[1]) / 1000})
    rows.sort(key=lambda r: -float(r["cumulative_ms"]))  # type: ignore[arg-type]
    return rows[:top], [m for m in HEAVY if m in loaded]


def _wait(child: subprocess.Popen[bytes]) -> float:
    """Wait for ``child``; its own CPU seconds (``os.wait4``: this child and the children
    it reaped; ``RUSAGE_CHILDREN`` would keep the largest of all earlier children)."""
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime


def _run(args: list[str]) -> tuple[float, float]:
    """CPU and wall seconds of one whole process."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as errors:
        child = subprocess.Popen([sys.executable, *args], stdout=subprocess.DEVNULL, stderr=errors)
        cpu = _wait(child)
        if child.returncode != 0:
            errors.seek(0)
            raise SystemExit(f"{' '.join(args)} failed:\n{errors.read().decode()}")
    return cpu, time.perf_counter() - start


def _proc_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime (fields 14, 15)


def _mapped(pid: int) -> list[str]:
    maps = Path(f"/proc/{pid}/maps").read_text()
    return [name for name in ("numpy", "pandas") if f"/{name}/" in maps]


def first_line(args: list[str], cwd: Path, env: dict[str, str]) -> dict[str, object]:
    """Run ``python args``; CPU at the first line on stdout or (a terminal's) stderr."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    start = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=slave,
        cwd=cwd,
        env=env,
    )
    os.close(slave)
    assert child.stdout is not None
    streams = {child.stdout.fileno(): "stdout", master: "stderr"}
    selector = selectors.DefaultSelector()
    for fd in streams:
        selector.register(fd, selectors.EVENT_READ)
    seen = {fd: b"" for fd in streams}
    found: dict[str, object] = {}
    while selector.get_map():
        for key, _ in selector.select(timeout=600):
            try:
                data = os.read(key.fd, 1 << 16)
            except OSError:  # a pseudo-terminal whose other end closed
                data = b""
            if not data:
                selector.unregister(key.fd)
                continue
            seen[key.fd] += data
            if not found and b"\n" in seen[key.fd]:
                wall = time.perf_counter() - start
                try:
                    os.kill(child.pid, signal.SIGSTOP)
                    found = {"cpu": _proc_cpu(child.pid), "mapped": _mapped(child.pid)}
                    os.kill(child.pid, signal.SIGCONT)
                except (ProcessLookupError, FileNotFoundError):
                    found = {"cpu": None, "mapped": []}
                line = seen[key.fd].split(b"\n", 1)[0].decode(errors="replace")
                line = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", line).strip()  # colours, cursor
                found |= {"wall": wall, "stream": streams[key.fd], "line": line}
    os.close(master)
    total = _wait(child)
    if child.returncode != 0:
        raise SystemExit(
            f"{' '.join(args)} failed ({child.returncode}):\n"
            + seen[master].decode(errors="replace")[-2000:]
        )
    if not found:
        found = {"cpu": total, "mapped": [], "wall": None, "stream": "-", "line": ""}
    return found | {"total_cpu": total}


def _scores_csv(path: Path) -> Path:
    """3 models × 2 languages × 5 seeds of one task: 30 scores."""
    path.write_text(
        "model,task,language,metric,seed,score\n"
        + "".join(
            f"{m},t,{lang},accuracy,{r},{0.5 + 0.1 * i + 0.01 * r}\n"
            for i, m in enumerate("ABC")
            for lang in ("de", "en")
            for r in range(5)
        )
    )
    return path


STARTER = [
    *("run", "starter", "--model", "majority", "--model", "char-nb"),
    *("--language", "da", "--language", "sv", "--iterations", "2", "--keep-outputs"),
]


def first_line_cases(work: Path) -> dict[str, tuple[Callable[[int], list[str]], bool]]:
    """name -> (arguments of repeat i, computed afresh: GLOTBENCH_NO_CACHE=1)."""
    scores = _scores_csv(work / "scores.csv")
    subprocess.run([sys.executable, *GLOTBENCH, "import", "scores", str(scores), "--store",
                    str(work / "scores.duckdb")], check=True, capture_output=True)  # fmt: skip
    subprocess.run([sys.executable, *GLOTBENCH, *STARTER, "--store", str(work / "runs.duckdb")],
                   check=True, capture_output=True)  # fmt: skip
    store = ("--store", str(work / "scores.duckdb"))
    runs = ("--store", str(work / "runs.duckdb"))
    analyses = {
        "aggregate": ["--draws", "100"],
        "compare": ["--draws", "100"],
        "ranks": ["--draws", "100"],
        "variance": [],
        "tasks": ["--draws", "100"],
    }
    cases: dict[str, tuple[Callable[[int], list[str]], bool]] = {
        "run (starter: 2 models × 2 languages × 2 iterations, fresh store)": (
            lambda i: [*GLOTBENCH, *STARTER, "--store", str(work / f"run-{i}.duckdb")],
            True,
        ),
        "import scores (30 rows, fresh store)": (
            lambda i: [
                *GLOTBENCH,
                "import",
                "scores",
                str(scores),
                "--store",
                str(work / f"import-{i}.duckdb"),
            ],  # fmt: skip
            True,
        ),
        "show": (lambda i: [*GLOTBENCH, "show", *runs], True),
        "export (CSV)": (
            lambda i: [*GLOTBENCH, "export", *runs, "--out", str(work / f"x{i}")],
            True,
        ),
        "examples": (
            lambda i: [
                *GLOTBENCH,
                "examples",
                *runs,
                "--model",
                "char-nb",
                "--model",
                "majority",
                "--limit",
                "5",
            ],
            True,
        ),
        "leaderboard": (
            lambda i: [*GLOTBENCH, "leaderboard", *runs, "--out", str(work / f"lb{i}")],
            True,
        ),
        "report": (
            lambda i: [*GLOTBENCH, "report", *runs, "--out", str(work / f"r{i}.html")],
            True,
        ),
    }
    for name, extra in analyses.items():
        cases[f"analyze {name} (30 scores)"] = (
            lambda i, name=name, extra=extra: [*GLOTBENCH, "analyze", name, *store, *extra],
            True,
        )
    for name in ("aggregate", "compare"):
        cases[f"analyze {name}, repeated (answer cache)"] = (
            lambda i, name=name: [*GLOTBENCH, "analyze", name, *store, *analyses[name]],
            False,
        )
        cases[f"analyze {name} --json, repeated (answer cache)"] = (
            lambda i, name=name: [*GLOTBENCH, "analyze", name, *store, *analyses[name], "--json"],
            False,
        )
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", default=None)
    options = parser.parse_args()
    info = machine_info(["typer", "rich", "duckdb", "pandas"])
    print_header("glotbench command line: start-up and first output line", info)
    load_before = load_average()
    rows = []
    for name, args in START_CASES.items():
        runs = [_run(args) for _ in range(options.repeats)]
        rows.append(
            {
                "case": name,
                "cpu_s_min": min(cpu for cpu, _ in runs),
                "wall_s_min": min(wall for _, wall in runs),
            }
        )
    print_table(rows, ["case", "cpu_s_min", "wall_s_min"])

    work = Path(tempfile.mkdtemp(prefix="glotbench-cli-"))
    first_rows = []
    profiles: dict[str, object] = {}
    try:
        cases = first_line_cases(work)
        fresh_env = {**os.environ, "GLOTBENCH_NO_CACHE": "1", "COLUMNS": "100"}
        cached_env = {k: v for k, v in os.environ.items() if k != "GLOTBENCH_NO_CACHE"}
        cached_env["COLUMNS"] = "100"
        for name, (arguments, fresh) in cases.items():
            env = fresh_env if fresh else cached_env
            if not fresh:
                first_line(arguments(0), work, env)  # the first call answers and keeps it
            results = [first_line(arguments(i), work, env) for i in range(options.repeats)]
            best = min(results, key=lambda r: float(r["cpu"]))  # type: ignore[arg-type]
            first_rows.append(
                {
                    "command": name,
                    "first_line_cpu_s": best["cpu"],
                    "total_cpu_s": min(float(r["total_cpu"]) for r in results),  # type: ignore[arg-type]
                    "loaded_at_first_line": ",".join(best["mapped"]) or "-",  # type: ignore[arg-type]
                    "stream": best["stream"],
                    "first_line": str(best["line"])[:60],
                }
            )
        print()
        print_table(
            first_rows,
            ["command", "first_line_cpu_s", "total_cpu_s", "loaded_at_first_line", "stream",
             "first_line"],
        )  # fmt: skip
        print("\nheavy modules each command imports (python -X importtime, whole process):")
        for name, (arguments, fresh) in cases.items():
            if fresh:
                os.environ["GLOTBENCH_NO_CACHE"] = "1"
            else:  # the first call keeps the answer for this invocation (stderr a pipe here)
                import_profile(arguments(99), work)
            slowest, heavy = import_profile(arguments(99), work)
            os.environ.pop("GLOTBENCH_NO_CACHE", None)
            profiles[name] = {"slowest_imports": slowest, "heavy_modules_loaded": heavy}
            print(f"  {name}: {', '.join(heavy) or 'none'}")
        for name in ("glotbench --help", "import glotbench.api"):
            slowest, heavy = import_profile(START_CASES[name], work)
            profiles[name] = {"slowest_imports": slowest, "heavy_modules_loaded": heavy}
            print(f"\n{name}: heavy modules imported: {', '.join(heavy) or 'none'}")
            print_table(slowest, ["module", "cumulative_ms"])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\nload average before the runs: {load_before}")
    print(f"load average after the runs: {load_average()}")
    write_json(
        options.json,
        {"machine": info, "rows": rows, "first_line": first_rows, "imports": profiles},
    )


if __name__ == "__main__":
    main()
