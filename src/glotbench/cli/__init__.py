"""The ``glotbench`` command line: one Typer app, thin (:mod:`glotbench.cli._app`).

Each command parses its options, calls a function of :mod:`glotbench.api`
and renders the result with rich (or prints its JSON form with ``--json``).
The app, its command groups and their modules are described in
:mod:`glotbench.cli._app`.

This package module is light on purpose: the console script's :func:`main`
first asks :mod:`glotbench.cli._replay` whether the same question was
answered before for the same store content (then it prints the kept answer,
having loaded neither Typer nor numpy nor pandas), and only then imports the
app. The app's names (``app``, ``console``, ``err_console``, …) are imported
on first use (PEP 562); see docs/cli-performance.md.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from glotbench.cli._app import (
        DEFAULT_STORE,
        ExportTable,
        JsonOption,
        StoreOption,
        _run_reporter,
        analyze_app,
        api,
        app,
        build_app,
        checklist_app,
        console,
        err_console,
        frame_table,
        import_app,
        leaderboard_tables,
        print_json,
        significance_app,
        transfer_table,
    )

__all__ = [
    "DEFAULT_STORE",
    "ExportTable",
    "JsonOption",
    "StoreOption",
    "_run_reporter",
    "analyze_app",
    "api",
    "app",
    "build_app",
    "checklist_app",
    "console",
    "err_console",
    "frame_table",
    "import_app",
    "leaderboard_tables",
    "print_json",
    "significance_app",
    "transfer_table",
    "main",
]
#: the app's names, imported from :mod:`glotbench.cli._app` on first use
_APP_NAMES = frozenset(__all__) - {"main"}


def __getattr__(name: str) -> Any:
    if name in _APP_NAMES:
        from glotbench.cli import _app

        value = getattr(_app, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'glotbench.cli' has no attribute {name!r}")


def main() -> None:
    """Console-script entry point: a kept answer if there is one, else the command.

    Errors go to stderr as text and end the process with the error's exit
    code. With ``--json`` they are also a JSON object on stdout, ``{"error":
    {"type", "message", "exit_code", "path", "line", "field"}}`` (where known).
    """
    from glotbench.cli._replay import forget, replay

    try:
        if replay(sys.argv[1:]):
            return
        from glotbench.cli._app import run_app

        run_app()
    finally:
        forget()
