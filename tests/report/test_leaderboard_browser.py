"""The leaderboard in a real headless browser (Debian Chromium + Playwright).

Skipped with a message when /usr/bin/chromium or playwright is missing.
"""

from __future__ import annotations

import functools
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from glotbench import api
from glotbench.analysis.replicates import replicates_from_frame
from glotbench.report.leaderboard import build_leaderboard, write_leaderboard

from .conftest import SCRIPT_NAME, XSS, write_store

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("site")
    store = write_store(
        folder / "s.duckdb",
        {XSS: 0.82, SCRIPT_NAME: 0.6, "alpha": 0.8, "beta": 0.7},
        metadata={
            XSS: {"type": "<svg onload=alert(3)>", "parameters": "7B"},
            SCRIPT_NAME: {"type": "decoder", "parameters": "1B"},
            "alpha": {"type": "encoder", "parameters": "550M"},
            "beta": {"type": "encoder", "parameters": "178M"},
        },
    )
    source = api.leaderboard_source(store=store, n_replicates=100)
    api.write_leaderboard_site(folder / "out", source, n_draws=300)
    return folder / "out" / "index.html"


class PageWatch:
    """A page with its console errors, dialogs and requests recorded."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.requests: list[str] = []
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("dialog", self._dialog)
        page.on("request", lambda r: self.requests.append(r.url))

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def open(self, url: str) -> Any:
        self.page.goto(url)
        self.page.wait_for_selector("body[data-ready=true]", timeout=10_000)
        return self.page


@pytest.fixture()
def watch(browser: Any) -> Iterator[PageWatch]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    yield PageWatch(context.new_page())
    context.close()


def _models(page: Any) -> list[str]:
    return page.eval_on_selector_all(
        "#board tbody tr", "rows => rows.map(r => r.getAttribute('data-model'))"
    )


def test_file_url_offline_and_hostile_names_are_text(
    site: Path, watch: PageWatch, artifacts_dir: Path
) -> None:
    page = watch.open(site.as_uri())
    page.wait_for_timeout(200)
    assert watch.errors == []
    assert watch.dialogs == []
    assert all(url.startswith("file://") for url in watch.requests), watch.requests
    names = page.locator("#board td.model").all_text_contents()
    assert XSS in names and SCRIPT_NAME in names
    assert page.locator("#board img, #board svg, #board script").count() == 0
    assert page.get_by_text("<svg onload=alert(3)>", exact=True).count() >= 1
    page.screenshot(path=str(artifacts_dir / "leaderboard_file.png"), full_page=True)


def test_served_over_http_without_leaving_localhost(
    site: Path, watch: PageWatch, artifacts_dir: Path
) -> None:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(site.parent))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        page = watch.open(f"http://127.0.0.1:{server.server_address[1]}/index.html")
        page.wait_for_timeout(200)
        assert watch.errors == [] and watch.dialogs == []
        assert all(u.startswith("http://127.0.0.1:") for u in watch.requests), watch.requests
        assert XSS in page.locator("#board td.model").all_text_contents()
        page.screenshot(path=str(artifacts_dir / "leaderboard_http.png"))
    finally:
        server.shutdown()
        server.server_close()


def test_sorting_search_filters_and_views(site: Path, watch: PageWatch) -> None:
    page = watch.open(site.as_uri())
    score_header = page.locator("#board th[data-key=score]")
    score_header.click()
    assert score_header.get_attribute("aria-sort") == "descending"
    desc = _models(page)
    assert desc[-1] == SCRIPT_NAME  # the weakest model
    page.locator("#board th[data-key=score]").click()
    assert page.locator("#board th[data-key=score]").get_attribute("aria-sort") == "ascending"
    assert _models(page) == desc[::-1]
    page.locator("#board th[data-key=model]").click()
    assert _models(page) == sorted(desc)
    # metadata sorts sizes numerically: 178M < 550M < 1B < 7B
    page.locator("#board th[data-key='meta:parameters']").click()
    assert _models(page) == ["beta", "alpha", SCRIPT_NAME, XSS]
    # search
    page.fill("#search", "onerror")
    assert _models(page) == [XSS]
    page.fill("#search", "")
    # filter on metadata
    page.select_option("select[data-key=type]", "encoder")
    assert sorted(_models(page)) == ["alpha", "beta"]
    assert "2 of 4" in page.locator("#count").text_content()
    page.select_option("select[data-key=type]", "")
    # switch to a task, a language group and a language
    page.select_option("#view", "task:xnli")
    assert page.locator("#view-title").text_content() == "xnli"
    headers = page.locator("#board th").all_text_contents()
    assert {"da", "sv", "nb", "de"} <= set(headers)
    da_column = headers.index("da")  # metadata columns follow the scores
    cell_title = (
        page.locator("#board tbody tr").first.locator("td").nth(da_column).get_attribute("title")
    )
    assert cell_title.startswith("95% CI [")
    page.select_option("#view", "group:Mainland Scandinavian")
    assert page.locator("#view-title").text_content() == "Mainland Scandinavian"
    page.select_option("#view", "language:da")
    assert len(_models(page)) == 4
    # the rank distribution is a small bar chart per model
    page.select_option("#view", "overall")
    assert page.locator("#board canvas.rankbar").count() == 4
    assert "rank" in page.locator("#board canvas.rankbar").first.get_attribute("aria-label")
    assert watch.errors == [] and watch.dialogs == []


def test_footer_points_to_the_reproductions_page(site: Path, watch: PageWatch) -> None:
    """No reproductions page beside the site: the footer names the command that writes one."""
    page = watch.open(site.as_uri())
    footer = page.locator("#reproductions").text_content()
    command = "glotbench reproduce --out reproductions"
    assert footer == (
        f"Published numbers recomputed by glotbench: {command}, run in this page's folder, "
        "writes the reproductions page beside this one (docs/reproductions.md)."
    )
    assert page.locator("#reproductions code").text_content() == command
    assert watch.errors == []


def _page_pairwise(site: Path) -> tuple[dict[str, Any], int]:
    """The pairwise data and the difference digits the page was written with (the analysis')."""
    text = site.read_text(encoding="utf-8")
    marker = '<script type="application/json" id="glotbench-data">'
    start = text.index(marker) + len(marker)
    data = json.loads(text[start : text.index("</script>", start)])
    digits = data["score_digits"]
    return data["pairwise"], 2 if digits == 1 else digits


def _full_test_set_scores(
    store: Path, models: tuple[str, ...]
) -> dict[tuple[str, str, str], float]:
    """Accuracy on the whole test set, mean over seeds, per (model, task, language): numpy on
    the stored per-example statistics (sum of correct / sum of counts), no resampling."""
    from glotbench.store.store import Store

    seeds: dict[tuple[str, str, str], list[float]] = {}
    with Store.open(store, read_only=True) as handle:
        runs = handle.runs.frame(models=list(models))
        for run in runs.to_dict(orient="records"):
            _, stats = handle.stats.of_run(str(run["run_id"]))
            key = (str(run["model"]), str(run["task"]), str(run["language"]))
            seeds.setdefault(key, []).append(float(stats[:, 0].sum() / stats[:, 1].sum()))
    return {key: float(np.mean(values)) for key, values in seeds.items()}


def test_pairwise_view(site: Path, watch: PageWatch, artifacts_dir: Path) -> None:
    """The table and summary show the paired comparison of the two models.

    A cell's difference is the difference of the full-test-set scores (docs/methods.md,
    "Score"), computed here with numpy from the stored per-example statistics; the SDs
    and intervals are over the draws, which the point estimates do not enter, so they
    are checked against ``compare_models`` on the same replicates (and the SD, loosely,
    against numpy's SD of the paired replicate differences).
    """
    from glotbench.analysis.compare import EFFECT_THRESHOLD, compare_models
    from glotbench.analysis.headline import AnalysisSettings
    from glotbench.analysis.replicates import ReplicatedScores

    page = watch.open(site.as_uri())
    # chosen lower-ranked first: the page shows the higher-ranked model minus the lower
    page.select_option("#model-a", SCRIPT_NAME)
    page.select_option("#model-b", XSS)
    rows = page.locator("#pair tbody tr")
    assert rows.count() == 8  # 2 tasks x 4 languages
    headers = page.locator("#pair th").all_text_contents()
    assert headers[2:4] == [XSS, SCRIPT_NAME]
    store = site.parent.parent / "s.duckdb"
    points = _full_test_set_scores(store, (XSS, SCRIPT_NAME))
    # the spread: the draws of the page's source and settings, these two models alone
    source = api.leaderboard_source(store=store, n_replicates=100)
    replicated = source.replicated
    pairwise, digits = _page_pairwise(site)
    settings = AnalysisSettings(n_draws=300)
    rows_of = [replicated.models.index(m) for m in (XSS, SCRIPT_NAME)]
    values = replicated.values[rows_of]
    two = ReplicatedScores((XSS, SCRIPT_NAME), replicated.units, values, replicated.source)
    reference = compare_models(two, settings.draws(two), aggregators=("mean",))
    per_cell = reference.per_language
    table = [r.locator("td").all_text_contents() for r in rows.all()]
    differences = []
    for k, (task, language) in enumerate(pairwise["units"]):
        cell = per_cell[per_cell["language"] == f"{task}/{language}"].iloc[0]
        difference = points[(XSS, task, language)] - points[(SCRIPT_NAME, task, language)]
        differences.append(difference)
        shown = table[k]
        assert shown[:2] == [task, language]
        assert shown[4] == f"{difference:.{digits}f}"
        assert shown[5] == f"{cell['sd']:.{digits}f}"
        assert shown[6] == f"{difference / cell['sd']:.2f}"
        assert (shown[7] == "yes") == bool(abs(difference / cell["sd"]) >= EFFECT_THRESHOLD)
        # the draws' SD is the SD of paired replicate differences (seed and replicate drawn)
        u = [(x.task, x.language) for x in replicated.units].index((task, language))
        pooled = (values[0, u] - values[1, u]).ravel()
        assert cell["sd"] == pytest.approx(np.nanstd(pooled, ddof=1), rel=0.25)
    assert page.locator("#pair tbody td.flag").count() >= 1  # 0.82 vs 0.6 on 60 examples
    summary = page.locator("#pair-summary").text_content()
    mean = reference.aggregates.iloc[0]
    assert summary.startswith(f"{XSS} − {SCRIPT_NAME} (overall score, 8 task-language cells)")
    # balanced: the mean of task means is the mean of the 8 cells
    assert f"difference {np.mean(differences):.{digits}f}" in summary
    assert f"SD over paired draws {mean['sd']:.{digits}f}" in summary
    assert f"[{mean['ci_low']:.{digits}f}, {mean['ci_high']:.{digits}f}]" in summary
    assert "Every pair of the 4 ranked models" in page.locator("#pair-scope").text_content()
    assert watch.dialogs == [] and watch.errors == []
    page.locator("#pairwise").screenshot(path=str(artifacts_dir / "leaderboard_pairwise.png"))


def test_pairwise_view_names_the_command_for_a_pair_not_on_the_page(
    site: Path, watch: PageWatch, tmp_path: Path
) -> None:
    source = api.leaderboard_source(store=site.parent.parent / "s.duckdb", n_replicates=100)
    data = build_leaderboard(source.replicated, n_draws=300, pair_models=2)
    pairwise = data.payload["pairwise"]
    top, third = pairwise["models"][0], data.payload["views"]["overall"]["rows"][2]["model"]
    assert third not in pairwise["models"]
    page = watch.open(write_leaderboard(data, tmp_path / "two").as_uri())
    page.select_option("#model-a", top)
    page.select_option("#model-b", third)
    assert page.locator("#pair tbody tr").count() == 0
    summary = page.locator("#pair-summary").text_content()
    assert "This pair is not on the page" in summary
    assert "glotbench analyze compare --per-language --pairs-out pairs.parquet" in summary
    assert "--draws 300 --seed 0 --resample-languages with" in summary
    assert "top 2 of the 4 ranked models" in page.locator("#pair-scope").text_content()
    assert watch.dialogs == [] and watch.errors == []


def test_200_models_50_languages_load_and_sort(tmp_path: Path, watch: PageWatch) -> None:
    """A large board renders every row and sorts a language column correctly.

    Its speed is measured in benchmarks/bench_leaderboard_browser.py, not here.
    """
    frame = large_board_frame(n_models=200, n_languages=50)
    data = build_leaderboard(
        replicates_from_frame(frame),
        n_draws=200,
        metadata={f"model-{i:03d}": {"type": ("enc", "dec")[i % 2]} for i in range(200)},
    )
    page = watch.open(write_leaderboard(data, tmp_path / "big").as_uri())
    assert page.locator("#board tbody tr").count() == 200
    page.select_option("#view", "task:nli")  # 200 rows x 50 language columns
    page.click('#board th[data-key="sub:l07"]')
    column = frame[(frame["task"] == "nli") & (frame["language"] == "l07")]
    best = column.sort_values("score", ascending=False)["model"].iloc[0]
    worst = column.sort_values("score")["model"].iloc[0]
    first_rows = page.locator("#board tbody tr").all_inner_texts()
    assert best in first_rows[0] or worst in first_rows[0]
    assert watch.errors == []


def large_board_frame(n_models: int, n_languages: int) -> pd.DataFrame:
    """Scores of many models on two tasks (also used by the browser benchmark)."""
    rng = np.random.default_rng(0)
    languages = [f"l{j:02d}" for j in range(n_languages)]
    return pd.DataFrame(
        [
            (f"model-{i:03d}", task, lang, float(rng.normal(50 + i * 0.05, 5)))
            for i in range(n_models)
            for task in ("ner", "nli")
            for lang in languages
        ],
        columns=["model", "task", "language", "score"],
    )


def test_long_boards_draw_500_rows_and_sort_and_mark_ties_over_all(
    tmp_path: Path, watch: PageWatch
) -> None:
    """600 closely spaced models: 500 rows drawn, the rest a click away; sorting and search
    see every row, and ≈ follows the analysis' ties (runs of positions) in any order."""
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(
        [
            (f"m{i:03d}", "t", lang, float(0.5 + i * 2e-4 + rng.normal(0, 0.01)))
            for i in range(600)
            for lang in ("de", "fr", "sw")
        ],
        columns=["model", "task", "language", "score"],
    )
    data = build_leaderboard(replicates_from_frame(frame), n_draws=100, language_groups={})
    index = write_leaderboard(data, tmp_path / "long")
    page = watch.open(index.as_uri())
    assert len(_models(page)) == 500
    assert "600 of 600 models (the first 500 drawn)" in page.locator("#count").text_content()
    page.locator("#board th[data-key=model]").click()
    assert _models(page)[:3] == ["m000", "m001", "m002"]  # sorted over all 600
    page.fill("#search", "m599")
    assert _models(page) == ["m599"] and page.locator("#show-all").is_hidden()
    page.fill("#search", "")
    page.locator("#show-all").click()
    shown = _models(page)
    assert len(shown) == 600
    rows = {r["model"]: r["rank"] for r in data.payload["views"]["overall"]["rows"]}
    marked = page.eval_on_selector_all(
        "#board tbody tr", "rows => rows.map(r => r.hasAttribute('data-tie-above'))"
    )
    runs = {m: list(zip(r["ties"][::2], r["ties"][1::2], strict=True)) for m, r in rows.items()}
    expected = [
        i > 0 and any(lo <= rows[shown[i - 1]]["at"] <= hi for lo, hi in runs[model])
        for i, model in enumerate(shown)
    ]
    assert marked == expected and any(marked)
    # a windowed distribution names the ranks beyond its window up to the view's rank count
    windowed = [m for m, r in rows.items() if r.get("dist_out") and r["dist_out"][1] > 0]
    assert windowed
    model = windowed[0]
    label = page.eval_on_selector_all(
        "#board tbody tr",
        "(rows, m) => rows.filter(r => r.innerText.includes(m))"
        ".map(r => r.querySelector('canvas.rankbar').getAttribute('aria-label'))[0]",
        model,
    )
    last = rows[model]["dist_from"] + len(rows[model]["dist"])
    assert f"ranks {last}–600: " in label
    assert watch.errors == []
