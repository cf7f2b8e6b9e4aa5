"""The HTML report: one self-contained file with plots, safe with hostile names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from glotbench import api
from glotbench.cli import app

from .conftest import XSS, write_store


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
