"""lm-eval samples through DuckDB's JSON reader equal the strict line-by-line reader (issue 14).

The reference is the strict reader (standard-library JSON with a
duplicate-key hook, one line at a time): for every input, the columnar path
returns the same ids, values and line numbers, or declines and the strict
reader decides — the same result, or the same error naming file, line and field.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glotbench.errors import InputError
from glotbench.importers.lm_eval_samples import (
    _read_samples_strict,
    read_samples_files,
)

from .conftest import LM_EVAL_OUT


def _same(a: Any, b: Any) -> None:
    cols_a, n_a = a
    cols_b, n_b = b
    assert n_a == n_b
    assert list(cols_a) == list(cols_b)
    for key in cols_a:
        x, y = cols_a[key], cols_b[key]
        assert (x.metric, x.filt, x.first_line) == (y.metric, y.filt, y.first_line)
        assert list(x.ids) == list(y.ids)
        assert [int(v) for v in x.lines] == [int(v) for v in y.lines]
        xv, yv = list(x.values), list(y.values)
        if all(isinstance(v, int | float | np.floating) for v in yv):
            np.testing.assert_array_equal(np.asarray(xv, float), np.asarray(yv, float))
        else:
            assert xv == yv


def _outcome(read: Any) -> Any:
    try:
        return ("ok", read())
    except InputError as exc:
        return ("error", str(exc))


def _compare(path: Path) -> None:
    fast = _outcome(lambda: read_samples_files([(path, "t")])[path])
    strict = _outcome(lambda: _read_samples_strict(path, "t"))
    assert fast[0] == strict[0], (fast, strict)
    if fast[0] == "ok":
        _same(fast[1], strict[1])
    else:
        assert fast[1] == strict[1]


def test_fixture_samples_equal_the_strict_reader():
    files = sorted(LM_EVAL_OUT.rglob("samples_*.jsonl"))
    assert files
    read = read_samples_files([(f, "t") for f in files])
    for f in files:
        _same(read[f], _read_samples_strict(f, "t"))


def _sample(i: int, **extra: Any) -> dict[str, Any]:
    return {
        "doc_id": i,
        "doc": {"q": f"question {i}"},
        "filter": "none",
        "metrics": ["acc", "acc_norm"],
        "acc": float(i % 2),
        "acc_norm": 1.0,
        **extra,
    }


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "lines",
    [
        # blank line: rows are no longer lines, the strict reader numbers them
        [json.dumps(_sample(0)), "", json.dumps(_sample(1))],
        # booleans, integers
        [json.dumps(_sample(0, acc=True)), json.dumps(_sample(1, acc=0))],
        # a string value: an error naming line 2 and the field
        [json.dumps(_sample(0)), json.dumps(_sample(1, acc="1"))],
        # a repeated key the importer reads: an error naming line 2 and 'acc'
        [json.dumps(_sample(0)), json.dumps(_sample(1))[:-1] + ', "acc": 0.0}'],
        # doc_id twice (integers, text, an integer and its text)
        [json.dumps(_sample(0)), json.dumps(_sample(0))],
        [json.dumps(_sample(0, doc_id="a")), json.dumps(_sample(1, doc_id="a"))],
        [json.dumps(_sample(1)), json.dumps(_sample(0, doc_id="1"))],
        # the same doc_id under two filters is two columns, not a repeat
        [json.dumps(_sample(0)), json.dumps(_sample(0, filter="strict"))],
        # another metrics list on line 2
        [json.dumps(_sample(0)), json.dumps(_sample(1, metrics=["acc"]))],
        # not an object
        [json.dumps(_sample(0)), "[1, 2]"],
        # filter values, string ids
        [json.dumps(_sample(0, filter=None)), json.dumps(_sample(1, filter="strict"))],
        [json.dumps(_sample(0, doc_id="a")), json.dumps(_sample(1, doc_id=""))],
        # non-finite
        [json.dumps(_sample(0)), json.dumps(_sample(1, acc=float("nan")))],
    ],
)
@pytest.mark.slow
def test_declined_inputs_end_like_the_strict_reader(tmp_path: Path, lines: list[str]):
    _compare(_write(tmp_path / "samples_t.jsonl", lines))


def test_repeated_key_error_names_line_and_field(tmp_path: Path):
    path = _write(
        tmp_path / "samples_t.jsonl",
        [json.dumps(_sample(0)), json.dumps(_sample(1))[:-1] + ', "acc": 0.0}'],
    )
    with pytest.raises(InputError, match="appears twice") as info:
        read_samples_files([(path, "t")])
    assert info.value.line == 2 and info.value.field == "acc"


values = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.integers(-3, 3),
    st.booleans(),
    st.sampled_from(["1", None, [0, 1]]),
)
samples = st.fixed_dictionaries(
    {
        "doc_id": st.one_of(st.integers(-2, 6), st.sampled_from(["a", "b", ""])),
        "filter": st.sampled_from(["none", "strict", None, ""]),
        "acc": values,
    }
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@pytest.mark.slow
@given(rows=st.lists(samples, min_size=1, max_size=6), blank=st.booleans())
def test_columnar_equals_strict_on_random_files(rows: list[dict[str, Any]], blank: bool):
    lines = [json.dumps({**r, "metrics": ["acc"]}) for r in rows]
    if blank:
        lines.insert(len(lines) // 2, "")
    with tempfile.TemporaryDirectory() as folder:
        _compare(_write(Path(folder) / "samples_t.jsonl", lines))
