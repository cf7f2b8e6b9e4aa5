"""Statistics of every pair of models from paired draws, without a loop over pairs.

For draws X (R draws × M models) of a quantity, the variance of the paired
difference of models a and b follows from the covariance matrix of the draws,

    Var(X_a − X_b) = Var X_a + Var X_b − 2 Cov(X_a, X_b),

and C = Dᵀ D / (R − 1), D the column-centred draws, gives every pair's
variance from one matrix product (ddof = 1, as ``numpy.std(ddof=1)`` of the
differences). Per language the same product is accumulated block by block over
the draws (:class:`CrossProducts`), so the (R × M × languages) draws are never
held at once. Percentile intervals and the share of draws where a > b need the
draws of each difference: they are computed in chunks of pairs whose size
bounds memory (:func:`pair_quantiles`).

A difference that is constant over the draws (two copies of a model under
paired resampling) has SD exactly 0 — not the float noise of ~1e-16 · Var
that the covariance formula leaves — so that its effect size is 0 or ±∞
rather than ~1e14: variances at or below :data:`ZERO_VARIANCE` · (Var X_a +
Var X_b) are set to 0 (a correlation above 1 − 5·10⁻¹¹), as are variances of
columns whose draws are all equal.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from scipy.linalg.blas import dsyrk
from threadpoolctl import threadpool_limits

#: relative size below which a pair's variance counts as exactly 0 (see module docstring)
ZERO_VARIANCE = 1e-10

#: elements per chunk of pairwise differences (8 bytes each: 64 MB)
CHUNK_ELEMENTS = 1 << 23


def pair_indices(n_models: int) -> tuple[np.ndarray, np.ndarray]:
    """All pairs (a, b) with a < b, in the order (0, 1), (0, 2), …, (1, 2), …"""
    return np.triu_indices(n_models, k=1)


def _pair_variance(cov: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Var(X_a − X_b) from covariance matrices (..., M, M) for the pairs (a, b)."""
    var_a, var_b = cov[..., a, a], cov[..., b, b]
    var = var_a + var_b - 2 * cov[..., a, b]
    return np.where(var <= ZERO_VARIANCE * (var_a + var_b), 0.0, var)


def difference_sd(draws: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """SD (ddof = 1) over the draws (R × M) of X_a − X_b for every pair (a, b)."""
    centred = draws - draws.mean(axis=0)
    centred[:, draws.min(axis=0) == draws.max(axis=0)] = 0.0  # constant: exactly 0
    cov = centred.T @ centred / (draws.shape[0] - 1)
    return np.sqrt(_pair_variance(cov, a, b))


class CrossProducts:
    """Per-unit covariance matrices of the models' draws, accumulated block by block.

    ``add(block)`` takes unit draws (rows × M × U); the sums are of draws minus
    a shift (the first block's mean), so that Σx² − (Σx)²/R does not cancel.
    Only the upper triangle (a ≤ b) of each cross-product matrix is formed
    (BLAS ``dsyrk``): pairs a < b and the diagonal are all that is needed.
    """

    def __init__(self) -> None:
        self.count = 0
        self.shift = np.empty((0, 0))  # (U, M)
        self.sum = np.empty((0, 0))  # (U, M)
        self.cross = np.empty((0, 0, 0))  # (U, M, M), upper triangles
        self.low = np.empty((0, 0))
        self.high = np.empty((0, 0))

    def add(self, block: np.ndarray) -> None:
        units_first = np.ascontiguousarray(block.transpose(2, 0, 1))  # (U, rows, M)
        if self.count == 0:
            self.shift = units_first.mean(axis=1)
            self.sum = np.zeros_like(self.shift)
            self.cross = np.zeros((*self.shift.shape, self.shift.shape[1]))
            self.low = units_first.min(axis=1)
            self.high = units_first.max(axis=1)
        else:
            np.minimum(self.low, units_first.min(axis=1), out=self.low)
            np.maximum(self.high, units_first.max(axis=1), out=self.high)
        centred = units_first - self.shift[:, None, :]
        self.sum += centred.sum(axis=1)
        # many small products (M × 256 each): BLAS threads do not pay off, and on a shared
        # machine they spin against other processes (observed: 20× slower under load)
        with threadpool_limits(limits=1, user_api="blas"):
            for u in range(centred.shape[0]):
                # centred[u].T is (M × rows), Fortran-ordered: no copy; upper triangle of XᵀX
                self.cross[u] += dsyrk(1.0, centred[u].T)
        self.count += block.shape[0]

    def covariance(self) -> np.ndarray:
        """Covariance matrices (U × M × M, upper triangle), ddof = 1; constant columns 0."""
        mean = self.sum / self.count
        cov = (self.cross - self.count * mean[:, :, None] * mean[:, None, :]) / (self.count - 1)
        constant = self.low == self.high  # (U, M)
        cov[np.broadcast_to(constant[:, :, None], cov.shape)] = 0.0
        cov[np.broadcast_to(constant[:, None, :], cov.shape)] = 0.0
        return cov

    def difference_sd(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """SD of X_a − X_b per unit for pairs with a < b, shape (pairs, U)."""
        if not (a < b).all():
            raise ValueError("pairs must have a < b (upper triangle)")
        return np.sqrt(_pair_variance(self.covariance(), a, b)).T


def _pair_chunks(first: np.ndarray, n_draws: int, chunk_elements: int) -> Iterator[slice]:
    """Chunks of at most ``chunk_elements`` differences; runs of one first model kept whole
    (then cut) when pairs come grouped by first model, as from :func:`pair_indices`."""
    size = max(1, chunk_elements // max(n_draws, 1))
    n_pairs = len(first)
    starts = np.flatnonzero(np.r_[True, first[1:] != first[:-1]]) if n_pairs else np.empty(0)
    if len(starts) * 8 > n_pairs:  # short runs: plain chunks
        starts = np.arange(0, n_pairs, size)
    ends = [*starts[1:], n_pairs]
    for start, end in zip(starts, ends, strict=True):
        for piece in range(int(start), int(end), size):
            yield slice(piece, min(piece + size, int(end)))


def pair_quantiles(
    draws: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    quantiles: tuple[float, float],
    chunk_elements: int = CHUNK_ELEMENTS,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Percentiles (numpy's linear method) of X_a − X_b and the share of draws with X_a > X_b.

    ``draws`` is (R × M). Pairs are taken in chunks of at most
    ``chunk_elements`` differences (model by model when they come grouped by
    their first model, as from :func:`pair_indices`), so memory does not grow
    with M².
    """
    by_model = np.ascontiguousarray(draws.T)  # (M, R): each difference is a contiguous row
    n_pairs = len(a)
    low, high, share = np.empty(n_pairs), np.empty(n_pairs), np.empty(n_pairs)
    for chunk in _pair_chunks(a, draws.shape[0], chunk_elements):
        first = a[chunk]
        rows = by_model[first[0]] if (first == first[0]).all() else by_model[first]
        diff = rows - by_model[b[chunk]]  # (pairs, R)
        share[chunk] = np.count_nonzero(diff > 0, axis=1) / draws.shape[0]
        low[chunk], high[chunk] = np.quantile(diff, quantiles, axis=1, overwrite_input=True)
    return low, high, share
