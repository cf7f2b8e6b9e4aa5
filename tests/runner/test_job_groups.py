"""A deterministic model's iterations go to one worker together (docs/runner.md, Executors).

Split over two workers, a pretrained model would be loaded and run twice (the
demo's lingua: ~14 s of CPU each time); grouped, it is loaded once and its
other iterations reuse the predictions, in a process pool as in one process.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from glotbench import api
from glotbench.runner.backends import job_groups
from glotbench.runner.suite import load_suite
from glotbench.store import Store


def test_groups_keep_every_job_in_order() -> None:
    jobs, _ = load_suite("starter").jobs()
    groups = job_groups(jobs)
    flat = [job for group in groups for job in group]
    assert sorted(j.label() for j in flat) == sorted(j.label() for j in jobs)
    # a group sits where its first job was
    firsts = [jobs.index(group[0]) for group in groups]
    assert firsts == sorted(firsts)
    deterministic = {j.model.name for j in jobs if j.model.deterministic}
    assert deterministic == {"lingua", "cld2", "py3langid", "langid.py"}
    for group in groups:
        names = {j.model.name for j in group}
        assert len(names) == 1
        name = names.pop()
        if name in deterministic:  # all five iterations, in order
            assert [j.iteration for j in group] == [0, 1, 2, 3, 4]
        else:
            assert len(group) == 1
    assert len(groups) == len(jobs) - 4 * len(deterministic)


@pytest.mark.skipif(
    __import__("importlib").util.find_spec("py3langid") is None,
    reason="py3langid (the starter extra) is not installed",
)
@pytest.mark.slow
def test_a_process_pool_predicts_a_deterministic_model_once(tmp_path: Path) -> None:
    store = tmp_path / "s.duckdb"
    api.run_benchmark(
        "starter",
        store=store,
        models=["py3langid"],
        iterations=3,
        executor="processes",
        scores=False,
        speed=False,
    )
    with Store.open(store, read_only=True) as handle:
        runs = handle.runs.frame(metrics=["f1_macro"])
    metas = [json.loads(m) if isinstance(m, str) else m for m in runs["model_metadata"].tolist()]
    assert len(metas) == 3
    # one worker predicted iteration 0; the others reused its predictions
    assert sorted(m["predictions_of_iteration"] for m in metas) == [0, 0, 0]


@pytest.mark.skipif(
    __import__("importlib").util.find_spec("py3langid") is None,
    reason="py3langid (the starter extra) is not installed",
)
@pytest.mark.slow
def test_results_that_arrive_together_are_stored_in_one_opening_of_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A deterministic model's iterations come back from the pool together: the driver
    opens the store once for them (each opening and closing is a DuckDB checkpoint), not
    once per job; each job keeps its own transactions, and the runs are the same."""
    opened: list[str] = []
    connect = Store._connect

    def counted(path: Path, read_only: bool, lock_timeout: float | None) -> Any:
        opened.append(str(path))
        return connect(path, read_only, lock_timeout)

    monkeypatch.setattr(Store, "_connect", staticmethod(counted))
    stored: dict[str, list[Any]] = {}
    for executor in ("local", "processes"):
        opened.clear()
        store = tmp_path / f"{executor}.duckdb"
        api.run_benchmark(
            "starter",
            store=store,
            models=["py3langid"],
            iterations=3,
            executor=executor,
            scores=False,
            speed=False,
        )
        stored[executor] = [len(opened)]
        with Store.open(store, read_only=True) as handle:
            runs = handle.runs.frame(metrics=["accuracy"])
            stored[executor].append(
                sorted(zip(runs["language"], runs["seed"], runs["stats_sha256"], strict=True))
            )
    # local: one opening per job; the pool's three results arrive as one batch
    assert stored["processes"][0] == stored["local"][0] - 2
    assert stored["processes"][1] == stored["local"][1]
