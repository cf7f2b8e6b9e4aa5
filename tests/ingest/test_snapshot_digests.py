"""``import parquet`` recomputes every run's ``stats_sha256`` instead of trusting it.

A snapshot whose example rows were edited (a statistic, an id) or whose digest
was edited is refused by file, row, run and field, and the store is left as it
was — also a store that holds the run already, where a trusted digest would
have let the edited run pass as "already stored". Rows out of (run, position)
order are checked through a sorted copy, and an untouched snapshot still
imports to the same store.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from glotbench import api
from glotbench.errors import InputError
from glotbench.ingest import snapshot as snapshot_module
from glotbench.store import Store
from glotbench.store.schema import RunRecord, stats_digest


def _record(model: str, seed: int) -> RunRecord:
    return RunRecord(
        model=model, task="t", language="en", seed=seed, metric="accuracy",
        stat_names=("value", "count"),
    )  # fmt: skip


@pytest.fixture()
def source(tmp_path: Path) -> Path:
    """A store of 3 runs of 50 examples, exported to ``snap/``."""
    path = tmp_path / "source.duckdb"
    rng = np.random.default_rng(0)
    ids = [f"e{i:03d}" for i in range(50)]
    with Store.open(path) as s:
        for model, seed in (("a", 0), ("a", 1), ("b", 0)):
            stats = np.column_stack([rng.integers(0, 2, 50), np.ones(50)]).astype(float)
            s.runs.write(_record(model, seed), ids, stats)
        s.exports.write(tmp_path / "snap")
    return path


def _dump(path: Path) -> tuple[list, list, list]:
    with Store.open(path, read_only=True) as s:
        con = s.connection
        return (
            con.execute("SELECT * EXCLUDE (created_at) FROM runs ORDER BY run_id").fetchall(),
            con.execute("SELECT * FROM example_stats ORDER BY run_id, position").fetchall(),
            con.execute(
                "SELECT import_id, kind, completed_at FROM imports ORDER BY ALL"
            ).fetchall(),
        )


def _refused(snap: Path, store: Path) -> InputError:
    before = _dump(store) if store.exists() else None
    with pytest.raises(InputError) as exc:
        api.import_parquet(snap, store=store)
    assert (_dump(store) if store.exists() else None) == before  # nothing written
    return exc.value


@pytest.mark.slow
def test_an_edited_statistic_is_refused_by_file_row_run_and_field(
    tmp_path: Path, source: Path
) -> None:
    snap = tmp_path / "snap"
    runs = pd.read_parquet(snap / "runs.parquet")
    examples = pd.read_parquet(snap / "examples.parquet")
    victim = runs["run_id"].iloc[1]
    row = int(np.flatnonzero((examples["run_id"] == victim).to_numpy())[7])
    stats = examples.at[row, "stats"].copy()
    stats[0] = 1.0 - stats[0]  # still a valid 0/1 accuracy: only the digest tells
    examples.at[row, "stats"] = stats
    examples.to_parquet(snap / "examples.parquet")

    error = _refused(snap, tmp_path / "new.duckdb")
    assert error.path == str(snap / "runs.parquet") and error.field == "stats_sha256"
    assert "row 2" in str(error) and victim in str(error) and "examples.parquet" in str(error)
    assert not (tmp_path / "new.duckdb").exists()
    # into the store that holds the genuine run: before, the trusted digest matched the
    # stored one and the edited run was "skipped as already stored"
    error = _refused(snap, source)
    assert error.field == "stats_sha256" and victim in str(error)


@pytest.mark.slow
def test_an_edited_digest_or_example_id_is_refused(tmp_path: Path, source: Path) -> None:
    snap = tmp_path / "snap"
    target = tmp_path / "t.duckdb"
    with Store.open(target) as t:  # a store with content of its own, left unchanged
        t.runs.write(_record("c", 0), ["x", "y"], np.ones((2, 2)))
    runs = pd.read_parquet(snap / "runs.parquet")
    genuine = runs.copy()
    runs.loc[2, "stats_sha256"] = "0" * 64
    runs.to_parquet(snap / "runs.parquet")
    error = _refused(snap, target)
    assert "row 3" in str(error) and "'" + "0" * 64 + "'" in str(error)

    genuine.to_parquet(snap / "runs.parquet")
    examples = pd.read_parquet(snap / "examples.parquet")
    examples.loc[0, "example_id"] = "renamed"
    examples.to_parquet(snap / "examples.parquet")
    error = _refused(snap, target)
    assert error.field == "stats_sha256" and genuine["run_id"].iloc[0] in str(error)


@pytest.mark.slow
def test_rows_out_of_order_are_checked_through_a_sorted_copy(
    tmp_path: Path, source: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    snap = tmp_path / "snap"
    examples = pd.read_parquet(snap / "examples.parquet")
    examples.sample(frac=1.0, random_state=3).to_parquet(snap / "examples.parquet")
    passes: list[Path] = []
    feed = snapshot_module._feed_ids

    def spy(path: Path, digests: dict) -> bool:  # type: ignore[type-arg]
        passes.append(path)
        return feed(path, digests)

    monkeypatch.setattr(snapshot_module, "_feed_ids", spy)
    result = api.import_parquet(snap, store=tmp_path / "copy.duckdb")
    assert result.runs_added == 3
    assert passes[0] == snap / "examples.parquet" and passes[1].name == "examples-sorted.parquet"
    assert _dump(tmp_path / "copy.duckdb")[:2] == _dump(source)[:2]


def test_recomputed_digests_equal_the_one_piece_digest(tmp_path: Path, source: Path) -> None:
    """The streamed two-pass digest is :func:`stats_digest` of each run's rows (small batches)."""
    snap = tmp_path / "snap"
    runs = pd.read_parquet(snap / "runs.parquet")
    examples = pd.read_parquet(snap / "examples.parquet")
    original = snapshot_module._DIGEST_BATCH_ROWS
    try:
        snapshot_module._DIGEST_BATCH_ROWS = 7  # runs split over many batches
        got = snapshot_module._recomputed_digests(runs, snap / "examples.parquet", tmp_path)
    finally:
        snapshot_module._DIGEST_BATCH_ROWS = original
    for rid, names in zip(runs["run_id"], runs["stat_names"], strict=True):
        rows = examples[examples["run_id"] == rid].sort_values("position")
        expected = stats_digest(
            rows["example_id"].tolist(), np.stack(rows["stats"].to_numpy()), tuple(names)
        )
        assert got[rid] == expected
