"""Bootstrap confidence intervals and standard errors of any registered metric."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from glotbench.errors import InputError
from glotbench.metrics.base import Metric
from glotbench.metrics.registry import get_metric
from glotbench.resample.engine import (
    ScoreFn,
    as_systems,
    jackknife_scores,
    point_scores,
    replicate_scores,
    resolve_score,
)
from glotbench.resample.intervals import (
    IntervalMethod,
    bca_interval,
    percentile_interval,
    standard_error,
)
from glotbench.resample.result import BootstrapResult
from glotbench.resample.weights import Scheme


def bootstrap(
    stats: npt.ArrayLike,
    score: str | Metric | ScoreFn,
    *,
    n_resamples: int = 10_000,
    confidence_level: float = 0.95,
    method: IntervalMethod = "percentile",
    seed: int = 0,
    scheme: Scheme = "multinomial",
    compress: bool | Literal["auto"] = "auto",
    chunk_size: int | None = None,
    n_jobs: int = 1,
    names: Sequence[str] | None = None,
) -> BootstrapResult:
    """Bootstrap one system's (n × k) or several systems' (m × n × k) statistics.

    Systems are resampled with the same weights (paired); every replicate's
    score is the metric's score of the weighted sums of the statistics.

    Parameters
    ----------
    stats : array_like, shape (n, k) or (m, n, k)
        Per-example sufficient statistics (n examples, k statistics) of one or
        m systems.
    score : str or Metric or callable
        A metric name (``"accuracy"``), a :class:`~glotbench.metrics.Metric`
        or a vectorised function of the summed statistics.
    n_resamples : int, default 10000
        Bootstrap replicates.
    confidence_level : float, default 0.95
        Level of the interval.
    method : {"percentile", "bca"}, default ``"percentile"``
        Interval method (BCa: Efron & Tibshirani 1993, §14.3).
    seed : int, default 0
        Seed of the weights (blocks are seeded, so results do not depend on
        ``chunk_size`` or ``n_jobs``).
    scheme : {"multinomial", "poisson"}, default ``"multinomial"``
        The classical bootstrap, or independent Poisson(1) weights.
    compress : bool or "auto", default ``"auto"``
        Collapse identical statistic rows into counts first (exact; faster for
        binary metrics).
    chunk_size : int, optional
        Replicates per block (default: sized to memory).
    n_jobs : int, default 1
        Worker threads.
    names : sequence of str, optional
        The systems' names.

    Returns
    -------
    BootstrapResult
        ``score``, ``standard_error``, ``confidence_interval`` (``low``,
        ``high``) per system, and the settings.

    Raises
    ------
    InputError
        ``score`` is not a metric or function, the metric's statistic count
        differs from the statistics', or the statistics are not 2- or 3-D.

    See Also
    --------
    bootstrap_metric : From predictions and references.
    paired_bootstrap_test : The difference of two systems, with a p-value.

    Examples
    --------
    Accuracy statistics ``(correct, 1)`` of six examples:

    >>> from glotbench import api
    >>> stats = [[1, 1], [0, 1], [1, 1], [1, 1], [0, 1], [1, 1]]
    >>> result = api.bootstrap(stats, "accuracy", n_resamples=1000)
    >>> round(result.score, 3), round(result.standard_error, 3)
    (0.667, 0.199)
    >>> result.confidence_interval
    ConfidenceInterval(low=0.3333333333333333, high=1.0)
    """
    if not 0.0 < confidence_level < 1.0:
        raise InputError("confidence_level must lie strictly between 0 and 1")
    if method not in ("percentile", "bca"):
        raise InputError(f"unknown interval method {method!r}; use 'percentile' or 'bca'")
    systems = as_systems(stats)
    score = resolve_score(score, systems.shape[2])
    m = systems.shape[0]
    labels = tuple(names) if names is not None else tuple(f"system_{i}" for i in range(m))
    if len(labels) != m:
        raise InputError(f"{len(labels)} names for {m} systems")
    replicates = replicate_scores(
        systems,
        score,
        n_resamples=n_resamples,
        seed=seed,
        scheme=scheme,
        compress=compress,
        chunk_size=chunk_size,
        n_jobs=n_jobs,
    )
    estimates = point_scores(systems, score)
    if method == "bca":
        low, high = bca_interval(
            replicates, estimates, jackknife_scores(systems, score), confidence_level
        )
    else:
        low, high = percentile_interval(replicates, confidence_level)
    return BootstrapResult(
        estimates=estimates,
        replicates=replicates,
        low=np.asarray(low, dtype=np.float64),
        high=np.asarray(high, dtype=np.float64),
        standard_errors=standard_error(replicates),
        confidence_level=confidence_level,
        method=method,
        scheme=scheme,
        n_resamples=n_resamples,
        seed=seed,
        n_examples=systems.shape[1],
        names=labels,
        metric=score.name if isinstance(score, Metric) else None,
    )


def bootstrap_metric(
    metric: str | Metric,
    predictions: Sequence[Any],
    references: Sequence[Any],
    n_resamples: int = 10_000,
    confidence_level: float = 0.95,
    seed: int = 0,
    *,
    method: IntervalMethod = "percentile",
    scheme: Scheme = "multinomial",
) -> BootstrapResult:
    """Score ``predictions`` against ``references`` with a bootstrap CI.

    Metrics that need a label set learn it from the data (``Metric.fit``).

    Parameters
    ----------
    metric : str or Metric
        A registry name (``accuracy``, ``f1_macro``, ``mcc``, ``ner_f1``,
        ``bleu``, ``chrf``, …; :func:`glotbench.api.list_metrics`) or a
        :class:`~glotbench.metrics.Metric`.
    predictions, references : sequence
        One prediction and one reference per example, aligned.
    n_resamples : int, default 10000
        Bootstrap replicates.
    confidence_level : float, default 0.95
        Level of the interval.
    seed : int, default 0
        Seed of the weights.
    method : {"percentile", "bca"}, default ``"percentile"``
        Interval method.
    scheme : {"multinomial", "poisson"}, default ``"multinomial"``
        Resampling weights.

    Returns
    -------
    BootstrapResult
        As :func:`bootstrap` returns it.

    Raises
    ------
    InputError
        ``predictions`` and ``references`` differ in length, or a value the
        metric cannot score.
    UnknownMetricError
        ``metric`` names no registered metric.

    Examples
    --------
    >>> from glotbench import api
    >>> result = api.bootstrap_metric("accuracy", [1, 0, 1, 1], [1, 1, 1, 0], n_resamples=1000)
    >>> result.score, result.confidence_interval.low, result.confidence_interval.high
    (0.5, 0.0, 1.0)
    """
    base = get_metric(metric) if isinstance(metric, str) else metric
    if not isinstance(base, Metric):
        raise InputError(
            "metric must be a metric name (see glotbench.metrics.metric_names()) or a Metric; "
            f"got {type(metric).__name__} {metric!r:.60}"
        )
    bound = base.fit(predictions, references)
    stats = bound.stats(predictions, references)
    return bootstrap(
        stats,
        bound,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        method=method,
        seed=seed,
        scheme=scheme,
        names=(bound.name,),
    )
