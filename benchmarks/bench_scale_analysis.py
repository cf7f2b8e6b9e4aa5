"""Pairwise comparisons, ranks and the leaderboard at leaderboard scale: time and peak memory.

Synthetic replicated scores (no store, so that only the analysis is timed):
model m on cell (task, language) u, bootstrap replicate b:

    x[m, u, b] = skill_m + difficulty_u + noise_mu + e_mub,
    skill ~ N(0.7, 0.05²), difficulty ~ N(0, 0.05²), noise ~ N(0, 0.01²), e ~ N(0, 0.01²)

— the shape ``glotbench analyze`` reads from a store of one run per model and
language with ``--replicates`` bootstrap replicates. Cases (each in its own
process, so that its peak RSS is its own):

* ``compare``: 200 models × 50 languages, 1,000 replicates, R = 10,000 draws,
  languages resampled with replacement, aggregators mean, geometric mean and
  median; per-language results summarised (the default of ``analyze compare``);
  with the default pairs (``--pairs adjacent``: ranking neighbours and the top
  10 models' pairs);
* ``compare-all``: the same with every pair (``--pairs all``);
* ``compare-pairs``: every pair, plus the full per-language table of all
  19,900 pairs × 50 languages written to Parquet (``--pairs-out``);
* ``compare-pairs-csv``: the same written to CSV (``--pairs-out pairs.csv``); the
  detail gives the CPU time of the write alone;
* ``compare-terminal`` / ``compare-json``: the same comparison as
  ``glotbench analyze compare`` prints it, without and with ``--json``
  (printed to /dev/null, a 200-column terminal; the scores are given, not
  read from a file). Run against an older checkout (``PYTHONPATH=old/src``),
  the terminal case prints what that version printed (every pair);
  ``--models`` changes the number of models of the compare cases;
* ``compare-all-terminal`` / ``compare-all-json``: the same with every pair
  (``--pairs all``);
* ``ranks``: ``rank_models`` on the 200 × 50 design, R = 10,000;
* ``ranks-1000``: 1,000 models × 100 task-language cells (2 tasks × 50
  languages), 200 replicates, R = 10,000, aggregator mean (rank counts and
  rank intervals; run it once, it is the large case);
* ``ranks-cli``: the 1,000 × 100 design of ``ranks-1000`` with ``analyze ranks``'
  defaults (``AnalysisSettings()``: three aggregators, EuroEval rank score,
  R = 10,000, languages resampled with replacement) and its JSON printed as the
  command does (to /dev/null; the distribution in windows, the default above 50
  models); the scores are given, not read from a CSV file;
* ``ranks-cli-fixed``: the same with the languages fixed (``DrawSettings(n_draws=R)``,
  what ``ranks-cli`` measured until the third round of 2026-11-27);
* ``leaderboard``: ``build_leaderboard`` + the HTML page for 200 models × 50
  languages (ISO codes, so language-group views exist), R = 1,000; the detail
  gives the page size and how many top models' pairs the pairwise view holds;
* ``leaderboard-1000``: the same for the 1,000 × 100 design of ``ranks-1000``.

Run: PYTHONPATH=src python benchmarks/bench_scale_analysis.py [--cases compare ranks ...]
         [--json results.json] [--before OLD_CHECKOUT]

``--before`` runs every case also against another checkout (its ``src`` first on
``PYTHONPATH``), before the current tree's run of the same case, and prints both
side by side with the ratio of CPU times and the load average at each run; for
the compare cases it also checks that both versions' tables (aggregates,
summaries, the per-language table) are identical, float for float.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from _common import load_average, machine_info, print_header, print_table, write_json

#: 50 ISO 639-1 codes, so that the leaderboard has its language-group views
LANGUAGES = (
    "af am ar az be bg bn ca cs da de en es et fi fo fr gl gu he hi hr hu id is it "
    "jv kk kn ky lb mk ml mr ms mt nb ne nl nn pa pl pt ro ru sk sl sv sw ta"
).split()
CASES = (
    "compare",
    "compare-all",
    "compare-pairs",
    "compare-pairs-csv",
    "ranks",
    "leaderboard",
    "ranks-1000",
    "leaderboard-1000",
    "compare-terminal",
    "compare-json",
    "ranks-cli",
    "compare-all-terminal",
    "compare-all-json",
    "ranks-cli-fixed",
)


#: issue 27's goals: (CPU seconds, peak RSS MiB) — compare 200 × 50 in every output mode,
#: ranks 1,000 × 100 with the CLI's defaults (see bench_ranks_cli in docs/performance.md)
GOALS = {"compare": (5.0, 1024), "ranks-cli": (20.0, 4096), "ranks-cli-fixed": (20.0, 4096)}


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def synthetic(n_models: int, n_tasks: int, n_replicates: int, seed: int = 0) -> Any:
    """ReplicatedScores (M, tasks × 50 languages, 1 seed, B replicates) as described above."""
    from glotbench.analysis.replicates import ReplicatedScores, Unit

    rng = np.random.default_rng(seed)
    units = tuple(Unit(f"task{t}", lang) for t in range(n_tasks) for lang in LANGUAGES)
    n_units = len(units)
    skill = rng.normal(0.7, 0.05, n_models)
    values = np.empty((n_models, n_units, 1, n_replicates))
    values[:] = (skill[:, None] + rng.normal(0, 0.05, n_units)[None])[..., None, None]
    values += rng.normal(0, 0.01, (n_models, n_units, 1, 1))
    for m in range(n_models):  # replicate noise, one model at a time (bounded memory)
        values[m] += rng.normal(0, 0.01, (n_units, 1, n_replicates))
    models = tuple(f"model-{m:04d}" for m in range(n_models))
    return ReplicatedScores(models, units, values, "replicates", "accuracy")


def print_as_the_cli(result: Any, json_output: bool) -> None:
    """What ``glotbench analyze compare`` prints for ``result``, sent to /dev/null."""
    import os

    from rich.console import Console

    from glotbench.cli import _output, analyze

    devnull = open(os.devnull, "w")  # noqa: SIM115 (closed below)
    stdout, sys.stdout = sys.stdout, devnull
    console = Console(file=devnull, width=200, force_terminal=True)
    analyze.console, _output.console = console, console
    try:
        if json_output:  # as the command: tables streamed where the code can
            try:
                payload = result.to_dict(frames=True)
            except TypeError:  # the code before
                payload = result.to_dict()
            _output.print_json(payload)
        elif hasattr(analyze, "_print_comparison"):
            analyze._print_comparison(result)
        else:  # the code before: every pair's row
            console.print(_output.frame_table(result.aggregates, title="Pairwise differences"))
            console.print(_output.frame_table(result.language_summary, title="Per language"))
    finally:
        sys.stdout = stdout
        devnull.close()


def dump_tables(result: Any, folder: str) -> None:
    """Write the comparison's tables to ``folder`` (Parquet keeps every float's bits)."""
    for name in ("aggregates", "per_language", "language_summary", "pair_summary", "summary"):
        frame = getattr(result, name, None)
        if frame is not None:
            frame.to_parquet(Path(folder) / f"{name}.parquet")


def same_tables(before: str, after: str) -> str:
    """Whether both folders of :func:`dump_tables` hold the same tables, float for float."""
    import pandas as pd

    names = sorted(p.name for p in Path(after).glob("*.parquet"))
    if not names or names != sorted(p.name for p in Path(before).glob("*.parquet")):
        return "tables differ in name"
    for name in names:
        old, new = pd.read_parquet(Path(before) / name), pd.read_parquet(Path(after) / name)
        if name == "summary.parquet":  # the code before had no neighbour counts here
            new = new[[c for c in new.columns if c in old.columns]]
        try:
            pd.testing.assert_frame_equal(old, new, check_exact=True)
        except AssertionError as exc:
            return f"{name}: {str(exc).splitlines()[0]}"
    return f"identical ({len(names)} tables)"


def run_case(case: str, draws: int, n_models: int = 200, dump: str | None = None) -> dict[str, Any]:
    """Build the inputs, run one case, return seconds, CPU seconds and peak RSS."""
    from glotbench.analysis.compare import compare_models
    from glotbench.analysis.draws import DrawSettings
    from glotbench.analysis.ranks import rank_models
    from glotbench.report.leaderboard import build_leaderboard, write_leaderboard
    from glotbench.report.table_files import write_table

    if case in ("ranks-1000", "leaderboard-1000", "ranks-cli", "ranks-cli-fixed"):
        source = synthetic(1000, 2, 200)
    else:
        source = synthetic(n_models if case.startswith("compare") else 200, 1, 1000)
    rss_inputs = peak_rss_mib()
    detail = ""
    cpu0, start = time.process_time(), time.perf_counter()
    if case in ("compare", "compare-all", "compare-pairs", "compare-pairs-csv"):
        settings = DrawSettings(n_draws=draws, languages="with")
        result = compare_models(
            source,
            settings,
            per_language=case.startswith("compare-pairs"),
            pairs="adjacent" if case == "compare" else "all",
        )
        if case.startswith("compare-pairs"):
            name = "pairs.csv" if case.endswith("csv") else "pairs.parquet"
            with tempfile.TemporaryDirectory() as folder:
                write0 = time.process_time()
                path = write_table(result.per_language, Path(folder) / name)
                write = time.process_time() - write0
                detail = f"{len(result.per_language)} rows, {path.stat().st_size / 2**20:.0f} MiB"
                if case.endswith("csv"):
                    detail += f", written in {write:.2f} s CPU"
        else:
            detail = f"{len(result.aggregates)} aggregate rows"
    elif case in ("compare-terminal", "compare-json", "compare-all-terminal", "compare-all-json"):
        from glotbench import api

        settings = DrawSettings(n_draws=draws, languages="with")
        if "-all-" in case:
            result = api.analyze_compare(source, settings, pairs="all")
        else:
            result = api.analyze_compare(source, settings)
        print_as_the_cli(result, json_output=case.endswith("json"))
        detail = f"{len(result.aggregates)} aggregate rows, printed as the CLI does"
    elif case in ("ranks-cli", "ranks-cli-fixed"):
        from glotbench import api
        from glotbench.analysis.settings import AnalysisSettings
        from glotbench.cli import _output

        fixed = case == "ranks-cli-fixed"
        settings = DrawSettings(n_draws=draws) if fixed else AnalysisSettings(n_draws=draws)
        result = api.analyze_ranks(source, settings)
        with open("/dev/null", "w") as devnull:  # noqa: PTH123
            stdout, sys.stdout = sys.stdout, devnull
            try:
                _output.print_json(result.to_dict())
            finally:
                sys.stdout = stdout
        widths = (result.summary["rank_worst"] - result.summary["rank_best"]).describe()
        detail = f"rank interval width: median {widths['50%']:.0f}, max {widths['max']:.0f}"
    elif case in ("ranks", "ranks-1000"):
        aggregators = ("mean",) if case == "ranks-1000" else ("mean", "geometric_mean", "median")
        result = rank_models(source, DrawSettings(n_draws=draws), aggregators=aggregators)
        widths = (result.summary["rank_worst"] - result.summary["rank_best"]).describe()
        detail = f"rank interval width: median {widths['50%']:.0f}, max {widths['max']:.0f}"
    elif case in ("leaderboard", "leaderboard-1000"):
        data = build_leaderboard(source, n_draws=1000)
        with tempfile.TemporaryDirectory() as folder:
            size = write_leaderboard(data, folder).stat().st_size / 2**20
        pairs = data.payload["pairwise"]
        detail = (
            f"{len(data.payload['views'])} views, {size:.1f} MiB page, pairs of the top "
            f"{len(pairs['models'])} models ({len(pairs['pairs'])} pairs)"
        )
    else:
        raise SystemExit(f"unknown case {case}")
    cpu, peak = time.process_time() - cpu0, peak_rss_mib()
    if dump and case.startswith("compare"):  # after the measurement
        dump_tables(result, dump)
    goal = GOALS.get(case.split("-")[0] if case.startswith("compare") else case)
    return {
        "case": case,
        "seconds": time.perf_counter() - start,
        "cpu_seconds": cpu,
        "peak_rss_mib": peak,
        "rss_inputs_mib": rss_inputs,
        "goal": "" if goal is None else f"≤ {goal[0]:g} s CPU, ≤ {goal[1]:,} MiB",
        "met": "" if goal is None else ("yes" if cpu <= goal[0] and peak <= goal[1] else "no"),
        "detail": detail,
        "load": load_average(),
    }


def compare_in_child(before: str, after: str) -> str:
    """:func:`same_tables` in a process of its own: the tables read (the per-language one is
    ~300 MB) would otherwise raise this process's peak RSS, which its later children inherit
    (Linux keeps ``ru_maxrss`` across fork and exec)."""
    child = subprocess.run(
        [sys.executable, __file__, "--same", before, after],
        capture_output=True,
        text=True,
        check=True,
    )
    return child.stdout.strip().splitlines()[-1]


def run_child(
    case: str, args: argparse.Namespace, tree: str | None, dump: str | None
) -> dict[str, Any]:
    """One case in its own process; ``tree``: a checkout whose ``src`` goes first on the path."""
    import os

    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = str(Path(tree).resolve() / "src")
    child = subprocess.run(
        [sys.executable, __file__, "--case", case, "--draws", str(args.draws)]
        + ["--models", str(args.models)]
        + (["--dump", dump] if dump else []),
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return json.loads(child.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", nargs="+", default=list(CASES[:4]), choices=CASES)
    parser.add_argument("--draws", type=int, default=10_000)
    parser.add_argument("--models", type=int, default=200, help="models of the compare cases")
    parser.add_argument("--json", default=None, help="write the results to this JSON file")
    parser.add_argument(
        "--before", default=None, help="a checkout of the previous code, run side by side"
    )
    parser.add_argument("--case", default=None, help=argparse.SUPPRESS)  # child process
    parser.add_argument("--dump", default=None, help=argparse.SUPPRESS)  # child: tables here
    parser.add_argument("--same", nargs=2, default=None, help=argparse.SUPPRESS)  # child
    args = parser.parse_args()
    if args.same:
        print(same_tables(*args.same))
        return
    if args.case:
        print(json.dumps(run_case(args.case, args.draws, args.models, args.dump)))
        return
    info = machine_info(["numpy", "scipy", "pandas"])
    print_header("compare, ranks and leaderboard at scale", info)
    rows = []
    for case in args.cases:
        with tempfile.TemporaryDirectory() as old, tempfile.TemporaryDirectory() as new:
            check = args.before is not None and case.startswith("compare")
            if args.before is not None:
                before = run_child(case, args, args.before, old if check else None)
                print(f"{case} (before): {before}", flush=True)
            row = run_child(case, args, None, new if check else None)
            if args.before is not None:
                row = {
                    **row,
                    "before_cpu_seconds": before["cpu_seconds"],
                    "before_peak_rss_mib": before["peak_rss_mib"],
                    "before_load": before["load"],
                    "cpu_ratio": before["cpu_seconds"] / row["cpu_seconds"],
                    "outputs": compare_in_child(old, new) if check else "",
                }
        print(f"{case}: {row}", flush=True)
        rows.append(row)
    print()
    columns = ["case", "seconds", "cpu_seconds", "peak_rss_mib", "rss_inputs_mib", "load"]
    if args.before is not None:
        columns[1:1] = ["before_cpu_seconds", "before_peak_rss_mib", "before_load"]
        columns += ["cpu_ratio", "outputs"]
    print_table(rows, [*columns, "goal", "met", "detail"])
    info["load_average_after"] = machine_info([])["load_average_1_5_15"]
    print(f"load average after: {info['load_average_after']}")
    write_json(args.json, {"machine": info, "draws": args.draws, "results": rows})


if __name__ == "__main__":
    main()
