"""Declared constraints of a metric's per-example statistics and of its scores.

Every metric says once, on its class, what valid statistics look like
(:meth:`glotbench.metrics.base.Metric.constraints`) and on what scale its
score lies (:attr:`~glotbench.metrics.base.Metric.score_range`). Importers and
the tidy-file validator check a statistics matrix ``S`` (n × k) with
:func:`check_stats` — vectorised over the rows — before anything is stored.

The kinds of constraint follow from what the statistics count:

* ``counts`` — numbers of things (examples, tokens, spans, n-grams): finite
  non-negative integers;
* ``nonnegative`` — non-negative reals;
* ``at_most`` — pairs ``(a, b)`` with ``a ≤ b`` per example: correct spans
  ≤ predicted spans and ≤ gold spans (seqeval), correct words ≤ words (CoNLL
  2018 LAS/UAS), true positives of a class ≤ its predictions and ≤ its gold
  examples, n-gram matches ≤ n-grams of the hypothesis (sacrebleu's
  ``correct_n ≤ total_n``, chrF's ``match ≤ hyp`` and ``match ≤ ref``);
* ``value_range`` — for a mean of per-example values, statistics
  ``(value, count)``: ``lo · count ≤ value ≤ hi · count`` (a per-example
  accuracy lies in [0, 1]).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from glotbench.errors import InputError

#: absolute slack of the inequality checks (sums of floats written as text)
TOLERANCE = 1e-9


@dataclass(frozen=True)
class StatConstraints:
    """What every row of a metric's statistics matrix must satisfy."""

    counts: tuple[str, ...] = ()
    nonnegative: tuple[str, ...] = ()
    at_most: tuple[tuple[str, str], ...] = ()
    #: ``(value, count, lo, hi)``: ``lo·count ≤ value ≤ hi·count``
    value_range: tuple[str, str, float, float] | None = None


@dataclass
class StatProblem:
    """Rows of ``S`` that break one constraint, and how to say so."""

    rows: np.ndarray  # bool mask over the rows of S
    column: str  # the statistic to name in the error
    template: str  # message with {row} fields filled by :meth:`message`
    columns: tuple[str, ...]  # statistics whose values the message quotes

    @property
    def count(self) -> int:
        return int(self.rows.sum())

    @property
    def first(self) -> int:
        return int(np.flatnonzero(self.rows)[0])

    def message(self, values: Sequence[float]) -> str:
        """The message for one offending row (``values`` = that row of S)."""
        quoted = {f"v{i}": _fmt(v) for i, v in enumerate(values)}
        return self.template.format(**quoted)


def _fmt(value: float) -> str:
    return f"{float(value):.10g}"


def check_stats(
    metric_name: str,
    stat_names: Sequence[str],
    constraints: StatConstraints,
    stats: np.ndarray,
) -> list[StatProblem]:
    """Problems of an (n × k) statistics matrix, one per broken constraint kind and column.

    Non-finite entries are reported first (as ``not a finite number``); the
    other checks ignore them.
    """
    S = np.asarray(stats, dtype=np.float64)
    if S.ndim != 2 or S.shape[1] != len(stat_names):
        raise InputError(f"{metric_name}: expected {len(stat_names)} statistic columns")
    index = {name: i for i, name in enumerate(stat_names)}
    problems: list[StatProblem] = []
    finite = np.isfinite(S)
    for j, name in enumerate(stat_names):
        bad = ~finite[:, j]
        if bad.any():
            problems.append(
                StatProblem(bad, name, f"{name} is {{v{j}}}; it must be a finite number", (name,))
            )
    with np.errstate(invalid="ignore"):
        for name in constraints.counts:
            j = index[name]
            col = S[:, j]
            negative = finite[:, j] & (col < 0)
            fractional = finite[:, j] & ~negative & (np.floor(col) != col)
            if negative.any():
                problems.append(
                    StatProblem(
                        negative,
                        name,
                        f"{name} is {{v{j}}}; {metric_name} counts it, so it must be a "
                        "non-negative integer",
                        (name,),
                    )
                )
            if fractional.any():
                problems.append(
                    StatProblem(
                        fractional,
                        name,
                        f"{name} is {{v{j}}}; {metric_name} counts it, so it must be an integer",
                        (name,),
                    )
                )
        for name in constraints.nonnegative:
            j = index[name]
            negative = finite[:, j] & (S[:, j] < 0)
            if negative.any():
                problems.append(
                    StatProblem(
                        negative, name, f"{name} is {{v{j}}}; it must not be negative", (name,)
                    )
                )
        for a, b in constraints.at_most:
            i, j = index[a], index[b]
            over = finite[:, i] & finite[:, j] & (S[:, i] > S[:, j] + TOLERANCE)
            if over.any():
                problems.append(
                    StatProblem(
                        over,
                        a,
                        f"{a} = {{v{i}}} exceeds {b} = {{v{j}}}; {metric_name} needs "
                        f"{a} ≤ {b} for every example",
                        (a, b),
                    )
                )
        if constraints.value_range is not None:
            value, count, lo, hi = constraints.value_range
            i, j = index[value], index[count]
            ok = finite[:, i] & finite[:, j]
            low = ok & (S[:, i] < lo * S[:, j] - TOLERANCE)
            high = ok & (S[:, i] > hi * S[:, j] + TOLERANCE)
            out = low | high
            if out.any():
                problems.append(
                    StatProblem(
                        out,
                        value,
                        f"{value} = {{v{i}}} with {count} = {{v{j}}} is outside the range of "
                        f"{metric_name}: a per-example value lies in [{_fmt(lo)}, {_fmt(hi)}]",
                        (value, count),
                    )
                )
    return problems


def describe_constraints(constraints: StatConstraints) -> list[str]:
    """The constraints as short rules, e.g. ``["correct, predicted, gold: non-negative
    integers", "correct ≤ predicted"]`` (``glotbench metrics --json``)."""
    rules: list[str] = []
    if constraints.counts:
        rules.append(f"{', '.join(constraints.counts)}: non-negative integers")
    if constraints.nonnegative:
        rules.append(f"{', '.join(constraints.nonnegative)}: non-negative")
    rules.extend(f"{a} ≤ {b}" for a, b in constraints.at_most)
    if constraints.value_range is not None:
        value, count, lo, hi = constraints.value_range
        rules.append(f"{_fmt(lo)}·{count} ≤ {value} ≤ {_fmt(hi)}·{count}")
    return rules


def score_range_text(lo: float, hi: float) -> str:
    """``[0, 1]`` / ``[0, 100]`` for messages."""
    return f"[{_fmt(lo)}, {_fmt(hi)}]"
