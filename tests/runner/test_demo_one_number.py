"""Every output of the demo shows the same numbers (issue 13: compute once, render many).

A tiny starter run (4 models, 6 languages, 2 iterations, 300 draws) through the
real CLI; the headline mean ± SE, the interval, the rank-1 shares and one
cell's interval must agree between the terminal's JSON, the terminal's text,
the leaderboard's data (``leaderboard.json``, the data the page embeds) and
the report's HTML.
"""

from __future__ import annotations

import functools
import html
import importlib.util
import json
import re
from pathlib import Path

import pytest

from glotbench.demo_starter import STARTER_PACKAGES

pytestmark = pytest.mark.skipif(
    any(importlib.util.find_spec(module) is None for module in STARTER_PACKAGES),
    reason="the starter suite needs pip install 'glotbench[starter]'",
)

MODELS = ["char-nb", "char-logreg", "majority", "cld2"]
LANGUAGES = ["da", "nb", "sv", "de", "en", "fr"]


def _report_rows(page: str, heading: str) -> list[list[str]]:
    """Rows (cell texts) of every table in the report section ``heading``."""
    start = page.index(f"<h2>{heading}</h2>")
    end = page.find("<section", start)
    section = page[start : end if end > 0 else len(page)]
    rows = []
    for row in re.findall(r"<tr>(.*?)</tr>", section):
        rows.append([html.unescape(c) for c in re.findall(r"<t[dh](?: [^>]*)?>(.*?)</t[dh]>", row)])
    return rows


@pytest.mark.slow
def test_terminal_json_leaderboard_and_report_show_the_same_numbers(
    cli,  # noqa: ANN001
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    from glotbench import api

    monkeypatch.setattr(
        api,
        "starter_demo",
        functools.partial(api.starter_demo, models=MODELS, languages=LANGUAGES),
    )
    out = tmp_path / "demo"
    args = ["demo", "--out", str(out), "--iterations", "2", "--draws", "300"]
    result = cli(*args, "--json")
    assert result.exit_code == 0, result.stderr
    starter = json.loads(result.stdout)["starter"]
    terminal = {row["model"]: row for row in starter["summary"]}
    assert set(terminal) == set(MODELS)
    analysis = starter["analysis"]
    assert analysis["settings"]["n_draws"] == 300 and analysis["scheme"] == "nonparametric"
    assert "seeds, test-set bootstrap and languages" in analysis["intervals"]
    # the terminal's own tables agree with each other: one set of draws
    ranks = {r["model"]: r for r in starter["ranks"]["distribution"]}
    aggregates = {
        r["model"]: r for r in starter["aggregates"]["aggregates"] if r["aggregator"] == "mean"
    }
    for model, row in terminal.items():
        assert row["rank_1_share"] == pytest.approx(ranks[model]["rank_1"], abs=1e-9)
        assert row["se"] == pytest.approx(aggregates[model]["se_resampled"], abs=1e-12)
        # the headline SE counts seeds and test set, so it is not the languages-only SE
        assert row["se"] != pytest.approx(row["se_languages"], abs=1e-6)
        # the interval is the draws' percentile interval (docs/methods.md): it holds the
        # point estimate and stays within accuracy's range, however skewed the draws
        assert 0.0 <= row["ci_low"] <= row["mean_accuracy"] <= row["ci_high"] <= 1.0

    board = json.loads((out / "leaderboard" / "leaderboard.json").read_text(encoding="utf-8"))
    assert board["analysis"]["n_draws"] == 300 and board["analysis"]["languages"] == "with"
    assert board["intervals"]["aggregates"].startswith(analysis["intervals"])
    overall = {r["model"]: r for r in board["views"]["overall"]["rows"]}
    task_view = {r["model"]: r for r in board["views"]["task:language_id"]["rows"]}
    page = (out / "report.html").read_text(encoding="utf-8")
    aggregate_rows = {r[0]: r for r in _report_rows(page, "Aggregates") if r[0] in terminal}
    rank_rows = {
        r[0]: r
        for r in _report_rows(page, "Rank distributions")
        if r[0] in terminal and len(r) == len(MODELS) + 1
    }
    for model, row in terminal.items():
        lb = overall[model]
        assert lb["score"] == pytest.approx(row["mean_accuracy"], abs=1e-4)
        assert lb["se"] == pytest.approx(row["se"], abs=1e-4)
        assert lb["ci"] == pytest.approx([row["ci_low"], row["ci_high"]], abs=1e-4)
        assert lb["se_languages"] == pytest.approx(row["se_languages"], abs=1e-4)
        # the page's rank distribution: shares from rank dist_from on (None: no draw)
        rank = lb["rank"]
        dist = {rank["dist_from"] + k: v for k, v in enumerate(rank["dist"]) if v is not None}
        assert dist.get(1, 0.0) == pytest.approx(row["rank_1_share"], abs=0.05)
        # the same cell: overall view, its task column and the task view are identical
        assert lb["sub"]["language_id"] == [lb["score"], lb["se"], *lb["ci"]]
        assert task_view[model]["ci"] == lb["ci"] and task_view[model]["se"] == lb["se"]
        # the report: score, SE, interval (3 decimals) and the rank-1 share (1 decimal)
        cells = aggregate_rows[model]
        expected = [row["mean_accuracy"], row["se"], row["ci_low"], row["ci_high"]]
        assert cells[1:5] == [f"{v:.3f}" for v in expected]
        assert rank_rows[model][1] == f"{row['rank_1_share']:.1f}"
    assert "count seeds, test-set bootstrap and languages" in html.unescape(page)

    # the terminal's text shows the same mean ± SE (a re-run resumes the stored runs)
    text = cli(*args, "--no-pages")
    assert text.exit_code == 0, text.stderr
    for row in terminal.values():
        assert f"{row['mean_accuracy']:.3f} ± {row['se']:.3f}" in text.stdout
    assert "count seeds, test-set bootstrap and languages" in " ".join(text.stdout.split())
