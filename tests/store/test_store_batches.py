"""Batched run writes (``store.runs.write_batches``): same contents, resume, all-or-nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from glotbench.errors import InputError
from glotbench.store import RunRecord, Store
from glotbench.store.runs import FIRST_BATCH_RUNS, Runs

CREATED = datetime(2026, 1, 2, 3, 4, 5)
SRC = Path(__file__).resolve().parents[2] / "src"


def _runs(n_models: int = 5, n_languages: int = 4, seed: int = 0) -> list[tuple[Any, ...]]:
    """Runs of varying sizes, float statistics and a null seed among them."""
    rng = np.random.default_rng(seed)
    out = []
    for m in range(n_models):
        for lang in range(n_languages):
            n = int(rng.integers(3, 40))
            record = RunRecord(
                model=f"m{m}",
                dataset="d",
                task="t",
                language=f"l{lang}",
                seed=None if m == 0 else m,
                metric="accuracy",
                stat_names=("correct", "count"),
                model_metadata={"params": m},
                created_at=CREATED,
            )
            stats = np.column_stack([rng.random(n), np.ones(n)])
            out.append((record, [f"ex{i}" for i in range(n)], stats))
    return out


def _contents(store: Store) -> tuple[list[Any], list[Any]]:
    con = store.connection
    runs = con.execute("SELECT * FROM runs ORDER BY run_id").fetchall()
    examples = con.execute("SELECT * FROM example_stats ORDER BY run_id, position").fetchall()
    return runs, examples


def _consistent(store: Store) -> None:
    """Every example row belongs to a complete run, and every run has n_examples rows."""
    con = store.connection
    orphans = con.execute(
        "SELECT count(*) FROM example_stats e ANTI JOIN runs r USING (run_id)"
    ).fetchall()
    assert orphans == [(0,)]
    wrong = con.execute(
        "SELECT r.run_id FROM runs r LEFT JOIN "
        "(SELECT run_id, count(*) AS c FROM example_stats GROUP BY run_id) e USING (run_id) "
        "WHERE coalesce(e.c, 0) <> r.n_examples"
    ).fetchall()
    assert wrong == []


@pytest.mark.slow
def test_batched_write_equals_per_run_writes(tmp_path: Path) -> None:
    runs = _runs()
    with Store.open(tmp_path / "one.duckdb") as one:
        assert all(one.runs.write(*run) for run in runs)
        expected = _contents(one)
    with Store.open(tmp_path / "batched.duckdb") as batched:
        result = batched.runs.write_batches(iter(runs), batch_runs=3)
        assert result.written == len(runs) and result.skipped == 0
        assert result.examples == sum(len(ids) for _, ids, _ in runs)
        assert result.batches == -(-len(runs) // 3)
        assert _contents(batched) == expected
    # the same through write_runs (one transaction, one batch)
    with Store.open(tmp_path / "job.duckdb") as job:
        assert job.runs.write_many(runs) == len(runs)
        assert _contents(job) == expected
    assert len(expected[0]) == len(runs)
    assert len(expected[1]) == sum(len(ids) for _, ids, _ in runs)


@pytest.mark.slow
def test_first_batches_grow_and_rows_close_a_batch(tmp_path: Path) -> None:
    runs = _runs(n_models=10, n_languages=10)  # 100 runs
    seen: list[int] = []
    with Store.open(tmp_path / "s.duckdb") as store:
        result = store.runs.write_batches(runs, batch_runs=40, progress=seen.append)
    sizes = np.diff([0, *seen]).tolist()
    assert sizes == [FIRST_BATCH_RUNS, 2 * FIRST_BATCH_RUNS, 40, 100 - 40 - 3 * FIRST_BATCH_RUNS]
    assert result.batches == 4
    with Store.open(tmp_path / "rows.duckdb") as store:
        result = store.runs.write_batches(runs, batch_rows=1)  # every run its own batch
    assert result.batches == len(runs) == result.written


def test_resume_skips_stored_runs_by_the_anti_join(tmp_path: Path) -> None:
    runs = _runs()
    with Store.open(tmp_path / "s.duckdb") as store:
        store.runs.write_batches(runs[::2])
        stored = _contents(store)
        # stored runs come again with other statistics (and a later timestamp): skipped
        # by key, not rewritten — completeness is the runs row, as for write_run
        changed = [
            (rec.model_copy(update={"created_at": datetime(2030, 1, 1)}), ids, stats * 0)
            for rec, ids, stats in runs[::2]
        ]
        result = store.runs.write_batches(changed + runs[1::2], batch_runs=5)
        assert result.skipped == len(runs[::2])
        assert result.written == len(runs[1::2])
        assert sorted(result.run_ids) == sorted(rec.run_id for rec, _, _ in runs[1::2])
        again = store.runs.write_batches(runs)
        assert again.written == 0 and again.skipped == len(runs)
        runs_now, examples_now = _contents(store)
        assert all(row in runs_now for row in stored[0])  # stored rows untouched
        assert all(row in examples_now for row in stored[1])
        _consistent(store)
    with Store.open(tmp_path / "ref.duckdb") as ref:
        ref.runs.write_batches(runs)
        assert _contents(ref) == (runs_now, examples_now)


def test_an_exception_mid_batch_leaves_no_partial_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = _runs()
    original = Runs._insert_batch
    batches: list[int] = []

    def fail_in_second_batch(self: Store, con: Any, todo: Any) -> None:
        batches.append(len(todo))
        original(self, con, todo)  # the batch's rows are in, the commit has not happened
        if len(batches) == 2:
            raise KeyboardInterrupt

    with Store.open(tmp_path / "s.duckdb") as store:
        with monkeypatch.context() as patch:
            patch.setattr(Runs, "_insert_batch", fail_in_second_batch)
            with pytest.raises(KeyboardInterrupt):
                store.runs.write_batches(runs, batch_runs=6)
        assert batches == [6, 6]
        assert sorted(store.runs.completed_ids()) == sorted(r.run_id for r, _, _ in runs[:6])
        _consistent(store)
        result = store.runs.write_batches(runs, batch_runs=6)  # resume
        assert result.skipped == 6 and result.written == len(runs) - 6
        _consistent(store)


def test_a_run_given_twice_or_invalid_stops_before_its_batch(tmp_path: Path) -> None:
    runs = _runs()
    with Store.open(tmp_path / "s.duckdb") as store:
        with pytest.raises(InputError, match="more than once"):
            store.runs.write_batches([runs[0], runs[1], runs[0]])
        assert store.runs.frame().empty  # the repeat was in the first batch
        record, ids, stats = runs[7]
        bad = stats.copy()
        bad[1, 0] = np.inf
        broken = [*runs[:7], (record, ids, bad), *runs[8:]]
        with pytest.raises(InputError, match="not finite"):
            store.runs.write_batches(broken, batch_runs=4)
        # batch 1 (runs 0-3) is committed; batch 2 held the bad run and wrote nothing
        assert sorted(store.runs.completed_ids()) == sorted(r.run_id for r, _, _ in runs[:4])
        with pytest.raises(InputError, match="must not be empty"):
            store.runs.write_batches([(record, ["a", " \t"], stats[:2])])
        _consistent(store)


def test_replace_in_batches_and_failures_resolved(tmp_path: Path) -> None:
    runs = _runs(n_models=2, n_languages=2)
    with Store.open(tmp_path / "s.duckdb") as store:
        store.runs.write_batches(runs)
        fid = store.failures.record(
            model="m0",
            dataset="d",
            task="t",
            language="l0",
            seed=None,
            config_hash="",
            error_type="ModelError",
            message="boom",
        )
        other = store.failures.record(
            model="m1",
            dataset="d",
            task="t",
            language="l0",
            seed=99,
            config_hash="",
            error_type="ModelError",
            message="boom",
        )
        newer = [(rec, ids[:2], stats[:2] + 1) for rec, ids, stats in runs]
        result = store.runs.write_batches(newer, replace=True, batch_runs=3)
        assert result.written == len(runs)
        assert set(store.failures.frame()["failure_id"]) == {other}  # seed None matched NULL
        assert fid in set(store.failures.frame(include_resolved=True)["failure_id"])
        assert store.connection.execute("SELECT count(*) FROM example_stats").fetchall() == [
            (2 * len(runs),)
        ]
        _, stats = store.stats.of_run(runs[0][0].run_id)
        np.testing.assert_array_equal(stats, runs[0][2][:2] + 1)
        _consistent(store)


_KILLER = """
import os, signal, sys
import numpy as np
from glotbench.store import RunRecord, Store
from glotbench.store.runs import Runs

original = Runs._insert_batch
calls = []

def insert_then_die(self, con, todo):
    calls.append(len(todo))
    original(self, con, todo)
    if len(calls) == 3:  # batch 3 (64 runs, 128,000 rows) is inserted but not committed
        os.kill(os.getpid(), signal.SIGKILL)

Runs._insert_batch = insert_then_die
runs = []
ids = [f"e{j}" for j in range(2000)]
for i in range(120):
    record = RunRecord(model=f"m{i}", dataset="d", task="t", language="x", seed=1,
                       metric="accuracy", stat_names=("correct", "count"))
    runs.append((record, ids, np.ones((2000, 2))))
with Store.open(sys.argv[1]) as store:
    store.runs.write_batches(runs, batch_runs=100)
"""


@pytest.mark.slow
def test_kill_9_mid_batch_leaves_only_whole_batches(tmp_path: Path) -> None:
    path = tmp_path / "s.duckdb"
    script = tmp_path / "killer.py"
    script.write_text(textwrap.dedent(_KILLER))
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    proc = subprocess.run(
        [sys.executable, str(script), str(path)], env=env, capture_output=True, timeout=300
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    with Store.open(path) as store:
        # batches of 16 and 32 runs were committed; the third is larger than a DuckDB
        # row group (122,880 rows), so its rows were already being written to the
        # file when the process died — and are not part of the store
        assert len(store.runs.completed_ids()) == 48
        _consistent(store)
        remaining: Iterator[Any] = (
            (
                RunRecord(
                    model=f"m{i}",
                    dataset="d",
                    task="t",
                    language="x",
                    seed=1,
                    metric="accuracy",
                    stat_names=("correct", "count"),
                ),
                [f"e{j}" for j in range(2000)],
                np.ones((2000, 2)),
            )
            for i in range(120)
        )
        result = store.runs.write_batches(remaining)
        assert result.skipped == 48 and result.written == 72
        _consistent(store)


def test_source_positions_travel_with_batched_runs(tmp_path: Path) -> None:
    runs = _runs(n_models=2, n_languages=2)
    positions = [list(range(len(ids)))[::-1] for _, ids, _ in runs]
    with Store.open(tmp_path / "one.duckdb") as one:
        for (record, ids, stats), pos in zip(runs, positions, strict=True):
            one.runs.write(record, ids, stats, source_positions=pos)
        expected = _contents(one)
    with Store.open(tmp_path / "batched.duckdb") as batched:
        items = [(*run, pos) for run, pos in zip(runs, positions, strict=True)]
        assert batched.runs.write_batches(items, batch_runs=3).written == len(runs)
        assert _contents(batched) == expected
    with Store.open(tmp_path / "job.duckdb") as job:
        assert job.runs.write_many(runs, source_positions=positions) == len(runs)
        assert _contents(job) == expected
        stored = job.connection.execute(
            "SELECT source_position FROM example_stats WHERE run_id = ? ORDER BY position",
            [runs[0][0].run_id],
        ).fetchall()
        assert [r[0] for r in stored] == positions[0]
        with pytest.raises(InputError, match="more than one example"):
            job.runs.write_batches([(*runs[0], [0] * len(runs[0][1]))], replace=True)
