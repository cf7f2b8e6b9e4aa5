"""The ``vllm`` model kind's adapter, against a stand-in ``vllm`` module.

vLLM needs a CUDA GPU, so these tests put a small fake ``vllm`` module in
``sys.modules``: its ``LLM`` records the engine keywords and every request
(token ids and ``SamplingParams``) and answers from a rule of the test, and
its tokenizer has a chat template. What is checked is glotbench's side:
the engine keywords built from the options, one request per (item, vote)
whose seed is ``item_seed(iteration seed, prompt, vote)``, greedy requests
without a seed, prompts rendered through the chat template (or not), the
truncation of over-long prompts, token counts and latencies summed from the
outputs, the mapping of outputs back to items (labels parsed, stop strings
cut, votes), the clear errors without vLLM or a GPU, and a run through the
runner that keeps the outputs and stores the counts. A real-GPU test at the
end runs only where vLLM and a GPU exist.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from glotbench import api
from glotbench.errors import InputError
from glotbench.runner.errors import ModelError
from glotbench.runner.models import REGISTRY, ModelSpec, build_model, vllm_offline
from glotbench.runner.models.hf_generative import item_seed
from glotbench.runner.models.options import check_options
from glotbench.store import Store

LABELS = ["neg", "pos"]


class FakeTokenizer:
    """Word-level ids (a growing vocabulary), BOS = 1, and an optional chat template."""

    def __init__(self, template: bool) -> None:
        self.vocab: dict[str, int] = {}
        self.chat_template = "fake-template" if template else None

    def __call__(self, text: str, add_special_tokens: bool = True) -> dict[str, list[int]]:
        ids = [self.vocab.setdefault(w, len(self.vocab) + 2) for w in text.split()]
        return {"input_ids": ([1] if add_special_tokens else []) + ids}

    def apply_chat_template(
        self, messages: list[dict[str, str]], tokenize: bool, add_generation_prompt: bool
    ) -> str:
        assert tokenize is False and add_generation_prompt is True
        parts = [f"<{m['role']}> {m['content']}" for m in messages]
        return " ".join(parts) + " <assistant>"


class FakeSamplingParams:
    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs


def answer(prompt_ids: list[int], params: FakeSamplingParams) -> str:
    """The stand-in model: greedy says 'pos'; sampling draws a label (or junk) from its seed."""
    seed = params.kwargs.get("seed")
    if seed is None:
        return "pos\nmore text"
    draw = np.random.default_rng(seed).integers(3)
    return ["neg", "pos", "junk"][int(draw)] + " because\nmore"


class FakeLLM:
    instances: list[FakeLLM] = []
    template = True

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs
        self.requests: list[tuple[list[int], FakeSamplingParams]] = []
        self.tokenizer = FakeTokenizer(FakeLLM.template)
        config = types.SimpleNamespace(max_model_len=kwargs.get("max_model_len", 4096))
        self.llm_engine = types.SimpleNamespace(model_config=config)
        FakeLLM.instances.append(self)

    def get_tokenizer(self) -> FakeTokenizer:
        return self.tokenizer

    def generate(
        self, prompts: list[dict[str, list[int]]], sampling_params: list[Any], use_tqdm: bool
    ) -> list[Any]:
        assert use_tqdm is False and len(prompts) == len(sampling_params)
        out = []
        for n, (prompt, params) in enumerate(zip(prompts, sampling_params, strict=True)):
            ids = list(prompt["prompt_token_ids"])
            self.requests.append((ids, params))
            text = answer(ids, params)
            completion = types.SimpleNamespace(text=text, token_ids=[7] * len(text.split()))
            metrics = types.SimpleNamespace(arrival_time=10.0, finished_time=10.0 + 0.5 * (n + 1))
            out.append(
                types.SimpleNamespace(prompt_token_ids=ids, outputs=[completion], metrics=metrics)
            )
        return out


@pytest.fixture
def fake_vllm(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    module = types.ModuleType("vllm")
    module.LLM = FakeLLM  # type: ignore[attr-defined]
    module.SamplingParams = FakeSamplingParams  # type: ignore[attr-defined]
    module.__version__ = "0.0-fake"  # type: ignore[attr-defined]
    FakeLLM.instances = []
    FakeLLM.template = True
    monkeypatch.setitem(sys.modules, "vllm", module)
    monkeypatch.setattr(vllm_offline, "cuda_available", lambda: True)
    return module


class _Task:
    def __init__(self, kind: str = "sequence", name: str = "sentiment") -> None:
        self.kind = kind
        self.name = name


class _Dataset:
    labels = LABELS


TEXTS = [f"{lab} review {i}" for i, lab in enumerate(["neg", "pos"] * 3)]


def fitted(seed: int = 11, **options: Any) -> vllm_offline.VLLMGenerative:
    model = build_model(ModelSpec(name="v", kind="vllm", options={"path": "org/m", **options}))
    assert isinstance(model, vllm_offline.VLLMGenerative)
    model.fit(_Task(), _Dataset(), [], [], seed)  # type: ignore[arg-type]
    return model


def test_engine_keywords_come_from_the_options(fake_vllm: Any) -> None:
    model = fitted(
        dtype="bfloat16",
        batch_size=32,
        max_model_len=2048,
        tensor_parallel_size=2,
        engine_options={"enforce_eager": True},
    )
    engine = FakeLLM.instances[0]
    assert engine.kwargs == {
        "model": "org/m",
        "dtype": "bfloat16",
        "tensor_parallel_size": 2,
        "gpu_memory_utilization": 0.9,
        "trust_remote_code": False,
        "seed": 0,
        "max_model_len": 2048,
        "max_num_seqs": 32,
        "enforce_eager": True,
    }
    model.fit(_Task(), _Dataset(), [], [], 12)  # type: ignore[arg-type]
    assert len(FakeLLM.instances) == 1  # loaded once per adapter


def test_one_request_per_item_and_vote_with_its_own_seed(fake_vllm: Any) -> None:
    model = fitted(seed=11, vote=3, temperature=0.7, top_p=0.9, max_new_tokens=4)
    predictions = model.predict_labels(TEXTS)
    engine = FakeLLM.instances[0]
    assert len(engine.requests) == len(TEXTS) * 3
    prompts = [model.prompt(t) for t in TEXTS]
    expected_seeds = [item_seed(11, p, v) for p in prompts for v in range(3)]
    params = [p.kwargs for _, p in engine.requests]
    assert [p["seed"] for p in params] == expected_seeds
    assert all(
        p["temperature"] == 0.7 and p["top_p"] == 0.9 and p["n"] == 1 and p["max_tokens"] == 4
        for p in params
    )
    # the majority of each item's three answers, ties to the first label; junk is unparsed
    for i, prediction in enumerate(predictions):
        seeds = expected_seeds[3 * i : 3 * i + 3]
        words = [answer([], FakeSamplingParams(seed=s)).split()[0] for s in seeds]
        drawn = [w if w in LABELS else "<unparsed>" for w in words]
        order = ["neg", "pos", "<unparsed>"]
        best = max(order, key=lambda lab: (drawn.count(lab), -order.index(lab)))
        assert prediction == best
    # another iteration seed: other seeds; the same seed: the same answers
    assert fitted(seed=11, vote=3).predict_labels(TEXTS) == predictions
    other = fitted(seed=12, vote=3)
    other.predict_labels(TEXTS)
    assert {p.kwargs["seed"] for _, p in FakeLLM.instances[-1].requests}.isdisjoint(expected_seeds)


def test_greedy_requests_carry_no_seed(fake_vllm: Any) -> None:
    model = fitted(decoding="greedy")
    assert model.predict_labels(TEXTS) == ["pos"] * len(TEXTS)
    for _, params in FakeLLM.instances[0].requests:
        assert params.kwargs["temperature"] == 0.0 and "seed" not in params.kwargs
    assert model.metadata()["decoding"] == "greedy"


def test_prompts_go_through_the_chat_template(fake_vllm: Any) -> None:
    model = fitted(system="You label sentiment.")
    model.predict_labels(TEXTS[:2])
    engine = FakeLLM.instances[0]
    tok = engine.tokenizer
    for text, (ids, _) in zip(TEXTS[:2], engine.requests, strict=True):
        rendered = f"<system> You label sentiment. <user> {model.prompt(text)} <assistant>"
        assert ids == tok(rendered, add_special_tokens=False)["input_ids"]  # no second BOS
    assert model.metadata()["chat_template"] is True

    plain = fitted(chat=False)
    plain.predict_labels(TEXTS[:1])
    ids, _ = FakeLLM.instances[-1].requests[0]
    assert ids == FakeLLM.instances[-1].tokenizer(plain.prompt(TEXTS[0]))["input_ids"]
    assert ids[0] == 1 and plain.metadata()["chat_template"] is False

    FakeLLM.template = False
    assert fitted().chat is False  # auto: no template, plain prompts
    with pytest.raises(ModelError, match="defines no chat template"):
        fitted(chat=True)


def test_long_prompts_keep_their_end(fake_vllm: Any) -> None:
    model = fitted(max_model_len=12, max_new_tokens=2, chat=False)
    model.predict_labels(["word " * 50 + "last"])
    ids, _ = FakeLLM.instances[0].requests[0]
    full = FakeLLM.instances[0].tokenizer(model.prompt("word " * 50 + "last"))["input_ids"]
    assert ids == full[-10:]  # max_model_len - max_new_tokens


def test_tokens_latency_and_stop_strings(fake_vllm: Any) -> None:
    model = build_model(ModelSpec(name="v", kind="vllm", options={"path": "m"}))
    assert isinstance(model, vllm_offline.VLLMGenerative)
    model.fit(_Task("qa", "qa"), types.SimpleNamespace(labels=[]), [], [], 3)  # type: ignore[arg-type]
    answers = model.answer(["Who?", "What?", "Where?"], ["ctx one", "", "ctx"])
    engine = FakeLLM.instances[0]
    # the QA default stops at a newline: the engine is told, and the text is cut
    assert all(p.kwargs["stop"] == ["\n"] for _, p in engine.requests)
    texts = [answer(ids, p) for ids, p in engine.requests]
    assert answers == [t.split("\n")[0].strip() for t in texts]
    meta = model.metadata()
    assert meta["prompt_tokens"] == sum(len(ids) for ids, _ in engine.requests)
    assert meta["completion_tokens"] == sum(len(t.split()) for t in texts)
    assert meta["requests"] == 3 and meta["family"] == "vllm"
    assert meta["latency_seconds"]["max"] == pytest.approx(1.5)
    assert meta["latency_seconds"]["median"] == pytest.approx(1.0)
    assert meta["vllm_version"] == "0.0-fake" and meta["generation_seconds"] >= 0


def test_clear_errors_without_vllm_or_a_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "vllm", None)  # import vllm raises ImportError
    model = build_model(ModelSpec(name="v", kind="vllm", options={"path": "m"}))
    with pytest.raises(InputError, match=r"glotbench\[vllm\]"):
        model.fit(_Task(), _Dataset(), [], [], 1)  # type: ignore[arg-type]
    monkeypatch.setitem(sys.modules, "vllm", types.ModuleType("vllm"))
    monkeypatch.setattr(vllm_offline, "cuda_available", lambda: False)
    with pytest.raises(InputError, match="CUDA GPU"):
        model.fit(_Task(), _Dataset(), [], [], 1)  # type: ignore[arg-type]


def test_the_kind_is_registered_and_its_options_checked() -> None:
    kind = REGISTRY["vllm"]
    assert kind.extra == "vllm" and kind.generative and kind.id_option == "path"
    assert check_options("vllm", {"path": "m", "max_model_len": "2048"})["max_model_len"] == 2048
    with pytest.raises(ValueError, match="unknown option 'device'"):
        check_options("vllm", {"path": "m", "device": "cuda"})
    with pytest.raises(ModelError, match="dtype"):
        build_model(ModelSpec(name="v", kind="vllm", options={"path": "m", "dtype": "int3"}))


def test_the_prompt_and_decoding_options_are_hf_generatives() -> None:
    """The vllm kind takes HFGenerative's prompt and decoding options, listed again in its
    constructor rather than folded into ``**kwargs``: the signature is the kind's option
    schema (names, annotations, defaults), so unknown options such as ``device`` stay
    refused. This keeps the two lists from drifting apart: the same names, with the
    same annotations and defaults (``batch_size``, vLLM's ``max_num_seqs``, aside)."""
    import inspect

    from glotbench.runner.models.hf_generative import HFGenerative
    from glotbench.runner.models.options import option_schema

    hf = inspect.signature(HFGenerative.__init__).parameters
    vl = inspect.signature(vllm_offline.VLLMGenerative.__init__).parameters
    shared = [n for n in hf if n in vl]
    assert set(hf) - set(vl) == {"device", "precision", "samples"}
    for n in shared:
        if n != "batch_size":
            assert (vl[n].annotation, vl[n].default) == (hf[n].annotation, hf[n].default), n
    options, open_ended = option_schema("vllm")
    assert not open_ended and set(shared) - {"self", "name", "base"} <= set(options)


@pytest.mark.slow
def test_a_run_keeps_outputs_and_stores_the_counts(fake_vllm: Any, tmp_path: Path) -> None:
    rows = [
        {"id": f"r{i}", "text": f"{lab} review {i}", "label": lab, "split": "test"}
        for i, lab in enumerate(["neg", "pos"] * 5)
    ] + [{"id": f"t{lab}", "text": f"{lab} x", "label": lab, "split": "train"} for lab in LABELS]
    (tmp_path / "d.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", "utf-8")
    suite = {
        "name": "v",
        "protocol": {"iterations": 2, "seed": 5, "speed_iterations": 0},
        "datasets": [
            {"name": "sent", "task": "sentiment", "language": "en", "loader": "jsonl",
             "paths": ["d.jsonl"], "splits": "predefined"}
        ],
        "models": [{"name": "served", "kind": "vllm", "options": {"path": "org/m"}}],
    }  # fmt: skip
    (tmp_path / "suite.yaml").write_text(json.dumps(suite), "utf-8")
    store = tmp_path / "s.duckdb"
    summary = api.run_benchmark(
        tmp_path / "suite.yaml", store=store, scores=False, executor="local"
    )
    assert not summary.failures and summary.completed == 2
    with Store.open(store, read_only=True) as handle:
        kept = handle.outputs.read()
        runs = handle.runs.frame()
    requests = [r for engine in FakeLLM.instances for r in engine.requests]
    assert len(requests) == 2 * 10 and len(kept) == 2 * 10  # outputs kept by default
    metas = {}
    for rec in runs.to_dict(orient="records"):
        meta = rec["model_metadata"]
        metas[rec["seed"]] = json.loads(meta) if isinstance(meta, str) else meta
    assert len(metas) == 2
    for meta in metas.values():
        assert meta["requests"] == 10 and meta["family"] == "vllm"
        # each run's requests carry that run's seeds: its prompt tokens are theirs
        prompts = {item_seed(meta["sampling_seed"], _prompt(text), 0) for text in kept["input"]}
        mine = [ids for ids, params in requests if params.kwargs["seed"] in prompts]
        assert len(mine) == 10 and meta["prompt_tokens"] == sum(len(ids) for ids in mine)
    assert set(kept["output"]) <= {"neg", "pos", "<unparsed>"}


def _prompt(text: str) -> str:
    model = build_model(ModelSpec(name="p", kind="vllm", options={"path": "m"}))
    model.labels = list(LABELS)
    return model.prompt(text)


def test_on_a_real_gpu(tmp_path: Path) -> None:
    """vLLM on a GPU, on the tiny GPT-2 the tests build: seeded answers repeat, counts add up.

    Runs only where vLLM and a CUDA GPU exist (benchmarks/bench_vllm.py is the longer check).
    """
    import importlib.util

    if importlib.util.find_spec("vllm") is None:
        pytest.skip("vLLM is not installed (pip install 'glotbench[vllm]'; needs a CUDA GPU)")
    if not vllm_offline.cuda_available():
        pytest.skip("no CUDA GPU: the vllm kind runs on a GPU only")
    from .hf_tiny import save_gpt, train_tokenizer

    folder = save_gpt(tmp_path / "gpt", train_tokenizer(TEXTS * 10, bert=False))
    options = {"path": str(folder), "max_new_tokens": 4, "gpu_memory_utilization": 0.3}
    model = build_model(ModelSpec(name="gpu", kind="vllm", options=options))
    model.fit(_Task(), _Dataset(), [], [], 7)  # type: ignore[arg-type]
    first = model.respond(TEXTS)  # type: ignore[attr-defined]
    assert model.respond(TEXTS) == first  # type: ignore[attr-defined]  # same seeds
    meta = model.metadata()
    assert meta["requests"] == 2 * len(TEXTS) and meta["completion_tokens"] > 0
