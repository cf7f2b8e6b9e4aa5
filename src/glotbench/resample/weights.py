"""Resampling weights: the rows of W in ``score(W @ S)``.

Reproducibility whatever the chunk size or worker count
------------------------------------------------------
Replicates are generated in fixed blocks of :data:`BLOCK` rows. Block ``j``
draws from its own generator, ``SeedSequence(seed, spawn_key=(j,))``, so the
r-th replicate is the same number whether the replicates are computed in
chunks of 256 or 100,000, in one thread or eight. Chunking only decides how
many blocks are held in memory at once.

Compression (exact)
-------------------
Many statistic matrices have few distinct rows: accuracy has two, binary F1
four, a multiclass confusion row L² at most. If the n examples fall into u
distinct (joint, across all systems) rows with multiplicities c_1..c_u, then
under the multinomial bootstrap the resampled sum is ``Σ_j N_j U_j`` with
``(N_1..N_u) ~ Multinomial(n, c/n)`` — the same distribution as ``w @ S``
with ``w ~ Multinomial(n, 1/n)``, because the statistic depends on the draw
only through how many times each distinct row was drawn. So W shrinks from
B × n to B × u without changing the bootstrap distribution (Efron &
Tibshirani 1993, ch. 6: the bootstrap is a multinomial over the empirical
distribution's support). Pairing is kept because the rows are deduplicated
jointly over all systems of the call.

Partial compression (exact)
---------------------------
Continuous per-example scores often carry point masses: SQuAD F1 is exactly 1
for every exact answer and exactly 0 for every answer without a shared token.
Split the distinct rows into *heavy* ones (multiplicity ≥ :data:`HEAVY_MIN`)
and the remaining L *light* examples. A multinomial draw over all n examples is
the same as first drawing the heavy counts and the light total,
``(N_1..N_h, N_L) ~ Multinomial(n, (c_1..c_h, L)/n)``, and then drawing N_L
example indices uniformly among the light examples (the multinomial's
conditional distribution given the group totals is again multinomial; e.g.
Johnson, Kotz & Balakrishnan 1997, *Discrete Multivariate Distributions*,
ch. 35). So only the light share of the n indices is drawn per replicate, and
the bootstrap distribution does not change. ``compress="auto"`` uses it when
full compression does not pay off and heavy rows cover at least
:data:`PARTIAL_MIN_SHARE` of the examples.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

#: rows of W generated from one seeded generator
BLOCK = 256
#: multiplicity from which a distinct row is drawn as a count (partial compression);
#: one multinomial category costs about as much as drawing ~20 example indices
HEAVY_MIN = 32
#: share of the examples that heavy rows must cover for partial compression
PARTIAL_MIN_SHARE = 0.1

Scheme = Literal["multinomial", "poisson"]


def block_rng(seed: int, block: int, *extra: int) -> np.random.Generator:
    """Independent generator of replicate block ``block`` under ``seed``."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(block, *extra)))


@dataclass(frozen=True)
class Support:
    """The distinct statistic rows that resampling draws from.

    ``rows`` is (u × d), ``counts`` (u,) how many examples share each row, and
    ``n`` = ``counts.sum()`` the number of examples. ``index`` maps each
    original example to its row in ``rows`` (used by the jackknife).

    ``heavy`` > 0 marks a partially compressed support: ``rows[:heavy]`` are
    distinct rows drawn as multinomial counts and ``rows[heavy:]`` the other
    examples, one row each, drawn by example index (see the module docstring).
    """

    rows: npt.NDArray[np.float64]
    counts: npt.NDArray[np.int64]
    index: npt.NDArray[np.int64]
    compressed: bool
    heavy: int = 0

    @property
    def n(self) -> int:
        return int(self.counts.sum())

    @property
    def size(self) -> int:
        return int(self.rows.shape[0])

    @property
    def light(self) -> int:
        """Examples drawn by index: all n, or those outside the heavy rows."""
        return self.size - self.heavy


def _partial_support(
    flat_stats: npt.NDArray[np.float64], keys: npt.NDArray[np.float64]
) -> Support | None:
    """Heavy distinct rows as counts, the other examples one by one, or None.

    ``keys`` are random projections of the rows: equal rows have equal keys;
    rows grouped under one key are checked to be identical, so the result is
    exact (None when a group is not, or when heavy rows cover too little).
    """
    n = flat_stats.shape[0]
    _, first, inverse, key_counts = np.unique(
        keys, return_index=True, return_inverse=True, return_counts=True
    )
    inverse = inverse.reshape(-1)
    heavy_keys = np.flatnonzero(key_counts >= HEAVY_MIN)
    if key_counts[heavy_keys].sum() < PARTIAL_MIN_SHARE * n:
        return None
    position = np.full(key_counts.size, -1, dtype=np.int64)
    position[heavy_keys] = np.arange(heavy_keys.size)
    example_position = position[inverse]
    in_heavy = example_position >= 0
    heavy_rows = flat_stats[first[heavy_keys]]
    if not np.array_equal(flat_stats[in_heavy], heavy_rows[example_position[in_heavy]]):
        return None  # a projection collision: distinct rows share a key
    light = np.flatnonzero(~in_heavy)
    index = np.empty(n, dtype=np.int64)
    index[in_heavy] = example_position[in_heavy]
    index[light] = heavy_keys.size + np.arange(light.size)
    return Support(
        np.concatenate([heavy_rows, flat_stats[light]]),
        np.concatenate([key_counts[heavy_keys], np.ones(light.size, dtype=np.int64)]),
        index,
        compressed=False,
        heavy=int(heavy_keys.size),
    )


def make_support(flat_stats: npt.NDArray[np.float64], compress: bool | Literal["auto"]) -> Support:
    """Deduplicate the rows of ``flat_stats`` (n × d) when it pays off.

    ``compress="auto"`` compresses when there are at most n/4 distinct rows,
    and otherwise compresses partially when heavy rows cover enough examples
    (see the module docstring).
    """
    n = flat_stats.shape[0]
    identity = np.arange(n, dtype=np.int64)
    if compress is False or n == 0:
        return Support(flat_stats, np.ones(n, dtype=np.int64), identity, compressed=False)
    if compress == "auto":
        # cheap upper-bound check first: distinct rows have distinct random projections
        # (almost surely), so too many distinct keys means compression cannot pay off
        keys = flat_stats @ np.random.default_rng(0).standard_normal(flat_stats.shape[1])
        if np.unique(keys).size * 4 > n:
            partial = _partial_support(flat_stats, keys)
            if partial is not None:
                return partial
            return Support(flat_stats, np.ones(n, dtype=np.int64), identity, compressed=False)
    rows, index, counts = np.unique(flat_stats, axis=0, return_inverse=True, return_counts=True)
    if compress == "auto" and rows.shape[0] * 4 > n:
        return Support(flat_stats, np.ones(n, dtype=np.int64), identity, compressed=False)
    return Support(
        rows, counts.astype(np.int64), index.reshape(-1).astype(np.int64), compressed=True
    )


def example_draws(rng: np.random.Generator, n: int, rows: int) -> npt.NDArray[np.int64]:
    """``rows`` resamples of n example indices drawn uniformly with replacement."""
    return rng.integers(0, n, size=(rows, n), dtype=np.int32 if n < 2**31 else np.int64)


def heavy_counts(rng: np.random.Generator, support: Support, rows: int) -> npt.NDArray[np.int64]:
    """Counts of the heavy rows and, last column, of the light examples (rows × (h + 1)).

    The first draw of a partially compressed block; the light examples'
    indices follow from the same generator (:func:`light_draws`). A full
    block of counts is always drawn, so that the light draws of a shorter last
    block start at the same point of the stream and fewer replicates are a
    prefix of more.
    """
    n, h = support.n, support.heavy
    groups = np.append(support.counts[:h], support.light).astype(np.float64)
    return rng.multinomial(n, groups / n, size=max(rows, BLOCK))[:rows]


def light_draws(rng: np.random.Generator, light: int, total: int) -> npt.NDArray[np.int64]:
    """``total`` indices drawn uniformly among ``light`` examples, in replicate order."""
    return rng.integers(0, light, size=total, dtype=np.int32 if light < 2**31 else np.int64)


def multinomial_block(
    rng: np.random.Generator,
    support: Support,
    rows: int,
    dtype: type[np.floating[Any]] = np.float64,
) -> npt.NDArray[np.floating[Any]]:
    """``rows`` bootstrap count vectors over the support (each sums to n), as ``dtype``."""
    n, u = support.n, support.size
    if support.compressed:
        return rng.multinomial(n, support.counts / n, size=rows).astype(dtype)
    if support.heavy:
        counts = heavy_counts(rng, support, rows)
        per_row = counts[:, -1]
        draws = light_draws(rng, support.light, int(per_row.sum())).astype(np.int64)
        draws += np.repeat(np.arange(rows, dtype=np.int64) * support.light, per_row)
        light = np.bincount(draws, minlength=rows * support.light).reshape(rows, support.light)
        return np.concatenate([counts[:, :-1], light], axis=1).astype(dtype)
    # Uniform draws of example indices, counted row by row: O(rows · n). One
    # bincount per row stays in cache and writes straight into the float matrix,
    # several times faster than one bincount over offset indices of the whole block.
    draws = example_draws(rng, n, rows)
    out = np.empty((rows, u), dtype=dtype)
    for r in range(rows):
        out[r] = np.bincount(draws[r], minlength=u)
    return out


def poisson_block(rng: np.random.Generator, support: Support, rows: int) -> npt.NDArray[np.float64]:
    """``rows`` Poisson(1) bootstrap weight vectors (Hanley & MacGibbon 2006).

    Each example's weight is an independent Poisson(1) count; on a compressed
    support the sum over c_j identical examples is Poisson(c_j).
    """
    return rng.poisson(support.counts.astype(np.float64), size=(rows, support.size)).astype(
        np.float64
    )


def weight_block(
    scheme: Scheme,
    seed: int,
    block: int,
    support: Support,
    rows: int = BLOCK,
    dtype: type[np.floating[Any]] = np.float64,
) -> npt.NDArray[np.floating[Any]]:
    """Block ``block`` of W (``rows`` ≤ BLOCK replicates) under ``scheme``, as ``dtype``.

    The weights are counts, the same whatever ``dtype`` (float32 holds them exactly).
    """
    rng = block_rng(seed, block)
    if scheme == "multinomial":
        return multinomial_block(rng, support, rows, dtype)
    if scheme == "poisson":
        return poisson_block(rng, support, rows).astype(dtype, copy=False)
    raise ValueError(f"unknown resampling scheme {scheme!r}; use 'multinomial' or 'poisson'")


def subsample_masks(n: int, size: int, n_draws: int, seed: int) -> npt.NDArray[np.float64]:
    """``n_draws`` 0/1 rows selecting ``size`` of ``n`` examples without replacement.

    Row r is drawn from block ``r // BLOCK``'s generator, so rows do not depend
    on how many draws are requested at once.
    """
    if not 0 <= size <= n:
        raise ValueError(f"subsample size {size} must lie between 0 and n = {n}")
    out = np.zeros((n_draws, n), dtype=np.float64)
    for start in range(0, n_draws, BLOCK):
        rows = min(BLOCK, n_draws - start)
        keys = block_rng(seed, start // BLOCK, 1).random((rows, n))
        chosen = (
            np.argpartition(keys, size - 1, axis=1)[:, :size] if size else np.empty((rows, 0), int)
        )
        np.put_along_axis(out[start : start + rows], chosen, 1.0, axis=1)
    return out
