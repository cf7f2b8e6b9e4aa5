"""Streaming ``import examples``: chunked validation, staging, whole runs, flat memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from glotbench.errors import InputError
from glotbench.ingest.example_validation import validate_examples
from glotbench.ingest.readers import read_tidy
from glotbench.ingest.staging_examples import stage_examples
from glotbench.ingest.tidy import import_examples_file
from glotbench.store import Store
from glotbench.store import runs as store_runs
from glotbench.store.runs import Runs as RunsClass

from ..store.conftest import examples_frame, label_frame, store_contents

SRC = Path(__file__).resolve().parents[2] / "src"


def _interleaved(n: int = 9) -> pd.DataFrame:
    """Four runs whose records alternate (each run spans the whole file), with positions."""
    frame = examples_frame(models=("a", "b"), seeds=(0, 1), n=n)
    frame["source_position"] = frame.groupby(["model", "seed"]).cumcount() * 3 + 1
    order = np.argsort(frame.groupby(["model", "seed"]).cumcount().to_numpy(), kind="stable")
    return frame.iloc[order].reset_index(drop=True)


def _runs(path: Path) -> tuple[list[tuple], list[tuple]]:
    with Store.open(path, read_only=True) as s:
        con = s.connection
        runs = con.execute(
            "SELECT run_id, model, seed, metric, stat_names, n_examples, stats_sha256 "
            "FROM runs ORDER BY run_id"
        ).fetchall()
        rows = con.execute(
            "SELECT run_id, position, example_id, stats, source_position FROM example_stats "
            "ORDER BY run_id, position"
        ).fetchall()
    return runs, rows


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_chunked_import_stores_the_same_runs_as_the_whole_file_path(
    tmp_path: Path, suffix: str
) -> None:
    frame = _interleaved()
    path = tmp_path / f"e{suffix}"
    if suffix == ".csv":
        frame.to_csv(path, index=False)
    elif suffix == ".jsonl":
        frame.to_json(path, orient="records", lines=True)
    else:
        frame.to_parquet(path, index=False)
    # reference: the whole-file validation, written with write_run_batches
    data = validate_examples(read_tidy(path))
    with Store.open(tmp_path / "ref.duckdb") as s:
        s.runs.write_batches(
            (r.record, r.example_ids, r.stats, r.source_positions) for r in data.runs
        )
    for chunk in (1, 5, 7, 100_000):
        store = tmp_path / f"s{chunk}.duckdb"
        with Store.open(store) as s:
            result = import_examples_file(s, path, chunk_rows=chunk, batch_rows=7)
        assert (result.runs_added, result.rows) == (4, len(frame))
        assert _runs(store) == _runs(tmp_path / "ref.duckdb"), chunk


def test_label_metric_in_chunks_matches(tmp_path: Path) -> None:
    path = tmp_path / "l.csv"
    label_frame(n=13).to_csv(path, index=False)
    with Store.open(tmp_path / "a.duckdb") as s:
        import_examples_file(s, path, chunk_rows=4)
    with Store.open(tmp_path / "b.duckdb") as s:
        import_examples_file(s, path)
    assert _runs(tmp_path / "a.duckdb") == _runs(tmp_path / "b.duckdb")


@pytest.mark.slow
def test_error_in_the_last_chunk_names_its_line_and_leaves_the_store_unchanged(
    tmp_path: Path,
) -> None:
    frame = examples_frame(models=("a", "b", "c"), n=20)
    frame["score"] = frame["score"].astype(object)
    frame.loc[len(frame) - 2, "score"] = "oops"
    path = tmp_path / "e.csv"
    frame.to_csv(path, index=False)
    store = tmp_path / "s.duckdb"
    with Store.open(store) as s:  # a store holding something already
        import_examples_file(s, _write(tmp_path / "other.csv", examples_frame(models=("z",))))
    before = store_contents(store)
    with Store.open(store) as s, pytest.raises(InputError) as exc:
        import_examples_file(s, path, chunk_rows=8)
    assert exc.value.line == len(frame) - 2 + 2  # header + 1-based
    assert exc.value.field == "score" and "not a number: 'oops'" in str(exc.value)
    assert store_contents(store) == before
    assert not list(tmp_path.glob(".glotbench-staging-*"))  # the staging file is removed


def test_duplicate_example_in_another_chunk_names_both_lines(tmp_path: Path) -> None:
    frame = examples_frame(models=("a",), n=10)
    frame = pd.concat([frame, frame.iloc[[3]]], ignore_index=True)
    path = _write(tmp_path / "e.jsonl", frame)
    with Store.open(tmp_path / "s.duckdb") as s, pytest.raises(InputError) as exc:
        import_examples_file(s, path, chunk_rows=4)
    assert exc.value.line == 11 and exc.value.field == "example_id"
    assert "the same key is on line 4" in str(exc.value)
    # the whole-file path reports the same place
    with Store.open(tmp_path / "t.duckdb") as s, pytest.raises(InputError) as exc2:
        import_examples_file(s, path)
    assert exc2.value.line == 11 and "line 4" in str(exc2.value)


def test_source_positions_checked_across_chunks(tmp_path: Path) -> None:
    frame = examples_frame(models=("a",), n=10)
    frame["source_position"] = np.arange(10)
    frame.loc[8, "source_position"] = 2  # repeats the position of row 2, in another chunk
    path = _write(tmp_path / "e.csv", frame)
    with Store.open(tmp_path / "s.duckdb") as s, pytest.raises(InputError) as exc:
        import_examples_file(s, path, chunk_rows=4)
    assert exc.value.line == 10 and "occurs twice" in str(exc.value)
    frame["source_position"] = np.arange(10).astype(float)
    frame.loc[9, "source_position"] = np.nan  # given for the run's other records only
    path = _write(tmp_path / "f.csv", frame)
    with Store.open(tmp_path / "s.duckdb") as s, pytest.raises(InputError) as exc:
        import_examples_file(s, path, chunk_rows=4)
    assert exc.value.line == 11 and "empty here but given" in str(exc.value)


def test_labels_differing_between_chunks_is_an_error(tmp_path: Path) -> None:
    a = label_frame(models=("a",), labels=("NEG", "POS"), n=4)
    b = label_frame(models=("a",), labels=("NEG", "POS", "NEU"), n=4)
    b["example_id"] = [f"x{i}" for i in range(4)]
    path = tmp_path / "l.jsonl"
    with open(path, "w", encoding="utf-8") as fh:
        for frame in (a, b):
            for rec in frame.to_dict(orient="records"):
                fh.write(json.dumps(rec) + "\n")
    with Store.open(tmp_path / "s.duckdb") as s, pytest.raises(InputError) as exc:
        import_examples_file(s, path, chunk_rows=4)
    assert exc.value.line == 5 and "labels must be the same" in str(exc.value)


@pytest.mark.slow
def test_interrupted_streaming_import_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path / "e.csv", _interleaved(n=6))
    store = tmp_path / "s.duckdb"
    original = RunsClass._insert_batch
    calls = {"n": 0}

    def flaky(self: RunsClass, con, runs):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return original(self, con, runs)

    monkeypatch.setattr(store_runs, "FIRST_BATCH_RUNS", 1)
    monkeypatch.setattr(RunsClass, "_insert_batch", flaky)
    with Store.open(store) as s, pytest.raises(KeyboardInterrupt):
        import_examples_file(s, path, chunk_rows=5)
    monkeypatch.setattr(RunsClass, "_insert_batch", original)
    with Store.open(store, read_only=True) as s:
        assert s.summary().counts["runs"] == 1
    with Store.open(store) as s:
        result = import_examples_file(s, path, chunk_rows=5)
    assert (result.status, result.runs_added, result.runs_skipped) == ("resumed", 3, 1)
    with Store.open(tmp_path / "ref.duckdb") as s:
        import_examples_file(s, path)
    assert _runs(store) == _runs(tmp_path / "ref.duckdb")


def test_staging_yields_whole_runs_in_file_order(tmp_path: Path) -> None:
    path = _write(tmp_path / "e.csv", _interleaved(n=5))
    with stage_examples(path, chunk_rows=3, work_dir=tmp_path) as staged:
        assert [r.record.model for r in staged.runs] == ["a", "a", "b", "b"]
        runs = list(staged.iter_runs(batch_rows=2))
        assert [r.record.n_examples for r in runs] == [5, 5, 5, 5]
        assert [list(r.example_ids) for r in runs] == [[f"en-{i}" for i in range(5)]] * 4
        assert list(runs[0].source_positions) == [1, 4, 7, 10, 13]
        assert [r.record.seed for r in staged.iter_runs([3, 1])] == [1, 1]
        work = staged._dir
    assert not work.exists()


@pytest.mark.parametrize("read_rows", [1, 7, 12])
def test_staged_runs_read_back_in_blocks_equal_the_whole_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, read_rows: int
) -> None:
    """Blocks of whole runs (smaller than one run, several runs, a skipped run) give the
    runs, examples and statistics of the whole-file validation, in file order."""
    import glotbench.ingest.staging_examples as staging_module

    monkeypatch.setattr(staging_module, "READ_ROWS", read_rows)
    path = _write(tmp_path / "e.csv", _interleaved(n=5))
    expected = validate_examples(read_tidy(path)).runs
    with stage_examples(path, chunk_rows=3, work_dir=tmp_path) as staged:
        runs = list(staged.iter_runs(batch_rows=2))
        assert [r.record.run_id for r in runs] == [r.record.run_id for r in expected]
        for got, want in zip(runs, expected, strict=True):
            assert list(got.example_ids) == list(want.example_ids)
            np.testing.assert_array_equal(got.stats, want.stats)
            np.testing.assert_array_equal(got.source_positions, want.source_positions)
        kept = [r.record.run_id for r in staged.iter_runs([0, 2, 3])]
        assert kept == [expected[i].record.run_id for i in (0, 2, 3)]


CHILD = textwrap.dedent(
    """
    import json, resource, sys
    import numpy as np
    from glotbench.store import Store
    from glotbench.ingest.tidy import import_examples_file
    rows, path, store = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    runs = rows // 5000
    with open(path, "w") as fh:
        fh.write("model,task,language,seed,example_id,metric,score\\n")
        for r in range(runs):
            fh.writelines(f"m{r},t,xx,0,e{i},accuracy,{i % 2}\\n" for i in range(5000))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with Store.open(store) as s:
        res = import_examples_file(s, path, chunk_rows=20_000, batch_rows=20_000)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"before": before / 1024, "peak": peak / 1024, "runs": res.runs_added}))
    """
)


def _peak_mb(tmp_path: Path, rows: int) -> dict[str, float]:
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            CHILD,
            str(rows),
            str(tmp_path / f"e{rows}.csv"),
            str(tmp_path / f"s{rows}.duckdb"),
        ],
        check=True,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_peak_memory_does_not_grow_with_the_file(tmp_path: Path) -> None:
    """Import 100k and 500k rows in fresh processes: the peak RSS grows far less than the file.

    The whole-file path needed ~0.8 GB per million rows (~320 MB more for the
    larger file); streaming stays within the chunk, the largest run and
    DuckDB's buffers (measured: 227 vs 300 MB, the staging and store buffers
    filling; from 3 M to 10 M rows the benchmark grows by a few MB).
    """
    small = _peak_mb(tmp_path, 100_000)
    large = _peak_mb(tmp_path, 500_000)
    assert (small["runs"], large["runs"]) == (20, 100)
    assert large["peak"] - small["peak"] < 100, (small, large)


def _write(path: Path, frame: pd.DataFrame) -> Path:
    if path.suffix == ".jsonl":
        frame.to_json(path, orient="records", lines=True)
    else:
        frame.to_csv(path, index=False)
    return path


def test_parquet_error_in_a_later_chunk_names_the_file_row(tmp_path: Path) -> None:
    frame = examples_frame(models=("a", "b"), n=10)
    frame.loc[17, "score"] = np.inf
    path = tmp_path / "e.parquet"
    frame.to_parquet(path, index=False)
    with Store.open(tmp_path / "s.duckdb") as s, pytest.raises(InputError) as exc:
        import_examples_file(s, path, chunk_rows=6)
    assert "row 18" in str(exc.value) and exc.value.field == "score"
    assert "infinite" in str(exc.value)


def test_staging_folders_of_dead_processes_are_removed(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead = tmp_path / f".glotbench-staging-{proc.stdout.strip()}-abc"
    alive = tmp_path / f".glotbench-staging-{os.getpid()}-abc"
    for folder in (dead, alive):
        folder.mkdir()
        (folder / "staging.duckdb").write_bytes(b"x")
    path = _write(tmp_path / "e.csv", examples_frame(models=("a",), n=3))
    with Store.open(tmp_path / "s.duckdb") as s:
        import_examples_file(s, path)
    assert not dead.exists() and alive.exists()


KILL_CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from glotbench.store import Store
    from glotbench.store import runs as runs_module
    from glotbench.ingest.tidy import import_examples_file
    original = runs_module.Runs._insert_batch
    calls = {"n": 0}

    def killing(self, con, runs):
        calls["n"] += 1
        if calls["n"] == 3:  # inside the third batch's transaction
            os.kill(os.getpid(), signal.SIGKILL)
        return original(self, con, runs)

    from glotbench.store import runs as store_runs

    store_runs.FIRST_BATCH_RUNS = 1
    runs_module.Runs._insert_batch = killing
    with Store.open(sys.argv[2]) as s:
        import_examples_file(s, sys.argv[1], chunk_rows=7)
    """
)


@pytest.mark.slow
def test_killed_streaming_import_resumes(tmp_path: Path) -> None:
    path = _write(tmp_path / "e.csv", examples_frame(models=("a", "b", "c", "d"), seeds=(0, 1)))
    store = tmp_path / "s.duckdb"
    proc = subprocess.run(
        [sys.executable, "-c", KILL_CHILD, str(path), str(store)],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == -9, proc.stderr
    assert list(tmp_path.glob(".glotbench-staging-*"))  # left behind by the killed process
    with Store.open(store, read_only=True) as s:
        assert s.summary().counts["runs"] == 3  # batches of 1 and 2 runs committed
    with Store.open(store) as s:
        result = import_examples_file(s, path, chunk_rows=7)
    assert (result.status, result.runs_added, result.runs_skipped) == ("resumed", 5, 3)
    assert not list(tmp_path.glob(".glotbench-staging-*"))
    with Store.open(tmp_path / "ref.duckdb") as s:
        import_examples_file(s, path)
    assert _runs(store) == _runs(tmp_path / "ref.duckdb")
