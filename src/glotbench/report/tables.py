"""Rich tables for the terminal. Rendering only: no statistics are computed here."""

from __future__ import annotations

import math

import pandas as pd
from rich.table import Table

from glotbench.analysis.aggregate import Leaderboard


def format_estimate(score: float, se: float, digits: int = 1) -> str:
    """``"64.2 ± 1.3"``; a dash where the value is missing."""
    if score is None or (isinstance(score, float) and math.isnan(score)):
        return "—"
    if se is None or (isinstance(se, float) and math.isnan(se)):
        return f"{score:.{digits}f}"
    return f"{score:.{digits}f} ± {se:.{digits}f}"


def overall_table(board: Leaderboard, title: str = "Overall") -> Table:
    """One row per model: overall mean ± SE, its interval, and task coverage."""
    level = round(board.confidence_level * 100)
    table = Table(title=title, title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("model", style="bold")
    table.add_column("overall ± SE", justify="right")
    table.add_column(f"{level}% CI", justify="right")
    table.add_column("tasks", justify="right")
    table.add_column("languages", justify="right")
    for rank, row in enumerate(board.overall.itertuples(index=False), start=1):
        complete = not math.isnan(row.score)
        table.add_row(
            str(rank) if complete else "",
            str(row.model),
            format_estimate(row.score, row.standard_error),
            f"[{row.ci_low:.1f}, {row.ci_high:.1f}]" if complete else "—",
            f"{row.n_tasks}/{len(board.tasks)}",
            str(row.n_languages),
        )
    return table


def per_task_table(board: Leaderboard, title: str = "Per task") -> Table:
    """Tasks × models; each cell the mean over languages ± its SE."""
    table = Table(title=title, title_justify="left")
    table.add_column("task", style="bold")
    table.add_column("L", justify="right")
    models = list(board.overall["model"])
    for model in models:
        table.add_column(str(model), justify="right")
    cells = board.per_task.set_index(["task", "model"])
    for task in board.tasks:
        of_task = board.per_task[board.per_task["task"] == task]
        row = [task, str(int(of_task["n_languages"].max()))]
        for model in models:
            if (task, model) in cells.index:
                cell = cells.loc[(task, model)]
                row.append(format_estimate(cell["score"], cell["standard_error"]))
            else:
                row.append("—")
        table.add_row(*row)
    return table


def leaderboard_tables(board: Leaderboard, title: str) -> list[Table]:
    """The overall table and the per-task table, with a caption on how to read them."""
    overall = overall_table(board, title=title)
    per_task = per_task_table(board, title="Per task: mean over languages ± SE")
    per_task.caption = (
        "SE = between-language SD / √L (languages as a sample); overall = unweighted mean "
        "of the tasks, SE = √(Σ SE²)/T; models that lack tasks get no overall score."
    )
    per_task.caption_justify = "left"
    return [overall, per_task]


def frame_table(frame: pd.DataFrame, title: str | None = None, digits: int = 4) -> Table:
    """Any tidy frame as a rich table (floats rounded to ``digits``)."""
    table = Table(title=title, title_justify="left")
    for column in frame.columns:
        numeric = pd.api.types.is_numeric_dtype(frame[column])
        table.add_column(str(column), justify="right" if numeric else "left")
    for row in frame.itertuples(index=False):
        table.add_row(
            *(
                f"{v:.{digits}g}"
                if isinstance(v, float) and not math.isnan(v)
                else ("—" if isinstance(v, float) else str(v))
                for v in row
            )
        )
    return table
