"""Pairwise model comparisons with effect sizes, and aggregates with standard errors.

For models A and B, a quantity's difference d = A − B (per language, or of an
aggregate over languages) is recomputed on every draw (see
:mod:`glotbench.analysis.draws`). Following Sälevä, Ataman & Lignos (2025):

* SD(d)   = standard deviation of d over the draws (ddof = 1);
* effect  = d_observed / SD(d) — the difference in units of its own
  replication uncertainty;
* flagged = |effect| ≥ 2, a difference that replications would reproduce in
  sign and size.

Observed values are computed from the per-language means (over seeds and
bootstrap replicates), on the languages all compared models share.
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
from glotbench.analysis.replicates import ReplicatedScores
from glotbench.analysis.results import records
from glotbench.analysis.variance import ComponentTable

EFFECT_THRESHOLD = 2.0


def _sd(values: np.ndarray, axis: int = 0) -> np.ndarray:
    """SD over draws (ddof = 1); exactly 0 when all draws are equal (not float noise ~1e-15)."""
    sd = values.std(axis=axis, ddof=1)
    return np.where(values.max(axis=axis) == values.min(axis=axis), 0.0, sd)


def _effect(observed: np.ndarray, sd: np.ndarray) -> np.ndarray:
    out = np.full(np.broadcast(observed, sd).shape, np.nan)
    np.divide(observed, sd, out=out, where=sd > 0)
    # a non-zero difference with no replication variance at all is infinitely clear
    out = np.where((sd == 0) & (observed != 0), np.copysign(np.inf, observed), out)
    return np.where((sd == 0) & (observed == 0), 0.0, out)


def _infinite_effect_notes(*row_lists: list[dict[str, Any]]) -> tuple[str, ...]:
    """Say so when differences have no replication variance (their effect is ±inf)."""
    count = int(sum(np.isinf(row["effect_size"]) for rows in row_lists for row in rows))
    if not count:
        return ()
    return (
        f"{count} difference(s) have no replication variance (SD = 0 over all draws): their "
        "effect size is infinite (null in JSON) and they are flagged",
    )


@dataclass(frozen=True)
class Comparison:
    """Result of :func:`compare_models`."""

    aggregates: pd.DataFrame
    per_language: pd.DataFrame
    settings: DrawSettings
    languages: tuple[str, ...]
    notes: tuple[str, ...]

    def to_frame(self) -> pd.DataFrame:
        return self.aggregates

    def to_dict(self) -> dict[str, Any]:
        return {
            "settings": self.settings.__dict__ | {"description": self.settings.describe()},
            "languages": list(self.languages),
            "effect_threshold": EFFECT_THRESHOLD,
            "aggregates": records(self.aggregates),
            "per_language": records(self.per_language),
            "notes": list(self.notes),
        }


def compare_models(
    source: ReplicatedScores | ComponentTable,
    settings: DrawSettings | None = None,
    aggregators: tuple[Aggregator, ...] = ("mean", "median"),
    confidence_level: float = 0.95,
) -> Comparison:
    """Every pair of models: per-language and aggregate differences with effect sizes."""
    settings = settings or DrawSettings()
    design = prepare_draws(source, settings)
    table, draws, observed_units = design.table, design.draws, design.observed
    alpha = (1 - confidence_level) / 2
    models = table.models
    aggregate_rows = []
    for aggregator in aggregators:
        observed, replicated = design.aggregate(aggregator)  # (M,), (R, M)
        for i in range(len(models)):
            for j in range(i + 1, len(models)):
                diff_draws = replicated[:, i] - replicated[:, j]
                diff = float(observed[i] - observed[j])
                sd = float(_sd(diff_draws))
                low, high = np.quantile(diff_draws, [alpha, 1 - alpha])
                effect = float(_effect(np.array(diff), np.array(sd)))
                aggregate_rows.append(
                    {
                        "aggregator": aggregator,
                        "model_a": models[i],
                        "model_b": models[j],
                        "score_a": float(observed[i]),
                        "score_b": float(observed[j]),
                        "difference": diff,
                        "sd": sd,
                        "effect_size": effect,
                        "flagged": bool(abs(effect) >= EFFECT_THRESHOLD),
                        "ci_low": float(low),
                        "ci_high": float(high),
                        "share_a_better": float((diff_draws > 0).mean()),
                    }
                )
    # per language: the unit draws themselves, languages fixed
    language_rows = []
    kept_labels = design.labels
    for i in range(len(models)):
        for j in range(i + 1, len(models)):
            diff = observed_units[i] - observed_units[j]
            sd_units = _sd(draws[:, i, :] - draws[:, j, :])  # (U',), one pair at a time
            effect = _effect(diff, sd_units)
            for u, label in enumerate(kept_labels):
                language_rows.append(
                    {
                        "model_a": models[i],
                        "model_b": models[j],
                        "language": label,
                        "difference": float(diff[u]),
                        "sd": float(sd_units[u]),
                        "effect_size": float(effect[u]),
                        "flagged": bool(abs(effect[u]) >= EFFECT_THRESHOLD),
                    }
                )
    return Comparison(
        aggregates=pd.DataFrame(aggregate_rows),
        per_language=pd.DataFrame(language_rows),
        settings=settings,
        languages=kept_labels,
        notes=design.notes + _infinite_effect_notes(aggregate_rows, language_rows),
    )


@dataclass(frozen=True)
class Aggregates:
    """Result of :func:`aggregate_scores`: each model's aggregates with standard errors."""

    frame: pd.DataFrame
    hierarchy: pd.DataFrame
    settings: DrawSettings
    notes: tuple[str, ...]

    def to_frame(self) -> pd.DataFrame:
        return self.frame

    def to_dict(self) -> dict[str, Any]:
        return {
            "settings": self.settings.__dict__ | {"description": self.settings.describe()},
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
        task_se.append(means[idx].std(ddof=1) / np.sqrt(len(idx)) if len(idx) > 1 else np.nan)
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
) -> Aggregates:
    """Mean, geometric mean and median over languages per model, with SEs.

    ``se_closed_form`` (mean only) is the replication SE √(Σσ_w²)/L;
    ``se_languages`` (mean only) is σ_b/√L; ``se_resampled`` is the SD of the
    aggregate over the draws of ``settings`` (its languages option decides
    whether between-language variation is included). The ScandEval-style
    hierarchy (task → language → overall, with datasets already averaged
    within a task and language) is in :attr:`Aggregates.hierarchy`.
    """
    settings = settings or DrawSettings()
    design = prepare_draws(source, settings)
    table, notes = design.table, list(design.notes)
    rows = []
    for aggregator in aggregators:
        try:
            observed, replicated = design.aggregate(aggregator)
        except Exception as exc:  # geometric mean of non-positive scores
            notes.append(f"{aggregator}: {exc}")
            continue
        sd = _sd(replicated)
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
