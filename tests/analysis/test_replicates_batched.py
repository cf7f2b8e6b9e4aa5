"""Replicates of many runs at once equal the runs bootstrapped one by one (same seeds)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from glotbench.analysis.replicates import Unit, replicates_from_statistics, unit_seed
from glotbench.metrics import get_metric
from glotbench.resample import replicate_scores
from glotbench.resample.weights import (
    BLOCK,
    block_rng,
    example_draws,
    make_support,
    multinomial_block,
)

ACC = get_metric("accuracy")


@dataclass
class Cell:
    task: str
    language: str
    models: list[str]
    stats: np.ndarray

    def get_metric(self) -> Any:
        return ACC


def _cells(seed: int = 0) -> list[Cell]:
    """3 languages (different test-set sizes) × 4 models × 3 seeds; one model lacks a seed."""
    rng = np.random.default_rng(seed)
    cells = []
    for lang, n in (("de", 150), ("fi", 90), ("sw", 301)):
        models = [f"m{m}" for m in range(4) for _ in range(3)][:-1]
        correct = rng.random((len(models), n)) < rng.uniform(0.3, 0.9, (len(models), 1))
        stats = np.stack([correct, np.ones_like(correct)], axis=-1).astype(np.float64)
        cells.append(Cell("xnli", lang, models, stats))
    return cells


def test_batched_replicates_equal_the_per_run_bootstrap() -> None:
    cells = _cells()
    B, seed = 700, 11  # 700: three blocks, the last one partial
    batched = replicates_from_statistics(cells, "accuracy", n_replicates=B, seed=seed)
    assert batched.values.shape == (4, 3, 3, B)
    checked = 0
    for cell in cells:
        unit = Unit(cell.task, cell.language)
        u = batched.units.index(unit)
        position: dict[str, int] = {}
        for j, model in enumerate(cell.models):
            s = position.get(model, 0)
            position[model] = s + 1
            # the per-run path: this run alone, with its cell's seed (uncompressed
            # support: the weights depend only on n and the seed, as in the batch)
            alone = replicate_scores(
                cell.stats[j], ACC, n_resamples=B, seed=unit_seed(seed, unit), compress=False
            )[:, 0]
            np.testing.assert_array_equal(batched.values[batched.models.index(model), u, s], alone)
            checked += 1
    assert checked == 33
    # the model without its third seed is NaN there, not a guess
    assert np.isnan(batched.values[batched.models.index("m3"), :, 2]).all()
    # and the replicates are a real bootstrap: their SD is the binomial one
    p = cells[2].stats[0, :, 0].mean()
    sd = batched.values[0, batched.units.index(Unit("xnli", "sw")), 0].std()
    assert abs(sd / np.sqrt(p * (1 - p) / 301) - 1) < 0.15


def test_row_by_row_counting_equals_one_bincount_over_the_block() -> None:
    """The weight rows are the counts of the block's draws (the formula they replace)."""
    n, rows = 37, BLOCK
    support = make_support(np.arange(n, dtype=np.float64)[:, None], compress=False)
    weights = multinomial_block(block_rng(5, 2), support, rows)
    draws = example_draws(block_rng(5, 2), n, rows).astype(np.int64)
    draws += (np.arange(rows) * n)[:, None]
    expected = np.bincount(draws.ravel(), minlength=rows * n).reshape(rows, n)
    np.testing.assert_array_equal(weights, expected)
    assert (weights.sum(axis=1) == n).all()


def test_test_set_stream_hashes_every_id_length_prefixed() -> None:
    """The digest of a test set's ids: each id's length (8 bytes) and text, in order
    (blake2b fed piece by piece, as the stream was defined)."""
    import hashlib

    from glotbench.analysis.replicates import test_set_seed
    from glotbench.resample.weights import stream_seed

    ids = ["a", "bb", 3, "é"]
    h = hashlib.blake2b(digest_size=16)
    for example in ids:
        data = str(example).encode("utf-8")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    expected = stream_seed(4, "test set", "ds", "t", "de", h.hexdigest())
    assert test_set_seed(4, "ds", "t", "de", ids) == expected
    assert test_set_seed(4, "ds", "t", "de", ["ab", "b", 3, "é"]) != expected


def test_examples_in_any_stored_order_give_the_same_replicates() -> None:
    """Ids already in canonical order (read in place) and shuffled (reordered first)."""
    rng = np.random.default_rng(12)
    n = 400
    correct = rng.random((4, n)) < 0.7
    stats = np.stack([correct, np.ones_like(correct)], axis=-1).astype(np.float64)
    ids = np.array([f"ex-{i:04d}" for i in range(n)], dtype=object)
    shuffle = rng.permutation(n)
    results = []
    for order in (np.arange(n), shuffle):
        cell = Cell("xnli", "de", ["a", "a", "b", "b"], stats[:, order])
        cell.example_ids = ids[order]  # type: ignore[attr-defined]
        cell.dataset = "xnli-de"  # type: ignore[attr-defined]
        results.append(replicates_from_statistics([cell], "accuracy", n_replicates=300, seed=2))
    np.testing.assert_array_equal(results[0].values, results[1].values)
    np.testing.assert_array_equal(results[0].point, results[1].point)
    assert results[0].point is not None
    np.testing.assert_array_equal(results[0].point[0, 0], stats[:2, :, 0].mean(axis=1))
