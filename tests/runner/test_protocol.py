from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from glotbench import api
from glotbench.metrics import get_metric
from glotbench.resample.scandeval import bootstrap_test_counts
from glotbench.runner.errors import UnknownNameError
from glotbench.runner.protocol import training_sample
from glotbench.store import Store

from .conftest import ROOT, store_digests, write_suite


@pytest.mark.slow
def test_run_resume_reproducible(tmp_path: Path):
    suite = write_suite(tmp_path)
    first = api.run_benchmark(suite, store=tmp_path / "a.duckdb")
    # lr, nb, majority on sent; majority, tagger on ner; 2 iterations each
    assert first.jobs == 10 and first.completed == 10 and not first.failures
    assert first.runs_written == 5 * 2 * 2
    again = api.run_benchmark(suite, store=tmp_path / "a.duckdb")
    assert again.completed == 0 and again.skipped == 10 and again.runs_written == 0
    other = api.run_benchmark(suite, store=tmp_path / "b.duckdb")
    assert store_digests(tmp_path / "a.duckdb") == store_digests(tmp_path / "b.duckdb")
    forced = api.run_benchmark(suite, store=tmp_path / "a.duckdb", models=["lr"], force=True)
    assert forced.completed == 2 and forced.runs_written == 4
    assert store_digests(tmp_path / "a.duckdb") == store_digests(tmp_path / "b.duckdb")
    assert other.to_dict()["scores"]


@pytest.mark.slow
def test_scandeval_score_derived_from_stored_statistics(tmp_path: Path):
    suite = write_suite(tmp_path, iterations=3)
    summary = api.run_benchmark(
        suite, store=tmp_path / "s.duckdb", models=["lr"], datasets=["sent"]
    )
    row = summary.to_frame().set_index("metric").loc["mcc"]
    with Store.open(tmp_path / "s.duckdb", read_only=True) as store:
        runs = store.runs.frame(metrics=["mcc"])
        scores = []
        for _, run in runs.iterrows():
            _, stats = store.stats.of_run(run["run_id"])
            w = bootstrap_test_counts(int(run["seed"]), stats.shape[0])
            scores.append(get_metric("mcc", **run["metric_config"]).score(w @ stats))
        meta = runs.sort_values("seed")["model_metadata"].iloc[0]  # iteration 0 measures speed
    assert row["score"] == pytest.approx(np.mean(scores))
    assert row["ci_half_width"] == pytest.approx(1.96 * np.std(scores, ddof=1) / np.sqrt(3))
    assert len(meta["speed"]["tokens_per_second"]) == 2 and meta["bootstrap_train"] is True
    assert sorted(runs["seed"].tolist()) == [7, 8, 9]


def test_training_bootstrap_is_seeded():
    train = [{"id": str(i)} for i in range(50)]
    assert training_sample(train, 3, True) == training_sample(train, 3, True)
    assert training_sample(train, 3, True) != training_sample(train, 4, True)
    assert training_sample(train, 3, False) == train


def test_failing_model_is_recorded_and_others_stored(tmp_path: Path):
    import json

    rows = [
        {
            "id": f"r{i}",
            "text": ("good" if i % 2 else "bad") + f" {i}",
            "label": "pos" if i % 2 else "neg",
            "split": "train" if i < 20 else "test",
        }
        for i in range(30)
    ]
    rows.append({"id": "boom1", "text": "boom boom", "label": "pos", "split": "test"})
    (tmp_path / "sent.jsonl").write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    suite = tmp_path / "fail.yaml"
    suite.write_text(
        """
name: failing
protocol: {iterations: 1, speed_iterations: 0}
datasets:
  - {name: sent, task: sentiment, language: en, loader: jsonl, paths: [sent.jsonl],
     splits: predefined}
models:
  - {name: lr, kind: tfidf-logreg}
  - {name: broken, kind: callable, options: {target: "tests.runner.helpers_models:fails_on_boom"}}
""",
        encoding="utf-8",
    )
    summary = api.run_benchmark(suite, store=tmp_path / "f.duckdb")
    [failure] = summary.failures
    assert "broken" in failure.job and "boom1" in failure.error
    assert summary.completed == 1
    with Store.open(tmp_path / "f.duckdb", read_only=True) as store:
        assert set(store.runs.frame()["model"]) == {"lr"}


def test_unknown_filters(tmp_path: Path):
    suite = write_suite(tmp_path)
    with pytest.raises(UnknownNameError, match="unknown language"):
        api.run_benchmark(suite, store=tmp_path / "x.duckdb", languages=["xx"])
    with pytest.raises(UnknownNameError, match="unknown model"):
        api.run_benchmark(suite, store=tmp_path / "x.duckdb", models=["gpt"])
    assert not (tmp_path / "x.duckdb").exists()


@pytest.mark.slow
def test_kill_9_then_resume_equals_uninterrupted(tmp_path: Path):
    suite = write_suite(tmp_path, iterations=3)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [
        sys.executable,
        "-m",
        "glotbench.cli",
        "run",
        str(suite),
        "--store",
        str(tmp_path / "k.duckdb"),
    ]
    proc = subprocess.Popen(
        [sys.executable, "-c", "from glotbench.cli import main; main()", *cmd[3:]],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    stored = 0
    printed: list[str] = []
    assert proc.stderr is not None
    for line in proc.stderr:
        printed.append(line)
        if line.startswith("stored "):
            stored += 1
            if stored == 4:
                os.kill(proc.pid, signal.SIGKILL)
                break
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL, "the run ended by itself:\n" + "".join(printed)
    with Store.open(tmp_path / "k.duckdb", read_only=True) as store:
        partial = len(store.runs.frame())
    assert 0 < partial < 30
    resumed = subprocess.run(
        [sys.executable, "-c", "from glotbench.cli import main; main()", *cmd[3:], "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert resumed.returncode == 0, resumed.stderr
    api.run_benchmark(suite, store=tmp_path / "full.duckdb")
    assert store_digests(tmp_path / "k.duckdb") == store_digests(tmp_path / "full.duckdb")


@pytest.mark.slow
def test_ray_executor_matches_local(tmp_path: Path):
    """Two Ray workers, the driver as the only writer, and shard mode: all equal the local run.

    One Ray start for both Ray runs (start-up is slow); the workers import
    this checkout (absolute PYTHONPATH) so they run the code under test.
    """
    ray = pytest.importorskip("ray", reason="ray is not installed (extra 'distributed')")
    suite = write_suite(tmp_path, iterations=2)
    os.environ.setdefault("RAY_DISABLE_IMPORT_WARNING", "1")
    sys.path.insert(0, str(ROOT))
    local = api.run_benchmark(suite, store=tmp_path / "local.duckdb", models=["lr", "tagger"])
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT)])
    try:
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
        workers = {
            pid for pid in ray.get([ray.remote(num_cpus=1)(_slow_pid).remote() for _ in range(4)])
        }
        remote = api.run_benchmark(
            suite, store=tmp_path / "ray.duckdb", models=["lr", "tagger"], executor="ray"
        )
        sharded = api.run_benchmark(
            suite,
            store=tmp_path / "shards.duckdb",
            models=["lr", "tagger"],
            executor="ray",
            shards=tmp_path / "shards",
        )
    finally:
        ray.shutdown()
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old
    assert len(workers) >= 2  # the jobs could run on two worker processes at once
    assert remote.completed == local.completed == 4 and not remote.failures
    assert sharded.completed == 4 and sharded.runs_written == 8 and not sharded.failures
    assert len(list((tmp_path / "shards").glob("*.parquet"))) == 4
    assert store_digests(tmp_path / "local.duckdb") == store_digests(tmp_path / "ray.duckdb")
    assert store_digests(tmp_path / "local.duckdb") == store_digests(tmp_path / "shards.duckdb")


def _slow_pid() -> int:
    """A Ray task that holds its worker briefly and names it (so two workers must start)."""
    import time

    time.sleep(0.5)
    return os.getpid()


@pytest.mark.slow
def test_process_executor_stores_what_local_stores(tmp_path: Path):
    """Jobs in worker processes give the very statistics of the one-process run."""
    suite = write_suite(tmp_path, iterations=2)
    local = api.run_benchmark(suite, store=tmp_path / "l.duckdb", models=["lr", "tagger"])
    parallel = api.run_benchmark(
        suite,
        store=tmp_path / "p.duckdb",
        models=["lr", "tagger"],
        executor="processes",
        num_cpus=2,
    )
    assert parallel.completed == local.completed and not parallel.failures
    assert store_digests(tmp_path / "p.duckdb") == store_digests(tmp_path / "l.duckdb")
    assert parallel.configs == local.configs
