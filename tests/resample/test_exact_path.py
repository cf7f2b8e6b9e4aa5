"""The exact bootstrap path (integer statistics) gives the float64 formula's numbers bit for bit.

Integer statistics with n · max|S| < 2**24 are read in place, their distinct
columns gathered into float32 and multiplied in float32 with one BLAS thread,
and the drawn indices counted a slice at a time. Every number must still be
``score(W @ S)`` with the float64 multinomial weights of the plain formula.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import glotbench.resample.engine as engine
from glotbench.metrics import get_metric
from glotbench.resample import point_scores, replicate_scores
from glotbench.resample.engine import exact_columns, exact_in_float32, replicate_and_point_scores
from glotbench.resample.weights import (
    BLOCK,
    COUNT_ELEMENTS,
    block_rng,
    example_draws,
    make_support,
    multinomial_block,
    weight_block,
)

ACCURACY = get_metric("accuracy")


def _ratio(summed: np.ndarray) -> np.ndarray:
    """A score that uses every statistic: (a + 3b) / (c + d + 1)."""
    return (summed[..., 0] + 3 * summed[..., 1]) / (summed[..., 2] + summed[..., 3] + 1)


def _formula(stats: np.ndarray, score: Any, n_resamples: int, seed: int) -> np.ndarray:
    """score(W @ S), W the float64 multinomial counts of the example-level support."""
    m, n, k = stats.shape
    flat = stats.transpose(1, 0, 2).reshape(n, m * k)
    support = make_support(flat, compress=False)
    score_fn = score.score if score is ACCURACY else score
    out = []
    for block in range(-(-n_resamples // BLOCK)):
        rows = min(BLOCK, n_resamples - block * BLOCK)
        weights = weight_block("multinomial", seed, block, support, rows)
        out.append(score_fn((weights @ flat).reshape(rows, m, k)))
    return np.concatenate(out)


def _accuracy_runs(m: int, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    correct = rng.random((m, n)) < rng.uniform(0.3, 0.9, (m, 1))
    return np.stack([correct, np.ones_like(correct)], axis=-1).astype(np.float64)


def _case(name: str) -> tuple[np.ndarray, Any]:
    rng = np.random.default_rng(17)
    if name == "accuracy runs":  # 40 runs: 41 distinct columns, example-level product
        return _accuracy_runs(40, 700, 1), ACCURACY
    if name == "identical runs":  # runs that are copies of each other share a column
        stats = _accuracy_runs(12, 500, 2)
        return np.concatenate([stats, stats[:3]]), ACCURACY
    if name == "one run":  # two columns: the gather path
        return _accuracy_runs(1, 900, 3), ACCURACY
    if name == "few distinct rows":  # 5 runs of 0/1: at most 32 distinct rows, compressed
        return _accuracy_runs(5, 2000, 4), ACCURACY
    counts = rng.integers(0, 40, size=(7, 600, 4)).astype(np.float64)  # n-gram-like counts
    return counts, _ratio


@pytest.mark.parametrize(
    "name", ["accuracy runs", "identical runs", "one run", "few distinct rows", "counts"]
)
def test_exact_path_gives_the_float64_formula(name: str) -> None:
    stats, score = _case(name)
    n = stats.shape[1]
    assert exact_in_float32(stats, n)
    plan = engine._plan(stats, "multinomial", "auto", True)  # the route this case checks
    assert plan.gather == (name == "one run")
    assert plan.support.compressed == (name == "few distinct rows")
    expected = _formula(stats, score, 700, 5)
    replicates, points = replicate_and_point_scores(stats, score, n_resamples=700, seed=5)
    np.testing.assert_array_equal(replicates, expected)
    np.testing.assert_array_equal(replicate_scores(stats, score, n_resamples=700, seed=5), expected)
    np.testing.assert_array_equal(points, point_scores(stats, score))
    # and the formula is the binomial bootstrap: SD of a run's accuracy ≈ √(p(1 − p)/n)
    if score is ACCURACY:
        p = stats[0, :, 0].mean()
        assert abs(expected[:, 0].std() / np.sqrt(p * (1 - p) / n) - 1) < 0.15


def test_float_statistics_keep_the_float64_path() -> None:
    stats = np.random.default_rng(3).gamma(2.0, size=(5, 300, 4))
    assert not exact_in_float32(stats, 300)
    replicates, points = replicate_and_point_scores(stats, _ratio, n_resamples=300, seed=2)
    np.testing.assert_array_equal(replicates, _formula(stats, _ratio, 300, 2))
    np.testing.assert_array_equal(points, point_scores(stats, _ratio))


def test_exact_columns_merge_identical_columns_only() -> None:
    stats = _accuracy_runs(5, 300, 6)
    stats = np.concatenate([stats, stats[[1, 3]]])  # runs 5 and 6 repeat runs 1 and 3
    m, n, k = stats.shape
    distinct, column_of = exact_columns(stats)
    assert distinct.dtype == np.float32 and distinct.shape == (6, n)  # 5 runs + the ones
    for j in range(m):
        for c in range(k):
            np.testing.assert_array_equal(distinct[column_of[j * k + c]], stats[j, :, c])
    assert len({tuple(row) for row in distinct}) == distinct.shape[0]


def test_exact_columns_merge_nothing_on_a_projection_collision(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Columns that only share a key (a forced zero projection) stay apart."""

    class ZeroProjection:
        def standard_normal(self, n: int) -> np.ndarray:
            return np.zeros(n)

    stats = _accuracy_runs(4, 200, 7)
    monkeypatch.setattr(engine.np.random, "default_rng", lambda seed: ZeroProjection())
    distinct, column_of = exact_columns(stats)
    np.testing.assert_array_equal(column_of, np.arange(8))
    np.testing.assert_array_equal(distinct, stats.transpose(0, 2, 1).reshape(8, 200))


@pytest.mark.parametrize("compressed", [False, True])
def test_draws_counted_a_slice_at_a_time_are_the_blocks_counts(compressed: bool) -> None:
    """Slicing the draws (n = 5,000: a few rows per slice) changes no count."""
    n, rows = 5000, 200
    assert COUNT_ELEMENTS // n < rows
    values = np.arange(n) % 3 if compressed else np.arange(n)
    support = make_support(np.column_stack([values, np.ones(n)]).astype(float), compressed)
    assert support.compressed == compressed
    out = np.full((rows, support.size), -1.0, dtype=np.float32)
    weights = multinomial_block(block_rng(9, 4), support, rows, np.float32, out)
    assert weights is out
    draws = example_draws(block_rng(9, 4), n, rows).astype(np.int64)  # all at once
    codes = support.index[draws] + (np.arange(rows) * support.size)[:, None]
    expected = np.bincount(codes.ravel(), minlength=rows * support.size)
    np.testing.assert_array_equal(out, expected.reshape(rows, support.size))
    assert (out.sum(axis=1) == n).all()
