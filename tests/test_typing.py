"""mypy keeps src/glotbench clean (issue 28): CI runs this with the rest of the suite."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_mypy_reports_no_error_in_the_package() -> None:
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (pip install -e '.[dev]')")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "src/glotbench"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, f"mypy found errors:\n{done.stdout[-6000:]}{done.stderr[-2000:]}"
    assert "Success: no issues found" in done.stdout
