"""The numbered notes of a report about rows with missing data, each with its ✗/✓ table.

A model without every task, cells left out because some models lack them, models
lacking task–language cells and model–task rows with one language: each becomes
a :class:`~glotbench.report.document.RowNote` marked on the rows it concerns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from glotbench.analysis.aggregate import Leaderboard
from glotbench.analysis.headline import Analysis
from glotbench.analysis.variance import VarianceComponents
from glotbench.report.document import MISSING, PRESENT, RowNote


def _grid(rows: Mapping[str, Sequence[str]], columns: Sequence[str], first: str) -> pd.DataFrame:
    """A ✗/✓ table: one row per key of ``rows``, ✗ in the columns its value lists."""
    return pd.DataFrame(
        [
            [name, *(MISSING if c in lacks else PRESENT for c in columns)]
            for name, lacks in rows.items()
        ],
        columns=[first, *columns],
    )


def cell_grid(labels: Sequence[str], tasks: Sequence[str]) -> pd.DataFrame:
    """Task–language cells (``task/language`` labels, or languages of one task) as a table.

    One row per task, one column per language, ✓ where the cell is listed.
    """
    cells: dict[str, list[str]] = {}
    for label in labels:
        task = next((t for t in tasks if label.startswith(f"{t}/")), None)
        if task is None:  # one task: labels are languages
            task, language = (tasks[0] if len(tasks) == 1 else ""), label
        else:
            language = label[len(task) + 1 :]
        cells.setdefault(task, []).append(language)
    languages = sorted({lang for langs in cells.values() for lang in langs})
    return pd.DataFrame(
        [
            [task, *(PRESENT if lang in langs else "" for lang in languages)]
            for task, langs in cells.items()
        ],
        columns=["task", *languages],
    )


def partial_note(board: Leaderboard) -> RowNote | None:
    """Models without every task: no overall score."""
    overall = board.overall
    unscored = overall.loc[overall["score"].isna(), "model"].astype(str).tolist()
    if not unscored:
        return None
    has = board.per_task.groupby("model")["task"].agg(lambda t: set(t.astype(str)))
    lacks = {m: [t for t in board.tasks if t not in has.get(m, set())] for m in unscored}
    return RowNote(
        "no score on every task, so no overall score, SE or rank; only its task rows "
        f"are shown ({MISSING} = the task is missing)",
        tuple(unscored),
        _grid(lacks, board.tasks, "model"),
    )


def left_out_note(analysis: Analysis | None) -> RowNote | None:
    """Cells left out of the overall view or a task's view because some models lack them."""
    if analysis is None:
        return None
    several = len(analysis.tasks) > 1  # with one task, the overall view is the task's view
    lacks: dict[str, list[str]] = {}
    rows: list[Any] = []
    for model, labels in analysis.overall.missing.items():
        lacks.setdefault(model, []).extend(labels)
        rows.append(model)
    for task, view in analysis.tasks.items() if several else ():
        for model, labels in view.missing.items():
            lacks.setdefault(model, []).extend(f"{task}/{c}" for c in labels)
            rows.append((task, model))
    if not lacks:
        return None
    columns = list(
        dict.fromkeys(
            [
                *analysis.overall.left_out,
                *(
                    f"{task}/{c}"
                    for task, view in (analysis.tasks.items() if several else ())
                    for c in view.left_out
                ),
            ]
        )
    )
    return RowNote(
        f"{len(columns)} task–language cell(s) are not shared by every model, so each "
        "is left out, for every model, of the tables the marked rows are in: the "
        "overall scores, SEs, intervals, comparisons and ranks, and the per-task "
        f"scores of its task ({MISSING} = no score)",
        tuple(dict.fromkeys(rows)),
        _grid({m: list(dict.fromkeys(v)) for m, v in lacks.items()}, columns, "model"),
    )


def lacking_note(variance: VarianceComponents) -> RowNote | None:
    """Models lacking task–language cells (from the variance components' rows)."""
    present = variance.per_unit
    if not {"model", "task", "unit"} <= set(present.columns):
        return None
    units = list(dict.fromkeys(present["unit"].astype(str)))
    task_of = dict(zip(present["unit"].astype(str), present["task"].astype(str), strict=True))
    have = set(zip(present["model"].astype(str), present["unit"].astype(str), strict=True))
    lacks = {
        m: [u for u in units if (m, u) not in have]
        for m in dict.fromkeys(present["model"].astype(str))
    }
    lacks = {m: v for m, v in lacks.items() if v}
    if not lacks:
        return None
    columns = [u for u in units if any(u in v for v in lacks.values())]
    return RowNote(
        "the marked models lack some task–language cells: their variance components "
        "use their own languages, and comparisons and ranks use the cells every "
        f"compared model has ({MISSING} = no score)",
        tuple(dict.fromkeys((m, task_of[u]) for m, v in lacks.items() for u in v)),
        _grid(lacks, columns, "model"),
    )


def single_language_note(variance: VarianceComponents) -> RowNote | None:
    """Model–task rows with one language: no σ_b."""
    frame = variance.per_model
    if not {"n_languages", "model", "task"} <= set(frame.columns):
        return None
    one = frame[frame["n_languages"] < 2]
    if one.empty:
        return None
    return RowNote(
        "one language only: no between-language SD σ_b (shown as —)",
        tuple(zip(one["model"].astype(str), one["task"].astype(str), strict=True)),
    )


def drop_covered(notes: Sequence[str], covered: Sequence[RowNote | None]) -> list[str]:
    """Text notes without those a row note (with its table) says better."""
    left_out, lacking, single = covered
    out = []
    for note in notes:
        if left_out is not None and note.startswith("unbalanced design:") and "left out" in note:
            continue
        if lacking is not None and note.startswith("unbalanced design:") and "no scores" in note:
            continue
        if single is not None and note.endswith(": one language only, so no between-language SD"):
            continue
        out.append(note)
    return out
