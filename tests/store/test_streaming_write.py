"""store.runs.write_chunks: one run written chunk by chunk in one transaction."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from glotbench.errors import InputError
from glotbench.store import Store
from glotbench.store.schema import RunRecord


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


def test_chunked_write_stores_what_write_run_stores(tmp_path: Path) -> None:
    ids = [f"e{i}" for i in range(10)]
    stats = np.column_stack([np.arange(10) % 2, np.ones(10)]).astype(float)
    with Store.open(tmp_path / "a.duckdb") as a:
        assert a.runs.write(_record(), ids, stats)
    with Store.open(tmp_path / "b.duckdb") as b:
        assert b.runs.write_chunks(_record(), _chunks(ids, stats, 3))  # 3 + 3 + 3 + 1
        assert not b.runs.write_chunks(_record(), _chunks(ids, stats, 4))  # stored: skipped
    whole, chunked = _stored(tmp_path / "a.duckdb"), _stored(tmp_path / "b.duckdb")
    assert chunked == whole
    assert [row[0] for row in chunked[1]] == list(range(10))


def test_id_repeated_across_chunks_is_refused_and_nothing_is_stored(tmp_path: Path) -> None:
    ids = [f"e{i}" for i in range(9)] + ["e1"]  # the repeat is three chunks after the first
    stats = np.ones((10, 2))
    with Store.open(tmp_path / "c.duckdb") as c:
        with pytest.raises(InputError, match="example id 'e1' occurs more than once"):
            c.runs.write_chunks(_record(), _chunks(ids, stats, 3))
    assert _stored(tmp_path / "c.duckdb") == ([], [])
    bad = np.ones((10, 2))
    bad[8, 0] = np.nan
    with Store.open(tmp_path / "d.duckdb") as d:
        with pytest.raises(InputError, match="statistics of example 'e8' are not finite"):
            d.runs.write_chunks(_record(), _chunks([f"e{i}" for i in range(10)], bad, 3))
    assert _stored(tmp_path / "d.duckdb") == ([], [])
