"""Evaluation-size analysis: weighted τ against scipy, subsets, simulated taggers on UD data."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import weightedtau
from typer.testing import CliRunner

from glotbench.analysis.datasize import (
    conllu_statistics,
    datasize_analysis,
    model_and_seed,
    simulate_tagger_statistics,
    subset_masks,
    weighted_tau,
)
from glotbench.cli import app
from glotbench.metrics import get_metric
from glotbench.resample import mask_scores

UD = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "ud"
EWT = UD / "UD_English-EWT" / "en_ewt-ud-test.conllu"
DDT = UD / "UD_Danish-DDT" / "da_ddt-ud-test.conllu"
needs_ud = pytest.mark.skipif(
    not EWT.exists(), reason=f"shared UD data not found at {UD} (../shared/data is absent)"
)


def test_weighted_tau_equals_scipy_including_ties() -> None:
    rng = np.random.default_rng(0)
    xs, ys = [], []
    for trial in range(60):
        x = rng.integers(0, 6, 25).astype(float) if trial % 2 else rng.random(25)
        y = rng.integers(0, 4, 25).astype(float) if trial % 3 else rng.random(25)
        xs.append(x)
        ys.append(y)
    ours = weighted_tau(np.array(xs), np.array(ys))
    ref = [weightedtau(x, y).statistic for x, y in zip(xs, ys, strict=True)]
    np.testing.assert_allclose(ours, ref, atol=1e-13)


def test_subsets_are_whole_sentences_with_enough_tokens() -> None:
    tokens = np.random.default_rng(1).integers(3, 40, 300).astype(float)
    size = 700
    seq = subset_masks(tokens, size, "SEQ", 10, 0)
    assert seq.shape == (1, 300)
    chosen = np.flatnonzero(seq[0])
    assert chosen[-1] == 299 and np.all(np.diff(chosen) == 1)
    assert seq[0] @ tokens >= size > (seq[0] @ tokens - tokens[chosen[0]])
    rand = subset_masks(tokens, size, "RAND", 300, 4)
    assert rand.shape == (300, 300)
    assert np.all(rand @ tokens >= size)
    assert np.all(rand @ tokens < size + tokens.max())
    np.testing.assert_array_equal(rand[:10], subset_masks(tokens, size, "RAND", 10, 4))
    block = subset_masks(tokens, size, "RAND_SEQ", 50, 4)
    for row in block:
        idx = np.flatnonzero(row)
        assert np.all(np.diff(idx) == 1)
        assert row @ tokens >= size > row @ tokens - tokens[idx[-1]]
    assert np.all(subset_masks(tokens, 10**9, "RAND", 5, 0) == 1)


def test_generic_statistics_and_truth() -> None:
    # a generic (n × k) input: 6 models × 2 seeds of accuracy-like statistics
    rng = np.random.default_rng(2)
    n = 800
    tokens = rng.integers(5, 25, n).astype(float)
    rates = np.linspace(0.05, 0.20, 6)
    stats, models = [], []
    for i, rate in enumerate(rates):
        for _ in range(2):
            wrong = rng.binomial(tokens.astype(int), rate)
            stats.append(np.column_stack([tokens - wrong, tokens]))
            models.append(f"m{i}")
    stats = np.array(stats)
    metric = get_metric("token_accuracy")
    result = datasize_analysis(
        stats,
        metric,
        models=models,
        tokens=tokens,
        sizes=(100, 1000, 5000, None),
        n_draws=30,
        aso_draws=5,
        aso_bootstrap_iterations=100,
    )
    full = result.full_scores.set_index("model")["score"]
    assert list(full.sort_values(ascending=False).index) == [f"m{i}" for i in range(6)]
    model_rows = result.table[
        (result.table["unit"] == "model") & (result.table["strategy"] == "RAND")
    ]
    taus = model_rows.set_index("size")["tau_mean"]
    assert taus["100"] < taus["5000"] <= 1.0
    assert taus["all"] == 1.0
    all_row = model_rows.set_index("size").loc["all"]
    assert all_row["aso_disagreements_mean"] == 0
    # a subset's score is the metric on that subset
    mask = subset_masks(tokens, 1000, "RAND", 1, 0)
    direct = stats[0][mask[0] == 1].sum(0)
    assert mask_scores(stats, metric, mask)[0, 0] == pytest.approx(direct[0] / direct[1])
    payload = result.to_dict()
    json.dumps(payload, allow_nan=False)
    assert {r["strategy"] for r in payload["recommendation"]} == {"SEQ", "RAND", "RAND_SEQ"}


@pytest.mark.slow
@needs_ud
def test_simulated_taggers_on_ud(tmp_path: Path) -> None:
    stats, models, tokens, metric = simulate_tagger_statistics(
        EWT, [0.03, 0.05, 0.07, 0.09, 0.11], n_seeds=3, seed=0, max_tokens=12_000
    )
    assert stats.shape[0] == 15 and tokens.sum() >= 12_000
    result = datasize_analysis(
        stats,
        metric,
        models=models,
        tokens=tokens,
        n_draws=40,
        aso_draws=10,
        aso_bootstrap_iterations=100,
    )
    # the full-set ranking is the known truth: lower error rate ranks higher
    order = result.full_scores.sort_values("score", ascending=False)["model"].tolist()
    assert order == [f"tagger{i:02d}" for i in range(5)]
    rand = result.table[(result.table["strategy"] == "RAND") & (result.table["unit"] == "model")]
    assert rand["tau_mean"].iloc[0] < rand["tau_mean"].iloc[-1] == 1.0
    rec = result.recommendation.set_index(["strategy", "unit"]).loc[("RAND", "model")]
    assert rec["recommended_size"] is not None and rec["recommended_size"] <= 10_000
    path = result.plot(tmp_path / "curve.png")
    assert path.stat().st_size > 1000


@pytest.mark.slow
@needs_ud
def test_conllu_predictions(tmp_path: Path) -> None:
    gold_lines = DDT.read_text(encoding="utf-8").splitlines()[:2000]
    while gold_lines and gold_lines[-1].strip():
        gold_lines.pop()
    gold = tmp_path / "gold.conllu"
    gold.write_text("\n".join(gold_lines) + "\n", encoding="utf-8")
    rng = np.random.default_rng(0)
    for name, rate in (
        ("good-seed1", 0.1),
        ("good-seed2", 0.12),
        ("bad-seed1", 0.3),
        ("bad-seed2", 0.32),
    ):
        out = []
        for line in gold_lines:
            cols = line.split("\t")
            if len(cols) == 10 and cols[0].isdigit() and rng.random() < rate:
                cols[7] = "dep"  # wrong relation
            out.append("\t".join(cols))
        (tmp_path / f"{name}.conllu").write_text("\n".join(out) + "\n", encoding="utf-8")
    preds = sorted(tmp_path.glob("*-seed*.conllu"))
    stats, models, tokens, metric = conllu_statistics(gold, preds, "las")
    assert sorted(set(models)) == ["bad", "good"]
    assert model_and_seed("x/parser-seed3.conllu") == ("parser", 3)
    scores = metric.score(stats.sum(1))
    assert np.all(scores < 1.0) and np.all(scores > 0.5)
    out = CliRunner().invoke(
        app,
        [
            "analyze",
            "datasize",
            "--gold",
            str(gold),
            *sum((["--pred", str(p)] for p in preds), []),
            "--metric",
            "las",
            "--draws",
            "10",
            "--sizes",
            "100,500,all",
            "--aso-iterations",
            "50",
            "--json",
            "--plot",
            str(tmp_path / "las.png"),
        ],
    )
    assert out.exit_code == 0, out.output
    payload = json.loads(out.stdout)
    assert payload["metric"] == "las" and payload["n_seeds"] == 2
    assert (tmp_path / "las.png").exists()
