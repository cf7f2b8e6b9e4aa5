"""ScandEval's score of a replicated evaluation: the mean over iterations ± 1.96·SD/√N.

Nielsen (2023, "ScandEval: A Benchmark for Scandinavian Natural Language
Processing", NoDaLiDa, §4) evaluates every model in N iterations. Iteration
``i`` is scored on a bootstrap of the test set drawn from its seed,
``score_i = score(w_i @ S_i)`` (:func:`iteration_score`, with ``w_i`` the
resample counts of :func:`bootstrap_test_counts`), and the result is the mean
of the ``score_i`` with the half-width of a 95 % normal interval,
``1.96 · SD(score_i, ddof = 1) / √N`` (:func:`mean_and_half_width`; ScandEval's
and EuroEval's ``aggregate_scores``). The same summary is ScandEval's speed
benchmark over its iterations' tokens per second, and EuroEval reports it
(the ``*_se`` fields hold the half-width), so an SD is recovered from a
printed half-width as ``h · √N / 1.96`` (:func:`sd_from_half_width`).

Used by the runner (``glotbench run``'s ScandEval scores), the importers and
reproductions of EuroEval results, and the analysis of inference speed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

#: ScandEval's multiplier of the standard error: the 97.5 % normal quantile, rounded
CI_MULTIPLIER = 1.96


def bootstrap_test_counts(seed: int, n: int) -> npt.NDArray[np.float64]:
    """Resample counts of the bootstrapped test set of the iteration with ``seed``.

    ``n`` draws with replacement from ``n`` examples (NumPy's generator seeded
    with ``[seed, 2]``), as counts per example: ``counts @ S`` sums the
    statistics of the bootstrapped test set.
    """
    idx = np.random.default_rng([seed, 2]).integers(0, n, n)
    return np.bincount(idx, minlength=n).astype(np.float64)


def iteration_score(metric: Any, stats: npt.NDArray[np.float64], seed: int) -> float:
    """``score(w @ S)``: the score of one iteration on its bootstrapped test set.

    ``metric`` has ``score`` (a :class:`glotbench.metrics.base.Metric`);
    ``stats`` is the iteration's per-example statistics (n × k).
    """
    weights = bootstrap_test_counts(seed, stats.shape[0])
    return float(metric.score(weights @ stats))


def mean_and_half_width(values: Sequence[float] | npt.ArrayLike) -> tuple[float, float]:
    """ScandEval's aggregate: the mean and ``1.96 · SD(ddof = 1) / √N`` of ``values``.

    The half-width is NaN for fewer than two values (no SD); both are NaN for
    none.
    """
    arr = np.asarray(values, dtype=np.float64)
    if arr.size == 0:
        return float("nan"), float("nan")
    half = float(CI_MULTIPLIER * arr.std(ddof=1) / np.sqrt(arr.size)) if arr.size > 1 else np.nan
    return float(arr.mean()), float(half)


def sd_from_half_width(half: Any, n: Any) -> Any:
    """The SD behind a ScandEval half-width ``h`` over ``n`` iterations: ``h · √n / 1.96``."""
    return half * np.sqrt(n) / CI_MULTIPLIER
