"""The leaderboard's notes: what each kind of number contains, the numbered notes on
models with missing cells or tasks (each with its ✗/✓ table), and the note that opens the
page on a task view when fewer than two models cover every task."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from glotbench.analysis.headline import AnalysisSettings, ViewAnalysis, is_replicated
from glotbench.analysis.overall import LEFT_OUT
from glotbench.analysis.replicates import ReplicatedScores


def interval_notes(source: ReplicatedScores, settings: AnalysisSettings) -> dict[str, str]:
    """In words, what each kind of number on the page contains."""
    level = f"{settings.confidence_level * 100:g}%"
    cells = (
        f"a task–language cell: its full-test-set score, mean over seeds; its {level} "
        "interval is the percentile interval of its seeds × test-set bootstrap replicates, "
        "σ_w = the within-language SD over seeds and replicates (no language variation: it "
        "is one language)"
        if is_replicated(source)
        else "a task–language cell: the published score (one per model and language: no interval)"
    )
    return {
        "aggregates": settings.interval_text(source)
        + "; se_languages is the languages-only SE σ_b/√L (√(Σ SE_t²)/T over tasks)",
        "cells": cells,
        "ranks": f"ranks: from the same draws as the SEs, so they vary with the same sources; "
        f"# is the {level} rank interval rank_best–rank_worst, the bar chart the % of draws at "
        f"each rank, ≈ a {level} percentile interval of the paired difference with the row "
        "above that contains 0",
        "language_views": "language views: mean over tasks of one language (no SE: languages "
        "cannot be resampled within one language)",
    }


#: the analysis' text note on cells left out (``analysis/draws.common_units``): the page
#: shows it as a numbered note with a table and markers on the rows it concerns instead
UNBALANCED = "unbalanced design:"


def view_row_notes(
    drawn: ViewAnalysis | None,
    notes: list[str],
    partial: Mapping[str, Sequence[str]] | None = None,
    columns: Sequence[str] = (),
) -> tuple[list[dict[str, Any]], list[str]]:
    """Notes about particular models (numbered on the page, marked on their rows), other notes.

    ``drawn.missing``: cells left out of the view because not every model has
    them; ``partial``: per model without every task of the view, the tasks it
    lacks (of ``columns``). Each note carries a table (model × cell, ✗ = no
    score) instead of a list of cells.
    """
    row_notes: list[dict[str, Any]] = []
    if partial:  # tables are lists of cells: ✓ has a score, ✗ has none
        notes = [n for n in notes if not n.startswith(LEFT_OUT)]  # this table says it
        row_notes.append(
            {
                "text": "no score on every task of this view, so no mean of task means, SE or "
                "rank (✗ = the task is missing)",
                "models": list(partial),
                "table": {
                    "columns": ["model", *columns],
                    "rows": [
                        [m, *("✗" if c in lacks else "✓" for c in columns)]
                        for m, lacks in partial.items()
                    ],
                },
            }
        )
    if drawn is not None and drawn.missing:
        row_notes.append(
            {
                "text": f"{len(drawn.left_out)} cell(s) left out of this view's scores, SEs, "
                "intervals and ranks for every model, because these models lack them "
                "(✗ = no score)",
                "models": list(drawn.missing),
                "table": {
                    "columns": ["model", *drawn.left_out],
                    "rows": [
                        [m, *("✗" if c in lacks else "✓" for c in drawn.left_out)]
                        for m, lacks in drawn.missing.items()
                    ],
                },
            }
        )
        notes = [n for n in notes if not n.startswith(UNBALANCED)]
    return row_notes, notes


def partial_tasks(
    scores: pd.DataFrame, tasks: Sequence[str], models: Sequence[str]
) -> dict[str, list[str]]:
    """Per model of ``models`` lacking a task of ``tasks`` in ``scores``: the tasks it lacks."""
    have: dict[Any, set[str]] = {}
    pairs = scores[["model", "task"]].drop_duplicates()
    tasks_of = pairs["task"].astype(str).tolist()
    for model, task in zip(pairs["model"].tolist(), tasks_of, strict=True):
        have.setdefault(model, set()).add(task)
    return {
        m: [t for t in tasks if t not in have.get(m, set())]
        for m in models
        if any(t not in have.get(m, set()) for t in tasks)
    }


def shared_tasks_note(
    views: dict[str, dict[str, Any]], scores: pd.DataFrame, tasks: Sequence[str]
) -> str:
    """With fewer than two models on every task, note on the overall view which task views
    compare which models, and return the view the page opens on (issue 25 item 6).

    The page then opens on the task view that ranks the most models (first such task);
    otherwise on ``"overall"``.
    """
    covering = {
        t: sorted(scores.loc[scores["task"] == t, "model"].astype(str).unique()) for t in tasks
    }
    complete = set.intersection(*(set(m) for m in covering.values())) if covering else set()
    shared = {t: m for t, m in covering.items() if len(m) > 1}
    if len(tasks) < 2 or len(complete) >= 2 or not shared:
        return "overall"
    detail = "; ".join(f"{t} ({', '.join(m)})" for t, m in shared.items())
    views["overall"].setdefault("notes", []).insert(
        0,
        "Fewer than two models have a score on every task, so this view compares none; "
        f"each task view compares the models that cover that task: {detail}.",
    )
    best = max(shared, key=lambda t: len(shared[t]))
    return f"task:{best}"
