"""Hugging Face causal LMs, zero/few-shot classification (extra ``neural``; lazy imports).

The prompt lists the labels, then ``few_shot`` training examples, then the
item. A response names a label when it starts with it (case-insensitive,
after stripping); one naming no label counts as ``<unparsed>`` — a wrong
answer.

Model-side variance. By default every item gets **one sampled response per
iteration** (temperature ``temperature``, nucleus ``top_p``), drawn from a
seed derived from the iteration's seed (given to :meth:`HFGenerative.fit`)
and the item's prompt. The replication protocol runs a model that does not
train once per iteration with its own seed, so N iterations are N sampled
responses per item — as Sälevä et al. sample 5 answers per question — and
the between-seed variance of the stored runs (σ_seed of ``glotbench analyze
variance``) *is* the sampling variance of the model. Same seed, same
responses, bit for bit; predictions do not depend on how the items are
batched or ordered.

Alternatives: ``vote: k`` draws k responses per item within an iteration
and predicts the label most of them name (self-consistency; ties: the first
label in label order), storing the mean agreement; σ_seed is then the
variance of that majority vote. ``do_sample: false`` decodes greedily (one
deterministic response; ``vote`` must be 1).

Few-shot examples are drawn from the training split with the iteration seed,
so σ_seed also contains the variance due to the choice of examples; set
``shot_seed`` to draw the same examples in every iteration and measure the
sampling variance alone.
"""

from __future__ import annotations

import hashlib
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


def item_seed(seed: int, prompt: str) -> int:
    """The sampling seed of one item: a hash of the iteration seed and the prompt."""
    digest = hashlib.sha256(f"{int(seed)}\x00{prompt}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % (2**63)


class HFGenerative(Model):
    trains = False

    def __init__(
        self,
        name: str,
        path: str,
        base: str | Path | None = None,
        few_shot: int = 0,
        shot_seed: int | None = None,
        do_sample: bool = True,
        temperature: float = 1.0,
        top_p: float = 1.0,
        vote: int = 1,
        max_new_tokens: int = 5,
        instruction: str = "Classify the text. Answer with one of: {labels}.",
        trust_remote_code: bool = False,
        device: str = "cpu",
        samples: int | None = None,
    ) -> None:
        super().__init__(name, path=path)
        if samples is not None:
            raise ModelError(
                f"model {name!r}: option 'samples' is gone. Each iteration now draws one sampled "
                "response per item (run N iterations for N samples; σ_seed is the sampling "
                "variance); use 'vote: k' for a majority over k samples within an iteration"
            )
        if not isinstance(vote, int) or vote < 1:
            raise ModelError(f"model {name!r}: vote must be a positive integer")
        if not do_sample and vote > 1:
            raise ModelError(
                f"model {name!r}: vote: {vote} needs sampling; greedy decoding "
                "(do_sample: false) gives one deterministic response"
            )
        if do_sample and not temperature > 0:
            raise ModelError(f"model {name!r}: temperature must be > 0 when sampling")
        self.path = resolve_path(path, base)
        self.few_shot = few_shot
        self.shot_seed = shot_seed
        self.do_sample = bool(do_sample)
        self.temperature = temperature
        self.top_p = top_p
        self.vote = vote
        self.max_new_tokens = max_new_tokens
        self.instruction = instruction
        self.trust_remote_code = trust_remote_code
        self.device = device
        self.model: Any = None
        self.tokenizer: Any = None
        self.labels: list[Any] = []
        self.shots: list[Record] = []
        self.seed: int | None = None
        self.agreement: float | None = None
        self.unparsed: float | None = None

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
        """Load the model (once), fix the iteration seed and draw the few-shot examples."""
        _, transformers = _torch()
        self.seed = int(seed)
        self.labels = list(dataset.labels)
        self.shots = []
        if self.few_shot and train:
            shot_seed = self.seed if self.shot_seed is None else int(self.shot_seed)
            idx = np.random.default_rng([shot_seed, 3]).choice(
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

    def respond(self, texts: list[Any]) -> list[list[str]]:
        """The raw responses per item: ``vote`` samples (or one greedy answer) each."""
        torch, _ = _torch()
        if self.model is None or self.seed is None:
            raise ModelError(f"model {self.name!r} must be loaded (fit) before it predicts")
        config = self.model.config
        limit = getattr(config, "max_position_embeddings", None) or getattr(
            config, "n_positions", None
        )
        pad_id = self.tokenizer.pad_token_id
        if pad_id is None:
            pad_id = self.tokenizer.eos_token_id
        decoding: dict[str, Any] = {"do_sample": self.do_sample}
        if self.do_sample:
            decoding.update(
                temperature=self.temperature, top_p=self.top_p, num_return_sequences=self.vote
            )
        out = []
        for text in texts:
            if not isinstance(text, str):  # a text pair (or tokens)
                text = " ".join(map(str, text))
            prompt = self.prompt(text)
            enc = self.tokenizer(prompt, return_tensors="pt")
            if limit:  # keep the end of an over-long prompt (the item and "Answer:")
                keep = max(1, int(limit) - self.max_new_tokens)
                enc = {k: v[:, -keep:] for k, v in enc.items()}
            enc = {k: v.to(self.device) for k, v in enc.items()}
            torch.manual_seed(item_seed(self.seed, prompt))
            with torch.no_grad():
                gen = self.model.generate(
                    **enc, max_new_tokens=self.max_new_tokens, pad_token_id=pad_id, **decoding
                )
            out.append(
                self.tokenizer.batch_decode(
                    gen[:, enc["input_ids"].shape[1] :], skip_special_tokens=True
                )
            )
        return out

    def predict_labels(self, texts: list[Any]) -> list[Any]:
        order = {lab: j for j, lab in enumerate(self.labels)}
        out, agreements, unparsed, total = [], [], 0, 0
        for responses in self.respond(texts):
            votes = Counter(self.parse_response(r) for r in responses)
            best = max(votes.items(), key=lambda kv: (kv[1], -order.get(kv[0], len(order))))[0]
            agreements.append(votes[best] / len(responses))
            unparsed += votes[UNPARSED]
            total += len(responses)
            out.append(best)
        self.agreement = float(np.mean(agreements)) if agreements and self.vote > 1 else None
        self.unparsed = unparsed / total if total else None
        return out

    def metadata(self) -> dict[str, Any]:
        return {
            "family": "hf-generative",
            "path": self.path,
            "few_shot": self.few_shot,
            "shot_seed": self.shot_seed,
            "decoding": "sampling" if self.do_sample else "greedy",
            "temperature": self.temperature if self.do_sample else None,
            "top_p": self.top_p if self.do_sample else None,
            "vote": self.vote,
            "responses_per_item": self.vote if self.do_sample else 1,
            "sampling_seed": self.seed,
            "sample_agreement": self.agreement,
            "unparsed_rate": self.unparsed,
        }
