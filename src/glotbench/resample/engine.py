"""The bootstrap engine: ``score(W @ S)`` in chunks, paired across systems.

``stats`` is one system's (n × k) statistics matrix or several systems'
(m × n × k) on the *same* examples in the same order. All systems share one W,
so differences between them are paired bootstrap differences.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from glotbench.errors import InputError
from glotbench.metrics.base import Metric
from glotbench.resample.weights import (
    BLOCK,
    Scheme,
    SeedLike,
    Support,
    block_rng,
    example_draws,
    is_example_level,
    make_support,
    weight_block,
)

ScoreFn = Callable[[npt.NDArray[np.float64]], npt.NDArray[np.float64]]
#: statistic columns up to which uncompressed resamples sum drawn rows instead of W @ S
GATHER_MAX_COLUMNS = 4
#: memory budget of one chunk of W and W @ S, in bytes
CHUNK_BYTES = 64 * 2**20
#: float32 represents every integer of magnitude up to 2**24 exactly
FLOAT32_EXACT = 2**24
#: example indices drawn and gathered at a time, so that the draws and the gathered
#: values stay in the CPU cache (2**17 int32 + intp + float64 ≈ 2.5 MiB; 2**16 to 2**18
#: measured fastest); the random stream and every row's sum are the same whatever this
#: is, so it does not change results
GATHER_ELEMENTS = 2**17
#: values checked at a time by :func:`exact_in_float32`
CHECK_ELEMENTS = 2**16


def resolve_score(score: str | Metric | ScoreFn, n_stats: int | None = None) -> Metric | ScoreFn:
    """Check and resolve the ``score`` argument of a public resampling function.

    ``score`` is a metric name (looked up with
    :func:`glotbench.metrics.registry.get_metric`), a
    :class:`~glotbench.metrics.base.Metric`, or a vectorised function of the summed
    statistics ``score(summed[..., k])``. With ``n_stats`` (the k of the statistics
    given), a metric must expect that many statistics. Anything else raises an
    :class:`~glotbench.errors.InputError` here, at the entry point, instead of a
    ``TypeError`` deep in the engine (input validation as scipy's ``_iv`` functions).
    """
    if isinstance(score, str):
        from glotbench.metrics.registry import get_metric

        try:
            score = get_metric(score)
        except (TypeError, ValueError) as exc:  # a metric that needs configuration
            raise InputError(
                f"metric {score!r} cannot be used by name here ({exc}); pass the configured "
                f"metric instead, e.g. get_metric({score!r}, labels=[...])"
            ) from None
    if isinstance(score, Metric):
        if n_stats is not None:
            try:
                expected = score.n_stats
            except (TypeError, ValueError) as exc:
                raise InputError(f"metric {score.name!r} is not configured: {exc}") from None
            if expected != n_stats:
                raise InputError(
                    f"metric {score.name!r} expects {expected} statistics per example "
                    f"({', '.join(score.stat_names())}) but the statistics have {n_stats}"
                )
        return score
    if callable(score):
        return score
    raise InputError(
        "score must be a metric name (see glotbench.metrics.metric_names()), a Metric, or a "
        f"function of the summed statistics; got {type(score).__name__} {score!r:.60}"
    )


def as_score_fn(score: str | Metric | ScoreFn, n_stats: int | None = None) -> ScoreFn:
    """Accept a metric name, a metric or a plain vectorised ``score(summed[..., k])`` function.

    ``n_stats`` is passed to :func:`resolve_score` (checks a metric's statistic count).
    """
    resolved = resolve_score(score, n_stats)
    return resolved.score if isinstance(resolved, Metric) else resolved


def as_systems(stats: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Return statistics as (m × n × k): one system becomes m = 1."""
    arr = np.asarray(stats, dtype=np.float64)
    if arr.ndim == 2:
        arr = arr[None]
    if arr.ndim != 3:
        raise InputError(f"statistics must be (n, k) or (m, n, k); got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise InputError("statistics contain NaN or infinite values")
    return arr


def _flatten(systems: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    m, n, k = systems.shape
    return systems.transpose(1, 0, 2).reshape(n, m * k)


def _columns(systems: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The columns of :func:`_flatten` as the rows of an (m·k × n) C-ordered array."""
    m, n, k = systems.shape
    return np.ascontiguousarray(systems.transpose(0, 2, 1)).reshape(m * k, n)


def distinct_columns(
    flat: npt.NDArray[np.float64],
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """Distinct columns of ``flat`` and, per original column, the index of its copy.

    Columns are grouped by a random projection and the grouping is verified
    exactly, so the result is exact (on a projection collision nothing is merged).
    """
    rows, inverse = distinct_rows(np.ascontiguousarray(flat.T))
    return rows.T, inverse


def distinct_rows(
    columns: npt.NDArray[np.float64],
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """:func:`distinct_columns` on the transposed layout (one column per row).

    Rows are contiguous here, so grouping and the exact check read memory in order.
    """
    width = columns.shape[0]
    keys = columns @ np.random.default_rng(0).standard_normal(columns.shape[1])
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    if first.size == width:
        return columns, np.arange(width, dtype=np.int64)
    copies = np.flatnonzero(first[inverse] != np.arange(width))  # rows merged into another
    if not np.array_equal(columns[first[inverse[copies]]], columns[copies]):
        return columns, np.arange(width, dtype=np.int64)
    return columns[first], inverse.astype(np.int64)


def exact_in_float32(rows: npt.NDArray[np.float64], n: int) -> bool:
    """Whether multinomial ``W @ rows`` is computed exactly in float32.

    True when the statistics are integers and n · max|S| < 2**24. Multinomial
    weights are non-negative integers summing to n, so every product and every
    partial sum of ``w @ s`` is an integer of magnitude at most n · max|S|,
    exactly representable in float32 (24-bit significand; IEEE 754): the float32
    product, in any summation order, equals the float64 product bit for bit.
    Count statistics (accuracy, F1 counts, n-gram matches) qualify. The values
    are checked :data:`CHECK_ELEMENTS` at a time (no temporary as large as them).
    """
    if rows.size == 0:
        return False
    peak = max(float(rows.max()), -float(rows.min()))  # NaN: not exact
    if not n * peak < FLOAT32_EXACT:
        return False
    flat = rows.reshape(-1)
    rounded = np.empty(min(flat.size, CHECK_ELEMENTS))
    for start in range(0, flat.size, CHECK_ELEMENTS):
        part = flat[start : start + CHECK_ELEMENTS]
        if not np.array_equal(part, np.rint(part, out=rounded[: part.size])):
            return False
    return True


def _chunk_blocks(support: Support, width: int, chunk_size: int | None) -> int:
    """Blocks per chunk so that W (rows × u) and W @ S (rows × width) fit the budget."""
    if chunk_size is not None:
        return max(1, -(-int(chunk_size) // BLOCK))
    per_row = 8 * (support.size + width + support.n)  # W, W @ S and the drawn indices
    return max(1, CHUNK_BYTES // (per_row * BLOCK))


def gathered_sums(
    rng: np.random.Generator, support: Support, rows: int, constant: npt.NDArray[np.bool_]
) -> npt.NDArray[np.float64]:
    """``rows`` multinomial resample sums ``w @ S`` without forming W.

    For narrow statistics, summing the drawn rows (a gather) is cheaper than
    counting the draws into W and multiplying. The draws are the very ones
    :func:`~glotbench.resample.weights.multinomial_block` counts (n example
    indices per replicate from the same generator in the same order), so both
    paths give the same replicates. Columns in ``constant`` (e.g. a count
    column of ones) sum to n · value. Indices are drawn in slices of about
    :data:`GATHER_ELEMENTS` so that they stay in cache; successive draws from
    one generator continue one stream, so the slicing does not change any number.
    """
    n, width = support.n, support.rows.shape[1]
    varying = np.flatnonzero(~constant)
    out = np.empty((rows, width))
    out[:, constant] = n * support.rows[0, constant]
    # contiguous columns and intp indices: np.take is ~10x slower on a strided
    # source or with int32 indices (measured, numpy 2.4)
    examples = support.rows if is_example_level(support) else support.rows[support.index]
    columns = np.ascontiguousarray(examples.T)
    step = max(1, GATHER_ELEMENTS // max(1, n))
    for first in range(0, rows, step):
        last = min(first + step, rows)
        draws = example_draws(rng, n, last - first).astype(np.intp)
        for c in varying:
            out[first:last, c] = np.take(columns[c], draws).sum(axis=1)
    return out


@functools.cache
def _blas_controller() -> Any:
    """threadpoolctl's controller of the loaded BLAS libraries, found once (finding
    them reads the process's libraries: ~10 ms, more than a small resample takes)."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def exact_columns(
    systems: npt.NDArray[np.float64],
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
    """:func:`distinct_rows` of :func:`_columns` for exact statistics, read in place.

    For statistics that :func:`exact_in_float32` accepts (integers of magnitude
    below 2**24 / n, so float32 holds them exactly). The columns are grouped by
    a random projection computed on the (m × n × k) systems as they are (one
    product per system, no transposed copy of the statistics), and every merge
    is checked exactly, so the grouping is exact (on a projection collision
    nothing is merged). Returns the distinct columns as float32 rows (u × n),
    gathered a few at a time, and, per column j·k + c of system j, the index of
    its copy. The order of the distinct columns follows the projection, so it
    can differ from :func:`distinct_rows`'s; exact products do not depend on it.
    """
    m, n, k = systems.shape
    width = m * k
    keys = np.matmul(np.random.default_rng(0).standard_normal(n), systems).reshape(-1)
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1).astype(np.int64)
    copies = np.flatnonzero(first[inverse] != np.arange(width))
    kept = first[inverse[copies]]
    step = max(1, CHECK_ELEMENTS // max(n, 1))  # columns compared and gathered at a time
    for start in range(0, copies.size, step):
        a, b = kept[start : start + step], copies[start : start + step]
        if not np.array_equal(systems[a // k, :, a % k], systems[b // k, :, b % k]):
            first, inverse = np.arange(width), np.arange(width, dtype=np.int64)
            break
    distinct = np.empty((first.size, n), dtype=np.float32)
    for start in range(0, first.size, step):
        part = first[start : start + step]
        distinct[start : start + part.size] = systems[part // k, :, part % k]
    return distinct, inverse


@dataclass(frozen=True)
class _Plan:
    """How one call of :func:`replicate_and_point_scores` computes ``W @ S``."""

    support: Support
    column_of: npt.NDArray[np.int64]
    rows_matrix: npt.NDArray[Any]  # support rows, as float32 for exact products
    dtype: type[np.floating[Any]]
    gather: bool
    constant: npt.NDArray[np.bool_]
    #: the distinct columns as float32 rows (u × n) when the statistics are exact, else None
    exact_columns: npt.NDArray[np.float32] | None


class _Buffers:
    """Arrays one chunk's blocks reuse: W, W @ S, and W @ S in float64 per system column.

    Allocating them per block (2 MiB of W at n = 2,000) costs a page fault per 4 KiB
    whenever the allocator has handed the memory back in between (with the other
    per-block arrays: 145,000 faults, 0.4 s of system time, for 50 cells of 200 runs).
    """

    def __init__(self, plan: _Plan, width: int) -> None:
        u = plan.rows_matrix.shape[1]
        self.weights = np.empty((BLOCK, plan.support.size), dtype=plan.dtype)
        self.product = np.empty((BLOCK, u), dtype=plan.dtype)
        self.wide = np.empty((BLOCK, u)) if plan.dtype != np.float64 else self.product
        self.expanded = np.empty((BLOCK, width))

    def summed(self, weights: npt.NDArray[Any], plan: _Plan) -> npt.NDArray[np.float64]:
        """``(W @ S)[:, column_of]`` in float64 (rows × m·k), written to the buffers."""
        rows = weights.shape[0]
        product = np.matmul(weights, plan.rows_matrix, out=self.product[:rows])
        if self.wide is not self.product:  # float32 products: their values in float64
            np.copyto(self.wide[:rows], product)
        return np.take(self.wide[:rows], plan.column_of, axis=1, out=self.expanded[:rows])


def _plan(
    systems: npt.NDArray[np.float64],
    scheme: Scheme,
    compress: bool | Literal["auto"],
    exact: bool,
) -> _Plan:
    """Distinct statistic columns, their support and the product's dtype.

    Identical statistic columns (e.g. accuracy's count column, the same for every
    system) are multiplied once and expanded afterwards. Exact statistics
    (integers, :func:`exact_in_float32`) are read in place and multiplied in
    float32; any order of their sums gives the same numbers. Other statistics
    keep the layout W @ S has always used, (n × u) in C order: BLAS may round a
    transposed operand differently in the last bit.
    """
    columns: npt.NDArray[Any]
    if exact:
        distinct32, column_of = exact_columns(systems)
        columns = distinct32.T  # (n × u) float32 view, no copy
    else:
        distinct, column_of = distinct_rows(_columns(systems))
        columns = np.ascontiguousarray(distinct.T)
    support = make_support(columns, compress)
    gather = scheme == "multinomial" and support.rows.shape[1] <= GATHER_MAX_COLUMNS
    if gather and not is_example_level(support):
        # narrow statistics: gathering the drawn examples' rows costs no more than
        # counting them per distinct row, and needs no weight matrix
        support = make_support(columns, False)
    constant = (support.rows == support.rows[:1]).all(axis=0)
    # integer statistics: the same numbers from a float32 product at about twice the speed
    dtype = np.float32 if exact and not gather else np.float64
    rows_matrix = support.rows.astype(dtype, copy=False)
    return _Plan(
        support, column_of, rows_matrix, dtype, gather, constant, distinct32 if exact else None
    )


def _resample(
    systems: npt.NDArray[np.float64],
    score_fn: ScoreFn,
    n_resamples: int,
    seed: SeedLike,
    scheme: Scheme,
    compress: bool | Literal["auto"],
    chunk_size: int | None,
    n_jobs: int,
) -> tuple[npt.NDArray[np.float64], _Plan]:
    """The replicates of :func:`replicate_scores` (checked input) and the plan used."""
    m, n, k = systems.shape
    exact = scheme == "multinomial" and exact_in_float32(systems, n)
    out = np.empty((n_resamples, m), dtype=np.float64)
    n_blocks = -(-n_resamples // BLOCK)
    # exact products (integer statistics, float32: see exact_in_float32) use one BLAS
    # thread, the parallelism being ``n_jobs``: the blocks' products (256 rows) are too
    # small for BLAS threads to pay off, and on a shared machine the threads spin waiting
    # for each other (4x the CPU time; measured, OpenBLAS 0.3.31, 2 cores under load),
    # also after the projections that find the distinct columns. Exact products are the
    # same numbers in any summation order; float64 products are left to the library's
    # default, whose thread count can change the last bit.
    with contextlib.ExitStack() as limits:
        if exact:
            limits.enter_context(_blas_controller().limit(limits=1, user_api="blas"))
        plan = _plan(systems, scheme, compress, exact)
        blocks_per_chunk = _chunk_blocks(plan.support, plan.rows_matrix.shape[1], chunk_size)

        def run_chunk(first_block: int) -> None:
            last_block = min(first_block + blocks_per_chunk, n_blocks)
            buffers = _Buffers(plan, m * k)  # reused by every block of the chunk
            for block in range(first_block, last_block):
                start = block * BLOCK
                rows = min(BLOCK, n_resamples - start)
                if plan.gather:
                    rng = block_rng(seed, block)
                    columns_summed = gathered_sums(rng, plan.support, rows, plan.constant)
                    summed = columns_summed[:, plan.column_of]
                else:
                    weights = weight_block(
                        scheme, seed, block, plan.support, rows, plan.dtype, buffers.weights[:rows]
                    )
                    summed = buffers.summed(weights, plan)
                out[start : start + rows] = score_fn(summed.reshape(rows, m, k))

        starts = range(0, n_blocks, blocks_per_chunk)
        if n_jobs == 1:
            for first in starts:
                run_chunk(first)
        else:
            with ThreadPoolExecutor(max_workers=n_jobs) as pool:
                list(pool.map(run_chunk, starts))
    return out, plan


def _checked(
    stats: npt.ArrayLike, score: str | Metric | ScoreFn, n_resamples: int
) -> tuple[npt.NDArray[np.float64], ScoreFn]:
    if n_resamples < 1:
        raise InputError("n_resamples must be at least 1")
    systems = as_systems(stats)
    if systems.shape[1] == 0:
        raise InputError("cannot resample an empty test set")
    return systems, as_score_fn(score, systems.shape[2])


def replicate_scores(
    stats: npt.ArrayLike,
    score: str | Metric | ScoreFn,
    *,
    n_resamples: int = 10_000,
    seed: SeedLike = 0,
    scheme: Scheme = "multinomial",
    compress: bool | Literal["auto"] = "auto",
    chunk_size: int | None = None,
    n_jobs: int = 1,
) -> npt.NDArray[np.float64]:
    """Bootstrap replicate scores, shape (n_resamples × m).

    Replicate r of every system is ``score(w_r @ S_system)`` for the same
    weight row ``w_r``; rows come from fixed seeded blocks (see
    :mod:`glotbench.resample.weights`), so the result does not depend on
    ``chunk_size`` or ``n_jobs``.
    """
    systems, score_fn = _checked(stats, score, n_resamples)
    out, _ = _resample(systems, score_fn, n_resamples, seed, scheme, compress, chunk_size, n_jobs)
    return out


def replicate_and_point_scores(
    stats: npt.ArrayLike,
    score: str | Metric | ScoreFn,
    *,
    n_resamples: int = 10_000,
    seed: SeedLike = 0,
    scheme: Scheme = "multinomial",
    compress: bool | Literal["auto"] = "auto",
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """:func:`replicate_scores` and :func:`point_scores` of the same statistics at once.

    Returns the (n_resamples × m) replicates and the (m,) full-sample scores,
    the numbers the two functions give. Exact statistics (:func:`exact_in_float32`)
    are summed from their distinct columns, already contiguous (integers: the
    same sums in any order).
    """
    systems, score_fn = _checked(stats, score, n_resamples)
    out, plan = _resample(systems, score_fn, n_resamples, seed, scheme, compress, None, 1)
    m, _, k = systems.shape
    if plan.exact_columns is not None:  # integers: exact sums in float64, in any order
        sums = plan.exact_columns.sum(axis=1, dtype=np.float64)[plan.column_of].reshape(m, k)
    else:
        sums = systems.sum(axis=1)
    return out, np.asarray(score_fn(sums), dtype=np.float64).reshape(-1)


def jackknife_scores(
    stats: npt.ArrayLike, score: str | Metric | ScoreFn
) -> npt.NDArray[np.float64]:
    """Leave-one-out scores (n × m): ``score(T − S_i)`` for every example i.

    With additive statistics the jackknife is one vectorised subtraction. Rows
    that are identical give identical values, so each distinct row is scored
    once and broadcast back.
    """
    systems = as_systems(stats)
    m, n, k = systems.shape
    score_fn = as_score_fn(score, k)
    flat = _flatten(systems)
    support = make_support(flat, compress=True)
    total = flat.sum(axis=0)
    distinct = score_fn((total[None, :] - support.rows).reshape(support.size, m, k))
    return distinct[support.index]


def point_scores(stats: npt.ArrayLike, score: str | Metric | ScoreFn) -> npt.NDArray[np.float64]:
    """Full-sample score of each system, shape (m,)."""
    systems = as_systems(stats)
    score_fn = as_score_fn(score, systems.shape[2])
    return np.asarray(score_fn(systems.sum(axis=1)), dtype=np.float64).reshape(-1)


def mask_scores(
    stats: npt.ArrayLike, score: str | Metric | ScoreFn, masks: npt.ArrayLike
) -> npt.NDArray[np.float64]:
    """Scores of arbitrary weighted subsets: ``score(mask @ S)``, shape (rows × m).

    ``masks`` is (rows × n): 0/1 rows for buckets or subsamples, or any
    non-negative weights.
    """
    systems = as_systems(stats)
    m, n, k = systems.shape
    weights = np.atleast_2d(np.asarray(masks, dtype=np.float64))
    if weights.shape[1] != n:
        raise InputError(f"masks have {weights.shape[1]} columns but there are {n} examples")
    score_fn = as_score_fn(score, k)
    summed = (weights @ _flatten(systems)).reshape(weights.shape[0], m, k)
    return np.asarray(score_fn(summed), dtype=np.float64)
