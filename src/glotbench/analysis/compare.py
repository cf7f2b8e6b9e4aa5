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
    DrawSettings,
    aggregate,
    aggregate_draws,
    common_units,
    language_draws,
    unit_draws,
)
from glotbench.analysis.replicates import ReplicatedScores
from glotbench.analysis.variance import ComponentTable, components

EFFECT_THRESHOLD = 2.0


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """JSON-ready records: NaN becomes None, numpy scalars become Python numbers."""
    clean = frame.astype(object).where(frame.notna(), None)
    return [
        {k: (v.item() if isinstance(v, np.generic) else v) for k, v in row.items()}
        for row in clean.to_dict(orient="records")
    ]


def _table(source: ReplicatedScores | ComponentTable) -> ComponentTable:
    return source if isinstance(source, ComponentTable) else components(source)


def _sd(values: np.ndarray, axis: int = 0) -> np.ndarray:
    return values.std(axis=axis, ddof=1)


def _effect(observed: np.ndarray, sd: np.ndarray) -> np.ndarray:
    out = np.full(np.broadcast(observed, sd).shape, np.nan)
    np.divide(observed, sd, out=out, where=sd > 0)
    # a non-zero difference with no replication variance at all is infinitely clear
    out = np.where((sd == 0) & (observed != 0), np.sign(observed) * np.inf, out)
    return np.where((sd == 0) & (observed == 0), 0.0, out)


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
    settings: DrawSettings = DrawSettings(),
    aggregators: tuple[Aggregator, ...] = ("mean", "median"),
    confidence_level: float = 0.95,
) -> Comparison:
    """Every pair of models: per-language and aggregate differences with effect sizes."""
    table = _table(source)
    labels = tuple(u.label(table.single_task) for u in table.units)
    keep, notes = common_units(table.present(), table.models, labels)
    observed_units = table.mean[:, keep]  # (M, U')
    draws = unit_draws(source, settings, keep)  # (R, M, U')
    languages = language_draws(settings.n_draws, int(keep.sum()), settings)
    alpha = (1 - confidence_level) / 2
    models = table.models
    aggregate_rows = []
    for aggregator in aggregators:
        observed = aggregate(observed_units, aggregator)  # (M,)
        replicated = aggregate_draws(draws, languages, aggregator)  # (R, M)
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
    sd_units = _sd(draws[:, :, None, :] - draws[:, None, :, :])  # (M, M, U')
    language_rows = []
    kept_labels = [labels[u] for u in np.flatnonzero(keep)]
    for i in range(len(models)):
        for j in range(i + 1, len(models)):
            diff = observed_units[i] - observed_units[j]
            effect = _effect(diff, sd_units[i, j])
            for u, label in enumerate(kept_labels):
                language_rows.append(
                    {
                        "model_a": models[i],
                        "model_b": models[j],
                        "language": label,
                        "difference": float(diff[u]),
                        "sd": float(sd_units[i, j, u]),
                        "effect_size": float(effect[u]),
                        "flagged": bool(abs(effect[u]) >= EFFECT_THRESHOLD),
                    }
                )
    return Comparison(
        aggregates=pd.DataFrame(aggregate_rows),
        per_language=pd.DataFrame(language_rows),
        settings=settings,
        languages=tuple(kept_labels),
        notes=tuple(list(table.notes) + notes),
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


def mean_standard_errors(
    table: ComponentTable, model: int, keep: np.ndarray
) -> tuple[float, float]:
    """Closed-form SEs of a model's mean over its L languages.

    * replication SE (languages fixed): √(Σ_l σ_w,l²) / L — the SD of the mean
      over replications of seeds and test sets (the parametric scheme's SD);
    * language SE (languages a sample): σ_b / √L, with σ_b the SD of the
      observed per-language means, which already contains their replication
      noise: E[σ_b²] = τ² + mean σ_w² for true between-language variance τ².
    """
    sigma_w = table.sigma_w[model, keep]
    means = table.mean[model, keep]
    n = means.size
    replication = (
        float(np.sqrt(np.nansum(sigma_w**2)) / n) if not np.isnan(sigma_w).all() else float("nan")
    )
    language = float(means.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan")
    return replication, language


def aggregate_scores(
    source: ReplicatedScores | ComponentTable,
    settings: DrawSettings = DrawSettings(),
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
    table = _table(source)
    labels = tuple(u.label(table.single_task) for u in table.units)
    keep, notes = common_units(table.present(), table.models, labels)
    draws = unit_draws(source, settings, keep)
    languages = language_draws(settings.n_draws, int(keep.sum()), settings)
    rows = []
    for aggregator in aggregators:
        try:
            observed = aggregate(table.mean[:, keep], aggregator)
            replicated = aggregate_draws(draws, languages, aggregator)
        except Exception as exc:  # geometric mean of non-positive scores
            notes.append(f"{aggregator}: {exc}")
            continue
        sd = _sd(replicated)
        for m, model in enumerate(table.models):
            closed, by_language = (
                mean_standard_errors(table, m, keep) if aggregator == "mean" else (np.nan, np.nan)
            )
            rows.append(
                {
                    "model": model,
                    "aggregator": aggregator,
                    "score": float(observed[m]),
                    "se_resampled": float(sd[m]),
                    "se_closed_form": closed,
                    "se_languages": by_language,
                    "n_languages": int(keep.sum()),
                }
            )
    hierarchy = _hierarchy(table, keep, draws)
    return Aggregates(pd.DataFrame(rows), hierarchy, settings, tuple(list(table.notes) + notes))


def _hierarchy(table: ComponentTable, keep: np.ndarray, draws: np.ndarray) -> pd.DataFrame:
    """ScandEval's hierarchy: (task, language) cell → language (mean over tasks) → overall.

    Datasets of a cell are averaged before this point. SEs are SDs over the
    draws (languages fixed), so they carry replication uncertainty.
    """
    units = [u for u, k in zip(table.units, keep) if k]
    languages = sorted({u.language for u in units})
    rows = []
    language_draws_ = []
    language_observed = []
    for language in languages:
        idx = [i for i, u in enumerate(units) if u.language == language]
        lang_draws = draws[:, :, idx].mean(axis=2)  # (R, M)
        lang_obs = table.mean[:, keep][:, idx].mean(axis=1)
        language_draws_.append(lang_draws)
        language_observed.append(lang_obs)
        for m, model in enumerate(table.models):
            rows.append(
                {
                    "level": "language",
                    "name": language,
                    "model": model,
                    "score": float(lang_obs[m]),
                    "se": float(_sd(lang_draws[:, m])),
                    "n_tasks": len(idx),
                }
            )
    overall_draws = np.mean(language_draws_, axis=0)  # (R, M): mean over languages
    overall_observed = np.mean(language_observed, axis=0)
    n_tasks = len({u.task for u in units})
    for m, model in enumerate(table.models):
        rows.append(
            {
                "level": "overall",
                "name": "overall",
                "model": model,
                "score": float(overall_observed[m]),
                "se": float(_sd(overall_draws[:, m])),
                "n_tasks": n_tasks,
            }
        )
    return pd.DataFrame(rows)
