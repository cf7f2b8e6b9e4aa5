"""The leaderboard's data and HTML: safe embedding, views, store and demo sources, CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from glotbench import api
from glotbench.analysis.aggregate import leaderboard
from glotbench.cli import app
from glotbench.report.leaderboard import build_leaderboard, embed_json, render_html

from .conftest import SCRIPT_NAME, XSS, write_store


def _data_text(page: str) -> str:
    match = re.search(
        r'<script type="application/json" id="glotbench-data">(.*?)</script>', page, re.S
    )
    assert match
    return match.group(1)


def test_embed_json_escapes_everything_that_could_end_the_script() -> None:
    text = embed_json({"name": "</script><b>&\u2028\u2029", "n": 1})
    for raw in ("<", ">", "&", "\u2028", "\u2029"):
        assert raw not in text
    assert json.loads(text) == {"name": "</script><b>&\u2028\u2029", "n": 1}


@pytest.mark.slow
def test_hostile_names_stay_inside_the_json(tmp_path: Path) -> None:
    store = write_store(
        tmp_path / "s.duckdb",
        {XSS: 0.8, SCRIPT_NAME: 0.6, "plain": 0.7},
        metadata={XSS: {"type": "<b>bold</b>", "parameters": "7B"}},
    )
    source = api.leaderboard_source(store=store, n_replicates=50)
    page = render_html(build_leaderboard(source.replicated, metadata=source.metadata, n_draws=100))
    assert (
        XSS not in page
        and "<b>bold</b>" not in page
        and "alert(2)" not in page.split("glotbench-data")[0]
    )
    assert page.count("</script>") == 2  # the data tag and the code tag, nothing else
    payload = json.loads(_data_text(page))
    names = {m["name"] for m in payload["models"]}
    assert {XSS, SCRIPT_NAME, "plain"} == names
    assert (
        payload["models"][[m["name"] for m in payload["models"]].index(XSS)]["metadata"]["type"]
        == "<b>bold</b>"
    )
    # the CSP allows exactly the page's script
    assert "script-src 'sha256-" in page and "connect-src 'none'" in page
    # the JS never uses innerHTML
    assert "innerHTML" not in page and "http://" not in page and "https://" not in page


@pytest.mark.slow
def test_demo_views_match_the_analysis_layer() -> None:
    source = api.leaderboard_source(demo=True)
    data = build_leaderboard(source.replicated, metadata=source.metadata, n_draws=200).to_dict()
    board = leaderboard(source.replicated.to_frame())
    overall = {r["model"]: r for r in data["views"]["overall"]["rows"]}
    for row in board.overall.to_dict(orient="records"):
        got = overall[row["model"]]
        if np.isfinite(row["score"]):
            assert got["score"] == pytest.approx(row["score"], abs=1e-4)
            # the languages-only SE σ_b/√L is kept beside the headline SE, which for a
            # published table (one score per language) is the bootstrap SE over languages:
            # ≈ σ_b/√L · √((L − 1)/L)
            assert got["se_languages"] == pytest.approx(row["standard_error"], abs=1e-4)
            assert got["se"] == pytest.approx(row["standard_error"], rel=0.15)
        else:
            assert got["score"] is None
    assert {"task:xnli", "language:de", "group:Germanic"} <= set(data["views"])
    ranked = [r for r in data["views"]["overall"]["rows"] if r["rank"]]
    assert {r["model"] for r in ranked} == {"XLM-R Large", "mBERT"}  # the complete models
    for row in ranked:
        assert sum(p for p in row["rank"]["dist"] if p is not None) == pytest.approx(100, abs=0.2)
        assert "dist_out" not in row["rank"]  # two models: the whole distribution
        assert 1 <= row["rank"]["best"] <= row["rank"]["worst"] <= 2
    assert data["models"][0]["metadata"]["parameters"]
    # XTREME-R has no replicates: per-language cells carry no interval
    assert all(c[4] is None for c in data["cells"])


@pytest.mark.slow
def test_store_cells_have_intervals_and_group_views(tmp_path: Path) -> None:
    store = write_store(tmp_path / "s.duckdb", {"a": 0.8, "b": 0.55, "c": 0.78})
    source = api.leaderboard_source(store=store, n_replicates=100)
    data = build_leaderboard(source.replicated, n_draws=300).to_dict()
    assert data["replicated"] is True
    assert "group:Mainland Scandinavian" in data["views"]
    assert data["views"]["group:Mainland Scandinavian"]["sub_columns"] == ["sentiment", "xnli"]
    lows_ok = [c[5] < c[3] < c[6] for c in data["cells"]]
    assert all(lows_ok)
    rows = {r["model"]: r for r in data["views"]["overall"]["rows"]}
    assert rows["b"]["rank"]["best"] == 3  # clearly last
    # a and c are close: indistinguishable neighbours
    first = max(rows.values(), key=lambda r: r["score"])
    assert first["rank"]["tie_next"] is True
    assert rows["b"]["rank"]["tie_next"] is None


@pytest.mark.slow
def test_cli_leaderboard_demo_and_store(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "site"
    result = runner.invoke(
        app, ["leaderboard", "--demo", "--out", str(out), "--draws", "100", "--json"]
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert Path(payload["path"]).is_file() and "overall" in payload["views"]
    store = write_store(tmp_path / "s.duckdb", {"a": 0.8, "b": 0.6}, seeds=(0,))
    meta = tmp_path / "meta.csv"
    meta.write_text("model,parameters,type\na,100M,encoder\nb,1B,decoder\n")
    result = runner.invoke(
        app,
        [
            "leaderboard",
            "--store",
            str(store),
            "--out",
            str(tmp_path / "s2"),
            "--metadata",
            str(meta),
            "--group",
            "Nordic=da,sv,nb",
            "--replicates",
            "50",
            "--draws",
            "100",
        ],
    )
    assert result.exit_code == 0, result.output
    page = (tmp_path / "s2" / "index.html").read_text()
    data = json.loads(_data_text(page))
    assert "group:Nordic" in data["views"]
    # the page states the replicates the scores were bootstrapped with (was the default 1000)
    assert data["analysis"]["n_replicates"] == 50 and data["analysis"]["n_draws"] == 100
    assert json.loads((tmp_path / "s2" / "leaderboard.json").read_text()) == data
    assert data["metadata_keys"] == ["parameters", "type"]
    bad = runner.invoke(app, ["leaderboard", "--out", str(tmp_path / "x")])
    assert bad.exit_code != 0


def test_rank_blocks_are_computed_once_per_distinct_view(monkeypatch: pytest.MonkeyPatch) -> None:
    """One task: the overall view and the task's view have the same models and cells, so
    their ranks are computed once and shared; each language view has its own; the ranks
    equal the analysis layer's rank statistics on the same draws."""
    import glotbench.report.leaderboard as board
    from glotbench.analysis.draws import DrawSettings, prepare_draws
    from glotbench.analysis.rank_stats import rank_statistics
    from glotbench.analysis.replicates import ReplicatedScores, Unit

    rng = np.random.default_rng(0)
    languages = ("de", "fr", "sw")
    values = (
        np.array([0.8, 0.7, 0.69, 0.5])[:, None, None, None]
        + rng.normal(0, 0.02, (4, 3, 1, 1))
        + rng.normal(0, 0.02, (4, 3, 1, 40))
    )
    models = ("a", "b", "c", "d")
    source = ReplicatedScores(
        models, tuple(Unit("t", lang) for lang in languages), values, "replicates"
    )
    calls = []
    original = board.analyze_view
    monkeypatch.setattr(
        board,
        "analyze_view",
        lambda *args, **kwargs: calls.append(kwargs) or original(*args, **kwargs),
    )
    data = build_leaderboard(source, n_draws=300, language_groups={})
    assert len(calls) == 1 + len(languages)  # overall = task:t, plus one per language
    views = data.payload["views"]
    assert [r["rank"] for r in views["overall"]["rows"]] == [
        r["rank"] for r in views["task:t"]["rows"]
    ]
    settings = DrawSettings(n_draws=300, languages="with")
    _, draws = prepare_draws(source, settings).aggregate("mean")
    stats = rank_statistics(draws, 0.95)
    for row in views["overall"]["rows"]:
        m = models.index(row["model"])
        assert (row["rank"]["best"], row["rank"]["worst"]) == (stats.best[m], stats.worst[m])
        assert row["rank"]["mean"] == round(stats.mean_rank[m], 2)
