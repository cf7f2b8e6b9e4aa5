"""Tiny randomly initialised Hugging Face models for the HF adapter tests.

Import only after ``pytest.importorskip("torch")`` / ``("transformers")``:
nothing here is downloaded, every model and tokenizer is built from scratch.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def train_tokenizer(texts: list[str], *, bert: bool = True, vocab_size: int = 300) -> Any:
    """A WordPiece tokenizer trained on ``texts`` (fast; offsets; BERT pair template)."""
    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(
        texts, trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=SPECIALS)
    )
    if bert:
        cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]",
            pair="[CLS] $A [SEP] $B:1 [SEP]:1",
            special_tokens=[("[CLS]", cls), ("[SEP]", sep)],
        )
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        eos_token="[SEP]",
    )


def save_bert(folder: Path, tok: Any, *, positions: int = 64, seed: int = 0) -> Path:
    """A BERT (hidden 32, 2 layers, no dropout) with a masked-LM head, saved to ``folder``."""
    import torch
    import transformers

    torch.manual_seed(seed)
    model = transformers.BertForMaskedLM(
        transformers.BertConfig(
            vocab_size=len(tok),
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
            max_position_embeddings=positions,
            hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0,
        )
    )
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def save_gpt(folder: Path, tok: Any, *, seed: int = 0) -> Path:
    """A GPT-2 (embedding 16, 1 layer) saved to ``folder``."""
    import torch
    import transformers

    torch.manual_seed(seed)
    model = transformers.GPT2LMHeadModel(
        transformers.GPT2Config(
            vocab_size=len(tok),
            n_embd=16,
            n_layer=1,
            n_head=2,
            n_positions=256,
            bos_token_id=tok.eos_token_id,
            eos_token_id=tok.eos_token_id,
        )
    )
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


NAMES = ["Kari", "Ola", "Siri", "Nils", "Ingrid", "Jonas", "Liv", "Erik"]
CITIES = ["Oslo", "Bergen", "Aarhus", "Malmo", "Turku", "Tromso", "Odense", "Uppsala"]
FILLER = "the weather was mild and the trains were running on time that whole week".split()


def write_qa(path: Path, n: int = 60) -> Path:
    """Extractive QA records; every fifth context is long (needs several windows)."""
    rows = []
    for i in range(n):
        name, city = NAMES[i % len(NAMES)], CITIES[(i * 3) % len(CITIES)]
        other = CITIES[(i * 3 + 1) % len(CITIES)]
        context = f"{name} lives in {city} and works in {other} ."
        if i % 5 == 0:
            context = " ".join(FILLER) + " . " + context + " " + " ".join(FILLER)
        rows.append(
            {
                "id": f"q{i}",
                "question": f"where does {name} live ?",
                "context": context,
                "answers": {"text": [city], "answer_start": [context.find(city)]},
            }
        )
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def write_retrieval(path: Path, n: int = 16) -> Path:
    """Retrieval records: a query, one target id and the target's text (the pool)."""
    rows = []
    for i in range(n):
        name, city = NAMES[i % len(NAMES)], CITIES[(i + i // len(NAMES)) % len(CITIES)]
        rows.append(
            {
                "id": f"r{i}",
                "query": f"{name} lives in {city}",
                "targets": [f"t{i}"],
                "target_text": f"{city} is where {name} lives",
            }
        )
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def corpus(*paths: Path) -> list[str]:
    """Every string value of the JSONL files (tokenizer training text)."""
    out: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, list):
            for v in value:
                walk(v)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)

    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            walk(json.loads(line))
    return out
