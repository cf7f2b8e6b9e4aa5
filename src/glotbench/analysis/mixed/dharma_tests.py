"""DHARMa's residual-vs-predicted quantile test and per-group residual tests.

Both work on the scaled (simulated quantile) residuals of :mod:`.dharma`,
which are U(0, 1) under a correctly specified model — overall *and* at every
value of the predictor and within every group. Methods as R's DHARMa
(Hartig 2022, ``testQuantiles`` and ``testCategorical``):

* **quantile test** (``testQuantiles``): for each quantile ``q`` (0.25, 0.5,
  0.75) a quantile regression of ``r − q`` on a smooth function of the
  predicted value (rank-transformed to (0, 1]: ``rank / max rank``, ties
  averaged). Under H0 the q-quantile of the residuals is q everywhere, so both
  the intercept and the smooth are zero. Per quantile the p-value is the
  smaller Benjamini–Hochberg-adjusted p of the intercept and the smooth term;
  the overall p is the smaller BH-adjusted p over the quantiles.
  DHARMa fits a penalised regression spline with ``qgam`` (Fasiolo et al.
  2021); glotbench fits an unpenalised cubic B-spline (4 df, centred) by
  statsmodels' ``QuantReg`` (Koenker & Bassett 1978; kernel sandwich SEs),
  testing the intercept by its t-test and the spline by a Wald F test. The
  logic and the adjustments are DHARMa's, the p-values are not identical to
  qgam's (which R is needed to reproduce).
* **per-group test** (``testCategorical``): a one-sample Kolmogorov–Smirnov
  test of the residuals against U(0, 1) within each level of a grouping
  factor — exact for fewer than 100 residuals, asymptotic otherwise, as R's
  ``ks.test`` — with Holm's adjustment over the groups (R's ``p.adjust``
  default), and Levene's test of equal residual spread between the groups
  with the group *medians* as centres (Brown & Forsythe 1974; DHARMa's copy
  of ``car::leveneTest``): a one-way ANOVA F test of ``|r − median_g|``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

QUANTILES = (0.25, 0.5, 0.75)
SPLINE_DF = 4


def bh_adjust(p: npt.ArrayLike) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values (R's ``p.adjust(method = "BH")``); NaN kept out.

    ``p̃_(i) = min_{j ≥ i} min(1, m p_(j) / j)`` over the sorted p-values.
    """
    p = np.asarray(p, dtype=float)
    out = np.full_like(p, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = len(ok)
    if m:
        order = ok[np.argsort(p[ok])]
        scaled = p[order] * m / np.arange(1, m + 1)
        out[order] = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    return out


def holm_adjust(p: npt.ArrayLike) -> np.ndarray:
    """Holm's step-down adjusted p-values (R's ``p.adjust`` default).

    ``p̃_(i) = max_{j ≤ i} min(1, (m − j + 1) p_(j))`` over the sorted p-values.
    """
    p = np.asarray(p, dtype=float)
    m = len(p)
    order = np.argsort(p)
    scaled = np.minimum(1.0, p[order] * (m - np.arange(m)))
    out = np.empty(m)
    out[order] = np.maximum.accumulate(scaled)
    return out


def rank_transform(x: npt.ArrayLike) -> np.ndarray:
    """DHARMa's ``rankTransform``: average ranks divided by the largest rank."""
    from scipy import stats

    r = stats.rankdata(np.asarray(x, dtype=float), method="average")
    return r / r.max()


def _smooth_basis(pred: np.ndarray, df: int) -> np.ndarray:
    """Centred cubic B-spline basis of ``pred`` (fewer columns when it has few distinct values).

    With ``d`` distinct values at most ``d − 1`` columns are identifiable; below
    4 distinct values an orthogonal polynomial of degree ``d − 1`` is used.
    """
    distinct = len(np.unique(pred))
    k = min(df, distinct - 1)
    if k <= 0:
        return np.zeros((len(pred), 0))
    if k >= 3:
        from patsy import bs

        basis = np.asarray(bs(pred, df=k, degree=3, include_intercept=False))
    else:
        centred = pred - pred.mean()
        basis = np.column_stack([centred**j for j in range(1, k + 1)])
        basis = np.linalg.qr(np.column_stack([np.ones(len(pred)), basis]))[0][:, 1:]
    return basis - basis.mean(axis=0)


@dataclass
class QuantileFit:
    """One quantile's regression: intercept and smooth-term tests."""

    quantile: float
    intercept: float
    p_intercept: float
    p_smooth: float
    p: float  # min of the BH-adjusted two


@dataclass
class QuantileTest:
    """DHARMa's ``testQuantiles``: do the residual quantiles depend on the predicted value?"""

    fits: list[QuantileFit]
    p: float
    predictor: str
    spline_df: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": "quantile regressions of the scaled residuals on the "
            f"{self.predictor} (rank-transformed, cubic B-spline with {self.spline_df} df)",
            "p": self.p,
            "quantiles": [
                {
                    "quantile": f.quantile,
                    "intercept": f.intercept,
                    "p_intercept": f.p_intercept,
                    "p_smooth": f.p_smooth,
                    "p": f.p,
                }
                for f in self.fits
            ],
        }


def quantile_test(
    residuals: npt.ArrayLike,
    predictor: npt.ArrayLike,
    *,
    quantiles: Sequence[float] = QUANTILES,
    rank: bool = True,
    spline_df: int = SPLINE_DF,
    predictor_name: str = "predicted values",
) -> QuantileTest:
    """Quantile regressions of the scaled residuals on the predictor (see module docstring)."""
    from statsmodels.regression.quantile_regression import QuantReg

    res = np.asarray(residuals, dtype=float).reshape(-1)
    pred = np.asarray(predictor, dtype=float).reshape(-1)
    if len(res) != len(pred):
        raise ValueError("residuals and predictor differ in length")
    if rank:
        pred = rank_transform(pred)
    basis = _smooth_basis(pred, spline_df)
    design = np.column_stack([np.ones(len(res)), basis])
    k = basis.shape[1]
    fits = []
    for q in quantiles:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = QuantReg(res - q, design).fit(q=q, max_iter=5000)
            p_int = float(fit.pvalues[0])
            p_smooth = float("nan")
            if k:
                restriction = np.zeros((k, k + 1))
                restriction[:, 1:] = np.eye(k)
                p_smooth = float(fit.f_test(restriction).pvalue)
        adjusted = bh_adjust([p_int, p_smooth])
        fits.append(
            QuantileFit(
                quantile=float(q),
                intercept=float(fit.params[0]),
                p_intercept=p_int,
                p_smooth=p_smooth,
                p=float(np.nanmin(adjusted)),
            )
        )
    overall = float(np.nanmin(bh_adjust([f.p for f in fits])))
    return QuantileTest(fits=fits, p=overall, predictor=predictor_name, spline_df=k)


def ks_uniform(x: np.ndarray) -> tuple[float, float]:
    """One-sample KS test against U(0, 1) as R's ``ks.test``: exact below 100 values (no ties)."""
    from scipy import stats

    exact = len(x) < 100 and len(np.unique(x)) == len(x)
    out = stats.kstest(x, "uniform", method="exact" if exact else "asymp")
    return float(out.statistic), float(out.pvalue)


@dataclass
class CategoricalTest:
    """DHARMa's ``testCategorical``: uniformity within groups and equal spread between them."""

    factor: str
    levels: list[str]
    n: list[int]
    ks_statistic: list[float]
    p: list[float]
    p_adjusted: list[float]  # Holm
    levene_f: float
    levene_df: tuple[int, int]
    levene_p: float

    @property
    def flagged(self) -> list[str]:
        return [lv for lv, p in zip(self.levels, self.p_adjusted, strict=True) if p < 0.05]

    def to_dict(self) -> dict[str, Any]:
        return {
            "factor": self.factor,
            "groups": [
                {"level": lv, "n": n, "ks_statistic": d, "p": p, "p_holm": pa}
                for lv, n, d, p, pa in zip(
                    self.levels, self.n, self.ks_statistic, self.p, self.p_adjusted, strict=True
                )
            ],
            "min_p_holm": float(np.min(self.p_adjusted)),
            "levene": {
                "F": self.levene_f,
                "df": list(self.levene_df),
                "p": self.levene_p,
                "center": "median",
            },
        }

    def messages(self, alpha: float = 0.05) -> list[str]:
        out = []
        flagged = self.flagged
        if flagged:
            shown = ", ".join(flagged[:5]) + (", …" if len(flagged) > 5 else "")
            out.append(
                f"residuals are not uniform within {len(flagged)} of {len(self.levels)} "
                f"{self.factor} group(s) ({shown}; KS, Holm-adjusted p < {alpha}): the model "
                f"misses a systematic effect of {self.factor} (e.g. an interaction)"
            )
        if self.levene_p < alpha:
            out.append(
                f"the residual spread differs between {self.factor} groups (Levene p = "
                f"{self.levene_p:.3g}): the variance is not homogeneous across {self.factor}"
            )
        return out


def categorical_test(
    residuals: npt.ArrayLike, groups: npt.ArrayLike, factor: str = "group"
) -> CategoricalTest:
    """Per-group KS uniformity tests (Holm) and the median-centred Levene test."""
    from scipy import stats

    res = np.asarray(residuals, dtype=float).reshape(-1)
    labels = np.asarray(groups).astype(str).reshape(-1)
    if len(labels) != len(res):
        raise ValueError("residuals and groups differ in length")
    levels = sorted(set(labels.tolist()))
    samples = [res[labels == lv] for lv in levels]
    ks = [ks_uniform(s) for s in samples]
    p = [pv for _, pv in ks]
    p_adj = [float(v) for v in holm_adjust(p)]
    if len(levels) > 1:
        lev = stats.levene(*samples, center="median")
        lev_f, lev_p = float(lev.statistic), float(lev.pvalue)
    else:
        lev_f, lev_p = float("nan"), float("nan")
    return CategoricalTest(
        factor=factor,
        levels=levels,
        n=[len(s) for s in samples],
        ks_statistic=[d for d, _ in ks],
        p=p,
        p_adjusted=p_adj,
        levene_f=lev_f,
        levene_df=(len(levels) - 1, len(res) - len(levels)),
        levene_p=lev_p,
    )
