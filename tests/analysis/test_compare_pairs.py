"""Pairwise comparisons without a loop over pairs: covariance SDs, chunked percentiles,
summaries, the geometric mean; all against brute force written out pair by pair."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.stats as sps

from glotbench import api
from glotbench.analysis.compare import compare_models
from glotbench.analysis.draws import DrawSettings, aggregate, prepare_draws
from glotbench.analysis.pairs import (
    CrossProducts,
    _normal_cuts,
    _tail_ranks,
    _threshold,
    difference_sd,
    draw_covariance,
    pair_indices,
    pair_quantiles,
)

from .conftest import replicated, simulate


def _draws(rng: np.random.Generator, n_draws: int = 700, n_models: int = 7) -> np.ndarray:
    shared = rng.normal(0, 1, (n_draws, 1))
    draws = rng.normal(0, 1, (n_draws, n_models)) * rng.uniform(0.1, 2, n_models) + shared
    draws[:, 1] = draws[:, 0]  # a copy: the difference is constant (0)
    draws[:, 2] = draws[:, 0] + 0.25  # a shifted copy: constant difference 0.25
    draws[:, 3] = 0.7  # no noise at all
    return draws


def test_difference_sd_from_the_covariance_matrix_equals_the_sd_of_differences() -> None:
    draws = _draws(np.random.default_rng(0))
    a, b = pair_indices(draws.shape[1])
    expected = np.array(
        [np.std(draws[:, i] - draws[:, j], ddof=1) for i, j in zip(a, b, strict=True)]
    )
    got = difference_sd(draws, a, b)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-13)
    constant = {(0, 1), (0, 2), (1, 2)}
    for p, (i, j) in enumerate(zip(a, b, strict=True)):
        if (i, j) in constant:
            assert got[p] == 0.0  # exactly, not ~1e-16
    assert got[(a == 3) & (b == 4)][0] == pytest.approx(np.std(draws[:, 4], ddof=1))


def test_cross_products_per_unit_equal_the_sd_of_differences_block_by_block() -> None:
    rng = np.random.default_rng(1)
    units = np.stack([_draws(rng, n_draws=600) + 50 * u for u in range(3)], axis=2)  # (R, M, U)
    products = CrossProducts()
    for start in range(0, 600, 256):  # blocks as the draws arrive
        products.add(units[start : start + 256])
    a, b = pair_indices(units.shape[1])
    got = products.difference_sd(a, b)  # (pairs, U)
    expected = np.std(units[:, a, :] - units[:, b, :], axis=0, ddof=1)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
    assert (got[(a == 0) & (b == 1)] == 0).all() and (got[(a == 0) & (b == 2)] == 0).all()


def test_pair_quantiles_and_shares_equal_numpy_pair_by_pair() -> None:
    rng = np.random.default_rng(2)
    draws = np.round(_draws(rng, n_draws=999), 2)  # ties
    a, b = pair_indices(draws.shape[1])
    shuffled = rng.permutation(len(a))  # not grouped by first model as well
    for pa, pb in ((a, b), (a[shuffled], b[shuffled]), (b, a)):
        for chunk in (1 << 23, 999 * 2 + 5):
            low, high, share = pair_quantiles(draws, pa, pb, (0.05, 0.95), chunk_elements=chunk)
            for p, (i, j) in enumerate(zip(pa, pb, strict=True)):
                d = draws[:, i] - draws[:, j]
                assert (low[p], high[p]) == tuple(np.quantile(d, [0.05, 0.95]))
                assert share[p] == (d > 0).mean()


def test_pair_quantiles_selected_from_the_tails_equal_numpy_float_for_float() -> None:
    """R >= 4,096 draws take the tail selection; ties, heavy tails, constant and
    non-exchangeable (sorted) columns, NaN and several levels all give numpy's floats."""
    rng = np.random.default_rng(5)
    n_draws = 5000
    draws = _draws(rng, n_draws=n_draws, n_models=9)
    draws[:, 4] = np.round(draws[:, 4], 1)  # many ties
    draws[:, 5] = rng.standard_cauchy(n_draws)  # heavy tails
    draws[:, 6] = np.sort(draws[:, 6])  # the first draws are not a sample of the rest
    draws[:, 7] = rng.integers(0, 2, n_draws)  # two values only
    a, b = pair_indices(draws.shape[1])
    for level in ((0.025, 0.975), (0.05, 0.95), (0.005, 0.995), (0.3, 0.7)):
        for chunk in (1 << 18, n_draws * 3):
            low, high, share = pair_quantiles(draws, a, b, level, chunk_elements=chunk)
            diff = draws[:, a] - draws[:, b]
            expected = np.quantile(diff, level, axis=0)
            assert np.array_equal(low, expected[0]) and np.array_equal(high, expected[1])
            assert np.array_equal(share, (diff > 0).mean(axis=0))
    with_nan = draws.copy()
    with_nan[10, 8] = np.nan
    low, high, _ = pair_quantiles(with_nan, a, b, (0.025, 0.975))
    expected = np.quantile(with_nan[:, a] - with_nan[:, b], (0.025, 0.975), axis=0)
    assert np.array_equal(low, expected[0], equal_nan=True)
    assert np.array_equal(high, expected[1], equal_nan=True)
    assert np.isnan(low[(a == 8) | (b == 8)]).all()


def test_pair_quantiles_cut_by_a_normal_guess_fall_back_where_it_fails() -> None:
    """The tails are first cut where a normal distribution with each difference's mean and
    SD would put ~5 % of the draws: right for a normal difference, short for a bimodal one
    (lighter tails: cut then by a sample of its draws), and never right for a two-valued
    one (ties: numpy's partition); each gives numpy's floats."""
    rng = np.random.default_rng(8)
    n_draws = 10_000
    draws = np.zeros((n_draws, 4))
    draws[:, 1] = rng.normal(0, 1, n_draws)  # 0 - 1: normal
    draws[:, 2] = rng.choice([-1.0, 1.0], n_draws) + rng.normal(0, 0.1, n_draws)  # 0 - 2: bimodal
    draws[:, 3] = rng.integers(0, 2, n_draws)  # 0 - 3: two values
    a, b = np.zeros(3, dtype=np.intp), np.arange(1, 4)
    diff = draws[:, a] - draws[:, b]  # (R, pairs)
    rows = np.ascontiguousarray(diff.T)
    level = (0.025, 0.975)
    need = (250, 251)  # numpy's order statistics 249, 250 and 9748, 9749 of 10,000
    sd = difference_sd(draws, a, b)
    cuts = _normal_cuts(rows.mean(axis=1), sd, n_draws, need)
    assert cuts is not None
    _, ok, n_low = _tail_ranks(rows, cuts, (249, 250, 9748, 9749), need)
    assert ok.tolist() == [True, False, False]
    assert n_low[1] < need[0]  # the bimodal's tail beyond the normal cut is too short
    sample = rows[:, :2048]
    by_sample = (_threshold(sample, n_draws, 250, False), _threshold(sample, n_draws, 251, True))
    _, ok, _ = _tail_ranks(rows, by_sample, (249, 250, 9748, 9749), need)  # type: ignore[arg-type]
    assert ok.tolist() == [True, True, False]
    low, high, share = pair_quantiles(draws, a, b, level, cov=draw_covariance(draws))
    expected = np.quantile(diff, level, axis=0)
    assert np.array_equal(low, expected[0]) and np.array_equal(high, expected[1])
    assert np.array_equal(share, (diff > 0).mean(axis=0))


def reference_compare(source, settings, aggregators, confidence_level=0.95):  # type: ignore[no-untyped-def]
    """The comparison written out pair by pair and language by language (the former code)."""
    design = prepare_draws(source, settings)
    draws = design.draws
    alpha = (1 - confidence_level) / 2
    models = design.table.models
    rows = []
    for aggregator in aggregators:
        observed, replicated_ = design.aggregate(aggregator)
        for i in range(len(models)):
            for j in range(i + 1, len(models)):
                d = replicated_[:, i] - replicated_[:, j]
                sd = 0.0 if d.max() == d.min() else d.std(ddof=1)
                low, high = np.quantile(d, [alpha, 1 - alpha])
                rows.append(
                    (
                        aggregator,
                        models[i],
                        models[j],
                        observed[i] - observed[j],
                        sd,
                        low,
                        high,
                        (d > 0).mean(),
                    )
                )
    language_rows = []
    for i in range(len(models)):
        for j in range(i + 1, len(models)):
            d = draws[:, i, :] - draws[:, j, :]
            sd = np.where(d.max(axis=0) == d.min(axis=0), 0.0, d.std(axis=0, ddof=1))
            for u, label in enumerate(design.labels):
                diff = design.observed[i, u] - design.observed[j, u]
                language_rows.append((models[i], models[j], label, diff, sd[u]))
    return rows, language_rows


@pytest.mark.parametrize("languages", ["none", "with"])
def test_compare_models_equals_the_pair_by_pair_reference(languages: str) -> None:
    values = simulate(
        np.random.default_rng(3),
        [70.0, 70.0, 69.0, 72.0, 60.0],
        tau=3,
        sigma_seed=0.5,
        sigma_boot=0.8,
        n_languages=6,
        n_seeds=3,
        n_reps=20,
    )
    values[1] = values[0]  # a copy
    scores = replicated(values)
    settings = DrawSettings(n_draws=900, seed=2, languages=languages)  # type: ignore[arg-type]
    aggregators = ("mean", "geometric_mean", "median")
    result = compare_models(scores, settings, aggregators=aggregators, confidence_level=0.9)
    rows, language_rows = reference_compare(scores, settings, aggregators, 0.9)
    frame = result.aggregates
    assert len(frame) == len(rows) == 3 * 10
    for (agg, ma, mb, diff, sd, low, high, share), (_, row) in zip(
        rows, frame.iterrows(), strict=True
    ):
        assert (row["aggregator"], row["model_a"], row["model_b"]) == (agg, ma, mb)
        assert row["difference"] == diff
        assert row["sd"] == pytest.approx(sd, rel=1e-10, abs=1e-12)
        assert (row["ci_low"], row["ci_high"], row["share_a_better"]) == (low, high, share)
    per_language = result.per_language
    assert per_language is not None and len(per_language) == len(language_rows)
    for (ma, mb, label, diff, sd), (_, row) in zip(
        language_rows, per_language.iterrows(), strict=True
    ):
        assert (row["model_a"], row["model_b"], row["language"]) == (ma, mb, label)
        assert row["difference"] == diff
        assert row["sd"] == pytest.approx(sd, rel=1e-9, abs=1e-12)
    copy = per_language[(per_language["model_a"] == "m0") & (per_language["model_b"] == "m1")]
    assert (copy["sd"] == 0).all() and (copy["effect_size"] == 0).all()


def test_summaries_condense_the_per_language_table() -> None:
    values = simulate(
        np.random.default_rng(4),
        [75.0, 70.0, 70.2, 50.0],
        tau=3,
        sigma_seed=0.5,
        sigma_boot=0.8,
        n_languages=8,
        n_seeds=3,
        n_reps=20,
    )
    scores = replicated(values)
    settings = DrawSettings(n_draws=600)
    full = compare_models(scores, settings)
    table = full.per_language
    assert table is not None
    summary = full.language_summary.set_index("language")
    for label, group in table.groupby("language"):
        assert summary.loc[label, "n_pairs"] == len(group) == 6
        assert summary.loc[label, "n_flagged"] == group["flagged"].sum()
        assert summary.loc[label, "median_sd"] == pytest.approx(group["sd"].median())
        assert summary.loc[label, "median_abs_difference"] == pytest.approx(
            group["difference"].abs().median()
        )
    pairs = full.pair_summary.set_index(["model_a", "model_b"])
    for (ma, mb), group in table.groupby(["model_a", "model_b"]):
        flagged = group[group["flagged"]]
        assert pairs.loc[(ma, mb), "n_flagged_a_better"] == (flagged["difference"] > 0).sum()
        assert pairs.loc[(ma, mb), "n_flagged_b_better"] == (flagged["difference"] < 0).sum()
        assert pairs.loc[(ma, mb), "n_languages"] == 8
    assert pairs.loc[("m0", "m3"), "n_flagged_a_better"] == 8  # 25 points apart everywhere
    brief = compare_models(scores, settings, per_language=False)
    assert brief.per_language is None and "per_language" not in brief.to_dict()
    pd.testing.assert_frame_equal(brief.aggregates, full.aggregates)
    pd.testing.assert_frame_equal(brief.language_summary, full.language_summary)
    pd.testing.assert_frame_equal(brief.pair_summary, full.pair_summary)


def test_geometric_mean_comparison_matches_scipy_gmean_on_the_draws() -> None:
    """Draws of the geometric mean over resampled languages = scipy.stats.gmean of them."""
    values = simulate(
        np.random.default_rng(5),
        [0.8, 0.75, 0.5],
        tau=0.1,
        sigma_seed=0.02,
        sigma_boot=0.03,
        n_languages=5,
        n_seeds=2,
        n_reps=10,
    )
    values[2, 4] = 0.0  # model m2 scores 0 in one language: its geometric mean is then 0
    scores = replicated(values)
    settings = DrawSettings(n_draws=500, seed=7, languages="with")
    result = compare_models(scores, settings, aggregators=("geometric_mean",))
    design = prepare_draws(scores, settings)
    assert design.languages is not None
    picks = design.languages[0]  # (R, k)
    picked = np.take_along_axis(design.draws, picks[:, None, :], axis=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # log(0) in scipy
        gmeans = sps.gmean(picked, axis=2)  # (R, M)
        observed = sps.gmean(design.observed, axis=1)
    assert (gmeans[:, 2] == 0).any() and (gmeans[:, 2] > 0).any()
    for _, row in result.aggregates.iterrows():
        i, j = int(row["model_a"][1]), int(row["model_b"][1])
        d = gmeans[:, i] - gmeans[:, j]
        assert row["difference"] == pytest.approx(observed[i] - observed[j], rel=1e-12)
        assert row["sd"] == pytest.approx(d.std(ddof=1), rel=1e-9)
        assert row["ci_low"] == pytest.approx(np.quantile(d, 0.025), rel=1e-12, abs=1e-15)
        assert row["ci_high"] == pytest.approx(np.quantile(d, 0.975), rel=1e-12, abs=1e-15)
        assert row["share_a_better"] == pytest.approx((d > 0).mean(), abs=1e-12)
    assert not any("geometric" in note for note in result.notes)
    # zero is allowed; a negative score is not, and only the geometric mean is left out
    values[2, 4] = -0.1
    negative = compare_models(replicated(values), settings)
    assert set(negative.aggregates["aggregator"]) == {"mean", "median"}
    assert any("geometric mean needs positive scores" in n for n in negative.notes)
    with np.errstate(divide="ignore"):
        assert aggregate(np.array([[0.0, 4.0], [1.0, 4.0]]), "geometric_mean")[1] == 2.0


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_api_writes_the_full_pair_table(tmp_path: Path, suffix: str) -> None:
    values = simulate(
        np.random.default_rng(6),
        [70.0, 69.0, 60.0],
        tau=3,
        sigma_seed=0.5,
        sigma_boot=0.8,
        n_languages=4,
        n_seeds=2,
        n_reps=10,
    )
    scores = replicated(values)
    settings = DrawSettings(n_draws=300)
    path = tmp_path / f"pairs{suffix}"
    result = api.analyze_compare(scores, settings, pairs_out=path)
    assert result.per_language is None  # written, not kept
    written = pd.read_parquet(path) if suffix == ".parquet" else pd.read_csv(path)
    expected = compare_models(scores, settings).per_language
    assert expected is not None and len(written) == 3 * 4
    pd.testing.assert_frame_equal(written, expected, check_dtype=False)
    assert api.analyze_compare(scores, settings, per_language=True).per_language is not None


def test_name_columns_of_the_pair_table_equal_the_names_indexed_one_by_one() -> None:
    """The per-language table's model and language columns are built in Arrow from codes
    where pandas would store the names as Arrow strings: the same values and dtype as
    indexing the names row by row, for any names (Unicode, commas, numbers, mixed)."""
    from glotbench.analysis.compare import _names_column

    codes = np.array([2, 0, 1, 1, 2, 0])
    for names in (["xlmr", "mBERT-ü", "m,odel"], ["模型", "b", "c"], [1, 2, 3], ["a", 2, None]):
        names = np.asarray(names, dtype=object)
        expected = pd.Series(names[codes])
        pd.testing.assert_series_equal(pd.Series(_names_column(names, codes)), expected)


def test_pair_quantiles_equal_numpy_on_hostile_draws() -> None:
    """Seeded cases where a normal guess is wrong: heavy tails (Cauchy), ties at the cut
    (three values), constant and almost constant differences, far outliers, a covariance
    off by 10^±4, the extreme quantiles 0 and 1. Reference: numpy.quantile, float for float."""
    rng = np.random.default_rng(20261127)
    levels = [0.0, 0.001, 0.025, 0.5, 0.975, 0.999, 1.0]
    for case in range(36):
        n_draws, n_models = int(rng.choice([4096, 6000])), int(rng.integers(2, 5))
        kind = case % 6
        if kind == 0:
            draws = rng.standard_cauchy(size=(n_draws, n_models))
        elif kind == 1:
            draws = rng.integers(0, 3, size=(n_draws, n_models)).astype(float)
        elif kind == 2:
            draws = np.repeat(rng.normal(size=(1, n_models)), n_draws, axis=0)
        elif kind == 3:
            draws = rng.normal(size=(n_draws, n_models))
            draws[rng.integers(n_draws, size=20)] *= 1e6
        elif kind == 4:
            draws = rng.normal(size=(n_draws, n_models))
            draws[:, 1] = draws[:, 0] + rng.choice([0.0, 1e-9], size=n_draws)
        else:
            draws = 1e12 + rng.integers(0, 2, size=(n_draws, n_models)).astype(float)
        low_q, high_q = sorted(rng.choice(levels, 2, replace=False))
        a, b = pair_indices(n_models)
        cov = draw_covariance(draws) * rng.choice([1e-4, 1.0, 1e4])
        low, high, _ = pair_quantiles(draws, a, b, (low_q, high_q), cov=cov)
        reference = np.quantile(draws[:, a] - draws[:, b], (low_q, high_q), axis=0)
        np.testing.assert_array_equal(low, reference[0], err_msg=f"case {case}")
        np.testing.assert_array_equal(high, reference[1], err_msg=f"case {case}")
