"""Classification metrics from per-class counts.

Every example contributes to three per-class count vectors over the label set
``labels`` (L labels): ``tp`` (reference = prediction = class), ``pred``
(prediction = class) and ``true`` (reference = class). These 3L sums are
sufficient for accuracy, per-class precision/recall/F1 with micro and macro
averaging, and multiclass Matthews correlation:

* precision_c = tp_c / pred_c, recall_c = tp_c / true_c,
  F1_c = 2 tp_c / (pred_c + true_c) (0 where undefined, scikit-learn's
  ``zero_division=0``);
* macro averages are taken over the labels present in the references or
  predictions *of the (re)sample*, as ``sklearn.metrics.f1_score(average="macro")``
  does when ``labels`` is not given;
* micro averages pool the counts (for single-label multiclass data micro-F1
  equals accuracy);
* MCC (Gorodkin 2004, the R_K statistic; scikit-learn's multiclass formula):
  ``(c·s − Σ p_k t_k) / sqrt((s² − Σ p_k²)(s² − Σ t_k²))`` with c correct, s examples.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from glotbench.errors import InputError
from glotbench.metrics.base import FloatArray, MeanMetric, Metric, as_float_array, safe_divide
from glotbench.metrics.constraints import StatConstraints
from glotbench.metrics.registration import register_metric


@register_metric("accuracy", aliases=("acc",))
class Accuracy(MeanMetric):
    """Share of examples whose prediction equals the reference."""

    name = "accuracy"
    description = "share of exactly correct predictions"

    def example_value(self, prediction: Any, reference: Any) -> float:
        return float(prediction == reference)

    def stats(self, predictions: Sequence[Any], references: Sequence[Any]) -> FloatArray:
        if len(predictions) != len(references):
            return super().stats(predictions, references)  # raises the clear error
        correct = np.fromiter(
            (p == r for p, r in zip(predictions, references, strict=True)),
            dtype=np.float64,
            count=len(references),
        )
        return self.stats_from_values(correct)


class _CountsMetric(Metric):
    """Base of the metrics built on per-class (tp, pred, true) counts."""

    average: str = "macro"

    def __init__(self, labels: Sequence[Any] | None = None) -> None:
        self.labels: tuple[Any, ...] | None = tuple(labels) if labels is not None else None

    def config(self) -> dict[str, Any]:
        return {"labels": list(self.labels) if self.labels is not None else None}

    def fit(self, predictions: Sequence[Any], references: Sequence[Any]) -> Metric:
        if self.labels is not None:
            return self
        seen = set(references) | set(predictions)
        try:
            labels = sorted(seen)
        except TypeError:  # mixed, unorderable label types
            labels = sorted(seen, key=repr)
        return type(self)(labels=labels)

    def _require_labels(self) -> tuple[Any, ...]:
        if self.labels is None:
            raise InputError(
                f"{self.name}: the label set is unknown; call .fit(predictions, references) "
                "or pass labels=[...]"
            )
        return self.labels

    def stat_names(self) -> tuple[str, ...]:
        labels = self._require_labels()
        return tuple(f"{kind}[{label}]" for kind in ("tp", "pred", "true") for label in labels)

    def example_stats(self, prediction: Any, reference: Any) -> FloatArray:
        return self.stats([prediction], [reference])[0]

    def constraints(self) -> StatConstraints:
        """Counts; a class's true positives ≤ its predictions and ≤ its gold examples."""
        labels = self._require_labels()
        names = self.stat_names()
        pairs = tuple(
            (f"tp[{label}]", f"{other}[{label}]") for label in labels for other in ("pred", "true")
        )
        return StatConstraints(counts=names, at_most=pairs)

    def stats(self, predictions: Sequence[Any], references: Sequence[Any]) -> FloatArray:
        labels = self._require_labels()
        if len(predictions) != len(references):
            return super().stats(predictions, references)
        index = {label: i for i, label in enumerate(labels)}
        n, n_labels = len(references), len(labels)
        try:
            ref_idx = np.fromiter((index[r] for r in references), dtype=np.int64, count=n)
            pred_idx = np.fromiter((index.get(p, -1) for p in predictions), dtype=np.int64, count=n)
        except KeyError as exc:
            raise InputError(
                f"{self.name}: reference label {exc.args[0]!r} not in labels"
            ) from None
        out = np.zeros((n, 3 * n_labels), dtype=np.float64)
        rows = np.arange(n)
        correct = ref_idx == pred_idx
        out[rows[correct], ref_idx[correct]] = 1.0
        known = pred_idx >= 0  # a prediction outside the label set counts as wrong
        out[rows[known], n_labels + pred_idx[known]] = 1.0
        out[rows, 2 * n_labels + ref_idx] = 1.0
        return out

    def _split(self, summed: npt.ArrayLike) -> tuple[FloatArray, FloatArray, FloatArray]:
        n_labels = len(self._require_labels())
        arr = as_float_array(summed, 3 * n_labels, self.name)
        return arr[..., :n_labels], arr[..., n_labels : 2 * n_labels], arr[..., 2 * n_labels :]

    def _per_class(
        self, summed: npt.ArrayLike
    ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        """Per-class precision, recall, F1 and the 'label present' mask."""
        tp, pred, true = self._split(summed)
        precision = safe_divide(tp, pred)
        recall = safe_divide(tp, true)
        f1 = safe_divide(2.0 * tp, pred + true)
        present = ((pred + true) > 0).astype(np.float64)
        return precision, recall, f1, present

    def _macro(self, per_class: FloatArray, present: FloatArray) -> FloatArray:
        return safe_divide((per_class * present).sum(axis=-1), present.sum(axis=-1))


def _register_prf(kind: str, index: int) -> None:
    for average in ("macro", "micro"):

        class _PRF(_CountsMetric):
            name = f"{kind}_{average}"
            description = f"{kind} with {average} averaging over classes"

            def score(
                self, summed: npt.ArrayLike, _i: int = index, _avg: str = average
            ) -> FloatArray:
                if _avg == "macro":
                    *values, present = self._per_class(summed)
                    return self._macro(values[_i], present)
                tp, pred, true = (part.sum(axis=-1) for part in self._split(summed))
                micro = (
                    safe_divide(tp, pred),
                    safe_divide(tp, true),
                    safe_divide(2 * tp, pred + true),
                )
                return micro[_i]

        _PRF.__name__ = _PRF.__qualname__ = f"{kind.capitalize()}{average.capitalize()}"
        globals()[_PRF.__name__] = _PRF  # a module attribute, so instances pickle
        aliases = (kind,) if (kind == "f1" and average == "macro") else ()
        register_metric(_PRF.name, aliases=aliases)(_PRF)


for _index, _kind in enumerate(("precision", "recall", "f1")):
    _register_prf(_kind, _index)


@register_metric("mcc", aliases=("matthews_corrcoef",))
class MatthewsCorrelation(_CountsMetric):
    """Multiclass Matthews correlation coefficient (Gorodkin's R_K), as scikit-learn."""

    name = "mcc"
    description = "Matthews correlation coefficient (multiclass R_K)"
    score_range = (-1.0, 1.0)

    def score(self, summed: npt.ArrayLike) -> FloatArray:
        tp, pred, true = self._split(summed)
        correct = tp.sum(axis=-1)
        total = true.sum(axis=-1)
        cov_true_pred = correct * total - (pred * true).sum(axis=-1)
        cov_pred_pred = total**2 - (pred**2).sum(axis=-1)
        cov_true_true = total**2 - (true**2).sum(axis=-1)
        return safe_divide(cov_true_pred, np.sqrt(cov_true_true * cov_pred_pred))
