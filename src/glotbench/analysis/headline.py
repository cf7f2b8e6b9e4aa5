"""One analysis per request: settings, and the headline numbers every output renders.

The terminal, its JSON, the leaderboard page and the HTML report show the
same quantities — each model's mean over languages ± SE, its interval and its
rank distribution. They are computed here once, from one
:class:`AnalysisSettings`, so that every output shows the same numbers.

The headline SE counts every source of variation the data have: it is the SD
over paired draws of the aggregate (Sälevä, Ataman & Lignos 2025, §6.2: a
draw picks one seed and one test-set bootstrap replicate per language and
resamples the languages), so seeds, the test set and the choice of languages
all enter. Published tables with one score per language have only the
languages to resample (scheme ``languages-only``). The interval is the
percentile interval of the same draws (their α/2 and 1 − α/2 quantiles;
Efron & Tibshirani 1993, eq. 13.5): every draw is a mean of scores in the
metric's range, so the interval stays in it (a normal interval mean ± z·SE
gave a majority baseline's accuracy [−0.041, 0.092]). The headline score is
the point estimate (each cell's full-test-set score, mean over seeds), not a
mean of the draws.

The languages-only SE σ_b/√L (and √(Σ_t SE_t²)/T over tasks) is kept beside
it as ``se_languages``: it leaves out seed and test-set variance.

The settings object (:class:`AnalysisSettings`) and its defaults live in
:mod:`glotbench.analysis.settings`; they are re-exported here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from glotbench.analysis.aggregate import Leaderboard
from glotbench.analysis.draws import DrawSettings, prepare_draws
from glotbench.analysis.overall import overall_source
from glotbench.analysis.rank_stats import RankStatistics, rank_statistics
from glotbench.analysis.replicates import ReplicatedScores, model_rows
from glotbench.analysis.results import number, records, summary_repr
from glotbench.analysis.settings import AnalysisSettings, is_replicated, z_value
from glotbench.errors import InputError
from glotbench.resample.intervals import mean_standard_error, percentile_interval

__all__ = ["AnalysisSettings", "is_replicated", "z_value"]


def _languages_se(observed: np.ndarray, layout: list[np.ndarray]) -> np.ndarray:
    """σ_b/√L per task, combined as √(Σ_t SE_t²)/T (the languages-only SE), per model."""
    parts = []
    for idx in layout:
        parts.append(mean_standard_error(observed[:, idx], axis=1))
    stacked = np.stack(parts, axis=1)
    return np.sqrt((stacked**2).sum(axis=1)) / len(layout)


@dataclass(frozen=True)
class ViewAnalysis:
    """Mean over languages (of task means) per model, its SE, interval and ranks, from draws."""

    models: tuple[str, ...]
    observed: np.ndarray  # (M,)
    draws: np.ndarray  # (R, M) draws of the aggregate
    se: np.ndarray  # (M,) SD over the draws
    ci_low: np.ndarray
    ci_high: np.ndarray
    se_languages: np.ndarray  # (M,) languages-only SE
    n_languages: int
    n_tasks: int
    ranks: RankStatistics | None
    settings: DrawSettings
    notes: tuple[str, ...] = ()
    #: cells (task/language labels) left out of this view because not every
    #: model has them, per model that lacks them (an unbalanced design)
    missing: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: every cell left out of this view, in the source's order
    left_out: tuple[str, ...] = ()

    def order(self) -> list[str]:
        """The models best first (by observed score; ties keep the models' order)."""
        return [self.models[m] for m in np.argsort(-self.observed, kind="stable")]

    def tied_with(self) -> dict[str, tuple[str, ...]]:
        """Per model, the models it is statistically tied with in this view.

        Tied: the percentile interval (at the confidence level) of the paired
        draws of the two models' difference contains 0
        (:func:`glotbench.analysis.rank_stats.pair_decisions`), the definition
        behind the rank intervals. Empty without ranks (one model).
        """
        if self.ranks is None:
            return {m: () for m in self.models}
        return {
            self.models[m]: tuple(self.models[j] for j in others)
            for m, others in enumerate(self.ranks.tied_with())
        }

    def tie_next(self) -> dict[str, bool | None]:
        """Per model: tied with the next model down in score order (None for the last)."""
        order = np.argsort(-self.observed, kind="stable")
        out: dict[str, bool | None] = {self.models[m]: None for m in order}
        if self.ranks is not None:
            tied = self.ranks.are_tied(order[:-1], order[1:]).tolist()
            for upper, is_tied in zip(order[:-1].tolist(), tied, strict=True):
                out[self.models[upper]] = is_tied
        return out

    def __repr__(self) -> str:
        return summary_repr(self, self.sizes(), self.headline())

    def sizes(self) -> dict[str, int]:
        """Models, tasks and languages of the view (for reprs)."""
        return {
            "models": len(self.models),
            "tasks": self.n_tasks,
            "languages": self.n_languages,
        }

    def headline(self) -> str:
        """The best model's score and SE, as a short text (for reprs)."""
        observed = np.asarray(self.observed, dtype=np.float64)
        if observed.size == 0 or np.isnan(observed).all():
            return ""
        best = int(np.nanargmax(observed))
        return f"best {self.models[best]!r}: {number(observed[best])} (SE {number(self.se[best])})"

    def frame(self) -> pd.DataFrame:
        """One row per model: score, se, ci, se_languages, rank-1 share and mean rank."""
        out = pd.DataFrame(
            {
                "model": list(self.models),
                "score": self.observed,
                "se": self.se,
                "ci_low": self.ci_low,
                "ci_high": self.ci_high,
                "se_languages": self.se_languages,
                "n_languages": self.n_languages,
                "n_tasks": self.n_tasks,
            }
        )
        if self.ranks is not None:
            out["rank_1_share"] = self.ranks.shares[:, 0]
            out["mean_rank"] = self.ranks.mean_rank
        return out


def analyze_view(
    source: ReplicatedScores,
    settings: AnalysisSettings,
    *,
    models: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
    resample_languages: bool = True,
) -> ViewAnalysis:
    """Analyse the cells of ``models`` × ``tasks`` × ``languages`` (None: all) of ``source``."""
    names = list(models) if models is not None else list(source.models)
    keep = [
        i
        for i, u in enumerate(source.units)
        if (tasks is None or u.task in tasks) and (languages is None or u.language in languages)
    ]
    if not keep or not names:
        raise InputError("the view has no models or no units")
    index = model_rows(source.models, names)
    sub = source.take(index, keep)
    draw_settings = settings.draws(sub, languages=resample_languages)
    design = prepare_draws(sub, draw_settings)
    observed, draws = design.aggregate("mean")
    # SD over the draws (ddof = 1); exactly 0 when all draws are equal
    se = np.where(draws.max(axis=0) == draws.min(axis=0), 0.0, draws.std(axis=0, ddof=1))
    low, high = percentile_interval(draws, settings.confidence_level)
    table = design.table
    labels = [u.label(table.single_task) for u in table.units]
    lacking = ~table.present()
    dropped = ~design.keep
    missing = {
        names[m]: tuple(labels[u] for u in np.flatnonzero(dropped & lacking[m]))
        for m in range(len(names))
        if (dropped & lacking[m]).any()
    }
    return ViewAnalysis(
        models=tuple(names),
        observed=observed,
        draws=draws,
        se=se,
        ci_low=low,
        ci_high=high,
        se_languages=_languages_se(design.observed, design.layout),
        n_languages=len(design.units),
        n_tasks=len(design.layout),
        ranks=rank_statistics(draws, settings.confidence_level) if len(names) > 1 else None,
        settings=draw_settings,
        notes=tuple(design.notes),
        missing=missing,
        left_out=tuple(labels[u] for u in np.flatnonzero(dropped)),
    )


@dataclass(frozen=True)
class Analysis:
    """The result of one request: the overall view and each task's view, from one settings.

    Attributes
    ----------
    settings : AnalysisSettings
        The settings every number was computed with.
    overall : ViewAnalysis
        The overall view (mean of task means): aggregates, comparisons, ranks.
    tasks : dict of str to ViewAnalysis
        One view per task, computed on that task's units alone.
    interval_text : str
        How the intervals were made, as the pages print it.
    """

    settings: AnalysisSettings
    overall: ViewAnalysis
    tasks: dict[str, ViewAnalysis] = field(default_factory=dict)
    interval_text: str = ""

    def __repr__(self) -> str:
        return summary_repr(self, self.overall.sizes(), self.overall.headline())

    def summary(self) -> pd.DataFrame:
        """Per model (overall): score, se, ci, se_languages, rank-1 share, mean rank."""
        return self.overall.frame()

    def leaderboard(self, analytic: Leaderboard | None = None) -> Leaderboard:
        """The same numbers as an :class:`~glotbench.analysis.aggregate.Leaderboard`.

        With ``analytic`` (:func:`~glotbench.analysis.aggregate.leaderboard` of
        the same scores), its ``between_language_sd`` column is added and models
        without every task keep their row (no overall score), as there.
        """
        overall = self.overall.frame().rename(columns={"se": "standard_error"})
        overall = overall.sort_values("score", ascending=False, kind="stable")
        per_task = pd.concat(
            [
                view.frame().assign(task=task).rename(columns={"se": "standard_error"})
                for task, view in self.tasks.items()
            ],
            ignore_index=True,
        )
        columns = ["model", "task", "score", "standard_error", "ci_low", "ci_high", "se_languages"]
        per_task = per_task[[*columns, "n_languages"]]
        if analytic is not None:
            sd = analytic.per_task[["model", "task", "between_language_sd"]]
            per_task = per_task.merge(sd, on=["model", "task"], how="left")
            per_task = per_task[[*columns, "between_language_sd", "n_languages"]]
        per_task = per_task.sort_values(["task", "score"], ascending=[True, False], kind="stable")
        overall = overall[
            ["model", "score", "standard_error", "ci_low", "ci_high", "se_languages"]
            + ["n_tasks", "n_languages"]
        ]
        if analytic is not None:
            partial = analytic.overall[~analytic.overall["model"].isin(overall["model"])]
            if not partial.empty:
                overall = pd.concat(
                    [
                        overall,
                        partial.assign(se_languages=partial["standard_error"])[overall.columns],
                    ],
                    ignore_index=True,
                )
        return Leaderboard(
            per_task=per_task.reset_index(drop=True),
            overall=overall.reset_index(drop=True),
            tasks=tuple(self.tasks),
            confidence_level=self.settings.confidence_level,
        )

    def to_dict(self) -> dict[str, Any]:
        summary = self.summary()
        if self.overall.ranks is not None:
            shares = self.overall.ranks.shares
            summary["rank_shares"] = [
                [round(float(v), 4) for v in shares[m]] for m in range(len(summary))
            ]
        return {
            "settings": self.settings.to_dict(),
            "scheme": self.overall.settings.scheme,
            "intervals": self.interval_text,
            "overall": records(summary),
            "per_task": records(self.leaderboard().per_task),
            "ties": [list(pair) for pair in self.ties()],
            "notes": list(self.overall.notes),
        }

    def ties(self) -> list[tuple[str, str]]:
        """Overall view: the statistically tied pairs of models (see ``ViewAnalysis.tied_with``)."""
        if self.overall.ranks is None:
            return []
        names = self.overall.models
        return [(names[a], names[b]) for a, b in self.overall.ranks.ties.tolist()]


def models_with_task(source: ReplicatedScores, task: str) -> list[str]:
    """Models with at least one score on ``task``."""
    columns = [i for i, u in enumerate(source.units) if u.task == task]
    has = ~np.isnan(source.values[:, columns]).all(axis=(2, 3))
    return [m for m, row in zip(source.models, has, strict=True) if row.any()]


#: runs view requests (keyword arguments of :func:`analyze_view` after ``source`` and
#: ``settings``) and returns their views in order; e.g. one Ray task each
ViewRunner = Callable[
    [ReplicatedScores, AnalysisSettings, list[dict[str, Any]]], list[ViewAnalysis]
]


def run_views(
    source: ReplicatedScores, settings: AnalysisSettings, requests: list[dict[str, Any]]
) -> list[ViewAnalysis]:
    """The default :data:`ViewRunner`: each view in this process, in order."""
    return [analyze_view(source, settings, **request) for request in requests]


def analyze(
    source: ReplicatedScores,
    settings: AnalysisSettings | None = None,
    *,
    models: Sequence[str] | None = None,
    runner: ViewRunner = run_views,
) -> Analysis:
    """The headline analysis of ``source``: overall (mean of task means) and per task.

    Every task's view draws on that task's units alone, so a task's numbers
    are the same whether shown alone or as a column of the overall view; with
    one task the overall view *is* the task view. The views are independent:
    ``runner`` may compute them elsewhere (several processes or machines,
    ``benchmarks/bench_ray_leaderboard.py``); each view's draws depend only on
    the source and the settings, so the result is the same.

    Parameters
    ----------
    source : ReplicatedScores
        Scores with replications, as :func:`glotbench.api.load_replicated`
        returns them.
    settings : AnalysisSettings, optional
        Everything that decides the numbers (draws, seed, scheme, level);
        default: :data:`~glotbench.analysis.settings.DEFAULT_SETTINGS`.
    models : sequence of str, optional
        Keep only these models.
    runner : callable, default ``run_views``
        Computes the views (:data:`ViewRunner`): in this process by default.

    Returns
    -------
    Analysis
        ``overall`` and ``tasks`` (one view per task), ``leaderboard`` and the
        ``settings``; ``.to_dict()`` is the JSON of ``glotbench analyze``.

    Raises
    ------
    InputError
        No model has scores on every task, or ``models`` names an unknown model.

    See Also
    --------
    glotbench.api.analyze_aggregate : The aggregates alone, with more aggregators.

    Examples
    --------
    >>> from glotbench import api
    >>> api.analyze_headline(api.load_replicated(input="scores.csv"))
    Analysis(models=3, tasks=1, languages=3, best 'glot500': 0.712 (SE 0.01916))
    """
    settings = settings or AnalysisSettings()
    names = list(models) if models is not None else list(source.models)
    tasks = sorted(dict.fromkeys(u.task for u in source.units))
    present = {t: set(models_with_task(source, t)) for t in tasks}
    # the overall view's models: one rule for every door (glotbench.analysis.overall)
    ranked, scope_notes = overall_source(source.select_models(names))
    requests: list[dict[str, Any]] = [{"models": list(ranked.models)}]
    if len(tasks) > 1:
        requests += [{"models": [m for m in names if m in present[t]], "tasks": [t]} for t in tasks]
    overall, *task_views = runner(source, settings, requests)
    overall = dataclasses.replace(overall, notes=(*scope_notes, *overall.notes))
    per_task = dict(zip(tasks, task_views, strict=True)) if task_views else {tasks[0]: overall}
    return Analysis(settings, overall, per_task, settings.interval_text(source))
