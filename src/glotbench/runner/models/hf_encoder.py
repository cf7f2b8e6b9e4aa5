"""Hugging Face encoders fine-tuned ScandEval-style (extra ``neural``; imports are lazy).

AdamW, learning rate 2e-5, 100 warm-up steps then a linear schedule, batch 32
(halved, with gradient accumulation doubled, on out-of-memory), early stopping
on validation loss (``patience`` epochs), seed fixed per iteration. For token
classification the label goes on the first sub-token of each word (the
others get -100). Loads from a local folder or a Hub id; ``trust_remote_code``
stays off unless set.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glotbench.runner.errors import ModelError
from glotbench.runner.models.base import Model

if TYPE_CHECKING:
    from glotbench.runner.datasets.base import Dataset, Record
    from glotbench.runner.tasks import Task


def _torch() -> tuple[Any, Any]:
    try:
        import torch
        import transformers
    except ImportError:
        raise ModelError(
            "Hugging Face models need torch and transformers: pip install 'glotbench[neural]'"
        ) from None
    return torch, transformers


def resolve_path(path: str, base: str | Path | None) -> str:
    p = Path(path)
    if base is not None and not p.is_absolute() and (Path(base) / p).exists():
        return str(Path(base) / p)
    return path


class HFEncoder(Model):
    trains = True

    def __init__(
        self,
        name: str,
        path: str,
        base: str | Path | None = None,
        learning_rate: float = 2e-5,
        warmup_steps: int = 100,
        batch_size: int = 32,
        max_epochs: int = 10,
        patience: int = 2,
        max_length: int = 512,
        trust_remote_code: bool = False,
        device: str = "cpu",
    ) -> None:
        super().__init__(name, path=path)
        self.path = resolve_path(path, base)
        self.learning_rate = learning_rate
        self.warmup_steps = warmup_steps
        self.batch_size = batch_size
        self.max_epochs = max_epochs
        self.patience = patience
        self.max_length = max_length
        self.trust_remote_code = trust_remote_code
        self.device = device
        self.model: Any = None
        self.tokenizer: Any = None
        self.labels: list[Any] = []
        self.kind = ""
        self.history: list[dict[str, float]] = []

    def supports(self, task: Task) -> bool:
        return task.kind in ("sequence", "token")

    # -- encoding ------------------------------------------------------------
    def _encode(
        self, task: Task, records: Sequence[Record], with_labels: bool
    ) -> list[dict[str, Any]]:
        index = {label: i for i, label in enumerate(self.labels)}
        out = []
        for r in records:
            if task.kind == "sequence":
                text = r["text"]
                enc = self.tokenizer(
                    text, r.get("text_pair"), truncation=True, max_length=self.max_length
                )
                item = {k: list(v) for k, v in enc.items()}
                if with_labels:
                    item["labels"] = index.get(r["label"], -100)
            else:
                enc = self.tokenizer(
                    list(r["tokens"]),
                    is_split_into_words=True,
                    truncation=True,
                    max_length=self.max_length,
                )
                item = {k: list(v) for k, v in enc.items()}
                word_ids = enc.word_ids()
                item["_word_ids"] = word_ids
                if with_labels:
                    labels, previous = [], None
                    for w in word_ids:
                        if w is None or w == previous:
                            labels.append(-100)
                        else:
                            labels.append(index.get(r["tags"][w], -100))
                        previous = w
                    item["labels"] = labels
            out.append(item)
        return out

    def _collate(self, items: list[dict[str, Any]]) -> dict[str, Any]:
        torch, _ = _torch()
        keys = [k for k in items[0] if not k.startswith("_")]
        width = max(len(i["input_ids"]) for i in items)
        pad_id = self.tokenizer.pad_token_id or 0
        batch: dict[str, Any] = {}
        for k in keys:
            if k == "labels" and not isinstance(items[0]["labels"], list):
                batch[k] = torch.tensor([i[k] for i in items])
                continue
            fill = pad_id if k == "input_ids" else (-100 if k == "labels" else 0)
            batch[k] = torch.tensor([i[k] + [fill] * (width - len(i[k])) for i in items])
        return {k: v.to(self.device) for k, v in batch.items()}

    def _loss(self, items: list[dict[str, Any]], batch_size: int) -> float:
        torch, _ = _torch()
        self.model.eval()
        total, count = 0.0, 0
        with torch.no_grad():
            for start in range(0, len(items), batch_size):
                chunk = items[start : start + batch_size]
                total += float(self.model(**self._collate(chunk)).loss) * len(chunk)
                count += len(chunk)
        return total / max(count, 1)

    # -- training ------------------------------------------------------------
    def fit(
        self,
        task: Task,
        dataset: Dataset,
        train: Sequence[Record],
        validation: Sequence[Record],
        seed: int,
    ) -> None:
        torch, transformers = _torch()
        torch.manual_seed(seed)
        transformers.set_seed(seed)
        self.kind = task.kind
        self.labels = list(dataset.labels)
        auto = (
            transformers.AutoModelForSequenceClassification
            if task.kind == "sequence"
            else transformers.AutoModelForTokenClassification
        )
        try:
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(
                self.path, trust_remote_code=self.trust_remote_code
            )
            self.model = auto.from_pretrained(
                self.path,
                num_labels=len(self.labels),
                id2label={i: str(lab) for i, lab in enumerate(self.labels)},
                label2id={str(lab): i for i, lab in enumerate(self.labels)},
                ignore_mismatched_sizes=True,
                trust_remote_code=self.trust_remote_code,
            ).to(self.device)
        except OSError as exc:
            raise ModelError(f"model {self.name!r}: cannot load {self.path!r}: {exc}") from None
        limit = getattr(self.model.config, "max_position_embeddings", None)
        if isinstance(limit, int) and limit > 0:
            self.max_length = min(self.max_length, limit)
        train_items = self._encode(task, train, True)
        val_items = self._encode(task, validation, True)
        batch_size, accumulation = self.batch_size, 1
        oom_errors: tuple[type[BaseException], ...] = (MemoryError,)
        if hasattr(torch.cuda, "OutOfMemoryError"):
            oom_errors = (torch.cuda.OutOfMemoryError, MemoryError)
        while True:
            try:
                self._train(train_items, val_items, batch_size, accumulation, seed)
                break
            except oom_errors:
                if batch_size == 1:
                    raise ModelError(
                        f"model {self.name!r}: out of memory even with batch size 1"
                    ) from None
                batch_size, accumulation = batch_size // 2, accumulation * 2
                self.history.append({"oom_batch_size": float(batch_size)})

    def _train(
        self,
        train_items: list[dict[str, Any]],
        val_items: list[dict[str, Any]],
        batch_size: int,
        accumulation: int,
        seed: int,
    ) -> None:
        torch, transformers = _torch()
        generator = torch.Generator().manual_seed(seed)
        steps_per_epoch = math.ceil(len(train_items) / (batch_size * accumulation))
        optimizer = torch.optim.AdamW(self.model.parameters(), lr=self.learning_rate)
        scheduler = transformers.get_linear_schedule_with_warmup(
            optimizer,
            self.warmup_steps,
            max(steps_per_epoch * self.max_epochs, self.warmup_steps + 1),
        )
        best, best_state, bad = math.inf, None, 0
        for epoch in range(self.max_epochs):
            self.model.train()
            order = torch.randperm(len(train_items), generator=generator).tolist()
            for step, start in enumerate(range(0, len(order), batch_size)):
                chunk = [train_items[i] for i in order[start : start + batch_size]]
                loss = self.model(**self._collate(chunk)).loss / accumulation
                loss.backward()
                if (step + 1) % accumulation == 0 or start + batch_size >= len(order):
                    optimizer.step()
                    scheduler.step()
                    optimizer.zero_grad()
            if not val_items:
                continue
            val_loss = self._loss(val_items, batch_size)
            self.history.append({"epoch": float(epoch), "validation_loss": val_loss})
            if val_loss < best - 1e-6:
                best, bad = val_loss, 0
                best_state = copy.deepcopy(self.model.state_dict())
            else:
                bad += 1
                if bad >= self.patience:
                    break
        if best_state is not None:
            self.model.load_state_dict(best_state)

    # -- prediction ------------------------------------------------------------
    def _logits(self, items: list[dict[str, Any]]) -> list[Any]:
        torch, _ = _torch()
        self.model.eval()
        out = []
        with torch.no_grad():
            for start in range(0, len(items), self.batch_size):
                chunk = items[start : start + self.batch_size]
                logits = self.model(**self._collate(chunk)).logits
                out.extend(logits.argmax(-1).tolist())
        return out

    def predict_labels(self, texts: list[Any]) -> list[Any]:
        if self.model is None or self.kind != "sequence":
            raise ModelError(f"model {self.name!r} must be fine-tuned on a sequence task first")
        records = [
            {"text": t[0], "text_pair": t[1]} if isinstance(t, tuple) else {"text": t}
            for t in texts
        ]
        from glotbench.runner.tasks import get_task

        items = self._encode(get_task("classification"), records, False)
        return [self.labels[i] for i in self._logits(items)]

    def predict_tags(self, sentences: list[list[str]]) -> list[list[Any]]:
        if self.model is None or self.kind != "token":
            raise ModelError(f"model {self.name!r} must be fine-tuned on a token task first")
        from glotbench.runner.tasks import get_task

        items = self._encode(get_task("pos"), [{"tokens": s} for s in sentences], False)
        out = []
        for item, sent, ids in zip(items, sentences, self._logits(items), strict=True):
            tags: list[Any] = [self.labels[0]] * len(sent)  # words cut by truncation
            previous = None
            word_ids = item["_word_ids"]
            for w, label in zip(word_ids, ids[: len(word_ids)], strict=True):
                if w is not None and w != previous:
                    tags[w] = self.labels[label]
                previous = w
            out.append(tags)
        return out

    def metadata(self) -> dict[str, Any]:
        meta: dict[str, Any] = {"family": "hf-encoder", "path": self.path, "history": self.history}
        if self.model is not None:
            meta["parameters"] = int(sum(p.numel() for p in self.model.parameters()))
        return meta
