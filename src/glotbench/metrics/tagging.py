"""Sequence-tagging metrics: NER span F1 and token accuracy (POS tagging).

One *example* is one sentence: the prediction and the reference are sequences
of tags of equal length (a whitespace-separated string is split into tags).

NER span micro-F1
-----------------
Entity spans are extracted from IOB-style tags with the chunking rules of the
CoNLL-2000 ``conlleval`` script, as ported by seqeval
(``seqeval.metrics.sequence_labeling.get_entities`` / ``end_of_chunk`` /
``start_of_chunk``, i.e. seqeval's default, non-strict mode): a tag's first
character is its chunk tag (B, I, E, S, O, ...), the rest after the first ``-``
its type, and a chunk ends/starts where those rules say so — e.g. an ``I-``
tag after ``O`` or after a different type starts a new entity. Spans never
cross sentence boundaries (seqeval joins sentences with an ``O``).

Per sentence the statistics are ``(correct, predicted, gold)``: the number of
predicted spans identical (type, start, end) to a gold span, and the numbers of
predicted and gold spans. The score (seqeval ``f1_score(average="micro")``,
zero where undefined as seqeval's ``zero_division="warn"``/0)::

    precision = correct / predicted
    recall    = correct / gold
    F1        = 2 correct / (predicted + gold)

``ner_f1_no_misc`` is ScandEval/EuroEval's ``micro_f1_no_misc``
(``euroeval/task_group_utils/token_classification.py::compute_metrics``): every
tag whose last four characters are ``misc`` (case-insensitively: ``B-MISC``,
``I-MISC``) is replaced by ``O`` in both the predictions and the references
before the span F1 is computed. Two EuroEval conventions are *not* reproduced:
EuroEval first maps predicted tags that are not in the dataset's label set to
``MISC``/``O`` (that needs the dataset's label inventory; do it before scoring),
and it reports 1.0 when neither predictions nor references contain any entity,
where glotbench returns 0 (zero_division=0), as seqeval does.

Token accuracy
--------------
``token_accuracy`` pools tokens over sentences: statistics ``(correct tokens,
tokens)``, score ``correct / tokens`` — equal to ``sklearn.metrics.accuracy_score``
on the flattened tag lists (and to seqeval's ``accuracy_score``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from glotbench.errors import InputError
from glotbench.metrics.base import FloatArray, Metric, as_float_array, safe_divide
from glotbench.metrics.constraints import StatConstraints
from glotbench.metrics.registration import register_metric

Span = tuple[str, int, int]


def _as_tags(value: Any, what: str, metric: str, *, strings: bool = True) -> list[Any]:
    """A sentence's tags as a list (a string is split on whitespace).

    With ``strings`` every tag must be a non-empty string (IOB tags).
    """
    if isinstance(value, str):
        return value.split()
    try:
        tags = list(value)
    except TypeError:
        raise InputError(
            f"{metric}: the {what} must be a sequence of tags (one per token), got {value!r}"
        ) from None
    for tag in tags if strings else ():
        if not isinstance(tag, str) or not tag:
            raise InputError(
                f"{metric}: every tag in the {what} must be a non-empty string, got {tag!r}"
            )
    return tags


def _paired_tags(
    prediction: Any, reference: Any, metric: str, *, strings: bool = True
) -> tuple[list[Any], list[Any]]:
    pred = _as_tags(prediction, "prediction", metric, strings=strings)
    ref = _as_tags(reference, "reference", metric, strings=strings)
    if len(pred) != len(ref):
        raise InputError(
            f"{metric}: prediction has {len(pred)} tags but the reference has {len(ref)}; "
            "predict exactly one tag per gold token"
        )
    return pred, ref


def _chunk_end(prev_tag: str, tag: str, prev_type: str, type_: str) -> bool:
    # conlleval's endOfChunk, as seqeval's end_of_chunk
    if prev_tag in ("E", "S"):
        return True
    if prev_tag in ("B", "I") and tag in ("B", "S", "O"):
        return True
    return prev_tag != "O" and prev_tag != "." and prev_type != type_


def _chunk_start(prev_tag: str, tag: str, prev_type: str, type_: str) -> bool:
    # conlleval's startOfChunk, as seqeval's start_of_chunk
    if tag in ("B", "S"):
        return True
    if prev_tag in ("E", "S", "O") and tag in ("E", "I"):
        return True
    return tag != "O" and tag != "." and prev_type != type_


def iob_spans(tags: Sequence[str]) -> set[Span]:
    """Entity spans ``(type, start, end)`` (end inclusive) of one sentence's tags.

    Same chunking as seqeval's default ``get_entities`` (prefix tags, non-strict).
    One known difference on malformed input: seqeval treats a ``.`` tag as a
    conlleval sentence-boundary marker, and on a whole corpus an ``I-`` after it
    continues a chunk whose start lies in an *earlier* sentence; spans here never
    cross sentences, as per-example statistics require.
    """
    spans: set[Span] = set()
    prev_tag, prev_type, begin = "O", "", 0
    for i, chunk in enumerate([*tags, "O"]):
        tag = chunk[0]
        type_ = chunk[1:].split("-", maxsplit=1)[-1] or "_"
        if _chunk_end(prev_tag, tag, prev_type, type_):
            spans.add((prev_type, begin, i - 1))
        if _chunk_start(prev_tag, tag, prev_type, type_):
            begin = i
        prev_tag, prev_type = tag, type_
    return spans


def _drop_misc(tags: list[str]) -> list[str]:
    return ["O" if tag[-4:].lower() == "misc" else tag for tag in tags]


class _NerMetric(Metric):
    """Base of the span metrics: statistics ``(correct, predicted, gold)`` per sentence."""

    drop_misc: bool = False

    def stat_names(self) -> tuple[str, ...]:
        return ("correct", "predicted", "gold")

    def constraints(self) -> StatConstraints:
        """Span counts; correct spans ≤ predicted spans and ≤ gold spans."""
        return StatConstraints(
            counts=("correct", "predicted", "gold"),
            at_most=(("correct", "predicted"), ("correct", "gold")),
        )

    def example_stats(self, prediction: Any, reference: Any) -> FloatArray:
        pred, ref = _paired_tags(prediction, reference, self.name)
        if self.drop_misc:
            pred, ref = _drop_misc(pred), _drop_misc(ref)
        pred_spans, ref_spans = iob_spans(pred), iob_spans(ref)
        return np.array(
            [float(len(pred_spans & ref_spans)), float(len(pred_spans)), float(len(ref_spans))]
        )

    def _counts(self, summed: npt.ArrayLike) -> tuple[FloatArray, FloatArray, FloatArray]:
        arr = as_float_array(summed, 3, self.name)
        return arr[..., 0], arr[..., 1], arr[..., 2]


@register_metric("ner_f1", aliases=("span_f1", "seqeval_f1"))
class NerF1(_NerMetric):
    """Entity-span micro-F1 (seqeval default mode, conlleval chunking)."""

    name = "ner_f1"
    description = "entity span micro-F1 on IOB tags (seqeval / conlleval)"

    def score(self, summed: npt.ArrayLike) -> FloatArray:
        correct, predicted, gold = self._counts(summed)
        return safe_divide(2.0 * correct, predicted + gold)


@register_metric("ner_precision")
class NerPrecision(_NerMetric):
    """Entity-span micro-precision: correct / predicted spans."""

    name = "ner_precision"
    description = "entity span micro-precision on IOB tags (seqeval)"

    def score(self, summed: npt.ArrayLike) -> FloatArray:
        correct, predicted, _ = self._counts(summed)
        return safe_divide(correct, predicted)


@register_metric("ner_recall")
class NerRecall(_NerMetric):
    """Entity-span micro-recall: correct / gold spans."""

    name = "ner_recall"
    description = "entity span micro-recall on IOB tags (seqeval)"

    def score(self, summed: npt.ArrayLike) -> FloatArray:
        correct, _, gold = self._counts(summed)
        return safe_divide(correct, gold)


@register_metric("ner_f1_no_misc", aliases=("micro_f1_no_misc",))
class NerF1NoMisc(NerF1):
    """Entity-span micro-F1 with MISC tags mapped to O (ScandEval/EuroEval ``micro_f1_no_misc``)."""

    name = "ner_f1_no_misc"
    description = "entity span micro-F1 ignoring MISC entities (ScandEval/EuroEval)"
    drop_misc = True


@register_metric("token_accuracy", aliases=("pos_accuracy",))
class TokenAccuracy(Metric):
    """Share of correctly tagged tokens, pooled over sentences."""

    name = "token_accuracy"
    description = "share of correctly tagged tokens (e.g. UPOS accuracy)"

    def stat_names(self) -> tuple[str, ...]:
        return ("correct", "tokens")

    def constraints(self) -> StatConstraints:
        return StatConstraints(counts=("correct", "tokens"), at_most=(("correct", "tokens"),))

    def example_stats(self, prediction: Any, reference: Any) -> FloatArray:
        pred, ref = _paired_tags(prediction, reference, self.name, strings=False)
        correct = sum(p == r for p, r in zip(pred, ref, strict=True))
        return np.array([float(correct), float(len(ref))])

    def score(self, summed: npt.ArrayLike) -> FloatArray:
        arr = as_float_array(summed, 2, self.name)
        return safe_divide(arr[..., 0], arr[..., 1])
