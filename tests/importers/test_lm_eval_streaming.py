"""Streaming lm-eval import: samples read a batch at a time, runs spilled to disk."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from glotbench.errors import InputError
from glotbench.importers import lm_eval as lm_eval_module
from glotbench.importers import lm_eval_samples
from glotbench.importers.lm_eval import import_lm_eval, read_lm_eval
from glotbench.ingest import staging as staging_module
from glotbench.ingest.spool import RunSpool
from glotbench.store import Store

SRC = Path(__file__).resolve().parents[2] / "src"
STAMP = "2026-01-01T00-00-00.000000"


def make_folder(root: Path, tasks: int, per_task: int, seed: int = 0) -> Path:
    """An lm-eval output folder: ``tasks`` tasks with acc and acc_norm per sample."""
    rng = np.random.default_rng(seed)
    out = root / "model-x"
    out.mkdir(parents=True)
    results, configs = {}, {}
    for t in range(tasks):
        task = f"xnli_{'abcdefghijklmnopqrstuvwxyz'[t % 26]}{'abcdefghij'[t // 26]}"
        acc = (rng.random(per_task) < 0.6).astype(float)
        acc_norm = (rng.random(per_task) < 0.5).astype(float)
        with open(out / f"samples_{task}_{STAMP}.jsonl", "w", encoding="utf-8") as fh:
            for i in range(per_task):
                rec = {
                    "doc_id": i,
                    "doc": {"premise": "p", "hypothesis": "h"},
                    "filter": "none",
                    "metrics": ["acc", "acc_norm"],
                    "acc": acc[i],
                    "acc_norm": acc_norm[i],
                }
                fh.write(json.dumps(rec) + "\n")
        results[task] = {"alias": task, "acc,none": acc.mean(), "acc_norm,none": acc_norm.mean()}
        configs[task] = {
            "metric_list": [
                {"metric": "acc", "aggregation": "mean"},
                {"metric": "acc_norm", "aggregation": "mean"},
            ]
        }
    payload = {
        "results": results,
        "configs": configs,
        "config": {"model": "hf", "model_args": "pretrained=model-x", "fewshot_seed": 1},
        "model_name": "model-x",
    }
    (out / f"results_{STAMP}.json").write_text(json.dumps(payload), encoding="utf-8")
    return root


def _contents(path: Path) -> tuple[list[tuple], list[tuple], list[tuple]]:
    with Store.open(path, read_only=True) as s:
        con = s.connection
        return (
            con.execute(
                "SELECT run_id, model, task, language, metric, config_hash, n_examples, "
                "stats_sha256 FROM runs ORDER BY run_id"
            ).fetchall(),
            con.execute(
                "SELECT run_id, position, example_id, stats FROM example_stats ORDER BY ALL"
            ).fetchall(),
            con.execute(
                "SELECT model, task, language, metric, score FROM scores ORDER BY ALL"
            ).fetchall(),
        )


@pytest.mark.slow
def test_files_are_read_in_batches_and_runs_spilled_before_the_next_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = make_folder(tmp_path / "out", tasks=8, per_task=40)
    events: list[str] = []
    read_columnar = lm_eval_samples._read_columnar
    add = RunSpool.add

    def reading(con, paths, names):  # type: ignore[no-untyped-def]
        events.append(f"read {len(paths)}")
        return read_columnar(con, paths, names)

    def adding(self, ids, stats, lines=None):  # type: ignore[no-untyped-def]
        events.append("spill")
        return add(self, ids, stats, lines)

    monkeypatch.setattr(lm_eval_samples, "_read_columnar", reading)
    monkeypatch.setattr(RunSpool, "add", adding)
    # a batch holds about two files' JSON
    size = next((folder / "model-x").glob("samples_*")).stat().st_size
    monkeypatch.setattr(lm_eval_samples, "SAMPLES_BATCH_BYTES", 2 * size)
    with Store.open(tmp_path / "a.duckdb") as s:
        result = import_lm_eval(s, folder)
    assert result.runs_added == 16 and result.examples_added == 16 * 40
    # each batch of 2 files is read, then its 4 runs (acc, acc_norm) go to disk
    assert events == ["read 2", "spill", "spill", "spill", "spill"] * 4
    assert not list(tmp_path.glob(".glotbench-staging-*"))  # the spool is removed

    # the same store content as holding every run in memory
    monkeypatch.undo()
    with Store.open(tmp_path / "b.duckdb") as s:
        from glotbench.importers.writer import write_import

        data = read_lm_eval(folder)
        assert all(r.spool is None and r.example_ids.size == 40 for r in data.runs)
        write_import(
            s,
            kind="lm-eval",
            source=data.root,
            sha="x" * 64,
            runs=data.runs,
            score_rows=data.scores,
            n_files=len(data.files),
        )
    a, b = _contents(tmp_path / "a.duckdb"), _contents(tmp_path / "b.duckdb")
    assert a[0] == b[0] and a[1] == b[1] and a[2] == b[2]


def test_spilled_runs_keep_records_only(tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "out", tasks=3, per_task=25)
    with RunSpool(tmp_path) as spool:
        data = read_lm_eval(folder, spool=spool)
        assert len(spool) == 6
        for run in data.runs:
            assert run.spool is spool and run.example_ids.size == 0 and run.n_examples == 25
            ids, stats = run.arrays()
            assert ids.tolist() == [str(i) for i in range(25)] and stats.shape == (25, 2)
            np.testing.assert_array_equal(run.stat_totals(), stats.sum(axis=0))
    assert not list(tmp_path.glob(".glotbench-staging-*"))


def test_bad_sample_deep_in_a_large_file_names_file_line_field_and_store_is_unchanged(
    tmp_path: Path,
) -> None:
    folder = make_folder(tmp_path / "out", tasks=4, per_task=3000)
    bad = sorted((folder / "model-x").glob("samples_*"))[2]
    lines = bad.read_text(encoding="utf-8").splitlines()
    rec = json.loads(lines[2716])
    rec["acc_norm"] = "0.5x"
    lines[2716] = json.dumps(rec)
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")

    store = tmp_path / "s.duckdb"
    with Store.open(store) as s:  # a store holding another import already
        import_lm_eval(s, make_folder(tmp_path / "other", tasks=1, per_task=5, seed=3), model="o")
    before = _contents(store)
    with Store.open(store) as s, pytest.raises(InputError) as exc:
        import_lm_eval(s, folder)
    assert exc.value.path == str(bad) and exc.value.line == 2717
    assert exc.value.field == "acc_norm" and "0.5x" in str(exc.value)
    assert _contents(store) == before
    assert not list(tmp_path.glob(".glotbench-staging-*"))  # the spool is removed


KILL_CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from glotbench.store import Store
    from glotbench.store import runs as runs_module
    from glotbench.importers.lm_eval import import_lm_eval
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
        import_lm_eval(s, sys.argv[1])
    """
)


@pytest.mark.slow
def test_killed_lm_eval_import_resumes(tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "out", tasks=6, per_task=30)
    store = tmp_path / "s.duckdb"
    proc = subprocess.run(
        [sys.executable, "-c", KILL_CHILD, str(folder), str(store)],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == -9, proc.stderr
    assert list(tmp_path.glob(".glotbench-staging-*"))  # the killed process's spool
    with Store.open(store, read_only=True) as s:
        assert s.summary().counts["runs"] == 3  # batches of 1 and 2 runs committed
    with Store.open(store) as s:
        result = import_lm_eval(s, folder)
    assert (result.status, result.runs_added, result.runs_skipped) == ("resumed", 9, 3)
    assert not list(tmp_path.glob(".glotbench-staging-*"))  # stale spool removed too
    with Store.open(tmp_path / "ref.duckdb") as s:
        import_lm_eval(s, folder)
    ours, ref = _contents(store), _contents(tmp_path / "ref.duckdb")
    assert ours[0] == ref[0] and ours[1] == ref[1] and ours[2] == ref[2]


def test_stale_spool_of_a_dead_process_is_removed(tmp_path: Path) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    stale = tmp_path / f"{staging_module.STAGING_PREFIX}{dead}-xyz"
    stale.mkdir()
    (stale / "run-0.arrow").write_bytes(b"x")
    with RunSpool(tmp_path):
        assert not stale.exists()


FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "importers" / "lm_eval_out"


def _import(folder: Path, store: Path, chunk_rows: int | None) -> tuple:
    with Store.open(store) as s:
        import_lm_eval(s, folder, chunk_rows=chunk_rows)
    return _contents(store)


@pytest.fixture()
def streamed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many columns each streamed file gave (a fallback to the strict reader: none)."""
    seen: list[int] = []
    original = lm_eval_module._stream_samples

    def spy(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        got = original(*args, **kwargs)
        if got is not None:
            seen.append(len(got))
        return got

    monkeypatch.setattr(lm_eval_module, "_stream_samples", spy)
    return seen


@pytest.mark.slow
@pytest.mark.parametrize("chunk_rows", [1, 7, 64])
def test_chunked_import_equals_the_one_chunk_import(
    tmp_path: Path, chunk_rows: int, streamed: list[int]
) -> None:
    # runs of 700 samples: 1, 7 and 64 samples per chunk against the whole-file read
    # (not streamed) and the one-chunk stream; a second filter starts mid-file
    folder = make_folder(tmp_path / "out", tasks=2, per_task=700)
    sample = sorted((folder / "model-x").glob("samples_*.jsonl"))[0]
    lines = sample.read_text(encoding="utf-8").splitlines()
    extra = []
    for line in lines[300:]:
        rec = json.loads(line)
        rec["filter"] = "strict-match"
        extra.append(json.dumps(rec))
    sample.write_text("\n".join([*lines, *extra]) + "\n", encoding="utf-8")
    whole = _import(folder, tmp_path / "whole.duckdb", None)
    one_chunk = _import(folder, tmp_path / "one.duckdb", 10**6)
    assert streamed == [4, 2]  # both files streamed (one with two filters), none fell back
    chunked = _import(folder, tmp_path / "chunked.duckdb", chunk_rows)
    assert streamed == [4, 2, 4, 2]
    assert len(whole[0]) == 6  # 2 tasks × (acc, acc_norm), the second filter of one task
    assert {r[6] for r in whole[0]} == {700, 400}
    assert chunked == one_chunk == whole


@pytest.mark.slow
def test_chunked_import_of_the_fixture_keeps_run_ids_and_digests(
    tmp_path: Path, streamed: list[int]
) -> None:
    whole = _import(FIXTURE, tmp_path / "whole.duckdb", None)
    assert streamed == []  # small files: read whole
    chunked = _import(FIXTURE, tmp_path / "chunked.duckdb", 2)
    assert streamed  # two samples a chunk
    assert whole[0] and chunked == whole


def test_doc_id_repeated_across_chunks_is_refused_as_in_one_piece(tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "out", tasks=1, per_task=300)
    sample = next((folder / "model-x").glob("samples_*.jsonl"))
    lines = sample.read_text(encoding="utf-8").splitlines()
    rec = json.loads(lines[250])
    rec["doc_id"] = 3  # line 251 repeats line 4's doc_id, 2 chunks apart
    lines[250] = json.dumps(rec)
    sample.write_text("\n".join(lines) + "\n", encoding="utf-8")
    messages = []
    for chunk_rows in (None, 100):
        with Store.open(tmp_path / f"s{chunk_rows}.duckdb") as s:
            with pytest.raises(InputError) as err:
                import_lm_eval(s, folder, chunk_rows=chunk_rows)
        messages.append(str(err.value))
    assert messages[0] == messages[1]
    assert "line 251" in messages[0] and "doc_id 3 occurs twice" in messages[0]
