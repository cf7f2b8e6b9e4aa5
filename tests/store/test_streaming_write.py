"""store.runs.write_chunks: one run written chunk by chunk, in one or several transactions.

A run committed in several transactions gets its ``runs`` row last; rows left by a
killed write (marked in ``meta``) are deleted by the next write of the run, whichever
writer it is (chunked, batched, snapshot merge). The kills themselves, with real
processes: ``tests/importers/test_lm_eval_chunk_kills.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from glotbench.errors import InputError
from glotbench.ingest.snapshot import import_snapshot
from glotbench.store import Store
from glotbench.store.schema import RunRecord
from glotbench.store.sql import PARTIAL_RUN_PREFIX


def _record() -> RunRecord:
    return RunRecord(
        model="m", task="t", language="en", seed=None, metric="accuracy",
        stat_names=("value", "count"),
    )  # fmt: skip


def _chunks(ids: list[str], stats: np.ndarray, size: int) -> Callable[[], Iterator]:
    return lambda: ((ids[a : a + size], stats[a : a + size]) for a in range(0, len(ids), size))


def _stored(path: Path) -> tuple[list, list]:
    with Store.open(path, read_only=True) as s:
        con = s.connection
        return (
            con.execute("SELECT run_id, n_examples, stats_sha256 FROM runs").fetchall(),
            con.execute(
                "SELECT position, example_id, stats FROM example_stats ORDER BY position"
            ).fetchall(),
        )


def _marks(path: Path) -> list[str]:
    with Store.open(path, read_only=True) as s:
        return [k for k in s.meta() if k.startswith(PARTIAL_RUN_PREFIX)]


@pytest.mark.slow
@pytest.mark.parametrize("commit_rows", [None, 3, 1])
def test_chunked_write_stores_what_write_run_stores(
    tmp_path: Path, commit_rows: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = [f"e{i}" for i in range(10)]
    stats = np.column_stack([np.arange(10) % 2, np.ones(10)]).astype(float)
    with Store.open(tmp_path / "a.duckdb") as a:
        assert a.runs.write(_record(), ids, stats)
    commits: list[int] = []
    transaction = Store.transaction

    def counting(self: Store):  # type: ignore[no-untyped-def]
        commits.append(1)
        return transaction(self)

    with Store.open(tmp_path / "b.duckdb") as b:
        monkeypatch.setattr(Store, "transaction", counting)
        assert b.runs.write_chunks(_record(), _chunks(ids, stats, 3), commit_rows=commit_rows)
        # the mark, then 4 chunks of 3 + 3 + 3 + 1 rows: one transaction, or one a chunk
        assert len(commits) == 1 + (1 if commit_rows is None else 4)
        assert not b.runs.write_chunks(_record(), _chunks(ids, stats, 4))  # stored: skipped
    whole, chunked = _stored(tmp_path / "a.duckdb"), _stored(tmp_path / "b.duckdb")
    assert chunked == whole
    assert [row[0] for row in chunked[1]] == list(range(10))
    assert _marks(tmp_path / "b.duckdb") == []


@pytest.mark.slow
@pytest.mark.parametrize("commit_rows", [None, 3])
def test_id_repeated_across_chunks_is_refused_and_nothing_is_stored(
    tmp_path: Path, commit_rows: int | None
) -> None:
    ids = [f"e{i}" for i in range(9)] + ["e1"]  # the repeat is three chunks after the first
    stats = np.ones((10, 2))
    with Store.open(tmp_path / "c.duckdb") as c:
        with pytest.raises(InputError, match="example id 'e1' occurs more than once"):
            c.runs.write_chunks(_record(), _chunks(ids, stats, 3), commit_rows=commit_rows)
    # with commit_rows=3, three transactions had committed: their rows are deleted again
    assert _stored(tmp_path / "c.duckdb") == ([], [])
    assert _marks(tmp_path / "c.duckdb") == []
    bad = np.ones((10, 2))
    bad[8, 0] = np.nan
    with Store.open(tmp_path / "d.duckdb") as d:
        with pytest.raises(InputError, match="statistics of example 'e8' are not finite"):
            d.runs.write_chunks(
                _record(), _chunks([f"e{i}" for i in range(10)], bad, 3), commit_rows=commit_rows
            )
    assert _stored(tmp_path / "d.duckdb") == ([], [])


def _leave_a_killed_write(path: Path, record: RunRecord, rows: int) -> None:
    """What ``kill -9`` leaves mid-run: the mark and ``rows`` committed rows, no ``runs`` row."""
    with Store.open(path) as s, s.transaction() as con:
        con.execute("INSERT INTO meta VALUES (?, '{}')", [PARTIAL_RUN_PREFIX + record.run_id])
        for i in range(rows):
            con.execute(
                "INSERT INTO example_stats VALUES (?, ?, ?, [0.0, 1.0], NULL)",
                [record.run_id, i, f"e{i}"],
            )


@pytest.mark.slow
@pytest.mark.parametrize("writer", ["chunks", "batch", "snapshot"])
def test_rows_of_a_killed_chunked_write_are_replaced_not_doubled(
    tmp_path: Path, writer: str
) -> None:
    ids = [f"e{i}" for i in range(10)]
    stats = np.column_stack([np.arange(10) % 2, np.ones(10)]).astype(float)
    with Store.open(tmp_path / "ref.duckdb") as ref:
        ref.runs.write(_record(), ids, stats)
        ref.exports.write(tmp_path / "snap")
    store = tmp_path / "s.duckdb"
    _leave_a_killed_write(store, _record(), 6)
    with Store.open(store, read_only=True) as s:  # readers see no run and no examples
        assert s.summary().counts["runs"] == 0 and s.summary().counts["examples"] == 0
        assert s.runs.frame().empty
    with Store.open(store) as s:
        if writer == "chunks":
            assert s.runs.write_chunks(_record(), _chunks(ids, stats, 4), commit_rows=4)
        elif writer == "batch":
            assert s.runs.write_batches([(_record(), ids, stats)]).written == 1
        else:
            assert import_snapshot(s, tmp_path / "snap").runs_added == 1
    assert _stored(store)[1] == _stored(tmp_path / "ref.duckdb")[1]  # 10 rows, not 16
    assert _marks(store) == []


def test_an_export_leaves_out_the_marks(tmp_path: Path) -> None:
    store = tmp_path / "s.duckdb"
    _leave_a_killed_write(store, _record(), 2)
    with Store.open(store) as s:
        s.exports.write(tmp_path / "snap")
    import pyarrow.parquet as pq

    keys = pq.read_table(tmp_path / "snap" / "meta.parquet").column("key").to_pylist()
    assert "schema_version" in keys and not any(k.startswith(PARTIAL_RUN_PREFIX) for k in keys)
    assert pq.read_table(tmp_path / "snap" / "examples.parquet").num_rows == 0
