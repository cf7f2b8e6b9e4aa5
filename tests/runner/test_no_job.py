"""Filters that select no job are a clear error, and no store is left behind (issue 25.5)."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import write_suite


def test_a_selection_without_jobs_is_an_error_naming_models_and_datasets(tmp_path: Path, cli):
    suite = write_suite(tmp_path, iterations=1)
    store = tmp_path / "never.duckdb"
    # the tagger evaluates NER only; sentiment alone gives it nothing to do
    result = cli("run", suite, "--store", store, "--model", "tagger", "--task", "sentiment")
    assert result.exit_code == 2
    assert "has no job to run" in result.err and "'tagger'" in result.err
    assert "'sent' (sentiment, en)" in result.err
    assert "Traceback" not in result.stderr
    assert not store.exists()  # the store is not created for nothing
    as_json = cli(
        "run", suite, "--store", store, "--model", "tagger", "--task", "sentiment", "--json"
    )
    payload = json.loads(as_json.stdout)
    assert payload["error"]["type"] == "NoJobError" and payload["error"]["exit_code"] == 2
    assert not store.exists()
