"""Rank distributions, rank intervals and EuroEval's rank score.

* Rank distribution (Sälevä, Ataman & Lignos 2025, Tables 3 and 6): on every
  draw the models are ranked by an aggregate over languages (1 = best;
  competition ranking, rank = 1 + number of models strictly better on that
  draw); the share of draws at each rank, in percent, sums to 100 per model.
* Rank interval (as Chatbot Arena reports ranks): model j is *significantly
  better* than i when the (1 − α) percentile interval of the paired draws of
  aggregate_j − aggregate_i lies above 0. Then best rank = 1 + #(significantly
  better models) and worst rank = M − #(significantly worse models).

Both are computed by :mod:`glotbench.analysis.rank_stats` in memory linear in
the number of models (rank counts per chunk of draws; pairwise percentiles only
for models whose draws overlap, in chunks).
* EuroEval rank score (EuroEval leaderboards, "Score aggregation"): per
  dataset, models are sorted by mean score; the best gets 1; each next model is
  compared with the current reference model by a one-sided Welch t-test
  (p < 0.05); if significantly worse, its score is the reference's plus
  (mean_ref − mean) / SD, SD being the population SD (ddof = 0) of all models'
  mean scores on the dataset, and it becomes the reference; otherwise it
  shares the reference's score. Dataset scores are averaged over tasks per
  language, then over languages. Lower is better.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import stdtr

from glotbench.analysis.draws import Aggregator, DrawSettings, prepare_draws
from glotbench.analysis.rank_stats import draw_ranks as draw_ranks  # re-exported
from glotbench.analysis.rank_stats import rank_intervals as rank_intervals  # re-exported
from glotbench.analysis.rank_stats import rank_statistics
from glotbench.analysis.replicates import ReplicatedScores
from glotbench.analysis.results import records
from glotbench.analysis.variance import ComponentTable, nan_mean, nan_sd

#: iterations EuroEval runs per model and dataset (seed × bootstrapped test set)
EUROEVAL_ITERATIONS = 10


def welch_greater_pvalue(
    mean_a: np.ndarray,
    sd_a: np.ndarray,
    n_a: np.ndarray,
    mean_b: np.ndarray,
    sd_b: np.ndarray,
    n_b: np.ndarray,
) -> np.ndarray:
    """One-sided Welch t-test p-value of H1: mean_a > mean_b (Welch 1947; as scipy's ttest_ind)."""
    var_a, var_b = sd_a**2 / n_a, sd_b**2 / n_b
    se = np.sqrt(var_a + var_b)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (mean_a - mean_b) / se
        df = (var_a + var_b) ** 2 / (var_a**2 / (n_a - 1) + var_b**2 / (n_b - 1))
    p = 1.0 - stdtr(df, t)
    # identical iteration scores (se = 0): not significant unless the means differ
    return np.where(se > 0, p, np.where(mean_a > mean_b, 0.0, 1.0))


def _iteration_summary(
    source: ReplicatedScores | ComponentTable,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, SD and count of EuroEval-style iteration scores per (model, unit).

    From replicates: iteration i is seed i's i-th bootstrap replicate (each
    iteration has its own seed and resampled test set); with one seed, the
    first ten bootstrap replicates. From a ComponentTable: the unit mean,
    σ_w and the number of seeds (10 when unknown).
    """
    if isinstance(source, ComponentTable):
        n = np.where(source.n_seeds >= 2, source.n_seeds, EUROEVAL_ITERATIONS).astype(float)
        return source.mean, np.nan_to_num(source.sigma_w), n
    values = source.values
    n_seeds = values.shape[2]
    if n_seeds >= 2:
        b = np.arange(n_seeds) % values.shape[3]
        iterations = values[:, :, np.arange(n_seeds), b]  # (M, U, S)
    else:
        iterations = values[:, :, 0, : min(EUROEVAL_ITERATIONS, values.shape[3])]
    count = (~np.isnan(iterations)).sum(axis=2).astype(float)
    return nan_mean(iterations, axis=2), np.nan_to_num(nan_sd(iterations, axis=2)), count


def euroeval_rank_scores(
    mean: np.ndarray, sd: np.ndarray, n: np.ndarray, alpha: float = 0.05
) -> np.ndarray:
    """EuroEval rank score of each model on one dataset (lower is better; best = 1)."""
    order = np.argsort(-mean, kind="stable")
    spread = float(np.std(mean))  # population SD of the models' mean scores
    out = np.empty_like(mean)
    reference = order[0]
    score = 1.0
    for model in order:
        if model != reference:
            p = welch_greater_pvalue(
                mean[reference], sd[reference], n[reference], mean[model], sd[model], n[model]
            )
            if p < alpha:
                score += (mean[reference] - mean[model]) / spread if spread > 0 else 0.0
                reference = model
        out[model] = score
    return out


@dataclass(frozen=True)
class Ranks:
    """Result of :func:`rank_models`."""

    distribution: pd.DataFrame
    summary: pd.DataFrame
    settings: DrawSettings
    notes: tuple[str, ...]

    def to_frame(self) -> pd.DataFrame:
        return self.summary

    def to_dict(self) -> dict[str, Any]:
        return {
            "settings": self.settings.__dict__ | {"description": self.settings.describe()},
            "summary": records(self.summary),
            "distribution": records(self.distribution),
            "notes": list(self.notes),
        }


def rank_models(
    source: ReplicatedScores | ComponentTable,
    settings: DrawSettings | None = None,
    aggregators: tuple[Aggregator, ...] = ("mean", "geometric_mean", "median"),
    confidence_level: float = 0.95,
) -> Ranks:
    """Rank distributions and intervals under each aggregator, plus EuroEval's rank score."""
    settings = settings or DrawSettings()
    design = prepare_draws(source, settings)
    table, keep, units, notes = design.table, design.keep, design.units, list(design.notes)
    n_models = len(table.models)
    it_mean, it_sd, it_n = _iteration_summary(source)
    unit_scores = np.column_stack(
        [euroeval_rank_scores(it_mean[:, u], it_sd[:, u], it_n[:, u]) for u in np.flatnonzero(keep)]
    )  # (M, U')
    by_language = {}
    for language in sorted({u.language for u in units}):
        idx = [i for i, u in enumerate(units) if u.language == language]
        by_language[language] = unit_scores[:, idx].mean(axis=1)  # mean over tasks
    rank_score = np.mean(list(by_language.values()), axis=0)
    if (it_n[:, keep] < 2).all():
        notes.append(
            "EuroEval rank score: one score per model and language, so its Welch t-test cannot "
            "run; every lower mean counts as significantly worse"
        )
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
                    "euroeval_rank_score": rank_score.astype(float),
                }
            )
        )
    return Ranks(
        pd.concat(distributions, ignore_index=True) if distributions else pd.DataFrame(),
        pd.concat(summaries, ignore_index=True) if summaries else pd.DataFrame(),
        settings,
        tuple(notes),
    )
