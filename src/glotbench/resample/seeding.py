"""Many seeded numpy generators at once: ``default_rng(SeedSequence(entropy))`` for each entropy.

EuroEval's rank score (:mod:`glotbench.analysis.euroeval_rank`) gives every model
on every dataset its own stream, ``default_rng(SeedSequence(e))``. Made one at a
time, a SeedSequence and a PCG64 cost about 30 µs of Python and Cython overhead,
3 s for the 100,000 streams of 1,000 models × 100 datasets. Here the
SeedSequence hashing of all entropies is done at once in numpy, each PCG64's
128-bit seeding step in Python integers, and one generator is given each state in
turn (``bit_generator.state``), so that its draws equal those of its own
``default_rng(SeedSequence(e))``.

The algorithms, as numpy implements them (``numpy/random/bit_generator.pyx`` and
``pcg64.h``; O'Neill's SeedSequence design, "Developing a seed_seq alternative",
2015, and PCG, O'Neill 2014):

* SeedSequence: the entropy, as 32-bit words, is hashed into a pool of 4 words
  (``hashmix`` with the running constant from ``INIT_A``/``MULT_A``, then every
  pair of pool words ``mix``-ed, then the words beyond the pool mixed in);
  ``generate_state(4, uint64)`` cycles the pool through the ``INIT_B``/``MULT_B``
  hash into 8 words, read as 4 little-endian 64-bit words;
* PCG64 (XSL-RR 128/64) seeding: initstate = words 0–1, initseq = words 2–3
  (high word first); inc = 2·initseq + 1, state = (inc + initstate)·A + inc
  mod 2¹²⁸ with A the 128-bit PCG multiplier (``pcg_setseq_128_srandom_r``).

Only entropies of 32-bit words (every integer < 2³²) are handled here;
:func:`generators` falls back to numpy's own constructors otherwise. The tests
compare every state and draw with numpy's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np

_INIT_A, _MULT_A = 0x43B0D7E5, 0x931E8875
_INIT_B, _MULT_B = 0x8B51F9DD, 0x58F38DED
_MIX_MULT_L, _MIX_MULT_R = 0xCA01F9DD, 0x4973F715
_XSHIFT = 16
_POOL = 4
_MASK32 = 0xFFFFFFFF
_MASK128 = (1 << 128) - 1
#: PCG's default 128-bit LCG multiplier (PCG_DEFAULT_MULTIPLIER_128)
_PCG_MULT = 0x2360ED051FC65DA44385DF649FCCF645


class _Hash:
    """The running hash constant of SeedSequence's ``hashmix``, shared by all rows."""

    def __init__(self, init: int, mult: int) -> None:
        self.value, self.mult = init, mult

    def __call__(self, words: np.ndarray) -> np.ndarray:
        words = words ^ np.uint32(self.value)
        self.value = (self.value * self.mult) & _MASK32
        words = words * np.uint32(self.value)
        return words ^ (words >> np.uint32(_XSHIFT))


def _mix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    result = np.asarray(np.uint32(_MIX_MULT_L) * x - np.uint32(_MIX_MULT_R) * y, dtype=np.uint32)
    return result ^ (result >> np.uint32(_XSHIFT))


def seed_states(entropy: np.ndarray) -> np.ndarray:
    """``SeedSequence(row).generate_state(4, np.uint64)`` of each row of ``entropy``.

    ``entropy`` (rows × words, uint32): each row the entropy's 32-bit words.
    Returns (rows × 4) uint64.
    """
    entropy = np.asarray(entropy, dtype=np.uint32)
    rows, n_words = entropy.shape
    zero = np.zeros(rows, dtype=np.uint32)
    hashmix = _Hash(_INIT_A, _MULT_A)
    pool = [hashmix(entropy[:, i] if i < n_words else zero) for i in range(_POOL)]
    for src in range(_POOL):
        for dst in range(_POOL):
            if src != dst:
                pool[dst] = _mix(pool[dst], hashmix(pool[src]))
    for src in range(_POOL, n_words):
        for dst in range(_POOL):
            pool[dst] = _mix(pool[dst], hashmix(entropy[:, src]))
    out_hash = _Hash(_INIT_B, _MULT_B)
    state = np.column_stack([out_hash(pool[i % _POOL]) for i in range(2 * 4)])
    return np.ascontiguousarray(state.astype("<u4")).view("<u8").astype(np.uint64)


def pcg64_state(words: Sequence[int]) -> dict[str, object]:
    """The ``PCG64.state`` dict of ``PCG64(seed_sequence)`` whose generate_state is ``words``."""
    initstate = (int(words[0]) << 64) | int(words[1])
    initseq = (int(words[2]) << 64) | int(words[3])
    inc = ((initseq << 1) | 1) & _MASK128
    state = inc  # one step from state 0: 0·A + inc
    state = ((state + initstate) * _PCG_MULT + inc) & _MASK128
    return {
        "bit_generator": "PCG64",
        "state": {"state": state, "inc": inc},
        "has_uint32": 0,
        "uinteger": 0,
    }


def generators(entropies: Sequence[Sequence[int]]) -> Callable[[int], np.random.Generator]:
    """stream(i): a generator that draws as ``default_rng(SeedSequence(entropies[i]))``.

    The generator returned is shared (its state is set at each call): draw from it
    before asking for the next one. Entropies with an integer of 2³² or more, or of
    different lengths, get numpy's own constructors.
    """
    plain = bool(entropies) and len({len(e) for e in entropies}) == 1
    if not plain or not all(0 <= int(w) <= _MASK32 for e in entropies for w in e):

        def own(i: int) -> np.random.Generator:
            return np.random.default_rng(np.random.SeedSequence(entropies[i]))

        return own
    states = seed_states(np.array(entropies, dtype=np.uint64).astype(np.uint32)).tolist()
    bit_generator = np.random.PCG64()
    generator = np.random.Generator(bit_generator)

    def shared(i: int) -> np.random.Generator:
        bit_generator.state = cast(Any, pcg64_state(states[i]))
        return generator

    return shared
