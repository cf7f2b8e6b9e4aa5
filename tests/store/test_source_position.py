"""Each example's source position: stored, validated, migrated, exported and imported."""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from glotbench import api
from glotbench.errors import InputError
from glotbench.store import SCHEMA_VERSION, RunRecord, Store

from .conftest import examples_frame


def _record(model: str = "m", seed: int | None = 0, **kw: object) -> RunRecord:
    base: dict[str, object] = dict(
        model=model, task="xnli", language="en", seed=seed, metric="accuracy",
        stat_names=("value", "count"),
    )  # fmt: skip
    base.update(kw)
    return RunRecord(**base)  # type: ignore[arg-type]


def _stats(values: list[float]) -> np.ndarray:
    v = np.asarray(values, dtype=float)
    return np.column_stack([v, np.ones_like(v)])


def test_schema_version_2_has_the_column(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.duckdb") as store:
        assert SCHEMA_VERSION == 2 and store.meta()["schema_version"] == "2"
        cols = store.connection.execute(
            "SELECT column_name, data_type, is_nullable FROM information_schema.columns "
            "WHERE table_name = 'example_stats' ORDER BY ordinal_position"
        ).fetchall()
    assert cols[-1] == ("source_position", "BIGINT", "YES")


def test_write_and_read_source_positions(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.duckdb") as store:
        # stored (evaluation) order c, a, b; source order a=0, b=1, c=7
        assert store.runs.write(_record("x"), ["c", "a", "b"], _stats([1, 0, 1]),
                               source_positions=[7, 0, 1])  # fmt: skip
        assert store.runs.write(_record("y"), ["a", "b", "c"], _stats([1, 1, 1]))
        assert store.runs.write_many(
            [(_record("z"), ["b", "c", "a"], _stats([0, 0, 0]))], source_positions=[[1, 7, 0]]
        ) == 1  # fmt: skip
        frame = store.stats.examples(models="x")
        assert frame["position"].tolist() == [0, 1, 2]
        assert frame["source_position"].tolist() == [7, 0, 1]
        assert store.stats.examples(models="y")["source_position"].isna().all()
        runs = store.runs.frame()
        ids = {m: r for m, r in zip(runs["model"], runs["run_id"], strict=True)}
        got = store.stats.source_positions([ids["x"], ids["y"], ids["z"]], ["a", "b", "c", "zz"])
    np.testing.assert_array_equal(got[0], [0, 1, 7, np.nan])
    assert np.isnan(got[1]).all()
    np.testing.assert_array_equal(got[2], [0, 1, 7, np.nan])


@pytest.mark.parametrize(
    ("positions", "message"),
    [
        ([0, 1], "2 source positions for 3 examples"),
        ([0, -1, 2], "must be an integer ≥ 0"),
        ([0, 1.5, 2], "must be an integer ≥ 0"),
        ([0, None, 2], "must be an integer ≥ 0"),
        ([4, 4, 2], "source position 4 is given to more than one example"),
    ],
)
def test_bad_source_positions_are_refused(
    tmp_path: Path, positions: list[object], message: str
) -> None:
    with Store.open(tmp_path / "s.duckdb") as store:
        with pytest.raises(InputError, match=message):
            store.runs.write(_record(), ["a", "b", "c"], _stats([1, 0, 1]),
                            source_positions=positions)  # fmt: skip
        assert store.runs.frame().empty


def _as_version_1(path: Path) -> None:
    """Turn a store into the layout glotbench wrote at schema version 1 (no source_position)."""
    con = duckdb.connect(str(path))
    con.execute("ALTER TABLE example_stats DROP COLUMN source_position")
    con.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    cols = [r[0] for r in con.execute("DESCRIBE example_stats").fetchall()]
    con.close()
    assert cols == ["run_id", "position", "example_id", "stats"]  # the version-1 table


def test_a_version_1_store_reads_and_migrates(tmp_path: Path) -> None:
    path = tmp_path / "old.duckdb"
    with Store.open(path) as store:
        store.runs.write(_record("old"), ["a", "b"], _stats([1, 0]))
    _as_version_1(path)

    with Store.open(path, read_only=True) as store:  # read-only: read as it is
        assert store.schema_version == 1 and store.meta()["schema_version"] == "1"
        run_id = store.runs.frame()["run_id"].item()
        assert np.isnan(store.stats.source_positions([run_id], ["a", "b"])).all()
        assert store.stats.examples()["source_position"].isna().all()
        ids, stats = store.stats.of_run(run_id)
        assert ids.tolist() == ["a", "b"] and stats[:, 0].tolist() == [1, 0]
        files = store.exports.write(tmp_path / "old-export.csv", table="examples")
    assert "source_position" in pd.read_csv(files[0]).columns

    with Store.open(path) as store:  # for writing: migrated in one transaction
        assert store.schema_version == SCHEMA_VERSION
        assert store.meta()["schema_version"] == str(SCHEMA_VERSION)
        store.runs.write(_record("new"), ["a", "b"], _stats([0, 0]), source_positions=[3, 2])
    with Store.open(path, read_only=True) as store:
        runs = store.runs.frame()
        got = store.stats.source_positions(runs["run_id"].tolist(), ["a", "b"])
        assert runs["model"].tolist() == ["new", "old"]
        assert store.stats.of_run(runs["run_id"].iloc[1])[1][:, 0].tolist() == [1, 0]
    np.testing.assert_array_equal(got[0], [3, 2])
    assert np.isnan(got[1]).all()


def _positions_by_example(store: Store, model: str) -> dict[str, int | None]:
    frame = store.stats.examples(models=model)
    return {
        e: (None if pd.isna(p) else int(p))
        for e, p in zip(frame["example_id"], frame["source_position"], strict=True)
    }


@pytest.mark.slow
def test_examples_import_reads_source_position(tmp_path: Path) -> None:
    frame = examples_frame(models=("a", "b"), n=6)
    frame["source_position"] = [10 + (5 - i) for i in range(6)] * 2
    frame.loc[frame["model"] == "b", "source_position"] = None  # a run without positions
    path = tmp_path / "ex.csv"
    frame.to_csv(path, index=False)
    store = tmp_path / "s.duckdb"
    result = api.import_examples(path, store=store)
    assert result.runs_added == 2 and "source_position" not in result.ignored_columns
    with Store.open(store, read_only=True) as handle:
        assert _positions_by_example(handle, "a") == {f"en-{i}": 15 - i for i in range(6)}
        assert set(_positions_by_example(handle, "b").values()) == {None}
        exported = handle.exports.write(tmp_path / "back.csv", table="examples")[0]
    # the CSV export carries the column, and importing it restores the positions
    again = tmp_path / "again.duckdb"
    api.import_examples(exported, store=again)
    with Store.open(again, read_only=True) as handle:
        assert _positions_by_example(handle, "a") == {f"en-{i}": 15 - i for i in range(6)}


def test_examples_import_accepts_position_alias_jsonl(tmp_path: Path) -> None:
    frame = examples_frame(models=("a",), n=4)
    frame["position"] = [3, 1, 0, 2]
    path = tmp_path / "ex.jsonl"
    frame.to_json(path, orient="records", lines=True)
    store = tmp_path / "s.duckdb"
    api.import_examples(path, store=store)
    with Store.open(store, read_only=True) as handle:
        assert _positions_by_example(handle, "a") == {"en-0": 3, "en-1": 1, "en-2": 0, "en-3": 2}


@pytest.mark.parametrize(
    ("edit", "line", "message"),
    [
        (lambda f: f.assign(source_position=[0, 1, None, 3]), 4, "empty here but given"),
        (lambda f: f.assign(source_position=[0, 1, 1, 3]), 4, "source_position 1 occurs twice"),
        (lambda f: f.assign(source_position=[0, -2, 1, 3]), 3, "at least 0"),
        (lambda f: f.assign(source_position=[0, 1.5, 1, 3]), 3, "must be an integer"),
        (lambda f: f.assign(source_position=[0, 1, 2, 3], position=[0, 1, 2, 3]), 1, "keep one"),
    ],
)
def test_examples_import_source_position_errors(
    tmp_path: Path, edit: object, line: int, message: str
) -> None:
    frame = edit(examples_frame(models=("a",), n=4))  # type: ignore[operator]
    path = tmp_path / "ex.csv"
    frame.to_csv(path, index=False)
    store = tmp_path / "s.duckdb"
    with pytest.raises(InputError, match=message) as info:
        api.import_examples(path, store=store)
    assert info.value.line == line and "position" in str(info.value.field)


@pytest.mark.slow
def test_parquet_snapshot_keeps_source_positions_and_reads_old_snapshots(tmp_path: Path) -> None:
    src = tmp_path / "src.duckdb"
    with Store.open(src) as store:
        store.runs.write(
            _record("x"), ["c", "a", "b"], _stats([1, 0, 1]), source_positions=[7, 0, 1]
        )
        store.exports.write(tmp_path / "snap")
    dst = tmp_path / "dst.duckdb"
    api.import_parquet(tmp_path / "snap", store=dst)
    with Store.open(dst, read_only=True) as store:
        assert _positions_by_example(store, "x") == {"c": 7, "a": 0, "b": 1}
    # a snapshot written before the column existed imports with unknown positions
    examples = pd.read_parquet(tmp_path / "snap" / "examples.parquet")
    examples.drop(columns="source_position").to_parquet(tmp_path / "snap" / "examples.parquet")
    old = tmp_path / "old.duckdb"
    api.import_parquet(tmp_path / "snap", store=old)
    with Store.open(old, read_only=True) as store:
        assert set(_positions_by_example(store, "x").values()) == {None}
    # a damaged snapshot (duplicate positions in a run) is refused before anything is written
    examples["source_position"] = [1, 1, 2]
    examples.to_parquet(tmp_path / "snap" / "examples.parquet")
    with pytest.raises(InputError, match="source positions are not unique"):
        api.import_parquet(tmp_path / "snap", store=tmp_path / "bad.duckdb")
