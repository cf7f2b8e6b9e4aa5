"""SQuAD F1 / exact match against the official SQuAD v1.1 formula, written out here."""

from __future__ import annotations

import re
import string
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glotbench.errors import InputError
from glotbench.metrics import get_metric

ATOL = 1e-9


# --- the official SQuAD v1.1 evaluation (evaluate-v1.1.py), independently written ---
def _normalize_answer(s):
    def remove_articles(text):
        return re.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text):
        return " ".join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    def lower(text):
        return text.lower()

    return white_space_fix(remove_articles(remove_punc(lower(s))))


def _f1_score(prediction, ground_truth):
    prediction_tokens = _normalize_answer(prediction).split()
    ground_truth_tokens = _normalize_answer(ground_truth).split()
    common = Counter(prediction_tokens) & Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    return (2 * precision * recall) / (precision + recall)


def _exact_match_score(prediction, ground_truth):
    return _normalize_answer(prediction) == _normalize_answer(ground_truth)


def _metric_max_over_ground_truths(metric_fn, prediction, ground_truths):
    return max(metric_fn(prediction, gt) for gt in ground_truths)


def _squad(metric_fn):
    def reference(predictions, references):
        if not predictions:
            return 0.0
        total = 0.0
        for prediction, gold in zip(predictions, references, strict=True):
            golds = [gold] if isinstance(gold, str) else gold
            total += _metric_max_over_ground_truths(metric_fn, prediction, golds)
        return total / len(predictions)  # the official script reports 100 x this

    return reference


REFERENCES = {"squad_f1": _squad(_f1_score), "squad_exact_match": _squad(_exact_match_score)}

WORDS = ["the", "The", "a", "an", "An", "cat", "Cat.", "cat,", "dog", "(dog)", "a.b", "an-t",
         "thea", "1,000", "¿qué?", "Æble", "ß", "  ", "-", "\t", "the.", "A"]  # fmt: skip
answers = st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join)
free_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)


@st.composite
def qa_data(draw, text=answers):
    n = draw(st.integers(1, 10))
    preds = draw(st.lists(text, min_size=n, max_size=n))
    refs = []
    for _ in range(n):
        golds = draw(st.lists(text, min_size=1, max_size=3))
        refs.append(golds[0] if len(golds) == 1 and draw(st.booleans()) else golds)
    return preds, refs


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(REFERENCES))
@settings(max_examples=80, deadline=None)
@given(data=qa_data(), seed=st.integers(0, 2**16))
def test_squad_equals_official_formula(name, data, seed, check_resampled):
    preds, refs = data
    check_resampled(get_metric(name), preds, refs, REFERENCES[name], seed=seed, atol=ATOL)


@pytest.mark.parametrize("name", sorted(REFERENCES))
@settings(max_examples=50, deadline=None)
@given(data=qa_data(text=free_text), seed=st.integers(0, 2**16))
def test_squad_free_text(name, data, seed, check_resampled):
    preds, refs = data
    check_resampled(get_metric(name), preds, refs, REFERENCES[name], seed=seed, atol=ATOL)


def test_squad_examples():
    f1, em = get_metric("squad_f1"), get_metric("squad_exact_match")
    assert em.corpus_score(["The Cat!"], [["a dog", "cat"]]) == 1.0
    assert f1.corpus_score(["the black cat"], ["cat"]) == pytest.approx(2 * 0.5 * 1 / 1.5)
    # empty prediction / empty answer score 0 (SQuAD v1.1; v2.0 would give 1 for both empty)
    assert f1.corpus_score([""], ["cat"]) == 0.0
    assert f1.corpus_score([""], [""]) == 0.0
    assert em.corpus_score([""], [""]) == 1.0
    assert em.corpus_score(["the"], ["a"]) == 1.0  # both normalise to ""
    # all wrong
    assert f1.corpus_score(["x", "y"], ["z", "w"]) == 0.0
    assert em.is_mean and f1.is_mean


def test_squad_input_errors():
    f1 = get_metric("squad_f1")
    with pytest.raises(InputError, match="no gold answer"):
        f1.stats(["cat"], [[]])
    with pytest.raises(InputError, match="must be a string"):
        f1.stats([None], ["cat"])
    with pytest.raises(InputError, match="must be strings"):
        f1.stats(["cat"], [[1]])
