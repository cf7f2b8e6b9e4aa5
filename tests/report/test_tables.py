"""Terminal tables fit the width without cutting numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from rich.console import Console

from glotbench.report.tables import format_cell, format_column, frame_table


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
        for cell in format_column(frame[column].tolist(), 4):
            assert cell in text, (column, cell)
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


def test_a_column_has_one_number_of_decimals() -> None:
    # the largest magnitude sets the decimals: 4 significant digits of 7.0 -> 3 decimals
    assert format_column([1.329, 1.53, 7.0, 4.22]) == ["1.329", "1.530", "7.000", "4.220"]
    assert format_column([0.78, 0.0321, float("nan")]) == ["0.7800", "0.0321", "—"]
    # ranks and counts stored as floats are whole numbers
    assert format_column([1.0, 7.0, 3.0]) == ["1", "7", "3"]
    # a non-zero value that would round to zero is a bound, not a misleading zero
    assert format_column([60.6, 34.1, 0.03, 0.0], 3) == ["60.6", "34.1", "<0.1", "0.0"]
    assert format_column([0.5, 0.25, -1.234e-9]) == ["0.5000", "0.2500", ">-0.0001"]
    # huge magnitudes go scientific and do not set the decimals of the others
    assert format_column([2.5e9, 1.5]) == ["2.500e+09", "1.500"]
    # numpy scalars, integers, text and booleans
    assert format_column([np.float64(0.25), np.float64(1.0)]) == ["0.250", "1.000"]
    assert format_column([1, 2]) == ["1", "2"] and format_column(["a", True]) == ["a", "True"]


def test_frame_table_lines_up_decimals() -> None:
    frame = pd.DataFrame({"model": ["a", "b"], "mean_rank": [1.53, 7.0]})
    text = _render(frame_table(frame), 80)
    assert "1.530" in text and "7.000" in text


def test_title_wraps_at_the_terminal_width_not_the_tables() -> None:
    """A narrow table's title uses the whole line and is not padded to the table."""
    frame = pd.DataFrame({"model": ["a", "b"], "score": [0.5, 0.25]})
    title = "Rank distribution, % of draws (languages-only resampling, 10000 draws)"
    lines = _render(frame_table(frame, title=title), 80).splitlines()
    assert lines[0] == title  # one line, although the table is 20 columns wide
    table_width = len(lines[1])
    assert table_width < len(title)
    assert all(not line.endswith("  ") for line in lines)


def test_every_key_column_is_repeated_in_every_part() -> None:
    """Three identifying text columns (as in `analyze compare`, `show`, the aggregate
    hierarchy) all reappear in each part, so a number can be matched to its row."""
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(
        {
            "aggregator": ["mean", "median"],
            "model_a": ["model-alpha-large", "model-alpha-large"],
            "model_b": ["model-beta-base", "model-gamma-xl"],
            **{f"statistic_{j}": rng.normal(size=2) for j in range(10)},
        }
    )
    text = _render(frame_table(frame), 80)
    parts = text.count("┏")
    assert parts >= 2
    for key in ("aggregator", "model_a", "model_b"):
        assert text.count(key) == parts, key
    assert all(len(line) <= 80 for line in text.splitlines())


def test_named_key_columns_are_repeated() -> None:
    frame = pd.DataFrame(
        {
            "level": ["overall"],
            "score": [0.5],
            "model": ["xlm-r"],
            **{f"statistic_{j}": [1.0 / (j + 3)] for j in range(12)},
        }
    )
    text = _render(frame_table(frame, keys=("level", "model")), 60)
    parts = text.count("┏")
    assert parts >= 2 and text.count("xlm-r") == parts and text.count("overall") == parts
