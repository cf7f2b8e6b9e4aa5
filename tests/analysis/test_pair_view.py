"""The leaderboard's pairwise data: the analysis' paired comparisons of the top models' pairs.

References: numpy written out pair by pair on the draws themselves (SD with
ddof = 1, percentiles, shares), and the comparison of the two models alone
(the draw stream does not depend on which models are drawn).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from glotbench import api
from glotbench.analysis.compare import compare_models
from glotbench.analysis.draws import prepare_draws
from glotbench.analysis.headline import AnalysisSettings, analyze, analyze_view
from glotbench.analysis.pair_view import models_within_budget, pair_comparisons
from glotbench.analysis.replicates import ReplicatedScores, Unit
from glotbench.report.leaderboard import build_leaderboard

from .conftest import simulate

SETTINGS = AnalysisSettings(n_draws=400, seed=5)


def _source(n_models: int = 6, seed: int = 0) -> ReplicatedScores:
    """Two tasks × 4 languages, 3 seeds × 20 replicates, models 0.01 apart."""
    rng = np.random.default_rng(seed)
    parts = [
        simulate(
            rng,
            [0.70 - 0.01 * m for m in range(n_models)],
            tau=0.05,
            sigma_seed=0.01,
            sigma_boot=0.02,
            n_languages=4,
            n_seeds=3,
            n_reps=20,
        )
        for _ in range(2)
    ]
    units = tuple(Unit(task, f"l{i}") for task in ("nli", "qa") for i in range(4))
    models = tuple(f"m{m}" for m in range(n_models))
    return ReplicatedScores(models, units, np.concatenate(parts, axis=1), "replicates")


def _sub(source: ReplicatedScores, models: list[str]) -> ReplicatedScores:
    rows = [source.models.index(m) for m in models]
    return ReplicatedScores(tuple(models), source.units, source.values[rows], source.source)


def test_budget_is_the_largest_k_within_the_cap() -> None:
    for n_models in (2, 3, 10, 1000):
        for n_cells in (1, 7, 40):
            for cap in (1, 45, 1000, 50_000):
                k = models_within_budget(n_models, n_cells, cap)
                assert 2 <= k <= n_models
                if k > 2:
                    assert k * (k - 1) // 2 * n_cells <= cap
                if k < n_models:
                    assert (k + 1) * k // 2 * n_cells > cap
    assert models_within_budget(1000, 40, 50_000) == 50  # 1,225 pairs × 40 cells = 49,000


def test_pairs_equal_numpy_on_the_views_draws_and_the_two_model_comparison() -> None:
    source = _source()
    analysis = analyze(source, SETTINGS)
    overall = analysis.overall
    pairs = pair_comparisons(source, overall, SETTINGS)
    data = pairs.to_dict()
    order = [overall.models[m] for m in np.argsort(-overall.observed, kind="stable")]
    assert data["models"] == order and data["complete"]
    assert len(data["pairs"]) == 15 and data["units"][0] == ["nli", "l0"]
    # per-cell references: the unit draws with the languages fixed
    cell_design = prepare_draws(source, SETTINGS.draws(source, languages=False))
    unit_draws = cell_design.draws  # (R, M, U)
    for key, pair in data["pairs"].items():
        i, j = (int(x) for x in key.split(","))
        a, b = (source.models.index(data["models"][x]) for x in (i, j))
        va, vb = overall.models.index(data["models"][i]), overall.models.index(data["models"][j])
        # overall: the same draws as the view's ranks and ties
        diff = overall.draws[:, va] - overall.draws[:, vb]
        assert pair["overall"]["difference"] == pytest.approx(
            overall.observed[va] - overall.observed[vb], rel=1e-3
        )
        assert pair["overall"]["sd"] == pytest.approx(np.std(diff, ddof=1), rel=1e-3)
        low, high = np.quantile(diff, [0.025, 0.975])
        assert pair["overall"]["ci"] == pytest.approx([low, high], rel=1e-3, abs=1e-7)
        assert pair["overall"]["share_a_better"] == pytest.approx(np.mean(diff > 0), abs=1e-4)
        tied = (low <= 0 <= high) == (pair["overall"]["ci"][0] <= 0 <= pair["overall"]["ci"][1])
        assert tied
        # per cell
        cell_diff = unit_draws[:, a, :] - unit_draws[:, b, :]
        sd = np.std(cell_diff, axis=0, ddof=1)
        observed = cell_design.observed[a] - cell_design.observed[b]
        np.testing.assert_allclose(pair["sd"], sd, rtol=1e-3)
        np.testing.assert_allclose(pair["difference"], observed, rtol=1e-3, atol=1e-7)
        np.testing.assert_allclose(pair["effect"], observed / sd, rtol=2e-3)
        assert pair["flagged"] == [bool(abs(x) >= 2) for x in observed / sd]
        assert pair["n_a_better"] == int((observed > 0).sum())
    # a pair alone gives the same numbers (the draws do not depend on the models drawn)
    first, second = data["models"][1], data["models"][3]
    alone = compare_models(
        _sub(source, [first, second]), SETTINGS.draws(source), aggregators=("mean",)
    )
    row = alone.aggregates.iloc[0]
    embedded = data["pairs"]["1,3"]
    assert embedded["overall"]["sd"] == pytest.approx(row["sd"], rel=1e-3)
    assert embedded["overall"]["ci"] == pytest.approx([row["ci_low"], row["ci_high"]], rel=1e-3)
    np.testing.assert_allclose(embedded["sd"], alone.per_language["sd"], rtol=1e-3)


def test_only_the_top_models_within_the_budget_are_compared() -> None:
    source = _source(n_models=12)
    overall = analyze_view(source, SETTINGS)
    pairs = pair_comparisons(source, overall, SETTINGS, max_cells=8 * 15)  # 6 models: 15 pairs
    data = pairs.to_dict()
    top = [overall.models[m] for m in np.argsort(-overall.observed, kind="stable")][:6]
    assert data["models"] == top and not data["complete"] and data["n_ranked"] == 12
    assert len(data["pairs"]) == 15
    assert len(pair_comparisons(source, overall, SETTINGS, n_models=3).models) == 3


def test_cells_the_view_leaves_out_are_left_out_of_the_pairs() -> None:
    source = _source(n_models=3)
    values = source.values.copy()
    values[2, 5] = np.nan  # m2 lacks qa/l1: the overall view drops that cell for everyone
    source = ReplicatedScores(source.models, source.units, values, source.source)
    overall = analyze_view(source, SETTINGS)
    assert overall.left_out == ("qa/l1",)
    data = pair_comparisons(source, overall, SETTINGS).to_dict()
    assert ["qa", "l1"] not in data["units"] and len(data["units"]) == 7
    # the overall numbers are still the view's draws
    pair = data["pairs"]["0,1"]
    order = [overall.models[m] for m in np.argsort(-overall.observed, kind="stable")]
    va, vb = overall.models.index(order[0]), overall.models.index(order[1])
    diff = overall.draws[:, va] - overall.draws[:, vb]
    assert pair["overall"]["sd"] == pytest.approx(np.std(diff, ddof=1), rel=1e-3)


def test_unreplicated_scores_have_no_per_cell_sd() -> None:
    source = _source(n_models=3)
    single = ReplicatedScores(
        source.models, source.units, source.values[:, :, :1, :1].copy(), "published"
    )
    settings = AnalysisSettings(n_draws=300)
    overall = analyze_view(single, settings)
    data = pair_comparisons(single, overall, settings).to_dict()
    pair = data["pairs"]["0,1"]
    assert pair["sd"] is None and pair["effect"] is None and pair["flagged"] is None
    assert pair["overall"]["sd"] > 0  # languages resampled


@pytest.mark.slow
def test_page_data_equals_analyze_compare_json(tmp_path: Path) -> None:
    """The page's numbers for a pair are what its `glotbench analyze compare` command prints."""
    from tests.report.conftest import write_store

    store = write_store(tmp_path / "s.duckdb", {"alpha": 0.8, "beta": 0.7, "gamma": 0.75}, n=40)
    source = api.leaderboard_source(store=store, n_replicates=100, seed=2)
    settings = AnalysisSettings(n_draws=300, seed=2)
    page = build_leaderboard(source.replicated, settings=settings).payload["pairwise"]
    assert page["models"] == ["alpha", "gamma", "beta"]
    command = page["command"].split()[1:]
    assert command[:2] == ["analyze", "compare"]
    done = subprocess.run(
        [sys.executable, "-m", "glotbench", *command, "--store", str(store)]
        + ["--replicates", "100", "--json", "--pairs-out", str(tmp_path / "pairs.parquet")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    mean = next(r for r in printed["aggregates"] if r["aggregator"] == "mean")
    pair = page["pairs"]["0,2"]  # alpha (0) − beta (2)
    assert (mean["model_a"], mean["model_b"]) == ("alpha", "beta")
    for key, value in (("difference", "difference"), ("sd", "sd"), ("effect", "effect_size")):
        assert pair["overall"][key] == pytest.approx(mean[value], rel=1e-3)
    assert pair["overall"]["ci"] == pytest.approx([mean["ci_low"], mean["ci_high"]], rel=1e-3)
    assert pair["overall"]["share_a_better"] == pytest.approx(mean["share_a_better"], abs=1e-4)
    cells = {
        r["language"]: r
        for r in printed["per_language"]
        if (r["model_a"], r["model_b"]) == ("alpha", "beta")
    }
    for k, (task, language) in enumerate(page["units"]):
        row = cells[f"{task}/{language}"]
        assert pair["difference"][k] == pytest.approx(row["difference"], rel=1e-3, abs=1e-7)
        assert pair["sd"][k] == pytest.approx(row["sd"], rel=1e-3)


def test_ranked_comparisons_use_the_overall_views_cells_and_are_reused_only_when_they_fit() -> None:
    """The 5th model lacks a cell, so the overall view leaves that cell out for everyone: the
    ranked comparisons of the top 3 leave it out too, and the page's pairs reuse them as is."""
    from glotbench.analysis.pair_view import ranked_comparisons

    source = _source(n_models=5)
    values = source.values.copy()
    values[4, source.units.index(Unit("qa", "l3"))] = np.nan
    source = ReplicatedScores(source.models, source.units, values, source.source)
    analysis = analyze(source, SETTINGS)
    assert analysis.overall.left_out == ("qa/l3",) and len(analysis.overall.models) == 5
    ranked = ranked_comparisons(source, analysis, max_models=3)
    assert ranked.comparison is not None and "qa/l3" not in ranked.comparison.languages
    draws = SETTINGS.draws(source)
    assert ranked.covers(ranked.models, draws, 0.95, ("qa/l3",))
    assert not ranked.covers(ranked.models, draws, 0.90, ("qa/l3",))  # another level
    assert not ranked.covers(ranked.models, draws, 0.95, ())  # other cells
    reused = pair_comparisons(source, analysis.overall, SETTINGS, n_models=3, computed=ranked)
    fresh = pair_comparisons(source, analysis.overall, SETTINGS, n_models=3)
    assert reused.comparison is ranked.comparison
    assert json.dumps(reused.to_dict()) == json.dumps(fresh.to_dict())
