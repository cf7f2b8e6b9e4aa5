"""Hugging Face encoders fine-tuned ScandEval-style (extra ``neural``; imports are lazy).

AdamW, learning rate 2e-5, 100 warm-up steps then a linear schedule, batch 32,
early stopping on validation loss (``patience`` epochs), seed fixed per
iteration. For token classification the label goes on the first sub-token of
each word (the others get -100). Loads from a local folder or a Hub id;
``trust_remote_code`` stays off unless set.

Out of memory. One optimizer step always consumes ``batch_size`` examples
(the *effective* batch). They are fed to the model in micro-batches of
``batch_size / gradient_accumulation`` examples whose losses, weighted by
their share of the step, are accumulated before the step. When a forward or
backward pass runs out of memory (``torch.OutOfMemoryError``, a
``RuntimeError`` whose message says "out of memory", or ``MemoryError``) the
gradients of the interrupted step are discarded, the micro-batch halves (so
gradient accumulation doubles and the effective batch stays the same) and the
*same* step is recomputed from its first example: no step is half-applied
and the learning-rate schedule is unchanged. Evaluation batches shrink the
same way. A micro-batch of one that still runs out of memory is a
:class:`ModelError`. The final micro-batch and accumulation, and every
halving, are in :meth:`HFEncoder.metadata`.

Dependency parsing (task kind ``parsing``) fine-tunes the encoder with a
deep biaffine head (Dozat & Manning 2017) and decodes every sentence with the
exact single-root maximum spanning arborescence: :mod:`.hf_biaffine`. Its
options are ``arc_mlp`` (500), ``label_mlp`` (100), ``mlp_dropout`` (0.33) and
``head_learning_rate`` (the head's AdamW learning rate; by default
``learning_rate``); ``head: biaffine`` restricts the model to parsing.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glotbench.runner.errors import ModelError
from glotbench.runner.models.base import Model
from glotbench.runner.models.hf_biaffine import (
    WORD_FIELDS,
    biaffine_module,
    collate_words,
    decode_batch,
    encode_sentences,
    relation_inventory,
    to_arcs,
)
from glotbench.runner.models.hf_runtime import (
    autocast,
    check_precision,
    resolve_device,
    resolve_precision,
)
from glotbench.runner.progress import item_progress

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


def is_out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` is an out-of-memory error (CUDA, MPS, CPU allocator, Python)."""
    if isinstance(exc, MemoryError):
        return True
    try:
        import torch
    except ImportError:  # pragma: no cover - the adapters need torch anyway
        torch = None  # type: ignore[assignment]
    oom = getattr(torch, "OutOfMemoryError", None) or getattr(
        getattr(torch, "cuda", None), "OutOfMemoryError", None
    )
    if oom is not None and isinstance(exc, oom):
        return True
    return isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower()


class HFBase(Model):
    """Shared parts of the Hugging Face adapters: loading, collation, OOM-safe batches."""

    family = "hf"

    def __init__(
        self,
        name: str,
        path: str,
        base: str | Path | None = None,
        batch_size: int = 32,
        max_length: int = 512,
        trust_remote_code: bool = False,
        device: str = "auto",
        precision: str = "fp32",
    ) -> None:
        super().__init__(name, path=path)
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ModelError(f"model {name!r}: batch_size must be a positive integer")
        self.path = resolve_path(path, base)
        self.batch_size = batch_size
        self.max_length = max_length
        self.trust_remote_code = trust_remote_code
        #: as configured (``auto``, ``cpu``, ``cuda``...); resolved when the model loads
        self.device_option = device
        self.device = "cpu"
        self.precision = check_precision(precision, name)
        self.model: Any = None
        self.tokenizer: Any = None
        #: current micro-batch (examples per forward pass); halves on out-of-memory
        self.micro_batch = batch_size
        self.oom_events: list[dict[str, Any]] = []

    # -- loading ---------------------------------------------------------------
    def _load(self, auto: Any, **kwargs: Any) -> None:
        torch, transformers = _torch()
        self.device = resolve_device(self.device_option, torch, self.name)
        self.precision = resolve_precision(self.precision, self.device, torch)
        try:
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(
                self.path, trust_remote_code=self.trust_remote_code
            )
            self.model = auto.from_pretrained(
                self.path, trust_remote_code=self.trust_remote_code, **kwargs
            ).to(self.device)
        except OSError as exc:
            raise ModelError(f"model {self.name!r}: cannot load {self.path!r}: {exc}") from None
        limit = getattr(self.model.config, "max_position_embeddings", None)
        if isinstance(limit, int) and limit > 0:
            self.max_length = min(self.max_length, limit)

    # -- batches ---------------------------------------------------------------
    @property
    def accumulation(self) -> int:
        """Micro-batches per optimizer step (gradient accumulation)."""
        return math.ceil(self.batch_size / self.micro_batch)

    def _collate(self, items: list[dict[str, Any]]) -> dict[str, Any]:
        """Tensors of ``items``: list fields right-padded, scalar fields stacked.

        Keys starting with ``_`` are bookkeeping and stay out of the batch.
        """
        torch, _ = _torch()
        keys = [k for k in items[0] if not k.startswith("_")]
        width = max(len(i["input_ids"]) for i in items)
        pad_id = self.tokenizer.pad_token_id
        if pad_id is None:
            pad_id = 0
        batch: dict[str, Any] = {}
        for k in keys:
            if not isinstance(items[0][k], list):
                batch[k] = torch.tensor([i[k] for i in items])
                continue
            fill = pad_id if k == "input_ids" else (-100 if k == "labels" else 0)
            batch[k] = torch.tensor([i[k] + [fill] * (width - len(i[k])) for i in items])
        return {k: v.to(self.device) for k, v in batch.items()}

    def _forward(self, items: list[dict[str, Any]], **kwargs: Any) -> Any:
        """One forward pass over ``items`` (the single place the model is called)."""
        return self.model(**self._collate(items), **kwargs)

    def _shrink(self, where: str) -> None:
        """Halve the micro-batch after an out-of-memory error ``where`` (or give up)."""
        if self.micro_batch <= 1:
            raise ModelError(
                f"model {self.name!r} ran out of memory {where} even with batch size 1 "
                f"(gradient accumulation {self.accumulation}); use a smaller model, a "
                "shorter max_length or a device with more memory"
            )
        self.micro_batch = max(1, self.micro_batch // 2)
        self.oom_events.append(
            {
                "where": where,
                "batch_size": self.micro_batch,
                "gradient_accumulation": self.accumulation,
            }
        )
        torch, _ = _torch()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    def _map_batches(
        self, items: Sequence[dict[str, Any]], fn: Callable[[list[dict[str, Any]]], Any]
    ) -> list[Any]:
        """``fn`` on consecutive micro-batches of ``items`` without gradients.

        An out-of-memory error halves the micro-batch and redoes that batch.
        The passes run under the configured precision (autocast) and report
        their progress (:mod:`glotbench.runner.progress`).
        """
        torch, _ = _torch()
        out: list[Any] = []
        start = 0
        with item_progress(f"{self.name} inference", len(items)) as progress:
            while start < len(items):
                part = list(items[start : start + self.micro_batch])
                try:
                    with torch.no_grad(), autocast(self.precision, self.device, torch):
                        result = fn(part)
                except Exception as exc:
                    if not is_out_of_memory(exc):
                        raise
                    self._shrink("in evaluation")
                    continue
                out.append(result)
                start += len(part)
                progress.advance(len(part))
        return out

    def metadata(self) -> dict[str, Any]:
        meta: dict[str, Any] = {
            "family": self.family,
            "path": self.path,
            "max_length": self.max_length,
            "batch_size": self.micro_batch,
            "oom_events": list(self.oom_events),
            "device": self.device,
            "precision": self.precision,
        }
        if self.model is not None:
            meta["parameters"] = int(sum(p.numel() for p in self.model.parameters()))
        return meta


#: values of the ``head`` option: ``auto`` picks the head from the task kind
ENCODER_HEADS = ("auto", "biaffine")


class HFEncoder(HFBase):
    """An encoder fine-tuned on a sequence or token classification task, or a biaffine parser."""

    trains = True
    family = "hf-encoder"

    def __init__(
        self,
        name: str,
        path: str,
        base: str | Path | None = None,
        learning_rate: float = 2e-5,
        warmup_steps: int = 100,
        batch_size: int = 32,
        gradient_accumulation: int = 1,
        max_epochs: int = 10,
        patience: int = 2,
        max_length: int = 512,
        trust_remote_code: bool = False,
        device: str = "auto",
        precision: str = "fp32",
        head: str = "auto",
        arc_mlp: int = 500,
        label_mlp: int = 100,
        mlp_dropout: float = 0.33,
        head_learning_rate: float | None = None,
    ) -> None:
        super().__init__(
            name,
            path,
            base=base,
            batch_size=batch_size,
            max_length=max_length,
            trust_remote_code=trust_remote_code,
            device=device,
            precision=precision,
        )
        if not isinstance(gradient_accumulation, int) or gradient_accumulation < 1:
            raise ModelError(f"model {name!r}: gradient_accumulation must be a positive integer")
        if head not in ENCODER_HEADS:
            raise ModelError(
                f"model {name!r}: head must be one of {', '.join(ENCODER_HEADS)}, got {head!r}"
            )
        for option, value in (("arc_mlp", arc_mlp), ("label_mlp", label_mlp)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ModelError(f"model {name!r}: {option} must be a positive integer")
        if not 0 <= mlp_dropout < 1:
            raise ModelError(f"model {name!r}: mlp_dropout must be in [0, 1)")
        if head_learning_rate is not None and not head_learning_rate > 0:
            raise ModelError(f"model {name!r}: head_learning_rate must be positive")
        self.head = head
        self.arc_mlp = arc_mlp
        self.label_mlp = label_mlp
        self.mlp_dropout = mlp_dropout
        self.head_learning_rate = head_learning_rate
        #: universal relations of the parsing head, and the label of words it cannot see
        self.relations: list[str] = []
        self.fallback_relation = "dep"
        self.learning_rate = learning_rate
        self.warmup_steps = warmup_steps
        self.gradient_accumulation = gradient_accumulation
        self.max_epochs = max_epochs
        self.patience = patience
        self.labels: list[Any] = []
        self.kind = ""
        self.history: list[dict[str, float]] = []
        self.micro_batch = max(1, math.ceil(batch_size / gradient_accumulation))

    def supports(self, task: Task) -> bool:
        if self.head == "biaffine":
            return task.kind == "parsing"
        return task.kind in ("sequence", "token", "parsing")

    # -- encoding ------------------------------------------------------------
    def _encode(
        self, task: Task, records: Sequence[Record], with_labels: bool
    ) -> list[dict[str, Any]]:
        if task.kind == "parsing":
            relations = {r: i for i, r in enumerate(self.relations)} if with_labels else None
            return encode_sentences(self.tokenizer, records, self.max_length, relations, self.name)
        index = {label: i for i, label in enumerate(self.labels)}
        out = []
        item: dict[str, Any]
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

    def _loss(self, items: list[dict[str, Any]]) -> float:
        self.model.eval()
        parts = self._map_batches(
            items, lambda chunk: float(self._forward(chunk).loss) * len(chunk)
        )
        return sum(parts) / max(len(items), 1)

    # -- training ------------------------------------------------------------
    def _start(self, seed: int) -> None:
        """Seed everything and reset the per-fit state."""
        torch, transformers = _torch()
        torch.manual_seed(seed)
        transformers.set_seed(seed)
        self.history = []
        self.oom_events = []
        self.micro_batch = max(1, math.ceil(self.batch_size / self.gradient_accumulation))

    def fit(
        self,
        task: Task,
        dataset: Dataset,
        train: Sequence[Record],
        validation: Sequence[Record],
        seed: int,
    ) -> None:
        _, transformers = _torch()
        self._start(seed)
        self.kind = task.kind
        if task.kind == "parsing":
            self._fit_parser(dataset, train)
            self._train(self._encode(task, train, True), self._encode(task, validation, True), seed)
            return
        self.labels = list(dataset.labels)
        auto = (
            transformers.AutoModelForSequenceClassification
            if task.kind == "sequence"
            else transformers.AutoModelForTokenClassification
        )
        self._load(
            auto,
            num_labels=len(self.labels),
            id2label={i: str(lab) for i, lab in enumerate(self.labels)},
            label2id={str(lab): i for i, lab in enumerate(self.labels)},
            ignore_mismatched_sizes=True,
        )
        self._train(self._encode(task, train, True), self._encode(task, validation, True), seed)

    def _fit_parser(self, dataset: Dataset, train: Sequence[Record]) -> None:
        """Load the encoder and put a fresh biaffine head on it (after :meth:`_start` seeded)."""
        _, transformers = _torch()
        if not train:
            raise ModelError(
                f"model {self.name!r}: the training split of {dataset.name!r} is empty"
            )
        # the relation inventory of the whole training split: the same head for every seed
        self.relations, self.fallback_relation = relation_inventory([*dataset.train, *train])
        self.labels = list(self.relations)
        self._load(transformers.AutoModel)
        self.model = biaffine_module(
            self.model, len(self.relations), self.arc_mlp, self.label_mlp, self.mlp_dropout
        ).to(self.device)

    def _collate(self, items: list[dict[str, Any]]) -> dict[str, Any]:
        if self.kind != "parsing":
            return super()._collate(items)
        torch, _ = _torch()
        subwords = [{k: v for k, v in i.items() if k not in WORD_FIELDS} for i in items]
        return {**super()._collate(subwords), **collate_words(items, torch, self.device)}

    def _parameter_groups(self) -> list[dict[str, Any]]:
        """AdamW parameter groups: the parsing head may have its own learning rate."""
        if self.kind != "parsing" or self.head_learning_rate is None:
            return [{"params": list(self.model.parameters())}]
        encoder = [p for n, p in self.model.named_parameters() if n.startswith("encoder.")]
        head = [p for n, p in self.model.named_parameters() if not n.startswith("encoder.")]
        return [{"params": encoder}, {"params": head, "lr": self.head_learning_rate}]

    def _accumulate(self, step_items: list[dict[str, Any]], optimizer: Any) -> None:
        """Forward and backward passes of one optimizer step, restarted on out-of-memory.

        Each micro-batch's mean loss is weighted by its share of the step, so
        the accumulated gradient is that of the step's mean loss whatever the
        micro-batch size. On out-of-memory the partial gradients are dropped
        and the step is recomputed with half the micro-batch.
        """
        torch, _ = _torch()
        # bf16 autocast trains safely; fp16 would need loss scaling, so it trains in fp32
        precision = "bf16" if self.precision == "bf16" else "fp32"
        n = len(step_items)
        while True:
            loss = None
            try:
                for start in range(0, n, self.micro_batch):
                    part = step_items[start : start + self.micro_batch]
                    with autocast(precision, self.device, torch):
                        loss = self._forward(part).loss * (len(part) / n)
                    loss.backward()
                    loss = None
                return
            except Exception as exc:
                if not is_out_of_memory(exc):
                    raise
                loss = None  # free the interrupted graph before retrying
                optimizer.zero_grad(set_to_none=True)
                self._shrink("in a training step")

    def _train(
        self,
        train_items: list[dict[str, Any]],
        val_items: list[dict[str, Any]],
        seed: int,
    ) -> None:
        torch, transformers = _torch()
        generator = torch.Generator().manual_seed(seed)
        steps_per_epoch = math.ceil(len(train_items) / self.batch_size)
        optimizer = torch.optim.AdamW(self._parameter_groups(), lr=self.learning_rate)
        scheduler = transformers.get_linear_schedule_with_warmup(
            optimizer,
            self.warmup_steps,
            max(steps_per_epoch * self.max_epochs, self.warmup_steps + 1),
        )
        optimizer.zero_grad(set_to_none=True)
        # total: every epoch's examples (early stopping may end the bar before it is full)
        with item_progress(f"{self.name} training", len(train_items) * self.max_epochs) as progress:
            self._epochs(train_items, val_items, generator, optimizer, scheduler, progress)

    def _epochs(
        self,
        train_items: list[dict[str, Any]],
        val_items: list[dict[str, Any]],
        generator: Any,
        optimizer: Any,
        scheduler: Any,
        progress: Any,
    ) -> None:
        """The epochs of :meth:`_train`, with early stopping on the validation loss."""
        torch, _ = _torch()
        best, best_state, bad = math.inf, None, 0
        for epoch in range(self.max_epochs):
            self.model.train()
            order = torch.randperm(len(train_items), generator=generator).tolist()
            for start in range(0, len(order), self.batch_size):
                step_items = [train_items[i] for i in order[start : start + self.batch_size]]
                self._accumulate(step_items, optimizer)
                progress.advance(len(step_items))
                try:
                    optimizer.step()
                except Exception as exc:
                    if is_out_of_memory(exc):
                        raise ModelError(
                            f"model {self.name!r} ran out of memory in the optimizer step: "
                            "the optimizer state does not fit (a smaller batch cannot help)"
                        ) from None
                    raise
                scheduler.step()
                optimizer.zero_grad(set_to_none=True)
            if not val_items:
                continue
            val_loss = self._loss(val_items)
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
        self.model.eval()

    # -- prediction ------------------------------------------------------------
    def _argmax(self, items: list[dict[str, Any]]) -> list[Any]:
        self.model.eval()
        out: list[Any] = []
        for part in self._map_batches(items, lambda chunk: self._forward(chunk).logits.argmax(-1)):
            out.extend(part.tolist())
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
        return [self.labels[i] for i in self._argmax(items)]

    def predict_tags(self, sentences: list[list[str]]) -> list[list[Any]]:
        if self.model is None or self.kind != "token":
            raise ModelError(f"model {self.name!r} must be fine-tuned on a token task first")
        from glotbench.runner.tasks import get_task

        items = self._encode(get_task("pos"), [{"tokens": s} for s in sentences], False)
        out = []
        for item, sent, ids in zip(items, sentences, self._argmax(items), strict=True):
            tags: list[Any] = [self.labels[0]] * len(sent)  # words cut by truncation
            previous = None
            word_ids = item["_word_ids"]
            for w, label in zip(word_ids, ids[: len(word_ids)], strict=True):
                if w is not None and w != previous:
                    tags[w] = self.labels[label]
                previous = w
            out.append(tags)
        return out

    def parse(self, records: list[Record]) -> list[list[tuple[int, str]]]:
        """(head, relation) per word: biaffine scores decoded as single-root trees."""
        if self.model is None or self.kind != "parsing":
            raise ModelError(f"model {self.name!r} must be fine-tuned on a parsing task first")
        from glotbench.runner.tasks import get_task

        torch, _ = _torch()
        items = self._encode(get_task("parsing"), records, False)
        root = self.relations.index("root")
        self.model.eval()
        decoded: list[tuple[list[int], list[int]]] = []
        for part in self._map_batches(
            items,
            lambda chunk: decode_batch(self.model, self._forward(chunk), chunk, root, torch),
        ):
            decoded.extend(part)
        return [
            to_arcs(item, heads, labels, self.relations, self.fallback_relation)
            for item, (heads, labels) in zip(items, decoded, strict=True)
        ]

    def metadata(self) -> dict[str, Any]:
        meta = {
            **super().metadata(),
            "effective_batch_size": self.batch_size,
            "gradient_accumulation": self.accumulation,
            "learning_rate": self.learning_rate,
            "warmup_steps": self.warmup_steps,
            "history": list(self.history),
        }
        if self.kind == "parsing":
            meta.update(
                {
                    "head": "biaffine (Dozat & Manning 2017)",
                    "decoder": "Chu-Liu/Edmonds, single root",
                    "arc_mlp": self.arc_mlp,
                    "label_mlp": self.label_mlp,
                    "mlp_dropout": self.mlp_dropout,
                    "head_learning_rate": self.head_learning_rate or self.learning_rate,
                    "relations": list(self.relations),
                }
            )
        return meta
