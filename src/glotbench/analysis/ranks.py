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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from glotbench.analysis.draws import Aggregator, DrawSettings, prepare_draws
from glotbench.analysis.euroeval_rank import (
    CURRENT_METHOD,
    DEFAULT_BOOTSTRAPS,
    EuroEvalRank,
    euroeval_rank,
    iterations_from_components,
    iterations_from_replicated,
)
from glotbench.analysis.replicates import ReplicatedScores
from glotbench.analysis.results import records
from glotbench.analysis.variance import ComponentTable


def draw_ranks(aggregates: np.ndarray) -> np.ndarray:
    """Competition ranks per draw: 1 + number of models strictly better, (R × M)."""
    return 1 + (aggregates[:, None, :] > aggregates[:, :, None]).sum(axis=2)


def rank_intervals(
    aggregates: np.ndarray, confidence_level: float
) -> tuple[np.ndarray, np.ndarray]:
    """Best and worst plausible rank per model from paired draws of aggregates (R × M)."""
    alpha = (1 - confidence_level) / 2
    diff = aggregates[:, None, :] - aggregates[:, :, None]  # [r, i, j] = agg_j − agg_i
    low = np.quantile(diff, alpha, axis=0)
    high = np.quantile(diff, 1 - alpha, axis=0)
    better = (low > 0).sum(axis=1)  # models j significantly better than i
    worse = (high < 0).sum(axis=1)
    n_models = aggregates.shape[1]
    return 1 + better, n_models - worse


@dataclass(frozen=True)
class Ranks:
    """Result of :func:`rank_models`."""

    distribution: pd.DataFrame
    summary: pd.DataFrame
    settings: DrawSettings
    notes: tuple[str, ...]
    euroeval: EuroEvalRank | None = None

    def to_frame(self) -> pd.DataFrame:
        return self.summary

    def to_dict(self) -> dict[str, Any]:
        return {
            "settings": self.settings.__dict__ | {"description": self.settings.describe()},
            "summary": records(self.summary),
            "distribution": records(self.distribution),
            "notes": list(self.notes),
            "euroeval_rank": None if self.euroeval is None else self.euroeval.settings(),
        }


def rank_models(
    source: ReplicatedScores | ComponentTable,
    settings: DrawSettings | None = None,
    aggregators: tuple[Aggregator, ...] = ("mean", "geometric_mean", "median"),
    confidence_level: float = 0.95,
    *,
    rank_method: str = CURRENT_METHOD,
    rank_bootstraps: int = DEFAULT_BOOTSTRAPS,
) -> Ranks:
    """Rank distributions and intervals under each aggregator, plus EuroEval's rank score.

    The EuroEval rank score (``rank_method``: ``2026-05-28``, the default, or the
    superseded ``2025``) uses the units every model has, ``rank_bootstraps``
    resamples and ``settings.seed``.
    """
    settings = settings or DrawSettings()
    design = prepare_draws(source, settings)
    table, keep, notes = design.table, design.keep, list(design.notes)
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
    distribution_rows, summary_rows = [], []
    for aggregator in aggregators:
        try:
            _, replicated = design.aggregate(aggregator)
        except Exception as exc:
            notes.append(f"{aggregator}: {exc}")
            continue
        ranks = draw_ranks(replicated)
        best, worst = rank_intervals(replicated, confidence_level)
        shares = np.stack([(ranks == r).mean(axis=0) * 100 for r in range(1, n_models + 1)], axis=1)
        for m, model in enumerate(table.models):
            distribution_rows.append(
                {"aggregator": aggregator, "model": model}
                | {f"rank_{r}": float(shares[m, r - 1]) for r in range(1, n_models + 1)}
            )
            summary_rows.append(
                {
                    "aggregator": aggregator,
                    "model": model,
                    "mean_rank": float(ranks[:, m].mean()),
                    "modal_rank": int(np.argmax(shares[m]) + 1),
                    "rank_best": int(best[m]),
                    "rank_worst": int(worst[m]),
                    "euroeval_rank_score": float(rank_score["score"].iloc[m]),
                    "euroeval_rank_low": float(rank_score["low"].iloc[m]),
                    "euroeval_rank_high": float(rank_score["high"].iloc[m]),
                }
            )
    return Ranks(
        pd.DataFrame(distribution_rows),
        pd.DataFrame(summary_rows),
        settings,
        tuple(notes),
        euroeval,
    )
