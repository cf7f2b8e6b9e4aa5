"""``--lock-timeout`` after a writing command: refused when negative, shown compactly."""

from __future__ import annotations

from typer.testing import CliRunner

from glotbench.cli import app


def test_negative_lock_timeout_is_refused_naming_the_option(tmp_path):
    result = CliRunner().invoke(
        app, ["import", "scores", str(tmp_path / "x.csv"), "--lock-timeout", "-1"]
    )
    assert result.exit_code == 2
    assert "--lock-timeout" in result.output and "0 or more" in result.output


def test_lock_timeout_help_names_seconds():
    result = CliRunner().invoke(app, ["import", "scores", "--help"], env={"COLUMNS": "120"})
    assert result.exit_code == 0
    assert "<seconds>" in result.output
