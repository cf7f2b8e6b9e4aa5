"""The store is composed, not built from mixins (docs/architecture.md: the store, the way in)."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import numpy as np
import pytest

from glotbench.errors import StoreError
from glotbench.store import RunRecord, Store
from glotbench.store.sql import Collaborator

COLLABORATORS = (
    "runs",
    "stats",
    "scores",
    "imports",
    "failures",
    "exports",
    "attributes",
    "outputs",
)


def _record() -> RunRecord:
    return RunRecord(
        model="m",
        dataset="d",
        task="t",
        language="de",
        seed=0,
        metric="accuracy",
        stat_names=("value", "count"),
        n_examples=3,
    )


def test_store_has_no_base_but_object_and_names_its_collaborators(tmp_path: Path) -> None:
    assert Store.__mro__ == (Store, object)
    with Store.open(tmp_path / "s.duckdb") as store:
        for name in COLLABORATORS:
            part = getattr(store, name)
            assert isinstance(part, Collaborator)
            assert part._store is store and part.path == store.path
    # the store itself keeps the file, the locks, transactions and meta; no importer
    public = {n for n in vars(Store) if not n.startswith("_")}
    assert public == {
        "open",
        "close",
        "release",
        "held",
        "writing",
        "transaction",
        "connection",
        "meta",
        "set_meta",
        "suites",
        "summary",
    }
    assert not hasattr(Store, "import_parquet")


def test_collaborators_write_through_the_store(tmp_path: Path) -> None:
    ids = ["a", "b", "c"]
    stats = np.array([[1.0, 1.0], [0.0, 1.0], [1.0, 1.0]])
    with Store.open(tmp_path / "s.duckdb") as store:
        assert store.runs.write(_record(), ids, stats)
        run_id = store.runs.frame()["run_id"].iloc[0]
        got_ids, got = store.stats.of_run(run_id)
        assert list(got_ids) == ids and np.array_equal(got, stats)
        assert store.stats.matrix("d", "t", "de", "accuracy").scores()[0] == pytest.approx(2 / 3)
        assert store.summary().counts["runs"] == 1


def test_a_store_nobody_holds_is_freed_at_once(tmp_path: Path) -> None:
    """No reference cycle store ↔ collaborator: the store (and its DuckDB file) goes with its
    last reference, without waiting for the garbage collector."""
    store = Store.open(tmp_path / "s.duckdb")
    runs = store.runs
    ref = weakref.ref(store)
    gc.disable()
    try:
        del store
        assert ref() is None
    finally:
        gc.enable()
    with pytest.raises(StoreError, match="keep the Store open"):
        runs.frame()
