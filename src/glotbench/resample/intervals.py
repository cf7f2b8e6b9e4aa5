"""Bootstrap confidence intervals from replicate scores.

* percentile: the α/2 and 1−α/2 quantiles of the replicates (Efron &
  Tibshirani 1993, eq. 13.5), linear interpolation as ``numpy.quantile``;
* BCa: bias-corrected and accelerated (Efron 1987; Efron & Tibshirani 1993,
  §14.3 and eq. 14.15), with the bias correction ẑ0 from the share of
  replicates below the estimate (ties counted half, as ``scipy.stats.bootstrap``)
  and the acceleration â from the jackknife (eq. 14.15);
* the standard error is the replicates' standard deviation with ddof = 1;
* the standard error of a sample mean is s/√n, s its SD with ddof = 1
  (:func:`mean_standard_error`; Casella & Berger 2002, §5.2).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import numpy.typing as npt

IntervalMethod = Literal["percentile", "bca"]


def percentile_interval(
    replicates: npt.NDArray[np.float64], confidence_level: float
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Percentile interval per column of ``replicates`` (B × m)."""
    alpha = (1.0 - confidence_level) / 2.0
    low, high = np.quantile(replicates, [alpha, 1.0 - alpha], axis=0)
    return low, high


def bias_correction(
    replicates: npt.NDArray[np.float64], estimate: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """ẑ0 = Φ⁻¹(share of replicates below the estimate, ties counted half)."""
    from scipy.special import ndtri

    below = (replicates < estimate).sum(axis=0) + (replicates <= estimate).sum(axis=0)
    return ndtri(below / (2.0 * replicates.shape[0]))


def acceleration(jackknife: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """â = Σ(θ̄ − θ_i)³ / (6 [Σ(θ̄ − θ_i)²]^{3/2}) over jackknife values (n × m)."""
    deviation = jackknife.mean(axis=0) - jackknife
    numerator = (deviation**3).sum(axis=0)
    denominator = 6.0 * (deviation**2).sum(axis=0) ** 1.5
    out = np.zeros_like(numerator)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def bca_interval(
    replicates: npt.NDArray[np.float64],
    estimate: npt.NDArray[np.float64],
    jackknife: npt.NDArray[np.float64],
    confidence_level: float,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """BCa interval per column: percentile interval at adjusted levels α1, α2."""
    from scipy.special import ndtr, ndtri

    alpha = (1.0 - confidence_level) / 2.0
    z0 = bias_correction(replicates, estimate)
    a = acceleration(jackknife)
    z_low, z_high = ndtri(alpha), ndtri(1.0 - alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        level_low = ndtr(z0 + (z0 + z_low) / (1.0 - a * (z0 + z_low)))
        level_high = ndtr(z0 + (z0 + z_high) / (1.0 - a * (z0 + z_high)))
    low = np.empty(replicates.shape[1])
    high = np.empty(replicates.shape[1])
    for j in range(replicates.shape[1]):
        if not (np.isfinite(level_low[j]) and np.isfinite(level_high[j])):
            # Degenerate bootstrap distribution (all replicates equal the estimate).
            low[j] = high[j] = np.nan
            continue
        low[j], high[j] = np.quantile(replicates[:, j], [level_low[j], level_high[j]])
    return low, high


def standard_error(replicates: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Bootstrap standard error: SD of the replicates (ddof = 1)."""
    if replicates.shape[0] < 2:
        return np.full(replicates.shape[1], np.nan)
    return replicates.std(axis=0, ddof=1)


def mean_standard_error(values: npt.ArrayLike, axis: int | None = None) -> Any:
    """SE of the mean of a sample, ``s / √n`` with ``s`` its SD (ddof = 1); NaN for n < 2.

    ``axis``: the sample lies along this axis, one SE per other index (None:
    all values are one sample, a scalar).
    """
    arr = np.asarray(values)
    n = arr.size if axis is None else arr.shape[axis]
    if n < 2:
        shape = () if axis is None else tuple(np.delete(arr.shape, axis))
        return np.full(shape, np.nan)[()]
    return arr.std(axis=axis, ddof=1) / np.sqrt(n)
