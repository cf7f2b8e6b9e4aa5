"""Headline = point estimate (issue 22 item 2): harness figures shown as the harness shows them.

A model's score on a test set is its full-test-set score (mean over seeds),
never a mean of bootstrap replicates. References are the harnesses' own
numbers read from their output files: lm-evaluation-harness's ``acc,none`` per
task and run (results_*.json), EuroEval's ``total`` per dataset (the mean of
its iterations, in percent).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from glotbench import api
from glotbench.analysis.euroeval_iterations import iterations_from_replicated
from glotbench.analysis.settings import AnalysisSettings
from glotbench.report.leaderboard import build_leaderboard

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "importers"
LM_EVAL = FIXTURES / "lm_eval_out" / "tiny-gpt2"
EUROEVAL = FIXTURES / "euroeval" / "euroeval_benchmark_results.jsonl"
#: lm-eval task name -> (task, language) as imported
LM_EVAL_CELLS = {
    "xnli_de": ("xnli", "de"),
    "xnli_fr": ("xnli", "fr"),
    "tinyboolq": ("tinyboolq", "und"),
}
SETTINGS = AnalysisSettings(n_draws=300, n_replicates=60)


def _lm_eval_accuracy() -> dict[tuple[str, str], float]:
    """lm-eval's accuracy per (task, language): mean over the runs (seeds) of ``acc,none``."""
    per_run = [json.loads(p.read_text())["results"] for p in sorted(LM_EVAL.glob("results_*.json"))]
    assert len(per_run) == 2
    return {
        cell: float(np.mean([run[name]["acc,none"] for run in per_run]))
        for name, cell in LM_EVAL_CELLS.items()
    }


def _cells(hierarchy: list[dict]) -> dict[tuple[str, str, str], float]:
    return {
        (row["model"], *row["name"].split("/")): row["score"]
        for row in hierarchy
        if row["level"] == "task_language"
    }


@pytest.mark.slow
def test_lm_eval_accuracy_equals_the_harness_in_aggregate_leaderboard_and_report(
    tmp_path: Path,
) -> None:
    store = tmp_path / "lm.duckdb"
    api.import_lm_eval(LM_EVAL, store=store)
    expected = _lm_eval_accuracy()
    source = api.leaderboard_source(store=store, metric="acc", n_replicates=60)
    replicated = source.replicated
    assert replicated.source == "examples"  # per-example statistics, bootstrapped here
    # analyze aggregate (its JSON form)
    cells = _cells(api.analyze_aggregate(replicated, SETTINGS).to_dict()["hierarchy"])
    for (task, language), accuracy in expected.items():
        assert cells[("tiny-gpt2", task, language)] == pytest.approx(accuracy, abs=1e-9)
    # the leaderboard JSON: every cell as printed (4 decimals), from the unrounded points
    page = build_leaderboard(replicated, settings=SETTINGS).to_dict()
    printed = {(row[1], row[2]): row[3] for row in page["cells"]}
    units = [(u.task, u.language) for u in replicated.units]
    points = dict(zip(units, replicated.points()[0], strict=True))
    for cell, accuracy in expected.items():
        assert points[cell] == pytest.approx(accuracy, abs=1e-9)
        assert printed[cell] == round(accuracy, 4)
    # the EuroEval rank score's per-dataset mean (iterations from the replicates, `analyze
    # ranks`): the point estimate too; the replicates only spread the iterations around it
    iterations = iterations_from_replicated(replicated, range(len(units)))
    for u, cell in enumerate(units):
        assert iterations.mean[0, u] == pytest.approx(expected[cell], abs=1e-9)
        assert np.nanstd(iterations.scores[0, u]) > 0
    # the report: per-task score column (3 decimals) — one language for tinyboolq, and the
    # mean of xnli's two languages
    api.write_report(tmp_path / "r.html", source, settings=SETTINGS)
    html = (tmp_path / "r.html").read_text()
    xnli = (expected[("xnli", "de")] + expected[("xnli", "fr")]) / 2
    for task, value in (("tinyboolq", expected[("tinyboolq", "und")]), ("xnli", xnli)):
        row = re.search(
            rf'<td class="text">{task}</td><td class="text">tiny-gpt2</td><td>([0-9.]+)</td>', html
        )
        assert row is not None, f"no {task} row in the report"
        assert row.group(1) == f"{value:.3f}"


def test_euroeval_scores_equal_the_harness_totals(tmp_path: Path) -> None:
    store = tmp_path / "ee.duckdb"
    api.import_euroeval(EUROEVAL, store=store)
    totals = {}
    for line in EUROEVAL.read_text().splitlines():
        if line.strip():
            record = json.loads(line)
            totals[(record["model"], record["dataset"])] = record["results"]["total"]
    source = api.leaderboard_source(store=store, n_replicates=60)
    cells = _cells(api.analyze_aggregate(source.replicated, SETTINGS).to_dict()["hierarchy"])
    # EuroEval's totals are percentages of each task's primary metric
    primary = {
        "sentiment-classification": "test_mcc",
        "named-entity-recognition": "test_micro_f1_no_misc",
    }
    dataset_cell = {
        "angry-tweets": ("sentiment-classification", "da"),
        "norne-nb": ("named-entity-recognition", "nb+no"),
    }
    checked = 0
    for (model, dataset), total in totals.items():
        if dataset not in dataset_cell:
            continue
        task, language = dataset_cell[dataset]
        expected = total[primary[task]] / 100
        assert cells[(model, task, language)] == pytest.approx(expected, abs=1e-9)
        checked += 1
    assert checked == 4
