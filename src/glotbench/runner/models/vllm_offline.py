"""Causal LMs run in-process by vLLM on a GPU (kind ``vllm``, extra ``vllm``; lazy import).

The contract is the one of ``hf-generative`` (:mod:`glotbench.runner.models.hf_generative`)
and ``openai`` (:mod:`glotbench.runner.models.openai_http`): the same prompts,
few-shot draws, label parsing, stop strings and chat messages, and one
sampled response per item and iteration whose seed is
:func:`~glotbench.runner.models.hf_generative.item_seed` of the iteration's
seed, the prompt and the vote — so N iterations are N sampled responses per
item and σ_seed is the sampling variance. Only the engine differs: vLLM's
offline :class:`vllm.LLM` (PagedAttention, continuous batching; Kwon et al.
2023, *Efficient Memory Management for Large Language Model Serving with
PagedAttention*, SOSP).

Requests. Every (item, vote) is one request with its own
:class:`vllm.SamplingParams`: ``temperature``, ``top_p`` and ``seed`` when
sampling (vLLM draws a request's tokens from a generator seeded by its
``seed``, so a response does not depend on the batch it is scheduled in),
``temperature: 0`` and no seed for ``decoding: greedy``; ``max_tokens`` and
the ``stop`` strings of the task. The prompts are passed as token ids
(``{"prompt_token_ids": …}``), tokenized by the engine's own tokenizer
(:meth:`vllm.LLM.get_tokenizer`) exactly as ``hf-generative`` tokenizes them:
with ``chat: auto`` (default) through the tokenizer's chat template when it
defines one (an optional ``system`` message, then the prompt as one user
message, ``add_generation_prompt``), without adding special tokens again;
over-long prompts keep their end. (:meth:`vllm.LLM.chat` renders the same
template; rendering it here keeps the token ids, the truncation and the
prompt counts identical to ``hf-generative``.)

Engine options: ``dtype`` (``auto``, ``float16``, ``bfloat16``, ``float32``),
``tensor_parallel_size`` (GPUs), ``gpu_memory_utilization``,
``max_model_len``, ``batch_size`` (vLLM's ``max_num_seqs``: sequences
scheduled at once), ``engine_seed`` and ``engine_options`` (any other
keyword of :class:`vllm.LLM`). They do not change a seeded response, but are
part of the configuration hash (a different dtype changes the numbers).

Stored with every run (model metadata): requests, prompt and completion
token counts (the lengths of each request's prompt and generated token ids),
the generation time of the run and completion tokens per second, and the
per-request latency from vLLM's request metrics (arrival to finish) when the
engine reports them.

Without vLLM (``pip install 'glotbench[vllm]'``, Linux with a CUDA GPU) or
without a GPU the model fails with an :class:`~glotbench.errors.InputError`
that says so; ``vllm serve PATH`` plus the ``openai`` kind is the way to
reach a vLLM on another machine.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from glotbench.errors import InputError
from glotbench.runner.errors import ModelError
from glotbench.runner.models.hf_generative import HFGenerative, cut_at_stop, item_seed
from glotbench.runner.progress import item_progress

if TYPE_CHECKING:
    from glotbench.runner.datasets.base import Dataset, Record
    from glotbench.runner.tasks import Task

DTYPES = ("auto", "float16", "bfloat16", "float32", "half", "float")
#: requests handed to the engine per call (vLLM batches within a call; the progress
#: bar advances between calls)
CHUNK = 1024


def import_vllm(model: str) -> Any:
    """The ``vllm`` module, or an InputError that says how to get it."""
    try:
        return importlib.import_module("vllm")
    except ImportError as exc:
        raise InputError(
            f"model {model!r} (kind vllm) needs vLLM, which is not installed ({exc}): "
            "pip install 'glotbench[vllm]' on Linux with a CUDA GPU; or serve the model "
            "with 'vllm serve PATH' and use models='openai:PATH' with "
            "model_args='base_url=http://HOST:8000/v1'"
        ) from None


def cuda_available() -> bool:
    """Whether torch sees a CUDA GPU (False when torch is missing)."""
    try:
        torch = importlib.import_module("torch")
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def require_gpu(model: str) -> None:
    if not cuda_available():
        raise InputError(
            f"model {model!r} (kind vllm): vLLM runs on a CUDA GPU and torch sees none; "
            "run it on a machine with a GPU, or use kind hf-generative on the CPU"
        )


class VLLMGenerative(HFGenerative):
    """A causal LM in vLLM's offline engine (see the module docstring)."""

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
        chat: bool | str = "auto",
        system: str | None = None,
        dtype: str = "auto",
        tensor_parallel_size: int = 1,
        gpu_memory_utilization: float = 0.9,
        max_model_len: int | None = None,
        batch_size: int | None = None,
        engine_seed: int = 0,
        engine_options: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(
            name,
            path=path,
            base=base,
            few_shot=few_shot,
            shot_seed=shot_seed,
            decoding=decoding,
            do_sample=do_sample,
            temperature=temperature,
            top_p=top_p,
            vote=vote,
            max_new_tokens=max_new_tokens,
            stop=stop,
            instruction=instruction,
            templates=templates,
            language_names=language_names,
            trust_remote_code=trust_remote_code,
            chat=chat,
            system=system,
        )
        if dtype not in DTYPES:
            raise ModelError(f"model {name!r}: dtype must be one of {', '.join(DTYPES)}")
        for key, value in (
            ("tensor_parallel_size", tensor_parallel_size),
            ("max_model_len", max_model_len),
            ("batch_size", batch_size),
        ):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise ModelError(f"model {name!r}: {key} must be a positive integer")
            if value is not None and value < 1:
                raise ModelError(f"model {name!r}: {key} must be a positive integer")
        if not 0 < float(gpu_memory_utilization) <= 1:
            raise ModelError(f"model {name!r}: gpu_memory_utilization must be in (0, 1]")
        if engine_options is not None and not isinstance(engine_options, dict):
            raise ModelError(f"model {name!r}: engine_options must be a mapping")
        self.dtype = dtype
        self.tensor_parallel_size = tensor_parallel_size
        self.gpu_memory_utilization = float(gpu_memory_utilization)
        self.max_model_len = max_model_len
        self.max_num_seqs = batch_size
        self.engine_seed = int(engine_seed)
        self.engine_options = dict(engine_options or {})
        self.vllm: Any = None
        self.llm: Any = None
        self.device = "cuda"
        self._reset_counts()

    def _reset_counts(self) -> None:
        self.requests = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.generation_seconds = 0.0
        self.latencies: list[float] = []

    # -- engine --------------------------------------------------------------------
    def engine_arguments(self) -> dict[str, Any]:
        """The keywords of :class:`vllm.LLM` this model is loaded with."""
        kwargs: dict[str, Any] = {
            "model": self.path,
            "dtype": self.dtype,
            "tensor_parallel_size": self.tensor_parallel_size,
            "gpu_memory_utilization": self.gpu_memory_utilization,
            "trust_remote_code": self.trust_remote_code,
            "seed": self.engine_seed,
        }
        if self.max_model_len is not None:
            kwargs["max_model_len"] = self.max_model_len
        if self.max_num_seqs is not None:
            kwargs["max_num_seqs"] = self.max_num_seqs
        return {**kwargs, **self.engine_options}

    def load_engine(self) -> None:
        """Import vLLM, check for a GPU and load the model (once per adapter)."""
        if self.llm is not None:
            return
        self.vllm = import_vllm(self.name)
        require_gpu(self.name)
        try:
            self.llm = self.vllm.LLM(**self.engine_arguments())
        except (OSError, ValueError) as exc:
            raise ModelError(
                f"model {self.name!r}: vLLM cannot load {self.path!r}: {exc}"
            ) from None
        self.tokenizer = self.llm.get_tokenizer()
        self.model = self.llm
        self.resolve_chat()

    def context_limit(self) -> int | None:
        """The engine's ``max_model_len`` (the model's context unless set lower)."""
        config = getattr(getattr(self.llm, "llm_engine", None), "model_config", None)
        limit = getattr(config, "max_model_len", None) or self.max_model_len
        return int(limit) if limit else None

    def fit(
        self,
        task: Task,
        dataset: Dataset,
        train: Sequence[Record],
        validation: Sequence[Record],
        seed: int,
    ) -> None:
        """Fix the iteration seed, draw the few-shot examples, load the engine once."""
        self.prepare(task, dataset, train, seed)
        self.load_engine()
        self._reset_counts()

    # -- requests ------------------------------------------------------------------
    def sampling_params(self, seed: int) -> Any:
        """The :class:`vllm.SamplingParams` of one request (one response, its own seed)."""
        kwargs: dict[str, Any] = {"n": 1, "max_tokens": self.max_new_tokens}
        if self.do_sample:
            kwargs.update(temperature=float(self.temperature), top_p=float(self.top_p), seed=seed)
        else:
            kwargs["temperature"] = 0.0
        if self.stop:
            kwargs["stop"] = list(self.stop)
        return self.vllm.SamplingParams(**kwargs)

    def _count(self, output: Any) -> str:
        """The text of one request's output (cut at the stop strings); counts its tokens."""
        try:
            completion = output.outputs[0]
        except (AttributeError, IndexError, TypeError):
            raise ModelError(
                f"model {self.name!r}: vLLM returned a request without outputs: {output!r}"[:300]
            ) from None
        self.requests += 1
        self.prompt_tokens += len(output.prompt_token_ids or ())
        self.completion_tokens += len(completion.token_ids or ())
        metrics = getattr(output, "metrics", None)
        start = getattr(metrics, "arrival_time", None)
        end = getattr(metrics, "finished_time", None)
        if start is not None and end is not None:
            self.latencies.append(float(end) - float(start))
        text = "" if completion.text is None else str(completion.text)
        return cut_at_stop(text, self.stop) if self.stop else text

    def generate(self, prompts: list[str], votes: int = 1) -> list[list[str]]:
        """The responses to ``prompts`` (``votes`` samples each), ``CHUNK`` requests per call.

        vLLM returns a call's outputs in the order of its requests; request
        ``(i, v)`` samples with seed ``item_seed(seed, prompts[i], v)``.
        """
        if self.llm is None or self.seed is None:
            raise ModelError(f"model {self.name!r} must be loaded (fit) before it predicts")
        ids = self._prompt_ids(prompts)
        votes = votes if self.do_sample else 1
        rows = [(i, v) for i in range(len(prompts)) for v in range(votes)]
        out: list[list[str]] = [[""] * votes for _ in prompts]
        with item_progress(f"{self.name} generation", len(prompts)) as progress:
            for start in range(0, len(rows), CHUNK):
                batch = rows[start : start + CHUNK]
                inputs = [{"prompt_token_ids": ids[i]} for i, _ in batch]
                params = [
                    self.sampling_params(item_seed(self.seed, prompts[i], v)) for i, v in batch
                ]
                began = time.perf_counter()
                outputs = self.llm.generate(inputs, sampling_params=params, use_tqdm=False)
                self.generation_seconds += time.perf_counter() - began
                if len(outputs) != len(batch):
                    raise ModelError(
                        f"model {self.name!r}: vLLM answered {len(outputs)} of "
                        f"{len(batch)} requests"
                    )
                for (i, v), output in zip(batch, outputs, strict=True):
                    out[i][v] = self._count(output)
                progress.advance(sum(1 for _, v in batch if v == votes - 1))
        return out

    def metadata(self) -> dict[str, Any]:
        out = super().metadata()
        for key in ("oom_events", "precision"):
            out.pop(key, None)
        latencies = np.asarray(self.latencies, dtype=float)
        seconds = self.generation_seconds
        out.update(
            {
                "family": "vllm",
                "vllm_version": getattr(self.vllm, "__version__", None),
                "dtype": self.dtype,
                "tensor_parallel_size": self.tensor_parallel_size,
                "batch_size": self.max_num_seqs,
                "requests": self.requests,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "generation_seconds": seconds,
                "completion_tokens_per_second": (
                    self.completion_tokens / seconds if seconds > 0 else None
                ),
                "latency_seconds": None
                if not latencies.size
                else {
                    "mean": float(latencies.mean()),
                    "median": float(np.median(latencies)),
                    "p95": float(np.quantile(latencies, 0.95)),
                    "max": float(latencies.max()),
                },
            }
        )
        return out
