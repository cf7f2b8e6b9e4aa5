"""The ``glotbench`` command line's Typer app (:data:`app`); :func:`run_app` runs it.

:mod:`glotbench.cli` (the package) is light: its :func:`~glotbench.cli.main` first tries to
answer a repeated question from the store's cache (:mod:`glotbench.cli._replay`), then
imports this module. The rest of this docstring describes the app.

Each command parses its options, calls a function of :mod:`glotbench.api`
and renders the result with rich (or prints its JSON form with ``--json``).
User errors (:class:`~glotbench.errors.GlotbenchError`) are printed without a
traceback and end the process with a non-zero exit code.

One module per command group, each registering its commands on its own Typer
app; this module joins them into :data:`app` (in the order ``--help`` lists
them) and runs the command of ``sys.argv`` in :func:`run_app`:

========================  ===============================================
module                    commands
========================  ===============================================
:mod:`.demo`              ``demo``
:mod:`.metrics`           ``metrics``, ``bootstrap``
:mod:`.store`             ``show``, ``export``
:mod:`.report`            ``leaderboard``, ``report``
:mod:`.run`               ``run``, ``failures``, ``suites``
:mod:`.reproduce`         ``reproduce``
:mod:`.importing`         ``import …``
:mod:`.analyze`           ``analyze …`` (the design studies in :mod:`.analyze_studies`)
:mod:`.significance`      ``significance …``
:mod:`.build`             ``build …``
:mod:`.checklist`         ``checklist …``
========================  ===============================================

Options several groups share are in :mod:`._options`; the consoles, JSON output
and table renderers in :mod:`._output`; the import-on-first-use proxy of the API
in :mod:`._lazy`; the progress rows inside running jobs in :mod:`.progress`.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer
from rich.markup import escape

from glotbench.cli import demo, metrics, plan, report, reproduce, run, store
from glotbench.cli._help import FastHelpGroup
from glotbench.cli._lazy import api
from glotbench.cli._options import DEFAULT_STORE, JsonOption, StoreOption
from glotbench.cli._output import (
    _printed_json,
    console,
    err_console,
    frame_table,
    leaderboard_tables,
    print_json,
    stderr_console,
    transfer_table,
)
from glotbench.cli._words import cli_words
from glotbench.cli.analyze import analyze_app
from glotbench.cli.build import build_app
from glotbench.cli.checklist import checklist_app
from glotbench.cli.importing import import_app
from glotbench.cli.run import _run_reporter
from glotbench.cli.significance import significance_app
from glotbench.cli.store import ExportTable
from glotbench.errors import GlotbenchError, set_notice_words

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
    "run_app",
    "print_json",
    "significance_app",
    "transfer_table",
]

app = typer.Typer(
    name="glotbench",
    cls=FastHelpGroup,
    help="Uncertainty-aware multilingual, multitask NLP evaluation.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Top-level commands, then the groups, in the order `glotbench --help` lists them. (Typer
# >= 0.15 would merge an unnamed add_typer; registered_commands works from 0.12 on.)
for _module in (demo, metrics, store, report, run, reproduce, plan):
    app.registered_commands.extend(_module.commands.registered_commands)
app.add_typer(import_app, name="import", cls=FastHelpGroup)
app.add_typer(analyze_app, name="analyze", cls=FastHelpGroup)
app.add_typer(significance_app, name="significance", cls=FastHelpGroup)
app.add_typer(build_app, name="build", cls=FastHelpGroup)
app.add_typer(checklist_app, name="checklist", cls=FastHelpGroup)


def _print_json_error(error: dict[str, Any]) -> None:
    """The error as JSON on stdout, unless the command already printed its document
    (a run that reports its failed jobs in its result, then exits non-zero)."""
    if not _printed_json:
        print_json({"error": error})


def _wants_json(argv: list[str]) -> bool:
    """True when the command line asks for JSON output (``--json`` before any ``--``)."""
    return "--json" in argv[: argv.index("--")] if "--" in argv else "--json" in argv


def run_app() -> None:
    """Run the command of ``sys.argv`` (the console script's work, after the cache's fast path).

    Errors go to stderr as text and end the process with the error's exit
    code. With ``--json`` they are also a JSON object on stdout, ``{"error":
    {"type", "message", "exit_code", "path", "line", "field"}}`` (where known).
    """
    json_mode = _wants_json(sys.argv[1:])
    _printed_json.clear()
    try:
        if not json_mode:
            app()
            return
        code = app(standalone_mode=False)
        if isinstance(code, int) and code:
            raise SystemExit(code)
    except GlotbenchError as exc:
        message = cli_words(str(exc))  # the library names parameters; we show options
        if json_mode:
            _print_json_error(exc.to_dict() | {"message": message})
        # one line in logs and pipes (file, line and field stay greppable); folded on a terminal
        errors = stderr_console()  # glotbench.cli.err_console (tests replace it)
        errors.print(
            f"[bold red]error:[/] {escape(message)}",
            markup=True,
            highlight=False,
            soft_wrap=not errors.is_terminal,
        )
        raise SystemExit(exc.exit_code) from None
    except typer.Abort:
        _print_json_error({"type": "Abort", "message": "aborted", "exit_code": 1})
        raise SystemExit(1) from None
    except typer.TyperException as exc:  # usage errors; raised here with standalone_mode=False
        format_message = getattr(exc, "format_message", None)
        message = format_message() if callable(format_message) else str(exc)
        exit_code = int(getattr(exc, "exit_code", 2))
        _print_json_error({"type": type(exc).__name__, "message": message, "exit_code": exit_code})
        raise SystemExit(exit_code) from None


def _print_version(value: bool) -> None:
    if value:
        from glotbench import __version__

        print(f"glotbench {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Print glotbench's version and exit.",
            callback=_print_version,
            is_eager=True,
        ),
    ] = False,
    lock_timeout: Annotated[
        float | None,
        typer.Option(
            "--lock-timeout",
            min=0,
            help=(
                "Seconds to wait for a store another process holds (a run or import "
                "writing, or readers when writing) before failing; 0: do not wait. "
                "Default 60."
            ),
            envvar="GLOTBENCH_LOCK_TIMEOUT",
        ),
    ] = None,
) -> None:
    """Uncertainty-aware multilingual, multitask NLP evaluation."""
    # the library's notices (a wait for a store's lock) name parameters; we show options
    set_notice_words(cli_words)
    ctx.call_on_close(lambda: set_notice_words(None))
    # a parameter of every store this command opens (glotbench.store.lock), not an
    # environment variable; $GLOTBENCH_LOCK_TIMEOUT is the option's documented fallback.
    # Imported only when needed (it loads DuckDB) or already loaded (to unset it).
    import sys

    if lock_timeout is not None or "glotbench.store.lock" in sys.modules:
        from glotbench.store.lock import set_lock_timeout

        set_lock_timeout(lock_timeout)
