"""DHARMa's quantile test and per-group tests (issue 12, item 6).

References outside glotbench: statsmodels' multiple-testing adjustments and
one-way ANOVA, scipy's KS distributions, the sample quantile (closed form of
an intercept-only quantile regression), and simulation with known truth — a
correctly specified model is flagged at most at the nominal rate, an additive
model fitted to data with a language × task interaction is flagged by the
per-cell test (the situation of Benito-Santos, Ghajari & Fresno, where DHARMa
flagged the additive model).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.formula.api import ols
from statsmodels.stats.anova import anova_lm
from statsmodels.stats.multitest import multipletests
from typer.testing import CliRunner

from glotbench.analysis.mixed import lmm
from glotbench.analysis.mixed.dharma import simulate_residuals
from glotbench.analysis.mixed.dharma_tests import (
    bh_adjust,
    categorical_test,
    holm_adjust,
    ks_uniform,
    quantile_test,
    rank_transform,
)
from glotbench.cli import app
from glotbench.errors import InputError


@pytest.mark.slow
def test_adjustments_match_statsmodels() -> None:
    rng = np.random.default_rng(3)
    for m in (1, 2, 7, 30):
        p = rng.uniform(size=m) ** 3
        p[rng.integers(0, m)] = p[0]  # a tie
        np.testing.assert_allclose(holm_adjust(p), multipletests(p, method="holm")[1])
        np.testing.assert_allclose(bh_adjust(p), multipletests(p, method="fdr_bh")[1])
    with_nan = bh_adjust([0.01, np.nan, 0.04])
    assert np.isnan(with_nan[1])
    np.testing.assert_allclose(with_nan[[0, 2]], multipletests([0.01, 0.04], method="fdr_bh")[1])


def test_rank_transform_is_average_rank_over_max() -> None:
    np.testing.assert_allclose(
        rank_transform([3.0, 1.0, 3.0, 2.0]), np.array([3.5, 1, 3.5, 2]) / 3.5
    )


def test_ks_uses_the_exact_distribution_below_100_values_as_r() -> None:
    rng = np.random.default_rng(0)
    small, large = rng.uniform(size=40), rng.uniform(size=300) ** 1.2
    d, p = ks_uniform(small)
    # the exact two-sided p from scipy's Kolmogorov distribution of D_n (Marsaglia et al.)
    assert p == pytest.approx(float(stats.kstwo.sf(d, 40)), rel=1e-10)
    d, p = ks_uniform(large)
    assert p == pytest.approx(float(stats.kstwobign.sf(d * np.sqrt(300))), rel=1e-10)


def test_categorical_test_against_scipy_and_an_anova_of_absolute_deviations() -> None:
    rng = np.random.default_rng(1)
    res = np.concatenate(
        [rng.uniform(size=30), rng.uniform(0.2, 0.9, size=50), rng.uniform(size=20)]
    )
    groups = ["a"] * 30 + ["b"] * 50 + ["c"] * 20
    out = categorical_test(res, groups, factor="g")
    assert out.levels == ["a", "b", "c"] and out.n == [30, 50, 20]
    raw = [
        stats.kstest(res[np.array(groups) == g], "uniform", method="exact").pvalue for g in "abc"
    ]
    np.testing.assert_allclose(out.p, raw, rtol=1e-10)
    np.testing.assert_allclose(out.p_adjusted, multipletests(raw, method="holm")[1])
    assert out.flagged == ["b"]
    # Levene (Brown–Forsythe): one-way ANOVA of |r − group median|
    frame = pd.DataFrame({"r": res, "g": groups})
    frame["dev"] = (frame["r"] - frame.groupby("g")["r"].transform("median")).abs()
    table = anova_lm(ols("dev ~ C(g)", data=frame).fit())
    assert out.levene_f == pytest.approx(table["F"].iloc[0], rel=1e-10)
    assert out.levene_p == pytest.approx(table["PR(>F)"].iloc[0], rel=1e-8)
    assert out.levene_df == (2, 97)
    assert any("not uniform within 1 of 3 g group" in m for m in out.messages())


def test_quantile_regression_without_a_predictor_is_the_sample_quantile() -> None:
    rng = np.random.default_rng(2)
    res = rng.uniform(size=201) ** 2
    out = quantile_test(res, np.ones(201))
    assert out.spline_df == 0
    for fit in out.fits:
        # an intercept-only quantile regression's estimate is a sample q-quantile
        lo, hi = (
            np.quantile(res, fit.quantile, method="lower"),
            np.quantile(res, fit.quantile, method="higher"),
        )
        assert lo - 1e-6 <= fit.intercept + fit.quantile <= hi + 1e-6
        assert np.isnan(fit.p_smooth)
    # residuals skewed towards 0: the quantiles sit below 0.25/0.5/0.75
    assert out.p < 1e-6


@pytest.mark.slow
def test_quantile_and_group_tests_hold_their_level_on_uniform_residuals_and_have_power() -> None:
    rng = np.random.default_rng(4)
    reps = 50
    q_reject = g_reject = 0
    for _ in range(reps):
        res, pred = rng.uniform(size=150), rng.normal(size=150)
        q_reject += quantile_test(res, pred).p < 0.05
        g_reject += min(categorical_test(res, rng.integers(0, 5, 150)).p_adjusted) < 0.05
    # nominal 5 %: P(X ≥ 8 | n = 50, p = 0.05) ≈ 0.012
    assert q_reject <= 7 and g_reject <= 7
    power = 0
    for _ in range(20):
        pred = rng.normal(size=150)
        res = rng.uniform(size=150) ** np.exp(0.6 * pred)  # quantiles fall as pred grows
        power += quantile_test(res, pred).p < 0.05
    assert power >= 18


def _scores(seed: int, interaction: float) -> pd.DataFrame:
    """8 models × 6 languages × 3 tasks; a language × task interaction of SD ``interaction``."""
    rng = np.random.default_rng(seed)
    grid = pd.MultiIndex.from_product(
        [[f"m{i}" for i in range(8)], [f"l{i}" for i in range(6)], ["a", "b", "c"]],
        names=["model", "language", "task"],
    ).to_frame(index=False)
    li = grid["language"].str[1:].astype(int).to_numpy()
    ti = grid["task"].map({"a": 0, "b": 1, "c": 2}).to_numpy()
    grid["score"] = (
        rng.normal(0, 0.5, 8)[grid["model"].str[1:].astype(int)]
        + np.linspace(-1, 1, 6)[li]
        + np.array([0.0, 0.5, -0.5])[ti]
        + interaction * rng.normal(0, 1, (6, 3))[li, ti]
        + rng.normal(0, 0.3, len(grid))
    )
    return grid


ADDITIVE = "score ~ language + task + (1 | model)"


@pytest.mark.slow
def test_correctly_specified_model_passes_the_per_group_and_quantile_tests() -> None:
    flagged = 0
    reps = 20
    for seed in range(reps):
        model = lmm(ADDITIVE, _scores(seed, 0.0))
        sims = simulate_residuals(model, seed=seed, by=["language:task"])
        flagged += min(sims.categorical[0].p_adjusted) < 0.05 or sims.quantiles.p < 0.05
    assert flagged <= 3  # nominal ≤ 5 % each; P(X ≥ 4 | 20, 0.1) ≈ 0.13 even at 10 %


@pytest.mark.slow
def test_additive_model_of_interacting_truth_is_flagged_by_the_per_cell_test() -> None:
    flagged_additive = flagged_full = 0
    reps = 8
    for seed in range(reps):
        data = _scores(100 + seed, 0.5)
        sims = simulate_residuals(lmm(ADDITIVE, data), seed=seed, by=["language:task"])
        flagged_additive += min(sims.categorical[0].p_adjusted) < 0.05
        full = lmm("score ~ language * task + (1 | model)", data)
        flagged_full += (
            min(simulate_residuals(full, seed=seed, by=["language:task"]).categorical[0].p_adjusted)
            < 0.05
        )
        if seed == 0:
            assert any("language:task" in m for m in sims.messages())
    assert flagged_additive == reps
    assert flagged_full <= 1


def test_default_groups_are_the_fixed_effect_factors_and_unknown_columns_are_named() -> None:
    data = _scores(0, 0.0).assign(script=lambda d: np.where(d["language"] < "l3", "x", "y"))
    model = lmm(ADDITIVE, data)
    sims = simulate_residuals(model, n_sim=50)
    assert [c.factor for c in sims.categorical] == ["language", "task"]
    by_script = simulate_residuals(model, n_sim=50, by=["script"], data=data)
    assert by_script.categorical[0].levels == ["x", "y"]
    with pytest.raises(InputError, match="no such column"):
        simulate_residuals(model, n_sim=50, by=["nope"], data=data)


def test_cli_residuals_by_reports_the_tests(tmp_path) -> None:
    path = tmp_path / "scores.csv"
    _scores(101, 0.5).to_csv(path, index=False)
    runner = CliRunner()
    out = runner.invoke(
        app,
        [
            "analyze",
            "lmm",
            "-i",
            str(path),
            "-f",
            ADDITIVE,
            "--residuals-by",
            "language:task",
            "--json",
        ],
    )
    assert out.exit_code == 0, out.output
    checks = json.loads(out.output)["residual_checks"]
    assert checks["quantiles"]["quantiles"][1]["quantile"] == 0.5
    cells = checks["categorical"][0]
    assert cells["factor"] == "language:task" and len(cells["groups"]) == 18
    assert cells["min_p_holm"] < 0.05
    text = runner.invoke(
        app, ["analyze", "lmm", "-i", str(path), "-f", ADDITIVE, "--residuals-by", "language:task"]
    )
    assert text.exit_code == 0 and "within language:task groups" in text.output
    assert "--residuals-by" in runner.invoke(app, ["analyze", "lmm", "--help"]).output


def test_report_section_lists_the_quantile_and_group_tests() -> None:
    from glotbench import api
    from glotbench.report.analyses import lmm_summary
    from glotbench.report.html import lmm_section

    result = api.analyze_mixed_model(
        _scores(101, 0.5), ADDITIVE, residuals_by=["language:task"], n_sim=100
    )
    page = lmm_section(lmm_summary(result))
    assert "quantiles vs fixed-effect prediction" in page
    assert "uniformity within language:task groups (KS, Holm; 18 groups)" in page
    assert "equal spread across language:task groups (Levene)" in page
