"""The HTML report: one self-contained file with plots, safe with hostile names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from glotbench import api
from glotbench.cli import app
from glotbench.errors import InputError

from .conftest import XSS, write_store


@pytest.mark.slow
def test_report_from_store_is_self_contained_and_escaped(tmp_path: Path) -> None:
    store = write_store(tmp_path / "s.duckdb", {XSS: 0.8, "plain": 0.6, "other": 0.7})
    source = api.leaderboard_source(store=store, n_replicates=100)
    result = api.write_report(tmp_path / "r.html", source, n_draws=300)
    page = result.path.read_text()
    assert result.views == (
        "Aggregates",
        "Variance components",
        "Pairwise comparisons",
        "Rank distributions",
    )
    assert XSS not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert page.count("<svg") == 3 and "<script" not in page
    assert "http://" not in page.replace("http://www.w3.org/", "") and "https://" not in page


@pytest.mark.slow
def test_cli_report_demo(tmp_path: Path) -> None:
    out = tmp_path / "demo.html"
    result = CliRunner().invoke(
        app, ["report", "--demo", "--out", str(out), "--draws", "200", "--json"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["path"] == str(out)
    assert "XLM-R Large" in out.read_text()


@pytest.mark.slow
def test_report_opens_in_a_browser_without_errors(
    tmp_path: Path, browser: Any, artifacts_dir: Path
) -> None:
    store = write_store(tmp_path / "s.duckdb", {XSS: 0.8, "plain": 0.6})
    path = api.write_report(
        tmp_path / "r.html", api.leaderboard_source(store=store, n_replicates=50), n_draws=200
    ).path
    page = browser.new_page()
    errors: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("request", lambda r: requests.append(r.url))
    page.on("dialog", lambda d: errors.append("dialog " + d.message))
    page.goto(path.as_uri())
    assert errors == [] and all(u.startswith("file://") for u in requests)
    assert page.locator("svg").count() == 3
    assert page.get_by_text(XSS).count() >= 1
    page.screenshot(path=str(artifacts_dir / "report.png"), full_page=True)
    page.close()


# --- other analyses: evaluation size (datasize) and mixed models (issue 7 item 2) ---


def _store_with_scores(path: Path) -> Path:
    """Runs (per-example statistics) and a scores table of the same models."""
    models = {XSS: 0.8, "plain": 0.6, "other": 0.7}
    write_store(path, models)
    rng = np.random.default_rng(5)
    rows = [
        {
            "model": m,
            "task": t,
            "language": lang,
            "dataset": t,
            "metric": "accuracy",
            "score": acc + 0.05 * (t == "xnli") + rng.normal(0, 0.03),
        }
        for m, acc in models.items()
        for t in ("xnli", "sentiment")
        for lang in ("da", "sv", "nb", "de", "fi", "is")
    ]
    api.add_scores(pd.DataFrame(rows), store=path)
    return path


def _analysis_files(tmp_path: Path, store: Path) -> tuple[Path, Path]:
    sized = api.analyze_datasize(
        store=store,
        dataset="xnli",
        task="xnli",
        language="da",
        metric="accuracy",
        sizes=(10, 20, 40, None),
        n_draws=20,
        aso=False,
    )
    datasize_json = tmp_path / "datasize.json"
    datasize_json.write_text(json.dumps(sized.to_dict()))
    frame, error = api.load_lmm_frame(None, store, metric="accuracy")
    fitted = api.analyze_mixed_model(
        frame, "score ~ task + (1 | model) + (1 | language)", error=error, residuals=True
    )
    lmm_json = tmp_path / "lmm.json"
    lmm_json.write_text(json.dumps(fitted.to_dict()))
    return datasize_json, lmm_json


def _assert_self_contained(page: str) -> None:
    assert "<script" not in page and XSS not in page
    assert "http://" not in page.replace("http://www.w3.org/", "") and "https://" not in page
    assert "<img" not in page and "<link" not in page


@pytest.mark.slow
def test_report_with_datasize_and_lmm_sections(tmp_path: Path) -> None:
    store = _store_with_scores(tmp_path / "s.duckdb")
    datasize_json, lmm_json = _analysis_files(tmp_path, store)
    result = api.write_report(
        tmp_path / "r.html",
        api.leaderboard_source(store=store, n_replicates=50),
        n_draws=200,
        datasize=[datasize_json],
        lmm=[lmm_json],
    )
    page = result.path.read_text()
    assert result.views[-2:] == (
        "Test-set size: accuracy",
        "Mixed model: score ~ task + (1 | model) + (1 | language)",
    )
    # forest, heatmap, variance bars + τ curves + Q-Q plot
    assert page.count("<svg") == 5
    for text in (
        "Recommendation",
        "recommended size (examples)",
        "Agreement per size",
        "RAND_SEQ",
        "Simulated-residual tests",
        "uniformity (Kolmogorov–Smirnov)",
        "dispersion (observed / simulated SD)",
        "Fixed effects (Satterthwaite df)",
        "Type III ANOVA + partial η²",
        "Random effects",
        "Q-Q plot of the scaled (DHARMa) residuals",
    ):
        assert text in page, text
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    _assert_self_contained(page)


@pytest.mark.slow
def test_report_lmm_without_residuals_says_how_to_get_them(tmp_path: Path) -> None:
    store = _store_with_scores(tmp_path / "s.duckdb")
    frame, error = api.load_lmm_frame(None, store, metric="accuracy")
    fitted = api.analyze_mixed_model(frame, "score ~ task + (1 | model)", error=error)
    result = api.write_report(
        tmp_path / "r.html",
        api.leaderboard_source(store=store, n_replicates=50),
        n_draws=100,
        lmm=[fitted],
    )
    page = result.path.read_text()
    assert page.count("<svg") == 3 and "--residuals --json" in page
    assert "Fixed effects (Satterthwaite df)" in page


@pytest.mark.slow
def test_cli_report_computes_datasize_and_lmm_from_the_store(tmp_path: Path) -> None:
    store = _store_with_scores(tmp_path / "s.duckdb")
    out = tmp_path / "r.html"
    args = ["report", "--store", str(store), "--out", str(out), "--draws", "200"]
    args += ["--replicates", "50", "--datasize-task", "xnli", "--datasize-language", "sv"]
    args += ["--datasize-metric", "accuracy", "--datasize-sizes", "10,30,all"]
    args += ["--datasize-draws", "10", "--metric", "accuracy"]
    args += ["--lmm-formula", "score ~ task + (1 | model) + (1 | language)", "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    views = json.loads(result.output)["views"]
    assert "Test-set size: accuracy" in views and any(v.startswith("Mixed model") for v in views)
    page = out.read_text()
    assert page.count("<svg") == 5
    _assert_self_contained(page)


@pytest.mark.parametrize(
    ("option", "content", "reason"),
    [
        ("--datasize", "{not json", "not valid JSON"),
        ("--datasize", '{"analysis": "lmm"}', "not the JSON of a datasize analysis"),
        ("--datasize", '{"analysis": "datasize", "level": 0.9, "table": 3}', "field 'table'"),
        ("--lmm", "[1, 2]", "not the JSON of a mixed model"),
        (
            "--lmm",
            '{"formula": "y ~ (1 | g)", "fixed_effects": [], '
            '"residual_checks": {"uniformity": {}, "dispersion": {}, "outliers": {}, '
            '"residuals": ["a"]}}',
            "residual_checks.residuals",
        ),
    ],
)
def test_bad_analysis_json_names_the_file(
    tmp_path: Path, option: str, content: str, reason: str
) -> None:
    bad = tmp_path / "bad-input.json"
    bad.write_text(content)
    source = api.leaderboard_source(demo=True)
    key = "datasize" if option == "--datasize" else "lmm"
    with pytest.raises(InputError) as caught:
        api.write_report(tmp_path / "r.html", source, n_draws=50, **{key: [bad]})
    assert caught.value.path == str(bad) and reason in str(caught.value)
    assert not (tmp_path / "r.html").exists()
    result = CliRunner().invoke(
        app, ["report", "--demo", "--out", str(tmp_path / "c.html"), option, str(bad)]
    )
    # the console script (cli.main) prints InputErrors and exits with status 2
    assert isinstance(result.exception, InputError) and result.exception.exit_code == 2
    assert "bad-input.json" in str(result.exception)
