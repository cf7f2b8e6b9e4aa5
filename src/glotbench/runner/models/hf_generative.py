"""Hugging Face causal LMs, zero/few-shot classification (extra ``neural``; lazy imports).

The prompt lists the labels, then ``few_shot`` training examples drawn with
the iteration's seed, then the item. ``samples`` responses are *sampled*
(temperature ``temperature``) per item with the iteration's seed — model-side
variance, as Sälevä et al. sample 5 answers per question; the prediction is
the label most responses name (ties: the first label in label order), and
the mean agreement of the responses with that prediction is stored in the
metadata. A response names a label when it starts with it (case-insensitive,
after stripping); one naming no label counts as ``<unparsed>`` — a wrong answer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from glotbench.runner.errors import ModelError
from glotbench.runner.models.base import Model
from glotbench.runner.models.hf_encoder import _torch, resolve_path

if TYPE_CHECKING:
    from glotbench.runner.datasets.base import Dataset, Record
    from glotbench.runner.tasks import Task

UNPARSED = "<unparsed>"


class HFGenerative(Model):
    trains = False

    def __init__(
        self,
        name: str,
        path: str,
        base: str | Path | None = None,
        few_shot: int = 0,
        samples: int = 1,
        temperature: float = 1.0,
        max_new_tokens: int = 5,
        instruction: str = "Classify the text. Answer with one of: {labels}.",
        trust_remote_code: bool = False,
        device: str = "cpu",
    ) -> None:
        super().__init__(name, path=path)
        self.path = resolve_path(path, base)
        self.few_shot = few_shot
        self.samples = max(1, samples)
        self.temperature = temperature
        self.max_new_tokens = max_new_tokens
        self.instruction = instruction
        self.trust_remote_code = trust_remote_code
        self.device = device
        self.model: Any = None
        self.tokenizer: Any = None
        self.labels: list[Any] = []
        self.shots: list[Record] = []
        self.seed = 0
        self.agreement: float | None = None

    def supports(self, task: Task) -> bool:
        return task.kind == "sequence"

    def fit(
        self,
        task: Task,
        dataset: Dataset,
        train: Sequence[Record],
        validation: Sequence[Record],
        seed: int,
    ) -> None:
        torch, transformers = _torch()
        self.seed = seed
        self.labels = list(dataset.labels)
        if self.few_shot and train:
            idx = np.random.default_rng([seed, 3]).choice(
                len(train), min(self.few_shot, len(train)), replace=False
            )
            self.shots = [train[int(i)] for i in idx]
        if self.model is None:
            try:
                self.tokenizer = transformers.AutoTokenizer.from_pretrained(
                    self.path, trust_remote_code=self.trust_remote_code
                )
                self.model = transformers.AutoModelForCausalLM.from_pretrained(
                    self.path, trust_remote_code=self.trust_remote_code
                ).to(self.device)
            except OSError as exc:
                raise ModelError(f"model {self.name!r}: cannot load {self.path!r}: {exc}") from None
            self.model.eval()

    def prompt(self, text: str) -> str:
        lines = [self.instruction.format(labels=", ".join(map(str, self.labels)))]
        for shot in self.shots:
            lines.append(f"Text: {shot['text']}\nAnswer: {shot['label']}")
        lines.append(f"Text: {text}\nAnswer:")
        return "\n\n".join(lines)

    def parse_response(self, response: str) -> Any:
        text = response.strip().lower()
        for label in sorted(self.labels, key=lambda x: -len(str(x))):
            if text.startswith(str(label).lower()):
                return label
        return UNPARSED

    def predict_labels(self, texts: list[Any]) -> list[Any]:
        torch, transformers = _torch()
        if self.model is None:
            raise ModelError(f"model {self.name!r} must be loaded (fit) before it predicts")
        out, agreements = [], []
        for i, text in enumerate(texts):
            transformers.set_seed(self.seed * 100_003 + i)
            prompt = self.prompt(text if isinstance(text, str) else " ".join(text))
            enc = self.tokenizer(prompt, return_tensors="pt")
            limit = getattr(self.model.config, "max_position_embeddings", None) or getattr(
                self.model.config, "n_positions", None
            )
            if limit:  # keep the end of an over-long prompt (the item and "Answer:")
                keep = max(1, int(limit) - self.max_new_tokens)
                enc = {k: v[:, -keep:] for k, v in enc.items()}
            enc = {k: v.to(self.device) for k, v in enc.items()}
            with torch.no_grad():
                gen = self.model.generate(
                    **enc,
                    do_sample=True,
                    temperature=self.temperature,
                    num_return_sequences=self.samples,
                    max_new_tokens=self.max_new_tokens,
                    pad_token_id=self.tokenizer.pad_token_id or self.tokenizer.eos_token_id,
                )
            responses = self.tokenizer.batch_decode(
                gen[:, enc["input_ids"].shape[1] :], skip_special_tokens=True
            )
            votes = Counter(self.parse_response(r) for r in responses)
            order = {lab: j for j, lab in enumerate(self.labels)}
            best = max(votes.items(), key=lambda kv: (kv[1], -order.get(kv[0], len(order))))[0]
            agreements.append(votes[best] / len(responses))
            out.append(best)
        self.agreement = float(np.mean(agreements)) if agreements else None
        return out

    def metadata(self) -> dict[str, Any]:
        return {
            "family": "hf-generative",
            "path": self.path,
            "few_shot": self.few_shot,
            "samples": self.samples,
            "temperature": self.temperature,
            "sample_agreement": self.agreement,
        }
