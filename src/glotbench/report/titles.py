"""Titles of leaderboards and reports: the suite's own title when the runs came from one suite."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from glotbench.store.schema import suite_of_source


def suite_title(name: str, info: dict[str, str] | None) -> str:
    """A suite's title: its ``title``, else ``NAME: description``, else its name."""
    info = info or {}
    if info.get("title"):
        return info["title"]
    if info.get("description"):
        return f"{name}: {info['description']}"
    return name


def store_title(
    store: Any,
    default: str,
    *,
    models: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
) -> str:
    """The title for the selected runs of ``store`` (an open :class:`~glotbench.store.Store`).

    When every selected run was written by ``glotbench run SUITE`` (its
    ``source``, :func:`glotbench.store.schema.runner_source`) of one suite, the
    suite's own title as recorded in the store's ``meta`` table; otherwise
    ``default``.
    """
    runs = store.runs.frame(models=models, tasks=tasks, languages=languages)
    if runs.empty or "source" not in runs.columns:
        return default
    names = {suite_of_source(source) for source in runs["source"].unique()}
    if len(names) != 1 or None in names:
        return default
    (name,) = names
    assert name is not None
    return suite_title(name, store.suites().get(name))
