"""glotbench reproduce: registry, JSON document, HTML page and errors (issue 23)."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest
from typer.testing import CliRunner

from glotbench.cli import app
from glotbench.errors import InputError
from glotbench.report.reproduction import build_page
from glotbench.reproduce import PAPER_MODULES, papers
from glotbench.reproduce.base import Cell, PaperReproduction, TableReproduction

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"


def test_registry_lists_present_modules_in_order() -> None:
    present = papers()
    assert "saleva" in present
    assert list(present) == [name for name in PAPER_MODULES if name in present]
    for module in present.values():
        assert callable(module.reproduce)


@pytest.mark.slow
def test_saleva_json_and_page(tmp_path: Path) -> None:
    if not (DATA / "saleva").is_dir():
        pytest.skip(f"the published inputs are not at {DATA} (../shared/data)")
    out = tmp_path / "page"
    result = CliRunner().invoke(
        app, ["reproduce", "saleva", "--data-dir", str(DATA), "--out", str(out), "--json"]
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert [p["paper"] for p in payload["papers"]] == ["saleva"]
    tables = payload["papers"][0]["tables"]
    assert [t["table"] for t in tables] == [f"Table {n}" for n in range(1, 13)]
    assert sum(payload["counts"].values()) == sum(len(t["cells"]) for t in tables)
    assert {"key", "published", "recomputed", "difference", "tolerance", "status", "reason"} <= set(
        tables[1]["cells"][0]
    )
    assert len(payload["summary"]) == 12 and payload["page"].endswith("index.html")
    html = (out / "index.html").read_text()
    assert "Table 3" in html and "look exchanged" in html and "not reproducible" in html


def _fake_paper(data_dir: Path) -> PaperReproduction:
    cells = [
        Cell.compare("x", 1.0, 1.001, 0.005),
        Cell.compare("y", 2.0, 2.5, 0.005, reason_if_differs="r"),
    ]
    return PaperReproduction(
        "fake", "cite", "inputs", [TableReproduction("Table 9", "t", "m", cells)]
    )


def test_terminal_summary_and_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = CliRunner().invoke(app, ["reproduce", "--data-dir", str(tmp_path / "nope")])
    assert isinstance(missing.exception, InputError) and "data_dir=DIR" in str(missing.exception)
    unknown = CliRunner().invoke(app, ["reproduce", "bogus", "--data-dir", str(tmp_path)])
    assert isinstance(unknown.exception, InputError) and "unknown paper" in str(unknown.exception)

    module = types.ModuleType("glotbench_test_fake_paper")
    module.reproduce = _fake_paper  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(PAPER_MODULES, "fake", module.__name__)
    monkeypatch.setenv("GLOTBENCH_DATA_DIR", str(tmp_path))
    shown = CliRunner().invoke(app, ["reproduce", "fake"], env={"COLUMNS": "120"})
    assert shown.exit_code == 0, shown.output
    assert "fake: 1 reproduced, 1 differ, 0 not reproducible" in shown.output
    assert "Table 9" in shown.output and "0.5" in shown.output


def test_page_escapes_and_shows_every_cell() -> None:
    cells = [
        Cell.compare("a <b>", 1.25, 1.2549, 0.005),
        Cell.compare("c", 2.0, 2.5, 0.005, reason_if_differs="swapped & wrong"),
        Cell("d", 3.0, None, 0.05, "not_reproducible", "input X missing"),
    ]
    paper = PaperReproduction(
        "p", "cite", "inputs", [TableReproduction("Table 1", "t", "m", cells, ["note <x>"])]
    )
    html = build_page([paper]).render()
    assert "a &lt;b&gt;" in html and "swapped &amp; wrong" in html and "note &lt;x&gt;" in html
    assert (
        "+0.0049" in html
        and "input X missing" in html
        and "<b>"
        not in html.replace("<b>Method:</b>", "")
        .replace("<b>Inputs:</b>", "")
        .replace("<b>Notes</b>", "")
        .replace("<b>reproduced</b>", "")
        .replace("<b>differs</b>", "")
        .replace("<b>not reproducible</b>", "")
    )
