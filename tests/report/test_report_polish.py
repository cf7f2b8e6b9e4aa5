"""The HTML report reads well (issue 13 item 5): headings, legends off the data, row notes."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from glotbench import api
from glotbench.report import plots
from glotbench.report.html import cell_grid

from .conftest import XSS, write_store


def _assert_legend_outside(figure: plt.Figure) -> None:
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    assert figure.legends, "the figure has no legend"
    legend = figure.legends[0].get_window_extent(renderer)
    for axis in figure.axes:
        if axis.get_label() == "<colorbar>":
            continue
        # the axes with their tick labels and axis labels: the legend covers none of it
        assert not legend.overlaps(axis.get_window_extent(renderer))
        assert not legend.overlaps(axis.get_tightbbox(renderer))
        assert legend.y1 <= axis.get_tightbbox(renderer).y0  # below
    plt.close(figure)


def test_variance_legend_is_below_the_axes() -> None:
    per_model = pd.DataFrame(
        {
            "model": ["a", "a", "b", "b"],
            "task": ["x", "y", "x", "y"],
            "sigma_b": [0.1, 0.2, 0.3, 0.4],
            "sigma_seed_mean": [0.4, 0.3, 0.2, 0.1],
            "sigma_boot_mean": [0.5, 0.5, 0.5, 0.5],  # the longest bars end bottom right
        }
    )
    _assert_legend_outside(plots.variance_figure(per_model))


def test_tau_legend_is_below_the_panels() -> None:
    rows = [
        {
            "strategy": strategy,
            "unit": unit,
            "size": size,
            "tokens_mean": float(size),
            "tau_mean": 0.5 + size / 400,
            "tau_q05": 0.4 + size / 400,
            "tau_q95": 0.6 + size / 400,
        }
        for strategy in ("SEQ", "RAND")
        for unit in ("model", "seed")
        for size in (10, 50, 100, 200)
    ]
    _assert_legend_outside(plots.tau_figure(pd.DataFrame(rows), 0.9))


def test_cell_grid_is_a_task_by_language_table() -> None:
    grid = cell_grid(["xnli/da", "xnli/sv", "pos/da"], ["pos", "xnli"])
    assert list(grid.columns) == ["task", "da", "sv"]
    assert grid.set_index("task").loc["pos"].tolist() == ["✓", ""]
    assert cell_grid(["da", "sv"], ["xnli"]).values.tolist() == [["xnli", "✓", "✓"]]


@pytest.fixture(scope="module")
def unbalanced_report(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("unbalanced")
    store = folder / "s.duckdb"
    write_store(store, {"alpha": 0.8, "beta": 0.75, "gamma": 0.7}, n=40)
    write_store(store, {"partial": 0.72}, tasks=("xnli",), n=40)
    write_store(store, {"holey": 0.74}, languages=("da", "sv", "nb"), n=40)
    source = api.leaderboard_source(store=store, n_replicates=50)
    return api.write_report(folder / "r.html", source, n_draws=200).path.read_text()


@pytest.mark.slow
def test_report_has_headings_between_tables(unbalanced_report: str) -> None:
    page = unbalanced_report
    headings = re.findall(r"<h3>(.*?)</h3>", page)
    for heading in (
        "Overall: unweighted mean of task means",
        "Per task: mean over languages",
        "Per model and task",
        "Differences A − B",
        "Rank summary",
        "% of draws at each rank",
    ):
        assert heading in headings
    # no two tables follow each other without a heading or text in between
    assert not re.search(r"</table></div><div class=\"scroll\"><table>", page)
    assert "What the intervals contain." in page
    assert "count seeds, test-set bootstrap and languages" in page
    assert "rank_best = 1 + the number of models significantly better" in page


def _row(page: str, table_after: str, model: str) -> str:
    """The first table row naming ``model`` after the heading ``table_after``."""
    rest = page[page.index(table_after) :]
    match = re.search(r"<tr><td[^>]*>" + re.escape(model) + r"(.*?)</tr>", rest)
    assert match, (table_after, model)
    return match.group(0)


def test_notes_are_marked_on_their_rows(unbalanced_report: str) -> None:
    page = unbalanced_report
    notes = dict(re.findall(r'<li id="note-(\d+)"><sup>\d+</sup> (.*?)</li>', page))
    assert len(notes) == 3

    def note_of(row: str) -> list[str]:
        return re.findall(r'href="#note-(\d+)"', row)

    # the model without every task: marked in the overall table, its note lists its tasks
    (k,) = note_of(_row(page, "Overall: unweighted", "partial"))
    assert notes[k].startswith("no score on every task")
    assert "partial" in notes[k] and "✗" in notes[k]
    # the model lacking a language: the cells left out, as a table with the cells as columns
    (k,) = note_of(_row(page, "Overall: unweighted", "holey"))
    assert "not shared by every model" in notes[k] and "overall scores" in notes[k]
    assert ">sentiment/de</th>" in notes[k] and ">xnli/de</th>" in notes[k]
    assert note_of(_row(page, "Overall: unweighted", "alpha")) == []
    # the per-task rows of the model lacking a language point at the same note
    per_task = page[
        page.index("Per task: mean over languages") : page.index("<h2>Variance components</h2>")
    ]
    holey_rows = [r for r in re.findall(r"<tr>.*?</tr>", per_task) if ">holey<" in r]
    assert len(holey_rows) == 2 and all(note_of(r) == [k] for r in holey_rows)
    assert all(not note_of(r) for r in re.findall(r"<tr>.*?</tr>", per_task) if ">alpha<" in r)
    # the same rows in the variance table point at the note on lacking cells
    lacking = note_of(_row(page, "Per model and task", "holey"))
    assert lacking and "variance components use their own languages" in notes[lacking[0]]
    # no comma list of cells left among the plain notes
    assert "missing per model" not in page and "lacks" not in page


@pytest.mark.slow
def test_report_note_links_land_on_their_notes(
    tmp_path: Path, unbalanced_report: str, browser: Any
) -> None:
    path = tmp_path / "r.html"
    path.write_text(unbalanced_report, encoding="utf-8")
    page = browser.new_page()
    page.goto(path.as_uri())
    link = page.locator("a.note-mark").first
    target = link.get_attribute("href")
    link.click()
    assert page.evaluate("location.hash") == target
    assert page.locator(f"li{target}").is_visible()
    page.close()


@pytest.mark.slow
def test_a_suite_store_is_titled_by_its_suite(tmp_path: Path) -> None:
    from glotbench.runner.executors import run_suite
    from glotbench.runner.protocol import PROTOCOL_VERSION
    from glotbench.runner.suite import load_suite
    from glotbench.store import Store

    from ..runner.conftest import write_suite

    path = write_suite(tmp_path, iterations=2)
    text = path.read_text(encoding="utf-8").replace(
        "name: tiny\n", "name: tiny\ntitle: Tiny sentiment & NER <benchmark>\n"
    )
    path.write_text(text, encoding="utf-8")
    suite = load_suite(path).select(models=["lr", "majority"], tasks=["sentiment"])
    store = tmp_path / "s.duckdb"
    run_suite(suite, store=store)
    with Store.open(store, read_only=True) as handle:
        assert handle.suites()["tiny"]["title"] == "Tiny sentiment & NER <benchmark>"
        assert set(handle.runs.frame()["source"]) == {
            f"glotbench run tiny (protocol v{PROTOCOL_VERSION})"
        }
    source = api.leaderboard_source(store=store, n_replicates=20)
    assert source.title == "Tiny sentiment & NER <benchmark>"
    page = api.write_report(tmp_path / "r.html", source, n_draws=50).path.read_text()
    assert "<h1>Tiny sentiment &amp; NER &lt;benchmark&gt;</h1>" in page
    # runs of another origin in the same store: the generic title again
    write_store(store, {"outsider": 0.5}, languages=("en",), tasks=("sentiment",), n=40)
    assert api.leaderboard_source(store=store, n_replicates=20).title.startswith(
        "glotbench leaderboard:"
    )
    assert (
        api.leaderboard_source(store=store, models=["lr", "majority"], n_replicates=20).title
        == "Tiny sentiment & NER <benchmark>"
    )


@pytest.mark.slow
def test_row_notes_escape_hostile_names(tmp_path: Path) -> None:
    store = tmp_path / "s.duckdb"
    write_store(store, {"alpha": 0.8, "beta": 0.7}, n=30)
    write_store(store, {XSS: 0.75}, languages=("da", "sv", "nb"), n=30)
    source = api.leaderboard_source(store=store, n_replicates=30)
    page = api.write_report(tmp_path / "r.html", source, n_draws=100).path.read_text()
    assert XSS not in page and "<script" not in page
    escaped = "&lt;img src=x onerror=alert(1)&gt;"
    assert f'{escaped}<sup><a class="note-mark" href="#note-' in page
    assert f'<td class="text">{escaped}</td>' in page  # in the note's table


@pytest.mark.slow
def test_page_task_view_counts_the_languages_its_score_averages(tmp_path: Path) -> None:
    from glotbench.report.leaderboard import build_leaderboard

    store = tmp_path / "s.duckdb"
    write_store(store, {"alpha": 0.8, "beta": 0.7}, n=30)
    write_store(store, {"holey": 0.75}, languages=("da", "sv", "nb"), n=30)
    source = api.leaderboard_source(store=store, n_replicates=30)
    data = build_leaderboard(source.replicated, n_draws=100).to_dict()
    view = data["views"]["task:xnli"]
    # de is left out for every model (holey lacks it): each score averages 3 languages
    assert {row["n_languages"] for row in view["rows"]} == {3}
    (note,) = view["row_notes"]
    assert note["models"] == ["holey"] and note["table"]["columns"] == ["model", "de"]
    alpha = next(r for r in view["rows"] if r["model"] == "alpha")
    cells = [c for c in data["cells"] if c[0] == 0 and c[1] == "xnli" and c[2] != "de"]
    assert data["models"][0]["name"] == "alpha"
    assert alpha["score"] == pytest.approx(sum(c[3] for c in cells) / 3, abs=1e-3)
