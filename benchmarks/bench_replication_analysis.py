"""Replication-aware analysis at benchmark scale: time and memory.

Design: 20 models × 50 languages × 10 seeds × 2,000 examples (accuracy), as
issue "Replication-aware analysis" asks. Steps timed:

1. bootstrap every run (B replicates per seed, paired across models and seeds
   within a language) with the engine — ``replicates_from_statistics``;
2. variance components; 3. pairwise comparisons and 4. ranks with R draws
   (non-parametric, and with languages resampled).

For reference, step 1 is also run the naive way — a Python loop over
replicates that re-draws example indices and recomputes every run's score —
on the first ``--naive-languages`` languages, and the ratio is printed.

Wall-clock and CPU seconds are printed per step (CPU time depends much less
on other load on a shared machine), with the load average.

Run: PYTHONPATH=src python benchmarks/bench_replication_analysis.py
         [--replicates 1000] [--draws 10000]
"""

from __future__ import annotations

import argparse
import resource
import time
from dataclasses import dataclass

import numpy as np
from _common import load_average

from glotbench.analysis.compare import compare_models
from glotbench.analysis.draws import DrawSettings
from glotbench.analysis.ranks import rank_models
from glotbench.analysis.replicates import replicates_from_statistics
from glotbench.analysis.variance import components, variance_components
from glotbench.metrics import get_metric

ACCURACY = get_metric("accuracy")


@dataclass
class Cell:
    """Statistics of all runs of one language (the shape store.stats_matrix returns)."""

    task: str
    language: str
    models: list[str]
    stats: np.ndarray

    def get_metric(self):  # noqa: ANN201
        return ACCURACY


def simulate(
    n_models: int, n_languages: int, n_seeds: int, n_examples: int, seed: int
) -> list[Cell]:
    rng = np.random.default_rng(seed)
    skill = rng.normal(0, 0.3, n_models)
    cells = []
    for language in range(n_languages):
        difficulty = rng.normal(0, 0.8)
        logits = skill[:, None] + difficulty + rng.normal(0, 0.1, (n_models, n_seeds))
        p = 1 / (1 + np.exp(-(logits + 1.0)))
        correct = rng.random((n_models, n_seeds, n_examples)) < p[..., None]
        stats = np.stack([correct, np.ones_like(correct)], axis=-1).astype(np.float64)
        models = [f"model_{m:02d}" for m in range(n_models) for _ in range(n_seeds)]
        cells.append(Cell("task", f"lang_{language:02d}", models, stats.reshape(-1, n_examples, 2)))
    return cells


def naive_bootstrap(cells: list[Cell], n_replicates: int, seed: int) -> float:
    """Per replicate: draw indices, recompute each run's accuracy from raw correctness."""
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    for cell in cells:
        correct = cell.stats[:, :, 0]
        n = correct.shape[1]
        for _ in range(n_replicates):
            idx = rng.integers(0, n, n)
            for run in range(correct.shape[0]):
                correct[run, idx].mean()
    return time.perf_counter() - start


#: issue 27's goal for the whole analysis at the default design
GOAL_SECONDS = 3.0


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class Clock:
    """Wall-clock and CPU seconds of consecutive steps."""

    def __init__(self) -> None:
        self.steps: dict[str, tuple[float, float]] = {}
        self._start = (time.perf_counter(), cpu_seconds())

    def lap(self, step: str) -> None:
        now = (time.perf_counter(), cpu_seconds())
        self.steps[step] = (now[0] - self._start[0], now[1] - self._start[1])
        self._start = (time.perf_counter(), cpu_seconds())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--models", type=int, default=20)
    parser.add_argument("--languages", type=int, default=50)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--examples", type=int, default=2000)
    parser.add_argument(
        "--replicates", type=int, default=1000, help="bootstrap replicates per seed"
    )
    parser.add_argument("--draws", type=int, default=10_000, help="replication draws")
    parser.add_argument("--naive-languages", type=int, default=1)
    args = parser.parse_args()

    cells = simulate(args.models, args.languages, args.seeds, args.examples, seed=0)
    print(
        f"design: {args.models} models × {args.languages} languages × {args.seeds} seeds × "
        f"{args.examples} examples; B = {args.replicates} per seed; R = {args.draws} draws"
    )
    print(f"peak RSS after simulating the data: {peak_rss_mib():.0f} MiB")
    print(f"load average at the start: {load_average()}")
    clock = Clock()
    replicated = replicates_from_statistics(cells, "accuracy", n_replicates=args.replicates)
    clock.lap("bootstrap all runs (engine)")
    variance = variance_components(components(replicated))
    clock.lap("variance components")
    comparison = compare_models(
        replicated,
        DrawSettings(n_draws=args.draws),
        aggregators=("mean", "median"),
        pairs="all",  # every pair, as before the default became ranking neighbours
    )
    clock.lap("compare, 190 pairs × 2 aggregators")
    ranks = rank_models(replicated, DrawSettings(n_draws=args.draws, languages="with"))
    clock.lap("ranks, 3 aggregators, languages resampled")
    print(f"  {'step':<45s} {'wall':>8s}   {'CPU':>8s}")
    for step, (wall, cpu) in clock.steps.items():
        print(f"  {step:<45s} {wall:8.2f} s {cpu:8.2f} s")
    wall_total = sum(w for w, _ in clock.steps.values())
    cpu_total = sum(c for _, c in clock.steps.values())
    print(f"  {'total':<45s} {wall_total:8.2f} s {cpu_total:8.2f} s")
    print(
        f"goal (issue 27): ≤ {GOAL_SECONDS:g} s; measured {cpu_total:.2f} s of CPU "
        f"({wall_total:.2f} s wall): {'met' if cpu_total <= GOAL_SECONDS else 'not met'}"
    )
    print(f"load average at the end: {load_average()}")
    print(
        f"replicate array: {replicated.values.nbytes / 2**20:.0f} MiB; "
        f"peak RSS: {peak_rss_mib():.0f} MiB"
    )
    print(
        f"check: mean σ_boot {variance.per_model['sigma_boot_mean'].mean():.4f} "
        f"(binomial ≈ √(p(1−p)/n) ≈ {np.sqrt(0.25 / args.examples):.4f} at most); "
        f"{int(comparison.aggregates['flagged'].sum())} of {len(comparison.aggregates)} "
        "pairs flagged; "
        f"rank rows sum to {ranks.distribution.filter(like='rank_').sum(axis=1).round(6).unique()}"
    )
    subset = cells[: args.naive_languages]
    if not subset:
        return
    naive = naive_bootstrap(subset, args.replicates, seed=1)
    start = time.perf_counter()
    replicates_from_statistics(subset, "accuracy", n_replicates=args.replicates)
    ours = time.perf_counter() - start
    print(
        f"naive per-replicate recomputation on {len(subset)} language(s): {naive:.2f} s; "
        f"engine: {ours:.3f} s; ratio {naive / ours:.0f}x"
    )


if __name__ == "__main__":
    main()
