"""Pairwise comparisons and aggregates: effect sizes, paired draws, closed forms, seeds."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.stats as sps

from glotbench import api
from glotbench.analysis.compare import EFFECT_THRESHOLD, aggregate_scores, compare_models
from glotbench.analysis.draws import (
    DesignError,
    DrawSettings,
    aggregate,
    language_draws,
    task_layout,
    unit_draws,
)
from glotbench.analysis.replicates import ReplicatedScores, Unit
from glotbench.analysis.variance import ComponentTable, components, components_from_summary
from glotbench.errors import InputError

from .conftest import replicated, simulate, write_accuracy_runs


def _json_roundtrip(result: object) -> dict:
    """The result's JSON form exactly as the CLI prints it (no NaN or infinity allowed)."""
    return json.loads(json.dumps(result.to_dict(), allow_nan=False))  # type: ignore[attr-defined]


def _row(frame: pd.DataFrame, **where: object) -> pd.Series:
    mask = np.ones(len(frame), dtype=bool)
    for column, value in where.items():
        mask &= (frame[column] == value).to_numpy()
    assert mask.sum() == 1, where
    return frame[mask].iloc[0]


# -- identical and clearly different models -----------------------------------------


def test_identical_data_give_zero_difference_and_zero_effect() -> None:
    values = simulate(
        np.random.default_rng(0),
        [70.0, 70.0],
        tau=3,
        sigma_seed=0.5,
        sigma_boot=0.8,
        n_languages=6,
        n_seeds=3,
        n_reps=50,
    )
    values[1] = values[0]  # model m1 is a copy of m0
    for scheme in ("nonparametric", "parametric"):
        result = compare_models(replicated(values), DrawSettings(scheme=scheme, n_draws=500))
        for frame in (result.aggregates, result.per_language):
            assert (frame["difference"] == 0).all()
            assert (frame["effect_size"] == 0).all()  # 0, not NaN, whatever the SD
            assert not frame["flagged"].any()
        if scheme == "nonparametric":  # paired draws: the SD of the difference is exactly 0
            assert (result.aggregates["sd"] == 0).all()
            assert (result.per_language["sd"] == 0).all()
        else:  # independent Gaussian draws per model
            assert (result.aggregates["sd"] > 0).all()
        payload = _json_roundtrip(result)
        assert all(r["effect_size"] == 0.0 for r in payload["aggregates"])


def test_models_with_the_same_truth_get_effect_sizes_centred_on_zero() -> None:
    """Same mu, independent seed and bootstrap noise: effects spread around 0, rarely flagged."""
    values = simulate(
        np.random.default_rng(1),
        [70.0, 70.0, 70.0],
        tau=3,
        sigma_seed=0.5,
        sigma_boot=0.8,
        n_languages=200,
        n_seeds=4,
        n_reps=40,
    )
    result = compare_models(replicated(values), DrawSettings(n_draws=2000, seed=1))
    effects = result.per_language["effect_size"].to_numpy()
    assert effects.size == 3 * 200
    se = effects.std(ddof=1) / np.sqrt(effects.size)
    assert abs(effects.mean()) < 4 * se  # centred on zero (pairs share models: allow 4 SE)
    assert result.per_language["flagged"].mean() < 0.05
    mean_rows = result.aggregates[result.aggregates["aggregator"] == "mean"]
    assert (mean_rows["effect_size"].abs() < EFFECT_THRESHOLD).all()
    # share of draws where A is better, for identical truth, is near one half
    assert (mean_rows["share_a_better"].between(0.2, 0.8)).all()


def test_clearly_better_model_is_flagged() -> None:
    values = simulate(
        np.random.default_rng(2),
        [75.0, 70.0],
        tau=3,
        sigma_seed=0.5,
        sigma_boot=0.8,
        n_languages=8,
        n_seeds=4,
        n_reps=40,
    )
    result = compare_models(replicated(values), DrawSettings(n_draws=2000))
    for _, row in result.aggregates.iterrows():
        assert (row["model_a"], row["model_b"]) == ("m0", "m1")
        assert row["difference"] == pytest.approx(5.0, abs=0.5)
        assert row["effect_size"] > EFFECT_THRESHOLD and row["flagged"]
        assert row["ci_low"] > 0 and row["share_a_better"] == 1.0
    assert result.per_language["flagged"].all()
    assert (result.per_language["effect_size"] > 2).all()


def test_effect_is_difference_over_sd_of_the_draws() -> None:
    values = simulate(
        np.random.default_rng(3),
        [70.0, 69.5],
        tau=1,
        sigma_seed=0.5,
        sigma_boot=0.8,
        n_languages=5,
        n_seeds=3,
        n_reps=20,
    )
    scores = replicated(values)
    settings = DrawSettings(n_draws=1000, seed=4)
    result = compare_models(scores, settings, aggregators=("mean",))
    draws = unit_draws(scores, settings)
    diff_draws = draws[:, 0].mean(axis=1) - draws[:, 1].mean(axis=1)
    means = components(scores).mean
    row = result.aggregates.iloc[0]
    assert row["difference"] == pytest.approx(means[0].mean() - means[1].mean(), rel=1e-12)
    assert row["sd"] == pytest.approx(diff_draws.std(ddof=1), rel=1e-12)
    assert row["effect_size"] == pytest.approx(row["difference"] / row["sd"], rel=1e-12)
    low, high = np.quantile(diff_draws, [0.025, 0.975])
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high), rel=1e-12)
    per_language = result.per_language
    np.testing.assert_allclose(per_language["sd"], (draws[:, 0] - draws[:, 1]).std(axis=0, ddof=1))


# -- the parametric scheme's closed form ---------------------------------------------


def _summary_table(sigma_a: np.ndarray, sigma_b: np.ndarray) -> ComponentTable:
    n = sigma_a.size
    frame = pd.DataFrame(
        {
            "model": ["A"] * n + ["B"] * n,
            "language": [f"l{i:02d}" for i in range(n)] * 2,
            "score": np.r_[np.linspace(60, 80, n), np.linspace(61, 79, n)],
            "sigma_w": np.r_[sigma_a, sigma_b],
        }
    )
    return components_from_summary(frame)


def test_parametric_sd_of_mean_difference_matches_closed_form() -> None:
    """SD of the mean difference = √(Σ_l (σ_w,A,l² + σ_w,B,l²)) / L."""
    rng = np.random.default_rng(5)
    sigma_a, sigma_b = rng.uniform(0.5, 3, 12), rng.uniform(0.5, 3, 12)
    table = _summary_table(sigma_a, sigma_b)
    n_draws = 4000
    result = compare_models(table, DrawSettings(scheme="parametric", n_draws=n_draws))
    closed = np.sqrt(np.sum(sigma_a**2 + sigma_b**2)) / 12
    row = _row(result.aggregates, aggregator="mean")
    # relative MC error of an SD from R draws ≈ 1/√(2(R − 1))
    assert row["sd"] == pytest.approx(closed, rel=4 / np.sqrt(2 * (n_draws - 1)))
    np.testing.assert_allclose(
        result.per_language["sd"],
        np.hypot(sigma_a, sigma_b),
        rtol=4 / np.sqrt(2 * (n_draws - 1)),
    )


def test_nonparametric_scheme_refuses_ready_sds_and_suggests_parametric() -> None:
    table = _summary_table(np.ones(3), np.ones(3))
    with pytest.raises(DesignError, match="scheme='parametric'"):
        compare_models(table, DrawSettings(n_draws=100))


def test_one_score_per_cell_cannot_be_resampled() -> None:
    values = simulate(
        np.random.default_rng(6),
        [1.0, 2.0],
        tau=1,
        sigma_seed=0.1,
        sigma_boot=0.1,
        n_languages=3,
        n_seeds=1,
        n_reps=1,
    )
    with pytest.raises(DesignError, match="single score.*scheme='parametric'"):
        compare_models(replicated(values), DrawSettings(n_draws=100))
    with pytest.raises(DesignError, match="parametric resampling needs a within-language SD"):
        compare_models(replicated(values), DrawSettings(scheme="parametric", n_draws=100))
    # languages only: the uncertainty of a published table (one score per language)
    with pytest.raises(DesignError, match="languages='with'"):
        compare_models(replicated(values), DrawSettings(scheme="languages-only", n_draws=100))
    result = compare_models(
        replicated(values), DrawSettings(scheme="languages-only", n_draws=200, languages="with")
    )
    assert np.isfinite(result.aggregates["sd"]).all()


# -- paired draws from per-example statistics -----------------------------------------


def test_paired_store_draws(tmp_path: Path) -> None:
    """Shared bootstrap weights: identical data → zero SD of differences; near-identical
    data → the SD of the paired difference, √(var(c_A − c_B)/n), far below the unpaired SD."""
    rng = np.random.default_rng(7)
    n = 500
    correct = {}
    for language in ("de", "en", "fr"):
        a = (rng.random(n) < 0.7).astype(float)
        b = a.copy()
        flip = rng.random(n) < 0.05
        b[flip] = 1 - b[flip]
        correct[("A", language, 0)] = a
        correct[("Acopy", language, 0)] = a.copy()
        correct[("B", language, 0)] = b
    path = write_accuracy_runs(tmp_path / "s.duckdb", correct)
    scores = api.load_replicated(store=path, metric="accuracy", n_replicates=2000)
    assert isinstance(scores, ReplicatedScores)
    result = compare_models(scores, DrawSettings(n_draws=4000, seed=2))
    same = result.per_language[result.per_language["model_b"] == "Acopy"]
    assert (same["sd"] == 0).all() and (same["difference"] == 0).all()
    assert (same["effect_size"] == 0).all()
    mean_same = _row(result.aggregates, aggregator="mean", model_a="A", model_b="Acopy")
    assert mean_same["sd"] == 0 and mean_same["effect_size"] == 0
    per_language = result.per_language
    paired = per_language[(per_language["model_a"] == "A") & (per_language["model_b"] == "B")]
    paired = paired.set_index("language")
    for language in ("de", "en", "fr"):
        d = correct[("A", language, 0)] - correct[("B", language, 0)]
        closed = np.sqrt(d.var() / n)  # ideal paired bootstrap SD of the difference
        assert paired.loc[language, "sd"] == pytest.approx(closed, rel=0.1)
        unpaired = np.hypot(
            *(
                np.sqrt(c.mean() * (1 - c.mean()) / n)
                for c in (correct[("A", language, 0)], correct[("B", language, 0)])
            )
        )
        assert paired.loc[language, "sd"] < unpaired / 2


# -- language resampling ----------------------------------------------------------------


def _spread_design(replication_sd: float, n_languages: int = 30) -> ReplicatedScores:
    """Two models whose per-language differences vary a lot (SD ≈ 4), little replication noise."""
    rng = np.random.default_rng(8)
    values = simulate(
        rng,
        [70.0, 68.0],
        tau=5,
        sigma_seed=replication_sd,
        sigma_boot=replication_sd,
        n_languages=n_languages,
        n_seeds=3,
        n_reps=30,
        shared_languages=False,
    )
    return replicated(values)


def test_language_resampling_with_replacement_inflates_sd_towards_between_language_sd() -> None:
    scores = _spread_design(replication_sd=0.2)
    table = components(scores)
    diffs = table.mean[0] - table.mean[1]
    n_languages = diffs.size
    target = diffs.std(ddof=0) / np.sqrt(n_languages)  # SD of the mean of L resampled diffs
    n_draws = 4000
    tol = 4 / np.sqrt(2 * (n_draws - 1))

    def sd(settings: DrawSettings) -> float:
        result = compare_models(scores, settings, aggregators=("mean",))
        return float(result.aggregates["sd"].iloc[0])

    fixed = sd(DrawSettings(n_draws=n_draws))
    with_replacement = sd(DrawSettings(n_draws=n_draws, languages="with"))
    languages_only = sd(DrawSettings(scheme="languages-only", n_draws=n_draws, languages="with"))
    assert fixed < target / 5
    assert with_replacement > 5 * fixed
    assert languages_only == pytest.approx(target, rel=tol)
    # replication noise adds a little on top of the language spread
    assert target * (1 - tol) < with_replacement < target * 1.1
    # without replacement to k < L: finite-population correction √((L − k)/(L − 1))
    k = 10
    subsample = sd(DrawSettings(scheme="languages-only", n_draws=n_draws, languages="without", k=k))
    fpc = np.sqrt((n_languages - k) / (n_languages - 1))
    expected = diffs.std(ddof=0) / np.sqrt(k) * fpc
    assert subsample == pytest.approx(expected, rel=tol)
    # k = L without replacement is a permutation: no language uncertainty at all
    full = sd(DrawSettings(scheme="languages-only", n_draws=200, languages="without"))
    assert full == pytest.approx(0.0, abs=1e-12)


def test_language_draws_are_shared_and_stratified_by_task() -> None:
    units = [
        Unit("t1", "de"),
        Unit("t1", "en"),
        Unit("t2", "de"),
        Unit("t2", "fr"),
        Unit("t2", "sw"),
    ]
    layout = task_layout(units)
    assert [list(x) for x in layout] == [[0, 1], [2, 3, 4]]
    draws = language_draws(600, layout, DrawSettings(n_draws=600, languages="with"))
    assert draws is not None
    assert draws[0].shape == (600, 2) and draws[1].shape == (600, 3)
    assert set(np.unique(draws[0])) == {0, 1} and set(np.unique(draws[1])) == {2, 3, 4}
    without = language_draws(600, layout, DrawSettings(n_draws=600, languages="without", k=2))
    assert without is not None
    assert without[0].shape == (600, 2) and without[1].shape == (600, 2)
    assert all(len(set(row)) == 2 for row in without[1])  # no repeats
    assert language_draws(10, layout, DrawSettings(n_draws=10)) is None
    with pytest.raises(InputError, match="k must be at least 1"):
        language_draws(10, layout, DrawSettings(n_draws=10, languages="with", k=0))


# -- reproducibility -------------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["nonparametric", "parametric"])
def test_draws_are_reproducible_and_have_the_prefix_property(scheme: str) -> None:
    values = simulate(
        np.random.default_rng(9),
        [1.0, 2.0, 3.0],
        tau=1,
        sigma_seed=0.3,
        sigma_boot=0.3,
        n_languages=4,
        n_seeds=3,
        n_reps=10,
    )
    scores = replicated(values)
    short = unit_draws(scores, DrawSettings(scheme=scheme, n_draws=300, seed=5))  # type: ignore[arg-type]
    long = unit_draws(scores, DrawSettings(scheme=scheme, n_draws=1000, seed=5))  # type: ignore[arg-type]
    np.testing.assert_array_equal(short, long[:300])
    other = unit_draws(scores, DrawSettings(scheme=scheme, n_draws=300, seed=6))  # type: ignore[arg-type]
    assert not np.array_equal(short, other)
    layout = task_layout([Unit("t1", "de"), Unit("t1", "en"), Unit("t2", "de"), Unit("t2", "fr")])
    for how in ("with", "without"):
        lang_short = language_draws(300, layout, DrawSettings(n_draws=300, seed=5, languages=how))
        lang_long = language_draws(1000, layout, DrawSettings(n_draws=1000, seed=5, languages=how))
        assert lang_short is not None and lang_long is not None
        for task in range(2):  # the second task's draws too
            np.testing.assert_array_equal(lang_short[task], lang_long[task][:300])
    settings = DrawSettings(scheme=scheme, n_draws=700, seed=5, languages="with")  # type: ignore[arg-type]
    first = compare_models(scores, settings)
    again = compare_models(scores, settings)
    pd.testing.assert_frame_equal(first.aggregates, again.aggregates)
    pd.testing.assert_frame_equal(first.per_language, again.per_language)


def test_nonparametric_draws_pick_existing_replicates_and_pair_models() -> None:
    values = simulate(
        np.random.default_rng(10),
        [1.0, 2.0],
        tau=1,
        sigma_seed=0.3,
        sigma_boot=0.3,
        n_languages=3,
        n_seeds=2,
        n_reps=4,
    )
    values[1] = values[0] + 1.0  # m1 = m0 + 1 on every seed and replicate
    scores = replicated(values)
    draws = unit_draws(scores, DrawSettings(n_draws=500))
    np.testing.assert_allclose(draws[:, 1] - draws[:, 0], 1.0)  # same seed and replicate picked
    for u in range(3):
        assert set(np.round(draws[:, 0, u], 12)) == set(np.round(values[0, u].ravel(), 12))


def test_unbalanced_seeds_are_drawn_from_each_models_own_seeds() -> None:
    values = simulate(
        np.random.default_rng(11),
        [1.0, 2.0],
        tau=1,
        sigma_seed=0.3,
        sigma_boot=0.3,
        n_languages=2,
        n_seeds=4,
        n_reps=3,
    )
    values[1, :, 2:] = np.nan  # m1 has two seeds only
    draws = unit_draws(replicated(values), DrawSettings(n_draws=2000))
    assert np.isfinite(draws).all()
    for u in range(2):
        assert set(np.round(draws[:, 1, u], 12)) == set(np.round(values[1, u, :2].ravel(), 12))
        assert set(np.round(draws[:, 0, u], 12)) == set(np.round(values[0, u].ravel(), 12))


def test_unbalanced_languages_are_left_out_with_a_note_naming_the_model() -> None:
    values = simulate(
        np.random.default_rng(12),
        [1.0, 2.0, 3.0],
        tau=1,
        sigma_seed=0.3,
        sigma_boot=0.3,
        n_languages=4,
        n_seeds=2,
        n_reps=5,
    )
    values[2, 3] = np.nan  # m2 lacks l003
    result = compare_models(replicated(values), DrawSettings(n_draws=300))
    assert result.languages == ("l000", "l001", "l002")
    assert any("m2 lacks l003" in note for note in result.notes)
    values[1, :3] = np.nan  # now m1 has only l003: nothing shared
    with pytest.raises(DesignError, match="share no language"):
        compare_models(replicated(values), DrawSettings(n_draws=300))


# -- zero variance ------------------------------------------------------------------------


@pytest.mark.parametrize("n_draws", [300, 1000])
def test_zero_variance_different_models(n_draws: int) -> None:
    """No replication variance but different scores: an infinitely clear difference.

    (The SD of equal draws must be exactly 0, not float noise of ~1e-15 that
    would give an effect size of ~1e14.)
    """
    values = np.full((2, 3, 2, 4), 0.5)
    values[0] = 0.6
    settings = DrawSettings(n_draws=n_draws)
    result = compare_models(replicated(values), settings)
    for frame in (result.aggregates, result.per_language):
        assert (frame["sd"] == 0).all()
        assert np.isposinf(frame["effect_size"]).all()
        assert frame["flagged"].all()
    payload = _json_roundtrip(result)
    for record in payload["aggregates"] + payload["per_language"]:
        assert record["effect_size"] is None  # JSON has no infinity
        assert record["flagged"] is True and record["sd"] == 0.0
    assert any("infinite" in note for note in payload["notes"])
    aggregates = aggregate_scores(replicated(values), settings).frame
    assert (aggregates["se_resampled"] == 0).all()
    assert (aggregates[aggregates["aggregator"] == "mean"]["se_closed_form"] == 0).all()


# -- aggregates with standard errors ------------------------------------------------------


def test_aggregate_closed_form_se_and_parametric_resampled_se() -> None:
    values = simulate(
        np.random.default_rng(13),
        [60.0, 70.0],
        tau=3,
        sigma_seed=0.6,
        sigma_boot=1.0,
        n_languages=10,
        n_seeds=4,
        n_reps=40,
    )
    scores = replicated(values)
    table = components(scores)
    n_draws = 4000
    result = aggregate_scores(scores, DrawSettings(scheme="parametric", n_draws=n_draws))
    frame = result.frame
    assert set(frame["aggregator"]) == {"mean", "geometric_mean", "median"}
    tol = 4 / np.sqrt(2 * (n_draws - 1))
    for m, model in enumerate(table.models):
        row = _row(frame, model=model, aggregator="mean")
        closed = np.sqrt(np.sum(table.sigma_w[m] ** 2)) / 10
        assert row["se_closed_form"] == pytest.approx(closed, rel=1e-12)
        assert row["se_resampled"] == pytest.approx(closed, rel=tol)
        assert row["se_languages"] == pytest.approx(table.mean[m].std(ddof=1) / np.sqrt(10))
        assert row["score"] == pytest.approx(table.mean[m].mean())
        assert row["n_languages"] == 10
        assert np.isnan(_row(frame, model=model, aggregator="median")["se_closed_form"])
    # nonparametric: the SD of a single seed × replicate draw, √(σ_seed² + σ_boot²)-ish
    nonparametric = aggregate_scores(scores, DrawSettings(n_draws=n_draws), aggregators=("mean",))
    for model in table.models:
        row = _row(nonparametric.frame, model=model)
        assert row["se_resampled"] == pytest.approx(row["se_closed_form"], rel=0.15)
    _json_roundtrip(result)


def test_aggregate_closed_form_with_several_tasks() -> None:
    """Each task counts once: w_u = 1/(T·L_t), SE = √(Σ_u w_u² σ_w,u²)."""
    rng = np.random.default_rng(14)
    frame = []
    for task, n_languages in (("t1", 3), ("t2", 6)):
        values = simulate(
            rng,
            [50.0, 55.0],
            tau=2,
            sigma_seed=0.5,
            sigma_boot=0.7,
            n_languages=n_languages,
            n_seeds=3,
            n_reps=20,
        )
        part = replicated(values, task=task).to_frame()
        frame.append(part)
    from glotbench.analysis.replicates import replicates_from_frame

    scores = replicates_from_frame(pd.concat(frame, ignore_index=True))
    table = components(scores)
    n_draws = 4000
    result = aggregate_scores(scores, DrawSettings(scheme="parametric", n_draws=n_draws))
    weights = np.array([1 / 6] * 3 + [1 / 12] * 6)
    for m, model in enumerate(table.models):
        row = _row(result.frame, model=model, aggregator="mean")
        closed = np.sqrt(np.sum((weights * table.sigma_w[m]) ** 2))
        assert row["se_closed_form"] == pytest.approx(closed, rel=1e-12)
        assert row["se_resampled"] == pytest.approx(closed, rel=4 / np.sqrt(2 * (n_draws - 1)))
        task_means = [table.mean[m, :3].mean(), table.mean[m, 3:].mean()]
        assert row["score"] == pytest.approx(np.mean(task_means))
    hierarchy = result.hierarchy
    overall = hierarchy[hierarchy["level"] == "overall"]
    assert list(overall["n_tasks"]) == [2, 2]


def test_geometric_mean_of_non_positive_scores_gives_a_note() -> None:
    values = simulate(
        np.random.default_rng(15),
        [0.5, 1.0],
        tau=1,
        sigma_seed=0.5,
        sigma_boot=0.5,
        n_languages=4,
        n_seeds=2,
        n_reps=5,
    )  # many scores ≤ 0
    result = aggregate_scores(replicated(values), DrawSettings(n_draws=300))
    assert "geometric_mean" not in set(result.frame["aggregator"])
    assert {"mean", "median"} <= set(result.frame["aggregator"])
    assert any("geometric mean needs positive scores" in note for note in result.notes)
    with pytest.raises(DesignError, match="positive scores"):
        aggregate(np.array([1.0, -0.5]), "geometric_mean")
    # a zero score: the geometric mean of non-negative numbers is 0 (as scipy.stats.gmean)
    with np.errstate(divide="ignore"):
        expected_zero = sps.gmean([1.0, 0.0])
    assert aggregate(np.array([1.0, 0.0]), "geometric_mean") == expected_zero == 0.0
    assert aggregate(np.array([1.0, 4.0]), "geometric_mean") == pytest.approx(2.0)
    with pytest.raises(InputError, match="unknown aggregator"):
        aggregate(np.array([1.0]), "harmonic")  # type: ignore[arg-type]


def test_n_draws_must_be_at_least_two() -> None:
    values = simulate(
        np.random.default_rng(16),
        [1.0],
        tau=1,
        sigma_seed=1,
        sigma_boot=1,
        n_languages=2,
        n_seeds=2,
        n_reps=2,
    )
    with pytest.raises(InputError, match="n_draws must be at least 2"):
        compare_models(replicated(values), DrawSettings(n_draws=1))


def test_checking_the_draws_lays_out_no_replicates(monkeypatch: pytest.MonkeyPatch) -> None:
    """prepare_draws checks the non-parametric scheme from the replicates' shape; the copy
    of every replicate in drawing order is made once, when the draws are made."""
    import glotbench.analysis.draws as draws_module

    values = simulate(
        np.random.default_rng(17),
        [1.0, 1.5],
        tau=1,
        sigma_seed=0.2,
        sigma_boot=0.2,
        n_languages=3,
        n_seeds=2,
        n_reps=20,
    )
    made: list[object] = []
    picker = draws_module._ReplicatePicker

    def counting(*args: object) -> object:
        made.append(args)
        return picker(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(draws_module, "_ReplicatePicker", counting)
    scores = replicated(values)
    design = draws_module.prepare_draws(scores, DrawSettings(n_draws=300))
    assert made == []
    blocks = [block for _, block in design.blocks()]
    assert len(made) == 1 and sum(b.shape[0] for b in blocks) == 300
    np.testing.assert_array_equal(np.concatenate(blocks), unit_draws(scores, design.settings))
    with pytest.raises(InputError, match="n_draws must be at least 2"):
        draws_module.check_draws(scores, DrawSettings(n_draws=1))
    with pytest.raises(DesignError, match="with ready SDs use scheme='parametric'"):
        draws_module.check_draws(components(scores), DrawSettings(n_draws=10))
