"""Stable under additions (issue 22 item 3): a model's numbers depend on its own data only.

Resampling weights are a function of (test set, seed, replicate), and every
later draw (a unit's seed/replicate pick, a task's language draw) is keyed by
identity, so adding, removing or reordering *other* models, tasks or languages
changes no SE, interval or draw of a model (up to floating-point rounding of
sums taken in another order: rtol 1e-12). Properties are checked with
hypothesis on random designs; the reference is the same model analysed in a
different company, never a stored number.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glotbench.analysis.compare import aggregate_scores, compare_models
from glotbench.analysis.headline import AnalysisSettings, analyze
from glotbench.analysis.ranks import rank_models
from glotbench.analysis.replicates import replicates_from_statistics
from glotbench.metrics import get_metric
from glotbench.report.leaderboard import build_leaderboard
from glotbench.resample import replicate_scores

MODELS = ("m0", "m1", "m2", "m3")
UNITS = (("t0", "da"), ("t0", "sv"), ("t0", "nb"), ("t1", "da"), ("t1", "sv"), ("t2", "is"))
SETTINGS = AnalysisSettings(n_draws=200, seed=5, n_replicates=32)


class _Cell:
    """One test set: accuracy statistics of several runs (model, seed) on the same examples."""

    def __init__(self, task: str, language: str, runs: dict[tuple[str, int], np.ndarray]) -> None:
        self.task, self.language, self.dataset = task, language, f"{task}-{language}"
        n = next(iter(runs.values())).size
        self.example_ids = np.array([f"{language}-{i}" for i in range(n)], dtype=object)
        self.models = [model for model, _ in runs]
        self.seeds = [seed for _, seed in runs]
        self.stats = np.stack([np.column_stack([v, np.ones_like(v)]) for v in runs.values()])

    def get_metric(self):  # noqa: ANN201
        return get_metric("accuracy")


def _design(seed: int) -> dict[tuple[str, str], dict[tuple[str, int], np.ndarray]]:
    """Correctness of every model (2 seeds each) on every unit (25-60 examples each)."""
    rng = np.random.default_rng(seed)
    design = {}
    for task, language in UNITS:
        n = int(rng.integers(25, 60))
        design[(task, language)] = {
            (model, s): (rng.random(n) < 0.3 + 0.1 * i).astype(float)
            for i, model in enumerate(MODELS)
            for s in range(2)
        }
    return design


def _cells(design, models, units, reverse: bool = False, example_order=None):  # noqa: ANN001, ANN202
    cells = []
    for unit in units:
        runs = {k: v for k, v in design[unit].items() if k[0] in models}
        if reverse:
            runs = dict(reversed(list(runs.items())))
        cell = _Cell(*unit, runs)
        if example_order is not None:  # the store may hand examples out in another order
            order = example_order(cell.stats.shape[1])
            cell.example_ids, cell.stats = cell.example_ids[order], cell.stats[:, order]
        cells.append(cell)
    return cells[::-1] if reverse else cells


def _row(view, model: str) -> np.ndarray:  # noqa: ANN001
    m = view.models.index(model)
    return np.array([view.observed[m], view.se[m], view.ci_low[m], view.ci_high[m]])


def _close(a: np.ndarray, b: np.ndarray) -> None:
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)


def test_engine_replicates_of_a_system_do_not_depend_on_the_others() -> None:
    """Compressed (accuracy: 2 distinct rows alone) or not, the same draws for system 0."""
    rng = np.random.default_rng(0)
    correct = (rng.random((6, 400)) < 0.6).astype(float)
    stats = np.stack([correct, np.ones_like(correct)], axis=-1)
    acc = get_metric("accuracy")
    alone = replicate_scores(stats[0], acc, n_resamples=700, seed=(3, 1, 2))[:, 0]
    for company in ([0, 1], [0, 1, 2, 3, 4, 5], [0, 5, 2]):
        together = replicate_scores(stats[company], acc, n_resamples=700, seed=(3, 1, 2))
        np.testing.assert_array_equal(together[:, 0], alone)
    for scheme in ("poisson",):
        one = replicate_scores(stats[0], acc, n_resamples=300, seed=4, scheme=scheme)[:, 0]
        many = replicate_scores(stats, acc, n_resamples=300, seed=4, scheme=scheme)[:, 0]
        np.testing.assert_allclose(many, one, rtol=1e-12)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data_seed=st.integers(0, 10_000),
    others=st.lists(st.sampled_from(MODELS[1:]), min_size=1, max_size=3, unique=True),
    reverse=st.booleans(),
    shuffle_seed=st.integers(0, 100),
)
def test_other_models_change_no_number_of_a_model(
    data_seed: int, others: list[str], reverse: bool, shuffle_seed: int
) -> None:
    design = _design(data_seed)
    full = _cells(design, MODELS, UNITS)
    perm = np.random.default_rng(shuffle_seed).permutation
    fewer = _cells(design, ["m0", *others], UNITS, reverse=reverse, example_order=perm)
    big = replicates_from_statistics(full, "accuracy", n_replicates=32, seed=SETTINGS.seed)
    small = replicates_from_statistics(fewer, "accuracy", n_replicates=32, seed=SETTINGS.seed)
    m_big, m_small = big.models.index("m0"), small.models.index("m0")
    u_small = [small.units.index(u) for u in big.units]
    # the replicates themselves (test-set weights depend on the test set only)
    _close(small.values[m_small][u_small], big.values[m_big])
    # the headline (aggregate, task views): score, SE, percentile interval and draws
    a_big, a_small = analyze(big, SETTINGS), analyze(small, SETTINGS)
    _close(_row(a_small.overall, "m0"), _row(a_big.overall, "m0"))
    _close(
        a_small.overall.draws[:, a_small.overall.models.index("m0")],
        a_big.overall.draws[:, a_big.overall.models.index("m0")],
    )
    for task in a_big.tasks:
        _close(_row(a_small.tasks[task], "m0"), _row(a_big.tasks[task], "m0"))
    # analyze aggregate / compare: the same rows for m0
    draws = SETTINGS.draws(big)
    rows_big = aggregate_scores(big, draws).frame.set_index(["model", "aggregator"])
    rows_small = aggregate_scores(small, SETTINGS.draws(small)).frame.set_index(
        ["model", "aggregator"]
    )
    columns = ["score", "se_resampled", "ci_low", "ci_high"]
    _close(
        rows_small.loc["m0", columns].to_numpy(float), rows_big.loc["m0", columns].to_numpy(float)
    )


def _leaderboard_row(payload: dict, model: str) -> list:  # noqa: ANN001
    rows = payload["views"]["overall"]["rows"]
    row = next(r for r in rows if r["model"] == model)
    return [row["score"], row["se"], *row["ci"]]


def test_leaderboard_numbers_of_a_model_do_not_move_when_another_is_imported() -> None:
    design = _design(3)
    two = replicates_from_statistics(
        _cells(design, ["m0", "m1"], UNITS), "accuracy", n_replicates=32, seed=SETTINGS.seed
    )
    four = replicates_from_statistics(
        _cells(design, MODELS, UNITS), "accuracy", n_replicates=32, seed=SETTINGS.seed
    )
    page_two = build_leaderboard(two, settings=SETTINGS).to_dict()
    page_four = build_leaderboard(four, settings=SETTINGS).to_dict()
    for model in ("m0", "m1"):
        np.testing.assert_allclose(
            _leaderboard_row(page_two, model), _leaderboard_row(page_four, model), rtol=1e-12
        )


@pytest.mark.parametrize("languages", ["with", "without"])
def test_other_tasks_and_languages_change_no_task_view(languages: str) -> None:
    """Adding task t2, dropping a language of t1, or listing units in another order leaves
    t0's view (score, SE, interval) of every model unchanged."""
    design = _design(11)
    config = AnalysisSettings(n_draws=300, seed=2, languages=languages, k=2, n_replicates=32)
    base_units = [u for u in UNITS if u[0] != "t2"]
    variants = [
        list(UNITS),  # another task
        [u for u in UNITS if u != ("t1", "sv")],  # a language fewer in another task
        base_units[::-1],  # another order
    ]
    base = analyze(
        replicates_from_statistics(_cells(design, MODELS, base_units), "accuracy", n_replicates=32),
        config,
    )
    for units in variants:
        other = analyze(
            replicates_from_statistics(_cells(design, MODELS, units), "accuracy", n_replicates=32),
            config,
        )
        for model in MODELS:
            _close(_row(other.tasks["t0"], model), _row(base.tasks["t0"], model))


def test_the_same_seed_draws_the_same_way_in_every_command() -> None:
    """analyze (headline), analyze aggregate, analyze ranks and the leaderboard share one set
    of draws."""
    source = replicates_from_statistics(
        _cells(_design(4), MODELS, UNITS), "accuracy", n_replicates=32, seed=SETTINGS.seed
    )
    headline = analyze(source, SETTINGS).overall
    frame = aggregate_scores(source, SETTINGS.draws(source)).frame
    means = frame[frame["aggregator"] == "mean"].set_index("model")
    page = build_leaderboard(source, settings=SETTINGS).to_dict()
    # analyze ranks: the rank distribution of the headline's draws
    ranks = rank_models(source, SETTINGS.draws(source), aggregators=("mean",)).distribution
    shares = ranks.set_index("model").drop(columns="aggregator").loc[list(headline.models)]
    np.testing.assert_allclose(shares.to_numpy(float), headline.ranks.shares, rtol=1e-12)
    for model in MODELS:
        m = headline.models.index(model)
        assert means.loc[model, "se_resampled"] == pytest.approx(headline.se[m], rel=1e-12)
        assert means.loc[model, "ci_low"] == pytest.approx(headline.ci_low[m], rel=1e-12)
        # the page prints 4 decimals (report.leaderboard._num)
        expected = [headline.observed[m], headline.se[m], headline.ci_low[m], headline.ci_high[m]]
        assert _leaderboard_row(page, model) == [round(float(v), 4) for v in expected]


def test_a_pair_comparison_does_not_depend_on_the_other_models() -> None:
    """analyze compare: the (m0, m1) difference, its SD, interval and share are the same
    with two or four models loaded (paired draws of the two models are unchanged)."""
    design = _design(8)

    def pair(models: tuple[str, ...]) -> np.ndarray:
        source = replicates_from_statistics(
            _cells(design, models, UNITS), "accuracy", n_replicates=32, seed=SETTINGS.seed
        )
        frame = compare_models(source, SETTINGS.draws(source), aggregators=("mean",)).aggregates
        row = frame[(frame["model_a"] == "m0") & (frame["model_b"] == "m1")]
        if row.empty:  # listed the other way round
            row = frame[(frame["model_a"] == "m1") & (frame["model_b"] == "m0")]
            values = row[["difference", "sd", "ci_high", "ci_low"]].to_numpy(float)[0]
            return np.array([-values[0], values[1], -values[2], -values[3]])
        return row[["difference", "sd", "ci_low", "ci_high"]].to_numpy(float)[0]

    _close(pair(("m0", "m1")), pair(MODELS))
