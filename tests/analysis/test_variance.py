"""Variance components on simulated data with known truth, through the store, and side by side.

Scores are simulated as x[m, l, s, b] = mu_m + a_l + e_mls + u_mlsb with
a ~ N(0, tau²) (between-language), e ~ N(0, sigma_seed²) (seed) and
u ~ N(0, sigma_boot²) (bootstrap). What each estimator targets:

* σ̂_seed is the SD over seeds of the bootstrap-averaged scores, so
  E[σ̂_seed²] = sigma_seed² + sigma_boot²/B;
* σ̂_boot is the mean over seeds of the SD over replicates: ≈ sigma_boot;
* σ̂_w² = σ̂_seed² + σ̂_boot² ≈ sigma_seed² + sigma_boot² (1 + 1/B);
* σ̂_b is the SD over languages of the language means, which carry their own
  replication noise: E[σ̂_b²] = tau² + sigma_seed²/S + sigma_boot²/(S·B).
"""

from __future__ import annotations

import statistics
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import glotbench.analysis.replicates as replicates_module
from glotbench import api
from glotbench.analysis.replicates import ReplicatedScores, replicates_from_frame
from glotbench.analysis.variance import (
    ComponentTable,
    components,
    components_from_summary,
    nan_sd,
    sd_standard_error,
    variance_components,
)
from glotbench.errors import InputError

from .conftest import accuracy_record, replicated, simulate, write_accuracy_runs

# -- simulated data with known components -------------------------------------------

TAU, SIGMA_SEED, SIGMA_BOOT = 2.0, 0.5, 1.0
S, B, L = 20, 60, 60


@pytest.fixture(scope="module")
def simulated() -> tuple[ReplicatedScores, ComponentTable, Any]:
    rng = np.random.default_rng(20250101)
    values = simulate(
        rng,
        [60.0, 62.0, 70.0],
        tau=TAU,
        sigma_seed=SIGMA_SEED,
        sigma_boot=SIGMA_BOOT,
        n_languages=L,
        n_seeds=S,
        n_reps=B,
    )
    scores = replicated(values)
    table = components(scores)
    return scores, table, variance_components(table)


def _check_z(estimate: np.ndarray, se: np.ndarray, truth: float) -> None:
    """Estimates within ~3 plug-in SEs of the truth, and the SEs calibrated.

    Per cell the z-score (estimate − truth) / SE is roughly standard normal
    (plug-in SEs from S = 20 or B = 60 values are a little skewed), so: at
    least 95 % within 3 SEs, mean z near 0 and the spread of z near 1 (an SE
    formula off by a factor √2 would fail the last check).
    """
    z = ((estimate - truth) / se).ravel()
    assert np.isfinite(z).all()
    assert np.mean(np.abs(z) <= 3) >= 0.95, np.sort(np.abs(z))[-10:]
    assert abs(z.mean()) < 0.5, z.mean()
    assert 0.8 < z.std(ddof=1) < 1.25, z.std(ddof=1)


def test_seed_sd_within_its_standard_error(simulated: Any) -> None:
    _, table, _ = simulated
    truth = np.sqrt(SIGMA_SEED**2 + SIGMA_BOOT**2 / B)
    _check_z(table.sigma_seed, table.se_seed, truth)
    # pooled over the 180 cells the unbiased variance estimate hits its expectation
    var = table.sigma_seed.ravel() ** 2
    assert abs(var.mean() - truth**2) < 3 * var.std(ddof=1) / np.sqrt(var.size)


def test_bootstrap_sd_within_its_standard_error(simulated: Any) -> None:
    _, table, _ = simulated
    _check_z(table.sigma_boot, table.se_boot, SIGMA_BOOT)


def test_within_language_sd_within_its_standard_error(simulated: Any) -> None:
    _, table, _ = simulated
    np.testing.assert_allclose(table.sigma_w, np.hypot(table.sigma_seed, table.sigma_boot))
    _check_z(table.sigma_w, table.se_w, np.sqrt(SIGMA_SEED**2 + SIGMA_BOOT**2 * (1 + 1 / B)))


def test_between_language_sd_within_its_standard_error(simulated: Any) -> None:
    _, _, result = simulated
    truth = np.sqrt(TAU**2 + SIGMA_SEED**2 / S + SIGMA_BOOT**2 / (S * B))
    per_model = result.per_model.set_index("model")
    for model, row in per_model.iterrows():
        assert row["n_languages"] == L
        assert row["se_sigma_b"] == pytest.approx(row["sigma_b"] / np.sqrt(2 * (L - 1)))
        assert abs(row["sigma_b"] - truth) < 3 * row["se_sigma_b"], model
    # the language means of the three models differ by their mu only (+ noise)
    means = per_model["mean"].to_numpy()
    np.testing.assert_allclose(means - means[0], [0.0, 2.0, 10.0], atol=0.05)


def test_between_language_variance_includes_the_noise_of_the_language_means() -> None:
    """Small tau, large seed noise, few seeds: E[σ̂_b²] = tau² + σ_seed²/S + σ_boot²/(S·B).

    40 models with their own language effects give 40 independent σ̂_b; their
    mean square matches the full expectation (tau² alone would be far off).
    """
    tau, sigma_seed, sigma_boot, n_seeds, n_reps = 0.5, 1.5, 1.0, 4, 20
    rng = np.random.default_rng(7)
    values = simulate(
        rng,
        np.zeros(40),
        tau=tau,
        sigma_seed=sigma_seed,
        sigma_boot=sigma_boot,
        n_languages=30,
        n_seeds=n_seeds,
        n_reps=n_reps,
        shared_languages=False,
    )
    per_model = api.analyze_variance(replicated(values)).per_model
    expected = tau**2 + sigma_seed**2 / n_seeds + sigma_boot**2 / (n_seeds * n_reps)
    var = per_model["sigma_b"].to_numpy() ** 2
    assert abs(var.mean() - expected) < 3 * var.std(ddof=1) / np.sqrt(var.size)
    assert var.mean() > 2 * tau**2  # the noise term matters here
    z = (per_model["sigma_b"] - np.sqrt(expected)) / per_model["se_sigma_b"]
    assert np.mean(np.abs(z) <= 3) >= 0.95


def test_sd_standard_error_formula() -> None:
    sd = np.array([1.0, 2.0, 3.0, 4.0])
    n = np.array([2, 5, 1, 0])
    out = sd_standard_error(sd, n)
    np.testing.assert_allclose(out[:2], [1.0 / np.sqrt(2), 2.0 / np.sqrt(8)])
    assert np.isnan(out[2:]).all()  # fewer than two values: no SE


@pytest.mark.parametrize("missing", [False, True])
def test_nan_sd_is_the_sample_sd_and_nanstds_numbers(missing: bool) -> None:
    """ddof = 1 SD over any axis: against statistics.stdev, and float for float what
    np.nanstd gives (the complete case takes np.std a slice at a time)."""
    rng = np.random.default_rng(8)
    values = rng.normal(0.6, 0.05, size=(3, 4, 5, 300))
    values[0, 1, 2] = 0.25  # constant: exactly 0
    if missing:
        values[1, 2, 3, 10:] = np.nan
        values[2, 0, :, 7] = np.nan
        values[2, 3, 4, 1:] = np.nan  # one value left: NaN
    for axis in (0, 1, 2, 3, -1):
        got = nan_sd(values, axis)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # ddof ≥ count, all NaN: NaN
            expected = np.nanstd(values, axis=axis, ddof=1)
            spread = np.nanmax(values, axis=axis) - np.nanmin(values, axis=axis)
        count = (~np.isnan(values)).sum(axis=axis)
        expected = np.where(count >= 2, np.where(spread == 0, 0.0, expected), np.nan)
        np.testing.assert_array_equal(got.view(np.int64), expected.view(np.int64))
    cell = values[1, 2, 0]
    assert nan_sd(values, 3)[1, 2, 0] == pytest.approx(statistics.stdev(cell), rel=1e-12)
    assert nan_sd(values, 3)[0, 1, 2] == 0.0


# -- an independent implementation, side by side ---------------------------------------


def reference_components(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The estimators of variance.py's docstring, written out with pandas and loops.

    ``frame``: model, task, language, seed, replicate, score (balanced replicates).
    """
    per_seed = (
        frame.groupby(["model", "task", "language", "seed"])["score"]
        .agg(seed_mean="mean", boot_sd=lambda x: x.std(ddof=1), n_reps="count")
        .reset_index()
    )
    cells = []
    for (model, task, language), g in per_seed.groupby(["model", "task", "language"]):
        n_seeds = len(g)
        n_reps = int(g["n_reps"].iloc[0])
        sigma_seed = g["seed_mean"].std(ddof=1) if n_seeds >= 2 else np.nan
        se_seed = sigma_seed / np.sqrt(2 * (n_seeds - 1)) if n_seeds >= 2 else np.nan
        if n_reps >= 2:
            sigma_boot = g["boot_sd"].mean()
            se_each = g["boot_sd"] / np.sqrt(2 * (n_reps - 1))
            se_boot = np.sqrt((se_each**2).sum()) / n_seeds
        else:
            sigma_boot = se_boot = np.nan
        parts = [v for v in (sigma_seed, sigma_boot) if not np.isnan(v)]
        sigma_w = np.sqrt(sum(v**2 for v in parts)) if parts else np.nan
        terms = [
            (s * e) ** 2
            for s, e in ((sigma_seed, se_seed), (sigma_boot, se_boot))
            if not np.isnan(s)
        ]
        if not parts:
            se_w = np.nan
        else:
            se_w = np.sqrt(sum(terms)) / sigma_w if sigma_w > 0 else 0.0
        cells.append(
            {
                "model": model,
                "task": task,
                "language": language,
                "mean": g["seed_mean"].mean(),
                "sigma_seed": sigma_seed,
                "se_sigma_seed": se_seed,
                "sigma_boot": sigma_boot,
                "se_sigma_boot": se_boot,
                "sigma_w": sigma_w,
                "se_sigma_w": se_w,
                "n_seeds": n_seeds,
                "n_replicates": n_reps,
            }
        )
    per_unit = pd.DataFrame(cells)
    models = []
    for (model, task), g in per_unit.groupby(["model", "task"]):
        n = len(g)
        sigma_b = g["mean"].std(ddof=1) if n >= 2 else np.nan
        row: dict[str, Any] = {
            "model": model,
            "task": task,
            "n_languages": n,
            "mean": g["mean"].mean(),
            "sigma_b": sigma_b,
            "se_sigma_b": sigma_b / np.sqrt(2 * (n - 1)) if n >= 2 else np.nan,
        }
        for name in ("sigma_seed", "sigma_boot", "sigma_w"):
            col = g[name].dropna()
            row[f"{name}_mean"] = col.mean() if len(col) else np.nan
            row[f"{name}_sd"] = col.std(ddof=1) if len(col) >= 2 else np.nan
            row[f"{name}_min"] = col.min() if len(col) else np.nan
            row[f"{name}_max"] = col.max() if len(col) else np.nan
        models.append(row)
    return per_unit, pd.DataFrame(models)


def _assert_same(ours: pd.DataFrame, theirs: pd.DataFrame, key: list[str]) -> None:
    ours = ours.set_index(key).sort_index()
    theirs = theirs.set_index(key).sort_index()
    assert list(ours.index) == list(theirs.index)
    for column in theirs.columns:
        a = ours[column].to_numpy(dtype=float)
        b = theirs[column].to_numpy(dtype=float)
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b), err_msg=column)
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10, err_msg=column)


@st.composite
def unbalanced_designs(draw: st.DrawFn) -> pd.DataFrame:
    """Random designs: 1–3 models, 1–2 tasks, 1–4 languages, 0–4 seeds per cell, B = 1–5."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n_reps = draw(st.integers(1, 5))
    rows = []
    for model in [f"m{i}" for i in range(draw(st.integers(1, 3)))]:
        for task in [f"t{i}" for i in range(draw(st.integers(1, 2)))]:
            for language in ["de", "en", "fr", "sw"][: draw(st.integers(1, 4))]:
                n_seeds = draw(st.integers(0, 4))  # 0: the model lacks this language
                seeds = rng.choice(100, size=n_seeds, replace=False)  # arbitrary seed values
                for seed in seeds:
                    shift = rng.normal(0, 2)
                    for b in range(n_reps):
                        rows.append(
                            {
                                "model": model,
                                "task": task,
                                "language": language,
                                "seed": int(seed),
                                "replicate": b,
                                "score": 50 + shift + rng.normal(0, 1) + rng.integers(0, 3),
                            }
                        )
    frame = pd.DataFrame(rows)
    if frame.empty:
        frame = pd.DataFrame(
            [
                {
                    "model": "m0",
                    "task": "t0",
                    "language": "de",
                    "seed": 0,
                    "replicate": 0,
                    "score": 1.0,
                }
            ]
        )
    return frame.sample(frac=1.0, random_state=int(rng.integers(1000))).reset_index(drop=True)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame=unbalanced_designs())
def test_agrees_with_an_independent_implementation(frame: pd.DataFrame) -> None:
    result = api.analyze_variance(replicates_from_frame(frame))
    per_unit, per_model = reference_components(frame)
    _assert_same(result.per_unit.drop(columns="unit"), per_unit, ["model", "task", "language"])
    _assert_same(result.per_model, per_model, ["model", "task"])


def test_agrees_on_a_large_simulated_design(simulated: Any) -> None:
    scores, _, result = simulated
    frame = scores.to_frame()
    per_unit, per_model = reference_components(frame)
    _assert_same(result.per_unit.drop(columns="unit"), per_unit, ["model", "task", "language"])
    _assert_same(result.per_model, per_model, ["model", "task"])


# -- design messages -----------------------------------------------------------------


def test_one_seed_says_there_is_no_seed_variance() -> None:
    rng = np.random.default_rng(1)
    values = simulate(
        rng, [1.0, 2.0], tau=1, sigma_seed=0.3, sigma_boot=0.2, n_languages=4, n_seeds=1, n_reps=30
    )
    result = api.analyze_variance(replicated(values))
    assert result.per_unit["sigma_seed"].isna().all()
    np.testing.assert_allclose(result.per_unit["sigma_w"], result.per_unit["sigma_boot"])
    assert any("seed-to-seed variance cannot be estimated" in n for n in result.notes)
    assert not any("bootstrap variance cannot" in n for n in result.notes)


def test_no_replicates_says_there_is_no_bootstrap_variance() -> None:
    rng = np.random.default_rng(2)
    values = simulate(
        rng, [1.0, 2.0], tau=1, sigma_seed=0.3, sigma_boot=0.2, n_languages=4, n_seeds=5, n_reps=1
    )
    frame = replicated(values).to_frame().drop(columns="replicate")
    result = api.analyze_variance(replicates_from_frame(frame))
    assert result.per_unit["sigma_boot"].isna().all()
    np.testing.assert_allclose(result.per_unit["sigma_w"], result.per_unit["sigma_seed"])
    assert any("bootstrap variance cannot be estimated" in n for n in result.notes)


def test_some_cells_with_one_seed_are_named_in_a_note() -> None:
    values = simulate(
        np.random.default_rng(3),
        [1.0, 2.0],
        tau=1,
        sigma_seed=0.3,
        sigma_boot=0.2,
        n_languages=3,
        n_seeds=3,
        n_reps=5,
    )
    values[1, 0, 1:] = np.nan  # m1 has one seed on l000
    result = api.analyze_variance(replicated(values))
    row = result.per_unit.set_index(["model", "language"]).loc[("m1", "l000")]
    assert row["n_seeds"] == 1 and np.isnan(row["sigma_seed"])
    assert any("some model-language cells have one seed" in n for n in result.notes)


def test_unbalanced_design_uses_each_models_own_languages() -> None:
    values = simulate(
        np.random.default_rng(4),
        [1.0, 2.0],
        tau=1,
        sigma_seed=0.3,
        sigma_boot=0.2,
        n_languages=4,
        n_seeds=3,
        n_reps=5,
    )
    values[1, 2:] = np.nan  # m1 lacks two languages
    result = api.analyze_variance(replicated(values))
    per_model = result.per_model.set_index("model")
    assert per_model.loc["m0", "n_languages"] == 4 and per_model.loc["m1", "n_languages"] == 2
    means = result.per_unit[result.per_unit["model"] == "m1"]["mean"]
    assert per_model.loc["m1", "sigma_b"] == pytest.approx(means.std(ddof=1))
    assert any("unbalanced design" in n for n in result.notes)


def test_one_language_gives_no_between_language_sd_and_says_so() -> None:
    values = simulate(
        np.random.default_rng(5),
        [1.0],
        tau=1,
        sigma_seed=0.3,
        sigma_boot=0.2,
        n_languages=1,
        n_seeds=3,
        n_reps=5,
    )
    result = api.analyze_variance(replicated(values))
    row = result.per_model.iloc[0]
    assert np.isnan(row["sigma_b"]) and np.isnan(row["se_sigma_b"])
    assert any("one language only" in n for n in result.notes)
    assert result.to_dict()["per_model"][0]["sigma_b"] is None


def test_zero_variance_gives_zero_not_nan() -> None:
    values = np.full((2, 3, 4, 5), 0.5)
    values[1] = 0.75
    result = api.analyze_variance(replicated(values))
    for column in ("sigma_seed", "sigma_boot", "sigma_w", "se_sigma_seed", "se_sigma_boot"):
        assert (result.per_unit[column] == 0).all(), column
    # the delta-method SE of σ_w tends to 0 with σ_seed and σ_boot; it must not be NaN
    assert (result.per_unit["se_sigma_w"] == 0).all()
    assert (result.per_model["sigma_b"] == 0).all()


def test_nan_score_names_the_row() -> None:
    frame = pd.DataFrame(
        {"model": ["a", "a", "a"], "language": ["de", "en", "fr"], "score": [1.0, np.nan, 2.0]}
    )
    with pytest.raises(InputError, match=r"row 2: score .* not a finite number") as info:
        replicates_from_frame(frame)
    assert info.value.field == "score"
    frame.loc[1, "score"] = np.inf
    with pytest.raises(InputError, match="not a finite number"):
        replicates_from_frame(frame)


def test_ready_standard_deviations() -> None:
    frame = pd.DataFrame(
        {
            "model": ["a", "a", "b", "b"],
            "language": ["de", "en", "de", "en"],
            "score": [70.0, 74.0, 60.0, 66.0],
            "sigma_seed": [0.3, 0.4, 0.5, 0.6],
            "sigma_boot": [0.4, 0.3, 1.2, 0.8],
            "n_seeds": [5, 5, 5, 5],
            "n_replicates": [1000] * 4,
        }
    )
    table = components_from_summary(frame)
    np.testing.assert_allclose(table.sigma_w, [[0.5, 0.5], [1.3, 1.0]])
    np.testing.assert_allclose(table.se_seed, np.array([[0.3, 0.4], [0.5, 0.6]]) / np.sqrt(8))
    se_seed = table.sigma_seed / np.sqrt(8)
    se_boot = table.sigma_boot / np.sqrt(2 * 999)
    expected = np.hypot(table.sigma_seed * se_seed, table.sigma_boot * se_boot) / table.sigma_w
    np.testing.assert_allclose(table.se_w, expected)
    result = api.analyze_variance(table)
    per_model = result.per_model.set_index("model")
    assert per_model.loc["a", "sigma_b"] == pytest.approx(np.std([70, 74], ddof=1))
    # without n_seeds / n_replicates the SEs are unknown: missing, never 0
    no_counts = api.analyze_variance(
        components_from_summary(frame.drop(columns=["n_seeds", "n_replicates"]))
    )
    for column in ("se_sigma_seed", "se_sigma_boot", "se_sigma_w"):
        assert no_counts.per_unit[column].isna().all(), column
    assert any("plug-in SEs need n_seeds" in n for n in no_counts.notes)
    bad = frame.assign(sigma_boot=[0.4, -0.3, 1.2, 0.8])
    with pytest.raises(InputError, match="row 2: a standard deviation cannot be negative"):
        components_from_summary(bad)


# -- per-example statistics through the store ---------------------------------------

P_LANGUAGE = {"de": 0.55, "en": 0.65, "fr": 0.75, "sw": 0.85}
SEED_SHIFT = (-0.04, 0.0, 0.04)
MODEL_SHIFT = {"A": 0.0, "B": -0.05}
N_EXAMPLES = 400


@pytest.fixture(scope="module")
def accuracy_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[Any, np.ndarray]]:
    rng = np.random.default_rng(11)
    correct = {
        (model, language, seed): (rng.random(N_EXAMPLES) < p + dm + ds).astype(float)
        for model, dm in MODEL_SHIFT.items()
        for language, p in P_LANGUAGE.items()
        for seed, ds in enumerate(SEED_SHIFT)
    }
    path = tmp_path_factory.mktemp("store") / "accuracy.duckdb"
    return write_accuracy_runs(path, correct), correct


def test_store_bootstrap_sd_matches_the_binomial_closed_form(
    accuracy_store: tuple[Path, dict[Any, np.ndarray]],
) -> None:
    """σ_boot of an accuracy is √(p̂(1 − p̂)/n) per seed (the ideal bootstrap), ≈ √(p(1 − p)/n)."""
    path, correct = accuracy_store
    scores = api.load_replicated(store=path, metric="accuracy", n_replicates=1000, seed=3)
    assert isinstance(scores, ReplicatedScores) and scores.source == "examples"
    assert scores.values.shape == (2, 4, 3, 1000)
    result = api.analyze_variance(scores)
    assert result.notes == ()
    per_unit = result.per_unit.set_index(["model", "language"])
    for model, dm in MODEL_SHIFT.items():
        for language, p in P_LANGUAGE.items():
            row = per_unit.loc[(model, language)]
            observed = np.array([correct[(model, language, s)].mean() for s in range(3)])
            # exact target given the data: the ideal bootstrap SD of each seed's accuracy
            exact = np.sqrt(observed * (1 - observed) / N_EXAMPLES).mean()
            assert abs(row["sigma_boot"] - exact) < 3 * row["se_sigma_boot"], (model, language)
            # the truth by construction: add the sampling noise of p̂ (delta method)
            true_p = p + dm + np.array(SEED_SHIFT)
            truth = np.sqrt(true_p * (1 - true_p) / N_EXAMPLES)
            slope = (1 - 2 * true_p) / (2 * np.sqrt(true_p * (1 - true_p) * N_EXAMPLES))
            sampling = np.sqrt(np.sum(slope**2 * true_p * (1 - true_p) / N_EXAMPLES)) / 3
            se = np.hypot(row["se_sigma_boot"], sampling)
            assert abs(row["sigma_boot"] - truth.mean()) < 3 * se, (model, language)
            # the mean over replicates is the observed accuracy, up to bootstrap MC error
            mc = exact / np.sqrt(1000)
            assert abs(row["mean"] - observed.mean()) < 4 * mc
            assert row["sigma_seed"] == pytest.approx(observed.std(ddof=1), abs=4 * mc)
            assert row["n_seeds"] == 3 and row["n_replicates"] == 1000


def test_store_bootstrap_is_paired_and_reuses_the_engine(
    accuracy_store: tuple[Path, dict[Any, np.ndarray]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """One vectorised engine call per (dataset, task, language) for all models and seeds."""
    path, _ = accuracy_store
    calls: list[tuple[tuple[int, ...], int]] = []
    engine = replicates_module.replicate_and_point_scores

    def spy(stats: np.ndarray, *args: Any, **kwargs: Any) -> tuple[np.ndarray, np.ndarray]:
        calls.append((np.shape(stats), kwargs["n_resamples"]))
        return engine(stats, *args, **kwargs)

    monkeypatch.setattr(replicates_module, "replicate_and_point_scores", spy)
    scores = api.load_replicated(store=path, metric="accuracy", n_replicates=300)
    assert calls == [((6, N_EXAMPLES, 2), 300)] * 4  # 2 models × 3 seeds, 4 languages
    again = api.load_replicated(store=path, metric="accuracy", n_replicates=300)
    assert isinstance(scores, ReplicatedScores) and isinstance(again, ReplicatedScores)
    np.testing.assert_array_equal(scores.values, again.values)  # reproducible by seed
    other = api.load_replicated(store=path, metric="accuracy", n_replicates=300, seed=1)
    assert isinstance(other, ReplicatedScores)
    assert not np.array_equal(scores.values, other.values)


def test_store_filters_and_identical_runs(tmp_path: Path) -> None:
    """Identical per-example data give identical replicates (shared weights); filters apply."""
    rng = np.random.default_rng(5)
    correct = {}
    for language in ("de", "en"):
        for seed in (0, 1):
            c = (rng.random(200) < 0.7).astype(float)
            correct[("A", language, seed)] = c
            correct[("B", language, seed)] = c.copy()
    path = write_accuracy_runs(tmp_path / "s.duckdb", correct)
    scores = api.load_replicated(store=path, metric="accuracy", n_replicates=200)
    assert isinstance(scores, ReplicatedScores)
    np.testing.assert_array_equal(scores.values[0], scores.values[1])
    only = api.load_replicated(store=path, models=["B"], languages=["en"], n_replicates=200)
    assert isinstance(only, ReplicatedScores)
    assert only.models == ("B",) and [u.language for u in only.units] == ["en"]
    np.testing.assert_array_equal(only.values[0, 0], scores.values[1, 1])  # unit seed per unit
    with pytest.raises(InputError, match="no stored runs|no rows match"):
        api.load_replicated(store=path, metric="accuracy", models=["nobody"])


@pytest.mark.slow
def test_store_bootstrap_se_is_calibrated_when_seeds_agree(tmp_path: Path) -> None:
    """Seeds that agree on every example: SE(σ_boot) vs the actual MC spread of σ̂_boot.

    With one shared weight matrix the four seeds' replicate series coincide, so
    σ̂_boot is the SD of one series of B replicates and its SE is that of one
    SD, σ/√(2(B − 1)): what the conservative bound for shared weights reports.
    """
    rng = np.random.default_rng(0)
    base = (rng.random(300) < 0.7).astype(float)
    correct = {("A", "de", seed): base for seed in range(4)}
    path = write_accuracy_runs(tmp_path / "s.duckdb", correct)
    estimates, ses = [], []
    for bootstrap_seed in range(30):
        scores = api.load_replicated(store=path, n_replicates=400, seed=bootstrap_seed)
        row = api.analyze_variance(scores).per_unit.iloc[0]
        estimates.append(row["sigma_boot"])
        ses.append(row["se_sigma_boot"])
    # the SD of 30 estimates is itself uncertain by ~13 %: allow 30 %
    assert np.std(estimates, ddof=1) < 1.3 * np.mean(ses)


def test_store_runs_with_different_configurations_are_separate_systems(tmp_path: Path) -> None:
    """lm-eval's acc and acc_norm are both stored as accuracy, told apart by config_hash."""
    from glotbench.store import Store

    rng = np.random.default_rng(11)
    path = tmp_path / "configs.duckdb"
    with Store.open(path) as store:
        for config, p in (("", 0.6), ("lm_eval=acc_norm", 0.8)):
            for seed in (0, 1):
                values = (rng.random(200) < p).astype(float)
                record = accuracy_record("M", "de", seed).model_copy(update={"config_hash": config})
                stats = np.column_stack([values, np.ones_like(values)])
                assert store.runs.write(record, [f"de-{i}" for i in range(200)], stats)
    scores = api.load_replicated(store=path, n_replicates=200)
    assert scores.models == ("M", "M [lm_eval=acc_norm]")
    assert (scores.seed_counts() == 2).all()  # two seeds each, not four of one model
    means = api.analyze_variance(scores).per_model.set_index("model")["mean"]
    assert means["M [lm_eval=acc_norm]"] > means["M"] + 0.1
