"""Failed jobs are recorded in the store, resolved by a later success; --force is atomic."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from glotbench import api
from glotbench.errors import InputError
from glotbench.runner import executors
from glotbench.runner.errors import JobError
from glotbench.store import Store
from glotbench.store.runs import Runs

from . import helpers_models
from .conftest import store_digests


def write_failing_suite(folder: Path) -> Path:
    """lr and a callable that raises on the test item 'boom1', one dataset, one iteration."""
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
    (folder / "sent.jsonl").write_text(
        "\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8"
    )
    suite = folder / "fail.yaml"
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
    return suite


def _fixed(texts: list[str]) -> list[str]:
    return ["pos" for _ in texts]


@pytest.mark.slow
def test_failure_is_recorded_listed_and_resolved_by_a_rerun(
    tmp_path: Path, cli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = write_failing_suite(tmp_path)
    store = tmp_path / "f.duckdb"

    first = cli("run", suite, "--store", store)
    assert first.exit_code == JobError.exit_code != 0
    assert "1 failed" in first.out and "1 failure(s) recorded" in first.out
    assert "glotbench failures --store" in first.out
    assert "raised on" in first.err and "'boom1'" in first.err
    with Store.open(store, read_only=True) as handle:
        assert set(handle.runs.frame()["model"]) == {"lr"}  # the other job is stored
        [failure] = handle.failures.frame().to_dict("records")
        lr_run = handle.runs.frame().iloc[0]
    assert failure["model"] == "broken" and failure["dataset"] == "sent"
    assert failure["task"] == "sentiment" and failure["language"] == "en"
    assert failure["seed"] == 4242 and failure["iteration"] == 0
    assert failure["config_hash"] and failure["config_hash"] != lr_run["config_hash"]
    assert failure["error_type"] == "ModelError" and "'boom1'" in failure["message"]
    assert "RuntimeError: cannot handle this text" in failure["traceback"]
    assert "fails_on_boom" in failure["traceback"]  # the traceback reaches the model's code
    assert failure["source"] == "glotbench run failing (executor local)"

    listed = cli("failures", "--store", store, "--json")
    assert listed.exit_code == 0, listed.stderr
    payload = json.loads(listed.stdout)
    assert payload["count"] == payload["open"] == 1
    assert payload["failures"][0]["failure_id"] == failure["failure_id"]
    assert "'boom1'" in payload["failures"][0]["message"]
    table = cli("failures", "--store", store, "--traceback")
    assert failure["failure_id"] in table.out and "boom1" in table.out
    assert "RuntimeError: cannot handle this text" in table.out
    assert "1 open job failure(s)" in cli("show", "--store", store).out

    # the same failing model again: a second recorded attempt, still nothing else lost
    again = cli("run", suite, "--store", store, "--json")
    assert again.exit_code == JobError.exit_code
    summary = json.loads(again.stdout)
    assert summary["skipped"] == 1 and summary["completed"] == 0
    [recorded] = summary["failures"]
    assert recorded["failure_id"] and recorded["model"] == "broken"
    assert recorded["seed"] == 4242 and "boom1" in recorded["error"]
    assert "glotbench failures" in again.err

    # the model is fixed (same configuration, hence the same job key): the run resumes
    monkeypatch.setattr(helpers_models, "fails_on_boom", _fixed)
    fixed = cli("run", suite, "--store", store, "--json")
    assert fixed.exit_code == 0, fixed.stderr
    done = json.loads(fixed.stdout)
    assert done["skipped"] == 1 and done["completed"] == 1 and not done["failures"]
    with Store.open(store, read_only=True) as handle:
        assert set(handle.runs.frame()["model"]) == {"lr", "broken"}
        assert handle.failures.frame().empty
        history = handle.failures.frame(include_resolved=True)
    assert len(history) == 2 and history["resolved_at"].notna().all()
    assert "no open failures" in cli("failures", "--store", store).out
    everything = json.loads(cli("failures", "--store", store, "--all", "--json").stdout)
    assert everything["count"] == 2 and everything["open"] == 0
    assert "open job failure" not in cli("show", "--store", store).out


@pytest.mark.slow
def test_force_rerun_that_fails_keeps_the_stored_runs(
    tmp_path: Path, cli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = write_failing_suite(tmp_path)
    store = tmp_path / "f.duckdb"
    with monkeypatch.context() as patch:
        patch.setattr(helpers_models, "fails_on_boom", _fixed)
        assert cli("run", suite, "--store", store).exit_code == 0
    before = store_digests(store)
    assert len(before) == 4
    forced = cli("run", suite, "--store", store, "--force", "--json")
    assert forced.exit_code == JobError.exit_code
    payload = json.loads(forced.stdout)
    assert payload["completed"] == 1 and payload["runs_written"] == 2  # lr replaced
    assert [f["model"] for f in payload["failures"]] == ["broken"]
    assert store_digests(store) == before  # the broken model's old runs are intact
    listed = json.loads(cli("failures", "--store", store, "--model", "broken", "--json").stdout)
    assert listed["count"] == 1


@pytest.mark.slow
def test_force_replacement_interrupted_between_delete_and_insert(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = write_failing_suite(tmp_path)
    store = tmp_path / "f.duckdb"
    api.run_benchmark(suite, store=store, models=["lr"])
    before = store_digests(store)
    with Store.open(store, read_only=True) as handle:
        rows_before = handle.connection.execute("SELECT count(*) FROM example_stats").fetchall()

    def crash(self: Store, con: Any, runs: Any) -> None:
        raise KeyboardInterrupt  # e.g. Ctrl-C after the old runs were deleted

    with monkeypatch.context() as patch:
        patch.setattr(Runs, "_insert_batch", crash)
        with pytest.raises(KeyboardInterrupt):
            api.run_benchmark(suite, store=store, models=["lr"], force=True)
    assert store_digests(store) == before
    with Store.open(store, read_only=True) as handle:
        rows = handle.connection.execute("SELECT count(*) FROM example_stats").fetchall()
        assert rows == rows_before
        assert handle.failures.frame().empty
    forced = api.run_benchmark(suite, store=store, models=["lr"], force=True)
    assert forced.runs_written == 2 and store_digests(store) == before


def test_statistics_that_cannot_be_stored_are_a_recorded_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = write_failing_suite(tmp_path)
    store = tmp_path / "f.duckdb"
    original = executors.write_outcome

    def refuse_lr(handle: Store, outcome: Any, *, force: bool = False) -> int:
        if outcome.job.model.name == "lr":
            raise InputError("run (model='lr'): statistics of example 'r21' are not finite")
        return original(handle, outcome, force=force)

    monkeypatch.setattr(helpers_models, "fails_on_boom", _fixed)
    monkeypatch.setattr(executors, "write_outcome", refuse_lr)
    summary = api.run_benchmark(suite, store=store)
    [failure] = summary.failures
    assert failure.model == "lr" and failure.kind == "InputError" and "'r21'" in failure.error
    assert summary.completed == 1
    with Store.open(store, read_only=True) as handle:
        assert set(handle.runs.frame()["model"]) == {"broken"}
        assert handle.failures.frame()["failure_id"].tolist() == [failure.failure_id]


@pytest.mark.slow
def test_failures_command_filters_and_resolves_by_hand(
    tmp_path: Path, cli: Callable[..., Any]
) -> None:
    suite = write_failing_suite(tmp_path)
    store = tmp_path / "f.duckdb"
    assert cli("run", suite, "--store", store, "--quiet").exit_code == JobError.exit_code
    assert (
        json.loads(cli("failures", "--store", store, "--model", "lr", "--json").stdout)["failures"]
        == []
    )
    resolved = cli("failures", "--store", store, "--model", "broken", "--resolve")
    assert resolved.exit_code == 0 and "marked 1 failure(s) resolved" in resolved.out
    assert json.loads(cli("failures", "--store", store, "--json").stdout)["count"] == 0
    missing = cli("failures", "--store", tmp_path / "none.duckdb")
    assert missing.exit_code != 0 and "no store" in missing.err


@pytest.mark.slow
def test_ray_executor_failures_are_recorded(tmp_path: Path) -> None:
    pytest.importorskip("ray", reason="ray is not installed (extra 'distributed')")
    suite = write_failing_suite(tmp_path)
    store = tmp_path / "r.duckdb"
    summary = api.run_benchmark(suite, store=store, executor="ray", num_cpus=1)
    [failure] = summary.failures
    assert failure.model == "broken" and "'boom1'" in failure.error
    with Store.open(store, read_only=True) as handle:
        [row] = handle.failures.frame().to_dict("records")
        assert set(handle.runs.frame()["model"]) == {"lr"}
    assert row["failure_id"] == failure.failure_id and row["source"].endswith("(executor ray)")
    assert "RuntimeError: cannot handle this text" in row["traceback"]
