"""Extractive QA metrics: SQuAD v1.1 token F1 and exact match.

Both follow the official SQuAD v1.1 evaluation script (``evaluate-v1.1.py``,
Rajpurkar et al. 2016):

* answers are normalised by lower-casing, removing ASCII punctuation
  (``string.punctuation``), removing the articles ``a``/``an``/``the`` (as whole
  words, regex ``\\b(a|an|the)\\b``) and collapsing whitespace — in that order;
* exact match = 1 if the normalised prediction equals a normalised gold answer;
* token F1 = harmonic mean of the bag-of-tokens precision and recall of the
  normalised prediction against a gold answer (0 when no token is shared, so an
  empty prediction or an empty gold answer scores 0, as in v1.1 — SQuAD v2.0
  would give 1 when both are empty);
* the per-example value is the maximum over the gold answers.

The score is the mean of the per-example values, on a 0–1 scale (the official
script reports 100 × this). The prediction is a string; the reference is a
string or a non-empty list of acceptable answer strings.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from typing import Any

from glotbench.errors import InputError
from glotbench.metrics.base import MeanMetric
from glotbench.metrics.registration import register_metric

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    """SQuAD v1.1 answer normalisation (lower, no punctuation, no articles, single spaces)."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def _gold_answers(reference: Any, metric: str) -> list[str]:
    answers = [reference] if isinstance(reference, str) else list(reference)
    if not answers:
        raise InputError(f"{metric}: the reference has no gold answer; give at least one string")
    for answer in answers:
        if not isinstance(answer, str):
            raise InputError(f"{metric}: gold answers must be strings, got {answer!r}")
    return answers


def _prediction(prediction: Any, metric: str) -> str:
    if not isinstance(prediction, str):
        raise InputError(f"{metric}: the prediction must be a string, got {prediction!r}")
    return prediction


def token_f1(prediction: str, gold: str) -> float:
    """SQuAD v1.1 token F1 of one prediction against one gold answer."""
    pred_tokens = normalize_answer(prediction).split()
    gold_tokens = normalize_answer(gold).split()
    same = sum((Counter(pred_tokens) & Counter(gold_tokens)).values())
    if same == 0:
        return 0.0
    precision = same / len(pred_tokens)
    recall = same / len(gold_tokens)
    return (2 * precision * recall) / (precision + recall)


@register_metric("squad_f1", aliases=("qa_f1",))
class SquadF1(MeanMetric):
    """Mean over examples of the best SQuAD v1.1 token F1 against any gold answer."""

    name = "squad_f1"
    description = "SQuAD v1.1 token F1 (max over gold answers), 0-1"

    def example_value(self, prediction: Any, reference: Any) -> float:
        pred = _prediction(prediction, self.name)
        return max(token_f1(pred, gold) for gold in _gold_answers(reference, self.name))


@register_metric("squad_exact_match", aliases=("squad_em", "qa_exact_match"))
class SquadExactMatch(MeanMetric):
    """Share of examples whose normalised prediction equals a normalised gold answer."""

    name = "squad_exact_match"
    description = "SQuAD v1.1 exact match after answer normalisation, 0-1"

    def example_value(self, prediction: Any, reference: Any) -> float:
        pred = normalize_answer(_prediction(prediction, self.name))
        golds = _gold_answers(reference, self.name)
        return float(any(pred == normalize_answer(gold) for gold in golds))
