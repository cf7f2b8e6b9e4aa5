"""Rich progress rows for the items inside a running job (the CLI side of
:mod:`glotbench.runner.progress`).

``glotbench run`` shows one bar for the jobs on stderr; :func:`rich_item_sink`
adds, for every job that has run for more than
:data:`~glotbench.runner.progress.SHOW_AFTER` seconds, a row with the items
done out of the total and the items per second. Nothing is written to stdout,
so ``--json`` output stays clean (with ``--json`` or ``--quiet`` no bar is shown
at all).
"""

from __future__ import annotations

import time
from typing import Any

from rich.progress import Progress, ProgressColumn, Task, TaskID
from rich.text import Text

from glotbench.runner.progress import SHOW_AFTER, ItemBar, ItemSink


class RateColumn(ProgressColumn):
    """Items per second of an item row (blank on the jobs row)."""

    def render(self, task: Task) -> Text:
        if not task.fields.get("items"):
            return Text("")
        speed = task.finished_speed or task.speed
        return Text(f"{speed:,.1f} items/s" if speed else "– items/s", style="cyan")


class _RichItemBar:
    def __init__(self, progress: Progress, label: str, total: int) -> None:
        self.progress = progress
        self.started = time.perf_counter()
        self.visible = False
        self.task: TaskID = progress.add_task(f"  {label}", total=total, visible=False, items=True)

    def advance(self, items: int) -> None:
        self.progress.advance(self.task, items)
        if not self.visible and time.perf_counter() - self.started > SHOW_AFTER:
            self.visible = True
            self.progress.update(self.task, visible=True)

    def close(self) -> None:
        self.progress.remove_task(self.task)


def rich_item_sink(progress: Progress) -> ItemSink:
    """A sink adding one (initially hidden) item row per job to ``progress``."""

    def sink(label: str, total: int) -> ItemBar:
        return _RichItemBar(progress, label, total)

    return sink


def item_columns() -> list[Any]:
    """The extra column of the jobs display that item rows fill."""
    return [RateColumn()]
