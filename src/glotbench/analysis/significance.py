"""Significance tests for paired systems on per-example statistics.

Both systems' per-example sufficient statistics S_A, S_B (n × k) are scored
with the metric's vectorised ``score`` on *summed* statistics, so every test
works for any registered metric (accuracy, F1, BLEU, LAS, …) and no metric is
recomputed from text inside a resampling loop.

* :func:`paired_bootstrap_test` — the paired bootstrap (Efron & Tibshirani
  1993, §16.4; Koehn 2004; Berg-Kirkpatrick et al. 2012). Replicate r scores
  ``w_r @ S_A`` and ``w_r @ S_B`` with the *same* multinomial weights
  (glotbench's engine, :func:`glotbench.resample.replicate_scores`);
  δ*_r = score(w_r S_A) − score(w_r S_B). The two-sided p-value tests H0: δ = 0
  with the bootstrap distribution shifted to the null (as sacrebleu's paired
  bootstrap), with the +1 correction (Davison & Hinkley 1997, eq. 4.11):
  ``p = (1 + #{|δ*_r − mean(δ*)| ≥ |δ̂|}) / (B + 1)``; the CI of δ is the
  percentile interval of δ*.
* :func:`permutation_test` — paired approximate randomisation (Noreen 1989;
  Riezler & Maxwell 2005). Each replicate swaps the two systems' outputs of
  every example independently with probability ½: with D = S_B − S_A and a 0/1
  swap vector s, the swapped sums are ``ΣS_A + s·D`` and ``ΣS_B − s·D`` — one
  matrix product for all replicates. ``p = (1 + #{|δ*_r| ≥ |δ̂|}) / (B + 1)``
  (Phipson & Smyth 2010). Examples with identical statistics (D = 0) cannot
  change a swapped score and are dropped; identical rows of D are merged
  exactly (the number of swapped copies of a row shared by c examples is
  Binomial(c, ½)).
* :func:`mcnemar_test` — McNemar (1947) for paired binary outcomes: with b
  the examples only A got right and c those only B got right, the exact test is
  the two-sided binomial test of b ~ Bin(b + c, ½), the asymptotic one
  χ² = (|b − c| − 1)² / (b + c) with continuity correction (Edwards 1948), or
  (b − c)²/(b + c) without; as ``statsmodels.stats.contingency_tables.mcnemar``.
* :func:`adjust_p_values` — Bonferroni, Holm (1979) and Benjamini–Hochberg
  (1995) adjustments, as ``statsmodels.stats.multitest.multipletests``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from glotbench.errors import InputError
from glotbench.metrics.base import Metric
from glotbench.resample.engine import (
    ScoreFn,
    as_score_fn,
    as_systems,
    replicate_scores,
    resolve_score,
)
from glotbench.resample.intervals import percentile_interval
from glotbench.resample.weights import BLOCK, block_rng

FloatArray = npt.NDArray[np.float64]
#: stream tag of permutation swaps in :func:`glotbench.resample.weights.block_rng`
_PERMUTATION_STREAM = 2
CorrectionMethod = Literal["bonferroni", "holm", "fdr_bh"]


def _json(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


@dataclass(frozen=True)
class PairedTestResult:
    """Outcome of a paired test of A against B on one test set.

    Attributes
    ----------
    test : str
        ``bootstrap`` or ``permutation``.
    metric : str or None
        The metric's name, when known.
    score_a, score_b : float
        Full-test-set scores of A and B.
    difference : float
        score(A) − score(B).
    p_value : float
        Two-sided p-value for H0: no difference.
    ci_low, ci_high : float
        The percentile interval of the difference (NaN for the permutation
        test); also ``confidence_interval``.
    confidence_level : float
        Its level (NaN for the permutation test).
    n_resamples : int
        Replicates.
    seed : int
        Seed of the replicates.
    n_examples : int
        Examples in the test set.
    names : tuple of str
        The systems' names.
    replicates : numpy.ndarray
        The replicate differences the p-value was computed from (centred
        bootstrap differences, or randomised differences); not in the repr.
    """

    test: str
    metric: str | None
    score_a: float
    score_b: float
    difference: float
    p_value: float
    ci_low: float
    ci_high: float
    confidence_level: float
    n_resamples: int
    seed: int
    n_examples: int
    names: tuple[str, str]
    replicates: FloatArray = field(repr=False)

    @property
    def confidence_interval(self) -> tuple[float, float]:
        """CI of the difference (percentile bootstrap; NaN for the permutation test)."""
        return (self.ci_low, self.ci_high)

    def to_frame(self) -> pd.DataFrame:
        """One tidy row."""
        row = self.to_dict()
        row.pop("confidence_interval")
        row["ci_low"], row["ci_high"] = self.ci_low, self.ci_high
        return pd.DataFrame([row])

    def to_dict(self) -> dict[str, Any]:
        """JSON form (NaN becomes null)."""
        return {
            "test": self.test,
            "metric": self.metric,
            "system_a": self.names[0],
            "system_b": self.names[1],
            "score_a": _json(self.score_a),
            "score_b": _json(self.score_b),
            "difference": _json(self.difference),
            "p_value": _json(self.p_value),
            "confidence_interval": [_json(self.ci_low), _json(self.ci_high)],
            "confidence_level": _json(self.confidence_level),
            "n_resamples": self.n_resamples,
            "seed": self.seed,
            "n_examples": self.n_examples,
        }


def _pair(stats_a: npt.ArrayLike, stats_b: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    a = as_systems(stats_a)
    b = as_systems(stats_b)
    if a.shape[0] != 1 or b.shape[0] != 1:
        raise InputError("give one system's (n × k) statistics for A and one for B")
    if a.shape != b.shape:
        raise InputError(
            f"A has statistics of shape {a.shape[1:]} but B {b.shape[1:]}; a paired test needs "
            "the same examples, in the same order, scored with the same metric"
        )
    if a.shape[1] == 0:
        raise InputError("no examples to test")
    return a[0], b[0]


def two_sided_p_value(null: FloatArray, observed: float) -> float:
    """``(1 + #{|null_r| ≥ |observed|}) / (B + 1)`` (Phipson & Smyth 2010).

    A relative tolerance of 1e-12 counts replicates that equal the observed
    value up to rounding, as scipy's ``permutation_test`` does.
    """
    tol = 1e-12 * max(abs(observed), 1e-300)
    extreme = np.count_nonzero(np.abs(null) >= abs(observed) - tol)
    return float((1 + extreme) / (null.size + 1))


def paired_bootstrap_test(
    stats_a: npt.ArrayLike,
    stats_b: npt.ArrayLike,
    score: str | Metric | ScoreFn,
    *,
    n_resamples: int = 10_000,
    confidence_level: float = 0.95,
    seed: int = 0,
    names: tuple[str, str] = ("A", "B"),
    chunk_size: int | None = None,
) -> PairedTestResult:
    """Paired bootstrap test and CI of score(A) − score(B), for any metric.

    Replicates come from :func:`glotbench.resample.replicate_scores` on the
    stacked (2 × n × k) statistics, so both systems share every weight row
    (paired) and results do not depend on ``chunk_size``. Formulas: see the
    module docstring (Efron & Tibshirani 1993 §16.4; Koehn 2004).

    Parameters
    ----------
    stats_a, stats_b : array_like, shape (n, k)
        Per-example statistics of the same examples.
    score : str or Metric or callable
        A metric name, a :class:`~glotbench.metrics.Metric` or a vectorised
        function of summed statistics.
    n_resamples : int, default 10000
        Bootstrap replicates.
    confidence_level : float, default 0.95
        Level of the percentile interval of the difference.
    seed : int, default 0
        Seed of the weights.
    names : tuple of str, default ("A", "B")
        The systems' names.
    chunk_size : int, optional
        Replicates per block.

    Returns
    -------
    PairedTestResult
        ``difference``, two-sided ``p_value`` (centred replicates), ``ci_low``,
        ``ci_high`` and the ``replicates``.

    Raises
    ------
    InputError
        Statistics of different shapes, or an unknown metric.

    See Also
    --------
    permutation_test : The approximate randomisation test.
    adjust_p_values : Correct the p-values of several comparisons.

    Examples
    --------
    >>> from glotbench import api
    >>> a = [[1, 1], [1, 1], [0, 1], [1, 1], [1, 1], [0, 1]]
    >>> b = [[1, 1], [0, 1], [0, 1], [1, 1], [0, 1], [0, 1]]
    >>> result = api.paired_bootstrap_test(a, b, "accuracy", n_resamples=1000)
    >>> round(result.difference, 3), round(result.p_value, 2)
    (0.333, 0.12)
    """
    if not 0.0 < confidence_level < 1.0:
        raise InputError("confidence_level must lie strictly between 0 and 1")
    a, b = _pair(stats_a, stats_b)
    score = resolve_score(score, a.shape[1])
    score_fn = as_score_fn(score)
    both = np.stack([a, b])
    full = np.asarray(score_fn(both.sum(axis=1)), dtype=np.float64)
    observed = float(full[0] - full[1])
    reps = replicate_scores(
        both, score_fn, n_resamples=n_resamples, seed=seed, chunk_size=chunk_size
    )
    deltas = reps[:, 0] - reps[:, 1]
    low, high = percentile_interval(deltas, confidence_level)
    centred = deltas - deltas.mean()
    return PairedTestResult(
        test="paired_bootstrap",
        metric=score.name if isinstance(score, Metric) else None,
        score_a=float(full[0]),
        score_b=float(full[1]),
        difference=observed,
        p_value=two_sided_p_value(centred, observed),
        ci_low=float(low),
        ci_high=float(high),
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        seed=seed,
        n_examples=a.shape[0],
        names=names,
        replicates=deltas,
    )


def _swap_support(diff: FloatArray) -> tuple[FloatArray, npt.NDArray[np.int64]]:
    """Distinct non-zero rows of D and how many examples share each."""
    nonzero = diff[np.any(diff != 0, axis=1)]
    if nonzero.shape[0] == 0:
        return nonzero, np.zeros(0, dtype=np.int64)
    rows, counts = np.unique(nonzero, axis=0, return_counts=True)
    if rows.shape[0] * 4 > nonzero.shape[0]:  # little to gain: keep one row per example
        return nonzero, np.ones(nonzero.shape[0], dtype=np.int64)
    return rows, counts.astype(np.int64)


def permutation_test(
    stats_a: npt.ArrayLike,
    stats_b: npt.ArrayLike,
    score: str | Metric | ScoreFn,
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
    names: tuple[str, str] = ("A", "B"),
) -> PairedTestResult:
    """Paired approximate randomisation test of score(A) − score(B), for any metric.

    Each replicate swaps A's and B's statistics of every example with
    probability ½ (Noreen 1989; Riezler & Maxwell 2005); the swapped sums are
    ``ΣS_A + s·(S_B − S_A)`` and ``ΣS_B − s·(S_B − S_A)`` for a whole block of
    swap vectors at once (one matrix product). Two-sided p-value with the +1
    correction (Phipson & Smyth 2010). Swap vectors come from seeded blocks
    (``block_rng(seed, block, 2)``), so results do not depend on chunking.

    Parameters
    ----------
    stats_a, stats_b : array_like, shape (n, k)
        Per-example statistics of the same examples.
    score : str or Metric or callable
        A metric name, a :class:`~glotbench.metrics.Metric` or a vectorised
        function of summed statistics.
    n_resamples : int, default 10000
        Randomisations.
    seed : int, default 0
        Seed of the swaps.
    names : tuple of str, default ("A", "B")
        The systems' names.

    Returns
    -------
    PairedTestResult
        ``difference`` and two-sided ``p_value`` (no interval: ``ci_low`` and
        ``ci_high`` are NaN).

    Raises
    ------
    InputError
        Statistics of different shapes, or an unknown metric.

    See Also
    --------
    paired_bootstrap_test : With a confidence interval of the difference.

    Examples
    --------
    >>> from glotbench import api
    >>> a = [[1, 1], [1, 1], [0, 1], [1, 1], [1, 1], [0, 1]]
    >>> b = [[1, 1], [0, 1], [0, 1], [1, 1], [0, 1], [0, 1]]
    >>> result = api.permutation_test(a, b, "accuracy", n_resamples=1000)
    >>> round(result.difference, 3), round(result.p_value, 2)
    (0.333, 0.48)
    """
    if n_resamples < 1:
        raise InputError("n_resamples must be at least 1")
    a, b = _pair(stats_a, stats_b)
    score = resolve_score(score, a.shape[1])
    score_fn = as_score_fn(score)
    total_a, total_b = a.sum(axis=0), b.sum(axis=0)
    full = np.asarray(score_fn(np.stack([total_a, total_b])), dtype=np.float64)
    observed = float(full[0] - full[1])
    rows, counts = _swap_support(b - a)
    merged = bool(np.any(counts > 1))
    null = np.empty(n_resamples, dtype=np.float64)
    for start in range(0, n_resamples, BLOCK):
        size = min(BLOCK, n_resamples - start)
        rng = block_rng(seed, start // BLOCK, _PERMUTATION_STREAM)
        if rows.shape[0] == 0:
            shift = np.zeros((size, a.shape[1]))
        else:
            if merged:
                swaps = rng.binomial(counts, 0.5, size=(size, counts.size)).astype(np.float64)
            else:  # one example per row: a fair coin each
                swaps = rng.integers(0, 2, size=(size, counts.size), dtype=np.int8).astype(
                    np.float64
                )
            shift = swaps @ rows
        swapped = np.stack([total_a + shift, total_b - shift], axis=1)  # (size, 2, k)
        scores = np.asarray(score_fn(swapped), dtype=np.float64)
        null[start : start + size] = scores[:, 0] - scores[:, 1]
    return PairedTestResult(
        test="permutation",
        metric=score.name if isinstance(score, Metric) else None,
        score_a=float(full[0]),
        score_b=float(full[1]),
        difference=observed,
        p_value=two_sided_p_value(null, observed),
        ci_low=float("nan"),
        ci_high=float("nan"),
        confidence_level=float("nan"),
        n_resamples=n_resamples,
        seed=seed,
        n_examples=a.shape[0],
        names=names,
        replicates=null,
    )


@dataclass(frozen=True)
class McNemarResult:
    """McNemar's test of paired binary outcomes (1 = correct).

    Attributes
    ----------
    statistic : float
        min(b, c) for the exact test, else the χ² statistic.
    p_value : float
        Two-sided p-value.
    exact : bool
        Whether the exact binomial test was used.
    correction : bool
        Whether χ² was continuity-corrected.
    only_a_correct, only_b_correct : int
        b and c: examples only A (B) got right.
    both_correct, both_wrong : int
        The concordant counts.
    names : tuple of str
        The systems' names.
    """

    statistic: float
    p_value: float
    exact: bool
    correction: bool
    only_a_correct: int
    only_b_correct: int
    both_correct: int
    both_wrong: int
    names: tuple[str, str]

    @property
    def n_examples(self) -> int:
        """Number of paired outcomes."""
        return self.only_a_correct + self.only_b_correct + self.both_correct + self.both_wrong

    def to_frame(self) -> pd.DataFrame:
        """One tidy row."""
        return pd.DataFrame([self.to_dict()])

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "test": "mcnemar",
            "system_a": self.names[0],
            "system_b": self.names[1],
            "statistic": _json(self.statistic),
            "p_value": _json(self.p_value),
            "exact": self.exact,
            "correction": self.correction,
            "only_a_correct": self.only_a_correct,
            "only_b_correct": self.only_b_correct,
            "both_correct": self.both_correct,
            "both_wrong": self.both_wrong,
            "n_examples": self.n_examples,
        }


def _binary(values: npt.ArrayLike, what: str) -> npt.NDArray[np.bool_]:
    arr = np.asarray(values)
    if arr.ndim == 2 and arr.shape[1] == 2:  # mean-metric statistics (value, count)
        if not np.all(arr[:, 1] == 1):
            raise InputError(f"{what}: statistics must be per-example (value, 1) rows")
        arr = arr[:, 0]
    arr = np.asarray(arr, dtype=np.float64).reshape(-1)
    if not np.isin(arr, (0.0, 1.0)).all():
        raise InputError(f"{what}: McNemar's test needs binary outcomes (0 or 1 per example)")
    return arr.astype(bool)


def mcnemar_test(
    correct_a: npt.ArrayLike,
    correct_b: npt.ArrayLike,
    *,
    exact: bool | None = None,
    correction: bool = True,
    names: tuple[str, str] = ("A", "B"),
) -> McNemarResult:
    """McNemar's test (McNemar 1947) on per-example correctness of A and B.

    With b = #(A right, B wrong) and c = #(A wrong, B right): exact:
    statistic min(b, c), p = two-sided binomial test of b ~ Bin(b + c, ½);
    otherwise χ² = (|b − c| − 1)²/(b + c) (``correction``, Edwards 1948) or
    (b − c)²/(b + c), p from χ²(1). Matches
    ``statsmodels.stats.contingency_tables.mcnemar``.

    Parameters
    ----------
    correct_a, correct_b : array_like
        0/1 per example (or accuracy statistics ``(correct, 1)``).
    exact : bool, optional
        Binomial test (True), χ² (False), or exact when b + c < 25 (None).
    correction : bool, default True
        Edwards' continuity correction of χ².
    names : tuple of str, default ("A", "B")
        The systems' names.

    Returns
    -------
    McNemarResult
        ``statistic``, ``p_value``, ``exact`` and the four cell counts.

    Raises
    ------
    InputError
        Outcomes of different lengths, or values other than 0 and 1.

    Examples
    --------
    >>> from glotbench import api
    >>> result = api.mcnemar_test([1, 1, 0, 1, 1, 1, 0, 1], [0, 1, 0, 0, 1, 0, 0, 1])
    >>> result.only_a_correct, result.only_b_correct, result.p_value
    (3, 0, 0.25)
    """
    from scipy import stats as sps

    a = _binary(correct_a, "A")
    b = _binary(correct_b, "B")
    if a.size != b.size:
        raise InputError(f"A has {a.size} outcomes but B has {b.size}; pair them per example")
    if a.size == 0:
        raise InputError("no examples to test")
    only_a = int(np.count_nonzero(a & ~b))
    only_b = int(np.count_nonzero(~a & b))
    discordant = only_a + only_b
    use_exact = discordant < 25 if exact is None else bool(exact)
    if use_exact:
        statistic = float(min(only_a, only_b))
        p = 1.0 if discordant == 0 else float(sps.binomtest(only_a, discordant, 0.5).pvalue)
    elif discordant == 0:
        statistic, p = float("nan"), float("nan")
    else:
        gap = abs(only_a - only_b) - (1.0 if correction else 0.0)
        statistic = gap * gap / discordant
        p = float(sps.chi2.sf(statistic, 1))
    return McNemarResult(
        statistic=statistic,
        p_value=min(1.0, p),
        exact=use_exact,
        correction=correction,
        only_a_correct=only_a,
        only_b_correct=only_b,
        both_correct=int(np.count_nonzero(a & b)),
        both_wrong=int(np.count_nonzero(~a & ~b)),
        names=names,
    )


@dataclass(frozen=True)
class AdjustedPValues:
    """p-values adjusted for multiple comparisons, and the rejections at ``alpha``.

    Attributes
    ----------
    method : str
        ``bonferroni``, ``holm`` or ``fdr_bh``.
    alpha : float
        The level of the rejections.
    p_values : numpy.ndarray
        The unadjusted p-values, in input order.
    adjusted : numpy.ndarray
        The adjusted p-values.
    reject : numpy.ndarray of bool
        Whether each hypothesis is rejected (adjusted p ≤ ``alpha``).
    labels : tuple of str
        The hypotheses' names.
    """

    method: str
    alpha: float
    p_values: FloatArray
    adjusted: FloatArray
    reject: npt.NDArray[np.bool_]
    labels: tuple[str, ...]

    def to_frame(self) -> pd.DataFrame:
        """One row per hypothesis."""
        return pd.DataFrame(
            {
                "hypothesis": list(self.labels),
                "p_value": self.p_values,
                "adjusted_p_value": self.adjusted,
                "reject": self.reject,
            }
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "method": self.method,
            "alpha": self.alpha,
            "hypotheses": [
                {
                    "hypothesis": h,
                    "p_value": float(p),
                    "adjusted_p_value": float(q),
                    "reject": bool(r),
                }
                for h, p, q, r in zip(
                    self.labels, self.p_values, self.adjusted, self.reject, strict=True
                )
            ],
        }


_METHOD_ALIASES = {
    "bonferroni": "bonferroni",
    "holm": "holm",
    "fdr_bh": "fdr_bh",
    "bh": "fdr_bh",
    "benjamini-hochberg": "fdr_bh",
    "benjamini_hochberg": "fdr_bh",
}


def adjust_p_values(
    p_values: npt.ArrayLike,
    method: str = "holm",
    alpha: float = 0.05,
    labels: Sequence[str] | None = None,
) -> AdjustedPValues:
    """Adjust p-values for m comparisons (as ``statsmodels`` ``multipletests``).

    * Bonferroni: ``min(1, m p_i)``;
    * Holm (1979), step-down: with p sorted ascending,
      ``p̃_(i) = max_{j ≤ i} min(1, (m − j + 1) p_(j))``;
    * Benjamini & Hochberg (1995), step-up false discovery rate:
      ``p̃_(i) = min_{j ≥ i} min(1, m p_(j) / j)``.

    A hypothesis is rejected when its adjusted p-value is ≤ ``alpha``.

    Parameters
    ----------
    p_values : array_like
        The m unadjusted p-values.
    method : {"holm", "bonferroni", "fdr_bh"}, default ``"holm"``
        The correction (``bh`` is an alias of ``fdr_bh``).
    alpha : float, default 0.05
        The level of the rejections.
    labels : sequence of str, optional
        Names of the hypotheses (default ``H0``, ``H1``, …).

    Returns
    -------
    AdjustedPValues
        ``adjusted`` p-values and ``reject`` flags, in the input's order.

    Raises
    ------
    InputError
        An unknown method, or p-values outside [0, 1].

    Examples
    --------
    >>> from glotbench import api
    >>> result = api.adjust_p_values([0.01, 0.04, 0.03, 0.2], method="holm")
    >>> result.adjusted.tolist(), result.reject.tolist()
    ([0.04, 0.09, 0.09, 0.2], [True, False, False, False])
    """
    key = _METHOD_ALIASES.get(method.strip().lower())
    if key is None:
        raise InputError(f"unknown correction {method!r}; use bonferroni, holm or fdr_bh")
    p = np.asarray(p_values, dtype=np.float64).reshape(-1)
    if p.size == 0:
        raise InputError("no p-values to adjust")
    if not np.all((p >= 0) & (p <= 1)):
        raise InputError("p-values must lie in [0, 1]")
    m = p.size
    order = np.argsort(p, kind="mergesort")
    ranked = p[order]
    if key == "bonferroni":
        adjusted = np.minimum(1.0, m * p)
    else:
        if key == "holm":
            steps = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * ranked))
        else:
            scaled = m * ranked / np.arange(1, m + 1)
            steps = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
        adjusted = np.empty(m)
        adjusted[order] = steps
    names = tuple(labels) if labels is not None else tuple(f"H{i}" for i in range(m))
    if len(names) != m:
        raise InputError(f"{len(names)} labels for {m} p-values")
    return AdjustedPValues(
        method=key,
        alpha=alpha,
        p_values=p,
        adjusted=adjusted,
        reject=adjusted <= alpha,
        labels=names,
    )
