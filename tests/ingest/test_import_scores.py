"""Importing tidy score files: validation messages, idempotence, conflicts."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from glotbench import api
from glotbench.errors import InputError
from glotbench.store import Store

from ..conftest import CliResult
from ..store.conftest import SCORES_CSV, store_contents

HEADER = "model,task,language,metric,score"

# (name, file name, content, line, field, words in the message)
MALFORMED: list[tuple[str, str, str, int | None, str | None, str]] = [
    (
        "missing required column",
        "s.csv",
        "model,task,language,metric\nm,t,en,accuracy\n",
        1,
        "score",
        "missing required column 'score'",
    ),
    (
        "non-numeric score",
        "s.csv",
        f"{HEADER}\nm,t,en,accuracy,0.5\nm,t,de,accuracy,0.5\nm,t,fr,accuracy,high\n",
        4,
        "score",
        "not a number: 'high'",
    ),
    (
        "NaN score",
        "s.csv",
        f"{HEADER}\nm,t,en,accuracy,0.5\nm,t,de,accuracy,NaN\n",
        3,
        "score",
        "NaN",
    ),
    ("inf score", "s.csv", f"{HEADER}\nm,t,en,accuracy,-inf\n", 2, "score", "infinite"),
    (
        "empty score",
        "s.csv",
        f"{HEADER}\nm,t,en,accuracy,0.1\nm,t,de,accuracy,\n",
        3,
        "score",
        "missing",
    ),
    (
        "empty required string",
        "s.csv",
        f"{HEADER}\nm,t,en,accuracy,0.5\nm,t,  ,accuracy,0.5\n",
        3,
        "language",
        "language is empty",
    ),
    (
        "duplicate key names both lines",
        "s.csv",
        f"{HEADER}\nm,t,en,accuracy,0.5\nm,t,de,accuracy,0.5\nm,t,en,accuracy,0.6\n",
        4,
        None,
        "duplicate key (model='m', task='t', language='en', dataset='t', metric='accuracy'): "
        "the same key is on line 2",
    ),
    (
        "unknown metric",
        "s.csv",
        f"{HEADER}\nm,t,en,accuracy,0.5\nm,t,en,acuracy,0.5\n",
        3,
        "metric",
        "unknown metric 'acuracy'",
    ),
    (
        "fractional seed",
        "s.csv",
        f"{HEADER},seed\nm,t,en,accuracy,0.5,1\nm,t,en,accuracy,0.5,1.5\n",
        3,
        "seed",
        "seed must be an integer, got '1.5'",
    ),
    (
        "text replicate",
        "s.csv",
        f"{HEADER},replicate\nm,t,en,accuracy,0.5,first\n",
        2,
        "replicate",
        "replicate is not a number: 'first'",
    ),
    (
        "negative stderr",
        "s.csv",
        f"{HEADER},stderr\nm,t,en,accuracy,0.5,-0.1\n",
        2,
        "stderr",
        "stderr must not be negative",
    ),
    (
        "negative n",
        "s.csv",
        f"{HEADER},n\nm,t,en,accuracy,0.5,-3\n",
        2,
        "n",
        "n must be at least 0",
    ),
    (
        "line numbers after blank lines and multi-line quoted fields",
        "s.csv",
        f'{HEADER},note\nm,t,en,accuracy,0.5,"a\nlong\nnote"\n\nm,t,de,accuracy,x,\n',
        6,
        "score",
        "not a number: 'x'",
    ),
    (
        "JSONL truncated record",
        "s.jsonl",
        '{"model": "m", "task": "t", "language": "en", "metric": "accuracy", "score": 0.5}\n'
        '{"model": "m", "task": "t", "language": "de", "metric": "accuracy", "sco',
        2,
        None,
        "truncated JSON record",
    ),
    (
        "JSONL invalid line",
        "s.jsonl",
        '{"model": "m", "task": "t", "language": "en", "metric": "accuracy", "score": 0.5}\n'
        "not json\n"
        '{"model": "m", "task": "t", "language": "de", "metric": "accuracy", "score": 0.5}\n',
        2,
        None,
        "invalid JSON",
    ),
    (
        "JSONL score as boolean",
        "s.jsonl",
        '{"model": "m", "task": "t", "language": "en", "metric": "accuracy", "score": 0.5}\n\n'
        '{"model": "m", "task": "t", "language": "de", "metric": "accuracy", "score": true}\n',
        3,
        "score",
        "not a number: True",
    ),
    (
        "JSONL model not text",
        "s.jsonl",
        '{"model": 7, "task": "t", "language": "en", "metric": "accuracy", "score": 0.5}\n',
        1,
        "model",
        "model must be text, got 7",
    ),
    (
        "JSONL missing key in one record",
        "s.jsonl",
        '{"model": "m", "task": "t", "language": "en", "metric": "accuracy", "score": 0.5}\n'
        '{"model": "m", "task": "t", "metric": "accuracy", "score": 0.5}\n',
        2,
        "language",
        "language is empty",
    ),
]


def _write(tmp_path: Path, name: str, content: str) -> Path:
    path = tmp_path / name
    path.write_text(content)
    return path


@pytest.mark.parametrize(
    ("case", "name", "content", "line", "field", "words"),
    MALFORMED,
    ids=[c[0] for c in MALFORMED],
)
def test_malformed_scores_are_rejected_with_location_and_store_is_unchanged(
    tmp_path: Path,
    populated_store: Path,
    cli: Callable[..., CliResult],
    case: str,
    name: str,
    content: str,
    line: int | None,
    field: str | None,
    words: str,
) -> None:
    path = _write(tmp_path, name, content)
    before = store_contents(populated_store)

    with pytest.raises(InputError) as exc:
        api.import_scores(path, store=populated_store)
    assert exc.value.path == str(path)
    assert exc.value.line == line
    assert exc.value.field == field
    assert words in str(exc.value)
    assert store_contents(populated_store) == before

    result = cli("import", "scores", path, "--store", populated_store)
    assert result.exit_code == 2
    location = f"{path}, line {line}" + (f", field '{field}'" if field else "")
    assert location in result.err
    assert "Traceback" not in result.stderr
    assert store_contents(populated_store) == before


def test_failed_import_into_a_new_store_leaves_no_store(tmp_path: Path) -> None:
    path = _write(tmp_path, "s.csv", f"{HEADER}\nm,t,en,accuracy,oops\n")
    store = tmp_path / "new.duckdb"
    with pytest.raises(InputError):
        api.import_scores(path, store=store)
    assert not store.exists()
    assert not (tmp_path / "new.duckdb.wal").exists()


@pytest.mark.slow
def test_parquet_errors_name_the_row(tmp_path: Path, populated_store: Path) -> None:
    path = tmp_path / "s.parquet"
    pq.write_table(
        pa.table(
            {
                "model": ["m", "m", "m"],
                "task": ["t", "t", "t"],
                "language": ["en", "de", "fr"],
                "metric": ["accuracy"] * 3,
                "score": pa.array([0.5, 0.25, float("nan")]),
            }
        ),
        path,
    )
    before = store_contents(populated_store)
    with pytest.raises(InputError) as exc:
        api.import_scores(path, store=populated_store)
    assert (exc.value.line, exc.value.field) == (3, "score")
    assert f"{path}, row 3, field 'score': score is NaN" in str(exc.value)
    assert store_contents(populated_store) == before


def test_scores_round_trip_with_metadata_and_defaults(tmp_path: Path) -> None:
    path = _write(tmp_path, "s.csv", SCORES_CSV)
    store = tmp_path / "s.duckdb"
    result = api.import_scores(path, store=store)
    assert (result.status, result.scores_added, result.scores_skipped) == ("imported", 4, 0)
    with Store.open(store, read_only=True) as s:
        frame = s.scores.frame()
        assert len(frame) == 4
        row = frame[(frame["model"] == "mBERT") & (frame["language"] == "en")].iloc[0]
        assert row["dataset"] == "xnli"  # defaults to task
        assert row["score"] == pytest.approx(0.817)
        assert row["stderr"] == pytest.approx(0.01)
        assert pd.isna(row["seed"]) and pd.isna(row["replicate"]) and pd.isna(row["n"])
        assert row["metadata"] == {"params": "110M"}
        assert row["import_id"] == result.import_id
        xlmr = s.scores.frame(models=["XLM-R"])
        assert xlmr["seed"].tolist() == [1, 2]
        assert s.scores.frame(languages="de")["model"].tolist() == ["mBERT"]
        assert s.scores.frame(metrics=["ACCURACY"]).shape[0] == 4
        imports = s.imports.frame()
        assert imports["rows"].tolist() == [4] and imports["added"].tolist() == [4]
        assert imports["source"].iloc[0] == str(path.resolve())


@pytest.mark.slow
def test_reimporting_the_same_file_is_a_noop(tmp_path: Path) -> None:
    path = _write(tmp_path, "s.csv", SCORES_CSV)
    store = tmp_path / "s.duckdb"
    api.import_scores(path, store=store)
    before = store_contents(store)
    again = api.import_scores(path, store=store)
    assert again.status == "skipped"
    assert "already imported" in again.message
    assert store_contents(store) == before


@pytest.mark.slow
def test_rows_with_same_values_are_skipped_and_new_rows_added(tmp_path: Path) -> None:
    store = tmp_path / "s.duckdb"
    api.import_scores(_write(tmp_path, "a.csv", SCORES_CSV), store=store)
    # same rows (a different file: other column order, an extra row) -> skips + adds
    extra = "model,language,task,metric,score,seed,stderr\n" + (
        "mBERT,en,xnli,accuracy,0.817,,0.01\nXLM-R,en,xnli,accuracy,0.889,1,\n"
        "XLM-R,de,xnli,accuracy,0.8,1,\n"
    )
    result = api.import_scores(_write(tmp_path, "b.csv", extra), store=store)
    assert (result.scores_added, result.scores_skipped) == (1, 2)
    with Store.open(store, read_only=True) as s:
        assert len(s.scores.frame()) == 5


@pytest.mark.slow
def test_conflicting_value_names_line_field_and_stored_value(tmp_path: Path) -> None:
    store = tmp_path / "s.duckdb"
    api.import_scores(_write(tmp_path, "a.csv", SCORES_CSV), store=store)
    before = store_contents(store)
    conflict = f"{HEADER},seed\nnew,xnli,en,accuracy,0.5,\nXLM-R,xnli,en,accuracy,0.9,2\n"
    path = _write(tmp_path, "b.csv", conflict)
    with pytest.raises(InputError) as exc:
        api.import_scores(path, store=store)
    assert (exc.value.line, exc.value.field) == (3, "score")
    assert "already stored with score = 0.885" in str(exc.value)
    assert "gives 0.9" in str(exc.value)
    assert str((tmp_path / "a.csv").resolve()) in str(exc.value)
    assert store_contents(store) == before

    stderr_conflict = _write(
        tmp_path,
        "c.csv",
        "model,task,language,metric,score,stderr\nmBERT,xnli,en,accuracy,0.817,0.02\n",
    )
    with pytest.raises(InputError) as exc:
        api.import_scores(stderr_conflict, store=store)
    assert (exc.value.line, exc.value.field) == (2, "stderr")
    assert store_contents(store) == before


@pytest.mark.slow
def test_unknown_metrics_can_be_allowed(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    path = _write(tmp_path, "s.csv", f"{HEADER}\nm,t,en,rouge-l,0.3\n")
    store = tmp_path / "s.duckdb"
    assert cli("import", "scores", path, "--store", store).exit_code == 2
    result = cli("import", "scores", path, "--store", store, "--allow-unknown-metrics", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["scores_added"] == 1


def test_integral_floats_are_integers_and_metric_names_are_normalised(tmp_path: Path) -> None:
    content = f"{HEADER},seed,replicate,n,dataset\nm,t,en, Accuracy ,0.5,3.0,0,1000,\n"
    store = tmp_path / "s.duckdb"
    api.import_scores(_write(tmp_path, "s.csv", content), store=store)
    with Store.open(store, read_only=True) as s:
        row = s.scores.frame().iloc[0]
    assert (row["seed"], row["replicate"], row["n"]) == (3, 0, 1000)
    assert row["metric"] == "accuracy" and row["dataset"] == "t"


def test_jsonl_metadata_keeps_json_types_and_metadata_column_merges(tmp_path: Path) -> None:
    content = (
        '{"model": "m", "task": "t", "language": "en", "metric": "accuracy", "score": 0.5, '
        '"params": 270000000, "tags": ["a", "b"], "metadata": {"source": "paper"}}\n'
    )
    store = tmp_path / "s.duckdb"
    api.import_scores(_write(tmp_path, "s.jsonl", content), store=store)
    with Store.open(store, read_only=True) as s:
        meta = s.scores.frame().iloc[0]["metadata"]
    assert meta == {"source": "paper", "params": 270000000, "tags": ["a", "b"]}


def test_add_scores_from_a_dataframe_names_rows(tmp_path: Path) -> None:
    store = tmp_path / "s.duckdb"
    frame = pd.DataFrame(
        {
            "model": ["m", "m"],
            "task": ["t", "t"],
            "language": ["en", "de"],
            "metric": "accuracy",
            "score": [0.5, float("inf")],
        }
    )
    with pytest.raises(InputError) as exc:
        api.add_scores(frame, store=store)
    assert "row 2" in str(exc.value) and exc.value.field == "score"
    result = api.add_scores(frame.iloc[:1], store=store)
    assert result.scores_added == 1
