"""Every command of the CLI, walked from the command tree: help, ``--json``, JSON errors.

The guide's contract for a user-facing feature is a command with ``--help`` and
``--json``; these tests hold every leaf command of ``glotbench`` to it, so a new
command that forgets either fails here rather than in a user's hands.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from typing import Any

import pytest
import typer
import typer.core
from typer.testing import CliRunner

from glotbench.cli import app, main


def _leaves() -> Iterator[tuple[tuple[str, ...], Any]]:
    """(path, command) for every command below the root that is not a group."""
    root = typer.main.get_command(app)
    stack = [((), root, root.context_class(root, info_name="glotbench"))]
    while stack:
        path, group, ctx = stack.pop()
        for name in group.list_commands(ctx):
            sub = group.get_command(ctx, name)
            if isinstance(sub, typer.core.TyperGroup):
                stack.append(
                    ((*path, name), sub, sub.context_class(sub, info_name=name, parent=ctx))
                )
            else:
                yield (*path, name), sub


LEAVES = sorted(_leaves(), key=lambda leaf: leaf[0])
IDS = [" ".join(path) for path, _ in LEAVES]


def test_the_tree_holds_every_group_and_command() -> None:
    paths = {" ".join(path) for path, _ in LEAVES}
    assert len(paths) >= 37
    for expected in (
        "demo",
        "run",
        "show",
        "export",
        "leaderboard",
        "report",
        "import scores",
        "import lm-eval",
        "analyze compare",
        "analyze lmm",
        "significance aso",
        "build scala",
        "checklist score",
    ):
        assert expected in paths


@pytest.mark.slow
@pytest.mark.parametrize(("path", "command"), LEAVES, ids=IDS)
def test_command_has_help_a_summary_and_json(path: tuple[str, ...], command: Any) -> None:
    option_names = {name for param in command.params for name in getattr(param, "opts", ())}
    assert "--json" in option_names, f"glotbench {' '.join(path)} has no --json"
    summary = (command.help or "").strip().split("\n\n")[0]
    assert summary and summary.endswith("."), f"summary of {path}: {summary!r}"
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output and "--json" in result.output
    # at 80 columns the help wraps; rich cuts a word too long for its column with "…"
    cut = [line for line in result.output.splitlines() if re.search(r"\S…(\s|$)", line)]
    assert not cut, cut


@pytest.mark.slow
@pytest.mark.parametrize(("path", "command"), LEAVES, ids=IDS)
def test_usage_errors_are_json_with_json(
    path: tuple[str, ...],
    command: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(sys, "argv", ["glotbench", *path, "--no-such-option", "--json"])
    with pytest.raises(SystemExit) as exit_info:
        main()
    assert exit_info.value.code == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["type"] == "NoSuchOption" and error["exit_code"] == 2
    assert "--no-such-option" in error["message"]


def test_default_sizes_are_the_analysis_defaults() -> None:
    """``--sizes`` / ``--datasize-sizes`` show the analysis' default grid (kept as text in
    ``cli/_options.py`` so that ``--help`` imports no numpy)."""
    from glotbench.analysis.datasize import DEFAULT_SIZES as ANALYSIS_SIZES
    from glotbench.cli._options import DEFAULT_SIZES, parse_sizes

    assert parse_sizes(DEFAULT_SIZES) == list(ANALYSIS_SIZES)
