"""Dictionary-encoded Parquet columns are checked per distinct value, with the same outcome.

A Parquet file written from categorical columns (as the leaderboard generator
and pandas write them) is read back as categoricals; their text checks run once
per distinct value and are broadcast to the rows (issue 27: the checks of a
500,000-row chunk fell from seconds to milliseconds). Every case here is
imported twice — plain strings and dictionary-encoded — and must end the same:
the same error (message, row, field) or the same stored runs.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from glotbench import api
from glotbench.errors import InputError
from glotbench.store import Store


def _frame(n: int = 60) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "model": [f"m{i % 3}" for i in range(n)],
            "task": "xnli",
            "language": ["de" if i % 2 else "en" for i in range(n)],
            "example_id": [f"e{i // 6}" for i in range(n)],
            "metric": "accuracy",
            "score": [float(i % 2) for i in range(n)],
            "seed": [i % 6 // 3 for i in range(n)],
        }
    )


def _write(frame: pd.DataFrame, path: Path, dictionary: bool) -> Path:
    frame = frame.copy()
    for col in ("model", "task", "language", "example_id", "metric"):
        frame[col] = frame[col].astype("category" if dictionary else object)
    frame.to_parquet(path, index=False)
    return path


def _outcome(frame: pd.DataFrame, tmp: Path, dictionary: bool) -> object:
    name = "dict" if dictionary else "plain"
    source = _write(frame, tmp / f"{name}.parquet", dictionary)
    store = tmp / f"{name}.duckdb"
    try:
        api.import_examples(source, store=store)
    except InputError as exc:
        return ("error", str(exc).replace(str(source), "FILE"), exc.line, exc.field)
    with Store.open(store, read_only=True) as s:
        return s.connection.execute(
            "SELECT run_id, model, task, language, n_examples, stats_sha256 FROM runs "
            "ORDER BY run_id"
        ).fetchall()


def _edit(column: str, row: int, value: object) -> pd.DataFrame:
    frame = _frame()
    frame[column] = frame[column].astype(object)
    frame.loc[row, column] = value
    return frame


CASES = {
    "valid": _frame(),
    "zero width in a model": _edit("model", 37, "m1\u200b"),
    "bidi override in a language": _edit("language", 12, "\u202ede"),
    "control character in a task": _edit("task", 45, "xn\tli"),
    "empty example id": _edit("example_id", 8, "  "),
    "missing model": _edit("model", 20, None),
    "too long a model name": _edit("model", 3, "m" * 300),
    "decomposed accent is normalised": _edit("model", 0, "me\u0301"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_dictionary_columns_end_as_plain_ones(tmp_path: Path, case: str) -> None:
    frame = CASES[case]
    plain, dictionary = (_outcome(frame, tmp_path, d) for d in (False, True))
    assert dictionary == plain
    if case.startswith(("valid", "decomposed")):
        assert isinstance(plain, list) and len(plain) > 0
    else:
        assert isinstance(plain, tuple) and plain[0] == "error"
