"""Progress of the items inside one job (model inference), reported to a sink.

A model adapter wraps its inference loop in :func:`item_progress` and calls
``advance(k)`` after every batch. The runner itself shows nothing: whoever
drives the run installs a sink with :func:`set_item_sink` (the CLI adds a
row with items done and items/s to its rich progress display on stderr, shown
once a job has run for :data:`SHOW_AFTER` seconds). Without a sink, or in a
worker process that has none (process pools, Ray), the calls cost nothing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol

#: seconds after which a job's item progress becomes visible
SHOW_AFTER = 2.0


class ItemBar(Protocol):
    """What a sink returns for one job: advanced per batch, closed at the end."""

    def advance(self, items: int) -> None: ...

    def close(self) -> None: ...


ItemSink = Callable[[str, int], ItemBar]

_sink: ItemSink | None = None
_lock = threading.Lock()


def set_item_sink(sink: ItemSink | None) -> ItemSink | None:
    """Install ``sink(label, total) -> ItemBar`` (None removes it); return the previous one."""
    global _sink
    with _lock:
        previous, _sink = _sink, sink
    return previous


class ItemCounter:
    """Items done and items per second of one job; forwards to the sink's bar if any."""

    def __init__(self, label: str, total: int, bar: ItemBar | None) -> None:
        self.label = label
        self.total = total
        self.done = 0
        self.started = time.perf_counter()
        self._bar = bar

    def advance(self, items: int) -> None:
        self.done += int(items)
        if self._bar is not None:
            self._bar.advance(int(items))

    @property
    def items_per_second(self) -> float:
        elapsed = time.perf_counter() - self.started
        return self.done / elapsed if elapsed > 0 else float("nan")


@contextmanager
def item_progress(label: str, total: int) -> Iterator[ItemCounter]:
    """Report ``total`` items of one job to the installed sink (if any)."""
    with _lock:
        sink = _sink
    bar = sink(label, int(total)) if sink is not None and total > 0 else None
    counter = ItemCounter(label, int(total), bar)
    try:
        yield counter
    finally:
        if bar is not None:
            bar.close()


#: where :func:`report_step` sends its text (None: nowhere)
_step_sink: Callable[[str], None] | None = None


def set_step_sink(sink: Callable[[str], None] | None) -> Callable[[str], None] | None:
    """Install ``sink(text)`` for the steps of jobs (None removes it); return the previous."""
    global _step_sink
    with _lock:
        previous, _step_sink = _step_sink, sink
    return previous


def report_step(text: str) -> None:
    """Say what a job is doing now (loading a model, training, predicting) to the sink, if
    any: the CLI shows it from the first second of a run, before any job has finished.
    In a worker process the sink forwards to the driver (:mod:`glotbench.runner.backends`)."""
    with _lock:
        sink = _step_sink
    if sink is not None:
        sink(text)
