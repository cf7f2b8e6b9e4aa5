"""``analyze compare``'s default pairs (ranking neighbours, the top models' pairs, pairs asked
for): each row equals the every-pair table's row float for float, the summary counts every
pair, and the per-language SDs of the chosen pairs equal the SDs of their differences."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from glotbench.analysis.compare import compare_models, comparison_summary
from glotbench.analysis.draws import DrawSettings
from glotbench.analysis.pairs import CrossProducts, DifferenceMoments, ranking, select_pairs
from glotbench.analysis.replicates import ReplicatedScores, Unit
from glotbench.errors import InputError

from ..conftest import CliResult

Cli = Callable[..., CliResult]
N_MODELS, LANGUAGES, N_REPLICATES = 24, ("de", "en", "fr", "sw", "yo", "zu"), 20
KEY = ["aggregator", "model_a", "model_b"]


def _scores(seed: int = 5) -> ReplicatedScores:
    rng = np.random.default_rng(seed)
    skill = rng.normal(0.7, 0.03, N_MODELS)
    values = skill[:, None, None, None] + rng.normal(0, 0.03, (1, len(LANGUAGES), 1, 1))
    values = values + rng.normal(0, 0.02, (N_MODELS, len(LANGUAGES), 1, N_REPLICATES))
    values[7] = values[3]  # a copy: its differences with m03 have SD exactly 0
    models = tuple(f"m{m:02d}" for m in range(N_MODELS))
    units = tuple(Unit("t", lang) for lang in LANGUAGES)
    return ReplicatedScores(models, units, values, "replicates", "accuracy")


@pytest.fixture(scope="module")
def both() -> tuple:  # type: ignore[type-arg]
    source, settings = _scores(), DrawSettings(n_draws=400)
    every = compare_models(source, settings, per_language=False, pairs="all")
    chosen = compare_models(
        source, settings, per_language=False, top_k=4, requested=(("m20", "m01"),)
    )
    return every, chosen


def test_chosen_rows_equal_the_every_pair_rows_float_for_float(both) -> None:  # type: ignore[no-untyped-def]
    every, chosen = both
    assert chosen.pairs["mode"] == "adjacent" and every.pairs["mode"] == "all"
    assert len(chosen.aggregates) < len(every.aggregates)
    rows = chosen.aggregates.merge(every.aggregates, on=KEY, how="left", suffixes=("", "_all"))
    for column in ("difference", "sd", "effect_size", "ci_low", "ci_high", "share_a_better"):
        got, expected = rows[column].to_numpy(float), rows[f"{column}_all"].to_numpy(float)
        assert np.array_equal(got, expected, equal_nan=True), column  # bit for bit
    assert (rows["flagged"] == rows["flagged_all"]).all()


def test_chosen_pairs_are_the_neighbours_the_top_models_and_the_pairs_asked_for(both) -> None:  # type: ignore[no-untyped-def]
    every, chosen = both
    for aggregator, rows in every.aggregates.groupby("aggregator"):
        scores = dict(zip(rows["model_a"], rows["score_a"], strict=True))
        scores.update(zip(rows["model_b"], rows["score_b"], strict=True))
        order = sorted(scores, key=lambda m: (-scores[m], m))  # written out by hand
        expected = {tuple(sorted(p)) for p in zip(order[:-1], order[1:], strict=True)}
        expected |= {(a, b) for a in order[:4] for b in order[:4] if a < b}
        expected.add(("m01", "m20"))
        got = chosen.aggregates[chosen.aggregates["aggregator"] == aggregator]
        shown = set(zip(got["model_a"], got["model_b"], strict=True))
        assert expected <= shown
    # every aggregate holds the same pairs: the union over the three rankings
    counts = chosen.aggregates.groupby("aggregator").size()
    assert counts.nunique() == 1 and counts.iloc[0] == chosen.pairs["n_pairs"]


def test_summary_counts_every_pair_in_both_modes(both) -> None:  # type: ignore[no-untyped-def]
    every, chosen = both
    expected = comparison_summary(every.aggregates)
    pd.testing.assert_frame_equal(chosen.summary, expected, check_exact=True)
    pd.testing.assert_frame_equal(every.summary, expected, check_exact=True)
    assert (expected["n_pairs"] == N_MODELS * (N_MODELS - 1) // 2).all()
    assert expected["n_flagged"].sum() == (every.aggregates["effect_size"].abs() >= 2).sum()


def test_per_language_sds_of_the_chosen_pairs(both) -> None:  # type: ignore[no-untyped-def]
    every, chosen = both
    pairs = chosen.pair_summary.merge(every.pair_summary, on=["model_a", "model_b"])
    assert (pairs["n_flagged_a_better_x"] == pairs["n_flagged_a_better_y"]).all()
    assert (pairs["n_flagged_b_better_x"] == pairs["n_flagged_b_better_y"]).all()
    assert chosen.language_summary["n_pairs"].eq(chosen.pairs["n_pairs"]).all()


def test_difference_moments_equal_the_sd_of_the_differences() -> None:
    rng = np.random.default_rng(2)
    draws = rng.normal(0.6, 0.02, (700, 6, 3)) + rng.normal(0, 0.05, (700, 1, 3))
    draws[:, 1] = draws[:, 0]  # a copy: SD exactly 0
    draws[:, 2] = draws[:, 0] + 0.25  # a shifted copy: SD exactly 0
    draws[:, 3, 1] = 0.7  # constant in one unit
    a, b = np.array([0, 0, 0, 3, 4, 5]), np.array([1, 2, 4, 5, 5, 3])
    moments, products = DifferenceMoments(a, b), CrossProducts()
    for start in range(0, 700, 256):  # blocks, as the draws come
        moments.add(draws[start : start + 256])
        products.add(draws[start : start + 256])
    got = moments.difference_sd()
    expected = (draws[:, a] - draws[:, b]).std(axis=0, ddof=1)  # (pairs, U)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)
    assert (got[:2] == 0.0).all()  # exactly
    upper = (np.minimum(a, b), np.maximum(a, b))
    np.testing.assert_allclose(got, products.difference_sd(*upper), rtol=1e-9, atol=1e-15)


def test_select_pairs_is_linear_in_models_and_checks_names() -> None:
    rng = np.random.default_rng(0)
    models = np.array([f"x{m:04d}" for m in range(2000)], dtype=object)
    observed = {"mean": rng.normal(size=2000), "median": rng.normal(size=2000)}
    a, b = select_pairs(models, observed, top_k=10, requested=(("x0005", "x0003"),))
    assert (a < b).all() and len(np.unique(a * 2000 + b)) == len(a)
    assert len(a) <= 2 * (1999 + 45) + 1
    assert ((a == 3) & (b == 5)).any()
    order = ranking(models, observed["mean"])
    assert np.isin(
        np.minimum(order[:-1], order[1:]) * 2000 + np.maximum(order[:-1], order[1:]), a * 2000 + b
    ).all()
    with pytest.raises(InputError, match="no model 'nope'"):
        select_pairs(models, observed, requested=(("x0001", "nope"),))
    with pytest.raises(InputError, match="two different models"):
        select_pairs(models, observed, requested=(("x0001", "x0001"),))


def _scores_file(tmp_path: Path) -> Path:
    source = _scores()
    rows = [
        (model, unit.language, r, source.values[m, u, 0, r])
        for m, model in enumerate(source.models)
        for u, unit in enumerate(source.units)
        for r in range(N_REPLICATES)
    ]
    path = tmp_path / "scores.csv"
    frame = pd.DataFrame(rows, columns=["model", "language", "replicate", "score"])
    frame.to_csv(path, index=False)
    return path


def test_cli_pair_and_top_k_options(cli: Cli, tmp_path: Path) -> None:
    path = _scores_file(tmp_path)
    base = ("analyze", "compare", "--input", path, "--draws", "200")
    payload = json.loads(cli(*base, "--top-k", "0", "--pair", "m20,m01", "--json").stdout)
    assert payload["pairs"] == {
        "mode": "adjacent",
        "top_k": 0,
        "requested": [["m20", "m01"]],
        "n_pairs": payload["pairs"]["n_pairs"],
        "n_all_pairs": 276,
    }
    shown = {(r["model_a"], r["model_b"]) for r in payload["aggregates"]}
    assert ("m01", "m20") in shown and len(shown) == payload["pairs"]["n_pairs"] < 3 * 23
    terminal = cli(*base, "--pair", "m20,m01")
    assert terminal.exit_code == 0 and "Pairs asked for (--pair)" in terminal.out
    bad = cli(*base, "--pair", "m20,nope")
    assert bad.exit_code != 0 and "no model 'nope'" in bad.err
    assert cli(*base, "--pairs", "some").exit_code != 0
    assert cli(*base, "--pair", "m20").exit_code != 0


def test_median_from_a_sort_equals_numpy_median_float_for_float() -> None:
    from glotbench.analysis.draws import median

    rng = np.random.default_rng(4)
    for shape in [(5, 7), (3, 4, 50), (10, 9, 1), (4, 2), (6, 3, 51)]:
        values = rng.normal(size=shape)
        values[..., 0] = np.round(values[..., 0], 1)  # ties
        values.flat[0], values.flat[3] = np.nan, np.inf
        for axis in range(len(shape)):
            assert np.array_equal(median(values, axis), np.median(values, axis), equal_nan=True)
