"""Rank distributions, rank intervals and EuroEval's rank score.

* Rank distribution (Sälevä, Ataman & Lignos 2025, Tables 3 and 6): on every
  draw the models are ranked by an aggregate over languages (1 = best;
  competition ranking, rank = 1 + number of models strictly better on that
  draw); the share of draws at each rank, in percent, sums to 100 per model.
* Rank interval (as Chatbot Arena reports ranks): model j is *significantly
  better* than i when the (1 − α) percentile interval of the paired draws of
  aggregate_j − aggregate_i lies above 0. Then best rank = 1 + #(significantly
  better models) and worst rank = M − #(significantly worse models).
* EuroEval rank score: see :mod:`glotbench.analysis.euroeval_rank` (current
  method of 2026-05-28 by default, the superseded 2025 method on request).

Distributions and intervals are computed by :mod:`glotbench.analysis.rank_stats`
in memory linear in the number of models (rank counts per chunk of draws;
pairwise percentiles only for models whose draws overlap, in chunks).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from glotbench.analysis.draws import Aggregator, DrawSettings, prepare_draws
from glotbench.analysis.euroeval_iterations import (
    iterations_from_components,
    iterations_from_replicated,
)
from glotbench.analysis.euroeval_rank import (
    CURRENT_METHOD,
    DEFAULT_BOOTSTRAPS,
    EuroEvalRank,
    euroeval_rank,
)
from glotbench.analysis.overall import overall_source
from glotbench.analysis.rank_stats import rank_statistics
from glotbench.analysis.replicates import ReplicatedScores
from glotbench.analysis.results import best_row, number, records, summary_repr
from glotbench.analysis.settings import DEFAULT_SETTINGS, settings_record
from glotbench.analysis.variance import ComponentTable
from glotbench.errors import InputError


@dataclass(frozen=True)
class Ranks:
    """Rank distributions of the models (:func:`glotbench.api.analyze_ranks`).

    Attributes
    ----------
    distribution : pandas.DataFrame
        Per aggregator and model, the probability of each rank (``rank_1``,
        ``rank_2``, ...).
    summary : pandas.DataFrame
        One row per aggregator and model: mean and modal rank, rank interval,
        EuroEval rank score and interval (``.to_frame()``).
    settings : DrawSettings
        The draws' settings.
    notes : tuple of str
        What the reader should know.
    euroeval : EuroEvalRank or None
        EuroEval's rank scores, when computed.
    recorded : dict or None
        The request's settings as recorded in the JSON.
    distribution_format : {"auto", "full", "window"}
        How :meth:`to_dict` gives the distribution.
    """

    distribution: pd.DataFrame
    summary: pd.DataFrame
    settings: DrawSettings
    notes: tuple[str, ...]
    euroeval: EuroEvalRank | None = None
    #: the request's settings as recorded (:meth:`AnalysisSettings.record`), if known
    recorded: dict[str, Any] | None = None
    #: how :meth:`to_dict` gives the distribution: "auto", "full" or "window"
    distribution_format: str = "auto"

    def to_frame(self) -> pd.DataFrame:
        """The rank summary (``summary``): one row per aggregator and model."""
        return self.summary

    def windowed(self) -> bool:
        """Whether the distribution is given as windows (see :meth:`to_dict`)."""
        n_models = sum(c.startswith("rank_") for c in self.distribution.columns)
        return self.distribution_format == "window" or (
            self.distribution_format == "auto" and n_models > FULL_DISTRIBUTION_MODELS
        )

    def __repr__(self) -> str:
        frame = self.summary
        first = frame[frame["aggregator"] == frame["aggregator"].iloc[0]] if len(frame) else frame
        sizes = {
            "models": len(first),
            "aggregators": int(frame["aggregator"].nunique()) if len(frame) else 0,
        }
        top = best_row(first, "mean_rank", lowest=True)
        headline = (
            ""
            if top is None
            else (
                f"top {top['model']!r} by {top['aggregator']} "
                f"(mean rank {number(top['mean_rank'])})"
            )
        )
        return summary_repr(self, sizes, headline)

    def to_dict(self) -> dict[str, Any]:
        """Settings, summary, rank distribution and notes as a JSON-safe dict.

        :attr:`distribution_format` ``"full"`` gives one record per model with
        every rank's share (M × M numbers), ``"window"`` each model's window of
        ranks with a non-zero share (:func:`distribution_windows`: linear in
        models when rank intervals are narrow), ``"auto"`` full up to
        :data:`FULL_DISTRIBUTION_MODELS` models and windows above.
        """
        if self.distribution_format not in DISTRIBUTION_FORMATS:
            raise InputError(
                f"distribution must be one of {', '.join(DISTRIBUTION_FORMATS)}, "
                f"not {self.distribution_format!r}",
                field="distribution",
            )
        window = self.windowed()
        return {
            "settings": settings_record(self.settings, self.recorded),
            "summary": records(self.summary),
            "distribution_format": "window" if window else "full",
            "distribution": (
                distribution_windows(self.distribution) if window else records(self.distribution)
            ),
            "notes": list(self.notes),
            "euroeval_rank": None if self.euroeval is None else self.euroeval.settings(),
        }


#: ``Ranks.to_dict``'s distribution formats
DISTRIBUTION_FORMATS = ("auto", "full", "window")
#: up to this many models "auto" gives the full distribution (model × rank)
FULL_DISTRIBUTION_MODELS = 50


def distribution_windows(distribution: pd.DataFrame) -> list[dict[str, Any]]:
    """Each model's rank distribution as the window of ranks with a non-zero share.

    ``first_rank`` and ``shares`` (% of draws at ranks first_rank, first_rank + 1,
    …; the shares outside the window are 0). The same numbers as the full table.
    """
    columns = [c for c in distribution.columns if c.startswith("rank_")]
    shares = distribution[columns].to_numpy(dtype=float)
    nonzero = shares > 0
    first = nonzero.argmax(axis=1)
    last = shares.shape[1] - 1 - nonzero[:, ::-1].argmax(axis=1)
    return [
        {
            "aggregator": aggregator,
            "model": model,
            "first_rank": int(start) + 1,
            "shares": shares[i, start : end + 1].tolist(),
        }
        for i, (aggregator, model, start, end) in enumerate(
            zip(distribution["aggregator"], distribution["model"], first, last, strict=True)
        )
    ]


def rank_models(
    source: ReplicatedScores | ComponentTable,
    settings: DrawSettings | None = None,
    aggregators: tuple[Aggregator, ...] = ("mean", "geometric_mean", "median"),
    confidence_level: float = DEFAULT_SETTINGS.confidence_level,
    *,
    rank_method: str = CURRENT_METHOD,
    rank_bootstraps: int = DEFAULT_BOOTSTRAPS,
) -> Ranks:
    """Rank distributions and intervals under each aggregator, plus EuroEval's rank score.

    The EuroEval rank score (``rank_method``: ``2026-05-28``, the default, or the
    superseded ``2025``) uses the units every model has, ``rank_bootstraps``
    resamples and ``settings.seed``.
    """
    settings = settings or DEFAULT_SETTINGS.draws(source)
    source, overall_notes = overall_source(source)  # the overall view's models
    design = prepare_draws(source, settings)
    table, keep, notes = design.table, design.keep, [*overall_notes, *design.notes]
    n_models = len(table.models)
    units_kept = np.flatnonzero(keep)
    iterations = (
        iterations_from_components(source, units_kept)
        if isinstance(source, ComponentTable)
        else iterations_from_replicated(source, units_kept)
    )
    euroeval = euroeval_rank(
        iterations, rank_method, rank_bootstraps, settings.seed, confidence_level
    )
    notes += euroeval.notes
    rank_score = euroeval.overall.set_index("model").reindex(list(table.models))
    distributions, summaries = [], []
    results = design.aggregate_all(aggregators)
    for aggregator, result in results.items():
        if isinstance(result, Exception):
            notes.append(f"{aggregator}: {result}")
            continue
        stats = rank_statistics(result[1], confidence_level)
        distribution = pd.DataFrame(
            stats.shares, columns=[f"rank_{r}" for r in range(1, n_models + 1)]
        )
        distribution.insert(0, "model", list(table.models))
        distribution.insert(0, "aggregator", aggregator)
        distributions.append(distribution)
        summaries.append(
            pd.DataFrame(
                {
                    "aggregator": aggregator,
                    "model": list(table.models),
                    "mean_rank": stats.mean_rank,
                    "modal_rank": stats.modal_rank,
                    "rank_best": stats.best,
                    "rank_worst": stats.worst,
                    "euroeval_rank_score": rank_score["score"].to_numpy(dtype=float),
                    "euroeval_rank_low": rank_score["low"].to_numpy(dtype=float),
                    "euroeval_rank_high": rank_score["high"].to_numpy(dtype=float),
                }
            )
        )
    return Ranks(
        pd.concat(distributions, ignore_index=True) if distributions else pd.DataFrame(),
        pd.concat(summaries, ignore_index=True) if summaries else pd.DataFrame(),
        settings,
        tuple(notes),
        euroeval,
    )
