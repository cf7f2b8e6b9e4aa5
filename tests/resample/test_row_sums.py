"""Row sums from the columns-first layout equal numpy's own row sums bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from glotbench.resample.row_sums import MAX_ROW, row_sums_columns_first


def _wild(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Values over 16 orders of magnitude, both signs: sums depend on the order of additions."""
    return rng.standard_normal(shape) * 10.0 ** rng.integers(-8, 8, size=shape)


@pytest.mark.parametrize("n", list(range(1, 41)) + [63, 64, 65, 100, 127, MAX_ROW])
def test_equals_numpys_row_sums(n: int) -> None:
    rng = np.random.default_rng(n)
    rows = _wild(rng, (3, 400, n))
    expected = np.add.reduce(rows, axis=-1)
    got = row_sums_columns_first(np.ascontiguousarray(np.moveaxis(rows, -1, 0)))
    assert got.shape == expected.shape
    # equal as bit patterns, not only as numbers
    assert np.array_equal(got.view(np.int64), expected.view(np.int64))


def test_a_different_order_would_be_caught() -> None:
    """The data tell orders apart: a plain left-to-right sum differs from numpy's."""
    rows = _wild(np.random.default_rng(0), (400, 10))
    left_to_right = np.zeros(400)
    for j in range(10):
        left_to_right += rows[:, j]
    assert not np.array_equal(left_to_right, np.add.reduce(rows, axis=-1))


@pytest.mark.parametrize("n", [1, 3, 8, 10, 17])
def test_signed_zeros_nan_and_infinities(n: int) -> None:
    rng = np.random.default_rng(7)
    specials = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1.0, -1.0])
    rows = rng.choice(specials, size=(2000, n))
    rows[:50] = -0.0  # rows of negative zeros: numpy's sum is +0.0
    with np.errstate(invalid="ignore"):  # inf - inf is NaN for both
        expected = np.add.reduce(rows, axis=-1)
        got = row_sums_columns_first(np.ascontiguousarray(rows.T))
    finite = np.isfinite(expected)
    assert np.array_equal(np.isnan(got), np.isnan(expected))
    assert np.array_equal(got[~np.isnan(got)], expected[~np.isnan(expected)])
    assert np.array_equal(np.signbit(got[finite]), np.signbit(expected[finite]))


def test_strided_columns_are_summed_the_same() -> None:
    rows = _wild(np.random.default_rng(3), (50, 6, 12))
    columns = np.moveaxis(rows, -1, 0)  # a view, not contiguous
    assert np.array_equal(row_sums_columns_first(columns), np.add.reduce(rows, axis=-1))


@pytest.mark.parametrize("n", [0, MAX_ROW + 1])
def test_row_lengths_outside_the_range_are_refused(n: int) -> None:
    with pytest.raises(ValueError, match="rows of 1 to 128"):
        row_sums_columns_first(np.zeros((n, 3)))
