"""Intervals of bounded metrics stay in the metric's range (issue 22 item 7).

Cells: the percentile interval of a cell's seeds × bootstrap replicates. The
bootstrap distribution of an accuracy p̂ on n examples is exactly
Binomial(n, p̂)/n, so its quantiles are scipy's binomial quantiles; a normal
interval p̂ ± z·SD would leave [0, 1] for a near-zero accuracy.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats as sps

from glotbench.analysis.headline import AnalysisSettings, analyze
from glotbench.analysis.replicates import replicates_from_frame, replicates_from_statistics
from glotbench.analysis.variance import cell_intervals, cell_summary
from glotbench.errors import InputError
from glotbench.metrics import get_metric


class _Cell:
    """Per-example accuracy statistics of one model on one test set."""

    def __init__(self, task: str, language: str, correct: np.ndarray, models: list[str]) -> None:
        self.task, self.language, self.models = task, language, models
        self.dataset = f"{task}-{language}"
        self.example_ids = np.array([f"ex{i}" for i in range(correct.shape[1])], dtype=object)
        self.stats = np.stack([correct, np.ones_like(correct)], axis=-1).astype(float)

    def get_metric(self):  # noqa: ANN201
        return get_metric("accuracy")


def test_cell_interval_is_the_exact_binomial_bootstrap_quantiles_and_stays_in_range() -> None:
    n, correct = 200, 2  # a majority-class baseline: 1 % accuracy
    row = np.zeros(n)
    row[:correct] = 1
    replicated = replicates_from_statistics(
        [_Cell("nli", "xx", row[None], ["baseline"])], "accuracy", n_replicates=4000, seed=1
    )
    low, high = cell_intervals(replicated, 0.95)
    p_hat = correct / n
    # exact quantiles of Binomial(n, p̂)/n: 0.025 → 0 (P(X=0) = 0.134), 0.975 → 5/200
    assert low[0, 0] == sps.binom.ppf(0.025, n, p_hat) / n == 0.0
    assert high[0, 0] == sps.binom.ppf(0.975, n, p_hat) / n == 0.025
    normal_low = p_hat - sps.norm.ppf(0.975) * np.sqrt(p_hat * (1 - p_hat) / n)
    assert normal_low < 0  # the interval this replaces left the range


def _scores(absent: tuple[str, str] | None = None) -> pd.DataFrame:
    """3 seeds × 4 replicates of models a, b on xnli in da and sv (``absent``: a cell left out)."""
    rng = np.random.default_rng(4)
    return pd.DataFrame(
        [
            (model, "xnli", lang, seed, rep, float(rng.normal(0.7, 0.05)))
            for model in ("a", "b")
            for lang in ("da", "sv")
            for seed in range(3)
            for rep in range(4)
            if (model, lang) != absent
        ],
        columns=["model", "task", "language", "seed", "replicate", "score"],
    )


def test_cell_intervals_pool_seeds_and_replicates() -> None:
    frame = _scores()
    replicated = replicates_from_frame(frame)
    low, high = cell_intervals(replicated, 0.9)
    for (model, lang), group in frame.groupby(["model", "language"]):
        m, u = replicated.models.index(model), replicated.unit_labels.index(lang)
        # scipy's mquantiles with alphap = betap = 1 is numpy's linear interpolation
        ref = sps.mstats.mquantiles(group["score"], [0.05, 0.95], alphap=1, betap=1)
        assert (low[m, u], high[m, u]) == pytest.approx(tuple(ref), rel=1e-12)
    with pytest.raises(InputError):
        cell_intervals(replicated, 1.5)


def test_headline_interval_of_a_near_zero_accuracy_stays_in_range() -> None:
    """The demo's majority baseline had the 95 % interval [−0.041, 0.092] (normal interval);
    the percentile interval of the draws cannot go below 0."""
    rng = np.random.default_rng(7)
    cells = [
        _Cell("nli", lang, (rng.random((1, 150)) < p).astype(float), ["baseline"])
        for lang, p in (("da", 0.0), ("sv", 0.02), ("nb", 0.01), ("is", 0.03))
    ]
    replicated = replicates_from_statistics(cells, "accuracy", n_replicates=500, seed=0)
    view = analyze(replicated, AnalysisSettings(n_draws=4000, seed=0)).overall
    assert view.ci_low[0] >= 0.0 and view.ci_high[0] <= 1.0
    assert view.ci_low[0] <= view.observed[0] <= view.ci_high[0]
    # the SE is unchanged by the choice of interval: a normal interval would leave [0, 1]
    assert view.observed[0] - sps.norm.ppf(0.975) * view.se[0] < 0


def test_cell_summary_holds_each_present_cell_as_the_page_shows_it() -> None:
    """The leaderboard's cell table comes from the analysis (renderers only look up):
    score = mean over seeds and replicates here (balanced, no full-sample score), the
    interval the pooled quantiles (scipy), absent cells left out."""
    frame = _scores(absent=("b", "sv"))
    cells = cell_summary(replicates_from_frame(frame), 0.9)
    assert list(zip(cells["model"], cells["language"], strict=True)) == [
        ("a", "da"),
        ("a", "sv"),
        ("b", "da"),
    ]
    assert list(cells["model_index"]) == [0, 0, 1] and set(cells["n_seeds"]) == {3}
    for row in cells.itertuples():
        group = frame[(frame["model"] == row.model) & (frame["language"] == row.language)]
        assert row.score == pytest.approx(group["score"].mean(), rel=1e-12)
        ref = sps.mstats.mquantiles(group["score"], [0.05, 0.95], alphap=1, betap=1)
        assert (row.ci_low, row.ci_high) == pytest.approx(tuple(ref), rel=1e-12)
        assert row.sigma_w > 0
