"""``kill -9`` in the middle of a run written in several transactions (lm-eval import).

A run larger than a chunk is committed ``COMMIT_ROWS`` rows at a time, its
``runs`` row last (``store.runs.write_chunks``). Real processes are killed with
SIGKILL at seeded random chunks — before a chunk's insert, after it (inside
the open transaction) or right after a commit — and then: the store is
consistent (every run's rows equal its ``n_examples``; rows without a ``runs``
row belong only to the run marked in ``meta`` as being written, and no reader
counts them), a re-run of the same import completes it, and the result equals
an uninterrupted import row for row, with nothing doubled and nothing left
over.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from glotbench.importers.lm_eval import import_lm_eval
from glotbench.store import Store
from glotbench.store.sql import PARTIAL_RUN_PREFIX
from tests.importers.test_lm_eval_streaming import SRC, _contents, make_folder

#: samples read and written per chunk; runs of PER_TASK samples span many chunks
CHUNK = 16
PER_TASK = 300
#: rows per transaction of a chunked run: three chunks
COMMIT = 48

KILL_CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from contextlib import contextmanager
    from glotbench.store import Store
    from glotbench.store import runs as store_writes
    from glotbench.importers.lm_eval import import_lm_eval

    folder, store, at, phase, chunk, commit = sys.argv[1:7]
    at = int(at)
    store_writes.COMMIT_ROWS = int(commit)
    calls = {"insert": 0, "commit": 0}
    insert = store_writes._insert_chunk

    def killing_insert(*args, **kwargs):
        calls["insert"] += 1
        if phase == "before" and calls["insert"] == at:
            os.kill(os.getpid(), signal.SIGKILL)
        m = insert(*args, **kwargs)
        if phase == "after" and calls["insert"] == at:
            os.kill(os.getpid(), signal.SIGKILL)
        return m

    transaction = Store.transaction

    @contextmanager
    def killing_transaction(self):
        with transaction(self) as con:
            yield con
        if phase == "committed" and calls["insert"] >= at:
            os.kill(os.getpid(), signal.SIGKILL)  # right after the commit of chunk `at`

    store_writes._insert_chunk = killing_insert
    Store.transaction = killing_transaction
    with Store.open(store, hold=False) as s:  # as the CLI opens it
        import_lm_eval(s, folder, chunk_rows=int(chunk))
    print("finished")
    """
)


def _child(folder: Path, store: Path, at: int, phase: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", KILL_CHILD, str(folder), str(store), str(at), phase]
        + [str(CHUNK), str(COMMIT)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        timeout=120,
    )


def _consistency(store: Path) -> tuple[int, set[str]]:
    """Check a (possibly interrupted) store; (complete runs, runs marked as being written)."""
    with Store.open(store, read_only=True) as s:
        con = s.connection
        bad = con.execute(
            "SELECT r.run_id, r.n_examples, count(e.run_id) FROM runs r "
            "LEFT JOIN example_stats e USING (run_id) GROUP BY ALL "
            "HAVING count(e.run_id) <> r.n_examples"
        ).fetchall()
        assert bad == [], f"runs whose rows differ from n_examples: {bad}"
        marked = {
            key[len(PARTIAL_RUN_PREFIX) :]
            for (key,) in con.execute("SELECT key FROM meta").fetchall()
            if key.startswith(PARTIAL_RUN_PREFIX)
        }
        loose = {
            r[0]
            for r in con.execute(
                "SELECT DISTINCT run_id FROM example_stats ANTI JOIN runs USING (run_id)"
            ).fetchall()
        }
        assert loose <= marked, f"rows of runs neither complete nor being written: {loose}"
        assert len(marked) <= 1  # one chunked run is written at a time
        positions = con.execute(
            "SELECT run_id, count(*), count(DISTINCT position) FROM example_stats GROUP BY ALL "
            "HAVING count(*) <> count(DISTINCT position)"
        ).fetchall()
        assert positions == [], f"rows stored twice: {positions}"
        complete = con.execute("SELECT count(*), coalesce(sum(n_examples), 0) FROM runs").fetchone()
        assert complete is not None
        summary = s.summary().counts
        assert (summary["runs"], summary["examples"]) == (complete[0], complete[1])
        return int(complete[0]), marked


def _resume_and_compare(
    folder: Path, store: Path, reference: tuple, *, may_be_complete: bool = False
) -> str:
    """Resume the import into ``store`` and compare it with ``reference``; the status.

    ``may_be_complete``: the kill may have come after the import finished (a timed kill),
    in which case the resume has nothing to do."""
    with Store.open(store, hold=False) as s:
        result = import_lm_eval(s, folder, chunk_rows=CHUNK)
    allowed = ("resumed", "imported") + (("skipped",) if may_be_complete else ())
    assert result.status in allowed, result.message
    complete, marked = _consistency(store)
    assert marked == set() and complete == len(reference[0])
    assert _contents(store) == reference  # runs, every example row, scores: nothing doubled
    with Store.open(store, read_only=True) as s:
        loose = s.connection.execute(
            "SELECT count(*) FROM example_stats ANTI JOIN runs USING (run_id)"
        ).fetchone()
        assert loose == (0,)
        incomplete = s.connection.execute(
            "SELECT count(*) FROM imports WHERE completed_at IS NULL"
        ).fetchone()
        assert incomplete == (0,)
    return result.status


@pytest.fixture(scope="module")
def lm_eval_folder(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, tuple]:
    """Two tasks × two metrics = 4 runs of 300 samples (19 chunks each), and the reference."""
    root = tmp_path_factory.mktemp("chunk-kills")
    folder = make_folder(root / "out", tasks=2, per_task=PER_TASK)
    with Store.open(root / "reference.duckdb") as s:
        import_lm_eval(s, folder)  # one transaction a run (no chunking)
    return folder, _contents(root / "reference.duckdb")


def _kill_and_resume(folder: Path, reference: tuple, store: Path, at: int, phase: str) -> bool:
    """Kill an import at chunk ``at`` (``phase``), check, resume, compare; killed mid-run?"""
    proc = _child(folder, store, at, phase)
    assert proc.returncode == -signal.SIGKILL, (at, phase, proc.stdout, proc.stderr)
    _complete, marked = _consistency(store)
    _resume_and_compare(folder, store, reference)
    return bool(marked)


@pytest.mark.slow
def test_kill_inside_the_third_transaction_of_a_run(
    tmp_path: Path, lm_eval_folder: tuple[Path, tuple]
) -> None:
    folder, reference = lm_eval_folder
    # chunk 27 is the 8th of the second run: two of its transactions are committed, the
    # third holds one chunk; the kill leaves the run half written, the re-run completes it
    assert _kill_and_resume(folder, reference, tmp_path / "s.duckdb", 27, "after")


@pytest.mark.slow
def test_kill_right_after_a_commit_mid_run(
    tmp_path: Path, lm_eval_folder: tuple[Path, tuple]
) -> None:
    folder, reference = lm_eval_folder
    assert _kill_and_resume(folder, reference, tmp_path / "s.duckdb", 24, "committed")


@pytest.mark.slow
def test_kill_9_at_random_chunks_many_rounds(
    tmp_path: Path, lm_eval_folder: tuple[Path, tuple]
) -> None:
    folder, reference = lm_eval_folder
    rng = random.Random(24)
    chunks = 4 * -(-PER_TASK // CHUNK)  # _insert_chunk calls of a whole import
    mid_run = 0
    for i in range(24):
        at, phase = rng.randint(1, chunks), rng.choice(["before", "after", "committed"])
        mid_run += _kill_and_resume(folder, reference, tmp_path / f"r{i}.duckdb", at, phase)
    assert mid_run >= 12  # most kills landed inside a run's transactions


@pytest.mark.slow
def test_kill_9_at_random_times_then_twice_in_the_resume(
    tmp_path: Path, lm_eval_folder: tuple[Path, tuple]
) -> None:
    """Killed by the parent after a random delay (any phase: reading, spooling, writing).

    The delays are drawn within the time one uninterrupted child takes on this machine
    (measured first), so that most kills land inside the import however fast the machine."""
    folder, reference = lm_eval_folder
    command = [sys.executable, "-c", KILL_CHILD, str(folder)]
    options = ["0", "none", str(CHUNK), str(COMMIT)]
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    start = time.perf_counter()
    subprocess.run(command + [str(tmp_path / "timing.duckdb")] + options, env=env,
                   capture_output=True, timeout=300, check=True)  # fmt: skip
    whole = time.perf_counter() - start
    rng = random.Random(7)
    statuses = []
    for i in range(8):
        store = tmp_path / f"t{i}.duckdb"
        for _kill in range(2):  # the resume is killed again, then completed
            proc = subprocess.Popen(
                command + [str(store)] + options,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
            )
            time.sleep(rng.uniform(0.3, 0.95) * whole)
            proc.send_signal(signal.SIGKILL)
            proc.communicate(timeout=60)
            if store.exists():
                _consistency(store)
        statuses.append(_resume_and_compare(folder, store, reference, may_be_complete=True))
    assert statuses.count("skipped") < len(statuses), statuses  # some kills landed mid-import
