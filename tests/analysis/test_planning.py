"""Planning: closed form against statsmodels and hand computation, simulation against the
closed form, estimated components against a simulation with known truth, the CLI."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import norm
from statsmodels.stats.power import NormalIndPower, normal_power

from glotbench.analysis.planning.estimate import estimate_pair
from glotbench.analysis.planning.plan import PlanSettings, plan_design
from glotbench.analysis.planning.power import (
    Components,
    Design,
    closed_form_mdd,
    closed_form_power,
    difference_variance,
    minimum_detectable,
    smallest_design,
    z_power,
)
from glotbench.analysis.planning.simulate import simulate_power
from glotbench.analysis.replicates import replicates_from_statistics
from glotbench.errors import InputError
from tests.analysis.conftest import write_accuracy_runs

COMPONENTS = Components(
    sigma_seed_a=0.01,
    sigma_seed_b=0.012,
    sigma_boot_a=0.02,
    sigma_boot_b=0.021,
    correlation=0.5,
    sigma_between_difference=0.02,
    reference_examples=500,
)


def test_variance_by_hand() -> None:
    design = Design(examples=1000, seeds=4, languages=10, resample_languages=True)
    boot = 0.02**2 + 0.021**2 - 2 * 0.5 * 0.02 * 0.021
    expected = (0.01**2 / 4 + 0.012**2 / 4 + boot * 500 / 1000 + 0.02**2) / 10
    assert difference_variance(COMPONENTS, design) == pytest.approx(expected, rel=1e-12)
    fixed = Design(examples=1000, seeds=4, languages=10)
    assert difference_variance(COMPONENTS, fixed) == pytest.approx(
        expected - 0.02**2 / 10, rel=1e-12
    )
    # unequal seeds and per-language sizes: the per-language sum
    uneven = Design(examples=(250, 1000), seeds=2, seeds_b=5, languages=2)
    expected = (0.01**2 / 2 + 0.012**2 / 5 + boot * (500 / 250 + 500 / 1000) / 2) / 2
    assert difference_variance(COMPONENTS, uneven) == pytest.approx(expected, rel=1e-12)
    assert not uneven.balanced and fixed.balanced


@pytest.mark.parametrize("delta", [0.0, 0.004, 0.01, 0.03])
@pytest.mark.parametrize("alpha", [0.05, 0.01])
def test_power_matches_statsmodels(delta: float, alpha: float) -> None:
    se = 0.0071
    assert float(z_power(delta, se, alpha)) == pytest.approx(
        normal_power(delta / se, nobs=1, alpha=alpha, alternative="two-sided"), abs=1e-12
    )


@pytest.mark.parametrize("power", [0.5, 0.8, 0.9])
def test_minimum_detectable_matches_statsmodels(power: float) -> None:
    se = 0.0123
    # one-sample normal test with nobs = 1: the effect size is δ / SE
    effect = NormalIndPower().solve_power(
        effect_size=None, nobs1=1, alpha=0.05, power=power, ratio=0, alternative="two-sided"
    )
    assert minimum_detectable(se, 0.05, power) == pytest.approx(effect * se, rel=1e-6)
    # the textbook approximation that ignores the far tail is within 1e-6 here
    approximation = (norm.ppf(0.975) + norm.ppf(power)) * se
    assert minimum_detectable(se, 0.05, power) == pytest.approx(approximation, rel=1e-3)


@pytest.mark.parametrize(
    ("vary", "examples", "delta"),
    [("examples", 200, 0.015), ("seeds", 5000, 0.01), ("languages", 200, 0.01)],
)
def test_smallest_design_is_the_first_that_reaches_the_target(
    vary: str, examples: int, delta: float
) -> None:
    base = Design(examples=examples, seeds=2, languages=5)

    def reaches(design: Design) -> bool:
        return closed_form_power(COMPONENTS, design, delta, 0.05) >= 0.8

    found, value = smallest_design(reaches, base, vary)  # type: ignore[arg-type]
    assert found is not None
    assert reaches(found)
    assert value == 1 or not reaches(base.with_value(vary, value - 1))  # type: ignore[arg-type]
    if vary == "examples":  # invert Var(D) for n by hand
        se = delta / NormalIndPower().solve_power(
            effect_size=None, nobs1=1, alpha=0.05, power=0.8, ratio=0
        )
        c = COMPONENTS
        seed = c.sigma_seed_a**2 / 2 + c.sigma_seed_b**2 / 2
        n = 500 * c.boot_variance_difference / (5 * se**2 - seed)
        assert value == math.ceil(n - 1e-6)


def test_unreachable_search_reports_the_floor() -> None:
    # seeds cannot push the bootstrap floor below what δ needs
    found, value = smallest_design(
        lambda d: closed_form_power(COMPONENTS, d, 0.002, 0.05) >= 0.8,
        Design(examples=500, seeds=1, languages=2),
        "seeds",
    )
    assert found is None and value > 1


@pytest.mark.slow
@pytest.mark.parametrize("resample", [False, True])
def test_simulation_agrees_with_closed_form_on_balanced_designs(resample: bool) -> None:
    design = Design(examples=200, seeds=3, languages=12, resample_languages=resample)
    simulated = simulate_power(COMPONENTS, design, n_simulations=600, n_replicates=100, seed=1)
    se = math.sqrt(difference_variance(COMPONENTS, design))
    # the SD of d̂ over evaluations estimates SE; its own SE is about SE / √(2R)
    assert simulated.empirical_sd == pytest.approx(se, abs=3.5 * se / math.sqrt(2 * 600))
    for delta in (
        0.0,
        closed_form_mdd(COMPONENTS, design, 0.05, 0.5),
        closed_form_mdd(COMPONENTS, design, 0.05, 0.8),
    ):
        closed = closed_form_power(COMPONENTS, design, delta, 0.05)
        sim = float(simulated.power(delta, 0.05)[0])
        error = float(simulated.monte_carlo_error(closed))
        # estimated SEs (12 languages, 3 seeds) widen the test a little: allow 0.02 for it
        assert abs(sim - closed) <= 3.5 * error + 0.02, (delta, sim, closed)


def test_unbalanced_design_is_answered_by_simulation() -> None:
    design = Design(examples=(100, 400, 1600), seeds=2, seeds_b=4, languages=3)
    settings = PlanSettings(delta=0.02, simulations=400, replicates=100)
    plan = plan_design(COMPONENTS, design, settings)
    assert plan.method == "simulation"
    closed, sim = plan.answers["closed"], plan.answers["simulation"]
    assert sim["power"] == pytest.approx(
        closed["power"], abs=3.5 * math.sqrt(closed["power"] * (1 - closed["power"]) / 400) + 0.03
    )
    assert sim["sd_of_difference"] == pytest.approx(plan.standard_error, rel=0.15)
    payload = json.loads(json.dumps(plan.to_dict(), allow_nan=False))
    assert payload["design"]["examples"] == [100, 400, 1600]
    assert "simulated_power" in plan.curve.columns


@dataclass
class Cell:
    """Per-example statistics of all runs on one test set (a CellStatistics)."""

    task: str
    language: str
    models: list[str]
    stats: np.ndarray

    def get_metric(self):  # type: ignore[no-untyped-def]
        return lambda summed: summed[..., 0] / summed[..., 1]


def test_estimated_components_recover_known_truth() -> None:
    rng = np.random.default_rng(7)
    n, seeds, languages = 400, 4, 40
    sigma_example, rho, sigma_seed, between = 1.0, 0.6, 0.03, 0.04
    cells = []
    for language in range(languages):
        first, second = rng.standard_normal((2, n))
        a = sigma_example * first + rng.normal(0, between)
        b = sigma_example * (rho * first + math.sqrt(1 - rho**2) * second)
        runs = [a + rng.normal(0, sigma_seed) for _ in range(seeds)]
        runs += [b + rng.normal(0, sigma_seed) for _ in range(seeds)]
        values = np.stack(runs)
        cells.append(
            Cell(
                "t",
                f"l{language:02d}",
                ["A"] * seeds + ["B"] * seeds,
                np.stack([values, np.ones_like(values)], axis=-1),
            )
        )
    scores = replicates_from_statistics(cells, "mean", n_replicates=300, seed=3)
    estimate, notes = estimate_pair(scores, 0, 1, np.full(languages, float(n)))
    c = estimate.components
    assert notes == []
    assert c.reference_examples == n
    assert c.sigma_boot_a == pytest.approx(sigma_example / math.sqrt(n), rel=0.05)
    assert c.sigma_boot_b == pytest.approx(sigma_example / math.sqrt(n), rel=0.05)
    assert c.correlation == pytest.approx(rho, abs=0.05)
    # 40 languages × 3 degrees of freedom per model
    assert c.sigma_seed_a == pytest.approx(sigma_seed, rel=0.2)
    assert c.sigma_seed_b == pytest.approx(sigma_seed, rel=0.2)
    # 39 degrees of freedom, less the within-language noise removed
    assert c.sigma_between_difference == pytest.approx(between, rel=0.35)
    assert estimate.design == Design(examples=n, seeds=seeds, seeds_b=seeds, languages=languages)


def test_store_estimates_size_and_binary_bootstrap(tmp_path: Path) -> None:
    from glotbench.api import plan

    rng = np.random.default_rng(5)
    n = 300
    correct = {}
    for language in ("de", "en", "fr"):
        shared = rng.random(n)
        for seed in range(2):
            correct[("A", language, seed)] = (shared < 0.8).astype(float)
            correct[("B", language, seed)] = (rng.random(n) < 0.6).astype(float)
    store = write_accuracy_runs(tmp_path / "runs.duckdb", correct)
    result = plan(
        store=store,
        models=["A", "B"],
        bootstrap_replicates=200,
        settings=PlanSettings(delta=0.05, method="closed"),
    )
    c = result.components
    assert result.models == ("A", "B")
    assert c.reference_examples == n
    assert result.design.examples == n and result.design.seeds == 2
    assert c.sigma_boot_a == pytest.approx(math.sqrt(0.8 * 0.2 / n), rel=0.2)
    assert c.sigma_boot_b == pytest.approx(math.sqrt(0.6 * 0.4 / n), rel=0.2)
    assert abs(c.correlation) < 0.2  # B's outcomes are independent of A's
    assert c.sigma_seed_a == 0.0  # identical seeds
    assert len(result.pairs) == 1
    assert result.pairs["observed_difference"][0] == pytest.approx(
        np.mean(
            [
                np.mean([correct[(m, lang, s)].mean() for s in range(2)]) * sign
                for lang in ("de", "en", "fr")
                for m, sign in (("A", 1), ("B", -1))
            ]
        )
        * 2
    )


def test_invalid_inputs_are_input_errors() -> None:
    with pytest.raises(InputError, match="between-language"):
        difference_variance(
            Components(0.01, 0.01, 0.02, 0.02),
            Design(examples=None, seeds=1, languages=5, resample_languages=True),
        )
    with pytest.raises(InputError, match="correlation"):
        Components(0.01, 0.01, 0.02, 0.02, correlation=1.5)
    with pytest.raises(InputError, match="test-set size"):
        difference_variance(
            Components(0.01, 0.01, 0.02, 0.02), Design(examples=100, seeds=1, languages=1)
        )
    with pytest.raises(InputError, match="delta"):
        PlanSettings(vary="seeds")


def test_cli_json_plot_and_errors(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    png = tmp_path / "curve.png"
    result = cli(
        "plan",
        "--sigma-seed",
        "0.01",
        "--sigma-boot",
        "0.02",
        "--boot-examples",
        "500",
        "--correlation",
        "0.5",
        "--examples",
        "1000",
        "--seeds",
        "3",
        "--languages",
        "8",
        "--delta",
        "0.01",
        "--vary",
        "examples",
        "--plot",
        png,
        "--json",
    )
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    c = Components(0.01, 0.01, 0.02, 0.02, correlation=0.5, reference_examples=500)
    design = Design(examples=1000, seeds=3, languages=8)
    se = math.sqrt(difference_variance(c, design))
    assert payload["standard_error"] == pytest.approx(se)
    assert payload["answers"]["closed"]["power"] == pytest.approx(
        normal_power(0.01 / se, nobs=1, alpha=0.05)
    )
    assert payload["search"]["vary"] == "examples" and payload["search"]["power"] >= 0.8
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = cli("plan", "--sigma-seed", "0.01", "--sigma-boot", "0.02", "--delta", "0.01")
    assert text.exit_code == 0 and "MDD" in text.out
    bad = cli(
        "plan",
        "--sigma-seed",
        "0.01",
        "--sigma-boot",
        "0.02",
        "--languages",
        "4",
        "--resample-languages",
        "--json",
    )
    assert bad.exit_code == 2
    assert json.loads(bad.stdout)["error"]["field"] == "sigma_b"


def test_scores_file_with_replicates(tmp_path: Path) -> None:
    from glotbench.api import plan
    from tests.analysis.conftest import long_frame, simulate

    rng = np.random.default_rng(11)
    values = simulate(
        rng,
        [0.7, 0.68],
        tau=0.05,
        sigma_seed=0.02,
        sigma_boot=0.01,
        n_languages=20,
        n_seeds=3,
        n_reps=200,
    )
    path = tmp_path / "scores.csv"
    long_frame(values, models=["A", "B"]).to_csv(path, index=False)
    result = plan(
        input=path,
        models=["A", "B"],
        reference_examples=800,
        examples=3200,
        settings=PlanSettings(delta=0.01, method="closed"),
    )
    c = result.components
    assert result.notes == ()
    assert c.reference_examples == 800 and result.design.examples == 3200
    assert result.design.seeds == 3 and result.design.languages == 20
    assert c.sigma_seed_a == pytest.approx(0.02, rel=0.25)
    assert c.sigma_boot_a == pytest.approx(0.01, rel=0.1)
    assert abs(c.correlation) < 0.1  # the replicates' noise is independent between models
    # the language effect is shared by both models: the difference has none
    assert c.sigma_between_difference < 0.01
    se = math.sqrt(difference_variance(c, result.design))
    assert result.standard_error == pytest.approx(se)


def test_detectable_differences_match_statsmodels() -> None:
    import pandas as pd

    from glotbench.analysis.planning.detectable import detectable_differences

    effect = NormalIndPower().solve_power(effect_size=None, nobs1=1, alpha=0.05, power=0.8, ratio=0)
    frame = pd.DataFrame({"difference": [0.05, -0.01, 0.0], "sd": [0.01, 0.01, np.nan]})
    out = detectable_differences(frame)
    assert out["mdd"].to_numpy()[:2] == pytest.approx([effect * 0.01] * 2, rel=1e-6)
    assert np.isnan(out["mdd"].iloc[2])
    assert out["detectable"].tolist() == [True, False, False]


def test_leaderboard_pairs_carry_the_minimum_detectable_difference() -> None:
    from glotbench.analysis.headline import AnalysisSettings, analyze
    from glotbench.analysis.pair_view import pair_comparisons
    from tests.analysis.test_pair_view import _source

    settings = AnalysisSettings(n_draws=300, seed=5)
    source = _source(n_models=3)
    data = pair_comparisons(source, analyze(source, settings).overall, settings).to_dict()
    assert data["mdd_power"] == 0.8
    factor = norm.ppf(0.975) + norm.ppf(0.8)  # the far tail adds < 1e-6 here
    for pair in data["pairs"].values():
        overall = pair["overall"]
        assert overall["mdd"] == pytest.approx(factor * overall["sd"], rel=1e-4)
        assert overall["detectable"] == (abs(overall["difference"]) >= overall["mdd"])


def test_plan_on_a_euroeval_store_uses_sigma_w(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """EuroEval's iterations give σ_w only (σ_seed, σ_boot not separable): it is the within-cell
    SD. Reference: numpy's SD (ddof 1) of the ten iterations in the real EuroEval output, per
    model and dataset, on each task's primary metric; the MDD from scipy's normal quantiles."""
    from glotbench import api

    source = Path(__file__).resolve().parents[1] / "fixtures" / "importers" / "euroeval"
    results = source / "euroeval_benchmark_results.jsonl"
    store = tmp_path / "euroeval.duckdb"
    api.import_euroeval(results, store=store)
    primary = {
        "sentiment-classification": "test_mcc",
        "named-entity-recognition": "test_micro_f1_no_misc",
    }
    sds: dict[str, list[float]] = {}
    for line in results.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            values = [row[primary[record["task"]]] for row in record["results"]["raw"]]
            sds.setdefault(record["model"], []).append(float(np.std(values, ddof=1)))
    expected = {m: math.sqrt(np.mean(np.square(v))) for m, v in sds.items()}
    monkeypatch.setenv("GLOTBENCH_STORE", str(store))  # the shared --store option
    result = cli("plan", "--json")
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    parts = payload["components"]
    assert sorted([parts["sigma_boot_a"], parts["sigma_boot_b"]]) == pytest.approx(
        sorted(expected.values()), rel=1e-9
    )
    assert parts["sigma_seed_a"] == 0.0 and parts["correlation"] == 0.0
    assert any("not separable" in n and "sigma_w" in n for n in payload["notes"])
    # two cells (sentiment/da, NER/nb+no), languages fixed: SE = √((σ_A² + σ_B²) / 2)
    se = math.sqrt((parts["sigma_boot_a"] ** 2 + parts["sigma_boot_b"] ** 2) / 2)
    assert payload["standard_error"] == pytest.approx(se, rel=1e-9)
    z = norm.ppf(0.975)  # two-sided power, both tails (the far one is tiny here)
    mdd = brentq(lambda d: norm.cdf(d / se - z) + norm.cdf(-d / se - z) - 0.8, 0, 10 * se)
    assert payload["answers"]["closed"]["minimum_detectable_difference"] == pytest.approx(
        mdd, rel=1e-6
    )
    # the same store typed as --store
    typed = cli("plan", "--store", store, "--json")
    assert json.loads(typed.stdout)["components"] == parts
