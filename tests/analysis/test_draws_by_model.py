"""Aggregates of draws gathered per model equal the aggregates of the full draws array.

``DrawnDesign.aggregate_all`` reads balanced non-parametric draws model by model
(models × draws × units, a few models at a time). The reference is the definition:
the unit draws of ``unit_draws`` (draws × models × units, every draw at once),
resampled by ``language_draws`` and aggregated by numpy — bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from glotbench.analysis import draws as draws_module
from glotbench.analysis.draws import (
    AGGREGATORS,
    DesignError,
    DrawSettings,
    aggregate_units,
    prepare_draws,
    unit_draws,
)
from glotbench.analysis.replicates import ReplicatedScores, Unit

from .conftest import simulate


def two_tasks(values: np.ndarray) -> ReplicatedScores:
    """(M, 2·L, S, B) scores as two tasks of L languages each."""
    half = values.shape[1] // 2
    units = tuple(Unit(f"t{u // half}", f"l{u % half}") for u in range(values.shape[1]))
    models = tuple(f"m{i}" for i in range(values.shape[0]))
    return ReplicatedScores(models, units, values, "replicates")


def reference(source: ReplicatedScores, settings: DrawSettings, aggregator: str) -> np.ndarray:
    """Aggregates (R × M) of the whole draws array, languages resampled draw by draw."""
    design = prepare_draws(source, settings)
    full = unit_draws(source, settings, design.keep)
    return aggregate_units(full, design.layout, aggregator, design.languages)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("languages", "k", "seeds"),
    [("none", None, 1), ("with", None, 1), ("without", 3, 1), ("with", None, 3)],
)
def test_per_model_aggregates_equal_those_of_the_full_draws(
    languages: str, k: int | None, seeds: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(4)
    mu = rng.uniform(0.3, 0.9, 23)
    values = simulate(
        rng, mu, tau=0.05, sigma_seed=0.02, sigma_boot=0.02, n_languages=14, n_seeds=seeds, n_reps=9
    )
    values[2, 0, 0, :4] = 0.0  # zeros: geometric mean 0 on some draws
    source = two_tasks(values)
    settings = DrawSettings(n_draws=600, seed=3, languages=languages, k=k)  # type: ignore[arg-type]
    # chunks of 2 models, and draws in 3 blocks, so that every path of the loop is taken
    monkeypatch.setattr(draws_module, "MODEL_CHUNK_ELEMENTS", 2 * 256 * 14)
    results = prepare_draws(source, settings).aggregate_all(AGGREGATORS)
    for aggregator in AGGREGATORS:
        observed, drawn = results[aggregator]  # type: ignore[misc]
        expected = reference(source, settings, aggregator)
        assert drawn.shape == (600, 23)
        np.testing.assert_array_equal(drawn, expected)


def test_negative_scores_give_the_geometric_mean_error_of_the_whole_block() -> None:
    rng = np.random.default_rng(5)
    values = simulate(
        rng,
        [0.1, 0.2, 0.3],
        tau=0.0,
        sigma_seed=0.0,
        sigma_boot=0.2,
        n_languages=4,
        n_seeds=1,
        n_reps=30,
    )
    source = two_tasks(values)
    settings = DrawSettings(n_draws=300, seed=1)
    results = prepare_draws(source, settings).aggregate_all(AGGREGATORS)
    error = results["geometric_mean"]
    assert isinstance(error, DesignError)
    # the count of the first block of 256 draws, every model and the first task's units
    design = prepare_draws(source, settings)
    first = unit_draws(source, DrawSettings(n_draws=256, seed=1), design.keep)[..., :2]
    assert f"{int((first < 0).sum())} (resampled) score(s) are negative" in str(error)
    for aggregator in ("mean", "median"):
        np.testing.assert_array_equal(
            results[aggregator][1],
            reference(source, settings, aggregator),  # type: ignore[index]
        )
