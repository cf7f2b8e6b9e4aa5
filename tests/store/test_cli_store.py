"""The store commands as a user runs them: import, show, export, errors, resume after SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from glotbench.store import Store

from ..conftest import CliResult
from .conftest import SCORES_CSV, examples_frame, store_contents


@pytest.mark.slow
def test_import_show_export_round_trip(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    store = tmp_path / "results.duckdb"
    scores = tmp_path / "scores.csv"
    scores.write_text(SCORES_CSV)
    examples = tmp_path / "examples.jsonl"
    examples_frame(models=("a", "b"), seeds=(0, 1), n=6).to_json(
        examples, orient="records", lines=True
    )

    result = cli("import", "scores", scores, "--store", store)
    assert result.exit_code == 0, result.stderr
    assert "imported" in result.out and "added 4 score(s)" in result.out

    result = cli("import", "examples", examples, "--store", store, "--json")
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert (payload["status"], payload["runs_added"], payload["rows"]) == ("imported", 4, 24)

    result = cli("import", "examples", examples, "--store", store)
    assert result.exit_code == 0 and "skipped" in result.out

    result = cli("show", "--store", store)
    assert result.exit_code == 0, result.stderr
    assert "4 runs, 24 example rows, 4 scores" in result.out
    for word in ("mBERT", "XLM-R", "accuracy", "By model, task and language"):
        assert word in result.out

    result = cli("show", "--store", store, "--json")
    summary = json.loads(result.stdout)
    assert summary["counts"]["runs"] == 4 and summary["counts"]["scores"] == 4
    rows = {(r["model"], r["language"]): r for r in summary["by_model_task_language"]}
    assert rows[("a", "en")]["runs"] == 2 and rows[("a", "en")]["examples"] == 12

    snapshot = tmp_path / "snapshot"
    result = cli("export", "--out", snapshot, "--store", store, "--json")
    assert result.exit_code == 0, result.stderr
    assert len(json.loads(result.stdout)["files"]) == 5
    copy = tmp_path / "copy.duckdb"
    result = cli("import", "parquet", snapshot, "--store", copy, "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["runs_added"] == 4
    a, b = store_contents(store), store_contents(copy)
    assert a is not None and b is not None
    assert all(a[t] == b[t] for t in ("runs", "example_stats", "scores"))

    result = cli("export", "--out", tmp_path / "runs.csv", "--table", "runs", "--store", store)
    assert result.exit_code == 0, result.stderr
    assert len(pd.read_csv(tmp_path / "runs.csv")) == 4


@pytest.mark.slow
def test_show_counts_the_seeds_of_imported_scores(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """Imported scores with a seed column count their distinct seeds (runs and scores
    pooled); scores without seeds count none."""
    store = tmp_path / "s.duckdb"
    scores = tmp_path / "s.csv"
    scores.write_text(
        "model,task,language,metric,score,seed\n"
        "A,xnli,en,accuracy,0.80,0\nA,xnli,en,accuracy,0.81,1\nA,xnli,en,accuracy,0.79,2\n"
        "B,xnli,en,accuracy,0.70,\n"
    )
    assert cli("import", "scores", scores, "--store", store).exit_code == 0
    result = cli("show", "--store", store, "--json")
    assert result.exit_code == 0, result.stderr
    rows = {r["model"]: r for r in json.loads(result.stdout)["by_model_task_language"]}
    assert rows["A"]["seeds"] == 3 and rows["A"]["scores"] == 3
    assert rows["B"]["seeds"] == 0 and rows["B"]["scores"] == 1


@pytest.mark.slow
def test_default_store_is_in_the_working_directory(
    tmp_path: Path, cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GLOTBENCH_STORE", raising=False)
    (tmp_path / "s.csv").write_text(SCORES_CSV)
    assert cli("import", "scores", "s.csv").exit_code == 0
    assert (tmp_path / "glotbench.duckdb").exists()
    monkeypatch.setenv("GLOTBENCH_STORE", str(tmp_path / "env.duckdb"))
    assert cli("import", "scores", "s.csv").exit_code == 0
    assert (tmp_path / "env.duckdb").exists()


def test_store_errors_exit_with_code_3(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    result = cli("show", "--store", tmp_path / "missing.duckdb")
    assert result.exit_code == 3
    assert "error:" in result.err and "no store at" in result.err
    assert "Traceback" not in result.stderr
    result = cli("export", "--out", tmp_path / "x.csv", "--store", tmp_path / "missing.duckdb")
    assert result.exit_code == 3


@pytest.mark.slow
def test_every_store_command_documents_its_options(cli: Callable[..., CliResult]) -> None:
    commands = [
        ("import", "scores"),
        ("import", "examples"),
        ("import", "parquet"),
        ("show",),
        ("export",),
    ]
    for command in commands:
        result = cli(*command, "--help")
        assert result.exit_code == 0
        for option in ("--store", "--json", "GLOTBENCH_STORE"):
            assert option in result.out, (command, option)
    assert "--labels" in cli("import", "examples", "--help").out
    export_help = cli("export", "--help").out
    assert "--table" in export_help and "--out" in export_help and "snapshot" in export_help


@pytest.mark.slow
def test_python_m_glotbench_reports_bad_rows(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("model,task,language,metric,score\nm,t,en,accuracy,0.5\nm,t,de,accuracy,?\n")
    store = tmp_path / "s.duckdb"
    proc = subprocess.run(
        [sys.executable, "-m", "glotbench", "import", "scores", str(bad), "--store", str(store)],
        capture_output=True,
        text=True,
        timeout=120,
        # wide enough that the message is not folded inside the path (pytest-xdist's
        # temporary paths are longer, and a fold before the comma split "bad.csv ,")
        env={**os.environ, "COLUMNS": "400"},
    )
    assert proc.returncode == 2
    message = " ".join(proc.stderr.split())
    assert f"{bad}, line 3, field 'score': score is not a number: '?'" in message
    assert "Traceback" not in proc.stderr
    assert not store.exists()


@pytest.mark.slow
def test_sigkill_during_examples_import_leaves_only_complete_runs_and_rerun_completes(
    tmp_path: Path,
) -> None:
    n_models, n_languages, n_examples = 20, 10, 300  # 200 runs
    frame = examples_frame(
        models=[f"model{i:02d}" for i in range(n_models)],
        languages=[f"l{i}" for i in range(n_languages)],
        n=n_examples,
    )
    big = tmp_path / "BIG.csv"
    frame.to_csv(big, index=False)
    store = tmp_path / "store.duckdb"
    wal = tmp_path / "store.duckdb.wal"
    command = [
        sys.executable,
        "-m",
        "glotbench",
        "import",
        "examples",
        str(big),
        "--store",
        str(store),
    ]

    rows_per_run = frame.groupby(["model", "language"]).size()

    def kill_when_wal_exceeds(threshold: int) -> None:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            # the write-ahead log grows by every committed batch of runs: kill once some are in
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                if wal.exists() and wal.stat().st_size > threshold:
                    break
                assert proc.poll() is None, "the import finished before it could be killed"
                time.sleep(0.002)
            else:
                pytest.fail("no run was committed within 120 s")
            os.kill(proc.pid, signal.SIGKILL)
        finally:
            proc.wait(timeout=60)
            proc.stdout.close()  # type: ignore[union-attr]
            proc.stderr.close()  # type: ignore[union-attr]
        assert proc.returncode == -signal.SIGKILL

    # The kill may land while the first batch's commit is being written (the log then holds
    # an uncommitted tail that recovery discards): the store must be consistent after every
    # kill, and a later kill, after a resumed start, finds some runs committed.
    for threshold in (150_000, 400_000, 1_000_000):
        kill_when_wal_exceeds(threshold)
        with Store.open(store, read_only=True) as s:
            runs = s.runs.frame()
            counts = s.connection.execute(
                "SELECT run_id, count(*) FROM example_stats GROUP BY run_id"
            ).fetchall()
            summary = s.summary()
        stored_counts = dict(counts)
        assert set(stored_counts) == set(runs["run_id"])  # no statistics without a complete run
        for row in runs.itertuples():
            assert (
                row.n_examples
                == stored_counts[row.run_id]
                == rows_per_run[(row.model, row.language)]
            )
        if len(runs) > 0:
            break
    assert 0 < len(runs) < n_models * n_languages, "expected a partial import"
    assert len(summary.incomplete_imports) == 1
    assert summary.incomplete_imports[0]["running"] is None  # its process is dead
    partial = len(runs)

    proc2 = subprocess.run([*command, "--json"], capture_output=True, text=True, timeout=300)
    assert proc2.returncode == 0, proc2.stderr
    payload = json.loads(proc2.stdout)
    assert payload["status"] == "resumed"
    assert payload["runs_skipped"] == partial
    assert payload["runs_added"] == n_models * n_languages - partial

    with Store.open(store, read_only=True) as s:
        summary = s.summary()
        assert summary.counts["runs"] == n_models * n_languages
        assert summary.counts["examples"] == len(frame)
        assert summary.incomplete_imports == []
        matrix = s.stats.matrix("xnli", "xnli", "l3", "accuracy")
    expected = frame[frame["language"] == "l3"].groupby("model")["score"].mean()
    np.testing.assert_allclose(matrix.scores(), expected.loc[matrix.models].to_numpy())


@pytest.mark.slow
def test_ctrl_c_during_examples_import_explains_how_to_resume(
    tmp_path: Path, cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch
) -> None:
    from glotbench.store import runs as store_runs
    from glotbench.store.runs import Runs as RunsClass

    path = tmp_path / "e.csv"
    examples_frame(models=("a", "b", "c"), n=4).to_csv(path, index=False)
    store = tmp_path / "s.duckdb"
    original = RunsClass._insert_batch
    calls = {"n": 0}

    def interrupted(self, con, runs):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 2:  # Ctrl-C while the second batch is written
            raise KeyboardInterrupt
        return original(self, con, runs)

    # batches of 1 run, then 2: the first run is committed before the interruption
    monkeypatch.setattr(store_runs, "FIRST_BATCH_RUNS", 1)
    monkeypatch.setattr(RunsClass, "_insert_batch", interrupted)
    result = cli("import", "examples", path, "--store", store)
    assert result.exit_code == 130
    assert "run the same command again to resume" in result.err
    monkeypatch.setattr(RunsClass, "_insert_batch", original)
    assert "interrupted import" in cli("show", "--store", store).out
    result = cli("import", "examples", path, "--store", store, "--json")
    payload = json.loads(result.stdout)
    assert (payload["status"], payload["runs_added"], payload["runs_skipped"]) == ("resumed", 2, 1)
