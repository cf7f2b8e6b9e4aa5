"""CPU time of starting the command line: ``glotbench --help``, ``--version``, a subcommand's help.

The goal (issue 13) is ``glotbench --help`` in at most 0.3 s of CPU. Each case
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
import time

from _common import load_average, machine_info, print_header, print_table, write_json

CASES: dict[str, list[str]] = {
    "floor: import typer + rich": ["-c", "import typer; from rich.console import Console"],
    "glotbench --version": ["-m", "glotbench", "--version"],
    "glotbench --help": ["-m", "glotbench", "--help"],
    "glotbench analyze --help": ["-m", "glotbench", "analyze", "--help"],
    "glotbench analyze ranks --help": ["-m", "glotbench", "analyze", "ranks", "--help"],
    "glotbench metrics (imports the metrics)": ["-m", "glotbench", "metrics", "--json"],
}


def _run(args: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], check=True, capture_output=True)
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
    rows = []
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
    print(f"\nload average after the runs: {load_average()}")
    write_json(options.json, {"machine": info, "rows": rows})


if __name__ == "__main__":
    main()
