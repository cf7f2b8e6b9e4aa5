"""HF adapters on tiny randomly initialised local models (skipped without torch/transformers)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (extra 'neural')")
transformers = pytest.importorskip(
    "transformers", reason="transformers is not installed (extra 'neural')"
)
os.environ["HF_HUB_OFFLINE"] = "1"

from glotbench.runner.datasets import build_dataset  # noqa: E402
from glotbench.runner.models import build_model  # noqa: E402
from glotbench.runner.protocol import Job, Protocol, execute_job  # noqa: E402

from .conftest import write_sentiment, write_tagging  # noqa: E402


def _tokenizer(texts: list[str]):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(
        texts, trainers.WordLevelTrainer(special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]"])
    )
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        eos_token="[SEP]",
    )


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("hf")
    write_sentiment(folder / "sent.jsonl", n=80)
    write_tagging(folder / "ner.jsonl", n=40)
    texts = [line for line in (folder / "sent.jsonl").read_text().splitlines()]
    texts += ["the cat sees Oslo a dog likes Bergen now"]
    tok = _tokenizer(texts)
    torch.manual_seed(0)
    bert = transformers.BertForMaskedLM(
        transformers.BertConfig(
            vocab_size=len(tok),
            hidden_size=16,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=32,
            max_position_embeddings=64,
        )
    )
    bert.save_pretrained(folder / "bert")
    tok.save_pretrained(folder / "bert")
    gpt = transformers.GPT2LMHeadModel(
        transformers.GPT2Config(
            vocab_size=len(tok), n_embd=16, n_layer=1, n_head=2, n_positions=256
        )
    )
    gpt.save_pretrained(folder / "gpt")
    tok.save_pretrained(folder / "gpt")
    return {"dir": folder}


def _job(model: dict, ds_spec: dict) -> Job:
    from glotbench.runner.datasets import DatasetSpec
    from glotbench.runner.models import ModelSpec

    return Job(
        ModelSpec(**model),
        DatasetSpec(**ds_spec),
        0,
        Protocol(iterations=1, seed=5, speed_repeats=1),
    )


def test_encoder_sequence_and_token(tiny_models):
    folder = tiny_models["dir"]
    sent = {
        "name": "sent",
        "task": "sentiment",
        "language": "en",
        "loader": "jsonl",
        "paths": [str(folder / "sent.jsonl")],
        "splits": {"train": 40, "validation": 10, "test": 20},
    }
    ner = {
        "name": "ner",
        "task": "ner",
        "language": "en",
        "loader": "jsonl",
        "paths": [str(folder / "ner.jsonl")],
        "splits": {"train": 20, "validation": 5, "test": 10},
    }
    spec = {
        "name": "bert",
        "kind": "hf-encoder",
        "options": {
            "path": str(folder / "bert"),
            "max_epochs": 2,
            "warmup_steps": 2,
            "batch_size": 8,
            "learning_rate": 1e-3,
        },
    }
    for ds_spec in (sent, ner):
        ds = build_dataset(ds_spec)
        first = execute_job(_job(spec, ds_spec), ds)
        second = execute_job(_job(spec, ds_spec), ds)
        for (r1, _, s1), (_, _, s2) in zip(first.runs, second.runs, strict=True):
            assert (s1 == s2).all()  # bit-for-bit reproducible from the seed
            assert r1.model_metadata["parameters"] > 0
    model = build_model(spec)
    assert model.supports.__self__ is model


def test_generative_sampling(tiny_models):
    folder = tiny_models["dir"]
    sent = {
        "name": "sent",
        "task": "sentiment",
        "language": "en",
        "loader": "jsonl",
        "paths": [str(folder / "sent.jsonl")],
        "splits": {"train": 20, "validation": 0, "test": 6},
    }
    spec = {
        "name": "gpt",
        "kind": "hf-generative",
        "options": {"path": str(folder / "gpt"), "few_shot": 2, "samples": 3, "max_new_tokens": 2},
    }
    ds = build_dataset(sent)
    a = execute_job(_job(spec, sent), ds)
    b = execute_job(_job(spec, sent), ds)
    assert [s.tolist() for _, _, s in a.runs] == [s.tolist() for _, _, s in b.runs]
    meta = a.runs[0][0].model_metadata
    assert meta["samples"] == 3 and 0 < meta["sample_agreement"] <= 1
