from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from glotbench.cli import app

from .conftest import write_suite

runner = CliRunner()


@pytest.mark.slow
def test_cli_run_json_and_resume(tmp_path: Path):
    suite = write_suite(tmp_path, iterations=1)
    store = str(tmp_path / "c.duckdb")
    out = runner.invoke(app, ["run", str(suite), "--store", store, "--model", "lr", "--json"])
    assert out.exit_code == 0, out.output
    payload = json.loads(out.stdout)
    assert payload["completed"] == 1 and {r["metric"] for r in payload["scores"]} == {
        "mcc",
        "f1_macro",
    }
    again = runner.invoke(app, ["run", str(suite), "--store", store, "--model", "lr", "--json"])
    assert json.loads(again.stdout)["skipped"] == 1


def test_cli_errors(tmp_path: Path):
    out = runner.invoke(app, ["run", "no-such-suite", "--store", str(tmp_path / "x.duckdb")])
    assert out.exit_code != 0 and "no suite" in str(out.exception)
    out = runner.invoke(app, ["run", "scandi", "--store", str(tmp_path / "x.duckdb")])
    assert "data_dir=DIR" in str(out.exception)
    assert "scandi" in runner.invoke(app, ["suites"]).stdout


@pytest.mark.slow
def test_cli_build_scala(shared_data: Path, tmp_path: Path):
    out = runner.invoke(
        app,
        [
            "build",
            "scala",
            str(shared_data / "ud/UD_Faroese-FarPaHC/fo_farpahc-ud-dev.conllu"),
            "--out",
            str(tmp_path / "scala-fo.jsonl"),
            "--language",
            "fo",
            "--train",
            "100",
            "--validation",
            "20",
            "--test",
            "150",
            "--json",
        ],
    )
    assert out.exit_code == 0, out.output
    payload = json.loads(out.stdout)
    assert payload["sizes"] == {"train": 100, "validation": 20, "test": 150}
    rows = [json.loads(line) for line in (tmp_path / "scala-fo.jsonl").read_text().splitlines()]
    assert len(rows) == 270 and {r["split"] for r in rows} == {"train", "validation", "test"}


@pytest.mark.slow
def test_scandi_suite_subset(shared_data: Path, tmp_path: Path):
    out = runner.invoke(
        app,
        [
            "run",
            "scandi",
            "--data-dir",
            str(shared_data),
            "--store",
            str(tmp_path / "s.duckdb"),
            "--language",
            "fo",
            "--model",
            "tagger",
            "--model",
            "tfidf-logreg",
            "--iterations",
            "1",
            "--json",
        ],
    )
    assert out.exit_code == 0, out.output
    payload = json.loads(out.stdout)
    assert payload["completed"] == 2 and not payload["failures"]
    pos = [r for r in payload["scores"] if r["dataset"] == "pos-fo"][0]
    assert pos["full_test_mean"] > 0.8


def test_run_table_shows_a_multilingual_dataset_as_mean_and_range():
    import pandas as pd

    from glotbench.analysis.dataset_scores import scores_by_dataset
    from glotbench.cli.run import _scandeval_display

    scores = pd.DataFrame(
        [
            ("m", "angry", "da", "mcc", 10, 0.40, 0.02),
            ("m", "scala", "da", "mcc", 10, 0.20, 0.03),
            ("m", "scala", "sv", "mcc", 8, 0.50, 0.01),
            ("m", "scala", "nb", "mcc", 10, 0.35, 0.04),
            ("n", "angry", "da", "mcc", 1, 0.10, float("nan")),
        ],
        columns=["model", "dataset", "language", "metric", "iterations", "score", "ci_half_width"],
    )
    shown = _scandeval_display(scores_by_dataset(scores))
    assert list(shown.columns) == ["model", "dataset", "language", "metric", "iterations", "score"]
    assert list(shown["language"]) == ["da", "3 languages", "da"]
    assert list(shown["score"]) == ["0.400 ± 0.020", "0.350 (0.200–0.500)", "0.100"]
    assert list(shown["iterations"]) == [10, 10, 1]
