"""The ``score`` argument of the resampling entry points, and the error family.

A metric name, a Metric or a function are accepted; anything else fails at the
entry point with an InputError (which, as in scikit-learn, is a ValueError).
"""

from __future__ import annotations

import numpy as np
import pytest

from glotbench.errors import GlotbenchError, InputError, StoreError, UnknownMetricError
from glotbench.metrics import get_metric
from glotbench.resample import (
    StreamingBootstrap,
    bootstrap,
    bootstrap_metric,
    jackknife_scores,
    mask_scores,
    point_scores,
)

PRED = [1, 0, 1, 1, 0, 1]
REF = [1, 1, 1, 0, 0, 1]


def _stats() -> np.ndarray:
    return get_metric("accuracy").stats(PRED, REF)


def test_input_error_is_a_value_error_and_store_error_a_runtime_error() -> None:
    assert issubclass(InputError, ValueError) and issubclass(InputError, GlotbenchError)
    assert issubclass(StoreError, RuntimeError)
    assert issubclass(UnknownMetricError, KeyError)
    with pytest.raises(ValueError, match="file.csv, line 3: bad"):
        raise InputError("bad", path="file.csv", line=3)


def test_a_metric_name_gives_the_same_result_as_the_metric() -> None:
    by_name = bootstrap(_stats(), "accuracy", n_resamples=300, seed=4)
    by_metric = bootstrap(_stats(), get_metric("accuracy"), n_resamples=300, seed=4)
    assert by_name.metric == "accuracy"
    # 4 of 6 correct: the point estimate is the plain proportion
    assert by_name.estimates[0] == pytest.approx(4 / 6)
    np.testing.assert_array_equal(by_name.replicates, by_metric.replicates)
    assert point_scores(_stats(), "accuracy")[0] == pytest.approx(4 / 6)
    # leave-one-out accuracy: (4 - correct_i) / 5
    expected = (4 - np.array([1, 0, 1, 0, 1, 1])) / 5
    np.testing.assert_allclose(jackknife_scores(_stats(), "accuracy")[:, 0], expected)
    np.testing.assert_allclose(mask_scores(_stats(), "accuracy", [[1, 1, 0, 0, 0, 0]]), [[0.5]])


def test_streaming_accepts_a_metric_name() -> None:
    stream = StreamingBootstrap(n_stats=2, n_resamples=50, seed=1)
    stream.update(_stats())
    result = stream.result("accuracy")
    assert result.metric == "accuracy"
    assert result.estimates[0] == pytest.approx(4 / 6)


@pytest.mark.parametrize("bad", [3, None, ["accuracy"]])
def test_anything_else_is_an_input_error_at_the_entry_point(bad: object) -> None:
    with pytest.raises(InputError, match="score must be a metric name"):
        bootstrap(_stats(), bad, n_resamples=10)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="metric must be a metric name"):
        bootstrap_metric(bad, PRED, REF, n_resamples=10)  # type: ignore[arg-type]


def test_unknown_and_mismatched_metrics_say_what_is_wrong() -> None:
    with pytest.raises(UnknownMetricError, match="known metrics"):
        bootstrap(_stats(), "no_such_metric", n_resamples=10)
    with pytest.raises(InputError, match="'bleu' expects 10 statistics .* have 2"):
        bootstrap(_stats(), "bleu", n_resamples=10)
    with pytest.raises(InputError, match="not configured"):
        bootstrap(_stats(), "f1_macro", n_resamples=10)


def test_bad_arguments_are_value_errors() -> None:
    with pytest.raises(ValueError, match="confidence_level"):
        bootstrap(_stats(), "accuracy", confidence_level=1.5)
    with pytest.raises(InputError, match="NaN"):
        bootstrap(np.full((3, 2), np.nan), "accuracy")


def test_paired_tests_take_a_metric_name() -> None:
    from glotbench.analysis.significance import paired_bootstrap_test, permutation_test

    other = get_metric("accuracy").stats([1, 1, 1, 0, 0, 1], REF)  # 6 of 6 correct
    by_name = paired_bootstrap_test(_stats(), other, "accuracy", n_resamples=200)
    by_metric = paired_bootstrap_test(_stats(), other, get_metric("accuracy"), n_resamples=200)
    assert by_name.metric == "accuracy"
    assert by_name.difference == pytest.approx(4 / 6 - 1.0)
    assert by_name.p_value == by_metric.p_value
    assert permutation_test(_stats(), other, "accuracy", n_resamples=200).metric == "accuracy"
    with pytest.raises(InputError, match="score must be a metric name"):
        permutation_test(_stats(), other, 0.5, n_resamples=10)  # type: ignore[arg-type]
