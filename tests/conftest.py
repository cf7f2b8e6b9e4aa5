"""Fixtures shared by all test folders."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from hypothesis import settings

# tests never download: a Hub dataset or model (e.g. the built-in euroeval-hub suite, which
# `glotbench run --model KIND:ID` uses without a suite) fails at once instead of fetching
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

# CI replays a fixed set of examples per test (reproducible runs); local runs keep
# exploring new ones, and what they find is kept in .hypothesis/.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def err(self) -> str:
        """stderr with whitespace normalised (rich wraps long lines)."""
        return " ".join(self.stderr.split())

    @property
    def out(self) -> str:
        return " ".join(self.stdout.split())


@pytest.fixture
def cli(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Callable[..., CliResult]:
    """Run the real entry point (``glotbench.cli.main``) in-process."""
    import glotbench.cli as cli_module

    monkeypatch.setattr(cli_module.console, "width", 1000)
    monkeypatch.setattr(cli_module.err_console, "width", 1000)
    monkeypatch.delenv("GLOTBENCH_STORE", raising=False)

    def run(*args: object) -> CliResult:
        capsys.readouterr()
        monkeypatch.setattr(sys, "argv", ["glotbench", *map(str, args)])
        try:
            cli_module.main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run
