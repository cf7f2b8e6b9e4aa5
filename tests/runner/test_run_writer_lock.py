"""`glotbench run` decides and writes under the store's writer lock (issue 24, leftover 1).

An import of runs with the same keys and other statistics races a real
``glotbench run`` of the tiny suite: the store must end with every key once,
all from one side (the import's whole snapshot, or none of it), and the
loser says so — the import refuses naming the stored run, or the run notes
each job's run it did not write. A ``kill -9`` of a run leaves no writer lock
held (the operating system frees ``flock`` locks with their process).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from glotbench import api
from glotbench.store import Store
from glotbench.store.schema import stats_digest
from glotbench.store.writer_lock import live_owner, writer_lock, writer_lock_path

from .conftest import ROOT, store_digests, write_suite

CLI = [sys.executable, "-c", "from glotbench.cli import main; main()"]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "GLOTBENCH_LOCK_TIMEOUT": "120"}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The suite, an undisturbed run's store and a snapshot of it with every statistic + 1."""
    folder = tmp_path_factory.mktemp("writer_lock_run")
    suite = write_suite(folder, iterations=1)
    reference = folder / "reference.duckdb"
    api.run_benchmark(suite, store=reference)
    api.export_store(folder / "snap", store=reference)
    runs = pd.read_parquet(folder / "snap" / "runs.parquet")
    examples = pd.read_parquet(folder / "snap" / "examples.parquet")
    examples = examples.sort_values(["run_id", "position"])
    examples["stats"] = [[x + 1.0 for x in s] for s in examples["stats"]]
    names = dict(zip(runs["run_id"], runs["stat_names"], strict=True))
    digests = {
        run_id: stats_digest(
            group["example_id"].tolist(),
            np.array(group["stats"].tolist(), dtype=float),
            tuple(names[run_id]),
        )
        for run_id, group in examples.groupby("run_id")
    }
    runs["stats_sha256"] = runs["run_id"].map(digests)
    conflicting = folder / "conflicting"
    conflicting.mkdir()
    runs.to_parquet(conflicting / "runs.parquet")
    examples.to_parquet(conflicting / "examples.parquet")
    return {"folder": folder, "suite": suite, "reference": reference, "conflicting": conflicting}


def _start_run(suite: Path, store: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*CLI, "run", str(suite), "--store", str(store)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=suite.parent, env=ENV,
    )  # fmt: skip


def _import(snapshot: Path, store: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*CLI, "import", "parquet", str(snapshot), "--store", str(store)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
    )  # fmt: skip


def _assert_each_key_once(store: Path) -> None:
    with Store.open(store, read_only=True) as handle:
        con = handle.connection
        assert con.execute("SELECT count(*) - count(DISTINCT run_id) FROM runs").fetchone() == (0,)
        twice = con.execute(
            "SELECT count(*) FROM (SELECT run_id, example_id FROM example_stats "
            "GROUP BY ALL HAVING count(*) > 1)"
        ).fetchone()
        assert twice == (0,)
        short = con.execute(
            "SELECT count(*) FROM runs r WHERE n_examples <> "
            "(SELECT count(*) FROM example_stats e WHERE e.run_id = r.run_id)"
        ).fetchone()
        assert short == (0,)
        unfinished = con.execute("SELECT count(*) FROM imports WHERE completed_at IS NULL")
        assert unfinished.fetchone() == (0,)


@pytest.mark.slow
@pytest.mark.parametrize("when", ["with the run", "after its first job"])
def test_import_racing_a_run_ends_with_one_side_and_a_clear_outcome(
    inputs: dict[str, Path], when: str, tmp_path: Path
) -> None:
    store = tmp_path / "raced.duckdb"
    run = _start_run(inputs["suite"], store)
    assert run.stderr is not None
    imp = None
    run_err: list[str] = []
    try:
        if when == "with the run":
            imp = _import(inputs["conflicting"], store)
        for line in run.stderr:
            run_err.append(line)
            if imp is None and line.startswith("stored "):
                imp = _import(inputs["conflicting"], store)
        run_out = run.stdout.read() if run.stdout else ""
        assert run.wait(timeout=300) == 0, "the run failed:\n" + "".join(run_err[-40:])
        assert imp is not None
        imp_out, imp_err = imp.communicate(timeout=300)
    finally:
        for proc in (run, imp):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
    _assert_each_key_once(store)
    stored = store_digests(store)
    reference = store_digests(inputs["reference"])
    with Store.open(store, read_only=True) as handle:
        n_runs = handle.connection.execute("SELECT count(*) FROM runs").fetchone()
    assert n_runs == (len(reference),)
    if imp.returncode == 0:  # the import went first: all its runs, the run wrote none of them
        assert all(stored[k] != reference[k] for k in reference), "a mix of both sides"
        skipped_all = f"{len(reference)}" in run_out and "already" in run_out
        noted = " ".join(run_out.split()).count("already stored with different statistics")
        assert noted or skipped_all or "skipped" in "".join(run_err), run_out
    else:  # the run went first: the import is refused as a whole, naming the stored run
        assert stored == reference
        assert "already stored with different statistics" in " ".join(imp_err.split()), imp_err
    if when == "after its first job":  # the run had stored a job before the import started
        assert imp.returncode != 0


@pytest.mark.slow
def test_kill_9_of_a_run_leaves_no_writer_lock_held(inputs: dict[str, Path], tmp_path: Path):
    for round_, delay in enumerate((0.0, 0.05, 0.3)):
        store = tmp_path / f"killed{round_}.duckdb"
        run = _start_run(inputs["suite"], store)
        assert run.stderr is not None
        try:
            for line in run.stderr:
                if line.startswith("stored "):
                    break
            time.sleep(delay)  # may land inside the next job's write, under the lock
            run.kill()  # SIGKILL
            run.wait(timeout=60)
        finally:
            if run.poll() is None:
                run.kill()
                run.wait()
        assert live_owner(store) is None
        started = time.monotonic()
        with writer_lock(store, timeout=0):  # free at once: nobody waits for a dead owner
            pass
        assert time.monotonic() - started < 1.0
        assert not writer_lock_path(store).exists()
        _assert_each_key_once(store)
        # the store takes the next writer: the conflicting import is refused for the stored runs
        done = api.show_store(store).counts["runs"]
        assert done >= 2  # the first job's two metrics
        proc = _import(inputs["conflicting"], store)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode != 0
        assert "already stored with different statistics" in " ".join(err.split())
