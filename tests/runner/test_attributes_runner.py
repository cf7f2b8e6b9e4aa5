"""The runner stores built-in attributes; `analyze buckets --store` uses them without a file."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from glotbench.cli import app
from glotbench.cli._words import cli_words
from glotbench.runner.datasets import Dataset
from glotbench.runner.tasks import get_task
from glotbench.store import Store

from .conftest import write_suite

runner = CliRunner()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("attrs")
    suite = write_suite(folder, iterations=1)
    path = folder / "s.duckdb"
    args = ["run", str(suite), "--store", str(path), "--json"]
    for model in ("lr", "majority", "tagger"):
        args += ["--model", model]
    out = runner.invoke(app, args)
    assert out.exit_code == 0, out.output
    return path


@pytest.mark.slow
def test_runner_stores_attributes_and_units_that_add_up(store: Path) -> None:
    with Store.open(store, read_only=True) as handle:
        sent, sent_units = handle.attributes.read("sent")
        ner, ner_units = handle.attributes.read("ner")
        assert set(sent.columns) == {"sentence_length", "oov_rate", "label"} and sent_units.empty
        # write_tagging: odd ids "the cat sees Oslo" (LOC at 3), even "a dog likes Bergen now"
        expected = [4 if int(i[1:]) % 2 else 5 for i in ner.index]
        assert ner["sentence_length"].tolist() == expected and len(expected) == 20
        assert ner["oov_rate"].eq(0).all()  # every test sentence also occurs in train
        gold_units = ner_units.loc[[(i, "3:3:LOC") for i in ner.index]]
        assert gold_units["entity_length"].eq(1).all()
        assert gold_units["entity_label"].eq("LOC").all()
        assert gold_units["entity_oov"].eq(0.0).all()
        for metric in ("ner_f1", "ner_f1_no_misc"):
            matrix = handle.stats.matrix("ner", "ner", "en", metric)
            units = handle.attributes.unit_stats(matrix.run_ids)
            for i, run_id in enumerate(matrix.run_ids):
                part = units[units.run_id == run_id]
                total = np.sum([np.asarray(v) for v in part.stats], axis=0)
                np.testing.assert_array_equal(total, matrix.stats[i].sum(axis=0))


@pytest.mark.slow
def test_analyze_buckets_from_the_store_without_a_file(store: Path) -> None:
    base = ["analyze", "buckets", "--store", str(store), "--task", "ner", "--language", "en"]
    out = runner.invoke(app, [*base, "--metric", "ner_f1", "--replicates", "200", "--json"])
    assert out.exit_code == 0, out.output
    payload = json.loads(out.stdout)
    buckets = payload["buckets"]
    assert {b["attribute"] for b in buckets} == {
        "sentence_length",
        "oov_rate",
        "entity_length",
        "entity_label",
        "entity_oov",
    }
    with Store.open(store, read_only=True) as handle:
        matrix = handle.stats.matrix("ner", "ner", "en", "ner_f1")
        overall = dict(zip(matrix.models, matrix.scores(), strict=True))
    # every entity is a one-token LOC: the LOC bucket is the whole test set
    for row in buckets:
        if row["attribute"] == "entity_label":
            assert row["bucket"] == "LOC"
            assert row["score"] == pytest.approx(overall[row["system"]])
            assert row["ci_low"] <= row["score"] <= row["ci_high"]
    assert payload["pairwise"] and payload["diagnosis"]
    one = runner.invoke(
        app, [*base, "--metric", "ner_f1", "--attribute", "entity_length", "--json"]
    )
    assert {b["attribute"] for b in json.loads(one.stdout)["buckets"]} == {"entity_length"}


def test_analyze_sentiment_buckets_by_gold_label(store: Path) -> None:
    out = runner.invoke(
        app,
        [
            "analyze", "buckets", "--store", str(store), "--task", "sentiment",
            "--language", "en", "--metric", "f1_macro", "--attribute", "label",
            "--replicates", "100", "--json",
        ],
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    rows = json.loads(out.stdout)["buckets"]
    assert {r["bucket"] for r in rows} == {"pos", "neg"}
    assert sum(r["n_examples"] for r in rows if r["system"] == "lr") == 40


def test_a_store_without_attributes_asks_for_a_file(tmp_path: Path) -> None:
    from glotbench.store import RunRecord

    path = tmp_path / "plain.duckdb"
    with Store.open(path) as handle:
        record = RunRecord(
            model="m", dataset="d", task="t", language="en", metric="accuracy",
            stat_names=("correct", "total"),
        )  # fmt: skip
        handle.runs.write(record, ["a", "b"], np.array([[1.0, 1.0], [0.0, 1.0]]))
    out = runner.invoke(
        app,
        ["analyze", "buckets", "--store", str(path), "--task", "t", "--language", "en",
         "--metric", "accuracy"],
    )  # fmt: skip
    # the library names its parameter; the command line shows its option
    assert out.exit_code != 0 and "attributes=FILE" in str(out.exception)
    assert "--attributes FILE" in cli_words(str(out.exception))


def test_qa_attributes_by_hand() -> None:
    qa = get_task("qa")
    test = [
        {"id": "q1", "question": "Who lives in Oslo?", "context": "Kari lives in Oslo now",
         "answers": ["Kari"]},
        {"id": "q2", "question": "In which city does Kari live?", "context": "Kari bor i Oslo",
         "answers": ["Oslo city"]},
    ]  # fmt: skip
    ds = Dataset("d", "qa", "en", [], [], test, ())
    rows = {(r["example_id"], r["attribute"]): r["value"] for r in qa.example_attributes(ds)}
    assert rows == {
        ("q1", "context_length"): 5,
        ("q1", "question_length"): 4,
        ("q1", "answer_length"): 1,
        ("q1", "question_word"): "who",
        ("q2", "context_length"): 4,
        ("q2", "question_length"): 6,
        ("q2", "answer_length"): 2,
        ("q2", "question_word"): "which",
    }
    unknown = Dataset("d", "qa", "ja", [], [], test[:1], ())
    assert {r["attribute"] for r in qa.example_attributes(unknown)} == {
        "context_length",
        "question_length",
        "answer_length",
    }


def test_classification_attributes_by_hand() -> None:
    task = get_task("nli")
    train = [{"id": "a", "text": "a dog runs", "text_pair": "an animal moves", "label": "yes"}]
    test = [{"id": "t", "text": "a cat runs", "text_pair": "a pet sleeps", "label": "no"}]
    ds = Dataset("d", "nli", "en", train, [], test, ("no", "yes"))
    rows = {r["attribute"]: r["value"] for r in task.example_attributes(ds)}
    # six tokens; cat, pet, sleeps unseen in train
    assert rows == {"sentence_length": 6, "oov_rate": 0.5, "label": "no"}


@pytest.mark.slow
def test_a_file_adds_to_the_stored_attributes(store: Path, tmp_path: Path) -> None:
    from glotbench import api

    with Store.open(store, read_only=True) as handle:
        ids = list(handle.stats.matrix("sent", "sentiment", "en", "mcc").example_ids)
    extra = pd.DataFrame({"example_id": ids, "label": ["x"] * len(ids), "mine": range(len(ids))})
    extra.to_csv(tmp_path / "a.csv", index=False)
    result = api.analyze_buckets(
        store=store,
        attributes=tmp_path / "a.csv",
        task="sentiment",
        language="en",
        metric="f1_macro",
        n_resamples=50,
    )
    table = result.buckets
    assert set(table.attribute) == {"sentence_length", "oov_rate", "label", "mine"}
    assert set(table[table.attribute == "label"].bucket) == {"x"}  # the file's column wins


def test_units_that_do_not_add_up_are_noted() -> None:
    from glotbench.analysis.buckets import analyze_buckets
    from glotbench.metrics import get_metric

    stats = np.array([[[1.0, 1.0, 1.0], [0.0, 1.0, 2.0]]])
    units = pd.DataFrame(
        {"run_id": ["r"], "example_id": ["a"], "unit": ["0:0:PER"], "stats": [[1.0, 1.0, 1.0]]}
    )
    attrs = pd.DataFrame(
        {"entity_label": ["PER"]},
        index=pd.MultiIndex.from_tuples([("a", "0:0:PER")], names=["example_id", "unit"]),
    )
    result = analyze_buckets(
        stats,
        get_metric("ner_f1"),
        pd.DataFrame(index=pd.Index(["a", "b"], name="example_id")),
        systems=["m"],
        example_ids=["a", "b"],
        unit_attributes=attrs,
        unit_stats=units,
        run_ids=["r"],
        n_resamples=20,
    )
    assert any("do not add up" in note for note in result.notes)
    assert result.buckets.score.item() == 1.0
