"""Paired bootstrap / permutation against scipy, McNemar and corrections against statsmodels."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests
from typer.testing import CliRunner

from glotbench.analysis.significance import (
    adjust_p_values,
    mcnemar_test,
    paired_bootstrap_test,
    permutation_test,
)
from glotbench.cli import app
from glotbench.errors import InputError
from glotbench.metrics import get_metric
from glotbench.metrics.base import MeanMetric
from glotbench.resample import replicate_scores


def _mean_pair(seed: int = 3, n: int = 200, shift: float = 0.02):
    rng = np.random.default_rng(seed)
    x = rng.normal(0.5, 0.2, n)
    y = x + rng.normal(shift, 0.2, n)
    return x, y, MeanMetric.stats_from_values(x), MeanMetric.stats_from_values(y)


def _mc_tol(p: float, b: int) -> float:
    return 4 * np.sqrt(2 * max(p, 0.01) * (1 - p) / b) + 1e-3


def test_permutation_p_value_matches_scipy() -> None:
    x, y, sx, sy = _mean_pair()
    ours = permutation_test(sx, sy, get_metric("accuracy"), n_resamples=20_000, seed=1)
    ref = stats.permutation_test(
        (x, y),
        lambda a, b, axis: np.mean(a, axis=axis) - np.mean(b, axis=axis),
        permutation_type="samples",
        n_resamples=20_000,
        vectorized=True,
        rng=0,
    )
    assert ours.difference == pytest.approx(ref.statistic)
    assert 0.01 < ref.pvalue < 0.9
    assert ours.p_value == pytest.approx(ref.pvalue, abs=_mc_tol(ref.pvalue, 20_000))


def test_permutation_exact_for_a_ratio_metric() -> None:
    # binary F1 is not a mean: compare with the exact randomisation distribution (2^n swaps)
    pred_a = np.array([1, 1, 0, 1, 0, 1, 1, 0, 1, 0, 1, 1])
    pred_b = np.array([1, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1, 0])
    gold = np.array([1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 1, 0])
    f1 = get_metric("f1_binary")
    sa, sb = f1.stats(list(pred_a), list(gold)), f1.stats(list(pred_b), list(gold))
    observed = float(f1.score(sa.sum(0)) - f1.score(sb.sum(0)))
    null = []
    for swap in itertools.product([0, 1], repeat=len(gold)):
        s = np.array(swap)[:, None]
        null.append(
            float(
                f1.score((sa * (1 - s) + sb * s).sum(0)) - f1.score((sb * (1 - s) + sa * s).sum(0))
            )
        )
    exact = np.mean(np.abs(null) >= abs(observed) - 1e-12)
    ours = permutation_test(sa, sb, f1, n_resamples=20_000, seed=0)
    assert ours.difference == pytest.approx(observed)
    assert ours.p_value == pytest.approx(exact, abs=_mc_tol(exact, 20_000))


def test_bootstrap_matches_scipy_and_the_engine() -> None:
    x, y, sx, sy = _mean_pair(seed=5, shift=0.03)
    metric = get_metric("accuracy")
    ours = paired_bootstrap_test(sx, sy, metric, n_resamples=20_000, seed=2)
    ref = stats.bootstrap(
        (x, y),
        lambda a, b, axis: np.mean(a, axis=axis) - np.mean(b, axis=axis),
        paired=True,
        n_resamples=20_000,
        method="percentile",
        rng=0,
    )
    se = ref.standard_error
    assert ours.ci_low == pytest.approx(ref.confidence_interval.low, abs=0.1 * se)
    assert ours.ci_high == pytest.approx(ref.confidence_interval.high, abs=0.1 * se)
    dist = ref.bootstrap_distribution
    p_ref = (1 + np.sum(np.abs(dist - dist.mean()) >= abs(ours.difference))) / (dist.size + 1)
    assert 0.005 < p_ref < 0.9
    assert ours.p_value == pytest.approx(p_ref, abs=_mc_tol(p_ref, 20_000))
    # the replicates are the engine's paired replicates, whatever the chunk size
    reps = replicate_scores(np.stack([sx, sy]), metric, n_resamples=20_000, seed=2)
    np.testing.assert_array_equal(ours.replicates, reps[:, 0] - reps[:, 1])
    chunked = paired_bootstrap_test(sx, sy, metric, n_resamples=20_000, seed=2, chunk_size=256)
    assert chunked.p_value == ours.p_value


def test_identical_systems_are_not_different() -> None:
    _, _, sx, _ = _mean_pair()
    metric = get_metric("accuracy")
    assert permutation_test(sx, sx, metric, n_resamples=500).p_value == 1.0
    assert paired_bootstrap_test(sx, sx, metric, n_resamples=500).p_value == 1.0


@pytest.mark.parametrize(("exact", "correction"), [(True, True), (False, True), (False, False)])
def test_mcnemar_matches_statsmodels(exact: bool, correction: bool) -> None:
    rng = np.random.default_rng(4)
    a, b = rng.random(300) < 0.72, rng.random(300) < 0.64
    ours = mcnemar_test(a.astype(int), b.astype(int), exact=exact, correction=correction)
    table = [[np.sum(a & b), np.sum(a & ~b)], [np.sum(~a & b), np.sum(~a & ~b)]]
    ref = mcnemar(table, exact=exact, correction=correction)
    assert ours.statistic == pytest.approx(ref.statistic)
    assert ours.p_value == pytest.approx(ref.pvalue)


@pytest.mark.parametrize("method", ["bonferroni", "holm", "fdr_bh"])
def test_corrections_match_statsmodels(method: str) -> None:
    p = np.random.default_rng(1).random(15) ** 3
    ours = adjust_p_values(p, method, alpha=0.05)
    reject, corrected, _, _ = multipletests(p, alpha=0.05, method=method)
    np.testing.assert_allclose(ours.adjusted, corrected, atol=1e-15)
    np.testing.assert_array_equal(ours.reject, reject)


def test_bad_input() -> None:
    metric = get_metric("accuracy")
    with pytest.raises(InputError):
        permutation_test(np.ones((3, 2)), np.ones((4, 2)), metric)
    with pytest.raises(InputError):
        mcnemar_test([0, 1, 2], [0, 1, 1])
    with pytest.raises(InputError):
        adjust_p_values([0.1, 1.2])
    with pytest.raises(InputError):
        adjust_p_values([0.1], method="sidak-ish")


def test_cli_bootstrap_and_mcnemar(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    a, b, r = tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "ref.txt"
    labels = ["pos", "neg", "neu"]
    gold = rng.choice(labels, 150)
    pa = np.where(rng.random(150) < 0.8, gold, rng.choice(labels, 150))
    pb = np.where(rng.random(150) < 0.6, gold, rng.choice(labels, 150))
    for path, values in ((a, pa), (b, pb), (r, gold)):
        path.write_text("\n".join(values) + "\n")
    runner = CliRunner()
    out = runner.invoke(
        app,
        [
            "significance",
            "bootstrap",
            str(a),
            str(b),
            "-r",
            str(r),
            "--metric",
            "f1_macro",
            "--resamples",
            "2000",
            "--json",
        ],
    )
    assert out.exit_code == 0, out.output
    payload = json.loads(out.stdout)
    assert payload["metric"] == "f1_macro" and payload["difference"] > 0
    assert (
        payload["confidence_interval"][0]
        < payload["difference"]
        < payload["confidence_interval"][1]
    )
    out = runner.invoke(app, ["significance", "mcnemar", str(a), str(b), "-r", str(r), "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["n_examples"] == 150
    out = runner.invoke(
        app,
        [
            "significance",
            "permutation",
            str(a),
            str(b),
            "-r",
            str(r),
            "--metric",
            "accuracy",
            "--resamples",
            "1000",
            "--json",
        ],
    )
    assert out.exit_code == 0, out.output
    short = tmp_path / "short.txt"
    short.write_text("pos\n")
    out = runner.invoke(
        app, ["significance", "bootstrap", str(a), str(short), "-r", str(r), "--metric", "accuracy"]
    )
    assert isinstance(out.exception, InputError)
