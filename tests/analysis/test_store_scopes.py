"""Store analyses find their own scope (issue 22.6): one matching test set is used, several
are each analysed, none is an error that lists what the store holds."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from glotbench import api
from glotbench.analysis.datasize import datasize_analysis
from glotbench.analysis.sources.datasize_store import datasize_inputs_from_store
from glotbench.analysis.sources.scopes import ScopedResults, store_scopes
from glotbench.errors import InputError
from glotbench.store import Store

from ..conftest import CliResult

SIZES = (10, 20, None)


def _examples(path: Path, languages: tuple[str, ...], task: str = "xnli") -> None:
    rng = np.random.default_rng(7)
    rows = []
    for model, p in (("a", 0.8), ("b", 0.6), ("c", 0.4)):
        for language in languages:
            for i in range(40):
                rows.append(
                    {"model": model, "task": task, "language": language, "seed": 0,
                     "example_id": f"{language}-{i}", "metric": "accuracy",
                     "score": float(rng.random() < p)}
                )  # fmt: skip
    pd.DataFrame(rows).to_json(path, orient="records", lines=True)


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("scopes")
    out = {}
    for name, languages in (("one", ("en",)), ("two", ("de", "en"))):
        _examples(root / f"{name}.jsonl", languages)
        out[name] = root / f"{name}.duckdb"
        api.import_examples(root / f"{name}.jsonl", store=out[name])
    return out


def _direct(store: Path, language: str) -> object:
    with Store.open(store, read_only=True) as handle:
        inputs = datasize_inputs_from_store(handle, "xnli", "xnli", language, "accuracy")
    return datasize_analysis(
        inputs.stats, inputs.metric, models=inputs.models, tokens=inputs.tokens, sizes=SIZES,
        n_draws=20, seed=0, aso=False, order=inputs.order,
    )  # fmt: skip


@pytest.mark.slow
def test_one_matching_test_set_is_used(stores: dict[str, Path]) -> None:
    result = api.analyze_datasize(
        store=stores["one"], metric="accuracy", language="en", sizes=SIZES, n_draws=20, aso=False
    )
    assert not isinstance(result, ScopedResults)
    expected = _direct(stores["one"], "en")
    pd.testing.assert_frame_equal(result.table, expected.table)  # type: ignore[attr-defined]
    assert any("the only stored test set matching" in n for n in result.notes)
    # no filter at all: the metric is the only one stored
    alone = api.analyze_datasize(store=stores["one"], sizes=SIZES, n_draws=20, aso=False)
    pd.testing.assert_frame_equal(alone.table, expected.table)  # type: ignore[attr-defined]


def test_several_matching_test_sets_are_each_analysed(stores: dict[str, Path]) -> None:
    result = api.analyze_datasize(
        store=stores["two"], metric="accuracy", sizes=SIZES, n_draws=20, aso=False
    )
    assert isinstance(result, ScopedResults)
    assert [s.language for s in result.scopes] == ["de", "en"]
    for scope, one in result:
        expected = _direct(stores["two"], scope.language)
        pd.testing.assert_frame_equal(one.table, expected.table)
    payload = result.to_dict()
    assert [p["scope"]["language"] for p in payload["scopes"]] == ["de", "en"]
    assert "table" in payload["scopes"][0]["result"]
    frame = result.to_frame()
    assert list(frame.columns[:4]) == ["dataset", "task", "language", "metric"]
    assert any("2 stored test sets match" in n for n in result.notes)


def test_no_match_lists_what_the_store_holds(stores: dict[str, Path]) -> None:
    with Store.open(stores["two"], read_only=True) as handle:
        with pytest.raises(InputError, match=r"xnli \(xnli/de, accuracy\)"):
            store_scopes(handle, language="fr")
        with pytest.raises(InputError, match="metric 'las'"):
            store_scopes(handle, metric="las")
        # task names through the alias table: 'panx' would find 'wikiann-ner' runs
        scopes, _ = store_scopes(handle, task="xnli", language="de")
        assert [(s.dataset, s.task, s.language, s.metric) for s in scopes] == [
            ("xnli", "xnli", "de", "accuracy")
        ]


def test_buckets_of_every_matching_test_set(stores: dict[str, Path]) -> None:
    ids = [f"{lang}-{i}" for lang in ("de", "en") for i in range(40)]
    attributes = pd.DataFrame(
        {"example_id": ids, "length": [float(i % 7) for i in range(len(ids))]}
    ).set_index("example_id")
    kwargs = {"attributes": attributes, "n_resamples": 50, "n_buckets": 2, "seed": 1}
    both = api.analyze_buckets(store=stores["two"], **kwargs)
    assert isinstance(both, ScopedResults) and len(both) == 2
    for scope, one in both:
        alone = api.analyze_buckets(
            store=stores["two"], task="xnli", language=scope.language, metric="accuracy",
            **kwargs,
        )  # fmt: skip
        assert not isinstance(alone, ScopedResults)
        pd.testing.assert_frame_equal(one.buckets, alone.buckets)


def test_datasize_cli_analyses_each_language(
    stores: dict[str, Path], cli: Callable[..., CliResult]
) -> None:
    result = cli("analyze", "datasize", "--store", stores["two"], "--metric", "accuracy",
                 "--sizes", "10,all", "--draws", "10", "--no-aso", "--json")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert [p["scope"]["language"] for p in payload["scopes"]] == ["de", "en"]
    one = cli(
        "analyze",
        "datasize",
        "--store",
        stores["two"],
        "--metric",
        "accuracy",
        "--language",
        "en",
        "--sizes",
        "10,all",
        "--draws",
        "10",
        "--no-aso",
        "--json",
    )
    assert one.exit_code == 0, one.stderr
    assert "table" in json.loads(one.stdout)


@pytest.mark.slow
def test_lmm_fits_each_metric_of_the_store(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    rng = np.random.default_rng(5)
    rows = [
        {"model": m, "task": task, "language": lang, "metric": metric, "seed": s,
         "score": base + 0.02 * rng.normal()}
        for task, metric in (("xnli", "accuracy"), ("pawsx", "f1_macro"))
        for m, base in (("A", 0.8), ("B", 0.7), ("C", 0.6))
        for lang in ("de", "en", "fr", "es")
        for s in range(2)
    ]  # fmt: skip
    pd.DataFrame(rows).to_csv(tmp_path / "s.csv", index=False)
    store = tmp_path / "s.duckdb"
    assert cli("import", "scores", tmp_path / "s.csv", "--store", store).exit_code == 0
    args = ("analyze", "lmm", "--store", store, "-f", "score ~ model + (1 | language)", "--json")
    both = cli(*args)
    assert both.exit_code == 0, both.stderr
    payload = json.loads(both.stdout)
    assert [p["scope"]["metric"] for p in payload["scopes"]] == ["accuracy", "f1_macro"]
    assert "a mixed model is fitted for each" in payload["notes"][0]
    for entry in payload["scopes"]:
        alone = cli(*args, "--metric", entry["scope"]["metric"])
        assert alone.exit_code == 0, alone.stderr
        assert entry["result"]["fixed_effects"] == json.loads(alone.stdout)["fixed_effects"]
