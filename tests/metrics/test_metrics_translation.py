"""BLEU / chrF / chrF++ against sacrebleu's corpus scores."""

from __future__ import annotations

import numpy as np
import pytest
import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st
from sacrebleu.metrics import BLEU, CHRF

from glotbench.errors import InputError
from glotbench.metrics import get_metric

ATOL = 1e-9
VOCAB = ["the", "The", "cat", "sat", "on", "mat", "a", "dog", ".", ",", "mat.", "(hi)", "don't",
         "über", "Katze", "猫", "&amp;", "-", "sat,", "on"]  # fmt: skip
sentences = st.lists(st.sampled_from(VOCAB), max_size=12).map(" ".join)
free_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20)


@st.composite
def mt_data(draw, text=sentences, max_refs=3):
    n = draw(st.integers(1, 8))
    hyps = draw(st.lists(text, min_size=n, max_size=n))
    refs = []
    for _ in range(n):
        r = draw(st.lists(text, min_size=1, max_size=max_refs))
        refs.append(r[0] if len(r) == 1 and draw(st.booleans()) else r)
    return hyps, refs


def _streams(refs):
    """Per-example references -> sacrebleu's reference streams (None = no such reference)."""
    as_lists = [[r] if isinstance(r, str) else list(r) for r in refs]
    width = max(len(r) for r in as_lists)
    return [[r[j] if j < len(r) else None for r in as_lists] for j in range(width)]


def sacre_reference(factory):
    def reference(hyps, refs):
        return float(factory().corpus_score(list(hyps), _streams(refs)).score)

    return reference


def test_corpus_functions_are_the_defaults():
    hyps = ["the cat sat on the mat .", "a dog"]
    refs = [["the cat is on the mat .", "a cat sat on a mat"], "the dog"]
    assert get_metric("bleu").corpus_score(hyps, refs) == pytest.approx(
        sacrebleu.corpus_bleu(hyps, _streams(refs)).score, abs=ATOL
    )
    assert get_metric("chrf").corpus_score(hyps, refs) == pytest.approx(
        sacrebleu.corpus_chrf(hyps, _streams(refs)).score, abs=ATOL
    )
    assert get_metric("chrf++").corpus_score(hyps, refs) == pytest.approx(
        sacrebleu.corpus_chrf(hyps, _streams(refs), word_order=2).score, abs=ATOL
    )


DEFAULTS = {
    "bleu": sacre_reference(BLEU),
    "chrf": sacre_reference(CHRF),
    "chrf++": sacre_reference(lambda: CHRF(word_order=2)),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(DEFAULTS))
@settings(max_examples=60, deadline=None)
@given(data=mt_data(), seed=st.integers(0, 2**16))
def test_equals_sacrebleu(name, data, seed, check_resampled):
    hyps, refs = data
    check_resampled(get_metric(name), hyps, refs, DEFAULTS[name], seed=seed, atol=ATOL)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(DEFAULTS))
@settings(max_examples=30, deadline=None)
@given(data=mt_data(text=free_text), seed=st.integers(0, 2**16))
def test_equals_sacrebleu_free_text(name, data, seed, check_resampled):
    hyps, refs = data
    check_resampled(get_metric(name), hyps, refs, DEFAULTS[name], seed=seed, atol=ATOL)


BLEU_CONFIGS = [
    {"smooth_method": "none"},
    {"smooth_method": "floor"},
    {"smooth_method": "floor", "smooth_value": 0.3},
    {"smooth_method": "add-k"},
    {"smooth_method": "add-k", "smooth_value": 2},
    {"effective_order": True},
    {"effective_order": True, "smooth_method": "none"},
    {"lowercase": True, "tokenize": "intl"},
    {"tokenize": "char"},
    {"max_ngram_order": 2},
]


@pytest.mark.parametrize(
    "config", BLEU_CONFIGS, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items())
)
@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(data=mt_data(), seed=st.integers(0, 2**16))
def test_bleu_options_equal_sacrebleu(config, data, seed, check_resampled):
    hyps, refs = data
    metric = get_metric("bleu", **config)
    check_resampled(metric, hyps, refs, sacre_reference(lambda: BLEU(**config)), seed=seed)


CHRF_CONFIGS = [
    {"eps_smoothing": True},
    {"eps_smoothing": True, "word_order": 2},
    {"beta": 1},
    {"beta": 3, "word_order": 2},
    {"whitespace": True, "lowercase": True},
    {"char_order": 4, "word_order": 1},
    {"char_order": 0, "word_order": 2},
]


@pytest.mark.parametrize(
    "config", CHRF_CONFIGS, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items())
)
@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(data=mt_data(), seed=st.integers(0, 2**16))
def test_chrf_options_equal_sacrebleu(config, data, seed, check_resampled):
    hyps, refs = data
    metric = get_metric("chrf", **config)
    check_resampled(metric, hyps, refs, sacre_reference(lambda: CHRF(**config)), seed=seed)


def test_chrf_plus_plus_config_round_trip():
    metric = get_metric("chrf++")
    assert metric.word_order == 2 and metric.n_stats == 3 * 8
    assert get_metric(metric.name, **metric.config()).config() == metric.config()
    assert get_metric("chrf").n_stats == 18
    assert get_metric("bleu").stat_names()[:3] == ("hyp_len", "ref_len", "correct_1")


@pytest.mark.parametrize("name", sorted(DEFAULTS))
def test_edge_cases(name):
    metric = get_metric(name)
    # empty test set and zero statistics score 0
    assert metric.stats([], []).shape == (0, metric.n_stats)
    assert metric.score(np.zeros(metric.n_stats)) == 0.0
    # empty and all-wrong predictions
    for hyps in (["", ""], ["xyz qqq", "zzz"]):
        refs = ["the cat sat", ["a dog", "the dog"]]
        assert metric.corpus_score(hyps, refs) == pytest.approx(
            DEFAULTS[name](hyps, refs), abs=ATOL
        )
        assert metric.corpus_score(hyps, refs) == 0.0
    # perfect
    assert metric.corpus_score(
        ["the cat sat on the mat"], ["the cat sat on the mat"]
    ) == pytest.approx(100.0)


@pytest.mark.parametrize("name", sorted(DEFAULTS))
def test_input_errors(name):
    metric = get_metric(name)
    with pytest.raises(InputError, match="no reference"):
        metric.stats(["a"], [[]])
    with pytest.raises(InputError, match="must be a string"):
        metric.stats([None], ["a"])
    with pytest.raises(InputError, match="must be strings"):
        metric.stats(["a"], [["a", None]])


def test_bad_bleu_config():
    with pytest.raises(ValueError, match="smooth_method"):
        get_metric("bleu", smooth_method="magic")
