"""The metric contract, for every registered metric.

* ``score`` is vectorised over any leading axes: ``score(W @ S)`` for a
  (B × n) — or (a × b × n) — weight array equals scoring each row in a loop;
* ``stats`` has one row of ``n_stats`` finite, non-negative floats per example;
* ``get_metric(m.name, **m.config())`` rebuilds an equivalent metric;
* every metric is documented in docs/metrics.md.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from glotbench.errors import UnknownMetricError
from glotbench.metrics import get_metric, metric_names

_TAGS = [["B-PER", "I-PER", "O"], ["O", "B-LOC"], ["B-MISC", "O", "B-ORG"], [], ["B-PER"]]
_TAGS_PRED = [["B-PER", "I-PER", "O"], ["B-LOC", "B-LOC"], ["B-MISC", "O", "O"], [], ["I-PER"]]
_LABELS = ([0, 1, 2, 1, 0, 2, 1], [0, 2, 2, 1, 1, 2, 0])
_BINARY = ([1, 0, 1, 1, 0, 0, 1], [1, 1, 0, 1, 0, 1, 1])
_MT = (
    ["the cat sat on the mat .", "a dog", "", "hello world !", "the the the"],
    [["the cat is on the mat .", "a cat sat"], "the dog", "nothing", "hello , world !", "the cat"],
)
_TREES = (
    [[(0, "root"), (1, "obj")], [(2, "nsubj"), (0, "root"), (2, "obl")], [(0, "root")]],
    [[(0, "root"), (1, "nmod")], [(2, "nsubj:pass"), (0, "root"), (1, "obl")], [(0, "root")]],
)
SAMPLES: dict[str, tuple[list[Any], list[Any]]] = {
    "accuracy": _LABELS,
    "f1_macro": _LABELS,
    "f1_micro": _LABELS,
    "precision_macro": _LABELS,
    "precision_micro": _LABELS,
    "recall_macro": _LABELS,
    "recall_micro": _LABELS,
    "mcc": _LABELS,
    "f1_binary": _BINARY,
    "precision_binary": _BINARY,
    "recall_binary": _BINARY,
    "ner_f1": (_TAGS_PRED, _TAGS),
    "ner_precision": (_TAGS_PRED, _TAGS),
    "ner_recall": (_TAGS_PRED, _TAGS),
    "ner_f1_no_misc": (_TAGS_PRED, _TAGS),
    "token_accuracy": (_TAGS_PRED, _TAGS),
    "squad_f1": (["the cat", "Dog!", "", "a b c"], [["cat", "a cat"], "dog", "x", ["b c d"]]),
    "squad_exact_match": (["the cat", "Dog!", "", "a b c"], [["cat", "a cat"], "dog", "x", ["b"]]),
    "bleu": _MT,
    "chrf": _MT,
    "chrf++": _MT,
    "las": _TREES,
    "uas": _TREES,
    "map@k": ([[1, 2, 3], [4, 1], [], [2, 2, 5]], [[1, 3], [1], [7], {5}]),
}


def test_every_metric_has_sample_data():
    missing = sorted(set(metric_names()) - set(SAMPLES))
    assert not missing, f"add sample data for {missing} to SAMPLES"


def _fitted(name: str):
    preds, refs = SAMPLES[name]
    return get_metric(name).fit(preds, refs), preds, refs


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_stats_shape(name):
    metric, preds, refs = _fitted(name)
    stats = metric.stats(preds, refs)
    assert stats.shape == (len(refs), metric.n_stats) == (len(refs), len(metric.stat_names()))
    assert stats.dtype == np.float64
    assert np.isfinite(stats).all() and (stats >= 0).all()
    np.testing.assert_array_equal(stats[0], metric.example_stats(preds[0], refs[0]))


@pytest.mark.parametrize("name", sorted(SAMPLES))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_score_is_vectorised_over_leading_axes(name, seed):
    metric, preds, refs = _fitted(name)
    stats = metric.stats(preds, refs)
    n = len(refs)
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(n, np.full(n, 1.0 / n), size=12).astype(np.float64)
    weights[0] = 0.0  # an empty resample
    weights[1] = rng.random(n)  # non-integer weights are allowed too
    batch = metric.score(weights @ stats)
    assert batch.shape == (12,)
    loop = np.array([float(metric.score(w @ stats)) for w in weights])
    np.testing.assert_allclose(batch, loop, rtol=0, atol=1e-12)
    assert np.isfinite(batch).all()
    # any number of leading axes
    cube = weights.reshape(3, 4, n)
    scored = metric.score(cube @ stats)
    assert scored.shape == (3, 4)
    np.testing.assert_allclose(scored.reshape(-1), loop, rtol=0, atol=1e-12)
    # a 0-d score for a single summed vector
    assert np.ndim(metric.score(stats.sum(axis=0))) == 0


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_score_rejects_wrong_width(name):
    metric, _, _ = _fitted(name)
    with pytest.raises(ValueError, match="statistics on the last axis"):
        metric.score(np.zeros(metric.n_stats + 1))


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_config_round_trip(name):
    metric, preds, refs = _fitted(name)
    rebuilt = get_metric(metric.name, **metric.config())
    assert rebuilt.config() == metric.config()
    np.testing.assert_allclose(rebuilt.stats(preds, refs), metric.stats(preds, refs))
    assert metric.higher_is_better
    assert metric.description


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_picklable(name):
    # metrics travel to worker processes (bootstrap chunks, distributed runs)
    metric, preds, refs = _fitted(name)
    stats = metric.stats(preds, refs)
    clone = pickle.loads(pickle.dumps(metric))
    np.testing.assert_array_equal(clone.stats(preds, refs), stats)
    assert clone.score(stats.sum(0)) == metric.score(stats.sum(0))


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_length_mismatch_is_an_input_error(name):
    from glotbench.errors import InputError

    metric, preds, refs = _fitted(name)
    with pytest.raises(InputError):
        metric.stats(preds[:-1], refs)


def test_aliases():
    assert get_metric("span_f1").name == "ner_f1"
    assert get_metric("micro_f1_no_misc").name == "ner_f1_no_misc"
    assert get_metric("squad_em").name == "squad_exact_match"
    assert get_metric("chrfpp").name == "chrf++"
    assert get_metric("sacrebleu").name == "bleu"
    # "f1" stays macro-F1; binary F1 (lm-eval-harness's f1) has its own name
    assert get_metric("f1").name == "f1_macro"
    # no ambiguous "exact_match": raw equality is "accuracy", normalised is "squad_exact_match"
    with pytest.raises(UnknownMetricError):
        get_metric("exact_match")


def test_documented():
    doc = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"
    text = doc.read_text(encoding="utf-8")
    for name in metric_names():
        assert f"`{name}`" in text, f"{name} missing from docs/metrics.md"
