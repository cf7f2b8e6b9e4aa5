"""Extractive question answering with a fine-tuned Hugging Face encoder (extra ``neural``).

An ``AutoModelForQuestionAnswering`` head (a start and an end logit per
token) is fine-tuned with the encoder's recipe and training loop
(:meth:`HFEncoder._train`: AdamW, warm-up then linear schedule, batch 32 with
out-of-memory halving, early stopping on validation loss, seed per iteration).

Inputs are ``[CLS] question [SEP] context [SEP]``, truncating only the
context. Questions longer than ``max_question_length`` tokens (at most half
of ``max_length``) are cut. A context that does not fit is split into
overlapping windows (``doc_stride`` tokens of overlap, at most half of the
room left for the context), as in the SQuAD scripts of ``transformers``:
every window is a training example, and at prediction time every window
proposes spans, so no part of a long context is lost.

Training labels: the first gold answer (in the record's order) that occurs
in the context, at its *first* occurrence (``str.find``); the start label is
the first context token overlapping it, the end label the last one. Windows
that do not contain the whole answer point at the ``[CLS]`` token. Records
none of whose answers occur in their context are skipped (counted in the
metadata as ``unlocated_answers``).

Prediction: over all windows of an item, among the ``n_best`` highest start
and end logits of context tokens, the span ``(s, e)`` with ``s <= e`` and at
most ``max_answer_length`` tokens maximising ``start[s] + end[e]``; the
answer is the context from the first character of ``s`` to the last of
``e``. An item without a valid span gets the empty answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from glotbench.runner.errors import ModelError
from glotbench.runner.models.hf_encoder import HFEncoder, _torch

if TYPE_CHECKING:
    from glotbench.runner.datasets.base import Dataset, Record
    from glotbench.runner.tasks import Task


def answer_span(context: str, answers: Sequence[str]) -> tuple[int, int] | None:
    """Character span of the first answer that occurs in ``context`` (first occurrence)."""
    for answer in answers:
        for text in (str(answer), str(answer).strip()):
            if not text:
                continue
            start = context.find(text)
            if start >= 0:
                return start, start + len(text)
    return None


class HFQuestionAnswering(HFEncoder):
    """Span-extraction QA: fine-tuned start/end head, best valid span over windows."""

    family = "hf-qa"

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
        max_length: int = 384,
        doc_stride: int = 128,
        max_question_length: int = 64,
        max_answer_length: int = 30,
        n_best: int = 20,
        trust_remote_code: bool = False,
        device: str = "auto",
        precision: str = "fp32",
    ) -> None:
        super().__init__(
            name,
            path,
            base=base,
            learning_rate=learning_rate,
            warmup_steps=warmup_steps,
            batch_size=batch_size,
            gradient_accumulation=gradient_accumulation,
            max_epochs=max_epochs,
            patience=patience,
            max_length=max_length,
            trust_remote_code=trust_remote_code,
            device=device,
            precision=precision,
        )
        for option, value in (
            ("doc_stride", doc_stride),
            ("max_question_length", max_question_length),
            ("max_answer_length", max_answer_length),
            ("n_best", n_best),
        ):
            if not isinstance(value, int) or value < (0 if option == "doc_stride" else 1):
                raise ModelError(f"model {name!r}: {option} must be a positive integer")
        self.doc_stride = doc_stride
        self.max_question_length = max_question_length
        self.max_answer_length = max_answer_length
        self.n_best = n_best
        self.train_windows = 0
        self.unlocated_answers = 0

    def supports(self, task: Task) -> bool:
        """Extractive QA only: the answer is a span of a context every record has."""
        return task.kind == "qa" and "context" in task.fields

    # -- features ----------------------------------------------------------------
    def _windows(
        self, question: str, context: str, span: tuple[int, int] | None
    ) -> list[dict[str, Any]]:
        """The model inputs of one (question, context): one per context window."""
        tok = self.tokenizer
        cap = max(1, min(self.max_question_length, self.max_length // 2))
        q = tok(question, add_special_tokens=False, return_offsets_mapping=True)
        if len(q["input_ids"]) > cap:
            question = question[: q["offset_mapping"][cap - 1][1]]
        q_len = len(tok(question, add_special_tokens=False)["input_ids"])
        room = self.max_length - q_len - tok.num_special_tokens_to_add(pair=True)
        if room < 2:
            raise ModelError(
                f"model {self.name!r}: max_length {self.max_length} leaves no room for the "
                "context after the question"
            )
        enc = tok(
            question,
            context,
            truncation="only_second",
            max_length=self.max_length,
            stride=min(self.doc_stride, room // 2),
            return_overflowing_tokens=True,
            return_offsets_mapping=True,
        )
        keys = [k for k in enc if k not in ("offset_mapping", "overflow_to_sample_mapping")]
        out = []
        for w in range(len(enc["input_ids"])):
            ids = list(enc["input_ids"][w])
            sequence = enc.sequence_ids(w)
            offsets = [
                (int(o[0]), int(o[1])) if s == 1 else None
                for o, s in zip(enc["offset_mapping"][w], sequence, strict=True)
            ]
            item: dict[str, Any] = {k: list(enc[k][w]) for k in keys}
            item["_offsets"] = offsets
            if span is not None:
                item["start_positions"], item["end_positions"] = self._labels(ids, offsets, span)
            out.append(item)
        return out

    def _labels(
        self, ids: list[int], offsets: list[tuple[int, int] | None], span: tuple[int, int]
    ) -> tuple[int, int]:
        cls_id = self.tokenizer.cls_token_id
        cls = ids.index(cls_id) if cls_id is not None and cls_id in ids else 0
        context = [j for j, o in enumerate(offsets) if o is not None]
        if not context:
            return cls, cls
        first, last = context[0], context[-1]
        start_char, end_char = span
        if offsets[first][0] > start_char or offsets[last][1] < end_char:  # type: ignore[index]
            return cls, cls  # the answer is not (wholly) inside this window
        s = first
        while s <= last and offsets[s][1] <= start_char:  # type: ignore[index]
            s += 1
        e = last
        while e >= first and offsets[e][0] >= end_char:  # type: ignore[index]
            e -= 1
        return (s, e) if first <= s <= e <= last else (cls, cls)

    def _train_items(self, records: Sequence[Record]) -> tuple[list[dict[str, Any]], int]:
        items, unlocated = [], 0
        for r in records:
            answers = r["answers"]
            if isinstance(answers, dict):
                answers = answers.get("text", [])
            elif isinstance(answers, str):
                answers = [answers]
            context = str(r["context"])
            span = answer_span(context, answers)
            if span is None:
                unlocated += 1
                continue
            items.extend(self._windows(str(r["question"]), context, span))
        return items, unlocated

    # -- training ------------------------------------------------------------------
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
        self._load(transformers.AutoModelForQuestionAnswering)
        if not getattr(self.tokenizer, "is_fast", False):
            raise ModelError(
                f"model {self.name!r}: extractive QA needs a fast tokenizer (character offsets)"
            )
        train_items, unlocated = self._train_items(train)
        val_items, _ = self._train_items(validation)
        self.unlocated_answers = unlocated
        self.train_windows = len(train_items)
        if not train_items:
            raise ModelError(
                f"model {self.name!r}: no training record has an answer that occurs in its context"
            )
        self._train(train_items, val_items, seed)

    # -- prediction ----------------------------------------------------------------
    def answer(self, questions: list[str], contexts: list[str]) -> list[str]:
        if self.model is None or self.kind != "qa":
            raise ModelError(f"model {self.name!r} must be fine-tuned on a qa task first")
        if len(questions) != len(contexts):
            raise ModelError(
                f"model {self.name!r}: {len(questions)} questions but {len(contexts)} contexts"
            )
        items: list[dict[str, Any]] = []
        owner: list[int] = []
        for i, (question, context) in enumerate(zip(questions, contexts, strict=True)):
            windows = self._windows(str(question), str(context), None)
            items.extend(windows)
            owner.extend([i] * len(windows))
        self.model.eval()

        def logits(chunk: list[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
            out = self._forward(chunk)
            return (
                out.start_logits.float().cpu().numpy(),
                out.end_logits.float().cpu().numpy(),
            )

        best: list[tuple[float, str]] = [(-np.inf, "") for _ in questions]
        row = 0
        for starts, ends in self._map_batches(items, logits):
            for j in range(starts.shape[0]):
                item, example = items[row], owner[row]
                row += 1
                found = self._best_span(item["_offsets"], starts[j], ends[j])
                if found is not None and found[0] > best[example][0]:
                    s_char, e_char = found[1], found[2]
                    best[example] = (found[0], str(contexts[example])[s_char:e_char])
        return [text for _, text in best]

    def _best_span(
        self, offsets: list[tuple[int, int] | None], starts: np.ndarray, ends: np.ndarray
    ) -> tuple[float, int, int] | None:
        """(score, first char, end char) of the best valid span of one window."""
        n = len(offsets)
        mask = np.array([o is not None for o in offsets], dtype=bool)
        if not mask.any():
            return None
        start = np.where(mask, starts[:n], -np.inf)
        end = np.where(mask, ends[:n], -np.inf)
        top_s = [int(i) for i in np.argsort(-start, kind="stable")[: self.n_best] if mask[i]]
        top_e = [int(i) for i in np.argsort(-end, kind="stable")[: self.n_best] if mask[i]]
        found: tuple[float, int, int] | None = None
        for s in top_s:
            for e in top_e:
                if e < s or e - s + 1 > self.max_answer_length:
                    continue
                score = float(start[s] + end[e])
                if found is None or score > found[0]:
                    found = (score, offsets[s][0], offsets[e][1])  # type: ignore[index]
        return found

    def metadata(self) -> dict[str, Any]:
        return {
            **super().metadata(),
            "doc_stride": self.doc_stride,
            "max_answer_length": self.max_answer_length,
            "train_windows": self.train_windows,
            "unlocated_answers": self.unlocated_answers,
        }
