"""Shard mode: workers write one Parquet file per job, one writer merges them into the store."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from glotbench import api
from glotbench.errors import InputError
from glotbench.ingest.shards import list_shards, merge_shards, read_header, read_runs, write_shard
from glotbench.store import Store

from .conftest import ROOT, store_digests, write_suite


def store_content(path: Path) -> dict[str, list[tuple]]:
    """Everything a run writes, without timestamps: runs, example rows, attributes, units."""
    queries = {
        "runs": "SELECT run_id, stats_sha256, n_examples, model_metadata::VARCHAR FROM runs",
        "examples": (
            "SELECT run_id, position, example_id, stats, source_position FROM example_stats"
        ),
        "attributes": "SELECT * FROM example_attributes",
        "units": "SELECT run_id, example_id, unit, stats FROM unit_stats",
    }
    out = {}
    with Store.open(path, read_only=True) as store:
        tables = {r[0] for r in store.connection.execute("SHOW TABLES").fetchall()}
        for name, sql in queries.items():
            table = sql.split(" FROM ")[1].split()[0]
            out[name] = sorted(store.connection.execute(sql).fetchall()) if table in tables else []
    # timing differs between runs of the same job; the statistics must not
    out["runs"] = [r[:3] for r in out["runs"]]
    return out


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The tiny suite run locally with the driver writing (the reference store)."""
    folder = tmp_path_factory.mktemp("ref")
    suite = write_suite(folder)
    summary = api.run_benchmark(suite, store=folder / "local.duckdb")
    assert summary.completed == 10 and not summary.failures
    return suite, folder / "local.duckdb"


@pytest.mark.slow
def test_shard_mode_equals_driver_writes(tmp_path: Path, reference: tuple[Path, Path]):
    suite, local = reference
    shards = tmp_path / "shards"
    summary = api.run_benchmark(suite, store=tmp_path / "s.duckdb", shards=shards)
    assert summary.completed == 10 and summary.runs_written == 20 and not summary.failures
    files, temporary = list_shards(shards)
    assert len(files) == 10 and not temporary  # one file per job, no leftovers
    assert store_content(tmp_path / "s.duckdb") == store_content(local)
    # the content includes entity units (ner) and attributes, not only runs
    assert store_content(local)["units"] and store_content(local)["attributes"]
    assert summary.to_dict()["shards"] == str(shards)
    # a second merge of the same folder writes nothing
    with Store.open(tmp_path / "s.duckdb") as store:
        again = merge_shards(store, shards)
    assert again.already_merged == 10 and again.runs_written == 0 and again.merged == 0


@pytest.mark.slow
def test_deferred_merge_import_and_bad_files(tmp_path: Path, reference: tuple[Path, Path]):
    suite, local = reference
    shards = tmp_path / "shards"
    summary = api.run_benchmark(suite, store=tmp_path / "d.duckdb", shards=shards, merge=False)
    assert summary.completed == 10 and summary.runs_written == 0
    # the jobs whose shards exist are not run again while the shards wait
    again = api.run_benchmark(suite, store=tmp_path / "d.duckdb", shards=shards, merge=False)
    assert again.skipped == 10 and again.completed == 0
    # a temporary file (a worker killed while writing) and a truncated shard are never merged
    files, _ = list_shards(shards)
    (shards / f".{files[0].name}.abc.tmp").write_bytes(files[0].read_bytes()[:100])
    (shards / "truncated.parquet").write_bytes(files[1].read_bytes()[:-50])
    result = api.import_shards(shards, store=tmp_path / "d.duckdb")
    assert result.merged == 10 and result.runs_written == 20
    assert len(result.temporary) == 1 and [u["file"] for u in result.unreadable] == [
        "truncated.parquet"
    ]
    assert store_content(tmp_path / "d.duckdb") == store_content(local)
    # re-merge is a no-op
    repeat = api.import_shards(shards, store=tmp_path / "d.duckdb")
    assert repeat.already_merged == 10 and repeat.runs_written == 0 and repeat.merged == 0
    assert store_content(tmp_path / "d.duckdb") == store_content(local)


def test_shard_round_trip_and_atomic_write(tmp_path: Path, reference: tuple[Path, Path]):
    _, local = reference
    with Store.open(local, read_only=True) as store:
        runs = store.runs.frame().iloc[:2]
        items = []
        for _, row in runs.iterrows():
            ids, stats = store.stats.of_run(row["run_id"])
            from glotbench.store.schema import RunRecord

            record = RunRecord(
                **{k: row[k] for k in ("model", "dataset", "task", "language", "config_hash")},
                seed=int(row["seed"]),
                metric=row["metric"],
                metric_config=row["metric_config"],
                stat_names=tuple(row["stat_names"]),
            )
            items.append((record, list(ids), stats, list(range(len(ids)))))
    path = write_shard(tmp_path, items, job="a job/with odd:chars")
    assert path.name.startswith("a-job-with-odd-chars_") and path.suffix == ".parquet"
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left
    header = read_header(path)
    assert header.run_ids == [r.run_id for r, *_ in items]
    for (rec, ids, stats, pos), (rec2, ids2, stats2, pos2) in zip(
        items, read_runs(header), strict=True
    ):
        assert rec2.run_id == rec.run_id and ids2 == ids and pos2 == pos
        np.testing.assert_array_equal(stats2, stats)  # bit for bit
    # same job -> same name: a re-run replaces its shard
    assert write_shard(tmp_path, items, job="a job/with odd:chars") == path
    with pytest.raises(InputError, match="without glotbench shard metadata"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table({"x": [1]}), tmp_path / "foreign.parquet")
        read_header(tmp_path / "foreign.parquet")


def test_non_finite_shard_stops_merge_naming_file(tmp_path: Path, reference: tuple[Path, Path]):
    _, local = reference
    from glotbench.store.schema import RunRecord

    record = RunRecord(
        model="m",
        dataset="d",
        task="t",
        language="en",
        seed=1,
        config_hash="c",
        metric="accuracy",
        stat_names=("correct", "total"),
    )
    write_shard(tmp_path / "bad", [(record, ["a", "b"], np.array([[1, 1], [np.nan, 1]]), None)])
    with Store.open(tmp_path / "x.duckdb") as store, pytest.raises(InputError) as err:
        merge_shards(store, tmp_path / "bad")
    assert "not finite" in str(err.value) and "bad" in str(err.value)


KILL_SCRIPT = """
import sys, time
from glotbench.store import Store
from glotbench.ingest.shards import merge_shards

def progress(done, total):
    print(done, total, flush=True)
    time.sleep(0.3)

with Store.open(sys.argv[1]) as store:
    merge_shards(store, sys.argv[2], batch_runs=2, progress=progress)
"""


@pytest.mark.slow
def test_killed_merge_resumes(tmp_path: Path, reference: tuple[Path, Path]):
    suite, local = reference
    shards = tmp_path / "shards"
    api.run_benchmark(suite, store=tmp_path / "unused.duckdb", shards=shards, merge=False)
    target = tmp_path / "k.duckdb"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen(
        [sys.executable, "-c", KILL_SCRIPT, str(target), str(shards)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline().split()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL and first and int(first[0]) < 20
    partial = store_digests(target)
    assert 0 < len(partial) < 20
    with Store.open(target) as store:
        resumed = merge_shards(store, shards)
    assert resumed.runs_written == 20 - len(partial)
    assert store_content(target) == store_content(local)


@pytest.mark.slow
def test_cli_run_no_merge_then_import_shards(tmp_path: Path):
    import json

    from typer.testing import CliRunner

    from glotbench.cli import app

    runner = CliRunner()
    suite = write_suite(tmp_path, iterations=1)
    store, shards = str(tmp_path / "c.duckdb"), str(tmp_path / "shards")
    args = ["run", str(suite), "--store", store, "--model", "lr", "--shards", shards]
    out = runner.invoke(app, [*args, "--no-merge", "--json"])
    assert out.exit_code == 0, out.output
    payload = json.loads(out.stdout)
    assert payload["completed"] == 1 and payload["runs_written"] == 0 and payload["scores"] == []
    out = runner.invoke(app, ["import", "shards", shards, "--store", store, "--json"])
    assert out.exit_code == 0, out.output
    merged = json.loads(out.stdout)
    assert merged["merged"] == 1 and merged["runs_written"] == 2
    out = runner.invoke(app, ["import", "shards", shards, "--store", store])
    assert out.exit_code == 0 and "1 already merged" in out.stdout
    (tmp_path / "shards" / "broken.parquet").write_bytes(b"PAR1 not really")
    out = runner.invoke(app, ["import", "shards", shards, "--store", store])
    assert out.exit_code == 1 and "broken.parquet" in out.stdout
    again = runner.invoke(app, [*args, "--json"])  # the merged job is stored: skipped
    assert json.loads(again.stdout)["skipped"] == 1
    assert "--shards" in runner.invoke(app, ["run", "--help"]).stdout


@pytest.mark.slow
def test_shard_that_cannot_be_merged_is_a_recorded_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    import glotbench.runner.backends as backends

    suite = write_suite(tmp_path, iterations=1)
    store, shards = tmp_path / "f.duckdb", tmp_path / "shards"
    original = backends.write_shard

    def poison_lr(folder, runs, **kwargs):  # type: ignore[no-untyped-def]
        if runs[0][0].model == "lr":  # a NaN statistic, as a broken metric would give
            record, ids, stats, pos = runs[0]
            stats = np.array(stats, dtype=float)
            stats[0, 0] = np.nan
            runs = [(record, ids, stats, pos), *runs[1:]]
        return original(folder, runs, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(backends, "write_shard", poison_lr)
        summary = api.run_benchmark(suite, store=store, models=["lr", "nb"], shards=shards)
    [failure] = summary.failures
    assert failure.model == "lr" and "not finite" in failure.error and summary.completed == 1
    files, _ = list_shards(shards)
    assert len(files) == 1 and len(list(shards.glob(".*.rejected"))) == 1  # kept, hidden
    fixed = api.run_benchmark(suite, store=store, models=["lr", "nb"], shards=shards)
    assert fixed.completed == 1 and fixed.skipped == 1 and not fixed.failures
    with Store.open(store, read_only=True) as handle:
        assert set(handle.runs.frame()["model"]) == {"lr", "nb"}
        assert handle.failures.frame().empty  # the stored runs resolved the failure
