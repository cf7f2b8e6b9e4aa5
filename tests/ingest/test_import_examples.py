"""Importing per-example statistics: runs, labels, validation, conflicts, resume."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from glotbench import api
from glotbench.errors import InputError
from glotbench.metrics import get_metric
from glotbench.store import Store
from glotbench.store import runs as store_runs
from glotbench.store.runs import Runs as RunsClass

from ..conftest import CliResult
from ..store.conftest import examples_frame, label_frame, store_contents

H = "model,task,language,seed,example_id,metric"

# (name, file name, content, line, field, words in the message)
MALFORMED: list[tuple[str, str, str, int | None, str | None, str]] = [
    (
        "missing required column",
        "e.csv",
        "model,task,language,seed,metric,score\nm,t,en,0,accuracy,1\n",
        1,
        "example_id",
        "missing required column 'example_id'",
    ),
    (
        "non-numeric score",
        "e.csv",
        f"{H},score\nm,t,en,0,e1,accuracy,1\nm,t,en,0,e2,accuracy,yes\n",
        3,
        "score",
        "score is not a number: 'yes'",
    ),
    (
        "NaN statistic",
        "e.csv",
        f"{H},value,count\nm,t,en,0,e1,accuracy,1,1\nm,t,en,0,e2,accuracy,nan,1\n",
        3,
        "value",
        "value is NaN",
    ),
    (
        "infinite statistic",
        "e.csv",
        f"{H},value,count\nm,t,en,0,e1,accuracy,1,inf\n",
        2,
        "count",
        "count is infinite",
    ),
    (
        "empty statistic",
        "e.csv",
        f"{H},value,count\nm,t,en,0,e1,accuracy,1,1\nm,t,en,0,e2,accuracy,,1\n",
        3,
        "value",
        "value is missing",
    ),
    (
        "non-integer seed",
        "e.csv",
        f"{H},score\nm,t,en,0,e1,accuracy,1\nm,t,en,0.5,e2,accuracy,1\n",
        3,
        "seed",
        "seed must be an integer, got '0.5'",
    ),
    (
        "empty example id",
        "e.csv",
        f"{H},score\nm,t,en,0,e1,accuracy,1\nm,t,en,0, ,accuracy,1\n",
        3,
        "example_id",
        "example_id is empty",
    ),
    (
        "empty model",
        "e.csv",
        f"{H},score\n,t,en,0,e1,accuracy,1\n",
        2,
        "model",
        "model is empty",
    ),
    (
        "duplicate example names both lines",
        "e.csv",
        f"{H},score\nm,t,en,0,e1,accuracy,1\nm,t,en,0,e2,accuracy,0\nm,t,en,1,e1,accuracy,1\n"
        "m,t,en,0,e1,accuracy,0\n",
        5,
        "example_id",
        "the same key is on line 2",
    ),
    (
        "unknown metric",
        "e.csv",
        f"{H},score\nm,t,en,0,e1,accuracy,1\nm,t,en,0,e1,accurracy,1\n",
        3,
        "metric",
        "unknown metric 'accurracy'",
    ),
    (
        "label metric without label columns",
        "e.csv",
        f"{H},score\nm,t,en,0,e1,f1_macro,1\n",
        1,
        "metric",
        "needs its label set: add the statistic columns tp[LABEL], pred[LABEL], true[LABEL]",
    ),
    (
        "missing statistic column",
        "e.csv",
        f"{H},tp[A],tp[B],pred[A],pred[B],true[A]\nm,t,en,0,e1,f1_macro,1,0,1,0,1\n",
        1,
        "true[B]",
        "missing: true[B]",
    ),
    (
        "score column for a metric that is not a mean",
        "e.csv",
        f"{H},score\nm,t,en,0,e1,ner_f1,1\n",
        1,
        "correct",
        "needs the statistic columns correct, predicted, gold; missing: correct, predicted, gold",
    ),
    (
        "JSONL truncated record",
        "e.jsonl",
        '{"model": "m", "task": "t", "language": "en", "seed": 0, "example_id": "e1", '
        '"metric": "accuracy", "score": 1}\n'
        '{"model": "m", "task": "t", "language": "en", "seed": 0, "example_id": "e2", "metr',
        2,
        None,
        "truncated JSON record",
    ),
    (
        "JSONL seed as text",
        "e.jsonl",
        '{"model": "m", "task": "t", "language": "en", "seed": 0, "example_id": "e1", '
        '"metric": "accuracy", "score": 1}\n\n'
        '{"model": "m", "task": "t", "language": "en", "seed": "one", "example_id": "e2", '
        '"metric": "accuracy", "score": 1}\n',
        3,
        "seed",
        "seed is not a number: 'one'",
    ),
]


@pytest.mark.parametrize(
    ("case", "name", "content", "line", "field", "words"),
    MALFORMED,
    ids=[c[0] for c in MALFORMED],
)
def test_malformed_examples_are_rejected_with_location_and_store_is_unchanged(
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
    path = tmp_path / name
    path.write_text(content)
    before = store_contents(populated_store)

    with pytest.raises(InputError) as exc:
        api.import_examples(path, store=populated_store)
    assert (exc.value.path, exc.value.line, exc.value.field) == (str(path), line, field)
    assert words in str(exc.value)
    assert store_contents(populated_store) == before

    result = cli("import", "examples", path, "--store", populated_store)
    assert result.exit_code == 2
    location = f"{path}, line {line}" + (f", field '{field}'" if field else "")
    assert location in result.err
    assert "Traceback" not in result.stderr
    assert store_contents(populated_store) == before


def test_a_bad_row_late_in_the_file_writes_nothing(tmp_path: Path, populated_store: Path) -> None:
    frame = examples_frame(models=("a", "b", "c"), n=50)
    frame["score"] = frame["score"].astype(object)
    frame.loc[len(frame) - 1, "score"] = "oops"
    path = tmp_path / "e.csv"
    frame.to_csv(path, index=False)
    before = store_contents(populated_store)
    with pytest.raises(InputError) as exc:
        api.import_examples(path, store=populated_store)
    assert exc.value.line == len(frame) + 1
    assert store_contents(populated_store) == before


@pytest.mark.slow
def test_mean_metric_from_score_column(tmp_path: Path) -> None:
    frame = examples_frame(models=("a", "b"), seeds=(0, 1), languages=("en", "de"), n=15)
    path = tmp_path / "e.csv"
    frame.to_csv(path, index=False)
    store = tmp_path / "s.duckdb"
    result = api.import_examples(path, store=store)
    assert (result.status, result.runs_added, result.rows) == ("imported", 8, len(frame))
    with Store.open(store, read_only=True) as s:
        runs = s.runs.frame()
        assert len(runs) == 8
        assert set(runs["n_examples"]) == {15}
        assert runs["stat_names"].iloc[0] == ("value", "count")
        assert (runs["dataset"] == "xnli").all()
        assert runs["source"].iloc[0] == str(path)
        one = runs[(runs["model"] == "b") & (runs["seed"] == 1) & (runs["language"] == "de")]
        ids, stats = s.stats.of_run(one["run_id"].iloc[0])
        expected = frame[
            (frame["model"] == "b") & (frame["seed"] == 1) & (frame["language"] == "de")
        ]
        assert ids.tolist() == expected["example_id"].tolist()
        np.testing.assert_array_equal(stats[:, 0], expected["score"].to_numpy())
        np.testing.assert_array_equal(stats[:, 1], 1.0)


def test_label_metric_with_labels_from_columns(tmp_path: Path) -> None:
    frame = label_frame(labels=("NEG", "NEU", "POS"))
    path = tmp_path / "e.jsonl"
    frame.to_json(path, orient="records", lines=True)
    store = tmp_path / "s.duckdb"
    api.import_examples(path, store=store)
    with Store.open(store, read_only=True) as s:
        runs = s.runs.frame()
        assert runs["metric_config"].iloc[0] == {"labels": ["NEG", "NEU", "POS"]}
        matrix = s.stats.matrix("sentiment", "sentiment", "de", "f1_macro")
    metric = get_metric("f1_macro", labels=["NEG", "NEU", "POS"])
    cols = list(metric.stat_names())
    for i, model in enumerate(matrix.models):
        sums = frame[frame["model"] == model][cols].to_numpy(dtype=float).sum(axis=0)
        assert matrix.scores()[i] == pytest.approx(float(metric.score(sums)))


@pytest.mark.slow
def test_labels_option_fixes_the_label_set(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    frame = label_frame(labels=("NEG", "POS"))
    path = tmp_path / "e.csv"
    frame.to_csv(path, index=False)
    store = tmp_path / "s.duckdb"
    result = cli("import", "examples", path, "--store", store, "--labels", "POS,NEG")
    assert result.exit_code == 0, result.stderr
    with Store.open(store, read_only=True) as s:
        assert s.runs.frame()["stat_names"].iloc[0][:2] == ("tp[POS]", "tp[NEG]")
    bad = cli(
        "import",
        "examples",
        path,
        "--store",
        tmp_path / "t.duckdb",
        "--labels",
        "POS",
        "--labels",
        "NEG",
        "--labels",
        "NEU",
    )
    assert bad.exit_code == 2
    assert "line 1, field 'tp[NEU]'" in bad.err


def test_dataset_and_config_hash_split_runs(tmp_path: Path) -> None:
    content = (
        f"{H},dataset,config_hash,score\n"
        "m,qa,en,0,e1,accuracy,mlqa,,1\n"
        "m,qa,en,0,e1,accuracy,xquad,,0\n"
        "m,qa,en,0,e1,accuracy,xquad,fewshot,1\n"
        "m,qa,en,0,e1,accuracy,,,1\n"
    )
    path = tmp_path / "e.csv"
    path.write_text(content)
    store = tmp_path / "s.duckdb"
    assert api.import_examples(path, store=store).runs_added == 4
    with Store.open(store, read_only=True) as s:
        runs = s.runs.frame()
    assert sorted(zip(runs["dataset"], runs["config_hash"], strict=True)) == [
        ("mlqa", ""),
        ("qa", ""),
        ("xquad", ""),
        ("xquad", "fewshot"),
    ]


def test_positions_follow_file_order_within_interleaved_runs(tmp_path: Path) -> None:
    frame = examples_frame(models=("a", "b"), n=6).sample(frac=1.0, random_state=3)
    path = tmp_path / "e.csv"
    frame.to_csv(path, index=False)
    store = tmp_path / "s.duckdb"
    api.import_examples(path, store=store)
    with Store.open(store, read_only=True) as s:
        for model in ("a", "b"):
            run_id = s.runs.frame(models=model)["run_id"].iloc[0]
            ids, _ = s.stats.of_run(run_id)
            assert ids.tolist() == frame[frame["model"] == model]["example_id"].tolist()


@pytest.mark.slow
def test_reimport_is_idempotent_and_other_formats_skip_complete_runs(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    frame = examples_frame(models=("a", "b"), n=8)
    csv_path = tmp_path / "e.csv"
    frame.to_csv(csv_path, index=False)
    store = tmp_path / "s.duckdb"
    api.import_examples(csv_path, store=store)
    before = store_contents(store)
    assert api.import_examples(csv_path, store=store).status == "skipped"
    assert store_contents(store) == before
    # the same runs from a Parquet file: runs skipped, nothing new written
    pq_path = tmp_path / "e.parquet"
    frame.to_parquet(pq_path)
    result = api.import_examples(pq_path, store=store)
    assert (result.runs_added, result.runs_skipped) == (0, 2)
    with Store.open(store, read_only=True) as s:
        assert len(s.runs.frame()) == 2
    # a file adding one model adds just that run
    more = pd.concat([frame, examples_frame(models=("c",), n=8)])
    more_path = tmp_path / "more.jsonl"
    more.to_json(more_path, orient="records", lines=True)
    out = cli("import", "examples", more_path, "--store", store)
    assert out.exit_code == 0, out.stderr
    assert "added 1 run(s) (8 examples); 2 run(s) already complete in the store, skipped" in out.out


@pytest.mark.slow
def test_conflicting_run_names_the_first_line_and_writes_nothing(tmp_path: Path) -> None:
    frame = examples_frame(models=("a", "b"), n=8)
    path = tmp_path / "e.csv"
    frame.to_csv(path, index=False)
    store = tmp_path / "s.duckdb"
    api.import_examples(path, store=store)
    before = store_contents(store)
    changed = pd.concat([examples_frame(models=("c",), n=8), frame]).reset_index(drop=True)
    changed.loc[len(changed) - 1, "score"] = 1 - changed.loc[len(changed) - 1, "score"]
    changed_path = tmp_path / "changed.csv"
    changed.to_csv(changed_path, index=False)
    with pytest.raises(InputError) as exc:
        api.import_examples(changed_path, store=store)
    first_b = int(np.flatnonzero(changed["model"] == "b")[0]) + 2
    assert exc.value.line == first_b
    assert "already stored with different statistics" in str(exc.value)
    assert store_contents(store) == before


@pytest.mark.slow
def test_interrupted_import_resumes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    frame = examples_frame(models=("a", "b", "c", "d"), seeds=(0, 1), n=10)
    path = tmp_path / "e.csv"
    frame.to_csv(path, index=False)
    store = tmp_path / "s.duckdb"
    original = RunsClass._insert_batch
    calls = {"n": 0}

    def flaky(self: RunsClass, con, runs):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt  # Ctrl-C while the third batch (runs 4-7) is written
        return original(self, con, runs)

    # batches of 1, 2, 4, ... runs: 3 runs are committed before the interruption
    monkeypatch.setattr(store_runs, "FIRST_BATCH_RUNS", 1)
    monkeypatch.setattr(RunsClass, "_insert_batch", flaky)
    with pytest.raises(KeyboardInterrupt):
        api.import_examples(path, store=store)
    monkeypatch.setattr(RunsClass, "_insert_batch", original)

    with Store.open(store, read_only=True) as s:
        summary = s.summary()
        assert summary.counts["runs"] == 3
        assert summary.counts["examples"] == 30
        assert summary.incomplete_imports[0]["runs_written"] == 3
    result = api.import_examples(path, store=store)
    assert (result.status, result.runs_added, result.runs_skipped) == ("resumed", 5, 3)
    with Store.open(store, read_only=True) as s:
        summary = s.summary()
        assert summary.counts["runs"] == 8 and summary.counts["examples"] == 80
        assert summary.incomplete_imports == []
        imports = s.imports.frame()
        assert len(imports) == 1 and imports["added"].iloc[0] == 8
    assert api.import_examples(path, store=store).status == "skipped"


def test_write_failure_inside_a_run_rolls_back_the_whole_run(tmp_path: Path) -> None:
    frame = examples_frame(models=("a",), n=10)
    path = tmp_path / "e.csv"
    frame.to_csv(path, index=False)
    store_path = tmp_path / "s.duckdb"
    from glotbench.ingest.tidy import import_examples_file

    class FailingConnection:
        """Delegates to DuckDB but fails the INSERT of the runs row."""

        def __init__(self, con):  # type: ignore[no-untyped-def]
            self._con = con

        def execute(self, sql, *args):  # type: ignore[no-untyped-def]
            if sql.startswith("INSERT INTO runs"):
                raise RuntimeError("disk full")
            return self._con.execute(sql, *args)

        def __getattr__(self, name):  # type: ignore[no-untyped-def]
            return getattr(self._con, name)

    with Store.open(store_path) as s:
        real = s._con
        s._con = FailingConnection(real)  # type: ignore[assignment]
        with pytest.raises(RuntimeError, match="disk full"):
            import_examples_file(s, path)
        s._con = real
        assert real.execute("SELECT count(*) FROM example_stats").fetchall() == [(0,)]
        assert real.execute("SELECT count(*) FROM runs").fetchall() == [(0,)]


@pytest.mark.slow
def test_copy_of_imported_file_under_another_name_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "e.csv"
    examples_frame(n=4).to_csv(path, index=False)
    store = tmp_path / "s.duckdb"
    api.import_examples(path, store=store)
    copy = tmp_path / "copy.csv"
    shutil.copyfile(path, copy)
    assert api.import_examples(copy, store=store).status == "skipped"


@pytest.mark.slow
def test_extra_columns_are_reported_as_ignored(tmp_path: Path) -> None:
    frame = examples_frame(n=3).assign(prediction="x", reference="y")
    path = tmp_path / "e.csv"
    frame.to_csv(path, index=False)
    result = api.import_examples(path, store=tmp_path / "s.duckdb")
    assert result.ignored_columns == ["prediction", "reference"]


@pytest.mark.slow
def test_empty_seed_means_a_run_without_seed(tmp_path: Path) -> None:
    path = tmp_path / "e.csv"
    path.write_text(
        f"{H},score\nm,t,en,,e1,accuracy,1\nm,t,en,,e2,accuracy,0\nm,t,en,3,e1,accuracy,1\n"
    )
    store = tmp_path / "s.duckdb"
    assert api.import_examples(path, store=store).runs_added == 2
    with Store.open(store, read_only=True) as s:
        runs = s.runs.frame()
    assert runs["seed"].isna().tolist() == [True, False]
    assert runs["n_examples"].tolist() == [2, 1]
