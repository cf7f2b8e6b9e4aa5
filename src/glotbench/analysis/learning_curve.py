"""Learning curves: score against training-set size, with intervals (ScandEval Appendix B).

Runs of ``glotbench run`` with ``protocol.train_sizes`` (or ``--train-sizes``)
evaluate every model at several training sizes k on one test set, with the
same seeds at every size. For one model and one test set, let ``F[k, s]`` be
the full-test-set score of the run with size k and seed s (``score(Σᵢ sᵢ)``).

* The curve's point is the mean over seeds, ``ȳ_k = mean_s F[k, s]``.
* Its uncertainty comes from a two-level (hierarchical) bootstrap: draw r
  resamples the test examples (weights ``w_r``, the same for every size and
  seed: :func:`glotbench.resample.replicate_scores`) and the seeds (with
  replacement, the same seed indices for every size), and averages
  ``score(w_r @ S_{k,s})`` over the drawn seeds. ``se`` is the SD of the
  draws (ddof 1) and the interval their percentile interval (Davison & Hinkley
  1997, §3.8 for resampling both levels). ``se_seed = SD_s F[k, s] / √S`` and
  ``se_boot`` (the SD of the test-bootstrap draws of ``ȳ_k``) are the two
  components (Sälevä, Ataman & Lignos 2025, §3).
* Gains are judged by the *paired* difference to the largest size K,
  ``d_k = ȳ_K − ȳ_k``: its SE is the SD of the paired draws
  (:func:`glotbench.analysis.pairs.difference_sd`), ``z = d_k / SE`` and the
  two-sided normal p-value ``2(1 − Φ(|z|))``.

**Rule** (the size beyond which gains are no longer detectable): the smallest
size k such that neither k nor any larger size differs significantly from the
largest size at level α. When every smaller size differs significantly, it is
the largest size itself: gains are still detectable up to the end of the curve.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from glotbench.analysis.pairs import difference_sd
from glotbench.resample.engine import replicate_scores
from glotbench.resample.intervals import (
    mean_standard_error,
    percentile_interval,
    standard_error,
)

CURVE_KEYS = ["model", "dataset", "task", "language", "metric"]


@dataclass
class CurvePoints:
    """One model's curve on one test set: a row per training size."""

    sizes: list[int]
    score: np.ndarray
    se: np.ndarray
    se_seed: np.ndarray
    se_boot: np.ndarray
    low: np.ndarray
    high: np.ndarray
    difference: np.ndarray
    difference_se: np.ndarray
    p_value: np.ndarray
    significant: np.ndarray
    saturation: int


def saturation_size(sizes: Sequence[int], significant: Sequence[bool]) -> int:
    """The smallest size from which on no size differs significantly from the largest."""
    out = sizes[-1]
    for size, sig in zip(reversed(sizes[:-1]), reversed(list(significant[:-1])), strict=True):
        if sig:
            break
        out = size
    return int(out)


def curve_points(
    sizes: Sequence[int],
    stats: np.ndarray,
    metric: Any,
    *,
    n_draws: int = 2000,
    seed: int = 0,
    alpha: float = 0.05,
    confidence_level: float = 0.95,
) -> CurvePoints:
    """A curve from ``stats`` of shape (sizes × seeds × examples × statistics).

    Examples are aligned (the same test set at every size); see the module docstring.
    """
    from scipy.stats import norm

    n_sizes, n_seeds, n, k = stats.shape
    full = np.asarray(metric.score(stats.sum(axis=2).reshape(-1, k)), dtype=float)
    full = full.reshape(n_sizes, n_seeds)
    score = full.mean(axis=1)
    boot = replicate_scores(
        stats.reshape(n_sizes * n_seeds, n, k), metric, n_resamples=n_draws, seed=seed
    ).reshape(n_draws, n_sizes, n_seeds)
    if n_seeds > 1:
        rng = np.random.default_rng([seed, 7])
        picks = rng.integers(0, n_seeds, (n_draws, n_seeds))
        draws = np.take_along_axis(boot, picks[:, None, :].repeat(n_sizes, axis=1), axis=2)
        draws = draws.mean(axis=2)
        se_seed = mean_standard_error(full, axis=1)
    else:
        draws = boot[:, :, 0]
        se_seed = np.full(n_sizes, np.nan)
    se_boot = boot.mean(axis=2).std(axis=0, ddof=1)
    se = standard_error(draws)
    low, high = percentile_interval(draws, confidence_level)
    last = np.full(n_sizes, n_sizes - 1)
    diff = score[-1] - score
    diff_se = difference_sd(draws, last, np.arange(n_sizes))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(diff_se > 0, np.abs(diff) / diff_se, np.where(diff != 0, np.inf, 0.0))
    p = 2 * norm.sf(z)
    p[-1] = 1.0
    significant = p < alpha
    return CurvePoints(
        sizes=[int(s) for s in sizes],
        score=score,
        se=se,
        se_seed=se_seed,
        se_boot=se_boot,
        low=low,
        high=high,
        difference=diff,
        difference_se=diff_se,
        p_value=p,
        significant=significant,
        saturation=saturation_size(list(sizes), list(significant)),
    )


@dataclass
class LearningCurves:
    """Learning curves of the models in a store.

    Built by
    :func:`glotbench.analysis.sources.learning_curve_store.learning_curves_from_store`.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per model, test set and training size: score and interval.
    saturation : pandas.DataFrame
        Per model and test set, the size beyond which gains are no longer
        detectable at ``alpha``.
    alpha : float
        Level of the gain tests.
    confidence_level : float
        Level of the intervals.
    n_draws : int
        Bootstrap draws per point.
    seed : int
        Seed of the draws.
    notes : list of str
        What the reader should know.
    """

    table: pd.DataFrame
    saturation: pd.DataFrame
    alpha: float
    confidence_level: float
    n_draws: int
    seed: int
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The curve table, saturation sizes and notes as a JSON-safe dict."""

        def rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
            clean = frame.astype(object).where(frame.notna(), None)
            return clean.to_dict(orient="records")

        return {
            "curves": rows(self.table),
            "saturation": rows(self.saturation),
            "alpha": self.alpha,
            "confidence_level": self.confidence_level,
            "n_draws": self.n_draws,
            "seed": self.seed,
            "rule": "saturation: the smallest training size from which on no size differs "
            "significantly (paired, two-sided, level alpha) from the largest size",
            "notes": list(self.notes),
        }

    def plot(self, path: str | Path) -> Path:
        """Score vs training size (log scale) per model, one panel per test set and metric."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        panels = self.table.groupby(["dataset", "task", "language", "metric"], sort=True)
        fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 3.8), squeeze=False)
        for ax, (key, frame) in zip(axes[0], panels, strict=True):
            for model, rows in frame.groupby("model", sort=True):
                line = ax.plot(rows["train_size"], rows["score"], marker="o", label=model)[0]
                ax.fill_between(
                    rows["train_size"], rows["low"], rows["high"], alpha=0.2, color=line.get_color()
                )
                sat = self.saturation[
                    (self.saturation["model"] == model)
                    & (self.saturation["dataset"] == key[0])
                    & (self.saturation["language"] == key[2])
                    & (self.saturation["metric"] == key[3])
                ]
                for size in sat["saturation_size"]:
                    ax.axvline(size, color=line.get_color(), linestyle=":", linewidth=1)
            ax.set_xscale("log", base=2)
            ticks = sorted(frame["train_size"].unique())
            ax.set_xticks(ticks, [str(t) for t in ticks])
            ax.minorticks_off()
            ax.set_xlabel("training examples")
            ax.set_ylabel(key[3])
            ax.set_title(f"{key[0]} ({key[2]})")
            ax.legend(fontsize=8, title="dotted: no detectable gain beyond", title_fontsize=7)
        fig.tight_layout()
        out = Path(path)
        fig.savefig(out, dpi=120)
        plt.close(fig)
        return out
