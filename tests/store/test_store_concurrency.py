"""Readers and writers in separate processes on one store (issue 14, item 3).

DuckDB allows one read-write process or several read-only ones on a file. The
writer here (``Store.open(..., hold=False)``, as ``glotbench run`` and the
imports open it) locks the file only for each transaction, and every open
waits for a conflicting lock (``glotbench.store.lock``). Real processes, no mocks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from glotbench.errors import StoreError
from glotbench.store import Store
from glotbench.store.lock import LOCK_TIMEOUT_ENV, lock_timeout

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
N_EXAMPLES = 50

#: writes runs of N_EXAMPLES examples, one transaction each, until `stop` exists
WRITER = """
import sys, time
from pathlib import Path
import numpy as np
from glotbench.store import Store
from glotbench.store.schema import RunRecord

store_path, stop, n = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
with Store.open(store_path, hold=False, lock_timeout=60) as store:
    i = 0
    while not stop.exists() and i < 5000:
        record = RunRecord(model=f"m{i:04d}", dataset="d", task="t", language="en",
                           seed=0, metric="accuracy", stat_names=("correct",))
        store.runs.write(record, [f"e{j}" for j in range(n)],
                        rng.integers(0, 2, (n, 1)).astype(float))
        i += 1
        print(i, flush=True)
        time.sleep(0.005)
print("done", i, flush=True)
"""

#: opens the store read-write (hold=True, the old behaviour) and keeps it for argv[2] s
HOLDER = """
import sys, time
from glotbench.store import Store
with Store.open(sys.argv[1]) as store:
    store.runs.completed_ids()
    print("holding", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(SRC)}


def _start(script: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )


def _wait_for_line(proc: subprocess.Popen[str], prefix: str) -> str:
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith(prefix):
            return line
    raise AssertionError(f"the child ended without printing {prefix!r}: {proc.stderr.read()}")  # type: ignore[union-attr]


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=30)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


def _consistent_counts(path: Path) -> tuple[int, int]:
    """(runs, example rows) read in one read-only open; every run is complete."""
    with Store.open(path, read_only=True, lock_timeout=60) as store:
        rows = store.connection.execute(
            "SELECT r.run_id, r.n_examples, count(e.run_id) FROM runs r "
            "LEFT JOIN example_stats e USING (run_id) GROUP BY r.run_id, r.n_examples"
        ).fetchall()
        orphans = store.connection.execute(
            "SELECT count(*) FROM example_stats WHERE run_id NOT IN (SELECT run_id FROM runs)"
        ).fetchall()[0][0]
    assert orphans == 0, "example statistics of a run that is not complete"
    for run_id, n_examples, count in rows:
        assert n_examples == count == N_EXAMPLES, f"run {run_id}: {count} of {n_examples} rows"
    return len(rows), sum(r[2] for r in rows)


def test_lock_timeout_from_argument_environment_and_default(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(LOCK_TIMEOUT_ENV, raising=False)
    assert lock_timeout() == 60.0
    assert lock_timeout(2.5) == 2.5
    monkeypatch.setenv(LOCK_TIMEOUT_ENV, "0")
    assert lock_timeout() == 0.0
    monkeypatch.setenv(LOCK_TIMEOUT_ENV, "soon")
    with pytest.raises(StoreError, match="GLOTBENCH_LOCK_TIMEOUT='soon' is not a number"):
        lock_timeout()
    with pytest.raises(StoreError, match="must be ≥ 0"):
        lock_timeout(-1)


@pytest.mark.slow
def test_hold_false_store_releases_the_file_between_transactions(tmp_path: Path):
    path = tmp_path / "s.duckdb"
    with Store.open(path, hold=False) as writer:
        assert writer._connection is None  # released right after opening
        assert writer.runs.completed_ids() == set()
        assert writer._connection is None  # a read releases it too
        with writer.held():
            writer.runs.completed_ids()
            assert writer._connection is not None
        assert writer._connection is None
        # another process can now open the file read-only
        script = (
            "import sys; from glotbench.store import Store; "
            "s = Store.open(sys.argv[1], read_only=True, lock_timeout=0); "
            "print(s.meta()['schema_version'])"
        )
        out = subprocess.run(
            [sys.executable, "-c", script, str(path)],
            capture_output=True, text=True, env=_env(), timeout=120,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "2"


@pytest.mark.slow
def test_readers_see_only_complete_runs_while_a_writer_writes(tmp_path: Path):
    path = tmp_path / "s.duckdb"
    stop = tmp_path / "stop"
    writer = _start(WRITER, str(path), str(stop), str(N_EXAMPLES))
    try:
        _wait_for_line(writer, "1")
        seen: list[int] = []
        deadline = time.monotonic() + 4.0
        while time.monotonic() < deadline:
            runs, examples = _consistent_counts(path)
            assert examples == runs * N_EXAMPLES
            seen.append(runs)
        assert seen == sorted(seen), "a reader saw fewer runs than an earlier one"
        # the CLI reader, as a user runs it, while the writer still writes
        show = subprocess.run(
            [sys.executable, "-m", "glotbench", "show", "--json", "--store", str(path)],
            capture_output=True, text=True, env=_env(), timeout=120,
        )  # fmt: skip
        assert show.returncode == 0, show.stderr
        counts = json.loads(show.stdout)["counts"]
        assert counts["examples"] == counts["runs"] * N_EXAMPLES
        assert writer.poll() is None, "the writer stopped before the readers were done"
        stop.touch()
        done = _wait_for_line(writer, "done")
        assert writer.wait(timeout=60) == 0
    finally:
        stop.touch()
        _stop(writer)
    total = int(done.split()[1])
    assert len(seen) >= 3 and 0 < seen[0] <= seen[-1] < total
    assert _consistent_counts(path) == (total, total * N_EXAMPLES)


@pytest.mark.slow
def test_second_writer_waits_for_the_first_then_succeeds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    path = tmp_path / "s.duckdb"
    Store.open(path).close()
    holder = _start(HOLDER, str(path), "2.0")
    try:
        _wait_for_line(holder, "holding")
        start = time.monotonic()
        with Store.open(path, lock_timeout=60) as store:
            waited = time.monotonic() - start
            assert store.runs.completed_ids() == set()
    finally:
        _stop(holder)
    assert waited >= 1.0, "the store was not held: the test proves nothing"
    err = capsys.readouterr().err
    assert f"waiting for the store {path}, held by process {holder.pid}" in err
    assert "change with lock_timeout=SECONDS or GLOTBENCH_LOCK_TIMEOUT" in err  # API words


@pytest.mark.slow
def test_writer_and_reader_time_out_with_a_clear_error(tmp_path: Path):
    path = tmp_path / "s.duckdb"
    Store.open(path).close()
    holder = _start(HOLDER, str(path), "60")
    try:
        _wait_for_line(holder, "holding")
        for read_only in (False, True):
            start = time.monotonic()
            with pytest.raises(StoreError) as info:
                Store.open(path, read_only=read_only, lock_timeout=0.5)
            assert 0.5 <= time.monotonic() - start < 10
            message = str(info.value)
            assert str(path) in message
            assert f"in use by process {holder.pid}" in message
            assert "waited 0.5 s" in message and "GLOTBENCH_LOCK_TIMEOUT" in message
        # the CLI reader: --lock-timeout (or GLOTBENCH_LOCK_TIMEOUT) bounds the wait
        show = subprocess.run(
            [sys.executable, "-m", "glotbench", "--lock-timeout", "0.3",
             "show", "--json", "--store", str(path)],
            capture_output=True, text=True, timeout=120, env=_env(),
        )  # fmt: skip
        assert show.returncode != 0
        error = json.loads(show.stdout)["error"]
        assert error["type"] == "StoreError"
        assert f"in use by process {holder.pid}" in error["message"]
        assert "waited 0.3 s" in error["message"]
    finally:
        _stop(holder)


READER = """
import sys
from glotbench.store import Store
with Store.open(sys.argv[1], read_only=True, lock_timeout=0) as store:
    runs = store.runs.frame()
    rows = store.connection.execute("SELECT count(*) FROM example_stats").fetchall()[0][0]
print(len(runs), int(runs["n_examples"].sum()), rows)
"""


@pytest.mark.slow
def test_an_import_releases_the_store_between_batches(tmp_path: Path):
    from glotbench.ingest.tidy import import_examples_file, open_store_for_import

    from .conftest import examples_frame

    frame = examples_frame(models=[f"m{i:02d}" for i in range(40)], n=5)  # 40 runs
    source = tmp_path / "e.csv"
    frame.to_csv(source, index=False)
    path = tmp_path / "s.duckdb"
    seen: list[str] = []

    def read_now(done: int, total: int) -> None:
        if 0 < done < total and not seen:  # after the first batch, before the last
            # another process, not waiting at all (lock_timeout=0): the file is free
            out = subprocess.run(
                [sys.executable, "-c", READER, str(path)],
                capture_output=True, text=True, env=_env(), timeout=120,
            )  # fmt: skip
            assert out.returncode == 0, out.stderr
            seen.append(out.stdout.strip())

    with open_store_for_import(path) as store:
        result = import_examples_file(store, source, progress=read_now)
    assert result.runs_added == 40
    assert seen == ["16 80 80"]  # the first batch (16 runs), every run complete
