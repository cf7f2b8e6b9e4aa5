"""Rank counts and rank intervals in linear memory, against brute force, scipy and known truth."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import scipy.stats as sps

from glotbench.analysis.draws import DrawSettings
from glotbench.analysis.rank_stats import (
    count_true,
    draw_ranks,
    head_draws,
    pair_decisions,
    rank_counts,
    rank_intervals,
    rank_statistics,
)
from glotbench.analysis.ranks import rank_models
from glotbench.analysis.variance import components_from_summary

from .conftest import replicated, simulate


def brute_force_intervals(aggregates: np.ndarray, confidence_level: float) -> tuple:
    """The definition written out on the full (R × M × M) array of pairwise differences."""
    alpha = (1 - confidence_level) / 2
    diff = aggregates[:, None, :] - aggregates[:, :, None]  # [r, i, j] = X_j − X_i
    low = np.quantile(diff, alpha, axis=0)
    high = np.quantile(diff, 1 - alpha, axis=0)
    n_models = aggregates.shape[1]
    return 1 + (low > 0).sum(axis=1), n_models - (high < 0).sum(axis=1)


def _random_draws(rng: np.random.Generator) -> np.ndarray:
    """Draws with clusters of close models, copies, constant models and ties."""
    n_models = int(rng.integers(2, 14))
    n_draws = int(rng.choice([20, 101, 400, 1000]))
    means = rng.choice([0.0, 0.3, 1.0, 1.05, 3.0], size=n_models)
    sd = rng.choice([0.01, 0.2, 1.0], size=n_models)
    shared = rng.normal(0, 1, (n_draws, 1)) * rng.uniform(0, 1)  # paired (correlated) draws
    draws = means + shared + rng.normal(0, 1, (n_draws, n_models)) * sd
    if rng.random() < 0.5:
        draws = np.round(draws, 1)  # discrete values: many ties and zero differences
    if n_models > 2 and rng.random() < 0.3:
        draws[:, 1] = draws[:, 0]  # a copy
    if n_models > 3 and rng.random() < 0.3:
        draws[:, 2] = 0.5  # a model without noise
    return draws


@pytest.mark.parametrize("confidence_level", [0.5, 0.9, 0.95, 0.99])
def test_rank_intervals_equal_the_brute_force_definition(confidence_level: float) -> None:
    rng = np.random.default_rng(int(confidence_level * 100))
    for _ in range(60):
        draws = _random_draws(rng)
        expected = brute_force_intervals(draws, confidence_level)
        for chunk in (1 << 23, 37):  # one chunk, and many tiny chunks of pairs
            best, worst = rank_intervals(draws, confidence_level, chunk_elements=chunk)
            np.testing.assert_array_equal(best, expected[0])
            np.testing.assert_array_equal(worst, expected[1])


def brute_force_ties(aggregates: np.ndarray, confidence_level: float) -> set[tuple[int, int]]:
    """Pairs a < b where neither lower numpy percentile, of X_a − X_b or X_b − X_a, is > 0."""
    alpha = (1 - confidence_level) / 2
    n_models = aggregates.shape[1]
    out = set()
    for a in range(n_models):
        for b in range(a + 1, n_models):
            a_better = np.quantile(aggregates[:, a] - aggregates[:, b], alpha) > 0
            b_better = np.quantile(aggregates[:, b] - aggregates[:, a], alpha) > 0
            if not a_better and not b_better:
                out.add((a, b))
    return out


@pytest.mark.parametrize("confidence_level", [0.5, 0.95, 0.99])
def test_ties_equal_the_percentile_definition(confidence_level: float) -> None:
    """Statistical ties (the leaderboard's ≈) against every pair's numpy percentile interval."""
    rng = np.random.default_rng(7 + int(confidence_level * 100))
    n_tied = 0
    for _ in range(40):
        draws = _random_draws(rng)
        expected = brute_force_ties(draws, confidence_level)
        n_tied += len(expected)
        for chunk in (1 << 23, 37):
            _, _, ties = pair_decisions(draws, confidence_level, chunk_elements=chunk)
            assert {tuple(p) for p in ties.tolist()} == expected
        stats = rank_statistics(draws, confidence_level)
        for a, b in expected:
            assert stats.is_tied(a, b) and stats.is_tied(b, a)
            assert b in stats.tied_with()[a] and a in stats.tied_with()[b]
    assert n_tied > 0


def test_rank_intervals_boundary_cases_take_the_exact_percentile() -> None:
    """Differences whose percentile sits right at 0: counts alone cannot decide."""
    n_draws = 1000
    k = int(np.floor((n_draws - 1) * 0.025))
    for n_nonpositive in range(k - 3, k + 5):
        diff = np.ones(n_draws)
        diff[:n_nonpositive] = np.linspace(-1, 0, n_nonpositive)  # ends exactly at 0
        draws = np.column_stack([np.zeros(n_draws), diff])
        np.testing.assert_array_equal(
            rank_intervals(draws, 0.95), brute_force_intervals(draws, 0.95)
        )


def test_draw_ranks_are_scipy_min_ranks_and_counts_are_their_histogram() -> None:
    rng = np.random.default_rng(1)
    draws = np.round(rng.normal(0, 1, (500, 9)), 1)  # ties
    draws[:, 4] = draws[:, 3]
    expected = sps.rankdata(-draws, method="min", axis=1)
    np.testing.assert_array_equal(draw_ranks(draws), expected)
    np.testing.assert_array_equal(draw_ranks(draws, chunk_elements=20), expected)
    counts = rank_counts(draws, chunk_elements=50)
    for m in range(9):
        np.testing.assert_array_equal(counts[m], np.bincount(expected[:, m] - 1, minlength=9))
    stats = rank_statistics(draws, 0.95)
    np.testing.assert_allclose(stats.mean_rank, expected.mean(axis=0), rtol=0, atol=1e-12)
    np.testing.assert_allclose(stats.shares.sum(axis=1), 100.0, rtol=1e-12)


def test_draws_with_and_without_ties_in_one_chunk_are_scipy_min_ranks() -> None:
    """Rows without equal values take their positions as ranks, rows with them the
    scan of runs; a chunk holding both gets each right."""
    rng = np.random.default_rng(5)
    draws = rng.normal(0, 1, (60, 30))
    draws[::4, 2] = draws[::4, 9]  # a tie in every fourth draw
    draws[1::7] = np.round(draws[1::7], 0)  # many ties in others
    expected = sps.rankdata(-draws, method="min", axis=1)
    for chunk_elements in (30 * 60, 30 * 5, 30):
        np.testing.assert_array_equal(draw_ranks(draws, chunk_elements=chunk_elements), expected)
        counts = rank_counts(draws, chunk_elements=chunk_elements)
        for m in range(30):
            np.testing.assert_array_equal(counts[m], np.bincount(expected[:, m] - 1, minlength=30))


def test_shares_outside_a_window_are_the_draws_ranked_before_and_after_it() -> None:
    """Against the definition on scipy's ranks: the percent of draws in which model m ranks
    better than first[m] + 1, and worse than last[m] + 1."""
    rng = np.random.default_rng(4)
    draws = np.round(rng.normal(np.linspace(0, 1, 8), 0.5, (300, 8)), 1)
    ranks = sps.rankdata(-draws, method="min", axis=1)  # R × M
    stats = rank_statistics(draws, 0.95)
    first, last = rng.integers(0, 4, 8), rng.integers(4, 8, 8)
    below, above = stats.shares_outside(first, last)
    np.testing.assert_allclose(below, (ranks < first + 1).mean(axis=0) * 100, rtol=1e-12)
    np.testing.assert_allclose(above, (ranks > last + 1).mean(axis=0) * 100, rtol=1e-12)
    assert stats.share(150) == 50.0 and stats.share(3) == 1.0
    np.testing.assert_array_equal(stats.share(stats.counts), stats.shares)


@pytest.mark.parametrize("confidence_level", [0.9, 0.95])
def test_rank_intervals_with_more_draws_than_the_head_equal_the_brute_force_definition(
    confidence_level: float,
) -> None:
    """R = 3,000 draws: pairs are first compared on the head (1,024 draws) and only the
    undecided directions on the rest; the intervals and ties still equal the definition."""
    rng = np.random.default_rng(11)
    means = np.repeat(np.linspace(0, 1, 8), 2) + rng.normal(0, 0.02, 16)
    shared = rng.normal(0, 0.3, (3000, 1))
    draws = np.round(means + shared + rng.normal(0, 0.15, (3000, 16)), 2)  # ties too
    assert head_draws(3000, int(np.floor(2999 * (1 - confidence_level) / 2)) + 3) < 3000
    best, worst = rank_intervals(draws, confidence_level)
    expected_best, expected_worst = brute_force_intervals(draws, confidence_level)
    np.testing.assert_array_equal(best, expected_best)
    np.testing.assert_array_equal(worst, expected_worst)
    alpha = (1 - confidence_level) / 2
    diff = draws[:, None, :] - draws[:, :, None]  # [r, a, b] = X_b − X_a
    tied = (np.quantile(diff, alpha, axis=0) <= 0) & (np.quantile(-diff, alpha, axis=0) <= 0)
    expected_ties = np.argwhere(np.triu(tied, 1))
    _, _, ties = pair_decisions(draws, confidence_level)
    np.testing.assert_array_equal(ties[np.lexsort(ties.T[::-1])], expected_ties)


def test_ranks_of_many_tied_models_are_scipy_min_ranks() -> None:
    """Hundreds of models with ties (numpy's quicksort reorders equal values): min ranks;
    a model with NaN draws keeps the ranks of the stable sort (NaN last, in model order)."""
    rng = np.random.default_rng(2)
    draws = np.round(rng.normal(0, 1, (300, 400)), 1)
    expected = sps.rankdata(-draws, method="min", axis=1)
    np.testing.assert_array_equal(draw_ranks(draws), expected)
    draws[::3, 7] = np.nan
    ranks = draw_ranks(draws)
    finite = ~np.isnan(draws[:, 7])
    np.testing.assert_array_equal(ranks[finite], expected[finite])
    # rows with a NaN: the finite models' min ranks among themselves, the NaN model last
    nan_rows = np.flatnonzero(~finite)
    others = np.delete(draws[nan_rows], 7, axis=1)
    np.testing.assert_array_equal(
        np.delete(ranks[nan_rows], 7, axis=1), sps.rankdata(-others, method="min", axis=1)
    )
    np.testing.assert_array_equal(ranks[nan_rows, 7], 400)


def test_known_truth_clusters_of_equal_models() -> None:
    """True means 10, 10 | 5, 5, 5 | 0 with independent noise (SD 0.1): within a cluster
    no model is significantly better, across clusters every one is."""
    truth = np.array([10.0, 10.0, 5.0, 5.0, 5.0, 0.0])
    draws = truth + np.random.default_rng(2).normal(0, 0.1, (4000, 6))
    best, worst = rank_intervals(draws, 0.95)
    assert list(best) == [1, 1, 3, 3, 3, 6]
    assert list(worst) == [2, 2, 5, 5, 5, 6]


def test_known_truth_rank_shares_of_two_models() -> None:
    """X_0 ~ N(δ, 1), X_1 ~ N(0, 1) independent: P(model 0 ranks first) = Φ(δ/√2)."""
    delta, n_draws = 0.5, 20_000
    rng = np.random.default_rng(3)
    draws = np.column_stack([rng.normal(delta, 1, n_draws), rng.normal(0, 1, n_draws)])
    share = rank_statistics(draws, 0.95).shares[0, 0] / 100
    expected = sps.norm.cdf(delta / np.sqrt(2))
    assert share == pytest.approx(expected, abs=4 * np.sqrt(expected * (1 - expected) / n_draws))


def test_rank_intervals_memory_is_linear_in_models() -> None:
    """300 models × 2,000 draws: the (R × M × M) array would be 1.4 GB; chunks stay small."""
    rng = np.random.default_rng(4)
    draws = np.linspace(0, 3, 300) + rng.normal(0, 0.2, (2000, 300))
    tracemalloc.start()
    try:
        rank_intervals(draws, 0.95)
        rank_counts(draws)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 200 * 2**20, peak  # one chunk of 2^23 differences is 64 MiB


def test_rank_models_geometric_mean_matches_scipy_gmean_on_the_draws() -> None:
    """Rank distribution of the geometric mean = ranks of scipy.stats.gmean of each draw."""
    frame_rows = []
    rng = np.random.default_rng(5)
    for m, level in enumerate([60.0, 59.0, 50.0]):
        for lang in range(4):
            frame_rows.append(
                {
                    "model": f"m{m}",
                    "language": f"l{lang}",
                    "score": level + rng.normal(0, 5),
                    "sigma_w": 2.0,
                }
            )
    import pandas as pd

    table = components_from_summary(pd.DataFrame(frame_rows))
    settings = DrawSettings(scheme="parametric", n_draws=800, seed=1)
    result = rank_models(table, settings, aggregators=("geometric_mean",))
    from glotbench.analysis.draws import prepare_draws

    design = prepare_draws(table, settings)
    gmeans = sps.gmean(design.draws, axis=2)  # (R, M)
    ranks = sps.rankdata(-gmeans, method="min", axis=1)
    distribution = result.distribution.set_index("model")
    for m, model in enumerate(table.models):
        for r in range(1, 4):
            assert distribution.loc[model, f"rank_{r}"] == pytest.approx(
                100 * np.mean(ranks[:, m] == r), abs=1e-10
            )
    best, worst = brute_force_intervals(gmeans, 0.95)
    summary = result.summary.set_index("model")
    assert list(summary["rank_best"]) == list(best)
    assert list(summary["rank_worst"]) == list(worst)


def test_rank_models_with_zero_scores_keeps_the_geometric_mean() -> None:
    """A zero score makes the geometric mean 0 (scipy.stats.gmean), not an error."""
    values = simulate(
        np.random.default_rng(6),
        [0.6, 0.5],
        tau=0.05,
        sigma_seed=0.01,
        sigma_boot=0.01,
        n_languages=3,
        n_seeds=2,
        n_reps=5,
    )
    values[1, 0] = 0.0  # model m1 scores 0 in one language, on every seed and replicate
    result = rank_models(replicated(values), DrawSettings(n_draws=300))
    assert "geometric_mean" in set(result.summary["aggregator"])
    summary = result.summary.set_index(["aggregator", "model"])
    assert summary.loc[("geometric_mean", "m0"), "rank_best"] == 1
    assert summary.loc[("geometric_mean", "m1"), "mean_rank"] == 2.0
    assert not any("geometric" in note for note in result.notes)


@pytest.mark.parametrize("width", [0, 1, 63, 64, 65, 1000, 1024, 1031, 8976])
def test_count_true_counts_the_true_values_of_each_row(width: int) -> None:
    rng = np.random.default_rng(width)
    for rows, share in ((0, 0.5), (7, 0.5), (40, 0.01), (5, 1.0)):
        mask = rng.random((rows, width)) < share
        got = count_true(mask)
        assert got.dtype == np.int32 and got.shape == (rows,)
        assert got.tolist() == [int(np.count_nonzero(row)) for row in mask]
