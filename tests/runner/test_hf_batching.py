"""Batched generation, device placement, mixed precision and item progress of the HF adapters.

Tiny random models built in the test (nothing is downloaded). The reference
for batched greedy generation is ``model.generate`` called on one unpadded
prompt at a time, straight from transformers.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (extra 'neural')")
transformers = pytest.importorskip(
    "transformers", reason="transformers is not installed (extra 'neural')"
)
os.environ["HF_HUB_OFFLINE"] = "1"

from glotbench.runner import progress as progress_mod  # noqa: E402
from glotbench.runner.datasets import build_dataset  # noqa: E402
from glotbench.runner.errors import ModelError  # noqa: E402
from glotbench.runner.models import build_model  # noqa: E402
from glotbench.runner.models.hf_generative import nucleus_probabilities  # noqa: E402
from glotbench.runner.models.hf_runtime import (  # noqa: E402
    autocast,
    check_precision,
    resolve_device,
    resolve_precision,
)
from glotbench.runner.tasks import get_task  # noqa: E402

from .conftest import write_sentiment  # noqa: E402
from .hf_tiny import corpus, save_bert, save_gpt, train_tokenizer  # noqa: E402


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("hfb")
    write_sentiment(folder / "sent.jsonl", n=60)
    texts = corpus(folder / "sent.jsonl")
    save_gpt(folder / "gpt", train_tokenizer(texts, bert=False))
    save_bert(folder / "bert", train_tokenizer(texts))
    return folder


def _sent(folder: Path) -> dict:
    return {
        "name": "sent",
        "task": "sentiment",
        "language": "en",
        "loader": "jsonl",
        "paths": [str(folder / "sent.jsonl")],
        "splits": {"train": 20, "validation": 8, "test": 14},
    }


def _generative(folder: Path, seed: int = 3, **options):
    ds = build_dataset(_sent(folder))
    spec = {
        "name": "gpt",
        "kind": "hf-generative",
        "options": {"path": str(folder / "gpt"), "max_new_tokens": 4, **options},
    }
    model = build_model(spec)
    model.fit(get_task("sentiment"), ds, ds.train, ds.validation, seed)
    # prompts of different lengths, so batches really are padded
    texts = [r["text"] + " extra words" * (i % 4) for i, r in enumerate(ds.test)]
    return model, texts


@pytest.mark.slow
def test_batched_greedy_equals_transformers_one_prompt_at_a_time(tiny):
    model, texts = _generative(tiny, do_sample=False, batch_size=5, few_shot=2)
    batched = model.respond(texts)
    lengths = {len(model.tokenizer(model.prompt(t))["input_ids"]) for t in texts}
    assert len(lengths) > 1  # the batches are padded
    reference = []
    for text in texts:
        enc = model.tokenizer(model.prompt(text), return_tensors="pt")
        with torch.no_grad():
            gen = model.model.generate(
                **enc, max_new_tokens=4, do_sample=False, pad_token_id=model.tokenizer.pad_token_id
            )
        reference.append(
            model.tokenizer.batch_decode(
                gen[:, enc["input_ids"].shape[1] :], skip_special_tokens=True
            )
        )
    assert batched == reference
    one_by_one = build_model(
        {
            "name": "g1",
            "kind": "hf-generative",
            "options": {
                "path": str(tiny / "gpt"),
                "max_new_tokens": 4,
                "do_sample": False,
                "batch_size": 1,
                "few_shot": 2,
            },
        }
    )
    one_by_one.fit(get_task("sentiment"), build_dataset(_sent(tiny)), model.shots, [], 3)
    one_by_one.shots = model.shots
    assert one_by_one.respond(texts) == batched


@pytest.mark.slow
def test_sampled_responses_do_not_depend_on_batch_size_or_order(tiny):
    responses = {}
    for batch_size in (1, 3, 16):
        model, texts = _generative(tiny, batch_size=batch_size, vote=2)
        responses[batch_size] = model.respond(texts)
        assert model.metadata()["batch_size"] == batch_size
    assert responses[1] == responses[3] == responses[16]
    model, texts = _generative(tiny, batch_size=4, vote=2)
    assert model.respond(texts[::-1]) == responses[1][::-1]
    # different votes of one item use different seeds
    assert any(r[0] != r[1] for r in responses[1])


def test_nucleus_probabilities_closed_form():
    logits = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]]))
    full = nucleus_probabilities(logits, 1.0, 1.0, torch)
    torch.testing.assert_close(full, torch.tensor([[0.5, 0.3, 0.15, 0.05]]))
    # top_p = 0.7: the nucleus is {0.5, 0.3} (0.5 < 0.7 ≤ 0.8)
    nucleus = nucleus_probabilities(logits, 1.0, 0.7, torch)
    torch.testing.assert_close(nucleus, torch.tensor([[0.5, 0.3, 0.0, 0.0]]))
    # temperature 2: softmax(log p / 2) ∝ sqrt(p)
    hot = nucleus_probabilities(logits, 2.0, 1.0, torch)
    root = torch.sqrt(torch.tensor([0.5, 0.3, 0.15, 0.05]))
    torch.testing.assert_close(hot, (root / root.sum())[None])


def test_row_sampler_draws_with_the_nucleus_frequencies():
    """Simulation with known truth: 4,000 draws of one row against its probabilities."""
    from glotbench.runner.models.hf_generative import RowSampler

    p = torch.tensor([0.5, 0.3, 0.15, 0.05])
    generator = torch.Generator().manual_seed(0)
    sampler = RowSampler([generator], temperature=1.0, top_p=1.0)
    counts = torch.zeros(4)
    for _ in range(4000):
        scores = sampler(None, torch.log(p)[None])
        assert torch.isinf(scores).sum() == 3
        counts[int(scores.argmax())] += 1
    # binomial SD of a share ≤ 0.0079 at n = 4000: allow 4 SD
    assert torch.all((counts / 4000 - p).abs() < 0.032)


@pytest.mark.slow
def test_generation_options_are_validated_and_recorded(tiny):
    with pytest.raises(ModelError, match="batch_size must be a positive integer"):
        build_model(
            {"name": "g", "kind": "hf-generative", "options": {"path": "x", "batch_size": 0}}
        )
    with pytest.raises(ModelError, match="unknown precision"):
        build_model(
            {"name": "g", "kind": "hf-generative", "options": {"path": "x", "precision": "fp8"}}
        )
    model, texts = _generative(tiny, do_sample=False, batch_size=4, precision="bf16")
    responses = model.respond(texts)  # bf16 autocast on the CPU
    assert len(responses) == len(texts) and all(len(r) == 1 for r in responses)
    meta = model.metadata()
    assert meta["device"] == ("cuda" if torch.cuda.is_available() else "cpu")
    assert meta["precision"] == "bf16" and meta["batch_size"] == 4


def _fake_torch(cuda: bool, count: int = 1, bf16: bool = True, mps: bool = False):
    return SimpleNamespace(
        cuda=SimpleNamespace(
            is_available=lambda: cuda,
            device_count=lambda: count if cuda else 0,
            is_bf16_supported=lambda: bf16,
        ),
        backends=SimpleNamespace(mps=SimpleNamespace(is_available=lambda: mps)),
    )


def test_device_resolution_logic():
    gpu, cpu_only = _fake_torch(True, count=2), _fake_torch(False)
    assert resolve_device("auto", gpu) == "cuda"
    assert resolve_device("auto", cpu_only) == "cpu"
    assert resolve_device("auto", _fake_torch(False, mps=True)) == "mps"
    assert resolve_device("CPU", gpu) == "cpu"
    assert resolve_device("cuda:1", gpu) == "cuda:1"
    with pytest.raises(ModelError, match="sees 2 CUDA"):
        resolve_device("cuda:2", gpu)
    with pytest.raises(ModelError, match="no CUDA GPU"):
        resolve_device("cuda", cpu_only)
    with pytest.raises(ModelError, match="mps"):
        resolve_device("mps", cpu_only)
    with pytest.raises(ModelError, match="unknown device"):
        resolve_device("tpu", gpu)
    assert resolve_precision("auto", "cuda", gpu) == "bf16"
    assert resolve_precision("auto", "cuda", _fake_torch(True, bf16=False)) == "fp32"
    assert resolve_precision("auto", "cpu", gpu) == "fp32"
    assert resolve_precision("fp16", "cpu", gpu) == "fp16"
    assert check_precision("BF16") == "bf16"
    with autocast("bf16", "cpu", torch):
        a = torch.ones(2, 2)
        assert (a @ a).dtype == torch.bfloat16
    with autocast("fp32", "cpu", torch):
        assert (a @ a).dtype == torch.float32


def test_real_torch_auto_device_matches_availability(tiny):
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    if not torch.cuda.is_available() and torch.backends.mps.is_available():
        expected = "mps"
    assert resolve_device("auto", torch) == expected


class _Recorder:
    def __init__(self) -> None:
        self.bars: list[dict] = []

    def __call__(self, label: str, total: int):
        bar = {"label": label, "total": total, "done": 0, "closed": False}
        self.bars.append(bar)

        class Bar:
            def advance(self, items: int) -> None:
                bar["done"] += items

            def close(self) -> None:
                bar["closed"] = True

        return Bar()


@pytest.mark.slow
def test_generation_and_encoder_inference_report_item_progress(tiny):
    recorder = _Recorder()
    previous = progress_mod.set_item_sink(recorder)
    try:
        model, texts = _generative(tiny, batch_size=4, vote=3)
        model.respond(texts)
        ds = build_dataset(_sent(tiny))
        encoder = build_model(
            {
                "name": "bert",
                "kind": "hf-encoder",
                "options": {
                    "path": str(tiny / "bert"),
                    "batch_size": 8,
                    "max_epochs": 1,
                    "warmup_steps": 1,
                },
            }
        )
        encoder.fit(get_task("sentiment"), ds, ds.train, ds.validation, 0)
        encoder.predict_labels([r["text"] for r in ds.test])
    finally:
        progress_mod.set_item_sink(previous)
    by_label = {b["label"]: b for b in recorder.bars}
    generation = by_label["gpt generation"]
    assert generation["total"] == generation["done"] == len(texts) and generation["closed"]
    training = by_label["bert training"]
    assert training["done"] == len(ds.train) and training["total"] == len(ds.train)
    inference = [b for b in recorder.bars if b["label"] == "bert inference"]
    assert inference[-1]["done"] == inference[-1]["total"] == len(ds.test)
    assert all(b["closed"] for b in recorder.bars)


@pytest.mark.slow
def test_generation_halves_the_batch_on_out_of_memory(tiny, monkeypatch):
    """A generate() that runs out of memory for more than 2 rows: same responses, batch 2."""
    model, texts = _generative(tiny, batch_size=8, vote=1)
    reference = model.respond(texts)
    original = model.model.generate

    def limited(*args, **kwargs):
        if kwargs["input_ids"].shape[0] > 2:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return original(*args, **kwargs)

    monkeypatch.setattr(model.model, "generate", limited)
    assert model.respond(texts) == reference
    meta = model.metadata()
    assert meta["batch_size"] == 2
    assert [e["batch_size"] for e in meta["oom_events"]] == [4, 2]
