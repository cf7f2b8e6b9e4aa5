"""The leaderboard's and the report's footers point to the reproductions page (issue 23):
the command that writes it, and a relative link once it sits beside them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from glotbench import api
from glotbench.analysis.settings import AnalysisSettings
from glotbench.report.reproduction import write_reproduction_page

from .conftest import write_store

SMALL = AnalysisSettings(n_draws=50, n_replicates=20)


@pytest.mark.slow
def test_footers_name_the_command_then_link_the_page(tmp_path: Path) -> None:
    store = write_store(tmp_path / "s.duckdb", {"a": 0.7, "b": 0.6}, languages=("da", "sv"), n=20)
    source = api.leaderboard_source(store=store, settings=SMALL)
    site = tmp_path / "site"
    api.write_leaderboard_site(site, source, settings=SMALL)
    api.write_report(site / "report.html", source, settings=SMALL)
    link = json.loads((site / "leaderboard.json").read_text(encoding="utf-8"))["reproductions"]
    command = "glotbench reproduce --out reproductions"  # run in the page's folder
    assert link == {"href": None, "command": command, "document": "docs/reproductions.md"}
    footer = (site / "report.html").read_text(encoding="utf-8").rpartition("<footer>")[2]
    assert f"<code>{command}</code>, run in this page's folder, writes the reproductions" in footer
    assert "docs/reproductions.md" in footer
    # the page written where the command says: both footers link it, relatively
    written = write_reproduction_page([], site / "reproductions")
    api.write_leaderboard_site(site, source, settings=SMALL)
    api.write_report(site / "report.html", source, settings=SMALL)
    link = json.loads((site / "leaderboard.json").read_text(encoding="utf-8"))["reproductions"]
    assert link["href"] == "reproductions/index.html"
    assert (site / link["href"]).resolve() == written.resolve()
    footer = (site / "report.html").read_text(encoding="utf-8").rpartition("<footer>")[2]
    assert '<a href="reproductions/index.html">the reproductions page</a>' in footer
