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
on other load on a shared machine), with the load average. Each analysis runs
in a fresh child process; with ``--previous SRC`` the previous code (the
``src`` folder of another checkout) runs first in the same way, its CPU times
are printed beside these with the ratio, and the digests of every result
(replicates and points, variance components, comparisons, ranks) say whether
the two give the same numbers bit for bit.

Run: PYTHONPATH=src python benchmarks/bench_replication_analysis.py
         [--replicates 1000] [--draws 10000] [--previous ../before/src] [--repeats 2]
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from _common import load_average

from glotbench.analysis.compare import compare_models
from glotbench.analysis.draws import DrawSettings
from glotbench.analysis.ranks import rank_models
from glotbench.analysis.replicates import replicates_from_statistics
from glotbench.analysis.variance import components, variance_components
from glotbench.metrics import get_metric

ACCURACY = get_metric("accuracy")


@dataclasses.dataclass
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


def digest(*arrays: np.ndarray) -> str:
    """sha256 of the arrays' bytes: equal digests, bit-identical results."""
    h = hashlib.sha256()
    for array in arrays:
        h.update(np.ascontiguousarray(array).tobytes())
    return h.hexdigest()[:16]


def frame_digest(frame: pd.DataFrame) -> str:
    """Digest of a result table: its columns, text cells and numbers (bit for bit)."""
    numbers = frame.select_dtypes("number").to_numpy(dtype=np.float64)
    text = "|".join(map(str, frame.columns)) + "|".join(
        frame.select_dtypes(exclude="number").astype(str).to_numpy().ravel()
    )
    return digest(np.frombuffer(text.encode(), np.uint8), numbers)


def result_digest(result: Any) -> str:
    """Digest of every table and array field of an analysis result (a dataclass)."""
    parts = []
    for field in dataclasses.fields(result):
        value = getattr(result, field.name)
        if isinstance(value, pd.DataFrame):
            parts.append(frame_digest(value))
        elif isinstance(value, np.ndarray):
            parts.append(digest(value))
    return digest(np.frombuffer("".join(parts).encode(), np.uint8))


def run_analysis(args: argparse.Namespace) -> dict[str, Any]:
    """The timed analysis: steps (wall, CPU seconds), digests of every result, checks."""
    cells = simulate(args.models, args.languages, args.seeds, args.examples, seed=0)
    data_rss = peak_rss_mib()
    load_start = load_average()
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
    clock.lap(f"compare, {args.models * (args.models - 1) // 2} pairs × 2 aggregators")
    ranks = rank_models(replicated, DrawSettings(n_draws=args.draws, languages="with"))
    clock.lap("ranks, 3 aggregators, languages resampled")
    assert replicated.point is not None
    return {
        "steps": clock.steps,
        "load": [load_start, load_average()],
        "rss": [data_rss, peak_rss_mib()],
        "replicate_mib": replicated.values.nbytes / 2**20,
        "digests": {
            "replicates": digest(replicated.values, replicated.point),
            "variance": result_digest(variance),
            "compare": result_digest(comparison),
            "ranks": result_digest(ranks),
        },
        "check": (
            f"mean σ_boot {variance.per_model['sigma_boot_mean'].mean():.4f} "
            f"(binomial ≈ √(p(1−p)/n) ≈ {np.sqrt(0.25 / args.examples):.4f} at most); "
            f"{int(comparison.aggregates['flagged'].sum())} of {len(comparison.aggregates)} "
            "pairs flagged; rank rows sum to "
            f"{ranks.distribution.filter(like='rank_').sum(axis=1).round(6).unique()}"
        ),
    }


def previous_run(args: argparse.Namespace, source: str) -> dict[str, Any]:
    """:func:`run_analysis` with the glotbench of ``source`` (a ``src`` folder), in a child."""
    options = [f"--{k.replace('_', '-')}={v}" for k, v in vars(args).items() if k in DESIGN]
    env = {**os.environ, "PYTHONPATH": source}
    child = subprocess.run(
        [sys.executable, __file__, *options, "--child-json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(child.stdout.strip().splitlines()[-1])


def bootstrap_floor(args: argparse.Namespace) -> dict[str, float]:
    """CPU seconds of the bootstrap's irreducible work, each part measured alone.

    For every language and block of replicates: the n example indices of each
    replicate (the seeded draws that define the replicates), their counts per
    example (one bincount per slice), and the float32 product of the counts
    with the (n × u) distinct statistic columns (u = models × seeds + 1), on one
    BLAS thread. Random statistics of the same shape stand in for the data.
    """
    from threadpoolctl import threadpool_limits

    from glotbench.resample.weights import BLOCK, block_rng, example_draws

    n, u = args.examples, args.models * args.seeds + 1
    columns = (np.random.default_rng(0).random((u, n)) < 0.6).astype(np.float32).T
    counts = np.empty((BLOCK, n), dtype=np.float32)
    product = np.empty((BLOCK, u), dtype=np.float32)
    offsets = (np.arange(16, dtype=np.int32) * n)[:, None]
    parts = {"draws": 0.0, "counts": 0.0, "product": 0.0}
    with threadpool_limits(limits=1, user_api="blas"):
        for language in range(args.languages):
            for block in range(-(-args.replicates // BLOCK)):
                rows = min(BLOCK, args.replicates - block * BLOCK)
                rng = block_rng(language, block)
                start = cpu_seconds()
                draws = [example_draws(rng, n, min(16, rows - r)) for r in range(0, rows, 16)]
                drawn = cpu_seconds()
                for r, part in zip(range(0, rows, 16), draws, strict=True):
                    found = np.bincount(
                        (part + offsets[: len(part)]).ravel(), minlength=len(part) * n
                    )
                    counts[r : r + len(part)] = found.reshape(len(part), n)
                counted = cpu_seconds()
                np.matmul(counts[:rows], columns, out=product[:rows])
                multiplied = cpu_seconds()
                parts["draws"] += drawn - start
                parts["counts"] += counted - drawn
                parts["product"] += multiplied - counted
    return parts


#: the options that set the design (passed on to the previous code's run)
DESIGN = ("models", "languages", "seeds", "examples", "replicates", "draws")


def total(run: dict[str, Any]) -> tuple[float, float]:
    return (sum(w for w, _ in run["steps"].values()), sum(c for _, c in run["steps"].values()))


def report(now: dict[str, Any], before: dict[str, Any] | None) -> None:
    """Print the steps (previous code beside this one when given), the goal and the load."""
    if before is None:
        print(f"  {'step':<45s} {'wall':>8s}   {'CPU':>8s}")
        for step, (wall, cpu) in now["steps"].items():
            print(f"  {step:<45s} {wall:8.2f} s {cpu:8.2f} s")
    else:
        print(f"  {'step':<45s} {'CPU before':>10s}   {'CPU now':>8s}   {'ratio':>6s}")
        for (step, (_, cpu)), (_, cpu_before) in zip(
            now["steps"].items(), before["steps"].values(), strict=True
        ):
            print(f"  {step:<45s} {cpu_before:10.2f} s {cpu:8.2f} s {cpu_before / cpu:6.1f}x")
    wall_total, cpu_total = total(now)
    if before is not None:
        before_wall, before_cpu = total(before)
        print(
            f"  {'total':<45s} {before_cpu:10.2f} s {cpu_total:8.2f} s "
            f"{before_cpu / cpu_total:6.1f}x   (wall {before_wall:.2f} → {wall_total:.2f} s)"
        )
        print(f"  previous code: load {before['load'][0]} → {before['load'][1]}")
        same = before["digests"] == now["digests"]
        print(
            "results identical to the previous code (replicates, variance, comparisons, "
            f"ranks; bit for bit): {'yes' if same else 'NO: ' + str(before['digests'])}"
        )
    else:
        print(f"  {'total':<45s} {wall_total:8.2f} s {cpu_total:8.2f} s")
    print(
        f"goal (issue 27): ≤ {GOAL_SECONDS:g} s; measured {cpu_total:.2f} s of CPU "
        f"({wall_total:.2f} s wall): {'met' if cpu_total <= GOAL_SECONDS else 'not met'}"
    )
    print(f"load average: {now['load'][0]} at the start, {now['load'][1]} at the end")
    print(
        f"replicate array: {now['replicate_mib']:.0f} MiB; peak RSS: {now['rss'][1]:.0f} MiB "
        f"({now['rss'][0]:.0f} MiB after simulating the data)"
    )
    print(f"check: {now['check']}")


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
    parser.add_argument(
        "--previous",
        metavar="SRC",
        help="the src folder of the previous code (e.g. a checkout's src): run it first, "
        "in a child process, and print its CPU times beside these with the ratio",
    )
    parser.add_argument(
        "--repeats", type=int, default=1, help="runs of each (alternating); the fastest is shown"
    )
    parser.add_argument(
        "--floor",
        action="store_true",
        help="also measure the bootstrap's irreducible parts alone (draws, counts, products)",
    )
    parser.add_argument("--child-json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_json:
        print(json.dumps(run_analysis(args)))
        return
    print(
        f"design: {args.models} models × {args.languages} languages × {args.seeds} seeds × "
        f"{args.examples} examples; B = {args.replicates} per seed; R = {args.draws} draws"
    )
    print(f"load average at the start: {load_average()}")
    runs: list[dict[str, Any]] = []
    before_runs: list[dict[str, Any]] = []
    for _ in range(max(1, args.repeats)):
        if args.previous:
            before_runs.append(previous_run(args, args.previous))
        runs.append(previous_run(args, str(Path(__file__).resolve().parent.parent / "src")))
    fastest = min(runs, key=lambda run: total(run)[1])
    before = min(before_runs, key=lambda run: total(run)[1]) if before_runs else None
    report(fastest, before)
    if args.floor:
        parts = bootstrap_floor(args)
        print(
            "bootstrap floor (each part alone, one BLAS thread): "
            + ", ".join(f"{name} {cpu:.2f} s" for name, cpu in parts.items())
            + f"; together {sum(parts.values()):.2f} s of CPU"
        )
    if args.naive_languages > 0:
        cells = simulate(args.models, args.naive_languages, args.seeds, args.examples, seed=0)
        naive = naive_bootstrap(cells, args.replicates, seed=1)
        start = time.perf_counter()
        replicates_from_statistics(cells, "accuracy", n_replicates=args.replicates)
        ours = time.perf_counter() - start
        print(
            f"naive per-replicate recomputation on {len(cells)} language(s): {naive:.2f} s; "
            f"engine: {ours:.3f} s; ratio {naive / ours:.0f}x"
        )


if __name__ == "__main__":
    main()
