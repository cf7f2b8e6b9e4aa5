"""JSON-ready records of result tables: column by column, the values the general
(value-by-value) conversion gives, and what JSON can hold."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from glotbench.analysis.results import records, records_by_value


def _types(rows: list[dict]) -> list[list[type]]:
    return [[type(v) for v in row.values()] for row in rows]


def test_records_turn_numbers_into_python_and_non_finite_into_none() -> None:
    frame = pd.DataFrame(
        {
            "model": np.array(["a", "b", "c"], dtype=object),
            "difference": [0.25, np.inf, np.nan],
            "effect": np.array([-np.inf, 1.5, 2.0], dtype=np.float32),
            "flagged": [True, False, True],
            "n": np.array([1, 2, 3], dtype=np.int64),
            "u": np.array([4, 5, 6], dtype=np.uint16),
        }
    )
    rows = records(frame)
    assert rows == [
        {"model": "a", "difference": 0.25, "effect": None, "flagged": True, "n": 1, "u": 4},
        {"model": "b", "difference": None, "effect": 1.5, "flagged": False, "n": 2, "u": 5},
        {"model": "c", "difference": None, "effect": 2.0, "flagged": True, "n": 3, "u": 6},
    ]
    assert _types(rows)[0] == [str, float, type(None), bool, int, int]
    json.dumps(rows, allow_nan=False)  # valid JSON: no NaN, no Infinity
    assert rows == records_by_value(frame) and _types(rows) == _types(records_by_value(frame))


def test_records_of_other_column_types_equal_the_value_by_value_conversion() -> None:
    frames = [
        pd.DataFrame(
            {
                "when": pd.to_datetime(["2026-11-27", None]),
                "count": pd.array([1, None], dtype="Int64"),
                "name": pd.Series(["x", None], dtype="str"),
                "group": pd.Categorical(["a", None]),
                "mixed": [np.float64(np.inf), [1, 2]],
                "flag": pd.array([True, None], dtype="boolean"),
            }
        ),
        pd.DataFrame(index=range(2)),  # rows without columns
        pd.DataFrame({0: [1.0, np.nan]}),  # a column named by a number
    ]
    for frame in frames:
        rows = records(frame)
        assert rows == records_by_value(frame) and _types(rows) == _types(records_by_value(frame))
    assert records(frames[0])[1] == dict.fromkeys(frames[0].columns[:4]) | {
        "mixed": [1, 2],
        "flag": None,
    }
    assert records(frames[1]) == [{}, {}]
