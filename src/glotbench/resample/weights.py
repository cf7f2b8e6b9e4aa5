"""Resampling weights: the rows of W in ``score(W @ S)``.

Reproducibility whatever the chunk size or worker count
------------------------------------------------------
Replicates are generated in fixed blocks of :data:`BLOCK` rows. Block ``j``
draws from its own generator, ``SeedSequence(seed, spawn_key=(j,))``, so the
r-th replicate is the same number whether the replicates are computed in
chunks of 256 or 100,000, in one thread or eight. Chunking only decides how
many blocks are held in memory at once.

Stable under additions
----------------------
A replicate's weights are a function of (test set, seed, replicate) only.
Every scheme draws at the level of the n examples of the test set, in the
test set's own order: replicate r of block j is ``n`` example indices (or n
Poisson(1) counts) from ``block_rng(seed, j)``, where ``seed`` may be the
entropy :func:`stream_seed` derives from the user's seed and the test set's
identity. Deduplicating the statistic rows (below) only decides how ``W @ S``
is *computed* — the counts of an example's row are the sums of its examples'
counts — never which examples are drawn. So adding, removing or reordering
the systems (models) resampled together changes no draw, and no other
system's replicate. (An earlier version drew the counts of the distinct rows
directly, ``Multinomial(n, c/n)``: the same distribution, but a realisation
that depended on which systems shared the call.)

Compression (exact)
-------------------
Many statistic matrices have few distinct rows: accuracy has two, binary F1
four, a multiclass confusion row L² at most. If the n examples fall into u
distinct (joint, across all systems) rows with multiplicities c_1..c_u, then
under the multinomial bootstrap the resampled sum is ``Σ_j N_j U_j`` with
``(N_1..N_u) ~ Multinomial(n, c/n)`` — the same distribution as ``w @ S``
with ``w ~ Multinomial(n, 1/n)``, because the statistic depends on the draw
only through how many times each distinct row was drawn. So the product
``W @ S`` shrinks from B × n × d to B × u × d once the drawn example
indices are counted per distinct row (Efron & Tibshirani 1993, ch. 6: the
bootstrap is a multinomial over the empirical distribution's support).
Pairing is kept because all systems share the example draws.

Partial compression (exact)
---------------------------
Continuous per-example scores often carry point masses: SQuAD F1 is exactly 1
for every exact answer and exactly 0 for every answer without a shared token.
The distinct rows with multiplicity ≥ :data:`HEAVY_MIN` (*heavy*) are kept
once, the other examples one row each; drawn example indices are counted per
row of this support, so the product is over fewer columns and the draws are
those of the plain example-level bootstrap. ``compress="auto"`` uses it when
full compression does not pay off and heavy rows cover at least
:data:`PARTIAL_MIN_SHARE` of the examples.

Keyed uniforms
--------------
Draws that must not depend on which other units share a call (a unit's seed
and replicate pick, a model's parametric noise, a task's language draw) use
:func:`keyed_uniforms`: SplitMix64 (Steele, Lea & Flood 2014, "Fast
splittable pseudorandom number generators", OOPSLA) evaluated at counter c of
a 64-bit key derived by :func:`stream_key` from the seed and the unit's
identity. A counter-based generator needs no state, so the draws of every
unit are computed in one vectorised expression and do not depend on order.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

import numpy as np
import numpy.typing as npt

from glotbench.errors import InputError

#: rows of W generated from one seeded generator
BLOCK = 256
#: example indices drawn and counted at a time (and counts per slice), so that the
#: draws and the counts stay in the CPU cache; the random stream and every count are
#: the same whatever this is, so it does not change results (2**14 to 2**16 measured
#: fastest)
COUNT_ELEMENTS = 2**14
#: multiplicity from which a distinct row is kept once in W @ S (partial compression)
HEAVY_MIN = 32
#: share of the examples that heavy rows must cover for partial compression
PARTIAL_MIN_SHARE = 0.1

Scheme = Literal["multinomial", "poisson"]


#: a seed: the user's integer, or the entropy words :func:`stream_seed` derives from it
SeedLike = int | tuple[int, ...]


def _digest(seed: int, identity: Sequence[object], size: int) -> bytes:
    """blake2b of the seed and the identity parts, each length-prefixed (unambiguous)."""
    h = hashlib.blake2b(digest_size=size)
    for part in (str(int(seed)), *(str(p) for p in identity)):
        data = part.encode("utf-8")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.digest()


def stream_seed(seed: int, *identity: object) -> tuple[int, ...]:
    """Entropy of the random stream of ``identity`` (e.g. a test set) under ``seed``.

    ``(seed, w0, w1, w2, w3)`` with ``w`` the 128-bit blake2b digest of the
    seed and the identity as four 32-bit words: a function of these alone, so
    the stream of a test set does not depend on what else is analysed
    (``numpy.random.SeedSequence`` accepts a sequence of integers as entropy).
    """
    if int(seed) < 0:
        raise InputError(f"the seed must be a non-negative integer; got {seed}")
    words = np.frombuffer(_digest(seed, identity, 16), dtype="<u4")
    return (int(seed), *(int(w) for w in words))


def stream_seeds(
    seed: int, prefix: Sequence[object], last: Sequence[object]
) -> list[tuple[int, ...]]:
    """``[stream_seed(seed, *prefix, x) for x in last]``, hashing the common prefix once.

    blake2b absorbs its input in order, so a copy of the state after the seed and
    the prefix, updated with one last part, gives the same digest as hashing all.
    """
    if int(seed) < 0:
        raise InputError(f"the seed must be a non-negative integer; got {seed}")
    base = hashlib.blake2b(digest_size=16)
    for part in (str(int(seed)), *(str(p) for p in prefix)):
        data = part.encode("utf-8")
        base.update(len(data).to_bytes(8, "little"))
        base.update(data)
    out = []
    for x in last:
        h = base.copy()
        data = str(x).encode("utf-8")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
        out.append((int(seed), *struct.unpack("<4I", h.digest())))
    return out


def stream_key(seed: int, *identity: object) -> int:
    """64-bit key of ``identity`` under ``seed`` for :func:`keyed_uniforms`."""
    return int.from_bytes(_digest(seed, identity, 8), "little")


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def keyed_uniforms(keys: npt.ArrayLike, counters: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Uniform(0, 1) numbers, one per broadcast (key, counter): SplitMix64's output.

    Value = mix(key + (counter + 1)·γ) with SplitMix64's γ and finaliser
    (Steele, Lea & Flood 2014), whose top 53 bits give (k + ½)·2⁻⁵³, strictly
    inside (0, 1). Pure function of key and counter: no generator state.
    """
    key = np.asarray(keys, dtype=np.uint64)
    counter = np.asarray(counters, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = key + (counter + np.uint64(1)) * _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _MIX1
        z = (z ^ (z >> np.uint64(27))) * _MIX2
        z = z ^ (z >> np.uint64(31))
    return ((z >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0**-53


def keyed_integers(
    keys: npt.ArrayLike, counters: npt.ArrayLike, high: npt.ArrayLike
) -> npt.NDArray[np.int64]:
    """Integers uniform on 0..high−1 from :func:`keyed_uniforms` (floor(u·high); the
    bias of the 53-bit fraction is below 2⁻⁵³·high)."""
    high_array = np.asarray(high, dtype=np.int64)
    picked = (keyed_uniforms(keys, counters) * high_array).astype(np.int64)
    return np.minimum(picked, np.maximum(high_array - 1, 0))


def block_rng(seed: SeedLike, block: int, *extra: int) -> np.random.Generator:
    """Independent generator of replicate block ``block`` under ``seed``.

    ``seed`` is an integer or the entropy of :func:`stream_seed`.
    """
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(block, *extra)))


@dataclass(frozen=True)
class Support:
    """The distinct statistic rows that resampling draws from.

    ``rows`` is (u × d), ``counts`` (u,) how many examples share each row, and
    ``n`` = ``counts.sum()`` the number of examples. ``index`` maps each
    original example to its row in ``rows`` (used by the jackknife).

    ``heavy`` > 0 marks a partially compressed support: ``rows[:heavy]`` are
    distinct rows shared by many examples and ``rows[heavy:]`` the other
    examples, one row each (see the module docstring). Draws are always of
    example indices; the support only decides how they are counted.
    """

    rows: npt.NDArray[np.floating[Any]]  # float32 for exact statistics (engine.exact_columns)
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
        """Examples with a row of their own: all n, or those outside the heavy rows."""
        return self.size - self.heavy


def _partial_support(
    flat_stats: npt.NDArray[np.floating[Any]], keys: npt.NDArray[np.floating[Any]]
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


def make_support(
    flat_stats: npt.NDArray[np.floating[Any]], compress: bool | Literal["auto"]
) -> Support:
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
        projection = np.random.default_rng(0).standard_normal(flat_stats.shape[1])
        # in the statistics' own dtype: float32 statistics are not copied to float64
        keys = flat_stats @ np.asarray(projection, dtype=flat_stats.dtype)
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


def is_example_level(support: Support) -> bool:
    """Whether the support's rows are the examples themselves, in order."""
    return not support.compressed and support.heavy == 0


def count_per_row(
    draws: npt.NDArray[np.integer[Any]],
    support: Support,
    dtype: type[np.floating[Any]] = np.float64,
    weights: npt.NDArray[np.float64] | None = None,
    out: npt.NDArray[np.floating[Any]] | None = None,
) -> npt.NDArray[np.floating[Any]]:
    """Per replicate, the drawn examples counted per support row (rows × u).

    ``draws`` (rows × n) are example indices (``weights`` None) or, with
    ``weights`` (rows × n) given, ignored in favour of per-example weights.
    The counts are written to ``out`` (rows × u, of ``dtype``) when given.
    """
    rows, u = draws.shape[0], support.size
    out = np.empty((rows, u), dtype=dtype) if out is None else out
    if weights is not None:
        if is_example_level(support):
            out[:] = weights
            return out
        for r in range(rows):
            out[r] = np.bincount(support.index, weights=weights[r], minlength=u)
        return out
    codes = draws if is_example_level(support) else support.index[draws]
    # a few rows at a time, each row's codes offset by its position (r·u), counted by one
    # bincount whose counts stay in the CPU cache: one bincount over the whole block was
    # 5x slower, one per row 20 % slower (measured, numpy 2.4); the counts are the same
    step = max(1, min(rows, COUNT_ELEMENTS // max(u, 1)))
    narrow = codes.dtype.itemsize < 8 and step * u < 2**31  # int32 codes and offsets fit
    offsets = np.arange(0, step * u, u, dtype=codes.dtype if narrow else np.int64)[:, None]
    for first in range(0, rows, step):
        part = codes[first : first + step]
        size = part.shape[0]
        counted = np.bincount((part + offsets[:size]).ravel(), minlength=size * u)
        out[first : first + size] = counted.reshape(size, u)
    return out


def multinomial_block(
    rng: np.random.Generator,
    support: Support,
    rows: int,
    dtype: type[np.floating[Any]] = np.float64,
    out: npt.NDArray[np.floating[Any]] | None = None,
) -> npt.NDArray[np.floating[Any]]:
    """``rows`` bootstrap count vectors over the support (each sums to n), as ``dtype``.

    Always n example indices per replicate, counted per support row: the
    draws depend on n and the generator only (module docstring). They are
    drawn and counted about :data:`COUNT_ELEMENTS` at a time, so that no
    block-sized array of indices is made; successive draws from one generator
    continue one stream, so the slicing does not change a number. The counts
    are written to ``out`` (rows × u) when given.
    """
    n = support.n
    out = np.empty((rows, support.size), dtype=dtype) if out is None else out
    step = max(1, COUNT_ELEMENTS // max(n, 1))
    for first in range(0, rows, step):
        last = min(first + step, rows)
        count_per_row(example_draws(rng, n, last - first), support, dtype, out=out[first:last])
    return out


def poisson_block(rng: np.random.Generator, support: Support, rows: int) -> npt.NDArray[np.float64]:
    """``rows`` Poisson(1) bootstrap weight vectors (Hanley & MacGibbon 2006).

    Each example's weight is an independent Poisson(1) count, drawn per
    example and summed per support row (the sum over c_j identical examples is
    Poisson(c_j)).
    """
    weights = rng.poisson(1.0, size=(rows, support.n)).astype(np.float64)
    counts = count_per_row(np.empty((rows, 0), dtype=np.int64), support, np.float64, weights)
    return cast(npt.NDArray[np.float64], counts)


def weight_block(
    scheme: Scheme,
    seed: SeedLike,
    block: int,
    support: Support,
    rows: int = BLOCK,
    dtype: type[np.floating[Any]] = np.float64,
    out: npt.NDArray[np.floating[Any]] | None = None,
) -> npt.NDArray[np.floating[Any]]:
    """Block ``block`` of W (``rows`` ≤ BLOCK replicates) under ``scheme``, as ``dtype``.

    The weights are counts, the same whatever ``dtype`` (float32 holds them exactly).
    Multinomial counts are written to ``out`` (rows × u) when given.
    """
    rng = block_rng(seed, block)
    if scheme == "multinomial":
        return multinomial_block(rng, support, rows, dtype, out)
    if scheme == "poisson":
        return poisson_block(rng, support, rows).astype(dtype, copy=False)
    raise InputError(f"unknown resampling scheme {scheme!r}; use 'multinomial' or 'poisson'")


def subsample_masks(n: int, size: int, n_draws: int, seed: SeedLike) -> npt.NDArray[np.float64]:
    """``n_draws`` 0/1 rows selecting ``size`` of ``n`` examples without replacement.

    Row r is drawn from block ``r // BLOCK``'s generator, so rows do not depend
    on how many draws are requested at once.
    """
    if not 0 <= size <= n:
        raise InputError(f"subsample size {size} must lie between 0 and n = {n}")
    out = np.zeros((n_draws, n), dtype=np.float64)
    for start in range(0, n_draws, BLOCK):
        rows = min(BLOCK, n_draws - start)
        keys = block_rng(seed, start // BLOCK, 1).random((rows, n))
        chosen = (
            np.argpartition(keys, size - 1, axis=1)[:, :size] if size else np.empty((rows, 0), int)
        )
        np.put_along_axis(out[start : start + rows], chosen, 1.0, axis=1)
    return out
