"""The float32 product for integer statistics gives the float64 numbers bit for bit."""

from __future__ import annotations

import numpy as np

from glotbench.resample import replicate_scores
from glotbench.resample.engine import FLOAT32_EXACT, exact_in_float32
from glotbench.resample.weights import BLOCK, make_support, weight_block


def _ratio(summed: np.ndarray) -> np.ndarray:
    """A score that uses every statistic: (a + 3b) / (c + d + 1)."""
    return (summed[..., 0] + 3 * summed[..., 1]) / (summed[..., 2] + summed[..., 3] + 1)


def _float64_reference(stats: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """score(W @ S) with float64 W and S, block by block (the formula, no shortcuts)."""
    m, n, k = stats.shape
    flat = stats.transpose(1, 0, 2).reshape(n, m * k)
    support = make_support(flat, compress=False)
    out = []
    for block in range(-(-n_resamples // BLOCK)):
        rows = min(BLOCK, n_resamples - block * BLOCK)
        weights = weight_block("multinomial", seed, block, support, rows)
        assert weights.dtype == np.float64
        out.append(_ratio((weights @ flat).reshape(rows, m, k)))
    return np.concatenate(out)


def test_integer_statistics_give_the_float64_numbers() -> None:
    rng = np.random.default_rng(3)
    # n-gram-like counts up to 60 on 400 examples, 5 systems: 20 distinct columns
    stats = rng.integers(0, 61, size=(5, 400, 4)).astype(np.float64)
    flat = stats.transpose(1, 0, 2).reshape(400, 20)
    assert exact_in_float32(flat, 400)
    got = replicate_scores(stats, _ratio, n_resamples=600, seed=9, compress=False)
    np.testing.assert_array_equal(got, _float64_reference(stats, 600, 9))


def test_when_float32_is_not_exact_float64_is_used() -> None:
    rng = np.random.default_rng(4)
    fractional = rng.integers(0, 5, size=(300, 8)) + 0.5
    assert not exact_in_float32(fractional, 300)
    large = np.full((10, 3), 2.0**20)
    assert exact_in_float32(large, 10) and not exact_in_float32(large, 16)  # 16 · 2^20 = 2^24
    assert not exact_in_float32(np.ones((4, 2)), FLOAT32_EXACT)
    stats = rng.gamma(2.0, size=(5, 300, 4))
    got = replicate_scores(stats, _ratio, n_resamples=300, seed=2, compress=False)
    np.testing.assert_array_equal(got, _float64_reference(stats, 300, 2))
