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
responses, bit for bit.

Batching. Prompts are generated ``batch_size`` at a time (sorted by length
to waste little padding), **left-padded** with an attention mask so that every
row's next token comes right after its own prompt. Each row samples from its
own ``torch.Generator`` seeded by (iteration seed, prompt, vote index): a
logits processor draws the row's token (temperature, then nucleus filtering,
then one multinomial draw) and greedy selection takes it. So a response does
not depend on which items share its batch or in what order they come, up to
the floating-point rounding of batched matrix products (a sampled token can
only change when a draw falls within that rounding of a cumulative
probability boundary; greedy decoding, the same with an argmax tie). Tests
check that batched and one-by-one greedy responses are identical.

Device and precision: ``device`` (``auto``: a CUDA GPU when present, else the
CPU) and ``precision`` (``fp32``, ``bf16``, ``fp16`` autocast, ``auto``), as
for the other Hugging Face adapters (:mod:`glotbench.runner.models.hf_runtime`).

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
from glotbench.runner.models.hf_encoder import _torch, is_out_of_memory, resolve_path
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

UNPARSED = "<unparsed>"


def item_seed(seed: int, prompt: str, vote: int = 0) -> int:
    """The sampling seed of one response: a hash of the iteration seed, the prompt, the vote."""
    key = f"{int(seed)}\x00{prompt}" if vote == 0 else f"{int(seed)}\x00{prompt}\x00{vote}"
    digest = hashlib.sha256(key.encode()).digest()
    return int.from_bytes(digest[:8], "big") % (2**63)


def nucleus_probabilities(logits: Any, temperature: float, top_p: float, torch: Any) -> Any:
    """Sampling probabilities of each row: softmax(logits / T) restricted to the top-p nucleus.

    The nucleus is the smallest set of most probable tokens whose probability
    reaches ``top_p`` (Holtzman et al. 2020, *The Curious Case of Neural Text
    Degeneration*, §3.1); the rest get probability 0 and the nucleus is
    renormalised by the multinomial draw.
    """
    probs = torch.softmax(logits.float() / float(temperature), dim=-1)
    if top_p >= 1.0:
        return probs
    ordered, order = torch.sort(probs, dim=-1, descending=True)
    before = torch.cumsum(ordered, dim=-1) - ordered  # mass of the more probable tokens
    ordered = ordered.masked_fill(before >= float(top_p), 0.0)
    return torch.zeros_like(probs).scatter(-1, order, ordered)


class RowSampler:
    """A logits processor that samples each row's token from that row's own generator.

    It returns scores that are -inf except at the sampled token, so that
    ``generate(do_sample=False)`` (greedy selection) takes exactly that token:
    the batch shares the forward passes, not the random stream.
    """

    def __init__(self, generators: list[Any], temperature: float, top_p: float) -> None:
        self.generators = generators
        self.temperature = temperature
        self.top_p = top_p

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        torch, _ = _torch()
        probs = nucleus_probabilities(scores, self.temperature, self.top_p, torch)
        chosen = torch.cat(
            [
                torch.multinomial(probs[row], 1, generator=gen)
                for row, gen in enumerate(self.generators)
            ]
        )
        out = torch.full_like(scores, float("-inf"))
        return out.scatter(-1, chosen.view(-1, 1).to(out.device), 0.0)


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
        device: str = "auto",
        precision: str = "fp32",
        batch_size: int = 16,
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
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise ModelError(f"model {name!r}: batch_size must be a positive integer")
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
        #: as configured (``auto``, ``cpu``, ``cuda``...); resolved when the model loads
        self.device_option = device
        self.device = "cpu"
        self.precision = check_precision(precision, name)
        self.batch_size = batch_size
        self.oom_events: list[dict[str, Any]] = []
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
        torch, transformers = _torch()
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
            self.device = resolve_device(self.device_option, torch, self.name)
            self.precision = resolve_precision(self.precision, self.device, torch)
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

    def _prompt_ids(self, texts: list[Any]) -> tuple[list[str], list[list[int]]]:
        """Prompts and their token ids, over-long ones cut at the front."""
        config = self.model.config
        limit = getattr(config, "max_position_embeddings", None) or getattr(
            config, "n_positions", None
        )
        prompts, ids = [], []
        for text in texts:
            if not isinstance(text, str):  # a text pair (or tokens)
                text = " ".join(map(str, text))
            prompt = self.prompt(text)
            tokens = list(self.tokenizer(prompt)["input_ids"])
            if limit:  # keep the end of an over-long prompt (the item and "Answer:")
                tokens = tokens[-max(1, int(limit) - self.max_new_tokens) :]
            prompts.append(prompt)
            ids.append(tokens)
        return prompts, ids

    def _generate(self, rows: list[list[int]], seeds: list[int], pad_id: int) -> list[str]:
        """Responses of one batch of token-id rows: left padding, attention mask, row seeds."""
        torch, transformers = _torch()
        width = max(len(r) for r in rows)
        input_ids = torch.tensor([[pad_id] * (width - len(r)) + r for r in rows])
        mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows])
        extra: dict[str, Any] = {}
        if self.do_sample:
            generators = [torch.Generator(device=self.device).manual_seed(s) for s in seeds]
            sampler = RowSampler(generators, self.temperature, self.top_p)
            extra["logits_processor"] = transformers.LogitsProcessorList([sampler])
        with torch.no_grad(), autocast(self.precision, self.device, torch):
            gen = self.model.generate(
                input_ids=input_ids.to(self.device),
                attention_mask=mask.to(self.device),
                max_new_tokens=self.max_new_tokens,
                pad_token_id=pad_id,
                do_sample=False,  # the RowSampler (if any) has already chosen each token
                num_beams=1,
                **extra,
            )
        return list(self.tokenizer.batch_decode(gen[:, width:], skip_special_tokens=True))

    def respond(self, texts: list[Any]) -> list[list[str]]:
        """The raw responses per item: ``vote`` samples (or one greedy answer) each.

        Rows (item × vote) are generated ``batch_size`` at a time, longest
        prompts first; see the module docstring for why batching does not
        change a response.
        """
        if self.model is None or self.seed is None:
            raise ModelError(f"model {self.name!r} must be loaded (fit) before it predicts")
        pad_id = self.tokenizer.pad_token_id
        if pad_id is None:
            pad_id = self.tokenizer.eos_token_id
        prompts, ids = self._prompt_ids(texts)
        votes = self.vote if self.do_sample else 1
        rows = [(i, v) for i in range(len(texts)) for v in range(votes)]
        rows.sort(key=lambda row: -len(ids[row[0]]))  # stable: equal lengths keep their order
        out: list[list[str]] = [[""] * votes for _ in texts]
        with item_progress(f"{self.name} generation", len(texts)) as progress:
            start = 0
            while start < len(rows):
                batch = rows[start : start + self.batch_size]
                seeds = [item_seed(self.seed, prompts[i], v) for i, v in batch]
                try:
                    responses = self._generate([ids[i] for i, _ in batch], seeds, pad_id)
                except Exception as exc:
                    if not is_out_of_memory(exc) or self.batch_size == 1:
                        raise
                    # rows sample from their own generators: a smaller batch changes nothing
                    self.batch_size = max(1, self.batch_size // 2)
                    self.oom_events.append(
                        {"where": "in generation", "batch_size": self.batch_size}
                    )
                    continue
                for (i, v), response in zip(batch, responses, strict=True):
                    out[i][v] = response
                progress.advance(sum(1 for _, v in batch if v == votes - 1))
                start += len(batch)
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
            "batch_size": self.batch_size,
            "oom_events": list(self.oom_events),
            "device": self.device,
            "precision": self.precision,
        }
