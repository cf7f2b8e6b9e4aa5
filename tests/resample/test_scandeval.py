"""ScandEval's aggregate (Nielsen 2023, §4), checked against closed forms and by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from glotbench.metrics import get_metric
from glotbench.resample.scandeval import (
    CI_MULTIPLIER,
    bootstrap_test_counts,
    iteration_score,
    mean_and_half_width,
    sd_from_half_width,
)


def test_mean_and_half_width_closed_form() -> None:
    # scores 0.5, 0.6, 0.7: mean 0.6, SD(ddof=1) 0.1, half-width 1.96 · 0.1 / √3
    mean, half = mean_and_half_width([0.5, 0.6, 0.7])
    assert mean == pytest.approx(0.6, abs=1e-15)
    assert half == pytest.approx(1.96 * 0.1 / math.sqrt(3), rel=1e-12)
    assert CI_MULTIPLIER == 1.96  # ScandEval rounds the 97.5 % normal quantile


def test_one_value_has_no_half_width_and_none_no_mean() -> None:
    mean, half = mean_and_half_width([0.8])
    assert mean == 0.8 and math.isnan(half)
    assert all(math.isnan(v) for v in mean_and_half_width([]))


def test_sd_from_half_width_inverts_the_half_width() -> None:
    values = np.array([71.2, 69.8, 70.5, 72.0, 70.1, 69.5, 71.7, 70.9, 70.0, 71.3])
    _, half = mean_and_half_width(values)
    assert sd_from_half_width(half, values.size) == pytest.approx(values.std(ddof=1), rel=1e-12)


def test_iteration_score_is_the_score_of_the_bootstrapped_test_set() -> None:
    # accuracy statistics (correct, 1) of 8 examples; the bootstrap drawn by hand
    stats = np.array([[1, 1], [0, 1], [1, 1], [1, 1], [0, 1], [1, 1], [0, 1], [1, 1]], float)
    seed = 11
    drawn = np.random.default_rng([seed, 2]).integers(0, 8, 8)
    expected = stats[drawn, 0].mean()
    counts = bootstrap_test_counts(seed, 8)
    assert counts.sum() == 8 and counts.dtype == np.float64
    assert iteration_score(get_metric("accuracy"), stats, seed) == pytest.approx(expected)
