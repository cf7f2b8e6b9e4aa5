"""Pairwise comparisons for the outputs: the page's pairs per cell, and the ranked comparisons.

:func:`ranked_comparisons` gives the comparisons and rank distributions of the
best models in ranking order, computed once per request and rendered by the
terminal, the JSON and the report. :func:`pair_comparisons` gives the
leaderboard page's pairwise view:

The page's pairwise view shows, for two models A and B, the difference per task
and language and over all cells with its SD over paired draws, effect size and
interval — the numbers :func:`glotbench.analysis.compare.compare_models`
computes (Sälevä, Ataman & Lignos 2025), never a recomputation in the browser.

Every pair of M models is M(M − 1)/2 pairs × cells: at 1,000 models and 40
cells, 20 million rows. :func:`pair_comparisons` therefore takes the top
models of the overall ranking, as many as keep pairs × cells within a budget
(``max_cells``), and computes only their pairs. Any other pair is one
``glotbench analyze compare --model A --model B --per-language`` away.

The comparisons use the overall view's draws: the same draw settings and the
same cells (those every ranked model has), and the draw stream does not depend
on which models are drawn, so each pair's overall difference has exactly the
SD, interval and share of the draws behind the ranks and the ``≈`` ties.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from glotbench.analysis.compare import EFFECT_THRESHOLD, Comparison, compare_models
from glotbench.analysis.draws import DrawSettings
from glotbench.analysis.headline import Analysis, AnalysisSettings, ViewAnalysis, is_replicated
from glotbench.analysis.planning.detectable import POWER, mdd_factor
from glotbench.analysis.ranks import Ranks, rank_models
from glotbench.analysis.replicates import ReplicatedScores, model_rows

#: default budget of embedded pair × cell comparisons (about 2 MB of page data)
MAX_PAIR_CELLS = 50_000


def models_within_budget(n_models: int, n_cells: int, max_cells: int) -> int:
    """The largest K ≤ ``n_models`` with K(K − 1)/2 · ``n_cells`` ≤ ``max_cells`` (at least 2)."""
    if n_models < 2:
        return n_models
    per_pair = max(n_cells, 1)
    k = int((1 + np.sqrt(1 + 8 * max_cells / per_pair)) / 2)
    while k > 2 and k * (k - 1) // 2 * per_pair > max_cells:
        k -= 1
    while k < n_models and (k + 1) * k // 2 * per_pair <= max_cells:
        k += 1
    return max(2, min(k, n_models))


@dataclass(frozen=True)
class PairComparisons:
    """Pairs of the top ``models`` (best first): per cell and over all cells.

    ``comparison`` is :func:`compare_models`' result for those models (pairs
    with ``model_a`` ranked above ``model_b``; aggregator ``mean`` only), on
    the cells ``units`` of the overall view. ``n_ranked`` is the number of
    ranked models, of which ``models`` are the first.
    """

    models: tuple[str, ...]
    units: tuple[tuple[str, str], ...]
    comparison: Comparison
    n_ranked: int
    replicated: bool
    max_cells: int

    @property
    def complete(self) -> bool:
        """Whether every pair of ranked models is here."""
        return len(self.models) == self.n_ranked

    def to_dict(self) -> dict[str, Any]:
        """Page data: per pair (``"i,j"``, i < j in ``models``), per-cell and overall numbers.

        Numbers are rounded to 6 significant digits; infinite effects (no
        replication variance) are the strings ``"inf"`` / ``"-inf"``. For
        unreplicated scores per-cell SDs and effects are None: with one score
        per cell there is no replication variance to compare against.
        """
        index = {m: i for i, m in enumerate(self.models)}
        per_cell = self.comparison.per_language
        assert per_cell is not None
        n_units = len(self.units)
        aggregates = self.comparison.aggregates
        pairs: dict[str, Any] = {}
        rows = aggregates[aggregates["aggregator"] == "mean"]
        # per-cell columns as (pairs × cells) arrays, read once (not a frame slice per pair)
        shape = (len(rows), n_units)
        difference = per_cell["difference"].to_numpy(dtype=float)[: shape[0] * n_units]
        difference = difference.reshape(shape)
        columns = {
            name: per_cell[column].to_numpy()[: shape[0] * n_units].reshape(shape).tolist()
            for name, column in (("sd", "sd"), ("effect", "effect_size"), ("flagged", "flagged"))
        }
        n_a_better = (difference > 0).sum(axis=1).tolist()
        factor = mdd_factor()
        differences = difference.tolist()
        for position, row in enumerate(rows.itertuples(index=False)):
            pairs[f"{index[row.model_a]},{index[row.model_b]}"] = {
                "difference": [_number(v) for v in differences[position]],
                "sd": [_number(v) for v in columns["sd"][position]] if self.replicated else None,
                "effect": [_number(v) for v in columns["effect"][position]]
                if self.replicated
                else None,
                "flagged": [bool(v) for v in columns["flagged"][position]]
                if self.replicated
                else None,
                "n_a_better": int(n_a_better[position]),
                "overall": {
                    "difference": _number(row.difference),
                    "sd": _number(row.sd),
                    "effect": _number(row.effect_size),
                    "flagged": bool(row.flagged),
                    "ci": [_number(row.ci_low), _number(row.ci_high)],
                    "share_a_better": _number(row.share_a_better),
                    # the smallest true difference the design detects at 80 % power
                    "mdd": _number(factor * row.sd),
                    "detectable": bool(abs(row.difference) >= factor * row.sd),
                },
            }
        return {
            "models": list(self.models),
            "units": [list(u) for u in self.units],
            "n_ranked": self.n_ranked,
            "complete": self.complete,
            "max_cells": self.max_cells,
            "replicated": self.replicated,
            "effect_threshold": EFFECT_THRESHOLD,
            "mdd_power": POWER,
            "draws": self.comparison.settings.describe(),
            "pairs": pairs,
            "notes": list(self.comparison.notes),
        }


def _number(value: Any) -> float | str | None:
    """6 significant digits (no double rounding when shown at 2–4); ±inf as a string; NaN: None."""
    value = float(value)
    if np.isnan(value):
        return None
    if np.isinf(value):
        return "inf" if value > 0 else "-inf"
    return float(f"{value:.6g}")


def pair_comparisons(
    source: ReplicatedScores,
    overall: ViewAnalysis,
    settings: AnalysisSettings,
    *,
    max_cells: int = MAX_PAIR_CELLS,
    n_models: int | None = None,
    computed: RankedComparisons | None = None,
) -> PairComparisons:
    """Compare every pair of the top models of ``overall`` (the page's overall view).

    ``n_models`` (default: as many as ``max_cells`` allows) top models by
    overall score are compared, on the cells the overall view used. Cells the
    view left out (not every ranked model has them) are left out here too, so
    that the draw stream, and with it every pair's overall numbers, is the
    view's. ``computed``: the request's :func:`ranked_comparisons`, used as is
    when it compares the same models with the same draws (no second computation).
    """
    order = overall.order()
    left_out = set(overall.left_out)
    single = source.single_task
    kept = [u for u in source.units if u.label(single) not in left_out]
    k = (
        min(max(n_models, 2), len(order))
        if n_models is not None
        else models_within_budget(len(order), len(kept), max_cells)
    )
    chosen = order[:k]
    draws = settings.draws(source)
    level = settings.confidence_level
    if (
        computed is not None
        and computed.comparison is not None
        and computed.comparison.per_language is not None
        and computed.covers(chosen, draws, level, overall.left_out)
    ):
        comparison = computed.comparison
    else:
        comparison = compare_models(
            view_scores(source, overall, chosen),
            draws,
            aggregators=("mean",),
            confidence_level=level,
            per_language=True,
        )
    cells = {u.label(single): (u.task, u.language) for u in kept}
    return PairComparisons(
        models=tuple(chosen),
        units=tuple(cells[label] for label in comparison.languages),
        comparison=comparison,
        n_ranked=len(order),
        replicated=is_replicated(source),
        max_cells=max_cells,
    )


@dataclass(frozen=True)
class RankedComparisons:
    """Comparisons and rank distributions of the best ``models`` (best first).

    Pairs run in ranking order (``model_a`` above ``model_b``), so every output
    shows a difference as the better model minus the worse. Computed once per
    request (:func:`ranked_comparisons`) and handed to the terminal, the JSON
    and the report alike.
    """

    models: tuple[str, ...]
    comparison: Comparison | None
    ranks: Ranks | None
    #: the level of the intervals and ties
    confidence_level: float = 0.95
    #: the cells left out of the compared scores (those the overall view left out)
    left_out: tuple[str, ...] = ()

    @classmethod
    def of_analysis(
        cls, analysis: Analysis, comparison: Comparison | None, ranks: Ranks | None
    ) -> RankedComparisons:
        """The comparison and ranks of all of ``analysis``' overall models (as
        :func:`ranked_comparisons` computes them without ``max_models``)."""
        overall = analysis.overall
        return cls(
            tuple(overall.order()),
            comparison,
            ranks,
            analysis.settings.confidence_level,
            overall.left_out,
        )

    def covers(
        self,
        models: Sequence[str],
        settings: DrawSettings,
        confidence_level: float,
        left_out: Sequence[str] = (),
    ) -> bool:
        """Whether this result is the one asked for: the same models in order, cells,
        draws and confidence level."""
        return (
            tuple(models) == self.models
            and self.confidence_level == confidence_level
            and tuple(left_out) == self.left_out
            and all(
                result is None or result.settings == settings
                for result in (self.comparison, self.ranks)
            )
        )


def ranked_comparisons(
    source: ReplicatedScores,
    analysis: Analysis,
    *,
    max_models: int | None = None,
) -> RankedComparisons:
    """Paired comparisons and rank distributions of the overall view's best models.

    The models with every task (the overall view's), best first, at most
    ``max_models`` of them; the draws are ``analysis.settings``' (aggregator
    ``mean``). With fewer than two models there is nothing to compare (None).
    """
    overall = analysis.overall
    ranked = overall.order()
    if max_models is not None:
        ranked = ranked[:max_models]
    level = analysis.settings.confidence_level
    if len(ranked) < 2:
        return RankedComparisons(tuple(ranked), None, None, level, overall.left_out)
    subset = view_scores(source, overall, ranked)
    draws = analysis.settings.draws(source)
    return RankedComparisons(
        tuple(ranked),
        compare_models(subset, draws, aggregators=("mean",), confidence_level=level, pairs="all"),
        rank_models(subset, draws, aggregators=("mean",), confidence_level=level),
        level,
        overall.left_out,
    )


def view_scores(
    source: ReplicatedScores, view: ViewAnalysis, models: Sequence[str]
) -> ReplicatedScores:
    """The scores of ``models`` on the cells ``view`` used: the cells it left out (not
    every ranked model has them) are absent for every model, so the draws keep its units."""
    subset = source.select_models(models)
    left_out = set(view.left_out)
    if not left_out:
        return subset
    values = subset.values.copy()
    single = source.single_task
    values[:, [i for i, u in enumerate(source.units) if u.label(single) in left_out]] = np.nan
    return dataclasses.replace(subset, values=values)


def task_comparisons(
    source: ReplicatedScores,
    analysis: Analysis,
    *,
    max_models: int | None = None,
) -> dict[str, RankedComparisons]:
    """Per task, the comparisons and ranks of the models that cover it (issue 25 item 6).

    When models lack whole tasks the overall view leaves them out
    (:mod:`glotbench.analysis.overall`); each task's view
    (``analysis.tasks``) still ranks every model with a score on that task,
    and this compares them on that task's cells alone — the same draws
    (``analysis.settings``), aggregator ``mean``. Tasks with fewer than two
    such models are absent (nothing to compare).
    """
    level = analysis.settings.confidence_level
    draws = analysis.settings.draws(source)
    out: dict[str, RankedComparisons] = {}
    for task, view in analysis.tasks.items():
        ranked = view.order()
        if max_models is not None:
            ranked = ranked[:max_models]
        if len(ranked) < 2:
            continue
        units = [i for i, u in enumerate(source.units) if u.task == task]
        subset = source.take(model_rows(source.models, ranked), units)
        out[task] = RankedComparisons(
            tuple(ranked),
            compare_models(
                subset, draws, aggregators=("mean",), confidence_level=level, pairs="all"
            ),
            rank_models(subset, draws, aggregators=("mean",), confidence_level=level),
            level,
            view.left_out,
        )
    return out
