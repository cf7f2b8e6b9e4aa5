"""NER span metrics against seqeval, token accuracy against scikit-learn."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from seqeval import metrics as sq
from seqeval.metrics.sequence_labeling import get_entities
from sklearn.metrics import accuracy_score

from glotbench.errors import InputError
from glotbench.metrics import get_metric
from glotbench.metrics.tagging import iob_spans

ATOL = 1e-9
IOB2 = ["O", "O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG", "B-MISC", "I-MISC"]
# conlleval also chunks IOB1/IOE/IOBES and odd tags; seqeval's default mode accepts them all
# "." is left out: seqeval treats it as a conlleval sentence-boundary tag and, in a corpus,
# carries a stale chunk start across sentences after it, which no per-sentence (additive)
# statistic can reproduce; see the metric's docstring.
ODD = ["E-PER", "S-LOC", "E-MISC", "S-MISC", "B", "I", "O", "I-", "B-misc", "I-B-X"]


@st.composite
def tag_corpora(draw, alphabet=IOB2, min_sentences=1):
    n = draw(st.integers(min_sentences, 8))
    preds, refs = [], []
    for _ in range(n):
        length = draw(st.integers(0, 9))
        refs.append(draw(st.lists(st.sampled_from(alphabet), min_size=length, max_size=length)))
        preds.append(draw(st.lists(st.sampled_from(alphabet), min_size=length, max_size=length)))
    return preds, refs


def _seqeval(fn):
    def reference(preds, refs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return float(fn([list(r) for r in refs], [list(p) for p in preds]))

    return reference


def _no_misc(sentences):
    # EuroEval's compute_metrics: tags ending in "misc" become "o" in predictions and labels
    return [["O" if tag[-4:].lower() == "misc" else tag for tag in s] for s in sentences]


REFERENCES = {
    "ner_f1": _seqeval(sq.f1_score),
    "ner_precision": _seqeval(sq.precision_score),
    "ner_recall": _seqeval(sq.recall_score),
    "ner_f1_no_misc": lambda p, r: _seqeval(sq.f1_score)(_no_misc(p), _no_misc(r)),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(REFERENCES))
@settings(max_examples=50, deadline=None)
@given(data=tag_corpora(), seed=st.integers(0, 2**16))
def test_ner_equals_seqeval(name, data, seed, check_resampled):
    preds, refs = data
    check_resampled(get_metric(name), preds, refs, REFERENCES[name], seed=seed, atol=ATOL)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["ner_f1", "ner_f1_no_misc"])
@settings(max_examples=40, deadline=None)
@given(data=tag_corpora(alphabet=IOB2 + ODD), seed=st.integers(0, 2**16))
def test_ner_odd_tags_equal_seqeval(name, data, seed, check_resampled):
    preds, refs = data
    check_resampled(get_metric(name), preds, refs, REFERENCES[name], seed=seed, atol=ATOL)


@settings(max_examples=80, deadline=None)
@given(tags=st.lists(st.sampled_from(IOB2 + ODD), max_size=15))
def test_span_extraction_equals_seqeval_get_entities(tags):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = set(get_entities(list(tags)))
    assert iob_spans(tags) == expected


def test_known_example():
    # seqeval README example
    refs = [["O", "O", "O", "B-MISC", "I-MISC", "I-MISC", "O"], ["B-PER", "I-PER", "O"]]
    preds = [["O", "O", "B-MISC", "I-MISC", "I-MISC", "I-MISC", "O"], ["B-PER", "I-PER", "O"]]
    assert get_metric("ner_f1").corpus_score(preds, refs) == pytest.approx(0.5)
    assert get_metric("ner_f1_no_misc").corpus_score(preds, refs) == pytest.approx(1.0)
    stats = get_metric("ner_f1").stats(preds, refs)
    np.testing.assert_array_equal(stats, [[0, 1, 1], [1, 1, 1]])


def test_ner_edge_cases():
    f1 = get_metric("ner_f1")
    # no entities anywhere: zero_division = 0 (EuroEval would report 1.0 here)
    assert f1.corpus_score([["O", "O"]], [["O", "O"]]) == 0.0
    assert f1.corpus_score([[]], [[]]) == 0.0
    # all wrong
    assert f1.corpus_score([["B-PER", "O"]], [["O", "B-LOC"]]) == 0.0
    # empty predictions: recall 0, precision undefined -> 0
    assert get_metric("ner_precision").corpus_score([["O"]], [["B-PER"]]) == 0.0
    # whitespace-separated strings are accepted
    assert f1.corpus_score(["B-PER I-PER O"], ["B-PER I-PER O"]) == 1.0
    # the span is per sentence: an entity at the end of one sentence does not continue
    assert f1.corpus_score([["B-PER"], ["I-PER"]], [["B-PER"], ["B-PER"]]) == 1.0


def test_ner_input_errors():
    f1 = get_metric("ner_f1")
    with pytest.raises(InputError, match="2 tags but the reference has 3"):
        f1.stats([["O", "O"]], [["O", "O", "O"]])
    with pytest.raises(InputError, match="non-empty string"):
        f1.stats([["O", ""]], [["O", "O"]])
    with pytest.raises(InputError, match="non-empty string"):
        f1.stats([[1, 2]], [["O", "O"]])


@settings(max_examples=50, deadline=None)
@given(
    data=tag_corpora(alphabet=["NOUN", "VERB", "ADJ", "DET", "PUNCT"]), seed=st.integers(0, 2**16)
)
@pytest.mark.slow
def test_token_accuracy_equals_sklearn(data, seed, check_resampled):
    preds, refs = data

    def reference(p, r):
        gold, pred = [t for s in r for t in s], [t for s in p for t in s]
        return float(accuracy_score(gold, pred)) if gold else 0.0  # sklearn rejects no tokens

    check_resampled(get_metric("token_accuracy"), preds, refs, reference, seed=seed, atol=ATOL)


def test_token_accuracy_edge_cases():
    acc = get_metric("token_accuracy")
    assert acc.corpus_score([[]], [[]]) == 0.0
    assert acc.corpus_score([["A", "B"]], [["B", "A"]]) == 0.0
    assert acc.corpus_score([[1, 2, 3]], [[1, 2, 4]]) == pytest.approx(2 / 3)  # any tag values
    with pytest.raises(InputError, match="one tag per gold token"):
        acc.stats([["A"]], [["A", "B"]])
