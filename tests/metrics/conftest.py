"""Shared helpers for the metric tests.

``check_resampled`` is the central property of the metric contract: for any
count vector w over the examples, ``score(w @ S)`` must equal the reference
implementation run on the data with example i repeated w_i times — so the
whole test set (w = 1), bootstrap replicates (multinomial w) and buckets
(0/1 w) are all scored correctly by one vectorised call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

from glotbench.metrics.base import Metric

Reference = Callable[[Sequence[Any], Sequence[Any]], float]


def _check_resampled(
    metric: Metric,
    predictions: Sequence[Any],
    references: Sequence[Any],
    reference: Reference,
    *,
    seed: int = 0,
    n_bootstrap: int = 3,
    atol: float = 1e-9,
) -> None:
    n = len(references)
    assert n > 0
    stats = metric.stats(predictions, references)
    assert stats.shape == (n, metric.n_stats)
    rng = np.random.default_rng(seed)
    mask = rng.random(n) < 0.5
    mask[rng.integers(n)] = True
    weights = np.vstack(
        [
            np.ones(n),
            rng.multinomial(n, np.full(n, 1.0 / n), size=n_bootstrap),
            mask,
        ]
    ).astype(np.float64)
    scores = metric.score(weights @ stats)
    assert scores.shape == (weights.shape[0],)
    for row, w in enumerate(weights):
        index = np.repeat(np.arange(n), w.astype(int))
        expected = reference([predictions[i] for i in index], [references[i] for i in index])
        assert abs(float(scores[row]) - float(expected)) <= atol, (row, scores[row], expected)
        # the vectorised call equals the one-row call
        assert abs(float(metric.score(w @ stats)) - float(scores[row])) <= 1e-12
    # whole test set through corpus_score
    assert (
        abs(metric.corpus_score(predictions, references) - reference(predictions, references))
        <= atol
    )


@pytest.fixture(scope="session")
def check_resampled() -> Callable[..., None]:
    """``check_resampled(metric, preds, refs, reference_fn)`` (see module docstring)."""
    return _check_resampled
