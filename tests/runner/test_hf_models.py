"""HF encoder and generative adapters on tiny random local models (skipped without torch).

Covers fine-tuning determinism, the out-of-memory path (simulated on CPU by
a forward pass that raises for batches larger than k) and the generative
adapter's per-iteration sampling.
"""

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
from glotbench.runner.errors import ModelError  # noqa: E402
from glotbench.runner.models import build_model  # noqa: E402
from glotbench.runner.models.hf_encoder import is_out_of_memory  # noqa: E402
from glotbench.runner.protocol import Job, Protocol, execute_job  # noqa: E402
from glotbench.runner.tasks import get_task  # noqa: E402

from .conftest import write_sentiment, write_tagging  # noqa: E402
from .hf_tiny import corpus, save_bert, save_gpt, train_tokenizer  # noqa: E402


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("hf")
    write_sentiment(folder / "sent.jsonl", n=80)
    write_tagging(folder / "ner.jsonl", n=40)
    texts = corpus(folder / "sent.jsonl", folder / "ner.jsonl")
    save_bert(folder / "bert", train_tokenizer(texts))
    save_gpt(folder / "gpt", train_tokenizer(texts, bert=False))
    return {"dir": folder}


def _job(model: dict, ds_spec: dict, iteration: int = 0, seed: int = 5) -> Job:
    from glotbench.runner.datasets import DatasetSpec
    from glotbench.runner.models import ModelSpec

    return Job(
        ModelSpec(**model),
        DatasetSpec(**ds_spec),
        iteration,
        Protocol(
            iterations=max(1, iteration + 1),
            seed=seed,
            speed_iterations=2,
            speed_seconds=0.01,
            speed_warmup_seconds=0.01,
        ),
    )


def _sent(folder: Path, train: int = 40, validation: int = 10, test: int = 20) -> dict:
    return {
        "name": "sent",
        "task": "sentiment",
        "language": "en",
        "loader": "jsonl",
        "paths": [str(folder / "sent.jsonl")],
        "splits": {"train": train, "validation": validation, "test": test},
    }


def _bert(folder: Path, **options) -> dict:
    return {
        "name": "bert",
        "kind": "hf-encoder",
        "options": {
            "path": str(folder / "bert"),
            "max_epochs": 2,
            "warmup_steps": 2,
            "batch_size": 8,
            "learning_rate": 1e-3,
            **options,
        },
    }


# -- encoder -----------------------------------------------------------------------


@pytest.mark.slow
def test_encoder_sequence_and_token(tiny_models):
    folder = tiny_models["dir"]
    ner = {
        "name": "ner",
        "task": "ner",
        "language": "en",
        "loader": "jsonl",
        "paths": [str(folder / "ner.jsonl")],
        "splits": {"train": 20, "validation": 5, "test": 10},
    }
    spec = _bert(folder)
    for ds_spec in (_sent(folder), ner):
        ds = build_dataset(ds_spec)
        first = execute_job(_job(spec, ds_spec), ds)
        second = execute_job(_job(spec, ds_spec), ds)
        for (r1, _, s1), (_, _, s2) in zip(first.runs, second.runs, strict=True):
            assert (s1 == s2).all()  # bit-for-bit reproducible from the seed
            meta = r1.model_metadata
            assert meta["parameters"] > 0
            assert meta["batch_size"] == 8 and meta["gradient_accumulation"] == 1
            assert meta["effective_batch_size"] == 8 and meta["oom_events"] == []
    model = build_model(spec)
    assert model.supports.__self__ is model


def test_is_out_of_memory():
    assert is_out_of_memory(RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB"))
    assert is_out_of_memory(torch.OutOfMemoryError("boom"))
    assert is_out_of_memory(MemoryError())
    assert not is_out_of_memory(RuntimeError("size mismatch"))
    assert not is_out_of_memory(ValueError("out of memory"))


class _OOMForward:
    """A forward that raises CUDA's OOM message for batches larger than ``limit``.

    ``once_at`` instead raises once, on that (1-based) training forward call,
    whatever the batch size — an out-of-memory error in the middle of an
    optimizer step, after earlier micro-batches already accumulated gradients.
    """

    def __init__(self, original, limit: int | None = None, once_at: int | None = None):
        self.original, self.limit, self.once_at = original, limit, once_at
        self.training_calls = 0
        self.sizes: list[int] = []
        self.raised = 0

    def __call__(self, module, *args, **kwargs):
        size = int(kwargs["input_ids"].shape[0])
        if module.training:
            self.training_calls += 1
            self.sizes.append(size)
        oversized = self.limit is not None and size > self.limit
        transient = module.training and self.training_calls == self.once_at
        if oversized or transient:
            self.raised += 1
            raise RuntimeError(f"CUDA out of memory. Tried to allocate {size} GiB")
        return self.original(module, *args, **kwargs)


def _patch_forward(monkeypatch, **rule) -> _OOMForward:
    cls = transformers.BertForSequenceClassification
    fake = _OOMForward(cls.forward, **rule)
    monkeypatch.setattr(cls, "forward", lambda self, *a, **k: fake(self, *a, **k))
    return fake


def _fit(folder: Path, ds, **options):
    model = build_model(_bert(folder, **options))
    model.fit(get_task("sentiment"), ds, ds.train, ds.validation, 11)
    return model


def _same_weights(a, b) -> bool:
    sa, sb = a.model.state_dict(), b.model.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def test_encoder_oom_halves_batch_and_doubles_accumulation(tiny_models, monkeypatch):
    folder = tiny_models["dir"]
    ds = build_dataset(_sent(folder, train=32, validation=8, test=8))
    reference = _fit(folder, ds, batch_size=16, gradient_accumulation=4)  # micro-batches of 4
    fake = _patch_forward(monkeypatch, limit=4)
    model = _fit(folder, ds, batch_size=16)
    assert fake.raised == 2  # 16 -> 8 -> 4, on the first step
    assert max(s for s in fake.sizes[2:]) <= 4
    meta = model.metadata()
    assert meta["batch_size"] == 4 and meta["gradient_accumulation"] == 4
    assert meta["effective_batch_size"] == 16
    assert [(e["batch_size"], e["gradient_accumulation"]) for e in meta["oom_events"]] == [
        (8, 2),
        (4, 4),
    ]
    assert all(e["where"] == "in a training step" for e in meta["oom_events"])
    # same effective batch, same schedule: the weights equal a run configured with 4 x 4
    assert _same_weights(model, reference)
    texts = [r["text"] for r in ds.test]
    assert model.predict_labels(texts) == reference.predict_labels(texts)


@pytest.mark.slow
def test_encoder_oom_mid_step_restarts_the_step_cleanly(tiny_models, monkeypatch):
    folder = tiny_models["dir"]
    ds = build_dataset(_sent(folder, train=32, validation=8, test=8))
    reference = _fit(folder, ds, batch_size=16, gradient_accumulation=4)
    # micro-batches of 8; the second forward of the first step runs out of memory after
    # the first micro-batch's gradients were accumulated: they must be discarded and no
    # optimizer step taken, so the result equals the 4 x 4 run bit for bit
    fake = _patch_forward(monkeypatch, once_at=2)
    model = _fit(folder, ds, batch_size=16, gradient_accumulation=2)
    assert fake.raised == 1 and fake.sizes[:3] == [8, 8, 4]
    assert model.metadata()["gradient_accumulation"] == 4
    assert _same_weights(model, reference)


def test_encoder_oom_at_batch_size_one_is_a_model_error(tiny_models, monkeypatch):
    folder = tiny_models["dir"]
    ds = build_dataset(_sent(folder, train=16, validation=4, test=4))
    _patch_forward(monkeypatch, limit=0)
    with pytest.raises(ModelError, match="out of memory .* even with batch size 1"):
        _fit(folder, ds, batch_size=4)


def test_encoder_non_oom_errors_are_not_retried(tiny_models, monkeypatch):
    folder = tiny_models["dir"]
    ds = build_dataset(_sent(folder, train=16, validation=4, test=4))

    def broken(self, *args, **kwargs):
        raise RuntimeError("mat1 and mat2 shapes cannot be multiplied")

    monkeypatch.setattr(transformers.BertForSequenceClassification, "forward", broken)
    with pytest.raises(RuntimeError, match="shapes cannot be multiplied"):
        _fit(folder, ds, batch_size=4)


# -- generative ----------------------------------------------------------------------


def _gpt(folder: Path, **options) -> dict:
    return {
        "name": "gpt",
        "kind": "hf-generative",
        "options": {"path": str(folder / "gpt"), "max_new_tokens": 3, **options},
    }


def _loaded(folder: Path, seed: int, **options):
    ds = build_dataset(_sent(folder, train=20, validation=0, test=6))
    model = build_model(_gpt(folder, **options))
    model.fit(get_task("sentiment"), ds, ds.train, ds.validation, seed)
    return model, [r["text"] for r in ds.test]


@pytest.mark.slow
def test_generative_one_sample_per_iteration_reproducible(tiny_models):
    folder = tiny_models["dir"]
    sent = _sent(folder, train=20, validation=0, test=6)
    spec = _gpt(folder, few_shot=2)
    ds = build_dataset(sent)
    a = execute_job(_job(spec, sent), ds)
    b = execute_job(_job(spec, sent), ds)
    assert [s.tolist() for _, _, s in a.runs] == [s.tolist() for _, _, s in b.runs]
    meta = a.runs[0][0].model_metadata
    assert meta["decoding"] == "sampling" and meta["responses_per_item"] == 1
    assert meta["sampling_seed"] == 5 and meta["sample_agreement"] is None
    assert 0 <= meta["unparsed_rate"] <= 1
    # the same seed gives bit-identical responses, whatever the batch and its order
    model, texts = _loaded(folder, 3)
    again, _ = _loaded(folder, 3)
    responses = model.respond(texts)
    assert responses == again.respond(texts)
    assert model.respond(texts[::-1]) == responses[::-1]
    assert model.respond(texts[2:3]) == responses[2:3]
    assert all(len(r) == 1 for r in responses)


@pytest.mark.slow
def test_generative_different_seeds_sample_different_responses(tiny_models):
    folder = tiny_models["dir"]
    responses = []
    for seed in (0, 1, 2):
        model, texts = _loaded(folder, seed)
        responses.append(model.respond(texts))
    assert responses[0] != responses[1] and responses[1] != responses[2]
    # greedy decoding ignores the seed (no few-shot examples here)
    greedy = [_loaded(folder, seed, do_sample=False) for seed in (0, 1)]
    assert greedy[0][0].respond(greedy[0][1]) == greedy[1][0].respond(greedy[1][1])
    assert greedy[0][0].metadata()["decoding"] == "greedy"


@pytest.mark.slow
def test_generative_vote_and_options(tiny_models):
    folder = tiny_models["dir"]
    model, texts = _loaded(folder, 4, vote=3)
    assert all(len(r) == 3 for r in model.respond(texts))
    preds = model.predict_labels(texts)
    assert len(preds) == len(texts)
    meta = model.metadata()
    assert meta["vote"] == 3 and meta["responses_per_item"] == 3
    assert 1 / 3 <= meta["sample_agreement"] <= 1
    with pytest.raises(ModelError, match="needs sampling"):
        build_model(_gpt(folder, vote=3, do_sample=False))
    with pytest.raises(ModelError, match="'samples' is gone"):
        build_model(_gpt(folder, samples=3))
    # few-shot examples: redrawn per iteration, or fixed by shot_seed
    shots = [_loaded(folder, s, few_shot=2)[0].shots for s in (0, 1)]
    assert shots[0] != shots[1]
    fixed = [_loaded(folder, s, few_shot=2, shot_seed=9)[0].shots for s in (0, 1)]
    assert fixed[0] == fixed[1]


@pytest.mark.slow
def test_sampling_variance_is_sigma_seed(tmp_path):
    """N iterations of a sampling model = N responses per item; σ_seed measures them."""
    import json

    from glotbench import api

    rows = [
        {
            "id": f"y{i}",
            "text": " ".join(["yes", "no"][(i + j) % 2] for j in range(i % 3 + 1)),
            "label": ["yes", "no"][i % 2],
        }
        for i in range(24)
    ]
    (tmp_path / "yn.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    # a tokenizer of a handful of tokens: the random model often answers "yes" or "no"
    save_gpt(tmp_path / "gpt", train_tokenizer(["yes no"] * 10, bert=False, vocab_size=30))
    (tmp_path / "suite.yaml").write_text(
        """
name: sampling
protocol: {iterations: 3, seed: 1, speed_iterations: 0}
datasets:
  - {name: yn, task: classification, language: en, loader: jsonl, paths: [yn.jsonl],
     splits: {train: 4, validation: 0, test: 12}}
models:
  - {name: sampled, kind: hf-generative, options: {path: gpt, max_new_tokens: 1}}
  - {name: greedy, kind: hf-generative, options: {path: gpt, max_new_tokens: 1, do_sample: false}}
""",
        encoding="utf-8",
    )
    summary = api.run_benchmark(tmp_path / "suite.yaml", store=tmp_path / "s.duckdb")
    assert summary.completed == 6 and not summary.failures
    source = api.load_replicated(store=tmp_path / "s.duckdb", metric="f1_macro", n_replicates=50)
    table = api.analyze_variance(source).per_unit
    table = table.set_index(table["model"].str.split(" ").str[0])  # "name [config hash]"
    assert table.loc["sampled", "n_seeds"] == 3 and table.loc["sampled", "sigma_seed"] > 0
    assert table.loc["greedy", "sigma_seed"] == 0  # greedy decoding: no model-side variance
