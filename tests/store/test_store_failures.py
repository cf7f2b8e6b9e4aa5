"""The store's failures table, failure resolution and atomic replacement of runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pytest

from glotbench.errors import InputError
from glotbench.store import SCHEMA_VERSION, RunRecord, Store
from glotbench.store.failures import FailureList
from glotbench.store.runs import Runs

KEY: dict[str, Any] = dict(
    model="m", dataset="xnli", task="xnli", language="en", seed=3, config_hash="abc"
)


def _record(model: str = "m", seed: int | None = 3, **kw: object) -> RunRecord:
    base: dict[str, object] = dict(
        model=model,
        dataset="xnli",
        task="xnli",
        language="en",
        seed=seed,
        config_hash="abc",
        metric="accuracy",
        stat_names=("value", "count"),
    )
    base.update(kw)
    return RunRecord(**base)  # type: ignore[arg-type]


def _stats(values: list[float]) -> np.ndarray:
    v = np.asarray(values, dtype=float)
    return np.column_stack([v, np.ones_like(v)])


def _fail(store: Store, **kw: Any) -> str:
    values = {
        **KEY,
        "iteration": 0,
        "error_type": "ModelError",
        "message": "model 'm' raised on item 'e2': RuntimeError: boom",
        "traceback": "Traceback (most recent call last):\n  ...\nRuntimeError: boom\n",
        "source": "test",
    }
    values.update(kw)
    return store.failures.record(**values)


def _contents(store: Store) -> dict[str, list[Any]]:
    con = store.connection
    return {
        t: sorted(map(repr, con.execute(f"SELECT * FROM {t}").fetchall()))
        for t in ("runs", "example_stats")
    }


def test_record_and_list_failures(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.duckdb") as store:
        first = _fail(store)
        second = _fail(store, model="other", seed=None, iteration=None)
        frame = store.failures.frame()
        assert frame["failure_id"].tolist() == [first, second]
        assert list(frame.columns) == [
            "failure_id",
            "model",
            "dataset",
            "task",
            "language",
            "seed",
            "config_hash",
            "iteration",
            "error_type",
            "message",
            "traceback",
            "source",
            "created_at",
            "resolved_at",
        ]
        row = frame.iloc[0]
        assert row["seed"] == 3 and row["iteration"] == 0 and "'e2'" in row["message"]
        assert row["traceback"].endswith("RuntimeError: boom\n")
        assert frame["resolved_at"].isna().all()
        assert store.failures.frame(models="other")["failure_id"].tolist() == [second]
        assert store.failures.frame(seeds=[3], languages="en")["failure_id"].tolist() == [first]
        assert store.failures.frame(datasets="nope").empty
        assert store.summary().counts["failures"] == 2
        payload = FailureList(str(store.path), False, frame).to_dict()
        json.dumps(payload, allow_nan=False)
        assert payload["count"] == payload["open"] == 2
        assert payload["failures"][1]["seed"] is None


def test_storing_the_job_resolves_its_failures_in_the_same_transaction(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.duckdb") as store:
        mine = _fail(store)
        again = _fail(store)  # a second failed attempt of the same job
        other_seed = _fail(store, seed=4)
        other_config = _fail(store, config_hash="def")
        assert store.runs.write(_record(), ["e1", "e2"], _stats([1, 0]))
        open_ids = set(store.failures.frame()["failure_id"])
        assert open_ids == {other_seed, other_config}
        everything = store.failures.frame(include_resolved=True).set_index("failure_id")
        assert everything.loc[[mine, again], "resolved_at"].notna().all()
        assert store.summary().counts["failures"] == 2
        # a skipped (already stored) run resolves nothing
        later = _fail(store)
        assert store.runs.write(_record(), ["e1", "e2"], _stats([1, 0])) is False
        assert later in set(store.failures.frame()["failure_id"])
        # writing the job's runs together resolves it
        assert (
            store.runs.write_many([(_record(metric="f1_macro"), ["e1", "e2"], _stats([1, 1]))]) == 1
        )
        assert later not in set(store.failures.frame()["failure_id"])


def test_failed_write_keeps_the_failure_open(tmp_path: Path, monkeypatch) -> None:
    with Store.open(tmp_path / "s.duckdb") as store:
        fid = _fail(store)

        def broken(self: Store, con: Any, runs: Any) -> None:
            raise RuntimeError("disk on fire")

        monkeypatch.setattr(Runs, "_insert_batch", broken)
        with pytest.raises(RuntimeError, match="disk on fire"):
            store.runs.write(_record(), ["e1"], _stats([1]))
        assert store.failures.frame()["failure_id"].tolist() == [fid]
        assert store.runs.frame().empty


def test_resolve_failures_by_hand(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.duckdb") as store:
        a = _fail(store)
        b = _fail(store, model="dropped")
        assert store.failures.resolve(models="dropped") == 1
        assert store.failures.resolve(models="dropped") == 0
        assert store.failures.frame()["failure_id"].tolist() == [a]
        assert len(store.failures.frame(include_resolved=True)) == 2
        assert store.failures.resolve(failure_ids=[a, b]) == 1
        assert store.failures.frame().empty


def test_replace_is_one_transaction(tmp_path: Path, monkeypatch) -> None:
    with Store.open(tmp_path / "s.duckdb") as store:
        assert store.runs.write(_record(), ["e1", "e2"], _stats([1, 0]))
        assert store.runs.write(_record(metric="f1_macro"), ["e1", "e2"], _stats([1, 1]))
        before = _contents(store)
        old_digests = set(store.runs.frame()["stats_sha256"])

        calls: list[str] = []

        def crash_after_delete(self: Store, con: Any, runs: Any) -> None:
            calls.append([run.run_id for run in runs])
            # the old rows are gone inside the transaction when the (batch) insert starts
            for run in runs:
                assert not con.execute(
                    "SELECT 1 FROM runs WHERE run_id = ?", [run.run_id]
                ).fetchall()
            raise RuntimeError("killed between delete and insert")

        with monkeypatch.context() as patch:
            patch.setattr(Runs, "_insert_batch", crash_after_delete)
            with pytest.raises(RuntimeError, match="between delete and insert"):
                store.runs.write(_record(), ["e1", "e2"], _stats([0, 0]), replace=True)
            with pytest.raises(RuntimeError, match="between delete and insert"):
                store.runs.write_many(
                    [
                        (_record(), ["e1", "e2"], _stats([0, 0])),
                        (_record(metric="f1_macro"), ["e1", "e2"], _stats([0, 1])),
                    ],
                    replace=True,
                )
        assert [len(c) for c in calls] == [1, 2]  # write_run, then one batch of two runs
        assert _contents(store) == before

        # both new runs are inserted, then the process fails before the commit:
        # both stay old
        original = Runs._insert_batch

        def crash_on_second(self: Store, con: Any, runs: Any) -> None:
            original(self, con, runs)
            assert con.execute("SELECT count(*) FROM example_stats").fetchall() == [(4,)]
            raise RuntimeError("second run failed")

        with monkeypatch.context() as patch:
            patch.setattr(Runs, "_insert_batch", crash_on_second)
            with pytest.raises(RuntimeError, match="second run failed"):
                store.runs.write_many(
                    [
                        (_record(), ["e1", "e2"], _stats([0, 0])),
                        (_record(metric="f1_macro"), ["e1", "e2"], _stats([0, 1])),
                    ],
                    replace=True,
                )
        assert _contents(store) == before

        # validation of every run happens before anything is deleted
        with pytest.raises(InputError, match="not finite"):
            store.runs.write_many(
                [
                    (_record(), ["e1", "e2"], _stats([0, 0])),
                    (_record(metric="f1_macro"), ["e1", "e2"], _stats([0, np.nan])),
                ],
                replace=True,
            )
        assert _contents(store) == before

        # and without a failure the runs are replaced
        assert (
            store.runs.write_many(
                [
                    (_record(), ["e1", "e2", "e3"], _stats([0, 0, 1])),
                    (_record(metric="f1_macro"), ["e1", "e2"], _stats([0, 1])),
                ],
                replace=True,
            )
            == 2
        )
        runs = store.runs.frame()
        assert len(runs) == 2 and not set(runs["stats_sha256"]) & old_digests
        ids, stats = store.stats.of_run(_record().run_id)
        assert ids.tolist() == ["e1", "e2", "e3"] and stats[:, 0].tolist() == [0, 0, 1]
        assert store.connection.execute("SELECT count(*) FROM example_stats").fetchall() == [(5,)]


def test_write_runs_rejects_a_repeated_run(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.duckdb") as store:
        with pytest.raises(InputError, match="more than once"):
            store.runs.write_many(
                [(_record(), ["e1"], _stats([1])), (_record(), ["e1"], _stats([0]))]
            )
        assert store.runs.frame().empty
        assert store.runs.write_many([]) == 0


def _old_store(path: Path) -> None:
    """A store as glotbench wrote it before the failures table existed."""
    with Store.open(path) as store:
        store.runs.write(_record(), ["e1"], _stats([1]))
    con = duckdb.connect(str(path))
    con.execute("DROP TABLE failures")
    con.close()


def test_an_older_store_without_the_failures_table_opens(tmp_path: Path) -> None:
    path = tmp_path / "old.duckdb"
    _old_store(path)
    with Store.open(path, read_only=True) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert store.failures.frame().empty
        assert list(store.failures.frame(include_resolved=True).columns)[0] == "failure_id"
        assert store.summary().counts["failures"] == 0
        assert len(store.runs.frame()) == 1
    # opened for writing, it gains the table (the schema version stays: the change is additive)
    with Store.open(path) as store:
        assert store.meta()["schema_version"] == str(SCHEMA_VERSION)
        fid = _fail(store)
        assert store.failures.frame()["failure_id"].tolist() == [fid]
        assert store.runs.write(_record(metric="f1_macro"), ["e1"], _stats([1]))
        assert store.failures.frame().empty
    with Store.open(path, read_only=True) as store:
        assert (
            len(store.failures.frame(include_resolved=True)) == 1 and len(store.runs.frame()) == 2
        )
