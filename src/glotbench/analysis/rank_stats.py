"""Rank distributions and rank intervals from draws of aggregates, in memory linear in M.

Inputs are draws of every model's aggregate, X (R draws × M models); larger
is better.

* Ranks per draw are competition ranks (1 + number of models strictly
  better), from one sort per draw, in chunks of draws; the rank distribution
  is kept as counts (M × M: model × rank), never as an (R × M × M) array.
* Rank interval (as Chatbot Arena reports ranks; Chiang et al. 2024, §5): j is
  *significantly better* than i when the lower (1 − α)/2 percentile of the
  paired draws of X_j − X_i is above 0 (numpy's linear percentile, as before);
  best rank = 1 + #significantly better, worst rank = M − #significantly
  worse. This definition is pairwise, so pairs are still examined, but not
  all of them and never all at once:

  - pairs whose *trimmed ranges* do not overlap are decided by two sorted
    searches over per-model order statistics. With s_m the sorted draws of
    model m and h = max(⌊(k − 1)/2⌋, 0), k as below: if s_j[h] > s_i[R − 1 − h],
    then for t in between, {X_j ≤ X_i} ⊆ {X_j ≤ t} ∪ {X_i ≥ t}, so at most
    2h ≤ k − 1 draws have X_j − X_i ≤ 0 and j is significantly better (for any
    dependence between the models' draws; h = 0 is the plain min/max test);
  - for the overlapping pairs, differences are formed in chunks of pairs. If
    c = #(draws with X_j − X_i ≤ 0) is at most k − 1, k = ⌊(R − 1)·α/2⌋ the
    order statistic below the percentile, the percentile lies above 0 (at least
    R − k draws are positive); if c ≥ k + 3 it lies at or below 0. Only the
    rare pairs in between get the exact percentile (``numpy.quantile``), so
    the decisions equal those of the percentile of every pair.

  The work is proportional to the number of overlapping pairs times R; memory
  to one chunk.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal, overload

import numpy as np

from glotbench.analysis.pairs import CHUNK_ELEMENTS


def count_true(mask: np.ndarray) -> np.ndarray:
    """True values per row of a 2-D boolean ``mask``, as int32 (exact).

    The rows are packed to bits and their set bits counted eight bytes at a time
    (``np.bitwise_count``, numpy ≥ 2.0): 3x faster than an int32 sum of the
    booleans for the rows of a thousand draws or more compared here. Without
    ``bitwise_count``, that sum.
    """
    if not hasattr(np, "bitwise_count") or mask.shape[1] < 64:
        return mask.sum(axis=1, dtype=np.int32)
    packed = np.packbits(mask, axis=1)  # the last byte padded with zero bits
    whole = packed.shape[1] // 8 * 8
    counts = np.bitwise_count(packed[:, :whole].view(np.uint64)).sum(axis=1, dtype=np.int32)
    if whole < packed.shape[1]:
        counts += np.bitwise_count(packed[:, whole:]).sum(axis=1, dtype=np.int32)
    return counts


def _chunk_rows(n_models: int, chunk_elements: int) -> int:
    return max(1, chunk_elements // max(n_models, 1))


def _sorted_ranks(chunk: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``chunk`` (rows × M): the models best first, and their competition ranks
    minus 1 in that order (the position of the first model of each run of equal values)."""
    rows, n_models = chunk.shape
    # best first; the order within a run of equal values does not change the ranks, so
    # numpy's (SIMD) quicksort serves, except with NaNs (unequal to each other: their
    # order would matter, and the stable sort keeps the models' order)
    kind: Literal["stable", "quicksort"] = "stable" if np.isnan(chunk).any() else "quicksort"
    order = np.argsort(-chunk, axis=1, kind=kind)
    ordered = np.take_along_axis(chunk, order, axis=1)
    position = np.broadcast_to(np.arange(n_models), (rows, n_models))
    new_value = np.ones((rows, n_models), dtype=bool)
    new_value[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    tied = np.flatnonzero(~new_value.all(axis=1))
    if tied.size == 0:  # no equal values: each model's rank is its position (no scan)
        return order, position
    first = np.array(position)
    # every model in a run of equal values gets the position of the run's first model
    first[tied] = np.maximum.accumulate(np.where(new_value[tied], position[tied], 0), axis=1)
    return order, first


def _ranks_of(chunk: np.ndarray) -> np.ndarray:
    """Competition ranks (1 = best) of each row of ``chunk`` (rows × M), via one sort."""
    order, first = _sorted_ranks(chunk)
    ranks = np.empty(chunk.shape, dtype=np.int64)
    np.put_along_axis(ranks, order, first + 1, axis=1)
    return ranks


def draw_ranks(aggregates: np.ndarray, chunk_elements: int = CHUNK_ELEMENTS) -> np.ndarray:
    """Competition ranks per draw: 1 + number of models strictly better, (R × M)."""
    out = np.empty(aggregates.shape, dtype=np.int64)
    step = _chunk_rows(aggregates.shape[1], chunk_elements)
    for start in range(0, aggregates.shape[0], step):
        out[start : start + step] = _ranks_of(aggregates[start : start + step])
    return out


def rank_counts(aggregates: np.ndarray, chunk_elements: int = CHUNK_ELEMENTS) -> np.ndarray:
    """Counts (M × M) of draws in which model m has rank r + 1."""
    n_models = aggregates.shape[1]
    counts = np.zeros(n_models * n_models, dtype=np.int64)
    step = _chunk_rows(n_models, chunk_elements)
    for start in range(0, aggregates.shape[0], step):
        # (model, rank) cells straight from the sorted order: no scatter back to models
        order, first = _sorted_ranks(aggregates[start : start + step])
        cells = order * n_models + first
        counts += np.bincount(cells.ravel(), minlength=n_models * n_models)
    return counts.reshape(n_models, n_models)


class _OverlappingPairs:
    """Pairs (a, b) whose ranges [low, high] over the draws overlap, each pair once.

    In order of ``low``, the models after a that overlap it are exactly those
    with ``low_b ≤ high_a``: a contiguous run of the rows sorted by ``low``.
    Pairs are listed by a (sorted position ``i``), then b; ``rows`` holds the
    draws of the models in that order (M × R, contiguous), so each model's
    partners are one slice of it and their comparisons need no gathered copy.
    """

    def __init__(self, columns: np.ndarray, low: np.ndarray, high: np.ndarray) -> None:
        """``columns``: the draws as models × draws (contiguous rows)."""
        self.order = np.argsort(low, kind="stable")
        self.position = np.empty_like(self.order)  # model index → its row in ``rows``
        self.position[self.order] = np.arange(len(self.order))
        end = np.searchsorted(low[self.order], high[self.order], side="right")
        self.counts = np.maximum(end - np.arange(1, len(low) + 1), 0)
        self.offsets = np.concatenate([[0], np.cumsum(self.counts)])
        self.rows = columns[self.order]

    def differences(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """X_b − X_a over the draws for the model index pairs (a, b), one row per pair."""
        return self.rows[self.position[b]] - self.rows[self.position[a]]

    def blocks(self, max_pairs: int) -> Iterator[tuple[int, int]]:
        """Ranges [i0, i1) of sorted positions, each with at most ``max_pairs`` pairs
        (or one position with more)."""
        n = len(self.counts)
        i0 = 0
        while i0 < n:
            limit = self.offsets[i0] + max_pairs
            i1 = max(int(np.searchsorted(self.offsets, limit, side="right")) - 1, i0 + 1)
            yield i0, min(i1, n)
            i0 = min(i1, n)

    def pairs(self, i0: int, i1: int) -> tuple[np.ndarray, np.ndarray]:
        """Model indices (a, b) of the pairs of sorted positions i0 ≤ i < i1."""
        counts = self.counts[i0:i1]
        first = np.repeat(np.arange(i0, i1), counts)
        step = np.arange(counts.sum()) - np.repeat(self.offsets[i0:i1] - self.offsets[i0], counts)
        return self.order[first], self.order[first + 1 + step]

    def sign_counts(
        self, i0: int, i1: int, decided: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Per pair of positions i0 ≤ i < i1: draws with X_b > X_a, and with X_b < X_a.

        ``decided`` (k + 3 of :func:`pair_decisions`): a count whose first
        :func:`head_draws` draws already leave at least ``decided`` draws out
        (head − count ≥ decided) is returned as the head's count: then R − count ≥
        decided whatever the other draws hold, which is all that the decisions ask
        of it (not significant in that direction). The other counts are exact.
        Partners are sorted by their lower bound, so the rows that need the rest
        of the draws in a direction are mostly a leading run, compared as a slice.
        """
        size = int(self.offsets[i1] - self.offsets[i0])
        positive = np.empty(size, dtype=np.int64)
        negative = np.empty(size, dtype=np.int64)
        n_draws = self.rows.shape[1]
        head = n_draws if decided is None else head_draws(n_draws, decided)
        for i in range(i0, i1):
            count = int(self.counts[i])
            if count:
                start = int(self.offsets[i] - self.offsets[i0])
                x_a, x_b = self.rows[i], self.rows[i + 1 : i + 1 + count]
                above = count_true(x_b[:, :head] > x_a[:head])
                below = count_true(x_b[:, :head] < x_a[:head])
                if head < n_draws:
                    _add_rest(above, x_b, x_a, head, decided, np.greater)  # type: ignore[arg-type]
                    _add_rest(below, x_b, x_a, head, decided, np.less)  # type: ignore[arg-type]
                positive[start : start + count] = above
                negative[start : start + count] = below
        return positive, negative


def head_draws(n_draws: int, decided: int) -> int:
    """Draws compared first by :meth:`_OverlappingPairs.sign_counts` (8·decided, ≥ 1,024)."""
    return min(n_draws, max(1024, 8 * decided))


def _add_rest(
    counts: np.ndarray,
    x_b: np.ndarray,
    x_a: np.ndarray,
    head: int,
    decided: int,
    compare: np.ufunc,
) -> None:
    """Add the comparisons of draws ``head:`` to the ``counts`` not decided in the head
    (rows up to the last undecided one: a slice, no copy; decided rows in it are exact).

    Comparing in stages of doubling length, so that rows stop once decided, was
    measured: 3.5% fewer comparisons at 1,000 models and slower overall.
    """
    open_rows = np.flatnonzero(head - counts < decided)
    if open_rows.size == 0:
        return
    first, last = int(open_rows[0]), int(open_rows[-1]) + 1
    counts[first:last] += count_true(compare(x_b[first:last, head:], x_a[head:]))


def _above_zero(n_not_positive: np.ndarray, k: int) -> np.ndarray:
    """1: percentile > 0 for sure; 0: ≤ 0 for sure; −1: needs the exact percentile."""
    return np.where(n_not_positive <= k - 1, 1, np.where(n_not_positive >= k + 3, 0, -1))


def rank_intervals(
    aggregates: np.ndarray,
    confidence_level: float,
    chunk_elements: int = CHUNK_ELEMENTS,
) -> tuple[np.ndarray, np.ndarray]:
    """Best and worst plausible rank per model from paired draws of aggregates (R × M)."""
    best, worst, _ = pair_decisions(aggregates, confidence_level, chunk_elements)
    return best, worst


def pair_decisions(
    aggregates: np.ndarray,
    confidence_level: float,
    chunk_elements: int = CHUNK_ELEMENTS,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rank interval (best, worst) per model and the statistically tied pairs.

    A pair (a, b) is *tied* when neither model is significantly better than
    the other in the sense of the rank interval above: the lower (1 − α)/2
    percentiles of X_a − X_b and of X_b − X_a are both ≤ 0, i.e. the percentile
    interval of the paired difference contains 0 (each direction is computed
    as its own percentile, so the relation is symmetric exactly). Pairs
    whose trimmed ranges do not overlap are never tied. Returns ``best``,
    ``worst`` and the tied pairs as a (K × 2) array of model indices, a < b.
    """
    n_draws, n_models = aggregates.shape
    alpha = (1 - confidence_level) / 2
    k_low = int(np.floor((n_draws - 1) * alpha))  # order statistic below the lower percentile
    # each model's draws contiguous: partitioned along rows (2x faster than along the
    # columns of the draws × models array) and gathered as whole rows for the pairs below
    columns = np.ascontiguousarray(aggregates.T)
    # trimmed ranges: the (h+1)-th smallest and largest draw of each model
    h = max((k_low - 1) // 2, 0)
    low, high = np.empty(n_models), np.empty(n_models)
    step = _chunk_rows(n_draws, chunk_elements)  # models a chunk
    for start in range(0, n_models, step):
        trimmed = np.partition(columns[start : start + step], sorted({h, n_draws - 1 - h}), axis=1)
        low[start : start + step], high[start : start + step] = trimmed[:, h], trimmed[:, -1 - h]
    # pairs whose trimmed ranges are apart: decided without their differences
    better = n_models - np.searchsorted(np.sort(low), high, side="right")  # low_j > high_i
    worse = np.searchsorted(np.sort(high), low, side="left")  # high_j < low_i
    overlapping = _OverlappingPairs(columns, low, high)
    del columns
    tied: list[np.ndarray] = []
    for i0, i1 in overlapping.blocks(max(1, chunk_elements // (2 * n_draws))):
        pa, pb = overlapping.pairs(i0, i1)
        positive, negative = overlapping.sign_counts(i0, i1, k_low + 3)  # X_b − X_a > 0, < 0
        # lower percentile of X_b − X_a > 0 (b better than a) and of X_a − X_b > 0 (a better)
        b_better = _above_zero(n_draws - positive, k_low)
        a_better = _above_zero(n_draws - negative, k_low)
        # upper percentile of X_b − X_a < 0 ⇔ lower percentile of X_a − X_b > 0, computed
        # as such only when exact; its count rule is the mirror image of the one above
        b_worse = _above_zero(n_draws - negative, k_low)
        a_worse = _above_zero(n_draws - positive, k_low)
        unsure = (b_better < 0) | (a_better < 0) | (b_worse < 0) | (a_worse < 0)
        if unsure.any():
            d = overlapping.differences(pa[unsure], pb[unsure])
            lo_ba, hi_ba = np.quantile(d, [alpha, 1 - alpha], axis=1)  # of X_b − X_a
            lo_ab, hi_ab = np.quantile(-d, [alpha, 1 - alpha], axis=1)  # of X_a − X_b
            b_better[unsure] = lo_ba > 0
            b_worse[unsure] = hi_ba < 0
            a_better[unsure] = lo_ab > 0
            a_worse[unsure] = hi_ab < 0
        better += np.bincount(pa, weights=b_better, minlength=n_models).astype(np.int64)
        worse += np.bincount(pa, weights=b_worse, minlength=n_models).astype(np.int64)
        better += np.bincount(pb, weights=a_better, minlength=n_models).astype(np.int64)
        worse += np.bincount(pb, weights=a_worse, minlength=n_models).astype(np.int64)
        # tied: neither is significantly better than the other (lower percentiles of
        # X_a − X_b and of X_b − X_a both ≤ 0), the relation rank_best counts, both ways
        same = (a_better == 0) & (b_better == 0)
        if same.any():
            pairs = np.column_stack([pa[same], pb[same]])
            tied.append(np.sort(pairs, axis=1))
    ties = np.concatenate(tied) if tied else np.empty((0, 2), dtype=np.int64)
    return 1 + better, n_models - worse, ties.astype(np.int64)


@dataclass(frozen=True)
class RankStatistics:
    """Rank counts and intervals of one set of draws, computed once and shared.

    ``counts[m, r]``: draws in which model m has rank r + 1; ``best``/``worst``:
    the rank interval; ``n_draws``: R.
    """

    counts: np.ndarray
    best: np.ndarray
    worst: np.ndarray
    n_draws: int
    #: statistically tied pairs (K × 2 model indices, a < b): the percentile
    #: interval of their paired difference contains 0 (see :func:`pair_decisions`)
    ties: np.ndarray = field(default_factory=lambda: np.empty((0, 2), dtype=np.int64))

    def tied_with(self, names: np.ndarray | None = None) -> list[list[int]]:
        """Per model, the models it is statistically tied with, sorted: their indices, or
        ``names[index]`` when an integer array ``names`` is given (e.g. positions in a page's
        list of models)."""
        n_models = self.counts.shape[0]
        first = np.concatenate([self.ties[:, 0], self.ties[:, 1]])
        second = np.concatenate([self.ties[:, 1], self.ties[:, 0]])
        if names is not None:
            second = names[second]
        order = np.lexsort((second, first))
        bounds = np.searchsorted(first[order], np.arange(n_models + 1)).tolist()
        others = second[order].tolist()
        return [others[bounds[m] : bounds[m + 1]] for m in range(n_models)]

    def is_tied(self, a: int, b: int) -> bool:
        """Whether models ``a`` and ``b`` are statistically tied."""
        return bool(self.are_tied(np.array([a]), np.array([b]))[0])

    def are_tied(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Element-wise :meth:`is_tied` of the model index arrays ``a`` and ``b``."""
        n_models = self.counts.shape[0]
        keys = np.minimum(a, b).astype(np.int64) * n_models + np.maximum(a, b)
        return np.isin(keys, self.ties[:, 0] * n_models + self.ties[:, 1])

    @property
    def shares(self) -> np.ndarray:
        """Percent of draws at each rank (M × M), as (ranks == r).mean() · 100."""
        return self.share(self.counts)

    @overload
    def share(self, count: int) -> float: ...

    @overload
    def share(self, count: np.ndarray) -> np.ndarray: ...

    def share(self, count: int | np.ndarray) -> float | np.ndarray:
        """Percent of the R draws that ``count`` draws are: count / R · 100 (element-wise
        for an array; the unit of :attr:`shares`)."""
        return count / self.n_draws * 100

    def shares_outside(self, first: np.ndarray, last: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per model m, percent of draws at ranks better than rank ``first[m] + 1`` and at
        ranks worse than rank ``last[m] + 1`` (``first``/``last``: rank indices, as in
        :attr:`counts`): the draws outside a window ``first[m] … last[m]`` of its distribution.
        """
        cumulative = np.zeros((self.counts.shape[0], self.counts.shape[1] + 1), dtype=np.int64)
        np.cumsum(self.counts, axis=1, out=cumulative[:, 1:])
        rows = np.arange(self.counts.shape[0])
        below = cumulative[rows, first]
        above = cumulative[:, -1] - cumulative[rows, last + 1]
        return self.share(below), self.share(above)

    @property
    def mean_rank(self) -> np.ndarray:
        ranks = np.arange(1, self.counts.shape[1] + 1)
        return (self.counts @ ranks) / self.n_draws

    @property
    def modal_rank(self) -> np.ndarray:
        return np.argmax(self.counts, axis=1) + 1


def rank_statistics(aggregates: np.ndarray, confidence_level: float) -> RankStatistics:
    """Rank counts and rank intervals of draws of aggregates (R × M)."""
    best, worst, ties = pair_decisions(aggregates, confidence_level)
    return RankStatistics(rank_counts(aggregates), best, worst, aggregates.shape[0], ties)
