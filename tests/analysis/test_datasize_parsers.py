"""End to end: the built-in `datasize-parsers` suite, CI-sized, into a store, then
`glotbench analyze datasize --metric las` on the parsers' per-sentence statistics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from glotbench.cli import app

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def parser_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    for treebank in ("UD_English-EWT", "UD_Norwegian-Bokmaal"):
        if not (SHARED_DATA / "ud" / treebank).is_dir():
            pytest.skip(f"the shared UD data ({treebank}) is not at {SHARED_DATA} (../shared/data)")
    store = tmp_path_factory.mktemp("datasize-parsers") / "parsers.duckdb"
    result = CliRunner().invoke(
        app,
        [
            "run",
            "datasize-parsers",
            "--data-dir",
            str(SHARED_DATA),
            "--iterations",
            "2",
            "--splits",
            "train=64,test=128",
            "--store",
            str(store),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["completed"] == 6 * 2 * 2 and not summary["failures"]
    return store


@pytest.mark.parametrize("dataset,language", [("ud-en", "en"), ("ud-nb", "nb")])
def test_analyze_datasize_las_on_parser_runs(parser_store: Path, dataset: str, language: str):
    result = CliRunner().invoke(
        app,
        [
            "analyze",
            "datasize",
            "--store",
            str(parser_store),
            "--dataset",
            dataset,
            "--task",
            "parsing",
            "--language",
            language,
            "--metric",
            "las",
            "--draws",
            "10",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["metric"] == "las" and out["n_seeds"] == 2 and out["n_examples"] == 128
    assert out["token_unit"] == "tokens"  # the words statistic of LAS
    scores = {row["model"]: row["score"] for row in out["full_scores"]}
    assert set(scores) == {
        "parse-left",
        "parse-right",
        "parser-upos",
        "parser-upos-form",
        "parser-upos-form-context",
        "parser-full",
    }
    # even with 64 training sentences every parser is far ahead of the baselines
    baseline = max(scores["parse-left"], scores["parse-right"])
    assert min(v for k, v in scores.items() if k.startswith("parser-")) > baseline + 0.3
    assert {row["strategy"] for row in out["table"]} == {"SEQ", "RAND", "RAND_SEQ"}
