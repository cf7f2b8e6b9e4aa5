"""Each model's aggregates over languages and tasks, with resampled and closed-form SEs.

The mean, geometric mean and median over task–language cells of every model
are recomputed on every draw (:mod:`glotbench.analysis.draws`); their SD over
the draws is the resampled SE, beside the closed-form SEs of the mean
(:func:`mean_standard_errors`) and the scores and SEs at every level of the
hierarchy (cells, tasks, overall). :func:`glotbench.api.analyze_aggregate`
calls :func:`aggregate_scores`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from glotbench.analysis.draws import (
    AGGREGATORS,
    Aggregator,
    DrawnDesign,
    DrawSettings,
    prepare_draws,
)
from glotbench.analysis.overall import overall_source
from glotbench.analysis.replicates import ReplicatedScores
from glotbench.analysis.results import best_row, number, records, summary_repr
from glotbench.analysis.settings import DEFAULT_SETTINGS, settings_record, z_value
from glotbench.analysis.variance import ComponentTable
from glotbench.resample.intervals import mean_standard_error, percentile_interval


def _sd(values: np.ndarray, axis: int = 0) -> np.ndarray:
    """SD over draws (ddof = 1); exactly 0 when all draws are equal (not float noise ~1e-15)."""
    sd = values.std(axis=axis, ddof=1)
    return np.where(values.max(axis=axis) == values.min(axis=axis), 0.0, sd)


@dataclass(frozen=True)
class Aggregates:
    """Each model's aggregates with standard errors (:func:`glotbench.api.analyze_aggregate`).

    Attributes
    ----------
    frame : pandas.DataFrame
        One row per model and aggregator (mean, geometric mean, median): the
        score, resampled and closed-form SEs and the interval (``.to_frame()``).
    hierarchy : pandas.DataFrame
        The scores and SEs at each level of the hierarchy (task × language
        cells, tasks, overall).
    settings : DrawSettings
        The draws' settings.
    notes : tuple of str
        What the reader should know.
    recorded : dict or None
        The request's settings as recorded in the JSON.
    """

    frame: pd.DataFrame
    hierarchy: pd.DataFrame
    settings: DrawSettings
    notes: tuple[str, ...]
    #: the request's settings as recorded (:meth:`AnalysisSettings.record`), if known
    recorded: dict[str, Any] | None = None

    def to_frame(self) -> pd.DataFrame:
        """The aggregates (``frame``): one row per model and aggregator."""
        return self.frame

    def __repr__(self) -> str:
        frame = self.frame
        first = frame[frame["aggregator"] == frame["aggregator"].iloc[0]] if len(frame) else frame
        sizes = {
            "models": len(first),
            "languages": int(first["n_languages"].max()) if "n_languages" in first else 0,
        }
        top = best_row(first, "score")
        headline = (
            ""
            if top is None
            else (
                f"best {top['model']!r}: {top['aggregator']} {number(top['score'])} "
                f"(SE {number(top['se_resampled'])})"
            )
        )
        return summary_repr(self, sizes, headline)

    def to_dict(self) -> dict[str, Any]:
        """Settings, aggregates, hierarchy and notes as a JSON-safe dict."""
        return {
            "settings": settings_record(self.settings, self.recorded),
            "aggregates": records(self.frame),
            "hierarchy": records(self.hierarchy),
            "notes": list(self.notes),
        }


def mean_standard_errors(design: DrawnDesign, model: int) -> tuple[float, float]:
    """Closed-form SEs of a model's mean score (mean over tasks of means over languages).

    With weights w_u = 1 / (T · L_t) for a unit of task t (T tasks, L_t languages):

    * replication SE (languages fixed): √(Σ_u w_u² σ_w,u²) — for one task
      √(Σ_l σ_w,l²) / L, the SD of the mean over replications of seeds and test
      sets (and of the parametric scheme's draws);
    * language SE (languages a sample): √(Σ_t SE_t²) / T with SE_t = s_t / √L_t,
      s_t the SD of the task's observed language means (σ_b for one task). It
      already contains replication noise: E[s_t²] = τ_t² + mean σ_w².
    """
    sigma_w = design.table.sigma_w[model, design.keep]
    means = design.observed[model]
    n_tasks = len(design.layout)
    weights = np.empty(len(means))
    task_se = []
    for idx in design.layout:
        weights[idx] = 1.0 / (n_tasks * len(idx))
        task_se.append(mean_standard_error(means[idx]))
    replication = (
        float(np.sqrt(np.nansum((weights * sigma_w) ** 2)))
        if not np.isnan(sigma_w).all()
        else np.nan
    )
    language = float(np.sqrt(np.sum(np.square(task_se))) / n_tasks)
    return replication, language


def aggregate_scores(
    source: ReplicatedScores | ComponentTable,
    settings: DrawSettings | None = None,
    aggregators: tuple[Aggregator, ...] = AGGREGATORS,
    confidence_level: float = DEFAULT_SETTINGS.confidence_level,
) -> Aggregates:
    """Mean, geometric mean and median over languages per model, with SEs and intervals.

    ``se_closed_form`` (mean only) is the replication SE √(Σσ_w²)/L;
    ``se_languages`` (mean only) is σ_b/√L; ``se_resampled`` is the SD of the
    aggregate over the draws of ``settings`` (its languages option decides
    whether between-language variation is included); ``ci_low``/``ci_high``
    the percentile interval of the same draws at ``confidence_level``, as the
    leaderboard's (:mod:`glotbench.analysis.headline`; it stays in the metric's
    range). The ScandEval-style
    hierarchy (task → language → overall, with datasets already averaged
    within a task and language) is in :attr:`Aggregates.hierarchy`.
    """
    settings = settings or DEFAULT_SETTINGS.draws(source)
    source, overall_notes = overall_source(source)  # the overall view's models
    design = prepare_draws(source, settings)
    table, notes = design.table, [*overall_notes, *design.notes]
    z_value(confidence_level)  # checks the level before drawing
    rows = []
    for aggregator in aggregators:
        try:
            observed, replicated = design.aggregate(aggregator)
        except Exception as exc:  # geometric mean of non-positive scores
            notes.append(f"{aggregator}: {exc}")
            continue
        sd = _sd(replicated)
        low, high = percentile_interval(replicated, confidence_level)
        for m, model in enumerate(table.models):
            closed, by_language = (
                mean_standard_errors(design, m) if aggregator == "mean" else (np.nan, np.nan)
            )
            rows.append(
                {
                    "model": model,
                    "aggregator": aggregator,
                    "score": float(observed[m]),
                    "se_resampled": float(sd[m]),
                    "ci_low": float(low[m]),
                    "ci_high": float(high[m]),
                    "se_closed_form": closed,
                    "se_languages": by_language,
                    "n_languages": len(design.units),
                }
            )
    return Aggregates(pd.DataFrame(rows), _hierarchy(design), settings, tuple(notes))


def _hierarchy(design: DrawnDesign) -> pd.DataFrame:
    """ScandEval's hierarchy: (task, language) cell → language (mean over tasks) → overall.

    Datasets of a cell are averaged before this point. SEs are SDs over the
    draws with languages fixed, so they carry replication uncertainty. The
    cell level (``task_language``, named ``task/language``) comes first.
    """
    languages = sorted({u.language for u in design.units})
    rows = [
        {
            "level": "task_language",
            "name": f"{unit.task}/{unit.language}",
            "model": model,
            "score": float(design.observed[m, u]),
            "se": float(_sd(design.draws[:, m, u])),
            "n_tasks": 1,
        }
        for u, unit in enumerate(design.units)
        for m, model in enumerate(design.table.models)
    ]
    per_language_draws, per_language_observed = [], []
    for language in languages:
        idx = [i for i, u in enumerate(design.units) if u.language == language]
        lang_draws = design.draws[:, :, idx].mean(axis=2)  # (R, M)
        lang_observed = design.observed[:, idx].mean(axis=1)
        per_language_draws.append(lang_draws)
        per_language_observed.append(lang_observed)
        for m, model in enumerate(design.table.models):
            rows.append(
                {
                    "level": "language",
                    "name": language,
                    "model": model,
                    "score": float(lang_observed[m]),
                    "se": float(_sd(lang_draws[:, m])),
                    "n_tasks": len(idx),
                }
            )
    overall_draws = np.mean(per_language_draws, axis=0)  # (R, M): mean over languages
    overall_observed = np.mean(per_language_observed, axis=0)
    for m, model in enumerate(design.table.models):
        rows.append(
            {
                "level": "overall",
                "name": "overall",
                "model": model,
                "score": float(overall_observed[m]),
                "se": float(_sd(overall_draws[:, m])),
                "n_tasks": len(design.layout),
            }
        )
    return pd.DataFrame(rows)
