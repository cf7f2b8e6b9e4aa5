"""The static interactive leaderboard: one self-contained ``index.html``.

The page holds its data as JSON inside ``<script type="application/json">``
(with ``<``, ``>``, ``&``, U+2028 and U+2029 escaped, so no string can close
the tag) and renders every value with ``textContent``; a Content-Security-Policy
allows only the page's own script (by its SHA-256) and no network access. A
model named ``<img src=x onerror=alert(1)>`` is therefore shown as text.

Statistics come from the analysis layer: every view's score, SE, interval
and ranks from :func:`glotbench.analysis.headline.analyze_view` (SE = SD over
paired draws that resample seeds, test-set bootstrap replicates and
languages, as in the terminal and the report; computed once per distinct
view, and taken from the request's :class:`~glotbench.analysis.headline.Analysis`
when one is given), per-cell means and within-language SDs σ_w from
:func:`glotbench.analysis.variance.components`, model order and coverage from
:func:`glotbench.analysis.aggregate.leaderboard`. An overall view's task
column is the task view's own number. This module only assembles them; the
page is filled and written by :mod:`~glotbench.report.leaderboard_page`, and
the notes are worded by :mod:`~glotbench.report.leaderboard_notes`.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from glotbench.analysis.aggregate import leaderboard
from glotbench.analysis.headline import (
    Analysis,
    AnalysisSettings,
    ViewAnalysis,
    analyze_view,
    is_replicated,
)
from glotbench.analysis.pair_view import MAX_PAIR_CELLS, RankedComparisons, pair_comparisons
from glotbench.analysis.replicates import ReplicatedScores
from glotbench.analysis.settings import DEFAULT_SETTINGS
from glotbench.analysis.speed import SpeedTable
from glotbench.analysis.variance import cell_summary
from glotbench.errors import GlotbenchError
from glotbench.report.leaderboard_notes import (
    interval_notes,
    partial_tasks,
    shared_tasks_note,
    view_row_notes,
)
from glotbench.report.leaderboard_page import (
    LeaderboardData,
    embed_json,
    render_html,
    script_hash,
    write_leaderboard,
)
from glotbench.report.leaderboard_ranks import rank_block

# the page's rendering lives in leaderboard_page, its notes in leaderboard_notes; their
# public names stay importable from here
__all__ = [
    "LANGUAGE_GROUPS",
    "XTREME_R_METADATA",
    "LeaderboardData",
    "build_leaderboard",
    "compare_command",
    "embed_json",
    "interval_notes",
    "render_html",
    "score_digits",
    "script_hash",
    "write_leaderboard",
]

#: language groups offered as sub-leaderboards when two or more of their
#: languages are present (ISO 639-1 codes; genealogical groups, Glottolog)
LANGUAGE_GROUPS: dict[str, tuple[str, ...]] = {
    "Mainland Scandinavian": ("da", "nb", "nn", "no", "sv"),
    "Insular Scandinavian": ("fo", "is"),
    "Germanic": ("af", "da", "de", "en", "fo", "fy", "is", "lb", "nb", "nl", "nn", "no", "sv"),
    "Romance": ("ca", "es", "fr", "gl", "it", "pt", "ro"),
    "Slavic": ("be", "bg", "cs", "hr", "mk", "pl", "ru", "sk", "sl", "sr", "uk"),
    "Indo-Aryan": ("bn", "gu", "hi", "mr", "ne", "pa", "ur"),
    "Dravidian": ("kn", "ml", "ta", "te"),
    "Turkic": ("az", "kk", "ky", "tr", "tt", "uz"),
    "Semitic": ("am", "ar", "he", "mt"),
    "Uralic": ("et", "fi", "hu"),
    "Austronesian": ("id", "jv", "mg", "ms", "tl"),
    "Niger-Congo": ("ig", "sw", "xh", "yo", "zu"),
}

#: metadata of the embedded XTREME-R baselines (Ruder et al. 2021, Table 8;
#: Devlin et al. 2019; Conneau et al. 2020; Xue et al. 2021)
XTREME_R_METADATA: dict[str, dict[str, Any]] = {
    "mBERT": {"parameters": "178M", "type": "encoder", "training data": "Wikipedia (104 langs)"},
    "mBERT translate-train": {
        "parameters": "178M",
        "type": "encoder",
        "training data": "Wikipedia (104 langs) + translated training data",
    },
    "mBERT translate-train-all": {
        "parameters": "178M",
        "type": "encoder",
        "training data": "Wikipedia (104 langs) + translated training data (all langs)",
    },
    "XLM-R Large": {"parameters": "550M", "type": "encoder", "training data": "CC-100 (100 langs)"},
    "mT5-XXL": {"parameters": "13B", "type": "encoder-decoder", "training data": "mC4 (101 langs)"},
}


def score_digits(scores: Any) -> int:
    """Decimals to show: 3 for scores on a 0–1 scale, 1 for percentages."""
    values = np.abs(np.asarray(scores, dtype=float))
    values = values[np.isfinite(values)]
    return 3 if values.size and values.max() <= 1.5 else 1


def _num(value: Any, digits: int = 4) -> float | None:
    """A JSON number rounded to ``digits`` decimals, or None where undefined."""
    if value is None:
        return None
    value = float(value)
    return round(value, digits) if math.isfinite(value) else None


def _metadata_value(value: Any) -> str | float | int | bool | None:
    """Metadata as a JSON scalar (nested values become their JSON text)."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _speed_payload(speed: SpeedTable | None, models: Sequence[str]) -> dict[str, Any]:
    """model -> [tokens/s, 95 % half-width, short tokens/s, its half-width, trivial]
    (None: not measured; trivial: no per-token work, see
    :data:`glotbench.analysis.speed.TRIVIAL_TOKENS_PER_SECOND`)."""
    if speed is None:
        return {}
    out: dict[str, Any] = {}
    for model in models:
        row = speed.of(model)
        if row is not None:
            out[model] = [
                _metadata_value(row["tokens_per_second"]),
                _metadata_value(row["ci_half_width"]),
                _metadata_value(row["tokens_per_second_short"]),
                _metadata_value(row["ci_half_width_short"]),
                bool(row.get("trivial", False)),
            ]
    return out


def _replicated(source: ReplicatedScores) -> bool:
    return is_replicated(source)


ViewCache = dict[tuple[Any, ...], tuple[ViewAnalysis | None, list[str]]]


class _Views:
    """Draw-based analyses of the views, computed once per distinct (models, units)."""

    def __init__(
        self, source: ReplicatedScores, settings: AnalysisSettings, analysis: Analysis | None
    ) -> None:
        self.source = source
        self.settings = settings
        self.cache: ViewCache = {}
        #: the rank block of each cached view (by the view's id; :func:`rank_block`)
        self.blocks: dict[int, dict[str, dict[str, Any]]] = {}
        self.all_units = tuple(range(len(source.units)))
        if analysis is not None:  # the request's computed result: reuse, never recompute
            self._seed(analysis.overall, None, None, True)
            for task, view in analysis.tasks.items():
                self._seed(view, [task], None, True)

    def _key(
        self,
        models: Sequence[str],
        tasks: Sequence[str] | None,
        languages: Sequence[str] | None,
        resample: bool,
    ) -> tuple[Any, ...]:
        keep = tuple(
            i
            for i, u in enumerate(self.source.units)
            if (tasks is None or u.task in tasks) and (languages is None or u.language in languages)
        )
        # the draws and every per-model number do not depend on the models' order
        return (tuple(sorted(models)), keep, resample)

    def _seed(
        self,
        view: ViewAnalysis,
        tasks: Sequence[str] | None,
        languages: Sequence[str] | None,
        resample: bool,
    ) -> None:
        key = self._key(view.models, tasks, languages, resample)
        self.cache[key] = (self._compact(key, view), list(view.notes))  # as in get()

    def _compact(self, key: tuple[Any, ...], view: ViewAnalysis) -> ViewAnalysis:
        """``view`` with its rank block computed, then without its draws and rank counts
        (R × M and M × M: 600 MB a view at 5,000 models), unless it is the overall view
        (every cell, languages resampled), whose draws the pairwise view compares."""
        block = rank_block(view)
        if not (key[1] == self.all_units and key[2]):
            n_models = len(view.models)
            view = dataclasses.replace(view, draws=np.empty((0, n_models)), ranks=None)
        self.blocks[id(view)] = block
        return view

    def ranks(self, view: ViewAnalysis | None) -> dict[str, dict[str, Any]]:
        """The rank block (:func:`~glotbench.report.leaderboard_ranks.rank_block`) of a view
        :meth:`get` returned; empty for None."""
        return {} if view is None else self.blocks[id(view)]

    def get(
        self,
        models: Sequence[str],
        tasks: Sequence[str] | None,
        languages: Sequence[str] | None,
        resample: bool,
    ) -> tuple[ViewAnalysis | None, list[str]]:
        """The analysis of ``models`` on ``tasks`` × ``languages`` (None: all), and notes."""
        key = self._key(models, tasks, languages, resample)
        if not models or not key[1]:
            return None, []
        if key not in self.cache:
            if not resample and self.settings.resolved_scheme(self.source) == "languages-only":
                self.cache[key] = (None, [])  # one score per cell and languages fixed: no draws
            else:
                try:
                    view = analyze_view(
                        self.source,
                        self.settings,
                        models=models,
                        tasks=tasks,
                        languages=languages,
                        resample_languages=resample,
                    )
                    self.cache[key] = (self._compact(key, view), list(view.notes))
                except GlotbenchError as exc:
                    self.cache[key] = (None, [str(exc)])
        return self.cache[key]


def _view_rows(view: ViewAnalysis | None) -> dict[str, dict[str, Any]]:
    """Per model of a view: score, SE (from the draws) and the draws' percentile interval."""
    if view is None:
        return {}
    return {
        model: {
            "score": _num(view.observed[m]),
            "se": _num(view.se[m]),
            "ci": [_num(view.ci_low[m]), _num(view.ci_high[m])],
            "se_languages": _num(view.se_languages[m]),
        }
        for m, model in enumerate(view.models)
    }


def _aggregate_rows(board_frame: pd.DataFrame) -> dict[str, dict[str, Any]]:
    return {
        str(r["model"]): {
            "score": _num(r["score"]),
            "se": _num(r["standard_error"]),
            "ci": [_num(r["ci_low"]), _num(r["ci_high"])],
            "n_languages": int(r["n_languages"]),
            **({"n_tasks": int(r["n_tasks"])} if "n_tasks" in r else {}),
        }
        for r in board_frame.to_dict(orient="records")
    }


def _task_models(scores: pd.DataFrame, task: str) -> list[str]:
    return [str(m) for m in scores.loc[scores["task"] == task, "model"].unique()]


def _multi_task_view(
    kind: str,
    label: str,
    scores: pd.DataFrame,
    views: _Views,
    languages: Sequence[str] | None,
    confidence_level: float,
) -> dict[str, Any]:
    """Overall or language-group view: unweighted mean of task means, task columns.

    Score, SE and interval of every model with all tasks come from the draws
    of this view; each task column is that task's own analysis (for the
    overall view: the very numbers of the task's view).
    """
    board = leaderboard(scores, confidence_level=confidence_level)
    overall = _aggregate_rows(board.overall)
    complete = [m for m, row in overall.items() if row["score"] is not None]
    drawn, notes = views.get(complete, list(board.tasks), languages, True)
    notes = list(notes)
    drawn_rows = _view_rows(drawn)
    per_task: dict[str, dict[str, Any]] = {}
    for task in board.tasks:
        if len(board.tasks) == 1:
            task_view = drawn
        else:
            task_view, task_notes = views.get(_task_models(scores, task), [task], languages, True)
            notes += [n for n in task_notes if n not in notes]
        for model, row in _view_rows(task_view).items():
            per_task.setdefault(model, {})[task] = [row["score"], row["se"], *row["ci"]]
    ranks = views.ranks(drawn)
    rows = []
    for model, row in overall.items():
        row = row | drawn_rows.get(model, {"se_languages": row["se"]})
        rows.append(
            row | {"model": model, "sub": per_task.get(model, {}), "rank": ranks.get(model)}
        )
    partial = partial_tasks(scores, board.tasks, [m for m in overall if m not in complete])
    row_notes, notes = view_row_notes(drawn, notes, partial, board.tasks)
    return {
        "kind": kind,
        "label": label,
        "score_label": "mean of task means",
        "sub_columns": list(board.tasks),
        "rows": rows,
        "row_notes": row_notes,
        "notes": notes,
    }


def _task_view(
    task: str, scores: pd.DataFrame, views: _Views, confidence_level: float
) -> dict[str, Any]:
    board = leaderboard(scores, confidence_level=confidence_level)
    agg = _aggregate_rows(board.per_task)
    drawn, notes = views.get(list(agg), [task], None, True)
    drawn_rows = _view_rows(drawn)
    if drawn is not None:  # the languages the drawn score averages (cells all models share)
        for row in drawn_rows.values():
            row["n_languages"] = drawn.n_languages
    ranks = views.ranks(drawn)
    languages = sorted(scores["language"].astype(str).unique())
    row_notes, notes = view_row_notes(drawn, list(notes))
    return {
        "kind": "task",
        "label": task,
        "task": task,
        "score_label": "mean over languages",
        "sub_columns": languages,
        "rows": [
            row
            | drawn_rows.get(m, {"se_languages": row["se"]})
            | {"model": m, "rank": ranks.get(m)}
            for m, row in agg.items()
        ],
        "row_notes": row_notes,
        "notes": notes,
    }


def _language_view(
    language: str, scores: pd.DataFrame, views: _Views, confidence_level: float
) -> dict[str, Any]:
    board = leaderboard(scores, confidence_level=confidence_level)
    overall = _aggregate_rows(board.overall)
    complete = [m for m, row in overall.items() if row["score"] is not None]
    drawn, notes = views.get(complete, None, [language], False)
    ranks = views.ranks(drawn)
    partial = partial_tasks(scores, board.tasks, [m for m in overall if m not in complete])
    row_notes, notes = view_row_notes(drawn, list(notes), partial, board.tasks)
    return {
        "kind": "language",
        "label": language,
        "language": language,
        "score_label": "mean over tasks",
        "sub_columns": list(board.tasks),
        "rows": [
            row | {"model": m, "se": None, "ci": [None, None], "rank": ranks.get(m)}
            for m, row in overall.items()
        ],
        "row_notes": row_notes,
        "notes": notes,
    }


def _cell_scores(source: ReplicatedScores) -> pd.DataFrame:
    """One score per model, task and language: its point estimate, the mean over seeds of
    each seed's full-test-set score (:meth:`ReplicatedScores.point_frame`; never a mean of
    bootstrap replicates when the full-sample score is known)."""
    return source.point_frame()


def _cell_rows(source: ReplicatedScores, confidence_level: float) -> list[list[Any]]:
    """Per (model, task, language): score, σ_w and its interval, as the analysis computed them
    (:func:`glotbench.analysis.variance.cell_summary`), rounded for the page."""
    return [
        [
            int(r.model_index),
            r.task,
            r.language,
            _num(r.score),
            _num(r.sigma_w),
            _num(r.ci_low),
            _num(r.ci_high),
            int(r.n_seeds),
        ]
        for r in cell_summary(source, confidence_level).itertuples(index=False)
    ]


def build_leaderboard(
    source: ReplicatedScores,
    *,
    title: str = "glotbench leaderboard",
    metadata: Mapping[str, Mapping[str, Any]] | None = None,
    language_groups: Mapping[str, Sequence[str]] | None = None,
    notes: Sequence[str] = (),
    n_draws: int = DEFAULT_SETTINGS.n_draws,
    seed: int = DEFAULT_SETTINGS.seed,
    confidence_level: float = DEFAULT_SETTINGS.confidence_level,
    settings: AnalysisSettings | None = None,
    analysis: Analysis | None = None,
    speed: SpeedTable | None = None,
    pair_models: int | None = None,
    max_pair_cells: int = MAX_PAIR_CELLS,
    comparisons: RankedComparisons | None = None,
) -> LeaderboardData:
    """Assemble every view of the leaderboard from replicated scores.

    ``settings`` (default: from ``n_draws``, ``seed``, ``confidence_level``)
    decide the draws of every view; ``analysis`` (the request's computed
    :class:`~glotbench.analysis.headline.Analysis` of the same source and
    settings) supplies the overall and task views without recomputing them.
    ``metadata`` maps a model to its metadata (parameters, training data, type,
    …); ``language_groups`` maps a group name to its languages (default:
    :data:`LANGUAGE_GROUPS`, those with two or more languages present).
    ``speed`` (:func:`glotbench.analysis.sources.speed_store.speed_table`) adds a tokens-per-second
    column, shown as computed. The pairwise view holds every pair of the top
    ``pair_models`` models of the overall ranking (default: as many as keep
    pairs × cells within ``max_pair_cells``), compared by
    :func:`glotbench.analysis.pair_view.pair_comparisons` on the overall view's draws
    (``comparisons``, the request's ranked comparisons, are used when they are those pairs).
    """
    settings = _page_settings(source, settings, analysis, n_draws, seed, confidence_level)
    confidence_level = settings.confidence_level
    scores = _cell_scores(source)
    tasks = sorted(scores["task"].unique())
    languages = sorted(scores["language"].unique())
    views_cache = _Views(source, settings, analysis)
    groups = dict(language_groups) if language_groups is not None else dict(LANGUAGE_GROUPS)
    views, present_groups = _all_views(scores, views_cache, groups, confidence_level)
    default_view = shared_tasks_note(views, scores, tasks)
    pairwise = _pairwise(
        source, views["overall"], views_cache, settings, pair_models, max_pair_cells, comparisons
    )
    models, keys = _models_payload(source, metadata)
    payload = {
        "title": title,
        "confidence_level": confidence_level,
        "replicated": _replicated(source),
        "analysis": settings.to_dict() | {"scheme": settings.resolved_scheme(source)},
        # the footer: the settings every number on the page was computed with
        "settings": settings.record(source),
        "intervals": interval_notes(source, settings),
        "models": models,
        "metadata_keys": keys,
        "speed": _speed_payload(speed, source.models),
        "score_digits": score_digits(scores["score"]),
        "tasks": tasks,
        "languages": languages,
        "groups": present_groups,
        "cells": _cell_rows(source, confidence_level),
        "views": views,
        "default_view": default_view,
        "pairwise": pairwise,
        "notes": list(notes),
    }
    return LeaderboardData(payload)


def _page_settings(
    source: ReplicatedScores,
    settings: AnalysisSettings | None,
    analysis: Analysis | None,
    n_draws: int,
    seed: int,
    confidence_level: float,
) -> AnalysisSettings:
    """The settings of every view: ``settings``, else the analysis', else from the arguments;
    an analysis computed with other settings than the page's is an error."""
    if settings is None:
        return (
            analysis.settings
            if analysis is not None
            else AnalysisSettings(
                n_draws=n_draws,
                seed=seed,
                confidence_level=confidence_level,
                n_replicates=source.n_replicates,  # the source's, as shown on the page
            )
        )
    if analysis is not None and analysis.settings != settings:
        raise GlotbenchError("the analysis was computed with other settings than the page's")
    return settings


def _all_views(
    scores: pd.DataFrame,
    views_cache: _Views,
    groups: Mapping[str, Sequence[str]],
    confidence_level: float,
) -> tuple[dict[str, dict[str, Any]], dict[str, list[str]]]:
    """Every view of the page in its order (overall, tasks, language groups with two or more
    languages present, languages), and those groups' present languages."""
    tasks = sorted(scores["task"].unique())
    languages = sorted(scores["language"].unique())
    views: dict[str, dict[str, Any]] = {}
    task_views = {
        task: _task_view(task, scores[scores["task"] == task], views_cache, confidence_level)
        for task in tasks
    }
    views["overall"] = _multi_task_view(
        "overall", "Overall", scores, views_cache, None, confidence_level
    )
    for task in tasks:
        views[f"task:{task}"] = task_views[task]
    present_groups = {}
    for name, members in groups.items():
        present = sorted(set(members) & set(languages))
        if len(present) >= 2:
            present_groups[name] = present
            views[f"group:{name}"] = _multi_task_view(
                "group",
                name,
                scores[scores["language"].isin(present)],
                views_cache,
                present,
                confidence_level,
            )
    for language in languages:
        views[f"language:{language}"] = _language_view(
            language, scores[scores["language"] == language], views_cache, confidence_level
        )
    return views, present_groups


def _models_payload(
    source: ReplicatedScores, metadata: Mapping[str, Mapping[str, Any]] | None
) -> tuple[list[dict[str, Any]], list[str]]:
    """Each model with its metadata (every key any model has; JSON scalars), and the keys."""
    meta = {str(k): dict(v) for k, v in (metadata or {}).items()}
    keys = sorted({k for m in source.models for k in meta.get(m, {})})
    models = [
        {"name": m, "metadata": {k: _metadata_value(meta.get(m, {}).get(k)) for k in keys}}
        for m in source.models
    ]
    return models, keys


def compare_command(settings: AnalysisSettings, source: ReplicatedScores) -> str:
    """The ``glotbench analyze compare`` command that gives every pair's numbers as the page's.

    It loads every model of the store, as the page does: the bootstrap replicates of a cell
    are paired across the models loaded together, and their realisation depends on that set
    (docs/resampling.md, exact support compression), so a command restricted with ``--model``
    agrees with the page in distribution, not digit for digit.
    """
    draws = settings.draws(source)
    languages = f"--resample-languages {draws.languages}"
    if draws.languages == "without":
        languages += f" --k {draws.k}"
    metrics = "".join(f" --metric {m}" for m in settings.metric)
    return (
        f"glotbench analyze compare --per-language --pairs-out pairs.parquet "
        f"--scheme {draws.scheme} --draws {draws.n_draws} --seed {draws.seed} {languages} "
        f"--confidence-level {settings.confidence_level:g} "
        f"--replicates {settings.n_replicates}{metrics}"
    )


def _pairwise(
    source: ReplicatedScores,
    overall: Mapping[str, Any],
    views: _Views,
    settings: AnalysisSettings,
    pair_models: int | None,
    max_pair_cells: int,
    comparisons: RankedComparisons | None,
) -> dict[str, Any] | None:
    """The pairwise view's data: the analysis' comparisons of the top models' pairs."""
    complete = [row["model"] for row in overall["rows"] if row["score"] is not None]
    if len(complete) < 2:
        return None
    drawn, _ = views.get(complete, None, None, True)
    if drawn is None:
        return None
    pairs = pair_comparisons(
        source,
        drawn,
        settings,
        max_cells=max_pair_cells,
        n_models=pair_models,
        computed=comparisons,
    )
    return pairs.to_dict() | {"command": compare_command(settings, source)}
