"""Item progress inside jobs: the runner hook, and the CLI's rich rows on stderr."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.progress import Progress, TextColumn

import glotbench.cli as cli
from glotbench.cli.progress import item_columns, rich_item_sink
from glotbench.runner import progress as progress_mod


def test_without_a_sink_the_hook_only_counts() -> None:
    previous = progress_mod.set_item_sink(None)
    try:
        with progress_mod.item_progress("x", 5) as counter:
            counter.advance(2)
            counter.advance(3)
        assert counter.done == 5 and counter.items_per_second > 0
    finally:
        progress_mod.set_item_sink(previous)


def test_rich_item_rows_show_items_per_second(monkeypatch) -> None:
    monkeypatch.setattr("glotbench.cli.progress.SHOW_AFTER", 0.0)
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=120)
    progress = Progress(
        TextColumn("{task.description}"), *item_columns(), console=console, auto_refresh=False
    )
    bar = rich_item_sink(progress)("model generation", 10)
    bar.advance(4)
    task = progress.tasks[0]
    assert task.visible and task.completed == 4 and task.total == 10
    progress.start()
    progress.refresh()
    progress.stop()
    assert "model generation" in buffer.getvalue() and "items/s" in buffer.getvalue()
    bar.close()
    assert not progress.tasks


def test_rows_stay_hidden_for_short_jobs() -> None:
    progress = Progress(*item_columns(), console=Console(file=io.StringIO()))
    bar = rich_item_sink(progress)("quick", 3)
    bar.advance(3)  # well under SHOW_AFTER seconds
    assert not progress.tasks[0].visible
    bar.close()


def test_run_reporter_installs_the_sink_on_a_terminal_and_removes_it(monkeypatch) -> None:
    buffer = io.StringIO()
    monkeypatch.setattr(cli, "err_console", Console(file=buffer, force_terminal=True))
    previous = progress_mod.set_item_sink(None)
    try:
        on_event, close = cli._run_reporter(False)
        on_event("planned", None, {"pending": 2, "total": 2})
        installed = progress_mod.set_item_sink(None)
        assert installed is not None
        progress_mod.set_item_sink(installed)
        with progress_mod.item_progress("job", 4) as counter:
            counter.advance(4)
        close()
        assert progress_mod.set_item_sink(None) is None  # restored on close
        # --json / --quiet: no display, no sink
        on_event, close = cli._run_reporter(True)
        on_event("planned", None, {"pending": 2, "total": 2})
        assert progress_mod.set_item_sink(None) is None
        close()
    finally:
        progress_mod.set_item_sink(previous)


def _reporter_output(monkeypatch, *, terminal: bool, quiet: bool, events: list) -> str:  # noqa: ANN001
    """What the run reporter writes to stderr for ``events`` ((kind, info) pairs)."""
    buffer = io.StringIO()
    monkeypatch.setattr(cli, "err_console", Console(file=buffer, force_terminal=terminal, width=80))
    on_event, close = cli._run_reporter(quiet)
    for kind, info in events:
        on_event(kind, None, info)
    close()
    return buffer.getvalue()


def test_run_reporter_shows_a_phase_after_the_jobs(monkeypatch) -> None:
    """A long step after the jobs (the demo's analyses): the bar ends, a spinner names it."""
    phase = ("phase", {"description": "analysing: 1000 draws"})
    events = [
        ("planned", {"pending": 1, "total": 1}),
        phase,
        ("phase", {"description": "analysing: ranks"}),
    ]
    shown = _reporter_output(monkeypatch, terminal=True, quiet=False, events=events)
    assert "analysing: ranks" in shown  # the spinner shows the latest step
    # not on a terminal: one line per phase; quiet (--json): nothing
    text = _reporter_output(monkeypatch, terminal=False, quiet=False, events=[phase])
    assert text == "analysing: 1000 draws …\n"
    assert _reporter_output(monkeypatch, terminal=False, quiet=True, events=[phase]) == ""


def test_run_reporter_shows_steps_from_the_first_second(monkeypatch) -> None:
    """Steps (data, loading, training) before any job ends: a spinner before the bar, the
    bar's label once it runs; in a log, each model's first step once; quiet: nothing."""
    first = ("step", {"description": "building the data (cldr-lid) and planning the jobs"})
    steps = [
        ("step", {"description": "lingua on cldr-lid (iteration 0): loading the model"}),
        ("step", {"description": "char-nb on cldr-lid (iteration 0): training on 1,024"}),
        ("step", {"description": "char-nb on cldr-lid (iteration 1): training on 1,024"}),
    ]
    events = [first, ("planned", {"pending": 2, "total": 2}), *steps]
    shown = _reporter_output(monkeypatch, terminal=True, quiet=False, events=events)
    assert "building the data" in shown and "running · char-nb on cldr-lid" in shown
    text = _reporter_output(monkeypatch, terminal=False, quiet=False, events=events)
    assert text.splitlines() == [
        "building the data (cldr-lid) and planning the jobs …",
        "2 of 2 jobs to run (0 already stored)",
        "lingua on cldr-lid (iteration 0): loading the model …",
        "char-nb on cldr-lid (iteration 0): training on 1,024 …",
    ]
    assert _reporter_output(monkeypatch, terminal=False, quiet=True, events=events) == ""


@pytest.mark.slow
def test_worker_steps_reach_the_driver(tmp_path) -> None:  # noqa: ANN001
    """A run with worker processes reports its jobs' steps to the driver's sink."""
    from glotbench import api

    from .conftest import write_suite

    events: list[str] = []
    suite = write_suite(tmp_path, iterations=1)
    api.run_benchmark(
        suite,
        store=tmp_path / "s.duckdb",
        executor="processes",
        models=["majority"],
        scores=False,
        on_event=lambda kind, job, info: (
            events.append(info["description"]) if kind == "step" else None
        ),
    )
    assert events[0].startswith("building the data")
    assert any(e.startswith("starting") and "worker processes" in e for e in events)
    assert any(e.startswith("majority on ") and "training on" in e for e in events)
