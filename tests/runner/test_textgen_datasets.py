"""SQuAD-layout and parallel-text loaders, the abstractive QA and translation tasks."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from glotbench.runner.datasets import Dataset, build_dataset, load_parallel, load_squad
from glotbench.runner.errors import DatasetError
from glotbench.runner.tasks import get_task


def write_squad(path: Path) -> Path:
    """Two articles; one SQuAD 2.0 unanswerable question; a question with two answers."""
    doc = {
        "version": "test",
        "data": [
            {
                "title": "People",
                "paragraphs": [
                    {
                        "context": "Kari lives in Oslo and works in Bergen.",
                        "qas": [
                            {
                                "id": "p1",
                                "question": "Where does Kari live?",
                                "answers": [{"text": "Oslo", "answer_start": 14}],
                            },
                            {
                                "id": "p2",
                                "question": "Where does Kari work?",
                                "answers": [
                                    {"text": "Bergen", "answer_start": 32},
                                    {"text": "in Bergen", "answer_start": 29},
                                ],
                            },
                            {
                                "id": "p3",
                                "question": "Where was Kari born?",
                                "answers": [],
                                "is_impossible": True,
                            },
                        ],
                    }
                ],
            },
            {
                "title": "Places",
                "paragraphs": [
                    {
                        "context": "Turku is a city in Finland.",
                        "qas": [
                            {
                                "id": "c1",
                                "question": "Which country is Turku in?",
                                "answers": [{"text": "Finland", "answer_start": 19}],
                            }
                        ],
                    }
                ],
            },
        ],
    }
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_squad_loader_reads_answerable_questions(tmp_path):
    records = load_squad(write_squad(tmp_path / "squad.json"))
    assert [r["id"] for r in records] == ["p1", "p2", "c1"]  # p3 is unanswerable
    assert records[1]["answers"] == ["Bergen", "in Bergen"]
    assert records[1]["context"] == "Kari lives in Oslo and works in Bergen."
    assert records[2]["title"] == "Places" and records[2]["question"].startswith("Which")
    (tmp_path / "bad.json").write_text('{"version": 1}', encoding="utf-8")
    with pytest.raises(DatasetError, match="SQuAD layout"):
        load_squad(tmp_path / "bad.json")


def test_squad_dataset_for_both_qa_tasks(tmp_path):
    write_squad(tmp_path / "squad.json")
    for task in ("qa", "abstractive_qa", "generative_qa"):
        ds = build_dataset(
            {
                "name": "sq",
                "task": task,
                "language": "en",
                "loader": "squad",
                "paths": ["squad.json"],
                "splits": {"train": 1, "validation": 0, "test": 2},
            },
            data_dir=tmp_path,
        )
        assert ds.sizes() == {"train": 1, "validation": 0, "test": 2}
        assert ds.source_positions == {"p1": 0, "p2": 1, "c1": 2}


def test_abstractive_qa_needs_no_context(tmp_path):
    rows = [{"id": f"a{i}", "question": f"q {i}?", "answers": "yes"} for i in range(4)]
    (tmp_path / "a.jsonl").write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    ds = build_dataset(
        {
            "name": "a",
            "task": "abstractive_qa",
            "language": "en",
            "loader": "jsonl",
            "paths": [str(tmp_path / "a.jsonl")],
            "splits": {"train": 0, "validation": 0, "test": 4},
        }
    )
    assert all(r["answers"] == ["yes"] for r in ds.test)
    attrs = get_task("abstractive_qa").example_attributes(ds)
    names = {a["attribute"] for a in attrs}
    assert {"question_length", "answer_length"} <= names and "context_length" not in names
    with pytest.raises(DatasetError, match="no field 'context'"):
        build_dataset(
            {
                "name": "a",
                "task": "qa",
                "language": "en",
                "loader": "jsonl",
                "paths": [str(tmp_path / "a.jsonl")],
            }
        )


def test_parallel_loader_tsv_and_line_aligned_files(tmp_path):
    (tmp_path / "p.tsv").write_text(
        "Kari bor i Oslo.\tKari lives in Oslo.\tKari resides in Oslo.\nHei.\tHello.\n",
        encoding="utf-8",
    )
    records = load_parallel(tmp_path / "p.tsv")
    assert records == [
        {
            "id": "p#1",
            "source": "Kari bor i Oslo.",
            "target": ["Kari lives in Oslo.", "Kari resides in Oslo."],
        },
        {"id": "p#2", "source": "Hei.", "target": ["Hello."]},
    ]
    (tmp_path / "src.nb").write_text("a\nb\nc\n", encoding="utf-8")
    (tmp_path / "ref.en").write_text("A\nB\nC\n", encoding="utf-8")
    (tmp_path / "ref2.en").write_text("AA\nBB\nCC\n", encoding="utf-8")
    records = load_parallel([tmp_path / "src.nb", tmp_path / "ref.en", tmp_path / "ref2.en"])
    assert records[2] == {"id": "src#3", "source": "c", "target": ["C", "CC"]}
    (tmp_path / "short.en").write_text("A\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="same number of lines"):
        load_parallel([tmp_path / "src.nb", tmp_path / "short.en"])
    (tmp_path / "bad.tsv").write_text("only a source\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="source<TAB>target"):
        load_parallel(tmp_path / "bad.tsv")
    with pytest.raises(DatasetError, match=r"must be a \.tsv"):
        load_parallel(tmp_path / "src.nb")


def test_translation_languages_from_options_records_and_dataset(tmp_path):
    (tmp_path / "p.tsv").write_text("".join(f"s{i}\tt{i}\n" for i in range(6)), encoding="utf-8")
    spec = {
        "name": "mt",
        "task": "mt",
        "language": "en",
        "loader": "parallel",
        "paths": ["p.tsv"],
        "splits": {"train": 2, "validation": 0, "test": 4},
    }
    with pytest.raises(DatasetError, match="no source language"):
        build_dataset(spec, data_dir=tmp_path)
    ds = build_dataset({**spec, "options": {"source_language": "nb"}}, data_dir=tmp_path)
    assert {(r["source_language"], r["target_language"]) for r in ds.test} == {("nb", "en")}
    assert all(isinstance(r["target"], list) for r in ds.test)
    rows = [
        {"id": f"m{i}", "source": f"s{i}", "target": f"t{i}", "source_language": "da"}
        for i in range(4)
    ]
    (tmp_path / "m.jsonl").write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    ds = build_dataset(
        {
            **spec,
            "loader": "jsonl",
            "paths": ["m.jsonl"],
            "splits": {"test": 4, "train": 0, "validation": 0},
        },
        data_dir=tmp_path,
    )
    assert {(r["source_language"], r["target_language"]) for r in ds.test} == {("da", "en")}
    task = get_task("translation")
    assert task.kind == "translation" and task.metrics == ("chrf", "chrf++", "bleu")
    assert [k for k, _ in task.result_keys(ds)] == ["chrf", "chrf++", "bleu"]
    attrs = task.example_attributes(ds)
    assert {a["attribute"] for a in attrs} == {"source_length", "reference_length"}


def test_translation_statistics_are_sacrebleus(tmp_path):
    """Summed per-sentence statistics of the task reproduce sacrebleu's corpus scores."""
    sacrebleu = pytest.importorskip("sacrebleu")
    rows = [
        {"id": "1", "source": "x", "target": ["the cat sat on the mat", "a cat sat on a mat"]},
        {"id": "2", "source": "y", "target": ["there is a dog here", "a dog is here"]},
        {"id": "3", "source": "z", "target": ["hello world", "hi world"]},
    ]
    for r in rows:
        r["source_language"], r["target_language"] = "nb", "en"
    hyps = ["the cat is on the mat", "a dog is there", "hello there world"]
    task = get_task("translation")
    ds = Dataset(name="mt", task="translation", language="en", train=[], validation=[], test=rows)
    stats = {m.name: m for m in task.statistics(hyps, rows, ds)}
    refs = [[r["target"][0] for r in rows], [r["target"][1] for r in rows]]
    bleu = stats["bleu"].metric.score(stats["bleu"].stats.sum(axis=0))
    chrf = stats["chrf"].metric.score(stats["chrf"].stats.sum(axis=0))
    assert np.isclose(bleu, sacrebleu.corpus_bleu(hyps, refs).score, atol=1e-9)
    assert np.isclose(chrf, sacrebleu.corpus_chrf(hyps, refs).score, atol=1e-9)
    chrf_pp = stats["chrf++"].metric.score(stats["chrf++"].stats.sum(axis=0))
    assert np.isclose(chrf_pp, sacrebleu.corpus_chrf(hyps, refs, word_order=2).score, atol=1e-9)


def test_translation_job_from_a_predictions_file(tmp_path):
    """A translation job (no neural extra): stored statistics give sacrebleu's corpus scores."""
    sacrebleu = pytest.importorskip("sacrebleu")
    from glotbench.runner.datasets import DatasetSpec
    from glotbench.runner.models import ModelSpec
    from glotbench.runner.protocol import Job, Protocol, execute_job

    pairs = [
        ("Kari bor i Oslo.", "Kari lives in Oslo.", "Kari stays in Oslo."),
        ("Ola jobber i Bergen.", "Ola works in Bergen.", "Ola is working in Bergen."),
        ("Siri bor i Turku.", "Siri lives in Turku.", "Siri stays in Turku."),
        ("Nils jobber i Malmo.", "Nils works in Malmo.", "Nils is working in Malmo."),
    ]
    (tmp_path / "p.tsv").write_text("".join("\t".join(p) + "\n" for p in pairs), encoding="utf-8")
    spec = DatasetSpec(
        name="mt",
        task="translation",
        language="en",
        loader="parallel",
        paths=[str(tmp_path / "p.tsv")],
        options={"source_language": "nb"},
        splits={"train": 0, "validation": 0, "test": 4},
    )
    ds = build_dataset(spec)
    guesses = {
        "Kari bor i Oslo.": "Kari lives in Oslo.",
        "Ola jobber i Bergen.": "Ola works at Bergen.",
        "Siri bor i Turku.": "Siri is living in Turku",
        "Nils jobber i Malmo.": "Nils works.",
    }
    hyps = [guesses[r["source"]] for r in ds.test]
    (tmp_path / "hyp.txt").write_text("\n".join(hyps) + "\n", encoding="utf-8")
    model = ModelSpec(name="file", kind="predictions", options={"path": str(tmp_path / "hyp.txt")})
    outcome = execute_job(Job(model, spec, 0, Protocol(iterations=1, speed_iterations=0)), ds)
    refs = [[r["target"][j] for r in ds.test] for j in range(2)]
    scores = outcome.scores()
    assert scores["chrf"] == pytest.approx(sacrebleu.corpus_chrf(hyps, refs).score, abs=1e-9)
    assert scores["bleu"] == pytest.approx(sacrebleu.corpus_bleu(hyps, refs).score, abs=1e-9)
    assert 0 < scores["bleu"] < 100
    assert outcome.runs[0][0].model_metadata["primary_metric"] == "chrf"


def test_bleu_into_chinese_uses_sacrebleus_zh_tokeniser(tmp_path):
    sacrebleu = pytest.importorskip("sacrebleu")
    rows = [
        {"id": "1", "source": "Kari bor i Oslo.", "target": "卡丽住在奥斯陆。"},
        {"id": "2", "source": "Ola jobber i Bergen.", "target": "奥拉在卑尔根工作。"},
    ]
    (tmp_path / "zh.jsonl").write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    ds = build_dataset(
        {
            "name": "zh",
            "task": "translation",
            "language": "zh",
            "loader": "jsonl",
            "paths": [str(tmp_path / "zh.jsonl")],
            "options": {"source_language": "nb"},
            "splits": {"train": 0, "validation": 0, "test": 2},
        }
    )
    hyps = ["卡丽住在奥斯陆。" if r["id"] == "1" else "奥拉工作在卑尔根。" for r in ds.test]
    task = get_task("translation")
    bleu = {m.name: m for m in task.statistics(hyps, ds.test, ds)}["bleu"]
    assert bleu.metric.config()["tokenize"] == "zh"
    refs = [[r["target"][0] for r in ds.test]]
    expected = sacrebleu.corpus_bleu(hyps, refs, tokenize="zh").score
    assert bleu.score() == pytest.approx(expected, abs=1e-9)
    assert expected != pytest.approx(sacrebleu.corpus_bleu(hyps, refs).score)  # 13a differs


def test_translation_has_a_speed_call():
    """ScandEval's speed benchmark puts each document to a translation model once per call."""
    from glotbench.runner.protocol import measure_speed
    from glotbench.runner.speed import SpeedSettings

    class Echo:
        calls: list[tuple[list[str], list[str], list[str]]] = []

        def supports(self, task):
            return task.kind == "translation"

        def translate(self, sources, source_languages, target_languages):
            self.calls.append((sources, source_languages, target_languages))
            return list(sources)

    model = Echo()
    settings = SpeedSettings(iterations=1, seconds=0.0, warmup_seconds=0.0)
    result = measure_speed(model, get_task("translation"), settings)
    assert result is not None and model.calls
    assert all(len(s) == 1 and a == b == ["en"] for s, a, b in model.calls)
