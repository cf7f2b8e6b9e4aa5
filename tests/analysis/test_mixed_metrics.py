"""Leaderboard-style analysis over mixed metrics (issue 12): each task on its primary metric.

References are computed here from the raw numbers, independently of glotbench:
numpy means of EuroEval's per-iteration scores, the closed-form binomial SE and
``scipy.stats.bootstrap`` on lm-eval's logged per-sample values.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from glotbench import api
from glotbench.analysis.selection import MetricChoice, choose_metrics, iteration_rows
from glotbench.errors import InputError
from glotbench.metrics import get_metric

from ..conftest import CliResult

Cli = Callable[..., CliResult]
LM_EVAL_OUT = Path(__file__).resolve().parents[1] / "fixtures" / "importers" / "lm_eval_out"

#: (task, dataset, language) -> the record's metrics (EuroEval's order: primary first)
EUROEVAL_CELLS = {
    ("sentiment-classification", "angry-tweets", "da"): ("mcc", "macro_f1"),
    ("sentiment-classification", "swerec", "sv"): ("mcc", "macro_f1"),
    ("named-entity-recognition", "dansk", "da"): ("micro_f1_no_misc", "micro_f1"),
    ("named-entity-recognition", "suc3", "sv"): ("micro_f1_no_misc", "micro_f1"),
    ("linguistic-acceptability", "scala-da", "da"): ("mcc", "macro_f1"),
}
MODELS = ("org/model-a", "org/model-b")
N_ITERATIONS = 10


def _euroeval_file(path: Path) -> dict[tuple[str, str, str, str], np.ndarray]:
    """A EuroEval results file (pre-v17 layout) and its raw per-iteration scores.

    Returns ``{(model, task, language, metric): iterations}`` on glotbench's 0-1
    scale, the numbers the tests compare glotbench's results with.
    """
    rng = np.random.default_rng(12)
    raw: dict[tuple[str, str, str, str], np.ndarray] = {}
    lines = []
    for m, model in enumerate(MODELS):
        for (task, dataset, language), metrics in EUROEVAL_CELLS.items():
            values = {
                metric: rng.uniform(0.3, 0.5, N_ITERATIONS) + 0.1 * m + 0.05 * k
                for k, metric in enumerate(metrics)
            }
            for metric, v in values.items():
                raw[(model, task, language, metric)] = v
            total: dict[str, float] = {}
            for metric, v in values.items():
                total[f"test_{metric}"] = 100 * v.mean()
                total[f"test_{metric}_se"] = 1.96 * 100 * v.std(ddof=1) / np.sqrt(v.size)
            iterations = [
                {f"test_{metric}": float(v[i]) for metric, v in values.items()}
                for i in range(N_ITERATIONS)
            ]
            lines.append(_record(model, dataset, task, [language], iterations, total))
        # EuroEval's speed benchmark: tokens per second, not ranked by EuroEval
        speed = [{"test_speed": 900.0 + i, "test_speed_short": 200.0 + i} for i in range(3)]
        lines.append(_record(model, "speed", "speed", ["da", "sv"], speed, {"test_speed": 901.0}))
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return raw


def _record(
    model: str,
    dataset: str,
    task: str,
    languages: list[str],
    raw: list[dict[str, float]],
    total: dict[str, float],
) -> dict[str, Any]:
    return {
        "dataset": dataset,
        "task": task,
        "languages": languages,
        "model": model,
        "results": {"raw": raw, "total": {**total, "num_failed_instances": 0.0}},
        "num_model_parameters": 1000,
        "max_sequence_length": 512,
        "vocabulary_size": 100,
        "merge": False,
        "generative": False,
        "generative_type": None,
        "few_shot": None,
        "validation_split": False,
    }


@pytest.fixture
def euroeval_store(tmp_path: Path) -> tuple[Path, dict[tuple[str, str, str, str], np.ndarray]]:
    results = tmp_path / "euroeval_benchmark_results.jsonl"
    raw = _euroeval_file(results)
    store = tmp_path / "euroeval.duckdb"
    api.import_euroeval(results, store=store)
    return store, raw


def _json(result: CliResult) -> dict[str, Any]:
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


PRIMARY = {
    "sentiment-classification": "mcc",
    "named-entity-recognition": "micro_f1_no_misc",
    "linguistic-acceptability": "mcc",
}


@pytest.mark.slow
def test_euroeval_store_without_metric_uses_each_tasks_primary_metric(
    cli: Cli, euroeval_store: tuple[Path, dict]
) -> None:
    store, raw = euroeval_store
    payload = _json(cli("analyze", "variance", "--store", store, "--json"))
    cells = {(r["model"], r["task"], r["language"]): r for r in payload["per_language"]}
    assert {t for _, t, _ in cells} == set(PRIMARY)  # speed is left out
    for (model, task, language), record in cells.items():
        iterations = raw[(model, task, language, PRIMARY[task])]
        assert record["mean"] == pytest.approx(np.mean(iterations), abs=1e-12)
        # EuroEval's iterations are the replicates: σ_w is their SD
        assert record["sigma_w"] == pytest.approx(np.std(iterations, ddof=1), rel=1e-9)
        assert record["n_replicates"] == N_ITERATIONS
    notes = " ".join(payload["notes"])
    assert "named-entity-recognition: micro_f1_no_misc (declared primary)" in notes
    assert "sentiment-classification: mcc (declared primary)" in notes
    assert "'speed' left out" in notes
    assert "summary score(s)" in notes  # EuroEval's totals are not replicates

    payload = _json(cli("analyze", "aggregate", "--store", store, "--draws", "300", "--json"))
    hierarchy = pd.DataFrame(payload["hierarchy"])
    for model in MODELS:
        cell_means = {
            (task, language): np.mean(raw[(model, task, language, PRIMARY[task])])
            for task, _, language in EUROEVAL_CELLS
        }
        mine = hierarchy[hierarchy["model"] == model].set_index(["level", "name"])["score"]
        for (task, language), expected in cell_means.items():
            assert mine[("task_language", f"{task}/{language}")] == pytest.approx(expected)
        per_language = {
            language: np.mean([v for (_, lang), v in cell_means.items() if lang == language])
            for language in ("da", "sv")
        }
        for language, expected in per_language.items():
            assert mine[("language", language)] == pytest.approx(expected)
        assert mine[("overall", "overall")] == pytest.approx(np.mean(list(per_language.values())))
        # the headline mean: over languages within each task, then over tasks
        by_task = pd.Series(cell_means).groupby(level=0).mean()
        mean_row = [
            r for r in payload["aggregates"] if r["model"] == model and r["aggregator"] == "mean"
        ]
        assert mean_row[0]["score"] == pytest.approx(by_task.mean())
    se = hierarchy[hierarchy["level"] == "task_language"]["se"]
    assert (se > 0).all()

    payload = _json(cli("analyze", "ranks", "--store", store, "--draws", "300", "--json"))
    best = min(payload["summary"], key=lambda r: r["mean_rank"])
    assert best["model"] == "org/model-b"  # model b scores 0.1 higher everywhere


@pytest.mark.slow
def test_euroeval_plain_metric_no_longer_collides(
    cli: Cli, euroeval_store: tuple[Path, dict]
) -> None:
    store, raw = euroeval_store
    payload = _json(cli("analyze", "variance", "--store", store, "--metric", "mcc", "--json"))
    cells = {(r["model"], r["task"], r["language"]): r["mean"] for r in payload["per_language"]}
    expected = {
        (model, task, language): np.mean(raw[(model, task, language, "mcc")])
        for model in MODELS
        for task, _, language in EUROEVAL_CELLS
        if PRIMARY[task] == "mcc"
    }
    assert cells == pytest.approx(expected)
    assert "without metric 'mcc' left out: named-entity-recognition" in " ".join(payload["notes"])
    for command in ("aggregate", "compare", "ranks"):
        result = cli("analyze", command, "--store", store, "--metric", "mcc", "--draws", "200")
        assert result.exit_code == 0, result.stderr


@pytest.mark.slow
def test_task_metric_override(cli: Cli, euroeval_store: tuple[Path, dict]) -> None:
    store, raw = euroeval_store
    args = ("--metric", "sentiment-classification=macro_f1", "--json")
    payload = _json(cli("analyze", "variance", "--store", store, *args))
    cells = {(r["model"], r["task"], r["language"]): r["mean"] for r in payload["per_language"]}
    for (model, task, language), mean in cells.items():
        metric = "macro_f1" if task == "sentiment-classification" else PRIMARY[task]
        assert mean == pytest.approx(np.mean(raw[(model, task, language, metric)]))
    assert "sentiment-classification: macro_f1 (metric=TASK=METRIC)" in " ".join(payload["notes"])
    # the speed task only when asked for, on its own
    speed = _json(
        cli("analyze", "variance", "--store", store, "--task", "speed", "--metric",
            "speed=speed", "--json")
    )  # fmt: skip
    assert [r["mean"] for r in speed["per_language"]] == pytest.approx([901.0, 901.0])
    # a metric the task does not have, a task the store does not have
    result = cli("analyze", "variance", "--store", store, "--metric", "linguistic-acceptability=f1")
    assert result.exit_code == 2 and "no results of metric 'f1'" in result.err
    assert "its metrics: macro_f1, mcc" in result.err
    result = cli("analyze", "variance", "--store", store, "--metric", "nosuchtask=mcc")
    assert result.exit_code == 2 and "nosuchtask" in result.err


def test_several_undeclared_metrics_are_a_clear_error(cli: Cli, tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {
            "model": ["A", "A", "B", "B"] * 2,
            "task": "nli",
            "language": ["de", "en"] * 4,
            "metric": ["accuracy"] * 4 + ["f1"] * 4,
            "score": np.linspace(0.5, 0.8, 8),
        }
    )
    path = tmp_path / "scores.csv"
    frame.to_csv(path, index=False)
    result = cli("analyze", "variance", "--input", path)
    assert result.exit_code == 2
    assert "nli: accuracy, f1" in result.err and "--metric nli=accuracy" in result.err
    payload = _json(cli("analyze", "variance", "--input", path, "--metric", "nli=f1", "--json"))
    means = {(r["model"], r["language"]): r["mean"] for r in payload["per_language"]}
    f1 = frame[frame["metric"] == "f1"].set_index(["model", "language"])["score"]
    assert means == pytest.approx(f1.to_dict())


def test_metric_choice_parsing() -> None:
    choice = MetricChoice.parse(["mcc", "ner=micro_f1", " QA = F1 "])
    assert choice.metric == "mcc" and dict(choice.per_task) == {"ner": "micro_f1", "QA": "f1"}
    with pytest.raises(InputError, match="two metrics for every task"):
        MetricChoice.parse(["mcc", "f1"])
    with pytest.raises(InputError, match="TASK=METRIC"):
        MetricChoice.parse("=mcc")
    # declared primaries win over row counts; a declared null leaves the task out
    result = choose_metrics(
        {"a": ["x", "y", "y"], "b": ["s"], "c": ["u", "v"]},
        {"a": ["x", "x"], "c": [None]},
        MetricChoice(),
    )
    assert result.chosen == {"a": "x", "b": "s"} and "'c' left out" in result.notes[0]
    # several metrics, none declared: an error listing the choices, on every door (no
    # "most results" fallback for pages)
    with pytest.raises(InputError, match=r"a: x, y.*metric='a=x'"):
        choose_metrics({"a": ["x", "y", "y"]}, {}, MetricChoice())


def test_iteration_rows_drop_only_summaries_beside_replicates() -> None:
    frame = pd.DataFrame(
        {
            "model": ["A"] * 4 + ["B"],
            "task": "t",
            "language": "da",
            "dataset": "d",
            "metric": "mcc",
            "seed": pd.array([None] * 5, dtype="Int64"),
            "replicate": pd.array([None, 0, 1, 2, None], dtype="Int64"),
            "score": [0.5, 0.4, 0.5, 0.6, 0.7],
        }
    )
    kept, dropped = iteration_rows(frame)
    assert dropped == 1 and list(kept["score"]) == [0.4, 0.5, 0.6, 0.7]  # B has no replicates


# --- lm-eval: harness metric names reach the per-example statistics --------------------------


@pytest.fixture
def lm_eval_store(tmp_path: Path) -> Path:
    store = tmp_path / "lm.duckdb"
    api.import_lm_eval(LM_EVAL_OUT, store=store, families=["tinymt"], task_map=["tinyboolq=en"])
    return store


def _sample_values(task: str, metric: str) -> list[np.ndarray]:
    """Per-sample values of ``metric`` in each seed's samples file (read with json only)."""
    out = []
    for path in sorted(LM_EVAL_OUT.glob(f"*/samples_{task}_*.jsonl")):
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        out.append(np.array([float(r[metric]) for r in rows]))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("metric", ["acc", "acc_norm"])
def test_lm_eval_metric_names_reach_per_example_statistics(
    cli: Cli, lm_eval_store: Path, metric: str
) -> None:
    replicates = 4000
    payload = _json(
        cli("analyze", "variance", "--store", lm_eval_store, "--task", "tinyboolq", "--metric",
            metric, "--replicates", replicates, "--json")
    )  # fmt: skip
    (record,) = payload["per_language"]
    assert record["n_replicates"] == replicates  # resampled runs, not a score-only copy
    assert record["n_seeds"] == 2
    seeds = _sample_values("tinyboolq", metric)
    assert record["mean"] == pytest.approx(np.mean([v.mean() for v in seeds]), abs=0.005)
    # σ_boot: mean over seeds of each seed's bootstrap SD; the closed-form binomial SE
    # √(p(1-p)/n) (plug-in, as the nonparametric bootstrap) and scipy's bootstrap
    closed = np.mean([np.sqrt(v.mean() * (1 - v.mean()) / v.size) for v in seeds])
    scipy_se = np.mean(
        [
            stats.bootstrap(
                (v,), np.mean, n_resamples=4000, method="percentile", random_state=1
            ).standard_error
            for v in seeds
        ]
    )
    assert record["sigma_boot"] == pytest.approx(closed, rel=0.06)
    assert record["sigma_boot"] == pytest.approx(scipy_se, rel=0.08)
    # the seed SD is the SD of the two seeds' full-sample scores
    assert record["sigma_seed"] == pytest.approx(
        np.std([v.mean() for v in seeds], ddof=1), abs=0.01
    )


@pytest.mark.slow
def test_lm_eval_store_without_metric(cli: Cli, lm_eval_store: Path) -> None:
    payload = _json(cli("analyze", "variance", "--store", lm_eval_store, "--replicates", "200",
                        "--json"))  # fmt: skip
    units = {(r["task"], r["language"]) for r in payload["per_language"]}
    assert units == {("tinyboolq", "en"), ("tinymt", "de"), ("xnli", "de"), ("xnli", "fr")}
    notes = " ".join(payload["notes"])
    # lm-eval's first metric of each task's metric_list
    assert "tinyboolq: acc (declared primary)" in notes and "tinymt: bleu" in notes
    assert "xnli: acc" in notes
    assert "aggregate scores only left out (tinyxnli)" in notes  # the group
    per = {(r["task"], r["language"]): r["mean"] for r in payload["per_language"]}
    acc = _sample_values("xnli_de", "acc")
    assert per[("xnli", "de")] == pytest.approx(np.mean([v.mean() for v in acc]), abs=0.02)
    # the registry name keeps its old meaning: every accuracy run, configurations apart
    payload = _json(cli("analyze", "variance", "--store", lm_eval_store, "--task", "tinyboolq",
                        "--metric", "accuracy", "--replicates", "200", "--json"))  # fmt: skip
    assert {r["model"] for r in payload["per_language"]} == {
        "tiny-gpt2",
        "tiny-gpt2 [lm_eval=acc_norm]",
    }


def test_leaderboard_source_uses_the_same_selection(euroeval_store: tuple[Path, dict]) -> None:
    store, raw = euroeval_store
    source = api.leaderboard_source(store=store)
    replicated = source.replicated
    assert dict(replicated.task_metrics) == PRIMARY
    assert replicated.n_replicates == N_ITERATIONS  # the totals are not an 11th replicate
    frame = replicated.to_frame()
    means = frame.groupby(["model", "task", "language"])["score"].mean()
    for (model, task, language), mean in means.items():
        assert mean == pytest.approx(np.mean(raw[(model, task, language, PRIMARY[task])]))
    assert any("declared primary" in note for note in source.notes)


@pytest.mark.slow
def test_runner_store_ranks_each_task_on_its_first_metric(cli: Cli, tmp_path: Path) -> None:
    """``glotbench run`` stores several metrics per task; the task's first one is primary."""
    from ..runner.conftest import write_suite

    suite = write_suite(tmp_path)
    store = tmp_path / "run.duckdb"
    api.run_benchmark(suite, store=store, models=["lr", "majority", "tagger"])
    payload = _json(cli("analyze", "variance", "--store", store, "--replicates", "100", "--json"))
    notes = " ".join(payload["notes"])
    assert "ner: ner_f1 (declared primary)" in notes
    assert "sentiment: mcc (declared primary)" in notes
    # the same numbers as asking for each task's metric explicitly
    explicit = _json(
        cli("analyze", "variance", "--store", store, "--replicates", "100", "--metric",
            "ner=ner_f1", "--metric", "sentiment=mcc", "--json")
    )  # fmt: skip
    assert explicit["per_language"] == payload["per_language"]
    with api.open_store(store, read_only=True) as handle:
        runs = handle.runs.frame()
    for task, metric in (("sentiment", "mcc"), ("ner", "ner_f1")):
        chosen = runs[(runs["task"] == task) & (runs["metric"] == metric)]
        for model, group in chosen.groupby("model"):
            scores = []
            for run_id in group["run_id"]:
                _ids, stats = handle_stats(store, run_id)
                metric_obj = get_metric(metric, **group["metric_config"].iloc[0])
                scores.append(float(metric_obj.score(stats.sum(axis=0))))
            record = [
                r for r in payload["per_language"] if (r["model"], r["task"]) == (model, task)
            ]
            # the bootstrap mean of each run is close to its full-sample score
            assert record[0]["mean"] == pytest.approx(np.mean(scores), abs=0.05)


def handle_stats(store: Path, run_id: str) -> tuple[np.ndarray, np.ndarray]:
    with api.open_store(store, read_only=True) as handle:
        return handle.stats.of_run(run_id)
