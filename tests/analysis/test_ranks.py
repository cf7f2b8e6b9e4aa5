"""Rank distributions, rank intervals and EuroEval's rank score, checked independently."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from glotbench.analysis.draws import DrawSettings, prepare_draws
from glotbench.analysis.euroeval_rank import euroeval_rank_scores, welch_greater_pvalue
from glotbench.analysis.rank_stats import draw_ranks, rank_intervals
from glotbench.analysis.ranks import rank_models
from glotbench.analysis.replicates import ReplicatedScores, Unit, replicates_from_frame
from glotbench.analysis.results import records
from glotbench.analysis.variance import components_from_summary
from glotbench.errors import InputError

from .conftest import replicated, simulate


def _four_models() -> ReplicatedScores:
    """Close models (m0..m2 overlap) and a clearly worse one (m3)."""
    values = simulate(
        np.random.default_rng(0),
        [70.0, 69.8, 69.5, 60.0],
        tau=3,
        sigma_seed=0.6,
        sigma_boot=0.8,
        n_languages=6,
        n_seeds=3,
        n_reps=30,
    )
    return replicated(values)


# -- rank distributions and intervals -----------------------------------------------


@pytest.mark.parametrize(
    "settings",
    [
        DrawSettings(n_draws=2000),
        DrawSettings(scheme="parametric", n_draws=2000, seed=3),
        DrawSettings(n_draws=2000, languages="without", k=3),
    ],
    ids=["nonparametric", "parametric", "subsampled"],
)
def test_distributions_sum_to_100_and_intervals_contain_the_modal_rank(
    settings: DrawSettings,
) -> None:
    result = rank_models(_four_models(), settings)
    distribution = result.distribution
    rank_columns = [f"rank_{r}" for r in range(1, 5)]
    assert list(distribution.columns) == ["aggregator", "model", *rank_columns]
    assert set(distribution["aggregator"]) == {"mean", "geometric_mean", "median"}
    np.testing.assert_allclose(distribution[rank_columns].sum(axis=1), 100.0)
    summary = result.summary
    assert len(summary) == 12
    assert (summary["rank_best"] <= summary["modal_rank"]).all()
    assert (summary["modal_rank"] <= summary["rank_worst"]).all()
    assert summary["mean_rank"].between(1, 4).all()
    worst = summary[summary["model"] == "m3"]
    assert (worst["rank_best"] == 4).all() and (worst["rank_worst"] == 4).all()
    close = summary[summary["model"] != "m3"]
    assert (close["rank_worst"] <= 3).all()
    assert (close["rank_worst"] > close["rank_best"]).any()  # the close models overlap


def test_a_dominant_model_has_rank_interval_one_one() -> None:
    values = simulate(
        np.random.default_rng(1),
        [90.0, 70.0, 69.0],
        tau=3,
        sigma_seed=0.5,
        sigma_boot=0.5,
        n_languages=5,
        n_seeds=3,
        n_reps=20,
    )
    result = rank_models(replicated(values), DrawSettings(n_draws=1000))
    top = result.summary[result.summary["model"] == "m0"]
    assert (top["rank_best"] == 1).all() and (top["rank_worst"] == 1).all()
    assert (top["mean_rank"] == 1).all() and (top["modal_rank"] == 1).all()
    # current EuroEval method: the best model's plug-in score is 1, inside its interval
    assert (top["euroeval_rank_low"] <= 1).all() and (top["euroeval_rank_high"] >= 1).all()
    assert (result.euroeval.datasets.query("model == 'm0'")["plug_in"] == 1).all()
    legacy = rank_models(replicated(values), DrawSettings(n_draws=200), rank_method="2025")
    assert (legacy.summary.query("model == 'm0'")["euroeval_rank_score"] == 1).all()
    assert (result.distribution[result.distribution["model"] == "m0"]["rank_1"] == 100).all()


def test_identical_models_tie_for_the_same_rank() -> None:
    """Competition ranking: equal aggregates share the better rank, in every draw."""
    values = simulate(
        np.random.default_rng(2),
        [70.0, 70.0, 60.0],
        tau=3,
        sigma_seed=0.5,
        sigma_boot=0.5,
        n_languages=4,
        n_seeds=3,
        n_reps=20,
    )
    values[1] = values[0]
    result = rank_models(replicated(values), DrawSettings(n_draws=500), aggregators=("mean",))
    distribution = result.distribution.set_index("model")
    assert distribution.loc["m0", "rank_1"] == 100 and distribution.loc["m1", "rank_1"] == 100
    assert distribution.loc["m2", "rank_3"] == 100
    summary = result.summary.set_index("model")
    assert (summary.loc["m0", "rank_best"], summary.loc["m0", "rank_worst"]) == (1, 2)
    plug_in = result.euroeval.datasets.set_index(["dataset", "model"])["plug_in"]
    np.testing.assert_array_equal(plug_in.xs("m0", level=1), plug_in.xs("m1", level=1))
    legacy = rank_models(
        replicated(values), DrawSettings(n_draws=100), aggregators=("mean",), rank_method="2025"
    ).summary.set_index("model")
    assert legacy.loc["m0", "euroeval_rank_score"] == legacy.loc["m1", "euroeval_rank_score"]


def test_distribution_and_intervals_agree_with_scipy_ranks_and_percentiles() -> None:
    """Side by side: ranks from scipy.stats.rankdata, intervals from np.percentile."""
    scores = _four_models()
    settings = DrawSettings(n_draws=1500, seed=9)
    result = rank_models(scores, settings, aggregators=("mean", "median"), confidence_level=0.9)
    design = prepare_draws(scores, settings)
    for aggregator in ("mean", "median"):
        draws = np.array(
            [
                [np.mean(d) if aggregator == "mean" else np.median(d) for d in draw]
                for draw in design.draws
            ]
        )  # (R, M), a plain loop
        ranks = sps.rankdata(-draws, method="min", axis=1)
        dist = result.distribution[result.distribution["aggregator"] == aggregator]
        for m, model in enumerate(scores.models):
            row = dist[dist["model"] == model].iloc[0]
            for r in range(1, 5):
                assert row[f"rank_{r}"] == pytest.approx(100 * np.mean(ranks[:, m] == r), abs=1e-10)
        summary = result.summary[result.summary["aggregator"] == aggregator].set_index("model")
        for i, model in enumerate(scores.models):
            better = worse = 0
            for j in range(4):
                if i == j:
                    continue
                low, high = np.percentile(draws[:, j] - draws[:, i], [5, 95])
                better += low > 0
                worse += high < 0
            assert summary.loc[model, "rank_best"] == 1 + better
            assert summary.loc[model, "rank_worst"] == 4 - worse
            assert summary.loc[model, "mean_rank"] == pytest.approx(ranks[:, i].mean(), abs=1e-10)


def test_draw_ranks_and_rank_intervals_directly() -> None:
    aggregates = np.array([[3.0, 2.0, 1.0], [3.0, 3.0, 1.0], [1.0, 2.0, 3.0]])
    np.testing.assert_array_equal(draw_ranks(aggregates), [[1, 2, 3], [1, 1, 3], [3, 2, 1]])
    dominant = np.column_stack([np.full(100, 10.0), np.linspace(0, 1, 100)])
    best, worst = rank_intervals(dominant, 0.95)
    assert list(best) == [1, 2] and list(worst) == [1, 2]


def test_ready_sds_rank_with_the_parametric_scheme() -> None:
    frame = pd.DataFrame(
        {
            "model": ["a", "a", "b", "b"],
            "language": ["de", "en", "de", "en"],
            "score": [80.0, 82.0, 70.0, 71.0],
            "sigma_w": [0.5, 0.5, 0.5, 0.5],
        }
    )
    result = rank_models(
        components_from_summary(frame),
        DrawSettings(scheme="parametric", n_draws=500),
        rank_method="2025",
    )
    summary = result.summary.set_index(["aggregator", "model"])
    assert summary.loc[("mean", "a"), "rank_worst"] == 1
    assert summary.loc[("mean", "b"), "rank_best"] == 2
    # EuroEval from ready SDs: n = 10 iterations when n_seeds is unknown; b is far worse
    assert summary.loc[("mean", "a"), "euroeval_rank_score"] == 1
    spread_de, spread_en = np.std([80.0, 70.0]), np.std([82.0, 71.0])
    expected = 1 + np.mean([10 / spread_de, 11 / spread_en])
    assert summary.loc[("mean", "b"), "euroeval_rank_score"] == pytest.approx(expected)


def test_geometric_mean_of_non_positive_scores_gives_a_note() -> None:
    values = simulate(
        np.random.default_rng(3),
        [0.2, 0.1],
        tau=1,
        sigma_seed=0.5,
        sigma_boot=0.5,
        n_languages=3,
        n_seeds=2,
        n_reps=4,
    )
    result = rank_models(replicated(values), DrawSettings(n_draws=200))
    assert set(result.distribution["aggregator"]) == {"mean", "median"}
    assert any("geometric mean needs positive scores" in note for note in result.notes)


# -- EuroEval rank score, superseded 2025 method (the current one: test_euroeval_rank.py)

# ten standardised iteration offsets (mean 0, SD 1)
_Z = np.array([-1.5, -1.0, -0.6, -0.3, 0.0, 0.1, 0.3, 0.6, 1.0, 1.4])
_Z = (_Z - _Z.mean()) / _Z.std(ddof=1)
ITERATIONS = {"A": 80 + 2 * _Z, "B": 78 + 5 * _Z, "C": 70 + 2 * _Z}
EXPECTED_C = 1 + (80 - 70) / np.std([80.0, 78.0, 70.0])  # pop SD = √(56/3) ≈ 4.32


def test_euroeval_hand_worked_example() -> None:
    """Means 80, 78, 70: B is not significantly worse than A (Welch p ≈ 0.13), so it shares
    A's score 1 and A stays the reference; C is (p ≈ 8e-10): 1 + (80 − 70)/pop_sd."""
    a, b, c = ITERATIONS["A"], ITERATIONS["B"], ITERATIONS["C"]
    assert sps.ttest_ind(a, b, equal_var=False, alternative="greater").pvalue > 0.05
    assert sps.ttest_ind(a, c, equal_var=False, alternative="greater").pvalue < 0.05
    assert EXPECTED_C == pytest.approx(3.3146, abs=1e-4)
    mean = np.array([80.0, 78.0, 70.0])
    sd = np.array([2.0, 5.0, 2.0])
    scores = euroeval_rank_scores(mean, sd, np.full(3, 10.0))
    np.testing.assert_allclose(scores, [1.0, 1.0, EXPECTED_C])
    # the input order does not matter
    np.testing.assert_allclose(
        euroeval_rank_scores(mean[::-1], sd[::-1], np.full(3, 10.0)), [EXPECTED_C, 1.0, 1.0]
    )


def test_euroeval_hand_worked_example_through_rank_models() -> None:
    """Ten seeds (one score each) are EuroEval's ten iterations."""
    rows = [
        {"model": model, "language": "da", "seed": i, "score": float(v)}
        for model, values in ITERATIONS.items()
        for i, v in enumerate(values)
    ]
    scores = replicates_from_frame(pd.DataFrame(rows))
    result = rank_models(
        scores, DrawSettings(n_draws=300), aggregators=("mean",), rank_method="2025"
    )
    got = result.summary.set_index("model")["euroeval_rank_score"]
    assert got.to_dict() == pytest.approx({"A": 1.0, "B": 1.0, "C": EXPECTED_C})


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_a=st.integers(2, 30),
    n_b=st.integers(2, 30),
    shift=st.floats(-3, 3),
    scale=st.floats(0.1, 10),
)
def test_welch_pvalue_matches_scipy(
    seed: int, n_a: int, n_b: int, shift: float, scale: float
) -> None:
    rng = np.random.default_rng(seed)
    a = rng.normal(shift, 1.0, n_a)
    b = rng.normal(0.0, scale, n_b)
    expected = sps.ttest_ind(a, b, equal_var=False, alternative="greater").pvalue
    got = welch_greater_pvalue(
        np.mean(a), np.std(a, ddof=1), n_a, np.mean(b), np.std(b, ddof=1), n_b
    )
    assert float(got) == pytest.approx(expected, rel=1e-9, abs=1e-14)


def test_welch_pvalue_vectorised_and_degenerate() -> None:
    rng = np.random.default_rng(4)
    samples = [(rng.normal(0.3, 1, 8), rng.normal(0, 2, 12)) for _ in range(20)]
    args = [
        np.array(x)
        for x in zip(
            *[
                (a.mean(), a.std(ddof=1), a.size, b.mean(), b.std(ddof=1), b.size)
                for a, b in samples
            ],
            strict=True,
        )
    ]
    expected = [
        sps.ttest_ind(a, b, equal_var=False, alternative="greater").pvalue for a, b in samples
    ]
    np.testing.assert_allclose(welch_greater_pvalue(*args), expected, rtol=1e-9)
    # identical iteration scores (SD 0): significant only if the means differ
    zero, ten = np.zeros(2), np.full(2, 10.0)
    p = welch_greater_pvalue(np.array([2.0, 1.0]), zero, ten, np.array([1.0, 1.0]), zero, ten)
    np.testing.assert_array_equal(p, [0.0, 1.0])


def reference_euroeval(iterations: dict[tuple[str, str, str], np.ndarray]) -> dict[str, float]:
    """EuroEval's rank score written out with scipy: per dataset, then tasks, then languages."""
    models = sorted({k[0] for k in iterations})
    cells = sorted({(k[1], k[2]) for k in iterations})
    per_cell: dict[tuple[str, str], dict[str, float]] = {}
    for task, language in cells:
        data = {m: iterations[(m, task, language)] for m in models}
        means = {m: float(np.mean(v)) for m, v in data.items()}
        spread = float(np.std(list(means.values())))
        order = sorted(models, key=lambda m: -means[m])
        reference, score, out = order[0], 1.0, {}
        for m in order:
            if m != reference:
                p = sps.ttest_ind(
                    data[reference], data[m], equal_var=False, alternative="greater"
                ).pvalue
                if p < 0.05:
                    score += (means[reference] - means[m]) / spread
                    reference = m
            out[m] = score
        per_cell[(task, language)] = out
    languages = sorted({lang for _, lang in cells})
    result = {}
    for m in models:
        by_language = [
            np.mean([per_cell[(t, lg)][m] for t, lg in cells if lg == lang]) for lang in languages
        ]
        result[m] = float(np.mean(by_language))
    return result


def test_euroeval_agrees_with_an_independent_implementation() -> None:
    """Random design: 2 tasks × 3 languages (one task lacks one), 10 seeds × 3 replicates."""
    rng = np.random.default_rng(5)
    models = ["m0", "m1", "m2", "m3", "m4"]
    cells = [("t1", "da"), ("t1", "sv"), ("t1", "no"), ("t2", "da"), ("t2", "sv")]
    rows, iterations = [], {}
    for m, model in enumerate(models):
        for task, language in cells:
            mu = 70 - 1.2 * m + rng.normal(0, 1)
            values = mu + rng.normal(0, rng.uniform(0.5, 3), size=(10, 3))
            iterations[(model, task, language)] = values[np.arange(10), np.arange(10) % 3]
            for s in range(10):
                for b in range(3):
                    rows.append(
                        {
                            "model": model,
                            "task": task,
                            "language": language,
                            "seed": s,
                            "replicate": b,
                            "score": values[s, b],
                        }
                    )
    scores = replicates_from_frame(pd.DataFrame(rows))
    result = rank_models(
        scores, DrawSettings(n_draws=200), aggregators=("mean",), rank_method="legacy-2025"
    )
    got = result.summary.set_index("model")["euroeval_rank_score"].to_dict()
    expected = reference_euroeval(iterations)
    assert got == pytest.approx(expected, rel=1e-10)
    assert len(set(np.round(list(expected.values()), 6))) > 2  # a non-trivial example


def test_euroeval_with_one_seed_uses_the_first_ten_replicates() -> None:
    rng = np.random.default_rng(6)
    values = rng.normal(0, 1, size=(3, 2, 1, 25)) + np.array([5.0, 4.0, 0.0])[:, None, None, None]
    scores = ReplicatedScores(
        ("a", "b", "c"), (Unit("t", "da"), Unit("t", "sv")), values, "replicates"
    )
    iterations = {
        (model, "t", lang): values[m, u, 0, :10]
        for m, model in enumerate(scores.models)
        for u, lang in enumerate(("da", "sv"))
    }
    result = rank_models(
        scores, DrawSettings(n_draws=200), aggregators=("mean",), rank_method="legacy-2025"
    )
    got = result.summary.set_index("model")["euroeval_rank_score"].to_dict()
    assert got == pytest.approx(reference_euroeval(iterations), rel=1e-10)


def test_windowed_distribution_holds_the_full_tables_numbers() -> None:
    """--distribution window: each model's ranks with a non-zero share, the same numbers
    as the full table (zeros outside the window); auto switches above 50 models."""
    from dataclasses import replace

    from glotbench.analysis.ranks import distribution_windows

    rng = np.random.default_rng(7)
    n_models = 60
    skill = np.linspace(0.5, 0.8, n_models)
    values = skill[:, None, None, None] + rng.normal(0, 0.01, (n_models, 4, 1, 30))
    source = ReplicatedScores(
        tuple(f"m{m:02d}" for m in range(n_models)),
        tuple(Unit("t", lang) for lang in ("a", "b", "c", "d")),
        values,
        "replicates",
        "accuracy",
    )
    result = rank_models(source, DrawSettings(n_draws=300), aggregators=("mean",))
    full = result.distribution
    windows = distribution_windows(full)
    columns = [c for c in full.columns if c.startswith("rank_")]
    widths = []
    for record, (_, row) in zip(windows, full.iterrows(), strict=True):
        shares = row[columns].to_numpy(float)
        rebuilt = np.zeros(n_models)
        start = record["first_rank"] - 1
        rebuilt[start : start + len(record["shares"])] = record["shares"]
        assert np.array_equal(rebuilt, shares) and record["shares"][0] > 0
        assert record["shares"][-1] > 0
        widths.append(len(record["shares"]))
    assert max(widths) < n_models / 2  # narrow: linear in models, not M × M
    assert result.to_dict()["distribution_format"] == "window"  # auto, 60 > 50 models
    assert replace(result, distribution_format="full").to_dict()["distribution"] == records(full)
    with pytest.raises(InputError, match="distribution must be one of"):
        replace(result, distribution_format="wide").to_dict()
