"""Learning curves (ScandEval Appendix B): intervals, the paired test, the detectability rule."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import norm
from typer.testing import CliRunner

from glotbench.analysis.learning_curve import curve_points, saturation_size
from glotbench.cli import app
from glotbench.metrics import get_metric

ACCURACY = get_metric("accuracy")


def accuracy_stats(correct: np.ndarray) -> np.ndarray:
    """(sizes × 1 seed × n × 2) statistics of 0/1 correctness vectors (sizes × n)."""
    c = np.asarray(correct, dtype=float)
    return np.stack([c, np.ones_like(c)], axis=-1)[:, None, :, :]


def test_saturation_rule():
    sizes = [8, 16, 32, 64, 128]
    assert saturation_size(sizes, [True, True, False, False, False]) == 32
    # a significant size above a non-significant one: the rule starts above it
    assert saturation_size(sizes, [True, False, True, False, False]) == 64
    assert saturation_size(sizes, [True, True, True, True, False]) == 128
    assert saturation_size(sizes, [False, False, False, False, False]) == 8


def test_paired_test_matches_the_closed_form():
    """One seed: the paired bootstrap SE of d = acc_K − acc_k is √(Var(dᵢ)/n) (ddof 0)."""
    rng = np.random.default_rng(3)
    n = 1000
    largest = (rng.random(n) < 0.85).astype(float)

    def degrade(down: float, up: float = 0.0) -> np.ndarray:
        out = largest.copy()  # flip shares of the right answers to wrong and back
        u = rng.random(n)
        out[(u < down) & (largest == 1)] = 0
        out[(u < up) & (largest == 0)] = 1
        return out

    # gains of about 20, 6, 1 and 0 points: clearly significant, significant, then
    # a 1-point gain with as many answers turned right as wrong (not significant)
    correct = np.stack([degrade(0.24), degrade(0.07), degrade(0.05, 0.22), largest, largest])
    sizes = [16, 32, 64, 128, 256]
    points = curve_points(sizes, accuracy_stats(correct), ACCURACY, n_draws=4000, seed=1)
    diffs = largest - correct
    closed_se = np.sqrt(diffs.var(axis=1) / n)
    closed_p = 2 * norm.sf(np.abs(diffs.mean(axis=1)) / np.where(closed_se > 0, closed_se, 1))
    closed_p[closed_se == 0] = 1.0
    assert points.difference == pytest.approx(diffs.mean(axis=1), abs=1e-12)
    # Monte Carlo error of an SD from 4,000 draws: about 1/√(2·4000) ≈ 1.1 % relative
    assert points.difference_se[:3] == pytest.approx(closed_se[:3], rel=0.05)
    assert list(points.significant) == list(closed_p < 0.05) == [True, True, False, False, False]
    assert points.saturation == 64
    # the interval of each point is the percentile interval of its test-set bootstrap:
    # for accuracy about acc ± 1.96 √(acc(1 − acc)/n)
    acc = correct.mean(axis=1)
    half = 1.96 * np.sqrt(acc * (1 - acc) / n)
    assert points.low == pytest.approx(acc - half, abs=0.01)
    assert points.high == pytest.approx(acc + half, abs=0.01)


@pytest.mark.slow
def test_rejection_rates_match_the_normal_power():
    """Simulated truth: examples right with p and p + δ (independent); the share of data
    sets where size k differs significantly from the largest is the two-sided z test's
    power, Φ(δ/SE − z) + Φ(−δ/SE − z), and α when δ = 0."""
    n, reps, p = 400, 150, 0.7
    rng = np.random.default_rng(11)
    for delta in (0.0, 0.06):
        se = np.sqrt((p * (1 - p) + (p + delta) * (1 - p - delta)) / n)
        z = norm.isf(0.025)
        power = norm.cdf(delta / se - z) + norm.cdf(-delta / se - z)
        hits = 0
        for _ in range(reps):
            small = (rng.random(n) < p).astype(float)
            large = (rng.random(n) < p + delta).astype(float)
            pts = curve_points(
                [10, 20],
                accuracy_stats(np.stack([small, large])),
                ACCURACY,
                n_draws=300,
                seed=int(rng.integers(1 << 30)),
            )
            hits += bool(pts.significant[0])
        mc = 3 * np.sqrt(power * (1 - power) / reps) + 0.02
        assert abs(hits / reps - power) < mc, (delta, hits / reps, power)


def test_seed_component_enters_the_interval():
    """Several seeds: se² ≈ se_seed²·(S − 1)/S + se_boot² (seeds resampled with replacement)."""
    rng = np.random.default_rng(5)
    n, seeds = 800, 6
    runs = [
        (rng.random(n) < 0.6 + 0.04 * rng.standard_normal()).astype(float) for _ in range(seeds)
    ]
    stats = np.stack([np.stack([r, np.ones(n)], axis=-1) for r in runs])[None]
    stats = np.concatenate([stats, stats])  # two identical sizes: difference exactly 0
    pts = curve_points([1, 2], stats, ACCURACY, n_draws=4000, seed=2)
    expected = np.sqrt(pts.se_seed**2 * (seeds - 1) / seeds + pts.se_boot**2)
    assert pts.se == pytest.approx(expected, rel=0.15)
    assert pts.difference_se[0] == 0 and not pts.significant[0]


@pytest.mark.slow
def test_cli_learning_curve_on_a_tiny_suite(tmp_path: Path):
    from tests.runner.conftest import write_sentiment

    write_sentiment(tmp_path / "sent.jsonl", n=360)
    suite = tmp_path / "lc.yaml"
    suite.write_text(
        "name: lc\nprotocol: {iterations: 2, seed: 7, speed_iterations: 0}\n"
        "splits: {train: 60, validation: 0, test: 200}\n"
        "datasets:\n  - {name: sent, task: sentiment, language: en, loader: jsonl, "
        "paths: [sent.jsonl]}\nmodels:\n  - {name: lr, kind: tfidf-logreg}\n",
        encoding="utf-8",
    )
    store = tmp_path / "lc.duckdb"
    runner = CliRunner()
    ran = runner.invoke(
        app, ["run", str(suite), "--train-sizes", "8,32,128", "--store", str(store), "--json"]
    )
    assert ran.exit_code == 0, ran.output
    plot = tmp_path / "lc.png"
    result = runner.invoke(
        app,
        [
            "analyze",
            "learning-curve",
            "--store",
            str(store),
            "--draws",
            "500",
            "--plot",
            str(plot),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    curve = {row["train_size"]: row for row in out["curves"]}
    assert sorted(curve) == [8, 32, 128] and curve[8]["metric"] == "mcc"
    assert curve[128]["score"] > curve[8]["score"] + 0.3  # more data, better tf-idf model
    assert curve[8]["significant"] and curve[8]["low"] <= curve[8]["score"] <= curve[8]["high"]
    assert out["saturation"][0]["largest"] == 128
    assert plot.stat().st_size > 0
    table = runner.invoke(
        app, ["analyze", "learning-curve", "--store", str(store), "--draws", "200"]
    )
    assert table.exit_code == 0 and "no longer detectable" in table.output


def test_store_curves_average_seeds_and_use_the_latest_configuration(tmp_path: Path):
    from glotbench.api import learning_curve
    from glotbench.store.schema import RunRecord
    from glotbench.store.store import Store

    rng = np.random.default_rng(0)
    n = 50
    ids = [f"e{i}" for i in range(n)]
    expected: dict[int, list[float]] = {10: [], 40: []}
    with Store.open(tmp_path / "s.duckdb") as store:
        for size, config, p in ((10, "a", 0.5), (40, "b", 0.6), (40, "c", 0.9)):
            for seed in (1, 2):
                correct = (rng.random(n) < p).astype(float)
                if config != "b":
                    expected[size].append(correct.mean())
                record = RunRecord(
                    model="m",
                    dataset="d",
                    task="sentiment",
                    language="xx",
                    seed=seed,
                    config_hash=config,
                    metric="accuracy",
                    stat_names=("value", "count"),
                    model_metadata={"train_size": size},
                )
                # the example order of a run does not matter: rows are aligned by id
                order = rng.permutation(n)
                stats = np.stack([correct, np.ones(n)], axis=1)[order]
                store.runs.write(record, [ids[i] for i in order], stats)
    result = learning_curve(tmp_path / "s.duckdb", n_draws=300)
    scores = dict(zip(result.table["train_size"], result.table["score"], strict=True))
    assert scores[10] == pytest.approx(np.mean(expected[10]))
    assert scores[40] == pytest.approx(np.mean(expected[40]))  # config c, written last
    assert any("the latest is used" in note for note in result.notes)
    assert result.to_dict()["saturation"][0]["saturation_size"] == 40
