"""The resampling engine against closed forms, scipy and simulation with known truth."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

import glotbench
from glotbench.metrics import get_metric
from glotbench.resample import (
    StreamingBootstrap,
    bootstrap,
    jackknife_scores,
    mask_scores,
    replicate_scores,
    subsample_masks,
)
from glotbench.resample.intervals import acceleration, bias_correction
from glotbench.resample.weights import make_support

ACC = get_metric("accuracy")


def binary_stats(n: int, p: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return ACC.stats_from_values(rng.random(n) < p)


@pytest.mark.parametrize("compress", [True, False])
def test_accuracy_standard_error_matches_binomial_closed_form(compress: bool) -> None:
    n, B = 4000, 4000
    S = binary_stats(n, 0.73, seed=1)
    res = bootstrap(S, ACC, n_resamples=B, compress=compress, seed=5)
    p = res.score
    closed_form = np.sqrt(p * (1 - p) / n)
    # SD estimated from B replicates has relative Monte Carlo error ~ 1/sqrt(2B).
    assert abs(res.standard_error / closed_form - 1) < 4 / np.sqrt(2 * B)
    assert res.confidence_interval.low < p < res.confidence_interval.high


def test_poisson_scheme_matches_binomial_closed_form() -> None:
    S = binary_stats(3000, 0.4, seed=2)
    res = bootstrap(S, ACC, n_resamples=4000, scheme="poisson", seed=1)
    closed_form = np.sqrt(0.4 * 0.6 / 3000)
    assert abs(res.standard_error / closed_form - 1) < 0.08


def test_replicates_do_not_depend_on_chunk_size_or_workers() -> None:
    S = np.random.default_rng(0).integers(0, 3, size=(300, 3)).astype(float)
    f1 = get_metric("f1_binary")
    reference = replicate_scores(S, f1, n_resamples=1000, seed=7, compress=False)
    for chunk, jobs in [(1, 1), (256, 2), (700, 1), (100_000, 2)]:
        again = replicate_scores(
            S, f1, n_resamples=1000, seed=7, compress=False, chunk_size=chunk, n_jobs=jobs
        )
        np.testing.assert_array_equal(again, reference)
    # a prefix of the replicates is the same when fewer are asked for
    np.testing.assert_array_equal(
        replicate_scores(S, f1, n_resamples=300, seed=7, compress=False), reference[:300]
    )
    assert not np.array_equal(
        replicate_scores(S, f1, n_resamples=1000, seed=8, compress=False), reference
    )


def test_compression_keeps_the_bootstrap_distribution() -> None:
    """Compressed and example-level bootstraps: same distribution (two-sample KS)."""
    S = binary_stats(500, 0.6, seed=3)
    a = replicate_scores(S, ACC, n_resamples=4000, seed=1, compress=True)[:, 0]
    b = replicate_scores(S, ACC, n_resamples=4000, seed=2, compress=False)[:, 0]
    assert make_support(S, "auto").compressed
    assert sps.ks_2samp(a, b).pvalue > 0.001
    assert abs(a.std() / b.std() - 1) < 0.1


def test_systems_share_weights_so_differences_are_paired() -> None:
    S = binary_stats(800, 0.7, seed=4)
    flipped = S.copy()
    flipped[:50, 0] = 1 - flipped[:50, 0]
    for compress in (True, False):
        reps = replicate_scores(
            np.stack([S, S, flipped]), ACC, n_resamples=500, seed=0, compress=compress
        )
        np.testing.assert_array_equal(reps[:, 0], reps[:, 1])
        # paired difference varies far less than either score
        assert (reps[:, 2] - reps[:, 0]).std() < reps[:, 0].std()


def test_jackknife_equals_leave_one_out_loop() -> None:
    rng = np.random.default_rng(5)
    preds, refs = rng.integers(0, 3, 60).tolist(), rng.integers(0, 3, 60).tolist()
    metric = get_metric("f1_macro").fit(preds, refs)
    S = metric.stats(preds, refs)
    expected = [
        metric.corpus_score(preds[:i] + preds[i + 1 :], refs[:i] + refs[i + 1 :]) for i in range(60)
    ]
    np.testing.assert_allclose(jackknife_scores(S, metric)[:, 0], expected, atol=1e-12)


def test_bca_matches_scipy_given_the_same_replicates() -> None:
    """Our ẑ0 and â against scipy.stats' own BCa helper on identical replicates."""
    from scipy.stats._resampling import _bca_interval  # reference implementation

    rng = np.random.default_rng(6)
    values = rng.exponential(size=150)
    S = get_metric("accuracy").stats_from_values(values)  # mean of a skewed variable
    res = bootstrap(S, ACC, n_resamples=5000, method="bca", seed=3)
    theta_b = res.replicates[:, 0]

    def mean_stat(x, axis=-1):
        return np.mean(x, axis=axis)

    alpha_1, alpha_2, a_hat = _bca_interval(
        (values,), mean_stat, axis=-1, alpha=0.025, theta_hat_b=theta_b, batch=None, xp=np
    )
    jack = jackknife_scores(S, ACC)
    assert acceleration(jack)[0] == pytest.approx(float(a_hat), rel=1e-9)
    z0 = bias_correction(res.replicates, res.estimates)[0]
    share_below = (np.sum(theta_b < values.mean()) + np.sum(theta_b <= values.mean())) / (
        2 * theta_b.size
    )
    assert sps.norm.cdf(z0) == pytest.approx(share_below)
    expected = np.quantile(theta_b, [float(alpha_1), float(alpha_2)])
    np.testing.assert_allclose(res.confidence_interval, expected, rtol=1e-12)


def test_bca_close_to_scipy_bootstrap_on_same_data() -> None:
    rng = np.random.default_rng(7)
    values = rng.exponential(size=200)
    ours = bootstrap(ACC.stats_from_values(values), ACC, n_resamples=20_000, method="bca", seed=1)
    theirs = sps.bootstrap(
        (values,), np.mean, n_resamples=20_000, method="BCa", rng=np.random.default_rng(2)
    )
    se = theirs.standard_error
    assert abs(ours.standard_error / se - 1) < 0.05
    assert ours.confidence_interval.low == pytest.approx(
        theirs.confidence_interval.low, abs=0.1 * se
    )
    assert ours.confidence_interval.high == pytest.approx(
        theirs.confidence_interval.high, abs=0.1 * se
    )


@pytest.mark.slow
@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_intervals_cover_at_nominal_rate(method: str) -> None:
    """Simulation with known truth: 95% intervals for a proportion (n = 400)."""
    truth, n, trials = 0.3, 400, 400
    rng = np.random.default_rng(8)
    covered = 0
    for trial in range(trials):
        S = ACC.stats_from_values(rng.random(n) < truth)
        ci = bootstrap(S, ACC, n_resamples=1000, method=method, seed=trial).confidence_interval
        covered += ci.low <= truth <= ci.high
    rate = covered / trials
    # binomial SD of the rate at 0.95 is ~0.011; allow 3 SD
    assert abs(rate - 0.95) < 0.035, rate


def test_mask_scores_are_bucket_scores() -> None:
    rng = np.random.default_rng(9)
    preds, refs = rng.integers(0, 2, 100).tolist(), rng.integers(0, 2, 100).tolist()
    metric = get_metric("mcc").fit(preds, refs)
    S = metric.stats(preds, refs)
    mask = np.zeros((2, 100))
    mask[0, :40] = 1
    mask[1, 40:] = 1
    got = mask_scores(S, metric, mask)[:, 0]
    assert got[0] == pytest.approx(metric.corpus_score(preds[:40], refs[:40]))
    assert got[1] == pytest.approx(metric.corpus_score(preds[40:], refs[40:]))


def test_subsample_masks_are_without_replacement_and_reproducible() -> None:
    masks = subsample_masks(50, 20, 600, seed=1)
    assert masks.shape == (600, 50)
    assert set(np.unique(masks)) <= {0.0, 1.0}
    np.testing.assert_array_equal(masks.sum(axis=1), 20)
    np.testing.assert_array_equal(subsample_masks(50, 20, 300, seed=1), masks[:300])
    # each example is included with probability 20/50
    assert abs(masks.mean() - 0.4) < 0.02


@pytest.mark.slow
def test_streaming_poisson_is_chunking_invariant_and_correct() -> None:
    S = binary_stats(2000, 0.55, seed=10)
    whole = StreamingBootstrap(n_stats=2, n_resamples=3000, seed=4)
    whole.update(S)
    pieces = StreamingBootstrap(n_stats=2, n_resamples=3000, seed=4)
    for start in range(0, 2000, 77):
        pieces.update(S[start : start + 77])
    np.testing.assert_allclose(pieces.replicate_sums, whole.replicate_sums)
    res = pieces.result(ACC)
    assert res.score == pytest.approx(S[:, 0].mean())
    assert abs(res.standard_error / np.sqrt(0.55 * 0.45 / 2000) - 1) < 0.1


def test_bootstrap_metric_top_level_entry_point() -> None:
    refs = [0, 1, 1, 0, 1, 1, 0, 1] * 50
    preds = [0, 1, 0, 0, 1, 1, 1, 1] * 50
    res = glotbench.bootstrap_metric("accuracy", preds, refs, n_resamples=2000, seed=0)
    assert res.score == pytest.approx(0.75)
    low, high = res.confidence_interval
    assert low < 0.75 < high
    assert res.standard_error == pytest.approx(np.sqrt(0.75 * 0.25 / 400), rel=0.1)
    frame = res.to_frame()
    assert list(frame["metric"]) == ["accuracy"]
    assert res.to_dict()["systems"][0]["score"] == pytest.approx(0.75)
    again = glotbench.bootstrap_metric("accuracy", preds, refs, n_resamples=2000, seed=0)
    np.testing.assert_array_equal(again.replicates, res.replicates)


def test_bad_arguments_raise_clear_errors() -> None:
    S = binary_stats(10, 0.5, seed=0)
    with pytest.raises(ValueError, match="confidence_level"):
        bootstrap(S, ACC, confidence_level=1.5)
    with pytest.raises(ValueError, match="NaN"):
        bootstrap(np.full((3, 2), np.nan), ACC)
    with pytest.raises(ValueError, match="empty"):
        bootstrap(np.zeros((0, 2)), ACC)
    with pytest.raises(glotbench.GlotbenchError, match="unknown metric"):
        glotbench.bootstrap_metric("nope", [1], [1])


def test_stream_seeds_equal_stream_seed_part_by_part() -> None:
    """Hashing the common prefix once gives each identity's own stream entropy."""
    from glotbench.resample.weights import stream_seed, stream_seeds

    lasts = ["model-0001", "é" * 40, 7, "", "a" * 300]
    prefix = ("euroeval rank", "task", "de", 1)
    got = stream_seeds(5, prefix, lasts)
    assert got == [stream_seed(5, *prefix, last) for last in lasts]
    assert len(set(got)) == len(lasts)
