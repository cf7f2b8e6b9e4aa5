"""The store's writer lock (``glotbench.store.writer_lock``): held across processes,
released by the operating system when its owner dies, named in the refusal."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from glotbench.errors import StoreError
from glotbench.store.writer_lock import (
    process_start_time,
    read_owner,
    writer_lock,
    writer_lock_path,
)

SRC = Path(__file__).resolve().parents[2] / "src"

HOLDER = """
import sys, time
from glotbench.store.writer_lock import writer_lock
with writer_lock(sys.argv[1]):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
print("released", flush=True)
time.sleep(30)
"""


def _holder(store: Path, seconds: float) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(store), str(seconds)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


@pytest.mark.slow
def test_a_held_lock_is_refused_naming_its_owner_then_freed_by_kill_9(tmp_path: Path):
    store = tmp_path / "s.duckdb"
    proc = _holder(store, 60)
    try:
        owner = read_owner(writer_lock_path(store))
        assert owner is not None and owner["pid"] == proc.pid
        started = process_start_time(proc.pid)
        assert started is not None and abs(owner["process_started"] - started) < 1e-6
        t0 = time.monotonic()
        with pytest.raises(StoreError, match=rf"process {proc.pid}.*GLOTBENCH_LOCK_TIMEOUT"):
            with writer_lock(store, timeout=0.3):
                pass
        assert 0.3 <= time.monotonic() - t0 < 5
        os.kill(proc.pid, signal.SIGKILL)  # no clean-up code runs: the OS drops the lock
        proc.wait(timeout=10)
        t0 = time.monotonic()
        with writer_lock(store, timeout=5):
            assert read_owner(writer_lock_path(store))["pid"] == os.getpid()  # type: ignore[index]
        assert time.monotonic() - t0 < 1
        assert not writer_lock_path(store).exists()  # removed on release
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.slow
def test_a_waiter_gets_the_lock_when_the_holder_finishes(tmp_path: Path):
    store = tmp_path / "s.duckdb"
    proc = _holder(store, 0.5)
    notices: list[str] = []
    try:
        with writer_lock(store, timeout=30, on_wait=notices.append):
            assert proc.stdout is not None and proc.stdout.readline().strip() == "released"
    finally:
        proc.kill()
        proc.wait()
    assert not writer_lock_path(store).exists()


def test_the_lock_is_reentrant_in_a_process(tmp_path: Path):
    store = tmp_path / "s.duckdb"
    with writer_lock(store, timeout=0):
        with writer_lock(store, timeout=0):
            assert json.loads(writer_lock_path(store).read_text())["pid"] == os.getpid()
        assert writer_lock_path(store).exists()  # still held by the outer block
    assert not writer_lock_path(store).exists()


def test_process_start_time_matches_psutil():
    psutil = pytest.importorskip("psutil")
    mine = process_start_time(os.getpid())
    assert mine is not None
    assert abs(mine - psutil.Process().create_time()) < 1.0


@pytest.mark.slow
def test_one_lock_per_store_file_whatever_path_names_it(tmp_path: Path):
    (tmp_path / "real").mkdir()
    store = tmp_path / "real" / "s.duckdb"
    (tmp_path / "link").symlink_to(tmp_path / "real")
    other = tmp_path / "link" / ".." / "link" / "s.duckdb"
    assert writer_lock_path(other) == writer_lock_path(store)
    proc = _holder(store, 60)
    try:
        with pytest.raises(StoreError, match=f"process {proc.pid}"):
            with writer_lock(other, timeout=0):
                pass
    finally:
        proc.kill()
        proc.wait()


def test_a_lock_file_that_cannot_be_created_is_a_store_error(tmp_path: Path):
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(StoreError, match="writer lock file .* cannot be created"):
        with writer_lock(tmp_path / "file" / "s.duckdb", timeout=0):
            pass
