"""`glotbench analyze lmm --store` on a store of runs (per-example statistics only), as the
runner writes them (issue 12, item 6): each run's score is the metric's score of its summed
statistics, checked against scikit-learn's F1 on the same predictions, and the fitted model
equals the one fitted to the same scores given as a CSV."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import f1_score
from typer.testing import CliRunner

from glotbench import api
from glotbench.analysis.mixed import lmm
from glotbench.analysis.sources.run_scores import run_scores_from_store
from glotbench.cli import app
from glotbench.metrics import get_metric
from glotbench.store import RunRecord, Store

FORMULA = "score ~ task + (1 | model) + (1 | language)"


def _write_store(path: Path, seed: int = 0) -> pd.DataFrame:
    """6 models × 5 languages × 2 tasks × 2 seeds of binary predictions; F1 runs in the store.

    Returns the reference scores (scikit-learn's F1 of each run's predictions).
    """
    rng = np.random.default_rng(seed)
    metric = get_metric("f1_binary")
    rows = []
    skill = rng.normal(0, 0.6, 6)
    ease = rng.normal(0, 0.5, 5)
    with Store.open(path) as store:
        for t, task in enumerate(["nli", "qa"]):
            for li in range(5):
                language = f"l{li}"
                n = 60 + 10 * li  # datasets of different sizes
                gold = rng.integers(0, 2, n)
                for mi in range(6):
                    for run_seed in (1, 2):
                        p_right = 1 / (1 + np.exp(-(0.8 + skill[mi] + ease[li] + 0.4 * t)))
                        right = rng.uniform(size=n) < p_right
                        pred = np.where(right, gold, 1 - gold)
                        record = RunRecord(
                            model=f"m{mi}",
                            task=task,
                            language=language,
                            seed=run_seed,
                            metric="f1_binary",
                            metric_config=metric.config(),
                            stat_names=metric.stat_names(),
                        )
                        ids = [f"{task}-{language}-{i}" for i in range(n)]
                        assert store.runs.write(record, ids, metric.stats(pred, gold))
                        rows.append(
                            {
                                "model": f"m{mi}",
                                "task": task,
                                "language": language,
                                "seed": run_seed,
                                "score": f1_score(gold, pred, pos_label=1),
                            }
                        )
    return pd.DataFrame(rows)


@pytest.mark.slow
def test_run_scores_are_the_metric_of_the_summed_statistics(tmp_path: Path) -> None:
    reference = _write_store(tmp_path / "s.duckdb")
    with Store.open(tmp_path / "s.duckdb", read_only=True) as store:
        table = run_scores_from_store(store)
        assert run_scores_from_store(store, metric="accuracy").empty
    assert len(table) == len(reference) == 120
    merged = table.merge(reference, on=["model", "task", "language", "seed"], suffixes=("", "_ref"))
    assert len(merged) == 120
    np.testing.assert_allclose(merged["score"], merged["score_ref"], rtol=1e-12)
    assert set(table["metric"]) == {"f1_binary"}


@pytest.mark.slow
def test_lmm_from_the_runs_equals_the_lmm_from_the_same_scores_as_csv(tmp_path: Path) -> None:
    reference = _write_store(tmp_path / "s.duckdb", seed=1)
    csv = tmp_path / "scores.csv"
    reference.to_csv(csv, index=False)
    runner = CliRunner()
    args = ["analyze", "lmm", "-f", FORMULA, "--emmeans", "task", "--json"]
    from_store = runner.invoke(app, [*args, "--store", str(tmp_path / "s.duckdb")])
    from_csv = runner.invoke(app, [*args, "--input", str(csv)])
    assert from_store.exit_code == 0, from_store.output
    assert from_csv.exit_code == 0, from_csv.output
    a, b = json.loads(from_store.stdout), json.loads(from_csv.stdout)
    assert a["n_observations"] == b["n_observations"] == 120
    for key in ("fixed_effects", "anova", "random_effects"):
        for row_a, row_b in zip(a[key], b[key], strict=True):
            for col, value in row_b.items():
                if isinstance(value, float):
                    assert row_a[col] == pytest.approx(value, rel=1e-6, abs=1e-10), (key, col)
                else:
                    assert row_a[col] == value
    # (rows come in another order, so the optimiser path differs at ~1e-9)
    # and the same as fitting the reference scores directly
    direct = lmm(FORMULA, reference)
    got = [r["estimate"] for r in a["fixed_effects"]]
    np.testing.assert_allclose(got, direct.fit.beta, rtol=1e-6)


@pytest.mark.slow
def test_api_filters_and_metric_choice(tmp_path: Path) -> None:
    _write_store(tmp_path / "s.duckdb", seed=2)
    frame, _ = api.load_lmm_frame(store=tmp_path / "s.duckdb", tasks=["qa"], models=["m0", "m1"])
    assert set(frame["task"]) == {"qa"} and set(frame["model"]) == {"m0", "m1"}
    assert len(frame) == 2 * 5 * 2
    with pytest.raises(Exception, match="no runs or scores"):
        api.load_lmm_frame(store=tmp_path / "s.duckdb", metric="accuracy")


@pytest.mark.slow
def test_a_runner_made_store(tmp_path: Path) -> None:
    """`glotbench run` writes runs only; `analyze lmm --store` fits them. Each run's score
    averaged over the iterations equals the runner's own full-test-set mean."""
    from tests.runner.conftest import write_sentiment

    languages = ["en", "da", "sv"]
    for i, lang in enumerate(languages):
        write_sentiment(tmp_path / f"{lang}.jsonl", seed=i)
    datasets = "\n".join(
        f"  - {{name: sent-{lang}, task: sentiment, language: {lang}, loader: jsonl, "
        f"paths: [{lang}.jsonl]}}"
        for lang in languages
    )
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: tiny-lmm\nprotocol: {iterations: 2, seed: 7, speed_iterations: 2,\n"
        "  speed_seconds: 0.01, speed_warmup_seconds: 0.01}\n"
        "splits: {train: 60, validation: 10, test: 40}\n"
        f"datasets:\n{datasets}\n"
        "models:\n  - {name: lr, kind: tfidf-logreg}\n  - {name: majority, kind: majority}\n",
        encoding="utf-8",
    )
    store = tmp_path / "s.duckdb"
    runner = CliRunner()
    ran = runner.invoke(app, ["run", str(suite), "--store", str(store), "--json"])
    assert ran.exit_code == 0, ran.output
    summary = pd.DataFrame(json.loads(ran.stdout)["scores"])
    frame, _ = api.load_lmm_frame(store=store, metric="f1_macro")
    assert len(frame) == 2 * 3 * 2  # models × languages × iterations
    means = frame.groupby(["model", "dataset"])["score"].mean()
    expected = summary[summary["metric"] == "f1_macro"].set_index(["model", "dataset"])
    for key, value in means.items():
        assert value == pytest.approx(expected.loc[key, "full_test_mean"], rel=1e-12)
    out = runner.invoke(
        app,
        [
            "analyze",
            "lmm",
            "--store",
            str(store),
            "--metric",
            "f1_macro",
            "-f",
            "score ~ model + (1 | language)",
            "--json",
        ],
    )
    assert out.exit_code == 0, out.output
    fit = json.loads(out.stdout)
    direct = lmm("score ~ model + (1 | language)", frame)
    np.testing.assert_allclose([r["estimate"] for r in fit["fixed_effects"]], direct.fit.beta)
    several = runner.invoke(
        app, ["analyze", "lmm", "--store", str(store), "-f", "score ~ model + (1 | language)"]
    )
    # several metrics: a model is fitted for each (issue 22.6), the terminal says so
    assert several.exit_code == 0, several.output
    text = " ".join(several.stdout.split())
    assert "metric f1_macro" in text and "metric mcc" in text and "fitted for each" in text
