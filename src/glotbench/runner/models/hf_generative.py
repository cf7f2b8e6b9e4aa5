"""Hugging Face causal LMs, zero/few-shot (extra ``neural``; lazy imports).

Three task kinds:

* **classification** (kind ``sequence``): the prompt lists the labels, then
  ``few_shot`` training examples, then the item. A response names a label
  when it starts with it (case-insensitive, after stripping); one naming no
  label counts as ``<unparsed>`` — a wrong answer.
* **question answering** (kind ``qa``: ``qa``, ``abstractive_qa``) and
  **translation** (kind ``translation``): free text. The prompt is a
  template per task (``templates``; defaults :data:`DEFAULT_TEMPLATES`),
  preceded by ``few_shot`` filled-in training examples; the response is cut
  at the first ``stop`` string (default: a newline) and stripped, and the
  task scores it (SQuAD F1/EM; chrF/BLEU).

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

Alternatives: ``vote: k`` (classification only) draws k responses per item
within an iteration and predicts the label most of them name
(self-consistency; ties: the first label in label order), storing the mean
agreement; σ_seed is then the variance of that majority vote. ``decoding:
greedy`` (or ``do_sample: false``) decodes greedily: one deterministic
response, so σ_seed is 0 unless few-shot examples are redrawn.

Stop strings end a row's generation early once its new text contains one
(a stopping criterion per row); the response is cut at the first stop
string. Since rows sample from their own generators, stopping early changes
no response, only the time.

Chat templates. ``chat: auto`` (default) renders the prompt through the
tokenizer's chat template when it defines one (``chat: true`` requires one,
``chat: false`` never uses it): one user message after an optional ``system``
message, ``add_generation_prompt=True``, tokenized without adding special
tokens again. :meth:`HFGenerative.messages` builds these messages, and the
``openai`` kind sends exactly them to a chat endpoint (whose server applies
the same template, as vLLM's does).

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

#: prompt templates of the free-text tasks (``str.format`` fields in braces)
DEFAULT_TEMPLATES: dict[str, str] = {
    "qa": "Context: {context}\nQuestion: {question}\nAnswer:",
    "qa_no_context": "Question: {question}\nAnswer:",
    "translation": "Translate {source_language} to {target_language}:\n{source}\n",
}
#: default ``max_new_tokens`` per task kind
DEFAULT_MAX_NEW_TOKENS: dict[str, int] = {"sequence": 5, "qa": 32, "translation": 128}
#: default ``stop`` strings per task kind (classification parses the start of the response)
DEFAULT_STOP: dict[str, tuple[str, ...]] = {"sequence": (), "qa": ("\n",), "translation": ("\n",)}
#: English names of language codes in translation prompts (``language_names`` overrides)
LANGUAGE_NAMES: dict[str, str] = {
    "af": "Afrikaans", "ar": "Arabic", "bg": "Bulgarian", "bs": "Bosnian", "ca": "Catalan",
    "cs": "Czech", "cy": "Welsh", "da": "Danish", "de": "German", "el": "Greek",
    "en": "English", "es": "Spanish", "et": "Estonian", "eu": "Basque", "fa": "Persian",
    "fi": "Finnish", "fo": "Faroese", "fr": "French", "ga": "Irish", "gl": "Galician",
    "he": "Hebrew", "hi": "Hindi", "hr": "Croatian", "hu": "Hungarian", "id": "Indonesian",
    "is": "Icelandic", "it": "Italian", "ja": "Japanese", "ko": "Korean", "lt": "Lithuanian",
    "lv": "Latvian", "mk": "Macedonian", "ms": "Malay", "nb": "Norwegian Bokmål",
    "nl": "Dutch", "nn": "Norwegian Nynorsk", "no": "Norwegian", "pl": "Polish",
    "pt": "Portuguese", "ro": "Romanian", "ru": "Russian", "sk": "Slovak", "sl": "Slovenian",
    "sr": "Serbian", "sv": "Swedish", "sw": "Swahili", "th": "Thai", "tr": "Turkish",
    "uk": "Ukrainian", "vi": "Vietnamese", "zh": "Chinese",
}  # fmt: skip


def cut_at_stop(text: str, stops: Sequence[str]) -> str:
    """``text`` up to (not including) the earliest occurrence of any stop string."""
    cut = len(text)
    for stop in stops:
        at = text.find(stop) if stop else -1
        if at >= 0:
            cut = min(cut, at)
    return text[:cut]


def fill(template: str, values: dict[str, Any], model: str) -> str:
    """``template.format(**values)``; an unknown field is a model error naming the template."""
    try:
        return template.format(**values)
    except (KeyError, IndexError, ValueError) as exc:
        raise ModelError(
            f"model {model!r}: prompt template {template!r} cannot be filled ({exc!r}); "
            f"its fields are {', '.join('{' + k + '}' for k in values)} (write {{{{ for a brace)"
        ) from None


def with_answer(prompt: str, answer: str) -> str:
    """A few-shot example: the filled template, then the answer (after a space if needed)."""
    return prompt + answer if not prompt or prompt[-1].isspace() else f"{prompt} {answer}"


def stop_criterion(stops: Sequence[str], width: int, tokenizer: Any) -> Any:
    """A ``transformers`` stopping criterion: per row, has its new text reached a stop string?"""
    torch, transformers = _torch()

    class _Stop(transformers.StoppingCriteria):  # type: ignore[name-defined]  # imported lazily
        def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
            texts = tokenizer.batch_decode(input_ids[:, width:], skip_special_tokens=True)
            done = [any(stop in text for stop in stops) for text in texts]
            return torch.tensor(done, dtype=torch.bool, device=input_ids.device)

    return _Stop()


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
        decoding: str | None = None,
        do_sample: bool | None = None,
        temperature: float = 1.0,
        top_p: float = 1.0,
        vote: int = 1,
        max_new_tokens: int | None = None,
        stop: str | Sequence[str] | None = None,
        instruction: str = "Classify the text. Answer with one of: {labels}.",
        templates: dict[str, str] | None = None,
        language_names: dict[str, str] | None = None,
        trust_remote_code: bool = False,
        device: str = "auto",
        precision: str = "fp32",
        batch_size: int = 16,
        samples: int | None = None,
        chat: bool | str = "auto",
        system: str | None = None,
    ) -> None:
        super().__init__(name, path=path)
        if not (isinstance(chat, bool) or chat == "auto"):
            raise ModelError(f"model {name!r}: chat must be true, false or auto, got {chat!r}")
        if system is not None and not isinstance(system, str):
            raise ModelError(f"model {name!r}: system must be a string")
        if samples is not None:
            raise ModelError(
                f"model {name!r}: option 'samples' is gone. Each iteration now draws one sampled "
                "response per item (run N iterations for N samples; σ_seed is the sampling "
                "variance); use 'vote: k' for a majority over k samples within an iteration"
            )
        sampling = self._decoding(name, decoding, do_sample)
        if not isinstance(vote, int) or vote < 1:
            raise ModelError(f"model {name!r}: vote must be a positive integer")
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise ModelError(f"model {name!r}: batch_size must be a positive integer")
        if max_new_tokens is not None and (
            not isinstance(max_new_tokens, int)
            or isinstance(max_new_tokens, bool)
            or max_new_tokens < 1
        ):
            raise ModelError(f"model {name!r}: max_new_tokens must be a positive integer")
        if not sampling and vote > 1:
            raise ModelError(
                f"model {name!r}: vote: {vote} needs sampling; greedy decoding "
                "(decoding: greedy) gives one deterministic response"
            )
        if sampling and not temperature > 0:
            raise ModelError(f"model {name!r}: temperature must be > 0 when sampling")
        if templates is not None and not (
            isinstance(templates, dict) and all(isinstance(v, str) for v in templates.values())
        ):
            raise ModelError(
                f"model {name!r}: templates must map a task name or kind to a template string"
            )
        self.path = resolve_path(path, base)
        self.few_shot = few_shot
        self.shot_seed = shot_seed
        self.do_sample = sampling
        self.temperature = temperature
        self.top_p = top_p
        self.vote = vote
        #: as configured (None: the task kind's default, :data:`DEFAULT_MAX_NEW_TOKENS`)
        self.max_new_tokens_option = max_new_tokens
        self.max_new_tokens = max_new_tokens or DEFAULT_MAX_NEW_TOKENS["sequence"]
        self.stop_option = [stop] if isinstance(stop, str) else stop
        self.stop: tuple[str, ...] = ()
        self.instruction = instruction
        self.templates = dict(templates or {})
        self.language_names = {**LANGUAGE_NAMES, **(language_names or {})}
        self.trust_remote_code = trust_remote_code
        #: as configured (``auto``: the tokenizer's chat template when it has one)
        self.chat_option = chat
        #: whether prompts go through the chat template (resolved when the model loads)
        self.chat = chat is True
        self.system = system
        #: as configured (``auto``, ``cpu``, ``cuda``...); resolved when the model loads
        self.device_option = device
        self.device = "cpu"
        self.precision = check_precision(precision, name)
        self.batch_size = batch_size
        self.oom_events: list[dict[str, Any]] = []
        self.model: Any = None
        self.tokenizer: Any = None
        self.task_kind = "sequence"
        self.task_name = ""
        self.labels: list[Any] = []
        self.shots: list[Record] = []
        self.seed: int | None = None
        self.agreement: float | None = None
        self.unparsed: float | None = None
        self.empty: float | None = None

    @staticmethod
    def _decoding(name: str, decoding: str | None, do_sample: bool | None) -> bool:
        """Sampling (True) or greedy decoding (False) from ``decoding`` / ``do_sample``."""
        if decoding is None:
            return True if do_sample is None else bool(do_sample)
        key = str(decoding).strip().lower()
        if key not in ("sampling", "greedy"):
            raise ModelError(f"model {name!r}: decoding must be 'sampling' or 'greedy'")
        if do_sample is not None and bool(do_sample) != (key == "sampling"):
            raise ModelError(
                f"model {name!r}: decoding: {key} contradicts do_sample: {do_sample}; "
                "give one of them"
            )
        return key == "sampling"

    def supports(self, task: Task) -> bool:
        return task.kind in ("sequence", "qa", "translation")

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
        self.prepare(task, dataset, train, seed)
        self.load(torch, transformers)

    def prepare(self, task: Task, dataset: Dataset, train: Sequence[Record], seed: int) -> None:
        """Fix the iteration seed, the task's defaults and draw the few-shot examples."""
        if task.kind != "sequence" and self.vote > 1:
            raise ModelError(
                f"model {self.name!r}: vote: {self.vote} is for classification; a {task.kind} "
                "task gets one response per item and iteration (run more iterations)"
            )
        self.seed = int(seed)
        self.task_kind = task.kind
        self.task_name = task.name
        self.max_new_tokens = self.max_new_tokens_option or DEFAULT_MAX_NEW_TOKENS[task.kind]
        self.stop = tuple(
            DEFAULT_STOP[task.kind] if self.stop_option is None else map(str, self.stop_option)
        )
        self.labels = list(dataset.labels)
        self.shots = []
        if self.few_shot and train:
            shot_seed = self.seed if self.shot_seed is None else int(self.shot_seed)
            idx = np.random.default_rng([shot_seed, 3]).choice(
                len(train), min(self.few_shot, len(train)), replace=False
            )
            self.shots = [train[int(i)] for i in idx]

    def load(self, torch: Any, transformers: Any) -> None:
        """Load the tokenizer and the model onto the device (once per adapter)."""
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
            self.resolve_chat()

    def resolve_chat(self) -> None:
        """Whether prompts go through the loaded tokenizer's chat template (``chat`` option)."""
        has_template = bool(getattr(self.tokenizer, "chat_template", None))
        if self.chat_option is True and not has_template:
            raise ModelError(
                f"model {self.name!r}: chat: true, but the tokenizer of {self.path!r} "
                "defines no chat template (set chat: false, or give it one)"
            )
        self.chat = has_template if self.chat_option == "auto" else bool(self.chat_option)

    def messages(self, prompt: str) -> list[dict[str, str]]:
        """The chat messages of one prompt: an optional ``system`` message, then the prompt
        as one user message. The ``openai`` kind sends exactly these to a chat endpoint, so an
        ``hf-generative`` model with its chat template and an OpenAI-compatible server (vLLM,
        TGI, llama.cpp) serving it see the same conversation."""
        head = [{"role": "system", "content": self.system}] if self.system else []
        return [*head, {"role": "user", "content": prompt}]

    def chat_text(self, prompt: str) -> str:
        """The prompt through the tokenizer's chat template, ready for the assistant's turn
        (``add_generation_prompt``, as an OpenAI-compatible server renders a chat request)."""
        return str(
            self.tokenizer.apply_chat_template(
                self.messages(prompt), tokenize=False, add_generation_prompt=True
            )
        )

    # -- prompts -------------------------------------------------------------------
    def prompt(self, text: str) -> str:
        """The classification prompt of one text."""
        lines = [self.instruction.format(labels=", ".join(map(str, self.labels)))]
        for shot in self.shots:
            lines.append(f"Text: {shot['text']}\nAnswer: {shot['label']}")
        lines.append(f"Text: {text}\nAnswer:")
        return "\n\n".join(lines)

    def template(self, key: str) -> str:
        """The template of the current task: by task name, then kind, then the default."""
        if self.task_name in self.templates:
            return self.templates[self.task_name]
        if key in self.templates:
            return self.templates[key]
        return DEFAULT_TEMPLATES[key]

    def qa_prompt(self, question: str, context: str) -> str:
        """Few-shot examples (``template`` + first gold answer), then the question."""

        custom = "qa" in self.templates or self.task_name in self.templates

        def one(q: str, c: str) -> str:
            key = "qa" if c or custom else "qa_no_context"  # a user's template always applies
            return fill(self.template(key), {"question": q, "context": c}, self.name)

        parts = []
        for shot in self.shots:
            answers = shot["answers"]
            first = answers if isinstance(answers, str) else list(answers)[0]
            parts.append(
                with_answer(one(str(shot["question"]), str(shot.get("context") or "")), first)
            )
        parts.append(one(question, context))
        return "\n\n".join(parts)

    def language_name(self, code: str) -> str:
        return self.language_names.get(code, self.language_names.get(code.split("-")[0], code))

    def translation_prompt(self, source: str, source_language: str, target_language: str) -> str:
        """Few-shot examples (``template`` + first reference), then the source sentence."""

        def one(text: str, src: str, tgt: str) -> str:
            values = {
                "source": text,
                "source_language": self.language_name(src),
                "target_language": self.language_name(tgt),
            }
            return fill(self.template("translation"), values, self.name)

        parts = []
        for shot in self.shots:
            target = shot["target"]
            first = target if isinstance(target, str) else list(target)[0]
            prompt = one(
                str(shot["source"]), str(shot["source_language"]), str(shot["target_language"])
            )
            parts.append(with_answer(prompt, first))
        parts.append(one(source, source_language, target_language))
        return "\n\n".join(parts)

    # -- generation ----------------------------------------------------------------
    def context_limit(self) -> int | None:
        """The model's context length in tokens (None: unknown)."""
        config = self.model.config
        limit = getattr(config, "max_position_embeddings", None) or getattr(
            config, "n_positions", None
        )
        return int(limit) if limit else None

    def _prompt_ids(self, prompts: list[str]) -> list[list[int]]:
        """Token ids of the prompts, over-long ones cut at the front."""
        limit = self.context_limit()
        ids = []
        for prompt in prompts:
            if self.chat:  # the template writes its own special tokens
                text = self.chat_text(prompt)
                tokens = list(self.tokenizer(text, add_special_tokens=False)["input_ids"])
            else:
                tokens = list(self.tokenizer(prompt)["input_ids"])
            if limit:  # keep the end of an over-long prompt (the item and "Answer:")
                tokens = tokens[-max(1, int(limit) - self.max_new_tokens) :]
            ids.append(tokens)
        return ids

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
        if self.stop:
            extra["stopping_criteria"] = transformers.StoppingCriteriaList(
                [stop_criterion(self.stop, width, self.tokenizer)]
            )
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
        texts = self.tokenizer.batch_decode(gen[:, width:], skip_special_tokens=True)
        return [cut_at_stop(t, self.stop) for t in texts] if self.stop else list(texts)

    def generate(self, prompts: list[str], votes: int = 1) -> list[list[str]]:
        """The raw responses to ``prompts``: ``votes`` samples (or one greedy answer) each.

        Rows (prompt × vote) are generated ``batch_size`` at a time, longest
        prompts first; row ``(i, v)`` samples with seed ``item_seed(seed,
        prompts[i], v)``. See the module docstring for why batching does not
        change a response.
        """
        if self.model is None or self.seed is None:
            raise ModelError(f"model {self.name!r} must be loaded (fit) before it predicts")
        pad_id = self.tokenizer.pad_token_id
        if pad_id is None:
            pad_id = self.tokenizer.eos_token_id
        ids = self._prompt_ids(prompts)
        votes = votes if self.do_sample else 1
        rows = [(i, v) for i in range(len(prompts)) for v in range(votes)]
        rows.sort(key=lambda row: -len(ids[row[0]]))  # stable: equal lengths keep their order
        out: list[list[str]] = [[""] * votes for _ in prompts]
        with item_progress(f"{self.name} generation", len(prompts)) as progress:
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

    def respond(self, texts: list[Any]) -> list[list[str]]:
        """Classification: the raw responses per text (``vote`` samples or one greedy answer)."""
        prompts = [self.prompt(t if isinstance(t, str) else " ".join(map(str, t))) for t in texts]
        return self.generate(prompts, self.vote)

    def _free_text(self, prompts: list[str]) -> list[str]:
        answers = [responses[0].strip() for responses in self.generate(prompts)]
        self.empty = sum(1 for a in answers if not a) / len(answers) if answers else None
        return answers

    # -- task methods --------------------------------------------------------------
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

    def parse_response(self, response: str) -> Any:
        text = response.strip().lower()
        for label in sorted(self.labels, key=lambda x: -len(str(x))):
            if text.startswith(str(label).lower()):
                return label
        return UNPARSED

    def answer(self, questions: list[str], contexts: list[str]) -> list[str]:
        """QA: one response per question (cut at ``stop``, stripped)."""
        if len(questions) != len(contexts):
            raise ModelError(
                f"model {self.name!r}: {len(questions)} questions but {len(contexts)} contexts"
            )
        prompts = [
            self.qa_prompt(str(q), str(c or "")) for q, c in zip(questions, contexts, strict=True)
        ]
        return self._free_text(prompts)

    def translate(
        self, sources: list[str], source_languages: list[str], target_languages: list[str]
    ) -> list[str]:
        """Translation: one response per source sentence (cut at ``stop``, stripped)."""
        prompts = [
            self.translation_prompt(str(s), str(a), str(b))
            for s, a, b in zip(sources, source_languages, target_languages, strict=True)
        ]
        return self._free_text(prompts)

    def metadata(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "family": "hf-generative",
            "path": self.path,
            "task_kind": self.task_kind,
            "few_shot": self.few_shot,
            "shot_seed": self.shot_seed,
            "decoding": "sampling" if self.do_sample else "greedy",
            "temperature": self.temperature if self.do_sample else None,
            "top_p": self.top_p if self.do_sample else None,
            "vote": self.vote,
            "responses_per_item": self.vote if self.do_sample else 1,
            "max_new_tokens": self.max_new_tokens,
            "stop": list(self.stop),
            "sampling_seed": self.seed,
            "batch_size": self.batch_size,
            "oom_events": list(self.oom_events),
            "device": self.device,
            "precision": self.precision,
            "chat_template": self.chat,
            "system": self.system,
        }
        if self.task_kind == "sequence":
            out["sample_agreement"] = self.agreement
            out["unparsed_rate"] = self.unparsed
        else:
            key = "translation" if self.task_kind == "translation" else "qa"
            out["template"] = self.template(key)
            out["empty_response_rate"] = self.empty
        return out
