"""`glotbench analyze lmm` (file, store), DHARMa-style residuals, robustness study, helpers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from glotbench.analysis.mixed import (
    headroom_fraction,
    lmm,
    missing_data_study,
    normalize_by_gold,
    simulate_residuals,
)
from glotbench.cli import app

from .golden import FIXTURES, fitted, golden

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_cli_json_matches_r_on_the_crossed_design(tmp_path: Path) -> None:
    g = golden("crossed")
    qq = tmp_path / "qq.png"
    result = run(
        "analyze",
        "lmm",
        "--formula",
        g["formula"],
        "--input",
        str(FIXTURES / "crossed.csv"),
        "--emmeans",
        "task",
        "--json",
        "--qq-plot",
        str(qq),
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    fe = {r["term"]: r for r in out["fixed_effects"]}
    for row in g["fixed_effects"]:
        assert fe[row["term"]]["estimate"] == pytest.approx(row["estimate"], rel=1e-4)
        assert fe[row["term"]]["df"] == pytest.approx(row["df"], rel=1e-2)
    anova = {r["term"]: r for r in out["anova"]}
    assert list(anova) == ["task", "params", "task:params"]
    for row in g["anova"]:
        assert anova[row["term"]]["F"] == pytest.approx(row["F"], rel=1e-4)
    assert out["r2"]["marginal"] == pytest.approx(g["r2"]["marginal"], abs=1e-3)
    assert {r["group"] for r in out["random_effects"]} == {"model", "language"}
    assert "singular" in out["diagnostics"]
    assert qq.exists() and qq.stat().st_size > 1000
    assert set(out["residual_checks"]) >= {"uniformity", "dispersion", "outliers", "qq_plot"}


def test_cli_ml_text_output_and_errors(tmp_path: Path) -> None:
    csv = str(FIXTURES / "singular.csv")
    result = run("analyze", "lmm", "-f", "score ~ language + (1 | model)", "-i", csv, "--ml")
    assert result.exit_code == 0
    assert "ML" in result.stdout and "singular fit" in result.stdout
    bad = runner.invoke(
        app, ["analyze", "lmm", "-f", "score ~ rep + (1 | language:model:rep)", "-i", csv]
    )
    assert bad.exit_code != 0
    assert isinstance(bad.exception, Exception)


@pytest.mark.slow
def test_cli_reads_the_store(tmp_path: Path) -> None:
    data = pd.read_csv(FIXTURES / "crossed.csv")
    scores = data.assign(metric="accuracy", dataset="sim")[
        ["model", "task", "language", "dataset", "metric", "score"]
    ]
    scores_csv = tmp_path / "scores.csv"
    scores.to_csv(scores_csv, index=False)
    store = tmp_path / "s.duckdb"
    imported = run("import", "scores", str(scores_csv), "--store", str(store))
    assert imported.exit_code == 0, imported.output
    result = run(
        "analyze",
        "lmm",
        "--store",
        str(store),
        "--formula",
        "score ~ task + (1 | model) + (1 | language)",
        "--emmeans",
        "task",
        "--json",
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    from_file = lmm("score ~ task + (1 | model) + (1 | language)", data)
    got = {r["term"]: r["estimate"] for r in out["fixed_effects"]}
    for name, value in zip(from_file.coef_names, from_file.fit.beta, strict=True):
        assert got[name] == pytest.approx(value, rel=1e-6)
    assert len(out["emmeans"]["task"]) == 3


def test_simulated_residuals_of_a_good_model_look_uniform(tmp_path: Path) -> None:
    model = fitted("crossed").model
    sims = simulate_residuals(model, n_sim=200, seed=1)
    assert sims.residuals.shape == (model.fit.n,)
    assert 0 <= sims.residuals.min() and sims.residuals.max() <= 1
    assert sims.ks_p > 0.01 and 0.8 < sims.dispersion_ratio < 1.2
    again = simulate_residuals(model, n_sim=200, seed=1)
    np.testing.assert_array_equal(sims.residuals, again.residuals)
    uncond = simulate_residuals(model, n_sim=100, seed=1, conditional=False)
    assert uncond.simulated.shape == (model.fit.n, 100)
    path = sims.qq_plot(tmp_path / "qq.png")
    assert path.stat().st_size > 1000


def test_simulated_residuals_flag_a_misspecified_model() -> None:
    rng = np.random.default_rng(3)
    rows = []
    for m in range(10):
        for lang in ("en", "es", "fi", "sw"):
            for _ in range(5):
                noise = rng.standard_t(1.5) * 0.05  # very heavy tails
                rows.append({"model": f"m{m}", "language": lang, "score": 0.5 + noise})
    model = lmm("score ~ language + (1 | model)", pd.DataFrame(rows))
    sims = simulate_residuals(model, n_sim=250, seed=0)
    assert sims.ks_p < 0.05 or sims.outlier_p < 0.05
    assert sims.messages()


def test_missing_data_study_detects_a_strong_effect_better_than_rm_anova() -> None:
    rng = np.random.default_rng(5)
    rows = []
    for m in range(8):
        u = rng.normal(0, 0.1)
        for lang, eff in (("en", 0.05), ("es", 0.0), ("sw", -0.05)):
            for task in ("a", "b", "c"):
                rows.append(
                    {
                        "model": f"m{m}",
                        "language": lang,
                        "task": task,
                        "score": 0.5 + u + eff + rng.normal(0, 0.05),
                    }
                )
    data = pd.DataFrame(rows)
    study = missing_data_study(
        data,
        "score ~ language + task + (1 | model)",
        "language",
        subject="model",
        within=["language", "task"],
        fractions=(0.1, 0.4),
        n_repeats=3,
        seed=0,
    )
    frame = study.to_frame()
    assert list(frame["fraction_removed"]) == [0.1, 0.4]
    assert (frame["lmm_detected"] == 1.0).all()
    # with 40% of the rows gone no model keeps all 9 cells: RM-ANOVA cannot be fitted
    assert frame.loc[1, "rm_anova_fitted"] < 1.0
    assert (frame["lmm_detected"] >= frame["rm_anova_detected"]).all()
    assert study.to_dict()["factor"] == "language"


def test_helpers() -> None:
    assert normalize_by_gold(0.6, 0.2, 1.0) == pytest.approx(0.5)
    s = pd.Series([0.5, 0.75], name="score")
    out = headroom_fraction(s, 0.5)
    assert isinstance(out, pd.Series) and list(out) == [0.0, 0.5]
    np.testing.assert_allclose(headroom_fraction(np.array([0.6, 1.0]), 0.2), [0.5, 1.0])
    from glotbench.errors import InputError

    with pytest.raises(InputError):
        headroom_fraction(0.5, 1.0)
    with pytest.raises(InputError):
        normalize_by_gold(0.5, 0.8, 0.8)
