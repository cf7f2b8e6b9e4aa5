"""Streaming ``import scores`` and Parquet snapshots: chunks, staging, one transaction."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from glotbench.errors import InputError
from glotbench.ingest import staging_scores as staging_module
from glotbench.ingest.snapshot import import_snapshot
from glotbench.ingest.tidy import import_scores_file
from glotbench.store import Store

from ..store.conftest import store_contents

SRC = Path(__file__).resolve().parents[2] / "src"


def scores_frame(n: int, seed: int = 0) -> pd.DataFrame:
    """``n`` distinct accuracy scores (keys differ by model, language and seed)."""
    rng = np.random.default_rng(seed)
    i = np.arange(n)
    return pd.DataFrame(
        {
            "model": [f"m{k % 7}" for k in i],
            "task": "xnli",
            "language": [f"l{(k // 7) % 11}" for k in i],
            "metric": "accuracy",
            "score": rng.uniform(0, 1, n).round(6),
            "seed": i // 77,
            "stderr": rng.uniform(0, 0.05, n).round(6),
            "n": 100,
            "note": [f"r{k}" for k in i],
        }
    )


def _write(path: Path, frame: pd.DataFrame) -> Path:
    if path.suffix == ".jsonl":
        frame.to_json(path, orient="records", lines=True)
    elif path.suffix == ".parquet":
        frame.to_parquet(path, index=False)
    else:
        frame.to_csv(path, index=False)
    return path


def _scores(path: Path) -> list[tuple]:
    with Store.open(path, read_only=True) as s:
        return s.connection.execute(
            "SELECT model, task, language, dataset, metric, seed, replicate, score, stderr, n, "
            "metadata FROM scores ORDER BY ALL"
        ).fetchall()


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_chunked_scores_import_matches_the_one_chunk_import(
    tmp_path: Path, suffix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path / f"s{suffix}", scores_frame(500))
    sizes: list[int] = []
    original = staging_module.validate_scores

    def counting(table, **kwargs):  # type: ignore[no-untyped-def]
        sizes.append(len(table))
        return original(table, **kwargs)

    monkeypatch.setattr(staging_module, "validate_scores", counting)
    with Store.open(tmp_path / "a.duckdb") as s:
        small = import_scores_file(s, path, chunk_rows=37, batch_rows=50)
    assert max(sizes) == 37 and len(sizes) == 14  # 500 rows validated 37 at a time
    sizes.clear()
    with Store.open(tmp_path / "b.duckdb") as s:
        whole = import_scores_file(s, path)
    assert sizes == [500]
    assert (small.rows, small.scores_added) == (whole.rows, whole.scores_added) == (500, 500)
    assert _scores(tmp_path / "a.duckdb") == _scores(tmp_path / "b.duckdb")
    stored = _scores(tmp_path / "a.duckdb")
    assert json.loads(stored[0][-1]) == {"note": "r0"}
    assert not list(tmp_path.glob(".glotbench-staging-*"))


@pytest.mark.slow
def test_bad_row_deep_in_a_large_file_names_file_line_field_and_store_is_unchanged(
    tmp_path: Path,
) -> None:
    frame = scores_frame(20_000)
    frame["score"] = frame["score"].astype(object)
    frame.loc[17_345, "score"] = "n/a?"
    path = _write(tmp_path / "s.csv", frame)
    store = tmp_path / "s.duckdb"
    with Store.open(store) as s:
        import_scores_file(s, _write(tmp_path / "first.csv", scores_frame(10, seed=1).iloc[:3]))
    before = store_contents(store)
    with Store.open(store) as s, pytest.raises(InputError) as exc:
        import_scores_file(s, path, chunk_rows=1000)
    assert exc.value.path == str(path) and exc.value.line == 17_345 + 2
    assert exc.value.field == "score" and "n/a?" in str(exc.value)
    assert store_contents(store) == before
    assert not list(tmp_path.glob(".glotbench-staging-*"))


def test_duplicate_key_in_another_chunk_names_both_lines(tmp_path: Path) -> None:
    frame = scores_frame(100)
    frame = pd.concat([frame, frame.iloc[[5]], frame.iloc[[7]]], ignore_index=True)
    path = _write(tmp_path / "s.jsonl", frame)
    messages = []
    for chunk_rows in (30, 1_000):  # across chunks (SQL) and within one chunk (validate_scores)
        with Store.open(tmp_path / f"s{chunk_rows}.duckdb") as s, pytest.raises(InputError) as exc:
            import_scores_file(s, path, chunk_rows=chunk_rows)
        assert exc.value.line == 101
        messages.append(str(exc.value))
    assert "the same key is on line 6" in messages[0]
    assert messages[0] == messages[1]  # same words, including "(1 more line ...)"
    assert "(1 more line has the same problem)" in messages[0]


def test_conflict_in_a_late_batch_rolls_back_the_earlier_batches(tmp_path: Path) -> None:
    frame = scores_frame(300)
    store = tmp_path / "s.duckdb"
    with Store.open(store) as s:
        import_scores_file(s, _write(tmp_path / "old.csv", frame.iloc[[250]]))
    before = store_contents(store)
    changed = frame.copy()
    changed.loc[250, "score"] = 0.123456 if frame.loc[250, "score"] != 0.123456 else 0.5
    path = _write(tmp_path / "new.csv", changed)
    with Store.open(store) as s, pytest.raises(InputError) as exc:
        import_scores_file(s, path, chunk_rows=40, batch_rows=20)  # the 13th batch conflicts
    assert exc.value.line == 252 and exc.value.field == "score"
    assert "already stored" in str(exc.value) or "stored" in str(exc.value)
    assert store_contents(store) == before


@pytest.mark.slow
def test_percent_and_unknown_metrics_in_chunks(tmp_path: Path) -> None:
    frame = scores_frame(60)
    frame["score"] = (frame["score"] * 100).round(4)
    path = _write(tmp_path / "p.csv", frame)
    with Store.open(tmp_path / "a.duckdb") as s:
        import_scores_file(s, path, percent=True, chunk_rows=7)
    with Store.open(tmp_path / "b.duckdb") as s:
        import_scores_file(s, path, percent=True)
    assert _scores(tmp_path / "a.duckdb") == _scores(tmp_path / "b.duckdb")
    frame["metric"] = np.where(np.arange(60) == 44, "mystery", "accuracy")
    path = _write(tmp_path / "u.csv", frame)
    with Store.open(tmp_path / "c.duckdb") as s, pytest.raises(InputError) as exc:
        import_scores_file(s, path, percent=True, chunk_rows=7)
    assert exc.value.line == 46 and exc.value.field == "metric"


KILL_CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from glotbench.store import Store
    from glotbench.store import scores as scores_module
    from glotbench.ingest.tidy import import_scores_file
    original = scores_module.Scores.add_batch
    calls = {"n": 0}

    def killing(self, frame, import_id, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:  # the third batch: two are committed
            os.kill(os.getpid(), signal.SIGKILL)
        return original(self, frame, import_id, **kwargs)

    scores_module.Scores.add_batch = killing
    with Store.open(sys.argv[2]) as s:
        import_scores_file(s, sys.argv[1], chunk_rows=50, batch_rows=40)
    """
)


@pytest.mark.slow
def test_killed_scores_import_resumes(tmp_path: Path) -> None:
    store = tmp_path / "s.duckdb"
    with Store.open(store) as s:
        first = scores_frame(5, seed=3).assign(task="other")
        import_scores_file(s, _write(tmp_path / "first.csv", first))
    path = _write(tmp_path / "s.csv", scores_frame(400))
    proc = subprocess.run(
        [sys.executable, "-c", KILL_CHILD, str(path), str(store)],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == -9, proc.stderr
    assert list(tmp_path.glob(".glotbench-staging-*"))  # left behind by the killed process
    with Store.open(store, read_only=True) as s:
        assert s.summary().counts["scores"] == 5 + 80  # two batches of 40 committed
    with Store.open(store) as s:
        result = import_scores_file(s, path, chunk_rows=50)
    assert (result.status, result.scores_added, result.scores_skipped) == ("resumed", 320, 80)
    assert not list(tmp_path.glob(".glotbench-staging-*"))
    with Store.open(tmp_path / "ref.duckdb") as s:
        import_scores_file(s, _write(tmp_path / "first.csv", first))
        import_scores_file(s, path)
    assert _scores(store) == _scores(tmp_path / "ref.duckdb")
    with Store.open(store) as s:  # complete now: a third import is a no-op
        assert import_scores_file(s, path).status == "skipped"


# ---------------------------------------------------------------------------
# Parquet snapshots
# ---------------------------------------------------------------------------


@pytest.mark.slow
def test_snapshot_scores_are_staged_and_a_conflict_names_the_snapshot_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "src.duckdb"
    with Store.open(source) as s:
        import_scores_file(s, _write(tmp_path / "s.csv", scores_frame(250)))
        s.exports.write(tmp_path / "snap")
    sizes: list[int] = []
    original = staging_module.validate_scores

    def counting(table, **kwargs):  # type: ignore[no-untyped-def]
        sizes.append(len(table))
        return original(table, **kwargs)

    monkeypatch.setattr(staging_module, "validate_scores", counting)
    with Store.open(tmp_path / "copy.duckdb") as s:
        result = import_snapshot(s, tmp_path / "snap", chunk_rows=30)
    assert result.scores_added == 250 and max(sizes) == 30
    assert _scores(tmp_path / "copy.duckdb") == _scores(source)

    # a store holding one of the keys with another score: error at that snapshot row
    target = tmp_path / "t.duckdb"
    snap_scores = pd.read_parquet(tmp_path / "snap" / "scores.parquet")
    row = snap_scores.iloc[[200]].copy()
    row["score"] = 0.5 if row["score"].iloc[0] != 0.5 else 0.25
    with Store.open(target) as s:
        import_scores_file(s, _write(tmp_path / "one.csv", row.drop(columns=["import_id"])))
    before = store_contents(target)
    with Store.open(target) as s, pytest.raises(InputError) as exc:
        import_snapshot(s, tmp_path / "snap")
    assert "row 201" in str(exc.value) and exc.value.field == "score"
    assert exc.value.path == str(tmp_path / "snap" / "scores.parquet")
    assert store_contents(target) == before
