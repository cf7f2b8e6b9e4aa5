"""Rich tables for the terminal. Rendering only: no statistics are computed here."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np
import pandas as pd
from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from glotbench.analysis.aggregate import Leaderboard


@overload
def plain(value: None) -> None: ...
@overload
def plain(value: object) -> Text: ...
def plain(value: object) -> Text | None:
    """``value`` as rich Text that is never parsed as markup.

    A model named ``[bold]x`` or ``[/]`` is printed as typed: rich reads a
    plain ``str`` cell as console markup (styling it, or raising MarkupError).
    """
    if value is None:
        return None
    return value if isinstance(value, Text) else Text(str(value))


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
    table = Table(title=plain(title), title_justify="left")
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
            plain(row.model),
            format_estimate(row.score, row.standard_error),
            f"[{row.ci_low:.1f}, {row.ci_high:.1f}]" if complete else "—",
            f"{row.n_tasks}/{len(board.tasks)}",
            str(row.n_languages),
        )
    return table


def per_task_table(
    board: Leaderboard, title: str = "Per task", caption: str | None = None
) -> FittedTable:
    """Tasks × models; each cell the mean over languages ± its SE."""
    models = list(board.overall["model"])
    cells = board.per_task.set_index(["task", "model"])
    rows = []
    for task in board.tasks:
        of_task = board.per_task[board.per_task["task"] == task]
        row = [task, str(int(of_task["n_languages"].max()))]
        for model in models:
            if (task, model) in cells.index:
                cell = cells.loc[(task, model)]
                row.append(format_estimate(cell["score"], cell["standard_error"]))
            else:
                row.append("—")
        rows.append(tuple(row))
    return FittedTable(
        headers=("task", "L", *(str(m) for m in models)),
        numeric=(False, *([True] * (len(models) + 1))),
        rows=tuple(rows),
        title=title,
        caption=caption,
    )


def leaderboard_tables(board: Leaderboard, title: str) -> list[Table | FittedTable]:
    """The overall table and the per-task table, with a caption on how to read them."""
    overall = overall_table(board, title=title)
    per_task = per_task_table(
        board,
        title="Per task: mean over languages ± SE",
        caption=(
            "SE = between-language SD / √L (languages as a sample); overall = unweighted mean "
            "of the tasks, SE = √(Σ SE²)/T; models that lack tasks get no overall score."
        ),
    )
    return [overall, per_task]


#: Width a rich table adds per column (one space of padding each side and a
#: border) and once per table (the outer border): rich's default box.
_COLUMN_CHROME = 3
_TABLE_CHROME = 1
#: Text columns may be folded onto several lines down to this width; the key
#: columns (names that identify a row) only down to the wider one.
_MIN_TEXT_WIDTH = 10
_MIN_KEY_WIDTH = 24


@dataclass(frozen=True)
class FittedTable:
    """A table of already formatted cells that never truncates a number.

    At render time it fits the console width: numeric columns are never
    wrapped or cut; text columns and headers fold onto several lines; and if
    the columns still do not fit, the table is printed in parts, each repeating
    every key column (the text columns before the first number, or
    ``key_columns``), with a title saying which part it is.
    """

    headers: tuple[str, ...]
    numeric: tuple[bool, ...]
    rows: tuple[tuple[str, ...], ...]
    title: str | None = None
    caption: str | None = None
    #: names of the columns that identify a row (default: the leading text columns)
    key_columns: tuple[str, ...] | None = None

    def _natural(self, i: int) -> int:
        cells = [len(row[i]) for row in self.rows]
        longest_word = max((len(w) for w in self.headers[i].split()), default=1)
        return max([longest_word, *cells])

    def _minimum(self, i: int) -> int:
        natural = self._natural(i)
        if self.numeric[i]:
            return natural
        longest_word = max((len(w) for w in self.headers[i].split()), default=1)
        keys = self._keys()
        # one or two keys keep room to stay readable; more fold like other text
        floor = _MIN_KEY_WIDTH if i in keys and len(keys) <= 2 else _MIN_TEXT_WIDTH
        return min(natural, max(floor, longest_word))

    def _keys(self) -> list[int]:
        """The key columns: every text column before the first number (``key_columns``
        when given), repeated in every part so each row can be matched across parts."""
        if self.key_columns is not None:
            return [i for i, h in enumerate(self.headers) if h in self.key_columns]
        keys = []
        for i, numeric in enumerate(self.numeric):
            if numeric:
                break
            keys.append(i)
        return keys if len(keys) < len(self.headers) else keys[:1]

    def parts(self, width: int) -> list[list[int]]:
        """Column indices of each part so that every part fits ``width``."""
        n = len(self.headers)

        def fits(columns: list[int]) -> bool:
            need = sum(self._minimum(i) for i in columns)
            return need + _COLUMN_CHROME * len(columns) + _TABLE_CHROME <= width

        everything = list(range(n))
        if fits(everything):
            return [everything]
        keys = self._keys()
        rest = [i for i in everything if i not in keys]
        parts: list[list[int]] = []
        current: list[int] = []
        for i in rest:
            if current and not fits([*keys, *current, i]):
                parts.append([*keys, *current])
                current = []
            current.append(i)
        if current:
            parts.append([*keys, *current])
        return parts

    def widths(self, columns: list[int], width: int) -> list[int]:
        """Column widths for ``columns`` within ``width``: as wide as the content
        (headers on one line) where there is room, then narrowed one character
        at a time on the column with the most to spare, never below its minimum."""
        full = [max([len(self.headers[i]), *(len(row[i]) for row in self.rows)]) for i in columns]
        floor = [self._minimum(i) for i in columns]
        room = width - _COLUMN_CHROME * len(columns) - _TABLE_CHROME
        widths = list(full)
        excess = sum(widths) - room
        while excess > 0:
            spare = [w - f for w, f in zip(widths, floor, strict=True)]
            j = max(range(len(widths)), key=spare.__getitem__)
            if spare[j] <= 0:
                break
            widths[j] -= 1
            excess -= 1
        return widths

    def _table(self, columns: list[int], title: str | None, width: int) -> Table:
        table = Table(title=plain(title), title_justify="left")
        for i, w in zip(columns, self.widths(columns, width), strict=True):
            table.add_column(
                plain(self.headers[i]),
                justify="right" if self.numeric[i] else "left",
                overflow="fold",
                width=w,
            )
        for row in self.rows:
            table.add_row(*(plain(row[i]) for i in columns))
        return table

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        parts = self.parts(options.max_width)
        for k, columns in enumerate(parts):
            title = self.title
            if len(parts) > 1:
                label = f"part {k + 1} of {len(parts)} of the columns"
                if k == 0:
                    title = f"{title} ({label})" if title else label
                else:
                    title = f"… {label}"
            if title:  # above the table, wrapped at the terminal's width, not the table's
                yield Text(title)
            table = self._table(columns, None, options.max_width)
            if self.caption and k == len(parts) - 1:
                table.caption = plain(self.caption)
                table.caption_justify = "left"
            yield table


def format_cell(value: object, digits: int = 4) -> str:
    """A cell as text: floats to ``digits`` significant digits, a dash for missing."""
    if isinstance(value, float):
        return "—" if math.isnan(value) else f"{value:.{digits}g}"
    return str(value)


#: magnitudes at or above this are written in scientific notation
_SCIENTIFIC_FROM = 1e7


def format_column(values: Sequence[object], digits: int = 4) -> list[str]:
    """One column's cells with the same number of decimals, so that they line up.

    A column of floats that are all whole numbers (ranks, counts) is written
    as integers; otherwise every float gets the decimals that show the
    column's largest magnitude to ``digits`` significant digits
    (``1.329``, ``1.530``, ``7.000``, never ``1.53`` beside ``1.329``). A
    non-zero value that these decimals would round to zero is written as a
    bound (``<0.001``, ``>-0.001``; the exact value is in ``--json``);
    magnitudes of 10⁷ or more in scientific notation. Missing values are a
    dash; other cells are ``str``.
    """
    floats = [
        float(v) for v in values if isinstance(v, (float, np.floating)) and math.isfinite(float(v))
    ]
    if not floats:
        return [format_cell(_plain(v), digits) for v in values]
    if all(x.is_integer() and abs(x) < _SCIENTIFIC_FROM for x in floats):
        decimals = -1  # whole numbers
    else:
        # the largest magnitude sets the decimals; scientific cells do not count
        largest = max((abs(x) for x in floats if abs(x) < _SCIENTIFIC_FROM), default=0.0)
        exponent = math.floor(math.log10(largest)) if largest > 0 else 0
        decimals = min(max(digits - 1 - exponent, 0), 12)
        unit = f"{10.0**-decimals:.{decimals}f}"

    def cell(value: object) -> str:
        value = _plain(value)
        if not isinstance(value, float):
            return str(value)
        if math.isnan(value):
            return "—"
        if math.isinf(value):
            return "∞" if value > 0 else "−∞"
        if decimals < 0:
            return str(int(value))
        if abs(value) >= _SCIENTIFIC_FROM:
            return f"{value:.{digits - 1}e}"
        if value != 0 and round(value, decimals) == 0:
            return f"<{unit}" if value > 0 else f">-{unit}"
        return f"{value:.{decimals}f}"

    return [cell(v) for v in values]


def _plain(value: object) -> object:
    """numpy scalars as Python ones (``np.float64`` → ``float``)."""
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.integer):
        return int(value)
    return value


def frame_table(
    frame: pd.DataFrame,
    title: str | None = None,
    digits: int = 4,
    caption: str | None = None,
    keys: Sequence[str] | None = None,
) -> FittedTable:
    """Any tidy frame as a terminal table that fits the width without cutting numbers.

    Floats are shown with one number of decimals per column (:func:`format_column`).
    """
    numeric = tuple(
        bool(pd.api.types.is_numeric_dtype(frame[c])) and not pd.api.types.is_bool_dtype(frame[c])
        for c in frame.columns
    )
    columns = [format_column(frame[c].tolist(), digits) for c in frame.columns]
    rows = tuple(zip(*columns, strict=True)) if columns else ()
    return FittedTable(
        headers=tuple(str(c) for c in frame.columns),
        numeric=numeric,
        rows=rows,
        title=title,
        caption=caption,
        key_columns=None if keys is None else tuple(keys),
    )
