"""mAP@k against a loop implementation of the LAReQA/XTREME-R definition and scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import average_precision_score

from glotbench.errors import InputError, UnknownMetricError
from glotbench.metrics import get_metric

ATOL = 1e-9


def reference_ap_at_k(targets, ranked, k):
    """XTREME-R / LAReQA AP@k, written as a plain loop over ranks."""
    ranked = list(ranked)[:k]
    precision_sum, hits = 0.0, 0
    for i in range(len(ranked)):
        if ranked[i] in targets and ranked[i] not in ranked[:i]:
            hits += 1
            precision_sum += hits / (i + 1)
    return precision_sum / min(len(targets), k) if targets else 0.0


def reference_map(k):
    def reference(predictions, references):
        if not predictions:
            return 0.0
        values = [
            reference_ap_at_k(set(r), p, k) for p, r in zip(predictions, references, strict=True)
        ]
        return sum(values) / len(values)

    return reference


@st.composite
def rankings(draw):
    n = draw(st.integers(1, 8))
    preds, refs = [], []
    for _ in range(n):
        ids = st.integers(0, 15)
        preds.append(draw(st.lists(ids, max_size=25)))
        refs.append(draw(st.sets(ids, max_size=5)))
    return preds, refs


@settings(max_examples=80, deadline=None)
@given(data=rankings(), k=st.integers(1, 30), seed=st.integers(0, 2**16))
def test_equals_loop_definition(data, k, seed, check_resampled):
    preds, refs = data
    metric = get_metric(f"map@{k}")
    assert metric.k == k
    check_resampled(metric, preds, refs, reference_map(k), seed=seed, atol=ATOL)


@settings(max_examples=80, deadline=None)
@given(
    relevant=st.sets(st.integers(0, 30), min_size=1, max_size=6),
    others=st.sets(st.integers(31, 60), max_size=10),
    order=st.randoms(use_true_random=False),
    extra_k=st.integers(0, 5),
)
def test_equals_sklearn_when_everything_is_retrieved(relevant, others, order, extra_k):
    ranked = sorted(relevant | others)
    order.shuffle(ranked)
    k = len(ranked) + extra_k
    y_true = [int(item in relevant) for item in ranked]
    y_score = np.arange(len(ranked), 0, -1)  # strictly decreasing: no ties
    expected = average_precision_score(y_true, y_score)
    assert get_metric("map@k", k=k).corpus_score([ranked], [relevant]) == pytest.approx(
        expected, abs=ATOL
    )


def test_known_values():
    # Kaggle's apk test cases (same definition)
    assert reference_ap_at_k(set(range(1, 6)), [6, 4, 7, 1, 2], 2) == pytest.approx(0.25)
    metric = get_metric("map@2")
    assert metric.corpus_score([[6, 4, 7, 1, 2]], [list(range(1, 6))]) == pytest.approx(0.25)
    assert get_metric("map@5").corpus_score([[1, 1, 1, 1, 1]], [range(1, 6)]) == pytest.approx(0.2)
    assert get_metric("map@3").corpus_score([range(1, 6)], [[1, 3]]) == pytest.approx(5 / 6)
    assert get_metric("map@3").corpus_score([[1, 2, 1]], [[1, 2, 3]]) == pytest.approx(2 / 3)
    # string ids; a single string reference is one relevant id
    assert get_metric("map@20").corpus_score([["d3", "d1"]], ["d1"]) == pytest.approx(0.5)


def test_edge_cases():
    metric = get_metric("map@k")
    assert metric.k == 10 and metric.name == "map@10"
    assert metric.corpus_score([[]], [[1, 2]]) == 0.0  # nothing retrieved
    assert metric.corpus_score([[3, 4]], [[]]) == 0.0  # nothing relevant
    assert metric.corpus_score([[3, 4]], [[1]]) == 0.0  # all wrong
    assert metric.score(np.zeros(2)) == 0.0


def test_registry_shorthand_and_config():
    assert get_metric("MAP@20").k == 20
    metric = get_metric("map@7")
    assert get_metric(metric.name, **metric.config()).k == 7
    assert get_metric("map@k", k=3).config() == {"k": 3}
    with pytest.raises(ValueError, match="positive integer"):
        get_metric("map@k", k=0)
    with pytest.raises(UnknownMetricError):
        get_metric("map@x")


def test_unhashable_ids_raise():
    with pytest.raises(InputError, match="hashable"):
        get_metric("map@5").stats([[[1, 2]]], [[1]])
