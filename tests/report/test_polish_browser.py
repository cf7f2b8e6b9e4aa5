"""The leaderboard page reads well (issue 13 item 5): ties after sorting, legend, row notes.

Headless Debian Chromium + Playwright; skipped when either is missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from glotbench import api
from glotbench.analysis.headline import Analysis, AnalysisSettings

from .conftest import XSS, write_store

pytestmark = pytest.mark.slow

CLOSE = {"alpha": 0.8, "beta": 0.79, "gamma": 0.7, "delta": 0.69, "eps": 0.6}
PARAMETERS = {"alpha": "7B", "beta": "1B", "gamma": "13B", "delta": "550M", "eps": "3B"}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Analysis]:
    folder = tmp_path_factory.mktemp("polish")
    store = folder / "s.duckdb"
    write_store(store, CLOSE, metadata={m: {"parameters": p} for m, p in PARAMETERS.items()})
    write_store(store, {"partial": 0.72}, tasks=("xnli",))  # lacks a task: not ranked
    write_store(store, {XSS: 0.71}, tasks=("xnli",))  # a hostile name in a row note
    write_store(store, {"holey": 0.74}, languages=("da", "sv", "nb"))  # lacks a language
    source = api.leaderboard_source(store=store, n_replicates=60)
    settings = AnalysisSettings(n_draws=300)
    complete = [m for m in source.replicated.models if m not in ("partial", XSS)]
    analysis = api.analyze_headline(source.replicated, settings, models=complete)
    api.write_leaderboard_site(folder / "site", source, settings=settings, analysis=analysis)
    return folder / "site" / "index.html", analysis


@pytest.fixture()
def page(browser: Any, built: tuple[Path, Analysis]) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    tab = context.new_page()
    tab.on("pageerror", lambda e: errors.append(str(e)))
    tab.on("dialog", lambda d: errors.append("dialog " + d.message))
    tab.goto(built[0].as_uri())
    tab.wait_for_selector("body[data-ready=true]", timeout=10_000)
    yield tab
    assert errors == []
    context.close()


def _shown(page: Any) -> list[tuple[str, bool]]:
    """(model, whether its row carries ≈) for the rows as shown."""
    return page.eval_on_selector_all(
        "#board tbody tr",
        "rows => rows.map(r => [r.getAttribute('data-model'), !!r.querySelector('.tie')])",
    )


def test_tie_markers_follow_the_rows_after_sorting(page: Any, built: tuple[Path, Analysis]) -> None:
    analysis = built[1]
    view = analysis.overall
    tied = view.tied_with()
    # the analysis' flags are the percentile definition: check them on its own draws
    index = {m: i for i, m in enumerate(view.models)}
    alpha = (1 - analysis.settings.confidence_level) / 2
    for a in view.models:
        for b in view.models:
            if a < b:
                difference = view.draws[:, index[a]] - view.draws[:, index[b]]
                a_better = np.quantile(difference, alpha) > 0
                b_better = np.quantile(-difference, alpha) > 0
                assert (b in tied[a]) == (not a_better and not b_better), (a, b)
    seen = {True: 0, False: 0}
    for clicks in ([], ["score"], ["score"], ["model"], ["meta:parameters"], ["sub:xnli"]):
        for key in clicks:
            page.locator(f"#board th[data-key='{key}']").click()
        shown = _shown(page)
        assert shown[0][1] is False  # the first row has no row above
        for (above, _), (model, marked) in zip(shown, shown[1:], strict=False):
            expected = model in tied and above in tied[model]
            assert marked == expected, (clicks, above, model)
            seen[marked] += 1
    assert seen[True] and seen[False]  # both cases occurred
    # filtering changes which row is above: still looked up for the rows shown
    page.fill("#search", "a")  # alpha, beta, gamma, delta, partial
    shown = _shown(page)
    for (above, _), (model, marked) in zip(shown, shown[1:], strict=False):
        assert marked == (model in tied and above in tied[model])


def test_rank_legend_tooltip_and_interval_text(page: Any) -> None:
    header = page.locator("#board th[data-key=rank]")
    assert "rank_best" in header.get_attribute("title")
    assert "rank_worst" in header.get_attribute("title")
    legend = page.locator("#legend").text_content()
    assert "rank_best = 1 + the number of models significantly better" in " ".join(legend.split())
    assert "rank_worst" in legend and "≈" in legend
    contains = page.locator("#intervals li").all_text_contents()
    assert any("seeds, test-set bootstrap and languages" in t for t in contains)
    headings = page.locator("main h2, main h3").all_text_contents()
    assert {"Reading the table", "What the intervals contain", "Notes"} <= set(headings)


def test_notes_point_at_their_rows(page: Any) -> None:
    marks = page.eval_on_selector_all(
        "#board tbody tr",
        "rows => rows.map(r => [r.getAttribute('data-model'), "
        "Array.from(r.querySelectorAll('a.note-mark')).map(a => a.getAttribute('href'))])",
    )
    marked = {model: hrefs for model, hrefs in marks if hrefs}
    assert set(marked) == {"partial", "holey", XSS}
    assert page.locator("#notes img, #board img").count() == 0  # the hostile name is text
    for model, hrefs in marked.items():
        for href in hrefs:
            note = page.locator(href)
            assert note.count() == 1
            # the note's table lists the model, and cells instead of a comma list
            rows = note.locator("table.note-table tbody tr td:first-child").all_text_contents()
            assert model in rows
    holey = page.locator(marked["holey"][0])
    assert "sentiment/de" in holey.locator("th").all_text_contents()


def test_cell_tooltips_say_what_their_interval_counts(page: Any) -> None:
    def title(column: str) -> str:
        headers = page.locator("#board th").all_text_contents()
        cells = page.locator("#board tbody tr").first.locator("td")
        return cells.nth(headers.index(column)).get_attribute("title")

    assert "seeds, test-set bootstrap and languages" in title("xnli")
    page.select_option("#view", "task:xnli")
    assert "seeds and test-set bootstrap replicates of this one language" in title("da")
