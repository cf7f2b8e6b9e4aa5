"""Streaming Poisson bootstrap: resample a test set you cannot hold in memory.

With Poisson(1) weights every example's weight in every replicate is drawn
independently (Hanley & MacGibbon 2006; Chamandy et al. 2012, "Estimating
uncertainty for massive data streams"), so replicate sums can be accumulated
chunk by chunk as examples arrive: memory is O(B · k), not O(n · k).

Weights are keyed to the example's *position* in the stream, in fixed blocks
of :data:`POSITIONS_PER_BLOCK`, so the result is the same however the stream is
cut into chunks.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from glotbench.errors import InputError
from glotbench.metrics.base import Metric
from glotbench.resample.engine import ScoreFn, as_score_fn, resolve_score
from glotbench.resample.intervals import percentile_interval, standard_error
from glotbench.resample.result import BootstrapResult
from glotbench.resample.weights import block_rng

POSITIONS_PER_BLOCK = 256
_STREAM_KEY = 2  # separates these generators from the in-memory engine's


class StreamingBootstrap:
    """Accumulate Poisson-bootstrap replicate sums over a stream of examples.

    >>> acc = StreamingBootstrap(n_stats=2, n_resamples=1000, seed=0)
    >>> for chunk in chunks:            # doctest: +SKIP
    ...     acc.update(metric.stats(chunk.predictions, chunk.references))
    >>> acc.result(metric).standard_error   # doctest: +SKIP
    """

    def __init__(self, n_stats: int, n_resamples: int = 10_000, seed: int = 0) -> None:
        self.n_stats = n_stats
        self.n_resamples = n_resamples
        self.seed = seed
        self.position = 0
        self.totals = np.zeros(n_stats, dtype=np.float64)
        self.replicate_sums = np.zeros((n_resamples, n_stats), dtype=np.float64)

    def _weights(self, block: int) -> npt.NDArray[np.float64]:
        rng = block_rng(self.seed, block, _STREAM_KEY)
        return rng.poisson(1.0, size=(self.n_resamples, POSITIONS_PER_BLOCK)).astype(np.float64)

    def update(self, stats: npt.ArrayLike) -> None:
        """Add the next examples' statistics (rows × k), in stream order."""
        chunk = np.asarray(stats, dtype=np.float64).reshape(-1, self.n_stats)
        if not np.isfinite(chunk).all():
            raise InputError("statistics contain NaN or infinite values")
        self.totals += chunk.sum(axis=0)
        offset = 0
        while offset < chunk.shape[0]:
            block, within = divmod(self.position, POSITIONS_PER_BLOCK)
            take = min(POSITIONS_PER_BLOCK - within, chunk.shape[0] - offset)
            weights = self._weights(block)[:, within : within + take]
            self.replicate_sums += weights @ chunk[offset : offset + take]
            offset += take
            self.position += take

    def result(
        self, score: str | Metric | ScoreFn, confidence_level: float = 0.95
    ) -> BootstrapResult:
        """Percentile interval and standard error from the accumulated replicates."""
        if self.position == 0:
            raise InputError("no examples were streamed")
        score = resolve_score(score, self.n_stats)
        score_fn = as_score_fn(score)
        replicates = np.asarray(score_fn(self.replicate_sums), dtype=np.float64).reshape(-1, 1)
        low, high = percentile_interval(replicates, confidence_level)
        return BootstrapResult(
            estimates=np.asarray(score_fn(self.totals), dtype=np.float64).reshape(1),
            replicates=replicates,
            low=np.asarray(low).reshape(1),
            high=np.asarray(high).reshape(1),
            standard_errors=standard_error(replicates),
            confidence_level=confidence_level,
            method="percentile",
            scheme="poisson-stream",
            n_resamples=self.n_resamples,
            seed=self.seed,
            n_examples=self.position,
            names=(score.name if isinstance(score, Metric) else "system_0",),
            metric=score.name if isinstance(score, Metric) else None,
        )
