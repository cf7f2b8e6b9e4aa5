"""Property-based fuzzing of the importers (hypothesis).

Whatever the input, an import either succeeds cleanly or raises a
GlotbenchError (never another exception), and after an error the store is
exactly as before. A clean import stores nothing that breaks the declared
constraints: names are printable, scores of known metrics lie in their range.
"""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from glotbench.errors import GlotbenchError
from glotbench.importers.euroeval import import_euroeval
from glotbench.importers.lm_eval import import_lm_eval
from glotbench.ingest.column_checks import has_control_chars
from glotbench.ingest.score_validation import metric_score_range
from glotbench.ingest.tidy import import_examples_file, import_scores_file
from glotbench.store import Store
from glotbench.store.names import name_problem, normalise_name

from ..store.conftest import TABLES
from .conftest import FIXTURES, LM_EVAL_OUT

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
LEGACY = FIXTURES / "euroeval" / "euroeval_benchmark_results.jsonl"

names = st.one_of(
    st.sampled_from(["m", "xnli", "de", "da+sv", "model-1", "", "m\u200b", "e\u0301", "\u202ede"]),
    st.text(min_size=0, max_size=6),
)
numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.sampled_from([0, 1, 0.5, 57.3, -3, 100, 5000]),
)
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), numbers, st.text(max_size=5)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


def _contents(store: Store) -> dict[str, list[str]]:
    con = store.connection
    return {
        t: sorted(repr(r) for r in con.execute(f"SELECT * FROM {t}").fetchall()) for t in TABLES
    }


def _name_is_sane(text: str) -> bool:
    """Stored names pass the name check: NFC, visible, at most MAX_NAME_CHARS."""
    return bool(text) and name_problem(text) is None and normalise_name(text) == text


def _stored_is_sane(store: Store) -> None:
    scores = store.scores.frame()
    for _, row in scores.iterrows():
        for col in ("model", "task", "language", "dataset", "metric"):
            assert row[col] and not has_control_chars(row[col]), row
            assert _name_is_sane(row[col]), row
        assert math.isfinite(row["score"]), row
        bounds = metric_score_range(row["metric"])
        if bounds is not None:
            assert bounds[0] <= row["score"] <= bounds[1], row
    runs = store.runs.frame()
    for _, run in runs.iterrows():
        for col in ("model", "task", "language", "metric"):
            assert run[col] and not has_control_chars(run[col]), run
            assert _name_is_sane(run[col]), run


def _clean_or_clear(store: Store, call: Callable[[], object]) -> None:
    before = _contents(store)
    try:
        call()
    except GlotbenchError as exc:
        assert str(exc)  # a message, no traceback
        assert _contents(store) == before
    else:
        _stored_is_sane(store)


@pytest.fixture
def fuzz_store(tmp_path: Path):
    with Store.open(tmp_path / "fuzz.duckdb") as s:
        yield s


def _csv_cell(value: object) -> str:
    text = "" if value is None else str(value)
    if any(c in text for c in ',"\n\r'):
        text = '"' + text.replace('"', '""') + '"'
    return text


@SETTINGS
@given(
    rows=st.lists(
        st.tuples(
            names,
            names,
            names,
            st.sampled_from(["accuracy", "bleu", "mcc", "f1", "perplexity"]),
            numbers,
        ),
        min_size=1,
        max_size=5,
    ),
    drop=st.lists(st.integers(min_value=0, max_value=4), max_size=2),
)
@pytest.mark.slow
def test_fuzz_tidy_scores_csv(fuzz_store: Store, rows, drop) -> None:
    lines = ["model,task,language,metric,score"]
    for i, row in enumerate(rows):
        cells = [_csv_cell(v) for v in row]
        if i in drop:
            cells = cells[:-1]  # a ragged record
        lines.append(",".join(cells))
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "scores.csv"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        _clean_or_clear(
            fuzz_store, lambda: import_scores_file(fuzz_store, path, allow_unknown_metrics=True)
        )


@SETTINGS
@given(
    records=st.lists(
        st.fixed_dictionaries(
            {
                "model": names,
                "task": names,
                "language": names,
                "seed": st.one_of(st.none(), st.integers(-2, 2), numbers),
                "example_id": st.one_of(st.integers(0, 3), names),
                "metric": st.sampled_from(["accuracy", "ner_f1", "las", "squad_f1"]),
            },
            optional={
                "value": numbers,
                "count": numbers,
                "correct": numbers,
                "predicted": numbers,
                "gold": numbers,
                "words": numbers,
                "score": numbers,
            },
        ),
        min_size=1,
        max_size=5,
    )
)
@pytest.mark.slow
def test_fuzz_tidy_examples_jsonl(fuzz_store: Store, records) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "examples.jsonl"
        path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
        _clean_or_clear(fuzz_store, lambda: import_examples_file(fuzz_store, path))


def _set_path(obj: object, keys: list[str], value: object) -> None:
    """Replace the value at a path of keys (indices into lists modulo their length)."""
    for i, key in enumerate(keys):
        last = i == len(keys) - 1
        if isinstance(obj, dict) and obj:
            k = sorted(obj)[ord(key) % len(obj)]
            if last or not isinstance(obj[k], dict | list):
                obj[k] = value
                return
            obj = obj[k]
        elif isinstance(obj, list) and obj:
            j = ord(key) % len(obj)
            if last or not isinstance(obj[j], dict | list):
                obj[j] = value
                return
            obj = obj[j]
        else:
            return


_RECORDS = [json.loads(line) for line in LEGACY.read_text().splitlines() if line.strip()]


@SETTINGS
@given(
    index=st.integers(0, len(_RECORDS) - 1),
    path=st.lists(st.sampled_from(list("abcdefgh")), min_size=1, max_size=4),
    value=json_values,
)
@pytest.mark.slow
def test_fuzz_euroeval(fuzz_store: Store, index, path, value) -> None:
    records = json.loads(json.dumps(_RECORDS))
    _set_path(records[index], path, value)
    with tempfile.TemporaryDirectory() as d:
        file = Path(d) / "euroeval_benchmark_results.jsonl"
        file.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
        _clean_or_clear(fuzz_store, lambda: import_euroeval(fuzz_store, file))


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    task=st.sampled_from(["xnli_de", "tinyboolq", "tinymt_de"]),
    line=st.integers(0, 9),
    field=st.sampled_from(["acc", "f1", "mcc", "bleu", "doc_id", "filter", "acc_norm"]),
    value=json_values,
    in_results=st.booleans(),
)
# found by this test in CI: an MCC sample whose label is a list crashed (unhashable) instead
# of an InputError naming the file, line and metric
@pytest.mark.slow
@example(task="tinyboolq", line=0, field="mcc", value=[None, []], in_results=False)
def test_fuzz_lm_eval(fuzz_store: Store, task, line, field, value, in_results) -> None:
    import shutil

    with tempfile.TemporaryDirectory() as d:
        root = Path(d) / "out"
        shutil.copytree(LM_EVAL_OUT, root)
        folder = root / "tiny-gpt2"
        if in_results:
            results = sorted(folder.glob("results_*.json"))[0]
            data = json.loads(results.read_text())
            metrics = data["results"][task]
            key = sorted(k for k in metrics if "," in k)[
                line % len([k for k in metrics if "," in k])
            ]
            metrics[key] = value
            results.write_text(json.dumps(data))
        else:
            samples = sorted(folder.glob(f"samples_{task}_*.jsonl"))[0]
            lines = samples.read_text().splitlines()
            rec = json.loads(lines[line % len(lines)])
            rec[field] = value
            lines[line % len(lines)] = json.dumps(rec)
            samples.write_text("\n".join(lines) + "\n")
        _clean_or_clear(fuzz_store, lambda: import_lm_eval(fuzz_store, root))
