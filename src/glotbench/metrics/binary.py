"""Binary precision, recall and F1 for one positive label.

Every example contributes ``(tp, fp, fn)`` with respect to ``pos_label``
(default ``1``):

* ``tp`` = prediction = reference = ``pos_label``;
* ``fp`` = prediction = ``pos_label`` ≠ reference;
* ``fn`` = reference = ``pos_label`` ≠ prediction.

From the summed counts (scikit-learn's ``average="binary"`` definitions,
``sklearn.metrics.precision_recall_fscore_support``, with ``zero_division=0``)::

    precision = tp / (tp + fp)
    recall    = tp / (tp + fn)
    F1        = 2 tp / (2 tp + fp + fn)

``f1_binary`` is what lm-evaluation-harness's ``f1`` metric reports (it calls
``sklearn.metrics.f1_score(golds, preds)`` with the default binary average).
Unlike scikit-learn, labels other than ``pos_label`` need not be binary: every
label that is not ``pos_label`` is treated as negative (one-vs-rest) instead of
raising an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from glotbench.metrics.base import FloatArray, Metric, as_float_array, safe_divide
from glotbench.metrics.constraints import StatConstraints
from glotbench.metrics.registration import register_metric


class _BinaryMetric(Metric):
    """Base of the metrics built on ``(tp, fp, fn)`` for one positive label."""

    def __init__(self, pos_label: Any = 1) -> None:
        self.pos_label = pos_label

    def config(self) -> dict[str, Any]:
        return {"pos_label": self.pos_label}

    def stat_names(self) -> tuple[str, ...]:
        return ("tp", "fp", "fn")

    def constraints(self) -> StatConstraints:
        return StatConstraints(counts=("tp", "fp", "fn"))

    def example_stats(self, prediction: Any, reference: Any) -> FloatArray:
        pred_pos = prediction == self.pos_label
        ref_pos = reference == self.pos_label
        return np.array(
            [
                float(pred_pos and ref_pos),
                float(pred_pos and not ref_pos),
                float(ref_pos and not pred_pos),
            ]
        )

    def stats(self, predictions: Sequence[Any], references: Sequence[Any]) -> FloatArray:
        if len(predictions) != len(references):
            return super().stats(predictions, references)  # raises the clear error
        n = len(references)
        pred_pos = np.fromiter((p == self.pos_label for p in predictions), dtype=bool, count=n)
        ref_pos = np.fromiter((r == self.pos_label for r in references), dtype=bool, count=n)
        return (
            np.column_stack([pred_pos & ref_pos, pred_pos & ~ref_pos, ref_pos & ~pred_pos])
            .astype(np.float64)
            .reshape(n, 3)
        )

    def _counts(self, summed: npt.ArrayLike) -> tuple[FloatArray, FloatArray, FloatArray]:
        arr = as_float_array(summed, 3, self.name)
        return arr[..., 0], arr[..., 1], arr[..., 2]


@register_metric("f1_binary")
class F1Binary(_BinaryMetric):
    """F1 of the positive class: ``2 tp / (2 tp + fp + fn)`` (sklearn ``average="binary"``)."""

    name = "f1_binary"
    description = "F1 of the positive label (sklearn average='binary', lm-eval-harness 'f1')"

    def score(self, summed: npt.ArrayLike) -> FloatArray:
        tp, fp, fn = self._counts(summed)
        return safe_divide(2.0 * tp, 2.0 * tp + fp + fn)


@register_metric("precision_binary")
class PrecisionBinary(_BinaryMetric):
    """Precision of the positive class: ``tp / (tp + fp)``."""

    name = "precision_binary"
    description = "precision of the positive label (sklearn average='binary')"

    def score(self, summed: npt.ArrayLike) -> FloatArray:
        tp, fp, _ = self._counts(summed)
        return safe_divide(tp, tp + fp)


@register_metric("recall_binary")
class RecallBinary(_BinaryMetric):
    """Recall of the positive class: ``tp / (tp + fn)``."""

    name = "recall_binary"
    description = "recall of the positive label (sklearn average='binary')"

    def score(self, summed: npt.ArrayLike) -> FloatArray:
        tp, _, fn = self._counts(summed)
        return safe_divide(tp, tp + fn)
