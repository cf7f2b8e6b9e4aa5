"""Terminal tables fit the width without cutting numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from rich.console import Console

from glotbench.report.tables import format_cell, frame_table


def _render(renderable: object, width: int) -> str:
    console = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(renderable)
    return console.export_text()


def _frame(n_columns: int) -> pd.DataFrame:
    rng = np.random.default_rng(n_columns)
    data: dict[str, object] = {"model": [f"model-{i}-large" for i in range(5)]}
    for j in range(n_columns):
        data[f"statistic_{j}"] = rng.normal(size=5) * 10.0 ** rng.integers(-4, 4)
    data["flagged"] = [True, False, True, False, True]
    return pd.DataFrame(data)


@pytest.mark.parametrize("width", [60, 80, 120])
@pytest.mark.parametrize("n_columns", [2, 6, 12])
def test_numbers_are_never_cut_and_lines_fit(width: int, n_columns: int) -> None:
    frame = _frame(n_columns)
    text = _render(frame_table(frame, title="A long title " * 3, digits=4), width)
    assert all(len(line) <= width for line in text.splitlines())
    assert "…" not in text.replace("… part", "")
    for column in frame.columns[1:-1]:
        for value in frame[column]:
            assert format_cell(value, 4) in text, (column, value)
    # every row keeps its key in every part
    parts = text.count("┏")
    assert text.count("model-0-large") == parts


def test_one_part_when_it_fits() -> None:
    text = _render(frame_table(_frame(2)), 120)
    assert text.count("┏") == 1 and "part" not in text


def test_format_cell() -> None:
    assert format_cell(float("nan")) == "—"
    assert format_cell(0.000123456, 3) == "0.000123"
    assert format_cell("x") == "x" and format_cell(3) == "3"
