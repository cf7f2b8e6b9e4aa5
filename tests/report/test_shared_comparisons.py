"""A suite whose models cover different tasks still compares them (issue 25 item 6).

The suite of tests/runner/conftest.py: lr and nb cover sentiment only, the
tagger NER only, majority both. The overall view keeps majority alone
(glotbench.analysis.overall), so the report compares, per task, the models
that cover it, and says why its overall comparison and rank sections are empty.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from glotbench import api
from glotbench.analysis.headline import AnalysisSettings, analyze
from glotbench.analysis.pair_view import task_comparisons

from ..runner.conftest import write_suite


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("shared")
    suite = write_suite(folder, iterations=1)
    path = folder / "s.duckdb"
    api.run_benchmark(suite, store=path)  # with the speed benchmark (0.01 s per model)
    return path


@pytest.mark.slow
def test_each_task_compares_the_models_that_cover_it(store: Path):
    source = api.load_replicated(store=str(store))
    analysis = analyze(source, AnalysisSettings(n_draws=500, seed=0))
    assert analysis.overall.models == ("majority",)
    views = task_comparisons(source, analysis)
    assert set(views) == {"sentiment", "ner"}
    assert set(views["ner"].models) == {"tagger", "majority"}
    assert set(views["sentiment"].models) == {"lr", "nb", "majority"}
    sentiment = views["sentiment"].comparison
    assert sentiment is not None and len(sentiment.aggregates) == 3  # 3 pairs of 3 models
    # one language per task: a pair's difference is the difference of the two
    # models' full-test-set scores on that cell (the point estimates)
    scores = source.point_frame().query("task == 'ner'").set_index("model")["score"]
    pair = views["ner"].comparison.aggregates.iloc[0]
    expected = scores[pair["model_a"]] - scores[pair["model_b"]]
    assert pair["difference"] == pytest.approx(expected)
    assert set(views["ner"].ranks.summary["model"]) == {"tagger", "majority"}


@pytest.mark.slow
def test_report_says_why_and_shows_per_task_comparisons(store: Path, tmp_path: Path):
    source = api.leaderboard_source(store=store)
    result = api.write_report(tmp_path / "r.html", source, n_draws=500)
    assert "Comparisons on ner" in result.views
    assert "Comparisons on sentiment" in result.views
    page = html.unescape(re.sub(r"<[^>]+>", " ", result.path.read_text(encoding="utf-8")))
    text = re.sub(r"\s+", " ", page)
    assert "No overall comparisons: fewer than two models have a score on every task" in text
    assert "No overall ranks" in text
    assert "tagger lacks sentiment" in text
    assert "The 2 models with a score on ner (tagger, majority)" in text
    # `glotbench report --json` carries the notes: what the report compared, per task
    said = [n for n in result.to_dict()["notes"] if "compares per task" in n]
    assert said and "ner (tagger, majority)" in said[0]


def test_note_names_the_models_each_task_compares(store: Path):
    """`analyze aggregate --json` carries the note: per task, the models that cover it."""
    source = api.load_replicated(store=str(store))
    result = api.analyze_aggregate(source, AnalysisSettings(n_draws=200, seed=0))
    note = next(n for n in result.notes if n.startswith("left out of the overall view"))
    assert "Fewer than two models have every task, so nothing is compared overall" in note
    assert "task='ner' (majority, tagger)" in note
    assert "task='sentiment' (majority, lr, nb)" in note


def test_leaderboard_opens_on_a_task_view_and_says_why(store: Path, tmp_path: Path):
    import json

    source = api.leaderboard_source(store=store)
    site = api.write_leaderboard_site(tmp_path / "site", source, n_draws=200)
    page = site.path.read_text(encoding="utf-8")
    start = page.index('id="glotbench-data">') + len('id="glotbench-data">')
    payload = json.loads(page[start : page.index("</script>", start)])
    # sentiment is covered by three models (lr, nb, majority), NER by two
    assert payload["default_view"] == "task:sentiment"
    note = payload["views"]["overall"]["notes"][0]
    assert note.startswith("Fewer than two models have a score on every task")
    assert "ner (majority, tagger); sentiment (lr, majority, nb)" in note
    ranked = {r["model"] for r in payload["views"]["task:sentiment"]["rows"]}
    assert ranked == {"lr", "nb", "majority"}


@pytest.mark.slow
def test_report_speed_section_flags_trivial_models(store: Path, tmp_path: Path):
    from glotbench.report.html import TRIVIAL_SPEED, _speed_section

    source = api.leaderboard_source(store=store)
    assert source.speed is not None
    result = api.write_report(tmp_path / "r.html", source, n_draws=200)
    assert "Inference speed" in result.views
    page = result.path.read_text(encoding="utf-8")
    tagger = source.speed.of("tagger")
    assert f"{tagger['tokens_per_second']:,.0f}" in page
    # a row flagged trivial (above 1e8 tokens/s) reads as such, never as its figure
    rows = [
        {
            "model": "majority",
            "tokens_per_second": 2_804_848_634.0,
            "ci_half_width": 5.0,
            "tokens_per_second_short": 3e9,
            "ci_half_width_short": None,
            "iterations": 10,
            "source": "run",
            "trivial": True,
        },
        {
            "model": "tagger",
            "tokens_per_second": 46_542.2,
            "ci_half_width": 10_817.0,
            "tokens_per_second_short": 45_688.0,
            "ci_half_width_short": None,
            "iterations": 10,
            "source": "run",
            "trivial": False,
        },
    ]
    from glotbench.analysis.speed import SpeedTable

    text = _speed_section(SpeedTable(rows=rows))
    assert text.count(TRIVIAL_SPEED) >= 3 and "2,804,848,634" not in text
    assert "46,542 ± 10,817" in text and "45,688" in text


@pytest.mark.slow
def test_api_and_analyze_doors_show_per_task_comparisons(store: Path, cli) -> None:
    """`api.analyze_task_comparisons` is the report's per-task view; `analyze tasks --json`
    gives it, and the aggregate/compare/ranks doors print it when nothing is compared overall."""
    source = api.load_replicated(store=str(store))
    settings = AnalysisSettings(n_draws=300, seed=1)
    views = api.analyze_task_comparisons(source, settings)
    expected = task_comparisons(source, analyze(source, settings))
    assert set(views) == set(expected) == {"sentiment", "ner"}
    for task, view in views.items():
        assert view.models == expected[task].models
        assert view.comparison.aggregates.equals(expected[task].comparison.aggregates)
    out = cli("analyze", "tasks", "--store", store, "--draws", "300", "--seed", "1", "--json")
    assert out.exit_code == 0, out.err
    payload = __import__("json").loads(out.stdout)
    assert payload["settings"]["n_draws"] == 300
    ner = payload["tasks"]["ner"]
    assert ner["models"] == list(views["ner"].models)
    pair = ner["comparison"]["aggregates"][0]
    assert pair["difference"] == pytest.approx(
        views["ner"].comparison.aggregates.iloc[0]["difference"]
    )
    for door in ("aggregate", "compare", "ranks"):
        shown = cli("analyze", door, "--store", store, "--draws", "300", "--seed", "1")
        assert shown.exit_code == 0, shown.err
        assert "Fewer than two models have every task: per task" in shown.out
        assert "ner: pairwise differences" in shown.out and "sentiment: ranks" in shown.out
