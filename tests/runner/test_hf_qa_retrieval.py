"""HF extractive-QA and retrieval adapters on tiny random local models (skipped without torch)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (extra 'neural')")
transformers = pytest.importorskip(
    "transformers", reason="transformers is not installed (extra 'neural')"
)
os.environ["HF_HUB_OFFLINE"] = "1"

from glotbench.runner.datasets import DatasetSpec, build_dataset  # noqa: E402
from glotbench.runner.errors import ModelError  # noqa: E402
from glotbench.runner.models import MODEL_KINDS, NEURAL_KINDS, ModelSpec, build_model  # noqa: E402
from glotbench.runner.models.hf_qa import answer_span  # noqa: E402
from glotbench.runner.protocol import Job, Protocol, execute_job  # noqa: E402
from glotbench.runner.tasks import get_task  # noqa: E402

from .hf_tiny import corpus, save_bert, train_tokenizer, write_qa, write_retrieval  # noqa: E402


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("hfqa")
    write_qa(folder / "qa.jsonl", n=60)
    write_retrieval(folder / "ret.jsonl", n=16)
    # a small vocabulary, so that some words split into several sub-tokens
    tok = train_tokenizer(corpus(folder / "qa.jsonl", folder / "ret.jsonl"), vocab_size=120)
    save_bert(folder / "bert", tok, positions=64)
    return folder


def _job(model: dict, ds_spec: dict, iteration: int = 0) -> Job:
    return Job(
        ModelSpec(**model),
        DatasetSpec(**ds_spec),
        iteration,
        Protocol(
            iterations=iteration + 1,
            seed=3,
            speed_iterations=2,
            speed_seconds=0.01,
            speed_warmup_seconds=0.01,
        ),
    )


def _qa_spec(folder: Path) -> dict:
    return {
        "name": "qa",
        "task": "qa",
        "language": "en",
        "loader": "jsonl",
        "paths": [str(folder / "qa.jsonl")],
        "splits": {"train": 30, "validation": 10, "test": 20},
    }


def _qa_model(folder: Path, **options) -> dict:
    return {
        "name": "bert-qa",
        "kind": "hf-qa",
        "options": {
            "path": str(folder / "bert"),
            "max_epochs": 2,
            "warmup_steps": 2,
            "batch_size": 8,
            "learning_rate": 1e-3,
            "max_length": 32,
            "doc_stride": 8,
            **options,
        },
    }


def test_kinds_registered():
    assert {"hf-qa", "hf-embed"} <= set(MODEL_KINDS) and {"hf-qa", "hf-embed"} <= NEURAL_KINDS


def test_answer_span_first_occurrence():
    assert answer_span("Oslo, then Oslo again", ["Oslo"]) == (0, 4)
    assert answer_span("in Bergen", ["Oslo", " Bergen "]) == (3, 9)
    assert answer_span("nothing here", ["Oslo"]) is None


def test_qa_labels_point_at_the_answer_in_every_window(tiny):
    model = build_model(_qa_model(tiny))
    model._load(transformers.AutoModelForQuestionAnswering)
    ds = build_dataset(_qa_spec(tiny))
    for r in ds.train:
        span = answer_span(r["context"], r["answers"])
        windows = model._windows(r["question"], r["context"], span)
        assert all(len(w["input_ids"]) <= 32 for w in windows)
        inside = 0
        for w in windows:
            s, e = w["start_positions"], w["end_positions"]
            if s == 0:  # [CLS]: the answer is not wholly in this window
                assert e == 0
                continue
            inside += 1
            text = r["context"][w["_offsets"][s][0] : w["_offsets"][e][1]]
            assert text == r["answers"][0]
        assert inside >= 1
        if len(r["context"].split()) > 20:
            assert len(windows) > 1  # long contexts are split into overlapping windows


def test_qa_best_span_is_valid(tiny):
    model = build_model(_qa_model(tiny, max_answer_length=2))
    offsets = [None, None, (0, 4), (5, 10), (11, 15), (16, 20), None]
    starts = np.array([9.0, 9.0, 0.0, 1.0, 5.0, 0.0, 9.0])
    ends = np.array([9.0, 9.0, 4.0, 3.0, 0.0, 1.0, 9.0])
    # best start is token 4, but every end before it is invalid and token 5 is the only
    # valid end within max_answer_length: (4, 5) scores 5 + 1 = 6 > (3, 3) = 4
    assert model._best_span(offsets, starts, ends) == (6.0, 11, 20)
    tight = build_model(_qa_model(tiny, max_answer_length=1))
    assert tight._best_span(offsets, starts, ends) == (5.0, 11, 15)  # single tokens only
    assert model._best_span([None, None], starts[:2], ends[:2]) is None


@pytest.mark.slow
def test_qa_through_the_protocol(tiny):
    ds_spec = _qa_spec(tiny)
    ds = build_dataset(ds_spec)
    spec = _qa_model(tiny, max_epochs=1)
    first = execute_job(_job(spec, ds_spec), ds)
    second = execute_job(_job(spec, ds_spec), ds)
    assert [r.metric for r, _, _ in first.runs] == ["squad_f1", "squad_exact_match"]
    for (record, ids, stats), (_, _, again) in zip(first.runs, second.runs, strict=True):
        assert len(ids) == 20 and stats.shape[0] == 20
        assert np.array_equal(stats, again)  # bit-for-bit reproducible from the seed
        assert record.model_metadata["trains"] is True
    scores = first.scores()
    assert 0.0 <= scores["squad_exact_match"] <= scores["squad_f1"] <= 1.0
    meta = first.runs[0][0].model_metadata
    assert meta["family"] == "hf-qa" and meta["unlocated_answers"] == 0
    assert meta["train_windows"] > meta["train_examples"]  # some contexts needed windows
    # answers are spans of their contexts
    model = build_model(spec)
    model.fit(get_task("qa"), ds, ds.train, ds.validation, 3)
    answers = model.answer([r["question"] for r in ds.test], [r["context"] for r in ds.test])
    assert len(answers) == 20
    assert all(a in r["context"] for a, r in zip(answers, ds.test, strict=True))
    assert all(len(a.split()) <= 30 for a in answers)
    with pytest.raises(ModelError, match="fine-tuned on a qa task"):
        build_model(spec).answer(["q"], ["c"])


def _ret_spec(folder: Path) -> dict:
    return {
        "name": "ret",
        "task": "retrieval",
        "language": "en",
        "loader": "jsonl",
        "paths": [str(folder / "ret.jsonl")],
        "splits": {"train": 0, "validation": 0, "test": 16},
        "k": 5,
    }


def _embedder(folder: Path, **options) -> dict:
    return {"name": "emb", "kind": "hf-embed", "options": {"path": str(folder / "bert"), **options}}


@pytest.mark.slow
def test_embeddings_mean_pooled_and_layer(tiny):
    ds = build_dataset(_ret_spec(tiny))
    task = get_task("retrieval", k=5)
    model = build_model(_embedder(tiny, batch_size=4))
    assert model.trains is False
    model.fit(task, ds, [], [], 0)
    texts = ["Kari lives in Oslo", "Ola", "Uppsala is where Ingrid lives and works"]
    vecs = model.embed(texts)
    assert vecs.shape == (3, 32) and np.isfinite(vecs).all()
    assert np.array_equal(vecs, model.embed(texts))  # deterministic
    # padding is masked out: a text embeds the same alone and in a padded batch
    alone = np.concatenate([model.embed([t]) for t in texts])
    assert np.allclose(vecs, alone, atol=1e-5)
    # the mean of the last hidden states over the tokens, by hand
    enc = model.tokenizer(texts[0], return_tensors="pt")
    with torch.no_grad():
        hidden = model.model(**enc).last_hidden_state[0]
    assert np.allclose(vecs[0], hidden.mean(dim=0).numpy(), atol=1e-5)
    # layer k = hidden_states[k]; 0 is the embedding layer, 2 (the last) = the default
    layered = {}
    for layer in (0, 1, 2, -1):
        m = build_model(_embedder(tiny, layer=layer))
        m.fit(task, ds, [], [], 0)
        layered[layer] = m.embed(texts)
        assert m.metadata()["layer"] == layer and m.metadata()["layers"] == 2
    assert np.allclose(layered[2], vecs, atol=1e-5) and np.allclose(layered[-1], vecs, atol=1e-5)
    assert not np.allclose(layered[0], layered[1])
    bad = build_model(_embedder(tiny, layer=7))
    with pytest.raises(ModelError, match="has 2 layers; layer 7 does not exist"):
        bad.fit(task, ds, [], [], 0)


@pytest.mark.slow
def test_retrieval_through_the_protocol(tiny):
    ds_spec = _ret_spec(tiny)
    ds = build_dataset(ds_spec)
    spec = _embedder(tiny, layer=1)
    first = execute_job(_job(spec, ds_spec), ds)
    second = execute_job(_job(spec, ds_spec, iteration=1), ds)
    assert [r.metric for r, _, _ in first.runs] == ["accuracy", "map@5"]
    for (record, ids, stats), (_, _, again) in zip(first.runs, second.runs, strict=True):
        assert stats.shape[0] == len(ids) == 16
        assert np.array_equal(stats, again)  # no training, no sampling: seeds agree
        assert record.model_metadata["trains"] is False
        assert record.model_metadata["family"] == "hf-embed"
    scores = first.scores()
    assert 0.0 <= scores["accuracy"] <= scores["map@5"] <= 1.0
