"""Learning curves of the runs in a store: each model's runs per training size and seed.

Collects, per model and test set, the stored runs of ``glotbench run`` with
``protocol.train_sizes`` at every size and the seeds stored at every size,
aligns their per-example statistics on one test set, and hands them to
:func:`glotbench.analysis.learning_curve.curve_points` (whose module docstring
has the estimator and the rule).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from glotbench.analysis.learning_curve import CURVE_KEYS, CurvePoints, LearningCurves, curve_points
from glotbench.errors import InputError

if TYPE_CHECKING:
    from glotbench.store.store import Store


def _train_size(metadata: dict[str, Any]) -> int | None:
    size = metadata.get("train_size")
    if size is None:
        size = (metadata.get("dataset_sizes") or {}).get("train")
    return None if size is None else int(size)


def _primary(runs: pd.DataFrame) -> str:
    primaries = {m.get("primary_metric") for m in runs["model_metadata"]} - {None}
    if len(primaries) == 1:
        return str(primaries.pop())
    metrics = sorted(runs["metric"].unique())
    if len(metrics) == 1:
        return str(metrics[0])
    raise InputError(
        f"the runs hold several metrics ({', '.join(metrics)}); choose one with metric=METRIC",
        field="metric",
    )


def _aligned_stats(
    store: Store, group: pd.DataFrame, sizes: list[int], seeds: list[Any], label: str
) -> np.ndarray:
    """Statistics (sizes × seeds × examples × k) of the runs of one curve, every run's
    examples in the order of the first run's."""
    run_ids = [
        [
            str(group.loc[(group["train_size"] == s) & (group["seed"] == sd), "run_id"].iloc[0])
            for sd in seeds
        ]
        for s in sizes
    ]
    loaded = store.stats.of_runs([r for per in run_ids for r in per])
    first_ids = loaded[run_ids[0][0]][0]
    order = {str(e): i for i, e in enumerate(first_ids)}
    blocks = []
    for per in run_ids:
        per_size = []
        for rid in per:
            ids, stats = loaded[rid]
            if len(ids) != len(order) or set(map(str, ids)) != set(order):
                raise InputError(
                    f"{label}: the runs of different training sizes are not on the same "
                    "test examples; a learning curve needs one test set"
                )
            idx = np.array([order[str(e)] for e in ids])
            aligned = np.empty_like(stats)
            aligned[idx] = stats
            per_size.append(aligned)
        blocks.append(per_size)
    return np.asarray(blocks, dtype=np.float64)


def _curve_rows(
    base: dict[str, Any], sizes: list[int], n_seeds: int, n_examples: int, points: CurvePoints
) -> list[dict[str, Any]]:
    """One row per training size of a curve."""
    return [
        {
            **base,
            "train_size": size,
            "n_seeds": n_seeds,
            "n_examples": n_examples,
            "score": float(points.score[i]),
            "se": float(points.se[i]),
            "se_seed": float(points.se_seed[i]),
            "se_boot": float(points.se_boot[i]),
            "low": float(points.low[i]),
            "high": float(points.high[i]),
            "gain_to_largest": float(points.difference[i]),
            "gain_se": float(points.difference_se[i]),
            "p_value": float(points.p_value[i]),
            "significant": bool(points.significant[i]),
        }
        for i, size in enumerate(sizes)
    ]


def learning_curves_from_store(
    store: Store,
    *,
    models: Sequence[str] | None = None,
    datasets: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
    metric: str | None = None,
    n_draws: int = 2000,
    seed: int = 0,
    alpha: float = 0.05,
    confidence_level: float = 0.95,
) -> LearningCurves:
    """Learning curves of the stored runs: score vs training size per model and test set.

    A run's training size is its ``train_size`` (runs of ``protocol.train_sizes``),
    else the size of its training split. Curves need at least two sizes; a
    model's seeds are those stored at every size (others are left out, with a note).
    """
    if not 0 < alpha < 1 or not 0 < confidence_level < 1:
        raise InputError("alpha and the confidence level must lie in (0, 1)")
    if n_draws < 2:
        raise InputError("the number of draws must be at least 2", field="draws")
    from glotbench.metrics import get_metric

    runs = store.runs.frame(models=models, datasets=datasets, tasks=tasks, languages=languages)
    if runs.empty:
        raise InputError("no stored run matches the filters")
    chosen = metric or _primary(runs)
    runs = runs[runs["metric"] == chosen].copy()
    if runs.empty:
        raise InputError(f"no stored run has the metric {chosen!r}", field="metric")
    runs["train_size"] = [_train_size(m) for m in runs["model_metadata"]]
    notes: list[str] = []
    rows: list[dict[str, Any]] = []
    saturation: list[dict[str, Any]] = []
    for key, group in runs.groupby(CURVE_KEYS, sort=True):
        group = group.dropna(subset=["train_size"])
        if "created_at" in group:  # several configurations at one size and seed: the latest
            group = group.sort_values("created_at", ascending=False, kind="stable")
        if group.duplicated(["train_size", "seed"]).any():
            notes.append(
                f"{key[0]} on {key[1]} ({key[3]}): several runs at one training size and seed "
                "(other model or dataset configurations); the latest is used"
            )
        sizes = sorted(int(s) for s in group["train_size"].unique())
        label = f"{key[0]} on {key[1]} ({key[3]})"
        if len(sizes) < 2:
            notes.append(f"{label}: one training size only; no curve")
            continue
        seed_sets = [set(group.loc[group["train_size"] == s, "seed"]) for s in sizes]
        seeds = sorted(set.intersection(*seed_sets))
        if not seeds:
            notes.append(f"{label}: no seed is stored at every training size; no curve")
            continue
        if any(len(s) > len(seeds) for s in seed_sets):
            notes.append(f"{label}: seeds stored at only some sizes are left out")
        stats = _aligned_stats(store, group, sizes, seeds, label)
        first = group.iloc[0]
        metric_obj = get_metric(chosen, **first["metric_config"])
        points = curve_points(
            sizes,
            stats,
            metric_obj,
            n_draws=n_draws,
            seed=seed,
            alpha=alpha,
            confidence_level=confidence_level,
        )
        base = dict(zip(CURVE_KEYS, key, strict=True))
        rows += _curve_rows(base, sizes, len(seeds), stats.shape[2], points)
        saturation.append({**base, "largest": sizes[-1], "saturation_size": points.saturation})
    if not rows:
        raise InputError(
            "no learning curve: no model has runs at two or more training sizes on one test "
            "set (run a suite with protocol.train_sizes, or with train_sizes=SIZES)"
        )
    return LearningCurves(
        table=pd.DataFrame(rows),
        saturation=pd.DataFrame(saturation),
        alpha=alpha,
        confidence_level=confidence_level,
        n_draws=n_draws,
        seed=seed,
        notes=notes,
    )
