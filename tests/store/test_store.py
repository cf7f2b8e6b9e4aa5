"""The DuckDB store: opening, schema version, runs, aligned statistics, export/import."""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from glotbench import api
from glotbench.errors import InputError, StoreError
from glotbench.store import SCHEMA_VERSION, RunRecord, Store

from .conftest import SCORES_CSV, examples_frame, label_frame, store_contents


def _record(model: str = "m", seed: int | None = 0, **kw: object) -> RunRecord:
    base: dict[str, object] = dict(
        model=model,
        task="xnli",
        language="en",
        seed=seed,
        metric="accuracy",
        stat_names=("value", "count"),
    )
    base.update(kw)
    return RunRecord(**base)  # type: ignore[arg-type]


def _stats(values: list[float]) -> np.ndarray:
    v = np.asarray(values, dtype=float)
    return np.column_stack([v, np.ones_like(v)])


# -- opening ---------------------------------------------------------------------


def test_new_store_has_schema_version_and_tables(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "dir" / "s.duckdb"
    with Store.open(path) as store:
        assert store.meta()["schema_version"] == str(SCHEMA_VERSION)
        assert store.schema_version == SCHEMA_VERSION
        assert store.summary().counts["runs"] == 0
    with Store.open(path, read_only=True) as store:
        assert store.read_only


def test_newer_schema_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.duckdb"
    Store.open(path).close()
    con = duckdb.connect(str(path))
    con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", [str(SCHEMA_VERSION + 1)])
    con.close()
    for read_only in (False, True):
        with pytest.raises(StoreError, match=f"schema version {SCHEMA_VERSION + 1}.*upgrade"):
            Store.open(path, read_only=read_only)


def test_other_databases_and_files_are_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.duckdb"
    con = duckdb.connect(str(other))
    con.execute("CREATE TABLE t (x INTEGER)")
    con.close()
    with pytest.raises(StoreError, match="not a glotbench store"):
        Store.open(other)
    text = tmp_path / "text.duckdb"
    text.write_text("hello, I am not a database\n" * 100)
    with pytest.raises(StoreError):
        Store.open(text)
    with pytest.raises(StoreError, match="no store at"):
        Store.open(tmp_path / "missing.duckdb", read_only=True)
    with pytest.raises(StoreError, match="directory"):
        Store.open(tmp_path)


def test_read_only_store_refuses_writes(tmp_path: Path) -> None:
    path = tmp_path / "s.duckdb"
    Store.open(path).close()
    with Store.open(path, read_only=True) as store, pytest.raises(StoreError, match="read-only"):
        store.runs.write(_record(), ["a"], _stats([1.0]))


# -- runs ------------------------------------------------------------------------


def test_write_run_round_trip_and_resume(tmp_path: Path) -> None:
    record = _record(model_metadata={"params": 270_000_000}, seconds=2.5, examples_per_second=1.6)
    ids = ["e3", "e1", "e2", "e4"]
    stats = _stats([1, 0, 1, 1])
    with Store.open(tmp_path / "s.duckdb") as store:
        assert not store.runs.has(record)
        assert store.runs.write(record, ids, stats) is True
        assert (
            store.runs.has(record) and store.runs.has(record.key) and store.runs.has(record.run_id)
        )
        assert store.runs.completed_ids() == {record.run_id}
        assert store.runs.write(record, ids, stats) is False  # repeated run: skipped
        got_ids, got_stats = store.stats.of_run(record.run_id)
        assert got_ids.tolist() == ids
        np.testing.assert_array_equal(got_stats, stats)
        row = store.runs.frame().iloc[0]
        assert row["run_id"] == record.run_id
        assert row["n_examples"] == 4
        assert row["model_metadata"] == {"params": 270_000_000}
        assert (row["seconds"], row["examples_per_second"]) == (2.5, 1.6)
        assert row["dataset"] == "xnli" and row["config_hash"] == ""
        assert len(store.stats.examples()) == 4


def test_runs_stats_reads_many_runs_in_their_stored_order(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    written = {}
    with Store.open(tmp_path / "s.duckdb") as store:
        for i, model in enumerate(["b", "a", "c"]):
            ids = [f"e{j}" for j in rng.permutation(5 + i)]  # each run its own order and size
            stats = _stats(rng.integers(0, 2, size=len(ids)).tolist())
            record = _record(model=model, seed=i)
            store.runs.write(record, ids, stats)
            written[record.run_id] = (ids, stats)
        order = list(written)[::-1]
        got = store.stats.of_runs(order)
        assert list(got) == order
        for run_id, (ids, stats) in written.items():
            assert got[run_id][0].tolist() == ids
            np.testing.assert_array_equal(got[run_id][1], stats)
            one_ids, one_stats = store.stats.of_run(run_id)
            assert one_ids.tolist() == got[run_id][0].tolist()
            np.testing.assert_array_equal(one_stats, got[run_id][1])
        assert store.stats.of_runs([]) == {}
        with pytest.raises(StoreError, match="no run with id 'nope'"):
            store.stats.of_runs([order[0], "nope"])


@pytest.mark.parametrize(
    ("ids", "stats", "words"),
    [
        (["a", "b"], np.ones((3, 2)), "(n × k) = (2 × 2)"),
        (["a", "b"], np.ones((2, 3)), "(n × k) = (2 × 2)"),
        ([], np.ones((0, 2)), "at least one example"),
        (["a", "a"], np.ones((2, 2)), "'a' occurs more than once"),
        (["a", " "], np.ones((2, 2)), "must not be empty"),
        (["a", "b"], np.array([[1.0, 1.0], [np.nan, 1.0]]), "'b' are not finite"),
    ],
)
def test_write_run_rejects_bad_input_and_writes_nothing(
    tmp_path: Path, ids: list[str], stats: np.ndarray, words: str
) -> None:
    with Store.open(tmp_path / "s.duckdb") as store:
        with pytest.raises(InputError) as exc:
            store.runs.write(_record(), ids, stats)
        assert words in str(exc.value)
        assert store.summary().counts["runs"] == 0
        assert store.summary().counts["examples"] == 0


def test_runs_filters(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.duckdb") as store:
        for model in ("a", "b"):
            for seed in (0, 1):
                for lang in ("en", "de"):
                    store.runs.write(_record(model, seed, language=lang), ["x"], _stats([1.0]))
        assert len(store.runs.frame()) == 8
        assert len(store.runs.frame(models="a")) == 4
        assert len(store.runs.frame(models=["a"], languages=["de"], seeds=[1])) == 1
        assert len(store.runs.frame(metrics=["Accuracy"], tasks="xnli", datasets=["xnli"])) == 8
        assert store.runs.frame(models=["zzz"]).empty
        frame = store.stats.examples(models="b", languages="en")
        assert len(frame) == 2 and set(frame["model"]) == {"b"}
        np.testing.assert_array_equal(frame["stats"].iloc[0], [1.0, 1.0])


def test_stats_matrix_aligns_examples_across_models(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.duckdb") as store:
        store.runs.write(_record("a"), ["e1", "e2", "e3"], _stats([1, 0, 1]))
        store.runs.write(_record("b"), ["e3", "e1", "e2"], _stats([0, 1, 1]))  # other order
        store.runs.write(_record("b", seed=1), ["e2", "e3", "e1"], _stats([0, 0, 0]))
        matrix = store.stats.matrix("xnli", "xnli", "en", "accuracy", models=["b", "a"])
        assert matrix.models == ["b", "b", "a"] and matrix.seeds == [0, 1, 0]
        assert matrix.stats.shape == (3, 3, 2)
        order = matrix.example_ids.tolist()
        expected = {
            "a": {"e1": 1, "e2": 0, "e3": 1},
            "b0": {"e1": 1, "e2": 1, "e3": 0},
            "b1": {"e1": 0, "e2": 0, "e3": 0},
        }
        for row, tag in zip(matrix.stats, ["b0", "b1", "a"], strict=True):
            assert row[:, 0].tolist() == [expected[tag][e] for e in order]
        np.testing.assert_allclose(matrix.scores(), [2 / 3, 0, 2 / 3])
        assert matrix.to_frame()["model"].tolist() == ["b", "b", "a"]
        only_seed0 = store.stats.matrix("xnli", "xnli", "en", "accuracy", seeds=[0])
        assert only_seed0.models == ["a", "b"]


def test_stats_matrix_streams_shuffled_runs_in_small_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The streamed read (batches smaller than a run) places every value by its example id."""
    import glotbench.store.stats as stats_module

    monkeypatch.setattr(stats_module, "STREAM_ROWS", 7)
    rng = np.random.default_rng(3)
    ids = [f"x{i:02d}" for i in range(23)]
    truth = {}
    with Store.open(tmp_path / "s.duckdb") as store:
        for m in range(6):
            order = rng.permutation(len(ids))
            values = rng.integers(0, 5, len(ids)).astype(float)  # by example id
            truth[f"m{m}"] = values
            store.runs.write(
                _record(f"m{m}"), [ids[i] for i in order], _stats(values[order].tolist())
            )
        matrix = store.stats.matrix("xnli", "xnli", "en", "accuracy")
    position = [ids.index(e) for e in matrix.example_ids]
    for row, model in zip(matrix.stats, matrix.models, strict=True):
        np.testing.assert_array_equal(row[:, 0], truth[model][position])
        np.testing.assert_array_equal(row[:, 1], np.ones(len(ids)))


def test_stats_matrix_errors_for_fewer_or_more_examples(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.duckdb") as store:
        store.runs.write(_record("a"), ["e1", "e2", "e3"], _stats([1, 0, 1]))
        store.runs.write(_record("b"), ["e1", "e2"], _stats([1, 0]))
        with pytest.raises(StoreError, match="model 'b'.*lacks 1.*'e3'"):
            store.stats.matrix("xnli", "xnli", "en", "accuracy")
        with pytest.raises(StoreError, match="model 'a'.*has 1 it lacks, e.g. \\['e3'\\]"):
            store.stats.matrix("xnli", "xnli", "en", "accuracy", models=["b", "a"])


def test_stats_matrix_errors(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.duckdb") as store:
        store.runs.write(_record("a"), ["e1", "e2", "e3"], _stats([1, 0, 1]))
        store.runs.write(_record("b"), ["e1", "e2", "e9"], _stats([1, 0, 1]))
        with pytest.raises(StoreError, match="cover different examples.*lacks 1.*'e3'"):
            store.stats.matrix("xnli", "xnli", "en", "accuracy")
        with pytest.raises(StoreError, match="no runs for"):
            store.stats.matrix("xnli", "xnli", "fr", "accuracy")
        with pytest.raises(StoreError, match="no runs of model"):
            store.stats.matrix("xnli", "xnli", "en", "accuracy", models=["a", "zzz"])


@pytest.mark.slow
def test_stats_matrix_refuses_different_label_sets(tmp_path: Path) -> None:
    store_path = tmp_path / "s.duckdb"
    first = tmp_path / "a.csv"
    label_frame(models=("a",), labels=("NEG", "POS")).to_csv(first, index=False)
    second = tmp_path / "b.csv"
    label_frame(models=("b",), labels=("NEG", "NEU", "POS")).to_csv(second, index=False)
    api.import_examples(first, store=store_path)
    api.import_examples(second, store=store_path)
    with (
        Store.open(store_path, read_only=True) as store,
        pytest.raises(StoreError, match="different statistics.*labels=LABELS"),
    ):
        store.stats.matrix("sentiment", "sentiment", "de", "f1_macro")


@pytest.mark.slow
def test_summary_counts_and_table(populated_store: Path) -> None:
    with Store.open(populated_store, read_only=True) as store:
        summary = store.summary()
    assert summary.counts["runs"] == 1
    assert summary.counts["examples"] == 5
    assert summary.counts["scores"] == 4
    assert summary.counts["imports"] == 2
    table = summary.to_frame()
    assert list(table.columns) == [
        "model",
        "task",
        "language",
        "runs",
        "seeds",
        "examples",
        "scores",
        "metrics",
    ]
    m1 = table[table["model"] == "m1"].iloc[0]
    assert (m1["runs"], m1["examples"], m1["scores"]) == (1, 5, 0)
    payload = summary.to_dict()
    assert payload["counts"] == summary.counts
    assert len(payload["by_model_task_language"]) == len(table)


# -- export / import ---------------------------------------------------------------


def _rich_store(tmp_path: Path) -> Path:
    path = tmp_path / "rich.duckdb"
    scores = tmp_path / "scores.csv"
    scores.write_text(SCORES_CSV)
    api.import_scores(scores, store=path)
    ex = tmp_path / "ex.csv"
    examples_frame(models=("a", "b"), seeds=(0, 1), n=7).to_csv(ex, index=False)
    api.import_examples(ex, store=path)
    lab = tmp_path / "lab.jsonl"
    label_frame().to_json(lab, orient="records", lines=True)
    api.import_examples(lab, store=path)
    with Store.open(path) as store:
        store.runs.write(
            _record("z", seed=None, task="other", model_metadata={"k": [1, 2]}, seconds=1.0),
            ["p", "q"],
            _stats([0.25, 0.75]),
        )
    return path


@pytest.mark.slow
@pytest.mark.parametrize("form", ["directory", "stem"])
def test_parquet_snapshot_round_trip(tmp_path: Path, form: str) -> None:
    source = _rich_store(tmp_path)
    out = tmp_path / ("snapshot" if form == "directory" else "snap.parquet")
    files = api.export_store(out, store=source).files
    assert len(files) == 5 and all(Path(f).exists() for f in files)
    target = tmp_path / "copy.duckdb"
    result = api.import_parquet(out, store=target)
    assert (result.status, result.runs_added, result.scores_added) == ("imported", 7, 4)
    a, b = store_contents(source), store_contents(target)
    assert a is not None and b is not None
    for table in ("runs", "example_stats", "scores"):
        assert a[table] == b[table], table
    assert set(a["imports"]) < set(b["imports"])  # plus the snapshot import itself
    with Store.open(source, read_only=True) as s1, Store.open(target, read_only=True) as s2:
        pd.testing.assert_frame_equal(s1.runs.frame(), s2.runs.frame())
        pd.testing.assert_frame_equal(s1.scores.frame(), s2.scores.frame())
        m1 = s1.stats.matrix("xnli", "xnli", "en", "accuracy")
        m2 = s2.stats.matrix("xnli", "xnli", "en", "accuracy")
        np.testing.assert_array_equal(m1.stats, m2.stats)
    # importing again: a no-op; into the source: everything already there
    assert api.import_parquet(out, store=target).status == "skipped"
    before = store_contents(source)
    back = api.import_parquet(out, store=source)
    assert (back.runs_added, back.runs_skipped, back.scores_added, back.scores_skipped) == (
        0,
        7,
        0,
        4,
    )
    after = store_contents(source)
    assert after is not None and before is not None
    for table in ("runs", "example_stats", "scores"):
        assert after[table] == before[table]


@pytest.mark.slow
def test_snapshot_validation(tmp_path: Path) -> None:
    source = _rich_store(tmp_path)
    snap = tmp_path / "snap"
    api.export_store(snap, store=source)
    target = tmp_path / "t.duckdb"

    runs = pd.read_parquet(snap / "runs.parquet")
    runs.loc[1, "model"] = "edited"
    runs.to_parquet(snap / "runs.parquet")
    with pytest.raises(InputError) as exc:
        api.import_parquet(snap, store=target)
    assert "row 2, field 'run_id'" in str(exc.value) and "does not match" in str(exc.value)
    assert not target.exists()

    api.export_store(snap, store=source)
    meta = pd.read_parquet(snap / "meta.parquet")
    meta.loc[meta["key"] == "schema_version", "value"] = str(SCHEMA_VERSION + 5)
    meta.to_parquet(snap / "meta.parquet")
    with pytest.raises(StoreError, match="newer"):
        api.import_parquet(snap, store=target)

    api.export_store(snap, store=source)
    (snap / "examples.parquet").unlink()
    with pytest.raises(InputError, match="runs and their example statistics travel together"):
        api.import_parquet(snap, store=target)

    api.export_store(snap, store=source)
    ex = pd.read_parquet(snap / "examples.parquet")
    ex.iloc[:-1].to_parquet(snap / "examples.parquet")
    with pytest.raises(InputError, match=r"n_examples is \d+ but examples.parquet holds"):
        api.import_parquet(snap, store=target)
    assert not target.exists()


@pytest.mark.slow
def test_csv_export_reimports_to_identical_runs_and_scores(tmp_path: Path) -> None:
    source = _rich_store(tmp_path)
    files = api.export_store(tmp_path / "dump.csv", store=source).files
    assert [Path(f).name for f in files] == [
        "dump_runs.csv",
        "dump_examples.csv",
        "dump_scores.csv",
        "dump_imports.csv",
        "dump_meta.csv",
    ]
    wide = pd.read_csv(tmp_path / "dump_examples.csv")
    assert {"value", "count", "tp[NEG]", "true[POS]", "example_id"} <= set(wide.columns)
    target = tmp_path / "t.duckdb"
    # label runs and mean runs are in one wide file: import each metric's rows
    api.import_examples(tmp_path / "dump_examples.csv", store=target)
    api.import_scores(tmp_path / "dump_scores.csv", store=target)
    with Store.open(source, read_only=True) as s1, Store.open(target, read_only=True) as s2:
        r1, r2 = s1.runs.frame(), s2.runs.frame()
        assert sorted(r1["stats_sha256"]) == sorted(r2["stats_sha256"])
        assert sorted(r1["run_id"]) == sorted(r2["run_id"])
        cols = ["model", "task", "language", "dataset", "metric", "score", "seed", "stderr"]
        pd.testing.assert_frame_equal(s1.scores.frame()[cols], s2.scores.frame()[cols])
        assert s2.scores.frame()["metadata"].tolist() == s1.scores.frame()["metadata"].tolist()


@pytest.mark.slow
def test_single_table_exports(tmp_path: Path) -> None:
    source = _rich_store(tmp_path)
    out = tmp_path / "scores.csv.gz"
    assert api.export_store(out, store=source, table="scores").files == [str(out)]
    assert len(pd.read_csv(out)) == 4
    runs = tmp_path / "runs.parquet"
    api.export_store(runs, store=source, table="runs")
    assert len(pd.read_parquet(runs)) == 7
    with pytest.raises(InputError, match="unknown table"):
        api.export_store(tmp_path / "x.csv", store=source, table="nope")


def test_store_open_twice_in_another_mode_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "s.duckdb"
    with Store.open(path), pytest.raises(StoreError, match="already open in this process"):
        Store.open(path, read_only=True)


HOSTILE_MODELS = ["=cmd|' /C calc'!A0", "+SUM(1,2)", "-2+3", "@SUM(A1)", "'quoted", "plain"]


def _hostile_store(tmp_path: Path) -> Path:
    rows = ["model,task,language,metric,score"]
    rows += [f'"{m.replace(chr(34), 2 * chr(34))}",xnli,en,accuracy,0.5' for m in HOSTILE_MODELS]
    scores = tmp_path / "hostile.csv"
    scores.write_text("\n".join(rows) + "\n", encoding="utf-8")
    path = tmp_path / "hostile.duckdb"
    api.import_scores(scores, store=path)
    return path


def _csv_cells(path: Path, column: str) -> list[str]:
    import csv

    with path.open(newline="", encoding="utf-8") as fh:
        return [row[column] for row in csv.DictReader(fh)]


@pytest.mark.slow
def test_csv_export_neutralises_spreadsheet_formulas(tmp_path: Path) -> None:
    """OWASP CSV injection: no text cell may start with =, +, -, @, tab or CR."""
    store = _hostile_store(tmp_path)
    out = tmp_path / "scores.csv"
    api.export_store(out, store=store, table="scores")
    cells = _csv_cells(out, "model")
    assert sorted(cells) == sorted(m if m == "plain" else "'" + m for m in HOSTILE_MODELS)
    assert not any(c[0] in "=+-@\t\r" for c in cells)
    # numbers stay numbers
    assert set(_csv_cells(out, "score")) == {"0.5"}
    # the raw export is explicit and writes the names as stored
    raw = tmp_path / "raw.csv"
    api.export_store(raw, store=store, table="scores", keep_formulas=True)
    assert sorted(_csv_cells(raw, "model")) == sorted(HOSTILE_MODELS)
    # Parquet keeps the values as stored
    parquet = tmp_path / "scores.parquet"
    api.export_store(parquet, store=store, table="scores")
    assert sorted(pd.read_parquet(parquet)["model"]) == sorted(HOSTILE_MODELS)


@pytest.mark.slow
def test_cli_export_keep_formulas_flag(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from glotbench.cli import app

    store = _hostile_store(tmp_path)
    runner = CliRunner()
    safe, raw = tmp_path / "safe.csv", tmp_path / "raw.csv"
    args = ["export", "--store", str(store), "--table", "scores"]
    assert runner.invoke(app, [*args, "--out", str(safe)]).exit_code == 0
    assert runner.invoke(app, [*args, "--out", str(raw), "--keep-formulas"]).exit_code == 0
    assert "'=cmd|' /C calc'!A0" in _csv_cells(safe, "model")
    assert "=cmd|' /C calc'!A0" in _csv_cells(raw, "model")
