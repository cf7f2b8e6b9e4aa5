"""Generators seeded for many entropies at once draw exactly as numpy's own constructors."""

from __future__ import annotations

import numpy as np
import pytest

from glotbench.resample.seeding import generators, pcg64_state, seed_states
from glotbench.resample.weights import stream_seeds


def entropies(n_words: int, count: int, seed: int = 0) -> list[tuple[int, ...]]:
    rng = np.random.default_rng(seed)
    rows = [tuple(int(x) for x in rng.integers(0, 2**32, n_words)) for _ in range(count)]
    return rows + [(0,) * n_words, (2**32 - 1,) * n_words]


@pytest.mark.parametrize("n_words", [1, 2, 3, 4, 5, 6, 9])
def test_seed_states_are_numpy_seed_sequence_states(n_words: int) -> None:
    rows = entropies(n_words, 60, seed=n_words)
    states = seed_states(np.array(rows, dtype=np.uint64).astype(np.uint32))
    for row, state in zip(rows, states, strict=True):
        expected = np.random.SeedSequence(row).generate_state(4, np.uint64)
        np.testing.assert_array_equal(state, expected)


def test_pcg64_states_are_numpy_pcg64_states() -> None:
    rows = entropies(5, 100) + stream_seeds(3, ("euroeval rank", "ner", "da", 0), range(50))
    states = seed_states(np.array(rows, dtype=np.uint64).astype(np.uint32))
    for row, state in zip(rows, states, strict=True):
        assert pcg64_state(state.tolist()) == np.random.PCG64(np.random.SeedSequence(row)).state


def test_generators_draw_as_default_rng_of_each_seed_sequence() -> None:
    rows = stream_seeds(
        0, ("euroeval rank", "sentiment", "sv", 1), [f"model-{i}" for i in range(40)]
    )
    stream = generators(rows)
    for i in (3, 0, 39, 3):  # any order, and again
        expected = np.random.default_rng(np.random.SeedSequence(rows[i]))
        np.testing.assert_array_equal(
            stream(i).integers(0, 10, size=(200, 10)), expected.integers(0, 10, size=(200, 10))
        )
        assert stream(i).random() == np.random.default_rng(np.random.SeedSequence(rows[i])).random()


def test_entropies_beyond_32_bit_words_use_numpy_constructors() -> None:
    rows = [(2**40, 1, 2, 3, 4), (5, 6)]
    stream = generators(rows)
    for i, row in enumerate(rows):
        expected = np.random.default_rng(np.random.SeedSequence(row)).random(5)
        np.testing.assert_array_equal(stream(i).random(5), expected)
