"""The metric interface: per-example additive sufficient statistics.

A metric is two functions (see ``DESIGN.md``):

* ``stats(predictions, references) -> (n, k)`` float matrix, one row per example,
  whose column sums are sufficient for the corpus-level score;
* ``score(summed[..., k]) -> [...]`` vectorised over any leading axes, so that
  ``score(W @ S)`` scores every bootstrap replicate at once.

The score of a test set is therefore ``score(S.sum(0))``, a bootstrap replicate
is ``score(w @ S)`` and a bucket is ``score(mask @ S)``: no metric is ever
recomputed from raw text inside a resampling loop.

Metrics whose statistics depend on a label inventory (macro-F1, MCC) are
*configured* instances: :meth:`Metric.fit` returns a copy bound to the labels
seen in the data, as scikit-learn estimators are fitted.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from glotbench.errors import InputError
from glotbench.metrics.constraints import StatConstraints, StatProblem, check_stats

FloatArray = npt.NDArray[np.float64]


class Metric(ABC):
    """Base class of every metric in the registry.

    Subclasses set :attr:`name` and implement :meth:`stat_names`,
    :meth:`example_stats` (one example) and :meth:`score`. :meth:`stats`
    stacks :meth:`example_stats`; override it where a vectorised path exists.
    """

    #: registry name, e.g. ``"f1_macro"``
    name: str = ""
    #: one-line description shown by ``glotbench metrics``
    description: str = ""
    #: whether larger scores are better (all built-in metrics: True)
    higher_is_better: bool = True
    #: True when the score is the mean of one per-example value, i.e. the
    #: statistics are ``(value, 1)``. Such metrics can be imported from a
    #: single per-example ``score`` column.
    is_mean: bool = False
    #: the closed interval every score of this metric lies in, on the scale the
    #: store uses: 0–1 for shares (accuracy, F1, LAS...), −1–1 for MCC, 0–100 for
    #: BLEU/chrF (sacrebleu's scale). Aggregate scores outside it are rejected.
    score_range: tuple[float, float] = (0.0, 1.0)

    # -- statistics -------------------------------------------------------
    @abstractmethod
    def stat_names(self) -> tuple[str, ...]:
        """Names of the k statistic columns, in order."""

    @property
    def n_stats(self) -> int:
        """Number k of sufficient statistics per example."""
        return len(self.stat_names())

    @abstractmethod
    def example_stats(self, prediction: Any, reference: Any) -> FloatArray:
        """Statistics vector (length k) of one example."""

    def constraints(self) -> StatConstraints:
        """What valid per-example statistics satisfy (see :mod:`glotbench.metrics.constraints`).

        The default declares nothing; every built-in metric overrides it.
        """
        return StatConstraints()

    def check_stats(self, stats: npt.ArrayLike) -> list[StatProblem]:
        """Problems of an (n × k) statistics matrix; empty when every row is valid."""
        return check_stats(self.name, self.stat_names(), self.constraints(), np.asarray(stats))

    def stats(self, predictions: Sequence[Any], references: Sequence[Any]) -> FloatArray:
        """Statistics matrix (n × k) of a list of examples."""
        if len(predictions) != len(references):
            raise InputError(
                f"{self.name}: {len(predictions)} predictions but {len(references)} references; "
                "pass one prediction per reference"
            )
        k = self.n_stats
        out = np.empty((len(predictions), k), dtype=np.float64)
        for i, (p, r) in enumerate(zip(predictions, references, strict=True)):
            out[i] = self.example_stats(p, r)
        return out

    # -- scoring ----------------------------------------------------------
    @abstractmethod
    def score(self, summed: npt.ArrayLike) -> FloatArray:
        """Score from summed statistics ``summed[..., k]``; returns shape ``[...]``."""

    def corpus_score(self, predictions: Sequence[Any], references: Sequence[Any]) -> float:
        """Score of a whole test set: ``score(stats(...).sum(0))``."""
        return float(self.score(self.stats(predictions, references).sum(axis=0)))

    def parse_line(self, line: str) -> Any:
        """One prediction or reference from a line of a plain-text file.

        The default is the stripped line (a label or a sentence); metrics over
        sequences override this to split the line on whitespace.
        """
        return line.strip()

    # -- configuration ----------------------------------------------------
    def fit(self, predictions: Sequence[Any], references: Sequence[Any]) -> Metric:
        """Return a metric bound to what the data need (e.g. the label set).

        Metrics without data-dependent configuration return ``self``.
        """
        return self

    def config(self) -> dict[str, Any]:
        """JSON-serialisable configuration; ``get_metric(name, **config)`` rebuilds it."""
        return {}

    def __repr__(self) -> str:
        cfg = ", ".join(f"{k}={v!r}" for k, v in self.config().items())
        return f"{type(self).__name__}({cfg})"


def as_float_array(summed: npt.ArrayLike, k: int, name: str) -> FloatArray:
    """Check that ``summed`` has k statistics on its last axis."""
    arr = np.asarray(summed, dtype=np.float64)
    if arr.shape[-1:] != (k,):
        raise InputError(f"{name}: expected {k} statistics on the last axis, got shape {arr.shape}")
    return arr


def safe_divide(numerator: npt.ArrayLike, denominator: npt.ArrayLike) -> FloatArray:
    """``numerator / denominator`` with 0 where the denominator is 0 (sklearn's zero_division=0)."""
    num = np.asarray(numerator, dtype=np.float64)
    den = np.asarray(denominator, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out


class MeanMetric(Metric):
    """A metric that is the mean of one per-example value: statistics ``(value, 1)``.

    Accuracy, exact match, SQuAD F1 and AP@k are of this kind.
    """

    is_mean = True

    def stat_names(self) -> tuple[str, ...]:
        return ("value", "count")

    def constraints(self) -> StatConstraints:
        """``count`` is a count; ``value`` is ``count`` values in :attr:`score_range`."""
        lo, hi = self.score_range
        return StatConstraints(counts=("count",), value_range=("value", "count", lo, hi))

    @abstractmethod
    def example_value(self, prediction: Any, reference: Any) -> float:
        """The per-example value whose mean is the score."""

    def example_stats(self, prediction: Any, reference: Any) -> FloatArray:
        return np.array([self.example_value(prediction, reference), 1.0])

    def score(self, summed: npt.ArrayLike) -> FloatArray:
        arr = as_float_array(summed, 2, self.name)
        return safe_divide(arr[..., 0], arr[..., 1])

    @staticmethod
    def stats_from_values(values: npt.ArrayLike) -> FloatArray:
        """Statistics matrix from per-example values (used by importers)."""
        v = np.asarray(values, dtype=np.float64).reshape(-1)
        return np.column_stack([v, np.ones_like(v)])
