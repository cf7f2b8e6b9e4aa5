"""write_csv (the CSV of ``analyze compare --pairs-out``) against pandas' to_csv, byte for byte."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from glotbench.report import table_files
from glotbench.report.table_files import write_csv, write_table

pytest.importorskip("pyarrow")

EDGES = [0.0, -0.0, 1.0, 100.0, -3.0, 1e-4, 9.999e-5, 1e-5, 1e15, 1e16, 1e17, 1e21, 1e22,
         0.1, 1 / 3, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 2.0**53,
         123456789012345678.0, 0.30000000000000004, np.nan, np.inf, -np.inf]  # fmt: skip


def floats(rng: np.random.Generator, n: int) -> np.ndarray:
    """Edge values, numbers at every scale, and arbitrary bit patterns."""
    scale = 10.0 ** rng.integers(-30, 30, n)
    bits = np.frombuffer(rng.bytes(8 * n), dtype=np.float64)
    return np.concatenate([EDGES, rng.normal(0, 1, n), rng.uniform(-1, 1, n) * scale, bits])


def test_the_csv_is_pandas_csv_byte_for_byte(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    x = floats(rng, 20_000)
    n = len(x)
    frame = pd.DataFrame(
        {
            "model_a": [f"model-{i % 97:03d}" for i in range(n)],
            "language": rng.choice(["sw", "af", "Ελληνικά", "", " yo "], n),
            "difference": x,
            "sd": rng.permutation(x),
            "flagged": rng.random(n) < 0.5,
            "count": rng.integers(-(2**62), 2**62, n),
        }
    )
    assert table_files._text_columns(frame) is not None  # the column path is taken
    ours, theirs = tmp_path / "ours.csv", tmp_path / "theirs.csv"
    write_csv(frame, ours)
    frame.to_csv(theirs, index=False)
    assert ours.read_bytes() == theirs.read_bytes()


@pytest.mark.parametrize(
    "column",
    [
        ["a,b", "c"],  # pandas quotes it
        ['say "hi"', "c"],
        ["two\nlines", "c"],
        [np.float32(0.1), np.float32(0.2)],  # float32 text is not float64's
        [None, "c"],
        [1, "c"],
    ],
)
def test_tables_the_column_path_does_not_take_are_written_by_pandas(
    tmp_path: Path, column: list[object]
) -> None:
    frame = pd.DataFrame({"x": column, "y": [0.5, 1e-7]})
    if isinstance(column[0], np.float32):
        frame["x"] = frame["x"].astype(np.float32)
    assert table_files._text_columns(frame) is None
    ours, theirs = tmp_path / "ours.csv", tmp_path / "theirs.csv"
    write_table(frame, ours)
    frame.to_csv(theirs, index=False)
    assert ours.read_bytes() == theirs.read_bytes()
