"""EuroEval's current (2026-05-28) rank score, checked against plain numpy written from the method.

The method as EuroEval documents it: per dataset, best = the highest mean
iteration score of any model; pooled SD = population SD (ddof 0) of all
iteration scores of all models on the dataset (1.0 if it is 0); rank score =
1 + (best − mean)/pooled SD, reported as the median over bootstrap resamples
of the model's own iteration scores (best fixed), with the 2.5/97.5 percentile
interval. Dataset → task → language → overall: mean, half-width z·√(Σ v_i)/n,
v_i = (h_i/z)².
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from glotbench import api
from glotbench.analysis.draws import DrawSettings
from glotbench.analysis.euroeval_iterations import (
    IterationTable,
    iterations_from_components,
    iterations_from_frame,
)
from glotbench.analysis.euroeval_rank import combine_intervals, euroeval_rank, resolve_method
from glotbench.analysis.replicates import replicates_from_frame
from glotbench.analysis.variance import components_from_summary
from glotbench.errors import InputError
from glotbench.resample.weights import stream_seed

from ..conftest import CliResult

Z95 = 1.959964

# 3 models × 2 datasets × 2 tasks × 2 languages × 5 iterations
ITERATIONS: dict[tuple[str, str, str], dict[str, list[float]]] = {
    ("da", "ner", "ner-da-1"): {
        "A": [52.1, 51.5, 51.5, 53.3, 47.6],
        "B": [45.2, 43.1, 46.7, 50.0, 47.0],
        "C": [40.8, 37.2, 40.3, 38.7, 42.7],
    },
    ("da", "ner", "ner-da-2"): {
        "A": [60.6, 58.6, 60.0, 60.0, 58.0],
        "B": [54.2, 55.4, 53.9, 53.9, 54.9],
        "C": [47.6, 49.9, 46.3, 50.0, 47.8],
    },
    ("da", "sentiment", "sentiment-da-1"): {
        "A": [68.5, 70.9, 70.7, 71.5, 70.1],
        "B": [68.4, 73.6, 69.4, 66.4, 71.0],
        "C": [61.0, 62.0, 62.1, 60.6, 58.3],
    },
    ("da", "sentiment", "sentiment-da-2"): {
        "A": [62.5, 60.7, 62.3, 63.4, 60.4],
        "B": [62.1, 63.3, 61.7, 61.9, 61.7],
        "C": [54.8, 51.7, 51.4, 52.3, 50.1],
    },
    ("sv", "ner", "ner-sv-1"): {
        "A": [62.9, 65.4, 65.6, 61.6, 60.9],
        "B": [60.7, 61.1, 61.5, 63.7, 65.3],
        "C": [55.0, 55.6, 53.0, 52.9, 55.0],
    },
    ("sv", "ner", "ner-sv-2"): {
        "A": [44.5, 44.3, 44.7, 44.7, 39.6],
        "B": [37.9, 41.5, 41.9, 35.6, 43.6],
        "C": [32.4, 32.7, 33.5, 34.2, 30.9],
    },
    ("sv", "sentiment", "sentiment-sv-1"): {
        "A": [68.0, 66.3, 67.3, 63.5, 66.6],
        "B": [65.4, 62.7, 63.9, 64.4, 65.0],
        "C": [59.4, 57.8, 57.5, 58.7, 61.0],
    },
    ("sv", "sentiment", "sentiment-sv-2"): {
        "A": [72.1, 68.0, 73.8, 72.4, 73.8],
        "B": [67.9, 65.0, 70.8, 70.4, 65.5],
        "C": [58.9, 61.8, 60.8, 65.0, 60.2],
    },
}


def _frame(data: dict[tuple[str, str, str], dict[str, list[float]]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "model": model,
                "dataset": dataset,
                "task": task,
                "language": language,
                "replicate": i,
                "score": value,
            }
            for (language, task, dataset), per_model in data.items()
            for model, values in per_model.items()
            for i, value in enumerate(values)
        ]
    )


def _table() -> IterationTable:
    return iterations_from_frame(_frame(ITERATIONS))


def _reference_bootstrap(
    data: dict[tuple[str, str, str], dict[str, list[float]]], n_bootstraps: int, seed: int
) -> dict[tuple[str, str], tuple[float, float, float]]:
    """Median and 2.5/97.5 percentiles per (dataset, model), written out with numpy.

    Same seed convention as glotbench (documented there): one generator per
    (dataset, model), seeded by ``stream_seed(seed, "euroeval rank", task,
    language, k, model)`` with k the dataset's position among those of its task
    and language; B × n draws with replacement per model.
    """
    out = {}
    seen: dict[tuple[str, str], int] = {}
    for language, task, dataset in sorted(data):
        k = seen.get((task, language), 0)
        seen[(task, language)] = k + 1
        per_model = data[(language, task, dataset)]
        everything = np.concatenate([np.asarray(v) for v in per_model.values()])
        best = max(np.mean(v) for v in per_model.values())
        sd = np.std(everything) or 1.0
        for model in sorted(per_model):
            x = np.asarray(per_model[model])
            entropy = stream_seed(seed, "euroeval rank", task, language, k, model)
            rng = np.random.default_rng(np.random.SeedSequence(entropy))
            resampled = rng.choice(x, size=(n_bootstraps, x.size), replace=True)
            scores = 1 + (best - resampled.mean(axis=1)) / sd
            low, high = np.percentile(scores, [2.5, 97.5])
            out[(dataset, model)] = (float(np.median(scores)), float(low), float(high))
    return out


# -- the dataset level -------------------------------------------------------------------


def test_plug_in_quantities_are_exact() -> None:
    result = euroeval_rank(_table(), n_bootstraps=50)
    rows = result.datasets.set_index(["dataset", "model"])
    assert len(rows) == 24
    for (_, _, dataset), per_model in ITERATIONS.items():
        everything = np.concatenate([np.asarray(v) for v in per_model.values()])
        best = max(np.mean(v) for v in per_model.values())
        pooled = np.sqrt(np.mean((everything - everything.mean()) ** 2))  # ddof 0 by hand
        for model, values in per_model.items():
            row = rows.loc[(dataset, model)]
            assert row["best"] == pytest.approx(best, rel=1e-12)
            assert row["pooled_sd"] == pytest.approx(pooled, rel=1e-12)
            assert row["mean"] == pytest.approx(np.mean(values), rel=1e-12)
            expected = 1 + (best - np.mean(values)) / pooled
            assert row["plug_in"] == pytest.approx(expected, rel=1e-12)
            assert row["n_iterations"] == 5
    # the best model of a dataset has plug-in score exactly 1
    assert (rows.groupby(level=0)["plug_in"].min() == 1.0).all()


def test_bootstrap_median_and_interval_match_numpy_with_the_same_seed() -> None:
    result = euroeval_rank(_table(), n_bootstraps=400, seed=7)
    expected = _reference_bootstrap(ITERATIONS, 400, 7)
    for row in result.datasets.itertuples():
        median, low, high = expected[(row.dataset, row.model)]
        assert (row.score, row.low, row.high) == pytest.approx((median, low, high), rel=1e-12)
    # the reported score is the bootstrap median, not the plug-in point
    assert (result.datasets["score"] != result.datasets["plug_in"]).any()


def test_bootstrap_quantiles_agree_with_the_exact_bootstrap_distribution() -> None:
    """Large B against all 5⁵ equally likely resamples of 5 iteration scores."""
    result = euroeval_rank(_table(), n_bootstraps=40_000, seed=3)
    rows = result.datasets.set_index(["dataset", "model"])
    every_resample = np.array(list(itertools.product(range(5), repeat=5)))  # 3125 × 5
    for (_, _, dataset), per_model in ITERATIONS.items():
        everything = np.concatenate([np.asarray(v) for v in per_model.values()])
        best = max(np.mean(v) for v in per_model.values())
        pooled = np.std(everything)
        for model, values in per_model.items():
            exact = 1 + (best - np.asarray(values)[every_resample].mean(axis=1)) / pooled
            row = rows.loc[(dataset, model)]
            for p, q in ((0.5, row["score"]), (0.025, row["low"]), (0.975, row["high"])):
                # q is a p-quantile of the exact distribution: P(X < q) ≤ p ≤ P(X ≤ q)
                eps = 4 * np.sqrt(p * (1 - p) / 40_000) + 1e-9
                assert np.mean(exact < q - 1e-9) <= p + eps, (dataset, model, p)
                assert np.mean(exact <= q + 1e-9) >= p - eps, (dataset, model, p)


def test_pooled_sd_zero_is_one() -> None:
    data = {
        ("da", "t", "flat"): {"A": [0.5] * 4, "B": [0.5] * 4},
        ("da", "t", "one-model"): {"A": [0.7, 0.7, 0.7]},
    }
    result = euroeval_rank(iterations_from_frame(_frame(data)), n_bootstraps=100)
    rows = result.datasets
    assert (rows["pooled_sd"] == 1.0).all()
    assert (rows["plug_in"] == 1.0).all() and (rows["score"] == 1.0).all()
    assert (rows["low"] == 1.0).all() and (rows["high"] == 1.0).all()
    # equal scores but different models: pooled SD > 0 when the iterations differ
    data = {("da", "t", "d"): {"A": [1.0, 3.0], "B": [2.0, 2.0]}}
    rows = euroeval_rank(iterations_from_frame(_frame(data)), n_bootstraps=10).datasets
    assert rows["pooled_sd"].iloc[0] == pytest.approx(np.std([1.0, 3.0, 2.0, 2.0]))


# -- aggregation ---------------------------------------------------------------------------


def test_combine_intervals_formula() -> None:
    scores, half = np.array([1.2, 1.5, 2.0]), np.array([0.3, 0.4, 0.1])
    score, h = combine_intervals(scores, half, Z95)
    assert score == pytest.approx(4.7 / 3, rel=1e-12)
    v = (half / Z95) ** 2
    assert h == pytest.approx(Z95 * np.sqrt(v.sum()) / 3, rel=1e-12)
    assert h == pytest.approx(np.sqrt(0.26) / 3, rel=1e-12)  # z cancels
    assert combine_intervals(np.array([2.0]), np.array([0.5]), Z95) == pytest.approx((2.0, 0.5))


def test_hierarchy_dataset_task_language_overall() -> None:
    result = euroeval_rank(_table(), n_bootstraps=200, seed=1)
    d = result.datasets

    def combine(frame: pd.DataFrame) -> tuple[float, float]:
        half = (frame["high"] - frame["low"]).to_numpy() / 2
        n = len(frame)
        return frame["score"].mean(), Z95 * np.sqrt(((half / Z95) ** 2).sum()) / n

    tasks = result.tasks.set_index(["language", "task", "model"])
    task_rows = []
    for (language, task, model), group in d.groupby(["language", "task", "model"]):
        score, h = combine(group)
        assert len(group) == 2
        row = tasks.loc[(language, task, model)]
        assert (row["score"], row["low"], row["high"]) == pytest.approx(
            (score, score - h, score + h), rel=1e-12
        )
        task_rows.append(
            {"language": language, "model": model, "score": score, "low": score - h,
             "high": score + h}
        )  # fmt: skip
    languages = result.languages.set_index(["language", "model"])
    language_rows = []
    for (language, model), group in pd.DataFrame(task_rows).groupby(["language", "model"]):
        score, h = combine(group)
        row = languages.loc[(language, model)]
        assert (row["score"], row["low"], row["high"]) == pytest.approx(
            (score, score - h, score + h), rel=1e-12
        )
        language_rows.append({"model": model, "score": score, "low": score - h, "high": score + h})
    overall = result.overall.set_index("model")
    for model, group in pd.DataFrame(language_rows).groupby("model"):
        score, h = combine(group)
        row = overall.loc[model]
        assert (row["score"], row["low"], row["high"]) == pytest.approx(
            (score, score - h, score + h), rel=1e-12
        )
    assert list(overall.sort_values("score").index) == ["A", "B", "C"]


# -- methods, options, other inputs --------------------------------------------------------


def test_method_names_and_the_superseded_method() -> None:
    assert resolve_method("current") == resolve_method("2026-05-28") == "2026-05-28"
    assert resolve_method("legacy-2025") == resolve_method("2025") == "2025"
    with pytest.raises(InputError, match="legacy-2025"):
        resolve_method("2024")
    legacy = euroeval_rank(_table(), method="legacy-2025")
    assert legacy.settings()["superseded"] is True
    assert legacy.overall["low"].isna().all()
    assert any("superseded" in note for note in legacy.notes)
    # 2025: a model not significantly worse than the best shares its score 1
    sentiment = legacy.datasets.set_index(["dataset", "model"])["score"]
    assert sentiment[("sentiment-da-1", "A")] == sentiment[("sentiment-da-1", "B")] == 1.0


def test_seed_and_number_of_resamples_are_options() -> None:
    a = euroeval_rank(_table(), n_bootstraps=300, seed=0).overall
    b = euroeval_rank(_table(), n_bootstraps=300, seed=0).overall
    c = euroeval_rank(_table(), n_bootstraps=300, seed=1).overall
    pd.testing.assert_frame_equal(a, b)
    assert not np.allclose(a["score"], c["score"])
    with pytest.raises(InputError, match="at least 1"):
        euroeval_rank(_table(), n_bootstraps=0)


def test_several_seeds_use_seed_i_replicate_i() -> None:
    rows = [
        {"model": m, "language": "da", "seed": s, "replicate": b, "score": 10 * s + b + off}
        for m, off in (("A", 0.0), ("B", -5.0))
        for s in range(3)
        for b in range(4)
    ]
    table = iterations_from_frame(pd.DataFrame(rows))
    np.testing.assert_array_equal(table.scores[0, 0], [0.0, 11.0, 22.0])
    # the same iterations as analyze ranks takes from ReplicatedScores
    ranks = api.analyze_ranks(
        replicates_from_frame(pd.DataFrame(rows)),
        DrawSettings(n_draws=50),
        rank_bootstraps=200,
    )
    direct = euroeval_rank(table, n_bootstraps=200).overall.set_index("model")["score"]
    got = ranks.summary.query("aggregator == 'mean'").set_index("model")["euroeval_rank_score"]
    pd.testing.assert_series_equal(got, direct, check_names=False)


def test_ready_sds_use_the_exact_pooled_sd_and_a_normal_interval() -> None:
    """Pooled SD from means, SDs and n equals np.std of explicit iterations with them."""
    z = np.array([-1.5, -0.5, 0.0, 0.5, 1.5])
    z = (z - z.mean()) / z.std(ddof=1)
    a, b = 80 + 2 * z, 70 + 3 * z
    frame = pd.DataFrame(
        {"model": ["a", "b"], "language": ["de", "de"], "score": [80.0, 70.0],
         "sigma_w": [2.0, 3.0], "n_seeds": [5, 5]}
    )  # fmt: skip
    table = iterations_from_components(components_from_summary(frame), [0])
    result = euroeval_rank(table)
    pooled = np.std(np.concatenate([a, b]))
    rows = result.datasets.set_index("model")
    assert rows.loc["b", "pooled_sd"] == pytest.approx(pooled, rel=1e-12)
    assert rows.loc["b", "score"] == pytest.approx(1 + 10 / pooled, rel=1e-12)
    half = Z95 * np.std(b) / np.sqrt(5) / pooled
    assert rows.loc["b", "high"] - rows.loc["b", "score"] == pytest.approx(half, rel=1e-6)
    assert any("normal approximation" in note for note in result.notes)


# -- EuroEval's own result files through the CLI ---------------------------------------------

FIXTURE = Path(__file__).parents[1] / "fixtures/importers/euroeval/euroeval_benchmark_results.jsonl"
PRIMARY = {
    "sentiment-classification": "test_mcc",
    "named-entity-recognition": "test_micro_f1_no_misc",
}


def _fixture_iterations() -> dict[tuple[str, str, str], dict[str, list[float]]]:
    """The fixture's raw iteration scores of each dataset's primary metric, read with json."""
    data: dict[tuple[str, str, str], dict[str, list[float]]] = {}
    for line in FIXTURE.read_text().splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        key = ("+".join(record["languages"]), record["task"], record["dataset"])
        metric = PRIMARY[record["task"]]
        data.setdefault(key, {})[record["model"]] = [r[metric] for r in record["results"]["raw"]]
    return data


def _json(result: CliResult) -> dict[str, Any]:
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.slow
def test_euroeval_results_through_the_cli(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    store = tmp_path / "r.duckdb"
    assert cli("import", "euroeval", FIXTURE, "--store", store).exit_code == 0
    args = ("analyze", "euroeval-rank", "--store", store, "--metric", "mcc")
    payload = _json(cli(*args, "--metric", "micro_f1_no_misc", "--bootstraps", "500", "--json"))
    assert set(payload) == {
        "settings",
        "overall",
        "languages",
        "tasks",
        "datasets",
        "metrics",
        "notes",
    }
    assert payload["settings"] == {
        "method": "2026-05-28",
        "superseded": False,
        "n_bootstraps": 500,
        "seed": 0,
        "confidence_level": 0.95,
    }
    data = _fixture_iterations()
    expected = _reference_bootstrap(data, 500, 0)
    assert len(payload["datasets"]) == 4
    for row in payload["datasets"]:
        per_model = data[(row["language"], row["task"], row["dataset"])]
        everything = np.concatenate([np.asarray(v) for v in per_model.values()])
        best = max(np.mean(v) for v in per_model.values())
        mean = np.mean(per_model[row["model"]])
        assert row["n_iterations"] == 10
        assert row["pooled_sd"] == pytest.approx(np.std(everything), rel=1e-9)
        assert row["plug_in"] == pytest.approx(1 + (best - mean) / np.std(everything), rel=1e-9)
        median, low, high = expected[(row["dataset"], row["model"])]
        assert (row["score"], row["low"], row["high"]) == pytest.approx((median, low, high))
    for row in payload["overall"]:
        assert row["low"] < row["score"] < row["high"] and row["n"] == 2
    # the terminal shows the interval too
    text = cli(*args, "--metric", "micro_f1_no_misc")
    assert text.exit_code == 0 and "low" in text.stdout and "high" in text.stdout
    # the superseded method on request
    legacy = _json(cli(*args, "--rank-method", "legacy-2025", "--json"))
    assert legacy["settings"]["method"] == "2025" and legacy["settings"]["superseded"]
    assert all(r["low"] is None for r in legacy["overall"])
    assert any("datasets without metric mcc" in n for n in legacy["notes"])
    # without --metric: each task's declared primary metric, as EuroEval ranks it
    default = _json(
        cli("analyze", "euroeval-rank", "--store", store, "--bootstraps", "500", "--json")
    )
    assert default["metrics"] == {"angry-tweets": "mcc", "norne-nb": "micro_f1_no_misc"}
    assert default["datasets"] == payload["datasets"]
    assert {r["metric"] for r in default["datasets"]} == {"mcc", "micro_f1_no_misc"}
    # the terminal names each dataset's metric
    assert "micro_f1_no_misc" in cli("analyze", "euroeval-rank", "--store", store).stdout
    result = cli(*args, "--rank-method", "2024")
    assert result.exit_code != 0 and "legacy-2025" in result.err


def test_analyze_ranks_options(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    path = tmp_path / "scores.csv"
    first = {k: v for k, v in ITERATIONS.items() if k[2].endswith("-1")}  # one per task/language
    _frame(first).drop(columns="dataset").to_csv(path, index=False)
    base = ("analyze", "ranks", "--input", path, "--draws", "200", "--json")
    payload = _json(cli(*base, "--rank-bootstraps", "300"))
    assert payload["euroeval_rank"]["method"] == "2026-05-28"
    assert payload["euroeval_rank"]["n_bootstraps"] == 300
    for row in payload["summary"]:
        assert row["euroeval_rank_low"] <= row["euroeval_rank_score"] <= row["euroeval_rank_high"]
    legacy = _json(cli(*base, "--rank-method", "legacy-2025"))
    assert legacy["euroeval_rank"]["superseded"] is True
    assert all(row["euroeval_rank_low"] is None for row in legacy["summary"])


@pytest.mark.slow
def test_a_plain_metric_off_the_primary_is_named_and_task_overrides_work(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """NER scored on micro_f1 (with MISC) instead of EuroEval's micro_f1_no_misc is said
    in a note and in the per-dataset metric; TASK=METRIC overrides one task only."""
    store = tmp_path / "r.duckdb"
    assert cli("import", "euroeval", FIXTURE, "--store", store).exit_code == 0
    base = ("analyze", "euroeval-rank", "--store", store, "--bootstraps", "200", "--json")
    plain = _json(cli(*base, "--metric", "mcc", "--metric", "micro_f1"))
    assert plain["metrics"] == {"angry-tweets": "mcc", "norne-nb": "micro_f1"}
    assert any("not its declared primary metric 'micro_f1_no_misc'" in n for n in plain["notes"])
    override = _json(cli(*base, "--metric", "named-entity-recognition=micro_f1"))
    assert override["metrics"] == plain["metrics"]
    # the NER rows are scored on micro_f1: their means are the fixture's micro_f1 iterations
    raw = {}
    for line in FIXTURE.read_text().splitlines():
        if line.strip():
            rec = json.loads(line)
            if rec["dataset"] == "norne-nb":
                raw[rec["model"]] = np.mean([r["test_micro_f1"] for r in rec["results"]["raw"]])
    for row in override["datasets"]:
        if row["dataset"] == "norne-nb":
            assert row["mean"] == pytest.approx(raw[row["model"]], rel=1e-9)
    # an unknown metric names the valid ones, and no invalid hint
    bad = cli(*base, "--metric", "accuracy")
    assert bad.exit_code != 0 and "micro_f1_no_misc" in bad.err
    assert "--metric micro_f1 " not in bad.err
    bad = cli(*base, "--metric", "named-entity-recognition=mcc")
    assert bad.exit_code != 0 and "micro_f1_no_misc" in bad.err


def test_help_suggests_only_valid_metrics(cli: Callable[..., CliResult]) -> None:
    text = cli("analyze", "euroeval-rank", "--help").stdout
    assert "micro_f1_no_misc" in " ".join(text.split())
    assert "--metric mcc --metric micro_f1)" not in text


def test_the_sd_of_euroeval_iterations_is_sigma_w_not_a_bootstrap_sd(tmp_path: Path) -> None:
    """Each EuroEval iteration is a new seed *and* a bootstrapped test set, so the SD over
    iterations is σ_w (seed + bootstrap): sigma_w is the sample SD (ddof 1) of the fixture's
    iterations (fractions), read with json; sigma_seed and sigma_boot are missing, and a note
    says why."""
    from glotbench.analysis.sources.inputs import load_replicated
    from glotbench.importers.euroeval import import_euroeval
    from glotbench.store import Store

    store = tmp_path / "r.duckdb"
    with Store.open(store) as handle:
        import_euroeval(handle, FIXTURE)
    result = api.analyze_variance(load_replicated(store=store))
    data = _fixture_iterations()
    by_cell = {(lang, task): per_model for (lang, task, _), per_model in data.items()}
    rows = result.per_unit.to_dict("records")
    assert len(rows) == 4
    for row in rows:
        iterations = np.asarray(by_cell[(row["language"], row["task"])][row["model"]])
        assert row["sigma_w"] == pytest.approx(np.std(iterations, ddof=1), rel=1e-9)
        assert row["se_sigma_w"] == pytest.approx(
            np.std(iterations, ddof=1) / np.sqrt(2 * (len(iterations) - 1)), rel=1e-9
        )
        assert np.isnan(row["sigma_boot"]) and np.isnan(row["sigma_seed"])
    assert any("sigma_w (seed + bootstrap)" in note for note in result.notes)


def test_ranks_and_euroeval_rank_draw_the_same_units_the_same_way() -> None:
    """Issue 22: under one seed, ``analyze ranks`` (units ordered by task, then language,
    named task/language) and ``analyze euroeval-rank`` (datasets ordered by language, task,
    dataset, with their own names) give every model the same bootstrap on the same unit;
    adding a model moves no other model's interval width (its own resamples are unchanged)."""
    from glotbench.analysis.ranks import rank_models

    one_per_unit = {k: v for k, v in ITERATIONS.items() if k[2].endswith("-1")}
    frame = _frame(one_per_unit)
    direct = euroeval_rank(iterations_from_frame(frame), n_bootstraps=300, seed=4).datasets
    through_ranks = rank_models(
        replicates_from_frame(frame.drop(columns="dataset")),
        DrawSettings(n_draws=50, seed=4),
        aggregators=("mean",),
        rank_bootstraps=300,
    ).euroeval.datasets
    key = ["task", "language", "model"]
    left = direct.set_index(key).sort_index()
    right = through_ranks.set_index(key).sort_index()
    assert len(left) == len(right) > 0
    for column in ("score", "low", "high"):
        np.testing.assert_allclose(left[column], right[column], rtol=1e-12)
    # without model C, A's and B's resamples are the same draws: the rank score moves
    # only through best and the pooled SD, an affine map 1 + (best − x̄*)/sd
    fewer = euroeval_rank(
        iterations_from_frame(frame[frame["model"] != "C"]), n_bootstraps=300, seed=4
    ).datasets.set_index(key)
    for (task, language, model), row in fewer.iterrows():
        full = left.loc[(task, language, model)]
        # x̄* = best − (score − 1)·sd is the resampled mean: identical in both runs
        resampled = row["best"] - (row["score"] - 1) * row["pooled_sd"]
        assert resampled == pytest.approx(full["best"] - (full["score"] - 1) * full["pooled_sd"])


def test_dataset_rank_scores_equal_the_model_by_model_bootstrap() -> None:
    """The medians and percentiles, taken in one call along the models' rows, are the
    floats of the per-model bootstrap written out model by model."""
    from glotbench.analysis.euroeval_rank import dataset_rank_scores, pooled_sd

    rng = np.random.default_rng(3)
    iterations = rng.normal(0.6, 0.05, (9, 10))
    iterations[2, 4:] = np.nan  # fewer iterations
    iterations[5] = np.nan  # no scores
    iterations[7, 1:] = np.nan  # one iteration: resampled without drawing
    generators = [np.random.default_rng(100 + m) for m in range(9)]
    got = dataset_rank_scores(iterations, 500, generators)
    made: list[int] = []

    def on_demand(m: int) -> np.random.Generator:
        made.append(m)
        return np.random.default_rng(100 + m)

    lazy = dataset_rank_scores(iterations, 500, on_demand)
    assert made == [0, 1, 2, 3, 4, 6, 8]  # none for the one-iteration model or the absent one
    for key in ("score", "low", "high"):
        np.testing.assert_array_equal(lazy[key], got[key])
    assert np.isnan(got["score"][5]) and np.isnan(got["low"][5])
    best, spread = float(np.nanmax(got["mean"])), pooled_sd(iterations)
    for m in (0, 1, 2, 3, 4, 6, 7, 8):
        x = iterations[m][np.isfinite(iterations[m])]
        idx = np.random.default_rng(100 + m).integers(0, x.size, size=(500, x.size))
        boot = 1 + (best - x[idx].mean(axis=1)) / spread
        assert got["score"][m] == np.median(boot)
        alpha = (1 - 0.95) / 2  # as the function computes its percentiles
        expected = np.percentile(boot, [100 * alpha, 100 * (1 - alpha)])
        assert [got["low"][m], got["high"][m]] == list(expected)


def test_dataset_rank_scores_batched_models_equal_model_by_model() -> None:
    """Consecutive models with equal iteration counts are resampled in batches (across
    a batch boundary here, and in runs split by models with fewer iterations), and
    summed columns first in numpy's order; every float equals the model-by-model
    bootstrap ``x[idx].mean(axis=1)``, for short rows (one by one), rows of 8 to 128
    (pairwise) and longer ones, also when one generator serves all models in turn."""
    from glotbench.analysis import euroeval_rank as er

    rng = np.random.default_rng(4)
    equal = rng.normal(0.6, 0.05, (er.MODEL_BATCH + 3, 5))
    mixed = equal.copy()
    mixed[[3, 4, 9], 3:] = np.nan  # runs of 3 iterations between runs of 5
    mixed[er.MODEL_BATCH + 1, 2:] = np.nan
    ten = rng.normal(0.6, 0.05, (er.MODEL_BATCH + 3, 10))  # EuroEval's ten iterations
    ten[[1, 5], 9:] = np.nan
    longer = rng.normal(0.6, 0.05, (4, er.MAX_ROW + 2))  # summed by numpy itself
    longer[1, 20:] = np.nan
    for iterations in (equal, mixed, ten, longer):
        best, spread = float(np.nanmax(np.nanmean(iterations, axis=1))), er.pooled_sd(iterations)
        per_model = er.dataset_rank_scores(iterations, 300, lambda m: np.random.default_rng([7, m]))
        shared = er.dataset_rank_scores(iterations, 300, np.random.default_rng(8))
        one = np.random.default_rng(8)
        for m, row in enumerate(iterations):
            x = row[np.isfinite(row)]
            for got, generator in ((per_model, np.random.default_rng([7, m])), (shared, one)):
                idx = generator.integers(0, x.size, size=(300, x.size))
                boot = 1 + (best - x[idx].mean(axis=1)) / spread
                assert got["score"][m] == np.median(boot)
                alpha = (1 - 0.95) / 2  # as the function computes its percentiles
                expected = np.percentile(boot, [100 * alpha, 100 * (1 - alpha)])
                assert [got["low"][m], got["high"][m]] == list(expected)


@pytest.mark.parametrize("n_bootstraps", [1, 2, 301, 1000])
def test_dataset_rank_scores_median_is_numpys_for_odd_and_even_resamples(n_bootstraps: int) -> None:
    """The median is read from the sorted resamples: numpy's median, for any B."""
    from glotbench.analysis import euroeval_rank as er

    iterations = np.random.default_rng(11).normal(0.6, 0.05, (6, 10))
    got = er.dataset_rank_scores(iterations, n_bootstraps, lambda m: np.random.default_rng([3, m]))
    best, spread = float(np.nanmax(iterations.mean(axis=1))), er.pooled_sd(iterations)
    for m, x in enumerate(iterations):
        idx = np.random.default_rng([3, m]).integers(0, x.size, size=(n_bootstraps, x.size))
        assert got["score"][m] == np.median(1 + (best - x[idx].mean(axis=1)) / spread)
