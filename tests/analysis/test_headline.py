"""The headline analysis: SEs against closed forms, one interval per cell in every view."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from glotbench.analysis.draws import DrawSettings, prepare_draws
from glotbench.analysis.headline import AnalysisSettings, analyze, analyze_view
from glotbench.analysis.replicates import ReplicatedScores, Unit
from glotbench.report.leaderboard import build_leaderboard


def _published(rng: np.random.Generator) -> ReplicatedScores:
    """One score per model and language (a published table), two tasks of 8 and 5 languages."""
    units = tuple(Unit("a", f"l{i}") for i in range(8)) + tuple(
        Unit("b", f"l{i}") for i in range(5)
    )
    values = rng.normal([[0.7], [0.6], [0.5]], 0.08, (3, len(units)))[..., None, None]
    return ReplicatedScores(("m1", "m2", "m3"), units, values, "scores")


def test_languages_only_se_is_the_stratified_bootstrap_se_in_closed_form() -> None:
    """Resampling each task's L_t languages with replacement, the mean of task means has
    variance Σ_t (1/T²) · v_t / L_t, v_t the plug-in (ddof = 0) variance of the task's scores
    (Efron & Tibshirani 1993, §5.2: the ideal bootstrap SE of a mean is √(v/n))."""
    source = _published(np.random.default_rng(1))
    result = analyze(source, AnalysisSettings(n_draws=40_000, seed=3))
    assert result.overall.settings.scheme == "languages-only"
    values = source.values[..., 0, 0]
    layout = [np.arange(8), np.arange(8, 13)]
    expected = np.sqrt(
        sum(values[:, idx].var(axis=1, ddof=0) / len(idx) for idx in layout) / len(layout) ** 2
    )
    order = [source.models.index(m) for m in result.overall.models]
    # Monte Carlo error of an SD from R draws: ≈ 1/√(2R) ≈ 0.35 % relative
    assert result.overall.se == pytest.approx(expected[order], rel=0.02)
    # the languages-only SE σ_b/√L (ddof = 1) is kept beside it
    se_b = np.sqrt(
        sum(values[:, idx].var(axis=1, ddof=1) / len(idx) for idx in layout) / len(layout) ** 2
    )
    assert result.overall.se_languages == pytest.approx(se_b[order], rel=1e-12)
    # the interval is the percentile interval of the draws (issue 22: it stays in the
    # metric's range); with 13 languages the mean is near normal, so it lies close to the
    # normal interval mean ± z·SE (within a fraction of an SE)
    draws = result.overall.draws
    np.testing.assert_allclose(result.overall.ci_low, np.quantile(draws, 0.025, axis=0))
    np.testing.assert_allclose(result.overall.ci_high, np.quantile(draws, 0.975, axis=0))
    z = norm.ppf(0.975)
    se = result.overall.se
    assert np.abs(result.overall.ci_low - (result.overall.observed - z * se)).max() < 0.2 * se.min()
    assert (
        np.abs(result.overall.ci_high - (result.overall.observed + z * se)).max() < 0.2 * se.min()
    )


def test_replicated_se_adds_seed_and_test_set_variance_to_the_languages() -> None:
    """Languages fixed, the SD of the draws is the replication SE √(Σ σ_w²)/L (σ_w over seeds
    and replicates, the closed form of a mean of independent cells); with the languages
    resampled as well it is larger, and close to √(SE_rep² + SE_lang²)."""
    rng = np.random.default_rng(2)
    n_lang = 12
    truth = rng.normal(0.7, 0.05, n_lang)
    seeds = rng.normal(0, 0.03, (2, n_lang, 4, 1))
    boot = rng.normal(0, 0.02, (2, n_lang, 4, 60))
    values = truth[None, :, None, None] + seeds + boot
    units = tuple(Unit("t", f"l{i}") for i in range(n_lang))
    source = ReplicatedScores(("a", "b"), units, values, "replicates")
    fixed = analyze(source, AnalysisSettings(n_draws=20_000, languages="none"))
    cells = values.reshape(2, n_lang, -1)
    closed = np.sqrt((cells.var(axis=2, ddof=0)).sum(axis=1)) / n_lang
    assert fixed.overall.se == pytest.approx(closed, rel=0.04)
    both = analyze(source, AnalysisSettings(n_draws=20_000))
    assert (both.overall.se > fixed.overall.se).all()
    assert (both.overall.se > both.overall.se_languages * 0.9).all()


def test_a_task_cell_is_the_same_in_the_overall_view_and_its_task_view() -> None:
    source = _published(np.random.default_rng(4))
    settings = AnalysisSettings(n_draws=500, seed=7)
    result = analyze(source, settings)
    for task in ("a", "b"):
        alone = analyze_view(source, settings, tasks=[task])
        assert np.array_equal(result.tasks[task].ci_low, alone.ci_low)
    import glotbench.report.leaderboard as board

    calls: list[dict] = []
    original = board.analyze_view

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(kwargs)
        return original(*args, **kwargs)

    board.analyze_view = counting  # type: ignore[assignment]
    try:
        data = build_leaderboard(source, settings=settings, analysis=result, language_groups={})
    finally:
        board.analyze_view = original  # type: ignore[assignment]
    # overall and task views come from the given analysis; only the language views are drawn
    assert all(call.get("languages") is not None for call in calls)
    views = data.payload["views"]
    for row in views["overall"]["rows"]:
        for task in ("a", "b"):
            task_row = next(r for r in views[f"task:{task}"]["rows"] if r["model"] == row["model"])
            assert row["sub"][task] == [task_row["score"], task_row["se"], *task_row["ci"]]
    # the page took the given analysis: its overall SEs are the analysis' own
    overall = {r["model"]: r["se"] for r in views["overall"]["rows"]}
    for m, model in enumerate(result.overall.models):
        assert overall[model] == round(float(result.overall.se[m]), 4)


def test_one_task_overall_is_the_task_view_and_ranks_use_the_same_draws() -> None:
    rng = np.random.default_rng(5)
    values = rng.normal(0.6, 0.05, (3, 6, 2, 30))
    units = tuple(Unit("t", f"l{i}") for i in range(6))
    source = ReplicatedScores(("a", "b", "c"), units, values, "replicates")
    settings = AnalysisSettings(n_draws=300, seed=1)
    result = analyze(source, settings)
    assert result.tasks["t"] is result.overall
    _, draws = prepare_draws(source, DrawSettings(n_draws=300, seed=1, languages="with")).aggregate(
        "mean"
    )
    assert np.array_equal(result.overall.draws, draws)
    assert result.overall.ranks is not None
    shares = result.summary()["rank_1_share"].to_numpy()
    assert shares.sum() == pytest.approx(100.0)
