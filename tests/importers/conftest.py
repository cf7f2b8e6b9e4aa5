"""Shared fixtures of the importer tests (the fixture files are real tool output)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from glotbench.store import Store

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "importers"
LM_EVAL_OUT = FIXTURES / "lm_eval_out"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "store.duckdb") as s:
        yield s


@pytest.fixture
def lm_eval_copy(tmp_path: Path) -> Path:
    """A writable copy of the real lm-eval output folder."""
    dest = tmp_path / "lm_eval_out"
    shutil.copytree(LM_EVAL_OUT, dest)
    return dest
