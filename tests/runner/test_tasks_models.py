from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from glotbench.runner.datasets import Dataset, build_dataset
from glotbench.runner.errors import ModelError, UnknownNameError
from glotbench.runner.models import CallableModel, PredictionsFile, build_model
from glotbench.runner.tasks import get_task

from .conftest import write_sentiment, write_tagging


def _ds(task: str, test, train=(), labels=(), pool=None) -> Dataset:
    return Dataset("d", task, "en", list(train), [], list(test), tuple(labels), pool=pool)


def test_unknown_names():
    with pytest.raises(UnknownNameError, match="unknown task 'nope'"):
        get_task("nope")
    with pytest.raises(UnknownNameError, match="unknown model kind"):
        build_model({"name": "x", "kind": "nope"})


def test_classification_statistics_use_dataset_labels():
    task = get_task("sentiment")
    test = [{"id": "1", "text": "a", "label": "pos"}, {"id": "2", "text": "b", "label": "neg"}]
    ds = _ds("sentiment", test, labels=("neg", "neu", "pos"))
    model = CallableModel("m", lambda texts: ["pos"] * len(texts))
    stats = task.statistics(task.predict(model, test, ds), test, ds)
    assert [s.name for s in stats] == ["mcc", "f1_macro"]
    assert stats[0].stats.shape == (2, 9)  # layout fixed by the dataset's 3 labels


def test_model_raising_on_one_item_names_it():
    task = get_task("sentiment")
    test = [
        {"id": "ok", "text": "fine", "label": "pos"},
        {"id": "bad-7", "text": "boom", "label": "pos"},
    ]
    model = build_model(
        {
            "name": "m",
            "kind": "callable",
            "options": {"target": "tests.runner.helpers_models:fails_on_boom"},
        }
    )
    with pytest.raises(ModelError, match="bad-7.*cannot handle"):
        task.predict(model, test, _ds("sentiment", test, labels=("pos",)))


def test_language_id_with_callable_factory():
    task = get_task("language_id")
    test = [
        {"id": "1", "text": "det er ikke", "label": "da"},
        {"id": "2", "text": "it is not", "label": "en"},
    ]
    model = build_model(
        {
            "name": "lid",
            "kind": "callable",
            "options": {"target": "tests.runner.helpers_models:make_langid", "factory": True},
        }
    )
    ds = _ds("language_id", test, labels=("da", "en"))
    stats = task.statistics(task.predict(model, test, ds), test, ds)
    assert stats[0].score() == 1.0


def test_ner_and_pos_with_tagger(tmp_path: Path):
    write_tagging(tmp_path / "ner.jsonl")
    ds = build_dataset(
        {
            "name": "n",
            "task": "ner",
            "language": "en",
            "loader": "jsonl",
            "paths": ["ner.jsonl"],
            "splits": {"train": 30, "validation": 5, "test": 20},
        },
        data_dir=tmp_path,
    )
    task = get_task("ner")
    model = build_model({"name": "t", "kind": "tagger"})
    model.fit(task, ds, ds.train, ds.validation, 0)
    stats = task.statistics(task.predict(model, ds.test, ds), ds.test, ds)
    assert [s.name for s in stats] == ["ner_f1", "ner_f1_no_misc"]
    assert stats[0].score() == 1.0
    pos = get_task("pos")
    rec = {"id": "1", "tokens": ["a", "b"], "tags": ["DET", "NOUN"]}
    out = pos.statistics([["DET", "VERB"]], [rec], _ds("pos", [rec]))
    assert out[0].stats.tolist() == [[1.0, 2.0]]


def test_text_classifiers_learn(tmp_path: Path):
    write_sentiment(tmp_path / "s.jsonl", n=200)
    ds = build_dataset(
        {
            "name": "s",
            "task": "sentiment",
            "language": "en",
            "loader": "jsonl",
            "paths": ["s.jsonl"],
            "splits": {"train": 120, "validation": 20, "test": 60},
        },
        data_dir=tmp_path,
    )
    task = get_task("sentiment")
    for kind in ("tfidf-logreg", "tfidf-nb", "tfidf-svm"):
        model = build_model({"name": kind, "kind": kind})
        model.fit(task, ds, ds.train, ds.validation, 0)
        assert task.statistics(task.predict(model, ds.test, ds), ds.test, ds)[1].score() > 0.9
    maj = build_model({"name": "maj", "kind": "majority"})
    maj.fit(task, ds, ds.train, ds.validation, 0)
    assert set(maj.predict_labels(["x", "y"])) <= {"neg", "pos"}


def test_qa_and_retrieval():
    qa = get_task("qa")
    test = [
        {
            "id": "q1",
            "question": "who?",
            "context": "Kari bor i Oslo",
            "answers": {"text": ["Kari"], "answer_start": [0]},
        }
    ]
    ds = _ds("qa", test)
    for r in test:
        qa.validate(r, "t")

    class Reader:
        name = "reader"

        def answer(self, questions, contexts):
            return [c.split()[0] for c in contexts]

    assert qa.statistics(qa.predict(Reader(), test, ds), test, ds)[0].score() == 1.0

    ret = get_task("retrieval", k=2)
    pool = [
        {"id": "p1", "text": "katten sover"},
        {"id": "p2", "text": "hunden løber"},
        {"id": "p3", "text": "bilen kører"},
    ]
    queries = [
        {"id": "a", "query": "the cat sleeps katten", "targets": ["p1"]},
        {"id": "b", "query": "the car bilen drives", "targets": ["p3", "p2"]},
    ]
    for r in queries:
        ret.validate(r, "t")
    ds = _ds("retrieval", queries, pool=pool)
    model = build_model({"name": "h", "kind": "hashing-embed"})
    preds = ret.predict(model, queries, ds)
    assert preds[0][0] == "p1" and preds[1][0] == "p3"
    acc, mapk = ret.statistics(preds, queries, ds)
    assert acc.score() == 1.0 and mapk.name == "map@2"


def test_predictions_files(tmp_path: Path):
    task = get_task("sentiment")
    test = [{"id": "1", "text": "a", "label": "pos"}, {"id": "2", "text": "b", "label": "neg"}]
    ds = _ds("sentiment", test, labels=("neg", "pos"))
    (tmp_path / "p.txt").write_text("pos\nneg\n", encoding="utf-8")
    model = PredictionsFile("f", tmp_path / "p.txt")
    model.fit(task, ds, [], [], 0)
    assert task.predict(model, test, ds) == ["pos", "neg"]
    (tmp_path / "short.txt").write_text("pos\n", encoding="utf-8")
    short = PredictionsFile("f", "short.txt", base=tmp_path)
    short.fit(task, ds, [], [], 0)
    with pytest.raises(ModelError, match="1 lines but the test split has 2"):
        task.predict(short, test, ds)
    (tmp_path / "p.jsonl").write_text(
        json.dumps({"id": "2", "prediction": "neg"}) + "\n", encoding="utf-8"
    )
    partial = PredictionsFile("f", tmp_path / "p.jsonl")
    partial.fit(task, ds, [], [], 0)
    with pytest.raises(ModelError, match="no prediction for 1 test item"):
        task.predict(partial, test, ds)


def test_parsing_from_conllu_predictions(shared_data: Path, tmp_path: Path):
    gold = shared_data / "ud" / "UD_Faroese-FarPaHC" / "fo_farpahc-ud-test.conllu"
    ds = build_dataset(
        {
            "name": "p",
            "task": "parsing",
            "language": "fo",
            "loader": "conllu",
            "paths": [str(gold)],
            "splits": {"train": 0, "validation": 0, "test": 5000},
        }
    )
    # predictions in test order: the gold file reordered, with every head set to 0
    import conllu

    from glotbench.runner.datasets.conllu import read_conllu

    by_id = {}
    with gold.open(encoding="utf-8") as handle:
        for sent in conllu.parse_incr(handle):
            by_id[f"{gold.stem}#{sent.metadata['sent_id']}"] = sent
    lines = []
    for rec in ds.test:
        sent = by_id[rec["id"]]
        for tok in sent:
            if isinstance(tok["id"], int) and tok["id"] % 2 == 0:
                tok["head"] = 0
        lines.append(sent.serialize())
    pred = tmp_path / "pred.conllu"
    pred.write_text("".join(lines), encoding="utf-8")
    assert len(list(read_conllu(pred))) == len(ds.test)
    task = get_task("parsing")
    model = build_model({"name": "parser", "kind": "predictions", "options": {"path": str(pred)}})
    model.fit(task, ds, [], [], 0)
    las, uas = task.statistics(task.predict(model, ds.test, ds), ds.test, ds)
    assert 0.3 < las.score() <= uas.score() < 0.9
    assert np.all(las.stats[:, 1] > 0)
