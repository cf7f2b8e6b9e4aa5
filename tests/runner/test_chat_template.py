"""Chat templates of hf-generative models; the openai kind sends the same messages (issue 25).

The tiny GPT-2 of hf_tiny.py gets a simple Jinja chat template; the expected
token ids are those of the conversation written out by hand (independent of
``apply_chat_template``), and the ``openai`` kind's chat request must carry
the messages the template was given.
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
from glotbench.runner.models import ModelSpec, build_model  # noqa: E402
from glotbench.runner.tasks import get_task  # noqa: E402

from .conftest import write_sentiment  # noqa: E402
from .hf_tiny import corpus, save_gpt, train_tokenizer  # noqa: E402

TEMPLATE = (
    "{% for m in messages %}<{{ m['role'] }}> {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<assistant> {% endif %}"
)


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("chat")
    write_sentiment(folder / "sent.jsonl", n=40)
    texts = corpus(folder / "sent.jsonl")
    plain = train_tokenizer(texts, bert=False)
    save_gpt(folder / "plain", plain)
    chat = train_tokenizer(texts, bert=False)
    chat.chat_template = TEMPLATE
    save_gpt(folder / "chat", chat)
    return {"dir": folder, "plain": folder / "plain", "chat": folder / "chat"}


def _dataset(folder: Path):
    return build_dataset(
        {
            "name": "sent",
            "task": "sentiment",
            "language": "en",
            "loader": "jsonl",
            "paths": [str(folder / "sent.jsonl")],
            "splits": {"train": 20, "validation": 0, "test": 4},
        }
    )


def _fitted(folder: Path, kind: str, **options):
    ds = _dataset(folder)
    model = build_model(ModelSpec(name="m", kind=kind, options={"max_new_tokens": 3, **options}))
    model.fit(get_task("sentiment"), ds, ds.train, ds.validation, 3)
    return model, [r["text"] for r in ds.test]


@pytest.mark.slow
def test_auto_applies_the_tokenizers_chat_template(models):
    model, texts = _fitted(
        models["dir"],
        "hf-generative",
        path=str(models["chat"]),
        system="You label sentiment.",
        few_shot=2,
    )
    assert model.chat is True
    prompt = model.prompt(texts[0])
    by_hand = f"<system> You label sentiment.\n<user> {prompt}\n<assistant> "
    expected = model.tokenizer(by_hand, add_special_tokens=False)["input_ids"]
    assert model._prompt_ids([prompt]) == [list(expected)]
    assert model.chat_text(prompt) == by_hand
    responses = model.respond(texts)
    assert len(responses) == len(texts) and all(len(r) == 1 for r in responses)
    meta = model.metadata()
    assert meta["chat_template"] is True and meta["system"] == "You label sentiment."


def test_chat_false_and_tokenizers_without_a_template(models):
    off, texts = _fitted(models["dir"], "hf-generative", path=str(models["chat"]), chat=False)
    prompt = off.prompt(texts[0])
    assert off.chat is False
    assert off._prompt_ids([prompt]) == [list(off.tokenizer(prompt)["input_ids"])]
    plain, _ = _fitted(models["dir"], "hf-generative", path=str(models["plain"]))
    assert plain.chat is False and plain.metadata()["chat_template"] is False
    with pytest.raises(ModelError, match="defines no chat template"):
        _fitted(models["dir"], "hf-generative", path=str(models["plain"]), chat=True)
    with pytest.raises(ModelError, match="chat must be true, false or auto"):
        build_model(
            ModelSpec(
                name="m",
                kind="hf-generative",
                options={"path": str(models["plain"]), "chat": "yes"},
            )
        )


def test_openai_chat_request_carries_the_templates_messages(models):
    """Same options, same seed: the same prompt (few-shot examples included) and the
    same messages — a server applying the model's template renders what hf-generative does."""
    options = {"few_shot": 2, "system": "You label sentiment."}
    hf, texts = _fitted(models["dir"], "hf-generative", path=str(models["chat"]), **options)
    api, _ = _fitted(
        models["dir"],
        "openai",
        model="tiny",
        base_url="http://127.0.0.1:9/v1",
        cache=False,
        **options,
    )
    for text in texts:
        prompt = hf.prompt(text)
        assert api.prompt(text) == prompt
        body = api.request_body(prompt, seed=1)
        assert body["messages"] == hf.messages(prompt)
        assert body["messages"] == [
            {"role": "system", "content": "You label sentiment."},
            {"role": "user", "content": prompt},
        ]
        rendered = hf.tokenizer.apply_chat_template(
            body["messages"], tokenize=False, add_generation_prompt=True
        )
        assert rendered == hf.chat_text(prompt)
