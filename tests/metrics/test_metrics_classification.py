"""Classification metrics against scikit-learn (incl. resampled test sets)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm
from sklearn.exceptions import UndefinedMetricWarning

from glotbench.errors import InputError
from glotbench.metrics import get_metric

ATOL = 1e-9


def _quiet(fn):
    def wrapped(refs, preds, **kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            warnings.simplefilter("ignore", RuntimeWarning)
            warnings.simplefilter("ignore", UserWarning)
            return float(fn(refs, preds, **kwargs))

    return wrapped


# reference(preds, refs) -> float; scikit-learn takes (y_true, y_pred)
SKLEARN = {
    "accuracy": lambda p, r: _quiet(skm.accuracy_score)(r, p),
    "f1_macro": lambda p, r: _quiet(skm.f1_score)(r, p, average="macro", zero_division=0),
    "f1_micro": lambda p, r: _quiet(skm.f1_score)(r, p, average="micro", zero_division=0),
    "precision_macro": lambda p, r: _quiet(skm.precision_score)(
        r, p, average="macro", zero_division=0
    ),
    "precision_micro": lambda p, r: _quiet(skm.precision_score)(
        r, p, average="micro", zero_division=0
    ),
    "recall_macro": lambda p, r: _quiet(skm.recall_score)(r, p, average="macro", zero_division=0),
    "recall_micro": lambda p, r: _quiet(skm.recall_score)(r, p, average="micro", zero_division=0),
    "mcc": lambda p, r: _quiet(skm.matthews_corrcoef)(r, p),
    "f1_binary": lambda p, r: _quiet(skm.f1_score)(r, p, zero_division=0),
    "precision_binary": lambda p, r: _quiet(skm.precision_score)(r, p, zero_division=0),
    "recall_binary": lambda p, r: _quiet(skm.recall_score)(r, p, zero_division=0),
}
MULTICLASS = [name for name in SKLEARN if not name.endswith("_binary")]
BINARY = [name for name in SKLEARN if name.endswith("_binary")]


@st.composite
def label_pairs(draw, labels=(0, 1, 2, 3), min_size=1, max_size=25):
    n = draw(st.integers(min_size, max_size))
    refs = draw(st.lists(st.sampled_from(labels), min_size=n, max_size=n))
    preds = draw(st.lists(st.sampled_from(labels), min_size=n, max_size=n))
    return preds, refs


@pytest.mark.slow
@pytest.mark.parametrize("name", MULTICLASS)
@settings(max_examples=40, deadline=None)
@given(data=label_pairs(), seed=st.integers(0, 2**16))
def test_multiclass_equals_sklearn(name, data, seed, check_resampled):
    preds, refs = data
    metric = get_metric(name).fit(preds, refs)
    check_resampled(metric, preds, refs, SKLEARN[name], seed=seed, atol=ATOL)


@pytest.mark.slow
@pytest.mark.parametrize("name", MULTICLASS)
@settings(max_examples=20, deadline=None)
@given(data=label_pairs(labels=("neg", "neu", "pos")), seed=st.integers(0, 2**16))
def test_multiclass_string_labels(name, data, seed, check_resampled):
    preds, refs = data
    metric = get_metric(name).fit(preds, refs)
    check_resampled(metric, preds, refs, SKLEARN[name], seed=seed, atol=ATOL)


@pytest.mark.slow
@pytest.mark.parametrize("name", BINARY)
@settings(max_examples=40, deadline=None)
@given(data=label_pairs(labels=(0, 1)), seed=st.integers(0, 2**16))
def test_binary_equals_sklearn(name, data, seed, check_resampled):
    preds, refs = data
    check_resampled(get_metric(name), preds, refs, SKLEARN[name], seed=seed, atol=ATOL)


@pytest.mark.slow
@pytest.mark.parametrize("name", BINARY)
@settings(max_examples=25, deadline=None)
@given(data=label_pairs(labels=("yes", "no")), seed=st.integers(0, 2**16))
def test_binary_string_pos_label(name, data, seed, check_resampled):
    preds, refs = data
    kind = name.split("_")[0]
    fn = {"f1": skm.f1_score, "precision": skm.precision_score, "recall": skm.recall_score}[kind]

    def reference(p, r):
        return _quiet(fn)(r, p, pos_label="yes", zero_division=0)

    check_resampled(get_metric(name, pos_label="yes"), preds, refs, reference, seed=seed)


def test_f1_binary_is_lm_eval_harness_f1():
    # lm-evaluation-harness's f1 aggregation: sklearn.metrics.f1_score(golds, preds)
    golds = [1, 0, 1, 1, 0, 0, 1]
    preds = [1, 1, 0, 1, 0, 0, 1]
    assert get_metric("f1_binary").corpus_score(preds, golds) == pytest.approx(
        skm.f1_score(golds, preds), abs=ATOL
    )


def test_binary_one_vs_rest_for_other_labels():
    # labels other than pos_label are negatives (sklearn would refuse multiclass input)
    metric = get_metric("f1_binary", pos_label=2)
    preds, refs = [2, 0, 1, 2], [2, 1, 1, 0]
    tp, fp, fn = metric.stats(preds, refs).sum(0)
    assert (tp, fp, fn) == (1, 1, 0)
    assert metric.corpus_score(preds, refs) == pytest.approx(2 / 3)


@pytest.mark.parametrize("name", MULTICLASS + BINARY)
def test_zero_denominators_are_zero(name):
    metric = get_metric(name)
    if hasattr(metric, "labels"):
        metric = metric.fit([0, 1], [0, 1])
    assert metric.score(np.zeros(metric.n_stats)) == 0.0


@pytest.mark.parametrize("name", BINARY)
def test_binary_all_wrong_and_no_positive(name):
    metric = get_metric(name)
    assert metric.corpus_score([0, 0, 1], [1, 1, 0]) == 0.0
    assert metric.corpus_score([0, 0], [0, 0]) == 0.0  # no positives: 0 as zero_division=0


@pytest.mark.parametrize("name", ["f1_macro", "precision_macro", "recall_macro", "f1_micro"])
def test_unknown_predicted_label(name):
    # a prediction outside the (given) label set counts as wrong and joins no class
    labels = ["a", "b", "c"]
    refs = ["a", "b", "c", "a", "b"]
    preds = ["a", "zzz", "c", "b", "b"]
    metric = get_metric(name, labels=labels)
    average = name.split("_")[1]
    fn = {"f1": skm.f1_score, "precision": skm.precision_score, "recall": skm.recall_score}[
        name.split("_")[0]
    ]
    expected = fn(refs, preds, labels=labels, average=average, zero_division=0)
    assert metric.corpus_score(preds, refs) == pytest.approx(expected, abs=ATOL)


def test_unknown_reference_label_raises():
    metric = get_metric("f1_macro", labels=[0, 1])
    with pytest.raises(ValueError, match="not in labels"):
        metric.stats([0], [2])


def test_all_wrong_accuracy_and_mcc():
    assert get_metric("accuracy").corpus_score([1, 2, 0], [0, 1, 2]) == 0.0
    preds, refs = [1, 0, 1, 0], [0, 1, 0, 1]
    mcc = get_metric("mcc").fit(preds, refs)
    assert mcc.corpus_score(preds, refs) == pytest.approx(skm.matthews_corrcoef(refs, preds))


def test_length_mismatch_raises():
    for name in ("accuracy", "f1_binary"):
        with pytest.raises(InputError, match="predictions but"):
            get_metric(name).stats([1, 0], [1])
