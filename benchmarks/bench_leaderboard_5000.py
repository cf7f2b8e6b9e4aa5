"""Leaderboard-scale analyses on a real store: aggregate, compare, ranks, the page (issue 27).

    python benchmarks/generate_leaderboard_store.py --out DATA            # 300M rows, seeded
    for t in 0 1 2 3 4 5; do glotbench import examples DATA/task$t.parquet --store S; done
    python benchmarks/bench_leaderboard_5000.py --store S --out PAGE_FOLDER

In one process, with the defaults every command and the page share
(:class:`~glotbench.analysis.settings.AnalysisSettings`: 1,000 bootstrap
replicates per run, 10,000 draws), it times

1. **read + bootstrap**: ``leaderboard_source`` — every run's per-example
   statistics read from the store one task–language cell at a time and
   bootstrapped (what each ``analyze`` command and ``glotbench leaderboard``
   do first);
2. ``analyze aggregate`` (``api.analyze_aggregate``, its JSON written as ``--json`` prints it);
3. ``analyze compare`` with the default pairs (ranking neighbours and every pair
   of the ``--top-k`` best) plus one pair asked for (``--pair A B``: default the
   best and the median model), JSON written;
4. ``analyze ranks`` (three aggregators and the EuroEval rank score; JSON written,
   the rank distribution in windows as the CLI gives it above 50 models);
5. the leaderboard page (``api.write_leaderboard_site``: every view, the pairwise view).

Each step prints its wall and CPU seconds (``time.process_time``: all threads of
the process), the peak resident set size so far and the 1-minute load average;
the last line gives the totals against issue 27's goal (≤ 5 min, ≤ 8 GB on 2
cores; page ≤ 30 MB). On a shared machine the wall time depends on the load;
the CPU time is what an idle 2-core machine needs at most (less when the BLAS
products run on both cores).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

GOAL_SECONDS = 5 * 60
GOAL_MB = 8_000
GOAL_PAGE_MB = 30.0
STEPS = ("aggregate", "compare", "ranks", "page")


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 * 1.048576  # MiB -> MB


def step(name: str, fn: Callable[[], Any], log: list[dict[str, Any]]) -> Any:
    """Run ``fn``, print and record its wall, CPU, peak RSS and the load."""
    load0 = os.getloadavg()[0]
    wall0, cpu0 = time.perf_counter(), time.process_time()
    result = fn()
    row = {
        "step": name,
        "wall_s": round(time.perf_counter() - wall0, 1),
        "cpu_s": round(time.process_time() - cpu0, 1),
        "peak_mb": round(peak_mb()),
        "load": f"{load0:.1f} → {os.getloadavg()[0]:.1f}",
    }
    log.append(row)
    print(
        f"{name:<34} {row['wall_s']:8.1f} s wall {row['cpu_s']:8.1f} s CPU   "
        f"peak RSS {row['peak_mb']:6,} MB   load {row['load']}",
        flush=True,
    )
    return result


def write_json(payload: Any, path: Path) -> int:
    """The payload as the CLI's ``--json`` prints it, to ``path``; its size in bytes."""
    from glotbench.cli._output import print_json

    with path.open("w") as handle:
        stdout, sys.stdout = sys.stdout, handle
        try:
            print_json(payload)
        finally:
            sys.stdout = stdout
    return path.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--store", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path, help="folder for the page and JSON")
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--pair", nargs=2, default=None, metavar=("A", "B"))
    parser.add_argument("--draws", type=int, default=None, help="default: the settings' 10,000")
    parser.add_argument(
        "--steps",
        nargs="+",
        choices=STEPS,
        default=list(STEPS),
        help="run only these after the read (e.g. two processes on two cores: "
        "'aggregate compare ranks' and 'page'; add up their CPU times)",
    )
    args = parser.parse_args()

    from glotbench import api
    from glotbench.analysis.settings import AnalysisSettings

    settings = AnalysisSettings() if args.draws is None else AnalysisSettings(n_draws=args.draws)
    args.out.mkdir(parents=True, exist_ok=True)
    print(
        f"{os.cpu_count()} CPUs, python {sys.version.split()[0]}; store {args.store} "
        f"({args.store.stat().st_size / 1e9:.1f} GB); {settings.n_replicates} replicates, "
        f"{settings.n_draws} draws; load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    log: list[dict[str, Any]] = []
    t0, c0 = time.perf_counter(), time.process_time()
    source = step(
        "read + bootstrap (leaderboard_source)",
        lambda: api.leaderboard_source(store=args.store, settings=settings),
        log,
    )
    replicated = source.replicated
    print(f"  {len(replicated.models)} models × {len(replicated.units)} cells", flush=True)
    if "aggregate" in args.steps or "compare" in args.steps:
        aggregates = step(
            "analyze aggregate (+ JSON)",
            lambda: (
                r := api.analyze_aggregate(replicated, settings),
                write_json(r.to_dict(), args.out / "aggregate.json"),
            )[0],
            log,
        )
        means = aggregates.frame.query("aggregator == 'mean'")
        means = means.sort_values("score", ascending=False)
        pair = (
            tuple(args.pair)
            if args.pair
            else (means["model"].iloc[0], means["model"].iloc[len(means) // 2])
        )
    if "compare" in args.steps:
        comparison = step(
            f"analyze compare --top-k {args.top_k} --pair (+ JSON)",
            lambda: (
                r := api.analyze_compare(replicated, settings, top_k=args.top_k, pair=[pair]),
                write_json(r.to_dict(), args.out / "compare.json"),
            )[0],
            log,
        )
        asked = comparison.aggregates.query("aggregator == 'mean'")
        asked = asked[(asked["model_a"].isin(pair)) & (asked["model_b"].isin(pair))]
        print(f"  {len(comparison.aggregates)} pair rows; pair {pair}: {asked.iloc[0].to_dict()}")
    if "ranks" in args.steps:
        step(
            "analyze ranks (+ JSON)",
            lambda: write_json(
                api.analyze_ranks(replicated, settings).to_dict(), args.out / "ranks.json"
            ),
            log,
        )
    page_mb = 0.0
    if "page" in args.steps:
        site = step(
            "leaderboard page (write_leaderboard_site)",
            lambda: api.write_leaderboard_site(args.out / "board", source, settings=settings),
            log,
        )
        page_mb = site.path.stat().st_size / 1e6
        print(f"  page {site.path}: {page_mb:.1f} MB, {len(site.views)} views")
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    ok = cpu <= GOAL_SECONDS and peak_mb() <= GOAL_MB and page_mb <= GOAL_PAGE_MB
    print(
        f"total: {wall:.1f} s wall, {cpu:.1f} s CPU, peak RSS {peak_mb():,.0f} MB, page "
        f"{page_mb:.1f} MB (goal ≤ {GOAL_SECONDS} s on 2 cores, ≤ {GOAL_MB:,} MB, page ≤ "
        f"{GOAL_PAGE_MB:g} MB: {'met' if ok else 'not met'} on CPU time); load now "
        f"{os.getloadavg()[0]:.1f}"
    )
    (args.out / f"bench-{'-'.join(args.steps)}.json").write_text(
        json.dumps({"steps": log, "wall_s": wall, "cpu_s": cpu, "page_mb": page_mb}, indent=1)
    )


if __name__ == "__main__":
    main()
