"""Dependency-parsing metrics: LAS and UAS on gold tokenisation.

One example is one sentence. The prediction and the reference are sequences of
``(head, deprel)`` pairs, one per syntactic word, of equal length; ``head`` is
the 1-based index of the governing word (0 = root). Items may also be
mappings with ``"head"`` and ``"deprel"`` keys, such as the tokens of a
``conllu.TokenList``; items of such a list whose ``"id"`` is not an integer
(multi-word token ranges, empty nodes) are skipped, as in CoNLL-U evaluation.

Following the CoNLL 2018 shared task evaluation script (``conll18_ud_eval.py``,
Zeman et al. 2018), only the universal part of a relation label is compared:
``deprel.split(":")[0]`` (so ``nmod:poss`` matches ``nmod``). With gold
tokenisation every word is aligned, so precision = recall = F1 and

* UAS = words with the correct head / words;
* LAS = words with the correct head *and* universal relation / words.

Statistics per sentence: ``(correct, words)``; score ``correct / words``
(0 for an empty test set).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from glotbench.errors import InputError
from glotbench.metrics.base import FloatArray, Metric, as_float_array, safe_divide
from glotbench.metrics.constraints import StatConstraints
from glotbench.metrics.registration import register_metric


def _head_index(head: Any) -> int | None:
    """``head`` as an int (ints, integral floats and digit strings), else None."""
    if isinstance(head, bool):
        return None
    if isinstance(head, int | np.integer):
        value = int(head)
    elif isinstance(head, float | np.floating) and float(head).is_integer():
        value = int(head)
    elif isinstance(head, str) and head.strip().isdigit():
        value = int(head)
    else:
        return None
    return value if value >= 0 else None


def _arcs(value: Any, what: str, metric: str) -> list[tuple[int, str]]:
    """``(head, universal deprel)`` of every syntactic word of a sentence."""
    if isinstance(value, str):
        raise InputError(
            f"{metric}: the {what} must be a sequence of (head, deprel) pairs, got a string"
        )
    try:
        items = list(value)
    except TypeError:
        raise InputError(
            f"{metric}: the {what} must be a sequence of (head, deprel) pairs, got {value!r}"
        ) from None
    arcs: list[tuple[int, str]] = []
    for position, item in enumerate(items, start=1):
        if isinstance(item, Mapping):
            if "id" in item and not isinstance(item["id"], int | np.integer):
                continue  # multi-word token range or empty node
            try:
                head, deprel = item["head"], item["deprel"]
            except KeyError:
                raise InputError(
                    f"{metric}: word {position} of the {what} lacks a 'head' or 'deprel' field"
                ) from None
        else:
            try:
                head, deprel = item
            except (TypeError, ValueError):
                raise InputError(
                    f"{metric}: word {position} of the {what} must be a (head, deprel) pair, "
                    f"got {item!r}"
                ) from None
        head_index = _head_index(head)
        if head_index is None:
            raise InputError(
                f"{metric}: word {position} of the {what} has a head {head!r} that is not a "
                "non-negative integer"
            )
        arcs.append((head_index, str(deprel).split(":")[0]))
    return arcs


class _AttachmentScore(Metric):
    """Base of LAS/UAS: statistics ``(correct, words)`` per sentence."""

    labelled: bool = True

    def stat_names(self) -> tuple[str, ...]:
        return ("correct", "words")

    def constraints(self) -> StatConstraints:
        return StatConstraints(counts=("correct", "words"), at_most=(("correct", "words"),))

    def example_stats(self, prediction: Any, reference: Any) -> FloatArray:
        pred = _arcs(prediction, "prediction", self.name)
        gold = _arcs(reference, "reference", self.name)
        if len(pred) != len(gold):
            raise InputError(
                f"{self.name}: prediction has {len(pred)} words but the reference has "
                f"{len(gold)}; {self.name} needs gold tokenisation (one (head, deprel) pair "
                "per gold word)"
            )
        if self.labelled:
            correct = sum(p == g for p, g in zip(pred, gold, strict=True))
        else:
            correct = sum(p[0] == g[0] for p, g in zip(pred, gold, strict=True))
        return np.array([float(correct), float(len(gold))])

    def score(self, summed: npt.ArrayLike) -> FloatArray:
        arr = as_float_array(summed, 2, self.name)
        return safe_divide(arr[..., 0], arr[..., 1])


@register_metric("las")
class LabeledAttachmentScore(_AttachmentScore):
    """Labelled attachment score (CoNLL 2018: universal deprel, gold tokenisation)."""

    name = "las"
    description = "labelled attachment score (CoNLL 2018, universal relations)"
    labelled = True


@register_metric("uas")
class UnlabeledAttachmentScore(_AttachmentScore):
    """Unlabelled attachment score: share of words with the correct head."""

    name = "uas"
    description = "unlabelled attachment score (CoNLL 2018)"
    labelled = False
