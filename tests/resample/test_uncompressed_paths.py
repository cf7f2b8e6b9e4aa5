"""Uncompressed and partially compressed resampling: exactness against scipy and closed forms.

The fast paths (gathering drawn rows in cache-sized slices, counting drawn
indices per heavy row) must not change the bootstrap distribution:
checked against ``scipy.stats.bootstrap``, the exact bootstrap SE of a mean
(sd(x, ddof=0)/√n), the counting path on the very same draws, and a
two-sample KS test against the plain example-level bootstrap.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps
from scipy.special import ndtri

import glotbench.resample.engine as engine
from glotbench.metrics import MeanMetric, get_metric
from glotbench.resample import bootstrap, replicate_scores
from glotbench.resample.weights import (
    HEAVY_MIN,
    _partial_support,
    block_rng,
    make_support,
    weight_block,
)

SQUAD = get_metric("squad_f1")


def squad_like(n: int, seed: int) -> np.ndarray:
    """45 % exact answers (1.0), 20 % no overlap (0.0), the rest Beta(2, 2)."""
    rng = np.random.default_rng(seed)
    u = rng.random(n)
    return np.where(u < 0.45, 1.0, np.where(u < 0.65, 0.0, rng.beta(2.0, 2.0, size=n)))


def test_point_masses_give_a_partial_support_that_rebuilds_the_data() -> None:
    values = squad_like(3000, seed=1)
    stats = MeanMetric.stats_from_values(values)
    support = make_support(stats, "auto")
    assert not support.compressed
    assert support.heavy == 2  # the point masses at 0 and 1
    assert sorted(support.rows[:2, 0]) == [0.0, 1.0]
    assert support.n == 3000
    assert support.light == 3000 - int(np.sum((values == 0) | (values == 1)))
    np.testing.assert_array_equal(support.rows[support.index], stats)
    # all distinct values: nothing is heavy, the plain example-level support
    plain = make_support(
        MeanMetric.stats_from_values(np.random.default_rng(2).random(3000)), "auto"
    )
    assert plain.heavy == 0 and plain.size == 3000
    # compress=False is always example level
    assert make_support(stats, False).heavy == 0


def test_partial_support_refuses_rows_that_only_share_a_projection() -> None:
    stats = np.column_stack([np.arange(200.0), np.ones(200)])
    keys = np.zeros(200)  # a (forced) collision: all rows under one key
    assert _partial_support(stats, keys) is None
    assert HEAVY_MIN <= 200


@pytest.mark.parametrize("values", ["squad", "continuous"])
def test_gather_path_equals_counting_path_on_the_same_draws(values: str) -> None:
    """The gathered sums are w @ S for the very W that multinomial_block counts."""
    x = squad_like(1500, 3) if values == "squad" else np.random.default_rng(3).random(1500)
    support = make_support(MeanMetric.stats_from_values(x), "auto")
    assert (support.heavy > 0) == (values == "squad")
    constant = np.array([False, True])
    for block in (0, 5):
        counted = weight_block("multinomial", 11, block, support, 100) @ support.rows
        gathered = engine.gathered_sums(block_rng(11, block), support, 100, constant)
        np.testing.assert_allclose(gathered, counted, rtol=1e-12)
        np.testing.assert_array_equal(gathered[:, 1], 1500.0)


def test_slice_size_chunks_and_workers_do_not_change_replicates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stats = MeanMetric.stats_from_values(squad_like(2000, seed=4))
    reference = replicate_scores(stats, SQUAD, n_resamples=900, seed=3)
    for elements in (1, 5000, 2**20):
        monkeypatch.setattr(engine, "GATHER_ELEMENTS", elements)
        for chunk, jobs in [(None, 1), (256, 2), (1, 1)]:
            again = replicate_scores(
                stats, SQUAD, n_resamples=900, seed=3, chunk_size=chunk, n_jobs=jobs
            )
            np.testing.assert_array_equal(again, reference)
    np.testing.assert_array_equal(
        replicate_scores(stats, SQUAD, n_resamples=300, seed=3), reference[:300]
    )


def test_partial_compression_keeps_the_bootstrap_distribution() -> None:
    stats = MeanMetric.stats_from_values(squad_like(1000, seed=5))
    partial = replicate_scores(stats, SQUAD, n_resamples=6000, seed=1)[:, 0]
    plain = replicate_scores(stats, SQUAD, n_resamples=6000, seed=2, compress=False)[:, 0]
    assert sps.ks_2samp(partial, plain).pvalue > 0.001
    # the exact bootstrap SE of a mean, within Monte Carlo error (relative SD 1/sqrt(2B))
    exact = stats[:, 0].std() / np.sqrt(1000)
    for reps in (partial, plain):
        assert abs(reps.std(ddof=1) / exact - 1) < 4 / np.sqrt(2 * 6000)
        # E*[mean of a resample] = sample mean: SD of the replicate mean is exact/sqrt(B)
        assert abs(reps.mean() - stats[:, 0].mean()) < 4 * exact / np.sqrt(6000)


@pytest.mark.slow
@pytest.mark.parametrize("values", ["squad", "continuous"])
def test_standard_error_and_percentile_interval_agree_with_scipy(values: str) -> None:
    n, B = 2000, 8000
    x = squad_like(n, 6) if values == "squad" else np.random.default_rng(6).beta(2.0, 2.0, n)
    ours = bootstrap(MeanMetric.stats_from_values(x), SQUAD, n_resamples=B, seed=0)
    theirs = sps.bootstrap(
        (x,),
        np.mean,
        n_resamples=B,
        vectorized=True,
        method="percentile",
        rng=np.random.default_rng(1),
    )
    se = float(theirs.standard_error)
    # difference of two independent SD estimates: SD ≈ se·sqrt(1/(2B) + 1/(2B))
    assert abs(ours.standard_error - se) < 4 * se * np.sqrt(1 / B)
    # an endpoint's Monte Carlo SD: se·sqrt(q(1−q)/B)/φ(z_q), times √2 for a difference
    q = 0.025
    endpoint_sd = np.sqrt(2) * se * np.sqrt(q * (1 - q) / B) / sps.norm.pdf(ndtri(q))
    assert abs(ours.confidence_interval.low - theirs.confidence_interval.low) < 4 * endpoint_sd
    assert abs(ours.confidence_interval.high - theirs.confidence_interval.high) < 4 * endpoint_sd


def test_paired_systems_share_the_partial_weights() -> None:
    x = squad_like(1200, seed=7)
    y = x.copy()
    y[:100] = 1.0
    stats = np.stack([MeanMetric.stats_from_values(v) for v in (x, x, y)])
    reps = replicate_scores(stats, SQUAD, n_resamples=500, seed=0)
    np.testing.assert_array_equal(reps[:, 0], reps[:, 1])
    assert (reps[:, 2] - reps[:, 0]).std() < reps[:, 0].std()


def test_wide_statistics_use_the_counting_path_with_partial_support() -> None:
    """BLEU-like wide rows (> GATHER_MAX_COLUMNS): W @ S over heavy + light rows."""
    rng = np.random.default_rng(8)
    x = squad_like(800, seed=8)
    wide = np.column_stack([x, x**2, rng.random(800) * (x > 0), x * 3, np.ones(800)])
    support = make_support(wide, "auto")
    assert support.heavy >= 1 and wide.shape[1] > engine.GATHER_MAX_COLUMNS

    def first_column_mean(summed: np.ndarray) -> np.ndarray:
        return summed[..., 0] / summed[..., 4]

    reps = replicate_scores(wide, first_column_mean, n_resamples=4000, seed=2)[:, 0]
    exact = x.std() / np.sqrt(800)
    assert abs(reps.std(ddof=1) / exact - 1) < 4 / np.sqrt(2 * 4000)


def test_poisson_scheme_on_a_partial_support_matches_the_closed_form() -> None:
    """Heavy rows get Poisson(c_j) weights: the SE of the mean is still sd/√n (ratio estimator)."""
    stats = MeanMetric.stats_from_values(squad_like(1500, seed=9))
    assert make_support(stats, "auto").heavy == 2
    reps = replicate_scores(stats, SQUAD, n_resamples=5000, seed=4, scheme="poisson")[:, 0]
    exact = stats[:, 0].std() / np.sqrt(1500)
    # delta method: a Poisson-weighted mean has the multinomial SE to first order (1/n terms)
    assert abs(reps.std(ddof=1) / exact - 1) < 4 / np.sqrt(2 * 5000) + 0.01
