"""Group help drawn by :class:`glotbench.cli._help.FastHelpGroup` equals Typer's own rendering.

The light renderer exists for start-up time only (``glotbench --help`` without
``typer.rich_utils``); its output must be the one Typer would print, so each
group's help is rendered both ways in this process and compared byte for byte.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
import typer
import typer.core
import typer.rich_utils

from glotbench.cli import app
from glotbench.cli._help import FastHelpGroup


def _groups() -> Iterator[tuple[str, Any, Any]]:
    """(path, group, context) for the root and every sub-group of the command tree."""
    root = typer.main.get_command(app)
    stack = [(("glotbench",), root, root.context_class(root, info_name="glotbench"))]
    while stack:
        path, group, ctx = stack.pop()
        yield " ".join(path), group, ctx
        for name in group.list_commands(ctx):
            sub = group.get_command(ctx, name)
            if isinstance(sub, typer.core.TyperGroup):
                stack.append(
                    ((*path, name), sub, sub.context_class(sub, info_name=name, parent=ctx))
                )


GROUPS = [path for path, _, _ in _groups()]


def test_every_group_uses_the_light_renderer() -> None:
    assert len(GROUPS) >= 6  # the root, import, analyze, significance, build, checklist
    assert all(isinstance(group, FastHelpGroup) for _, group, _ in _groups())


@pytest.mark.slow
@pytest.mark.parametrize("colour", [False, True], ids=["plain", "colour"])
@pytest.mark.parametrize("width", [60, 80, 100, 140])
def test_group_help_equals_typers_rendering(
    width: int, colour: bool, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    monkeypatch.delenv("TERMINAL_WIDTH", raising=False)
    monkeypatch.delenv("_TYPER_FORCE_DISABLE_TERMINAL", raising=False)
    for name in ("FORCE_COLOR", "PY_COLORS", "GITHUB_ACTIONS"):
        monkeypatch.delenv(name, raising=False)
    if colour:  # Typer reads these at import; the light renderer when it draws
        monkeypatch.setenv("FORCE_COLOR", "1")
        monkeypatch.setattr(typer.rich_utils, "FORCE_TERMINAL", True)
    else:
        monkeypatch.setattr(typer.rich_utils, "FORCE_TERMINAL", None)
    monkeypatch.setattr(typer.rich_utils, "MAX_WIDTH", None)
    for path, group, ctx in _groups():
        group.format_help(ctx, None)
        ours = capsys.readouterr().out
        typer.rich_utils.rich_format_help(obj=group, ctx=ctx, markup_mode="rich")
        theirs = capsys.readouterr().out
        assert "Commands" in ours and "Usage:" in ours, path
        assert ours == theirs, path
        if colour:
            assert "\x1b[" in ours, path


def _loaded_by_help(modules: tuple[str, ...]) -> list[str]:
    """Which of ``modules`` a fresh ``glotbench --help`` process has imported."""
    code = (
        "import sys, runpy\n"
        "sys.argv = ['glotbench', '--help']\n"
        "try:\n"
        "    runpy.run_module('glotbench', run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print('LOADED=' + ','.join(m for m in {modules!r} if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "Commands" in done.stdout
    line = next(x for x in done.stdout.splitlines() if x.startswith("LOADED="))
    return [m for m in line.removeprefix("LOADED=").split(",") if m]


@pytest.mark.slow
def test_top_level_help_does_not_import_typers_rich_renderer() -> None:
    """The reason the light renderer exists (timed in benchmarks/bench_cli_startup.py)."""
    assert (
        _loaded_by_help(("typer.rich_utils", "rich.markdown", "rich.traceback", "pygments")) == []
    )


def test_help_does_not_load_the_analysis_stack() -> None:
    """`glotbench --help` imports neither pandas, scipy, numpy nor DuckDB."""
    assert _loaded_by_help(("pandas", "scipy", "numpy", "duckdb")) == []


def test_plain_click_help_when_typer_rich_is_off() -> None:
    """``TYPER_USE_RICH=0`` gives click's plain help, as Typer would."""
    import os

    env = {**os.environ, "TYPER_USE_RICH": "0"}
    done = subprocess.run(
        [sys.executable, "-m", "glotbench", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert "╭" not in done.stdout and "Commands:" in done.stdout
