"""A store is created atomically: a ``kill -9`` during creation leaves no store or a whole one.

Before, the DuckDB file was created first and given its tables in a second step; a kill
between the two left a DuckDB file with no tables, which every later read refused as
"not a glotbench store" (seen in CI as a flaky kill test of the lm-eval importer).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from glotbench.store import Store

SRC = Path(__file__).resolve().parents[2] / "src"

# the child creates a store and kills itself at one step of the creation
KILL_AT = r"""
import os, signal, sys
import duckdb
from glotbench.store import store as module

step = sys.argv[2]
if step == "replace":  # the temporary database is complete, the rename not yet done
    def replace(src, dst):
        os.kill(os.getpid(), signal.SIGKILL)
    module.os.replace = replace
elif step == "schema":  # inside the transaction that creates the tables
    original = module._write_schema
    def write_schema(connection):
        original(connection)
        os.kill(os.getpid(), signal.SIGKILL)
    module._write_schema = write_schema
module.Store.open(sys.argv[1]).close()
"""


def _child(path: Path, step: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", KILL_AT, str(path), step],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        timeout=120,
    )


@pytest.mark.parametrize("step", ["schema", "replace"])
def test_a_kill_during_creation_leaves_no_store_and_the_next_open_creates_it(
    tmp_path: Path, step: str
) -> None:
    path = tmp_path / "s.duckdb"
    proc = _child(path, step)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert not path.exists()  # nothing half made at the store's own path
    leftovers = [p.name for p in tmp_path.iterdir() if ".creating-" in p.name]
    assert leftovers  # the killed creation's temporary file is still there ...
    with pytest.raises(Exception, match="no store at"):
        Store.open(path, read_only=True)  # a reader says there is no store yet
    with Store.open(path) as store:  # ... and the next writer removes it and creates the store
        assert store.summary().counts["runs"] == 0
    assert [p.name for p in tmp_path.iterdir() if ".creating-" in p.name] == []
    with Store.open(path, read_only=True) as store:
        assert store.schema_version >= 1


@pytest.mark.slow
def test_kills_at_random_times_during_creation_never_leave_a_store_without_tables(
    tmp_path: Path,
) -> None:
    import random
    import time

    rng = random.Random(3)
    code = "import sys; from glotbench.store import Store; Store.open(sys.argv[1]).close()"
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    start = time.perf_counter()  # delays drawn within one uninterrupted child's time
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "timing.duckdb")], env=env,
                   check=True, timeout=120)  # fmt: skip
    whole = time.perf_counter() - start
    created = 0
    for i in range(12):
        path = tmp_path / f"r{i}.duckdb"
        proc = subprocess.Popen([sys.executable, "-c", code, str(path)], env=env)
        time.sleep(rng.uniform(0.3, 1.0) * whole)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        if path.exists():  # a whole store or none: never one a reader refuses
            created += 1
            with Store.open(path, read_only=True) as store:
                assert store.summary().counts["runs"] == 0
    assert created < 12  # some kills landed before the store was complete


@pytest.mark.parametrize("target_exists", [False, True])
def test_a_store_path_that_is_a_link_creates_the_store_where_it_points(
    tmp_path: Path, target_exists: bool
):
    """``results.duckdb -> /big/disk/results.duckdb``: the store is made at the link's
    target (as DuckDB itself does), and the link stays a link (the rename replaced it)."""
    (tmp_path / "big").mkdir()
    target = tmp_path / "big" / "results.duckdb"
    if target_exists:
        target.touch()  # an empty file: created anew
    link = tmp_path / "results.duckdb"
    link.symlink_to(target)
    Store.open(link).close()
    assert link.is_symlink()
    assert target.stat().st_size > 0
    with Store.open(link, read_only=True) as store:
        assert "schema_version" in store.meta()
    assert not [p for p in tmp_path.iterdir() if ".creating-" in p.name]
