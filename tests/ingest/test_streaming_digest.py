"""StatsDigest: a run's statistics digest computed chunk by chunk.

Reference: the byte layout documented in :func:`glotbench.store.schema.stats_digest`
(stat names joined by U+001F, U+001E, ids joined by U+001F, U+001E, float64
little-endian row-major statistics), hashed here directly with hashlib.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glotbench.store.schema import StatsDigest, stats_digest


def _reference(ids: list[str], stats: np.ndarray, names: tuple[str, ...]) -> str:
    body = (
        "\x1f".join(names).encode()
        + b"\x1e"
        + "\x1f".join(ids).encode()
        + b"\x1e"
        + stats.astype("<f8").tobytes()
    )
    return hashlib.sha256(body).hexdigest()


def _chunked(ids: list[str], stats: np.ndarray, names: tuple[str, ...], cuts: list[int]) -> str:
    digest = StatsDigest(names)
    bounds = [0, *sorted(cuts), len(ids)]
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        digest.update_ids(ids[a:b])  # empty chunks included
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        digest.update_stats(stats[a:b])
    return digest.hexdigest()


@settings(max_examples=200, deadline=None)
@given(
    ids=st.lists(st.text(max_size=4), min_size=0, max_size=30),
    data=st.data(),
)
@pytest.mark.slow
def test_chunked_digest_equals_the_one_piece_digest(ids: list[str], data: st.DataObject) -> None:
    names = ("value", "count")
    stats = np.arange(2 * len(ids), dtype=np.float64).reshape(len(ids), 2) / 3.0
    cuts = data.draw(st.lists(st.integers(0, len(ids)), max_size=6))
    expected = _reference(ids, stats, names)
    assert stats_digest(ids, stats, names) == expected
    assert _chunked(ids, stats, names, cuts) == expected


def test_empty_ids_at_chunk_edges_keep_their_separators() -> None:
    # "" first / last in a chunk: a separator per id boundary, never per chunk
    ids = ["", "a", "", "", "b", ""]
    stats = np.ones((6, 1))
    expected = _reference(ids, stats, ("v",))
    for cuts in ([1], [2, 3], [0, 6], [1, 2, 3, 4, 5]):
        assert _chunked(ids, stats, ("v",), cuts) == expected
    assert stats_digest(ids[:2], stats[:2], ("v",)) != stats_digest(ids[1:3], stats[:2], ("v",))


def test_integer_ids_are_hashed_as_their_text_and_order_of_feeding_is_enforced() -> None:
    stats = np.array([[1.0], [0.0]])
    digest = StatsDigest(("v",))
    digest.update_ids(np.array([1, 2]))
    assert digest.n_ids == 2
    digest.update_stats(stats)
    assert digest.hexdigest() == stats_digest(["1", "2"], stats, ("v",))
    with pytest.raises(ValueError, match="before the statistics"):
        digest.update_ids(["3"])
