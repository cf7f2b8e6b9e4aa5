"""Names are text in every renderer: matplotlib (no mathtext), HTML, terminal (no rich markup).

Issue 24, item 4: ``glotbench report`` crashed on a model named ``m$\\frac{a$x``.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from rich.console import Console
from typer.testing import CliRunner

from glotbench.cli import app
from glotbench.report import plots
from glotbench.report.tables import frame_table

from .conftest import write_store

MATH = "m$\\frac{a$x"
TEX = "$x^2$"
MARKUP = "[bold]b[/bold]"
CLOSER = "c[/]"
HOSTILE = (MATH, TEX, MARKUP, CLOSER, "d\\", "<b>&amp;</b>")


@pytest.mark.slow
def test_report_with_mathtext_and_markup_names(tmp_path: Path) -> None:
    models = dict(zip(HOSTILE, (0.9, 0.8, 0.7, 0.6, 0.5, 0.4), strict=True))
    store = write_store(tmp_path / "s.duckdb", models, languages=("da", "sv"), tasks=("x",), n=30)
    out = tmp_path / "r.html"
    result = CliRunner().invoke(
        app, ["report", "--store", str(store), "--out", str(out), "--draws", "50"]
    )
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert "<b>&amp;</b>" not in page and "&lt;b&gt;&amp;amp;&lt;/b&gt;" in page
    assert page.count("<svg") == 3
    # the terminal leaderboard prints every name as typed (no styling, no MarkupError)
    board = CliRunner().invoke(app, ["analyze", "aggregate", "--store", str(store)])
    assert board.exit_code == 0, board.output
    for name in (MARKUP, CLOSER, TEX):
        assert name in board.output


def test_a_tex_name_is_drawn_as_typed_not_typeset() -> None:
    """``$x^2$`` as text has 5 glyphs; typeset by mathtext it would be 2 (x and a superscript)."""
    frame = pd.DataFrame({"model": [TEX], "rank_1": [100.0]})
    as_text = plots.rank_heatmap(frame)
    frame_plain = pd.DataFrame({"model": ["Sx^2S"], "rank_1": [100.0]})
    same_length = plots.rank_heatmap(frame_plain)
    # both names have five glyphs, so the figures have the same number of glyph uses
    assert as_text.count("<use") == same_length.count("<use")


names = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=20
)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:Glyph .* missing from font")
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(a=names, b=names)
@example(a=MATH, b=TEX)
@example(a="\\", b="$\\$$")
@example(a="[/]", b="[link=file:///etc/passwd]x")
def test_any_names_render_in_plots_and_tables(a: str, b: str) -> None:
    pairs = pd.DataFrame(
        {
            "model_a": [a],
            "model_b": [b],
            "difference": [0.1],
            "ci_low": [0.0],
            "ci_high": [0.2],
            "flagged": [True],
        }
    )
    assert plots.forest_plot(pairs).startswith("<svg")
    ranks = pd.DataFrame({"model": [a, b + " "], "rank_1": [60.0, 40.0], "rank_2": [40.0, 60.0]})
    assert plots.rank_heatmap(ranks).startswith("<svg")
    per_model = pd.DataFrame(
        {"model": [a], "task": [b], "sigma_b": [1.0], "sigma_seed_mean": [0.5]}
    )
    plots.variance_figure(per_model).clear()
    console = Console(file=io.StringIO(), width=200, color_system=None)
    console.print(frame_table(pd.DataFrame({"model": [a, b], "score": np.array([1.0, 2.0])})))
    text = console.file.getvalue()  # type: ignore[attr-defined]
    for name in (a, b):
        if name.isascii() and name.isprintable() and name.strip():
            assert name.replace(" ", "") in text.replace(" ", "").replace("\n", "").replace("│", "")
