"""CPU time of starting the command line: ``glotbench --help``, ``--version``, a subcommand's help.

The goals: ``glotbench --help`` in at most 0.3 s of CPU; every command prints
its first line within 0.5 s of CPU (the tiny ``analyze compare``, ``show`` and
``analyze aggregate`` cases, on a store of 30 scores) and heavy modules load
only when used: the ``-X importtime`` profile of two help commands and of
``import glotbench.api`` lists the slowest top-level imports and which of
numpy, pandas, scipy, matplotlib, duckdb, statsmodels were imported. The
floors of a command that reads a store into frames are printed beside it:
Python with typer + rich, and that plus pandas and DuckDB. Each case
runs ``python -m glotbench ...`` in a fresh process ``--repeats`` times and
reports the minimum CPU time (user + system of the child) and wall time, next
to the floor: a Python process that only imports typer and rich. The peer is
that floor; no other tool prints glotbench's help.

    python benchmarks/bench_cli_startup.py [--repeats 10] [--json out.json]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import load_average, machine_info, print_header, print_table, write_json

CASES: dict[str, list[str]] = {
    "floor: import typer + rich": ["-c", "import typer; from rich.console import Console"],
    "glotbench --version": ["-m", "glotbench", "--version"],
    "glotbench --help": ["-m", "glotbench", "--help"],
    "glotbench analyze --help": ["-m", "glotbench", "analyze", "--help"],
    "glotbench analyze ranks --help": ["-m", "glotbench", "analyze", "ranks", "--help"],
    "glotbench metrics (imports the metrics)": ["-m", "glotbench", "metrics", "--json"],
    "floor: typer + rich + pandas + duckdb": [
        "-c",
        "import typer, pandas, duckdb; from rich.console import Console",
    ],
    "import glotbench.api": ["-c", "import glotbench.api"],
    "glotbench analyze compare --help": ["-m", "glotbench", "analyze", "compare", "--help"],
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


def import_profile(args: list[str], top: int = 8) -> tuple[list[dict[str, object]], list[str]]:
    """``python -X importtime``: the ``top`` slowest top-level imports (cumulative µs of
    the child's own clock) and which :data:`HEAVY` modules were imported at all."""
    child = subprocess.run(
        [sys.executable, "-X", "importtime", *args], check=True, capture_output=True, text=True
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


def _run(args: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    child = subprocess.run([sys.executable, *args], capture_output=True, text=True)
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({child.returncode}):\n{child.stderr}")
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--json", default=None)
    options = parser.parse_args()
    info = machine_info(["typer", "rich"])
    print_header("glotbench command-line start-up", info)
    tiny = Path(tempfile.mkdtemp()) / "scores.csv"  # 3 models × 2 languages × 5 replicates
    tiny.write_text(
        "model,language,replicate,score\n"
        + "".join(
            f"{m},{lang},{r},{0.5 + 0.1 * i + 0.01 * r}\n"
            for i, m in enumerate("ABC")
            for lang in ("de", "en")
            for r in range(5)
        )
    )
    CASES["glotbench analyze compare (tiny file, first line of output)"] = [
        *("-m", "glotbench", "analyze", "compare", "--input", str(tiny), "--draws", "100"),
    ]
    store = tiny.with_name("tiny.duckdb")
    tidy = tiny.with_name("tidy.csv")
    tidy.write_text(
        "model,task,language,metric,seed,score\n"
        + "".join(
            f"{m},t,{lang},accuracy,{r},{0.5 + 0.1 * i + 0.01 * r}\n"
            for i, m in enumerate("ABC")
            for lang in ("de", "en")
            for r in range(5)
        )
    )
    subprocess.run(
        [sys.executable, "-m", "glotbench", "import", "scores", str(tidy), "--store", str(store)],
        check=True,
        capture_output=True,
    )
    CASES["glotbench show (store of 30 scores)"] = [
        *("-m", "glotbench", "show", "--store", str(store)),
    ]
    CASES["glotbench analyze aggregate (store of 30 scores)"] = [
        *("-m", "glotbench", "analyze", "aggregate", "--store", str(store), "--draws", "100"),
    ]
    rows = []
    load_before = load_average()
    for name, args in CASES.items():
        runs = [_run(args) for _ in range(options.repeats)]
        rows.append(
            {
                "case": name,
                "cpu_s_min": min(cpu for cpu, _ in runs),
                "wall_s_min": min(wall for _, wall in runs),
            }
        )
    print_table(rows, ["case", "cpu_s_min", "wall_s_min"])
    profiles = {}
    for name in ("glotbench analyze compare --help", "glotbench --help", "import glotbench.api"):
        slowest, heavy = import_profile(CASES[name])
        profiles[name] = {"slowest_imports": slowest, "heavy_modules_loaded": heavy}
        print(f"\n{name}: heavy modules imported: {', '.join(heavy) or 'none'}")
        print_table(slowest, ["module", "cumulative_ms"])
    print(f"\nload average after the runs: {load_average()}")
    print(f"load average before the runs: {load_before}")
    write_json(options.json, {"machine": info, "rows": rows, "imports": profiles})


if __name__ == "__main__":
    main()
