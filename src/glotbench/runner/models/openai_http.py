"""OpenAI-compatible HTTP models (kind ``openai``): vLLM, TGI, llama.cpp, hosted APIs.

The adapter asks a server that speaks the OpenAI wire format — ``POST
{base_url}/completions`` (``endpoint: completions``: the prompt as text, for
base models) or ``POST {base_url}/chat/completions`` (``endpoint: chat``, the
default: the prompt as one user message after an optional ``system``
message; the server applies the model's chat template). Prompts, few-shot
examples, label parsing, stop strings and the per-item sampling seed are the
ones of :mod:`glotbench.runner.models.hf_generative`, so an ``openai`` model
and an ``hf-generative`` model given the same options see the same prompts.

Sampled replicates: with sampling (the default) every request carries the
``temperature``, ``top_p`` and a ``seed`` derived from the iteration's seed,
the prompt and the vote (:func:`~glotbench.runner.models.hf_generative.item_seed`),
so N iterations are N sampled responses per item and σ_seed is the sampling
variance — as far as the server honours ``seed`` (vLLM does; hosted APIs
say "best effort"). ``decoding: greedy`` sends ``temperature: 0`` and no seed.

Transport (:mod:`glotbench.runner.models.http_client`): ``concurrency``
requests in flight, retries with exponential backoff on 429/5xx/timeouts
(``Retry-After`` honoured), ``timeout`` seconds per request, an optional
``requests_per_second`` limit, and the API key read from the environment
variable ``api_key_env`` (default ``OPENAI_API_KEY``; never stored). These
transport options do not enter the run's configuration hash, so changing
them (or the server's address) does not re-run stored work.

Responses are cached: ``glotbench run`` keeps every answered request in
``<store>.responses.sqlite`` beside the store, keyed by the SHA-256 of the
endpoint and the request body, so a resumed run — after a crash, a kill of
the server, a failed job — sends only requests that were never answered.
``cache: false`` turns this off, ``cache: path`` puts the file elsewhere.

Stored with every run (model metadata): the requests used, how many were
sent and how many came from the cache, retries, prompt and completion token
counts (the server's ``usage``), and latency (mean, median, 95th percentile,
maximum, per request, as measured when it was sent). ScandEval's speed
benchmark is not run against a server (it would measure the network and
the cache); latency and tokens per second of generation stand in for it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from glotbench.runner.errors import ModelError
from glotbench.runner.models.hf_generative import HFGenerative, cut_at_stop, item_seed
from glotbench.runner.models.http_client import JSONClient, Reply, ResponseCache, request_key
from glotbench.runner.progress import item_progress

if TYPE_CHECKING:
    from glotbench.runner.datasets.base import Dataset, Record
    from glotbench.runner.tasks import Task

ENDPOINTS = {"chat": "/chat/completions", "completions": "/completions"}
DEFAULT_BASE_URL = "https://api.openai.com/v1"


def _positive(name: str, key: str, value: Any, *, integer: bool = False) -> None:
    ok = isinstance(value, int) if integer else isinstance(value, (int, float))
    if isinstance(value, bool) or not ok or value <= 0:
        what = "a positive integer" if integer else "a positive number"
        raise ModelError(f"model {name!r}: {key} must be {what}, got {value!r}")


class OpenAICompatible(HFGenerative):
    """A model behind an OpenAI-compatible server (see the module docstring)."""

    trains = False
    #: ScandEval's speed benchmark would time the network and the cache: not run
    speed_benchmark = False

    def __init__(
        self,
        name: str,
        model: str | None = None,
        base_url: str | None = None,
        endpoint: str = "chat",
        system: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        concurrency: int = 8,
        timeout: float = 60.0,
        max_retries: int = 6,
        retry_base_seconds: float = 1.0,
        max_retry_seconds: float = 60.0,
        requests_per_second: float | None = None,
        cache: bool | str = True,
        extra_body: dict[str, Any] | None = None,
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
    ) -> None:
        super().__init__(
            name,
            path=str(model or name),
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
            device="cpu",
            chat=endpoint == "chat",
            system=system,
        )
        if endpoint not in ENDPOINTS:
            raise ModelError(
                f"model {name!r}: endpoint must be one of {', '.join(ENDPOINTS)}, got {endpoint!r}"
            )
        _positive(name, "concurrency", concurrency, integer=True)
        _positive(name, "timeout", timeout)
        _positive(name, "max_retry_seconds", max_retry_seconds)
        if requests_per_second is not None:
            _positive(name, "requests_per_second", requests_per_second)
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ModelError(f"model {name!r}: max_retries must be a non-negative integer")
        if extra_body is not None and not isinstance(extra_body, dict):
            raise ModelError(f"model {name!r}: extra_body must be a mapping")
        self.served_model = str(model or name)
        self.base_url = str(base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL)
        self.endpoint = endpoint
        self.concurrency = concurrency
        self.extra_body = dict(extra_body or {})
        self.cache_option = cache
        self.cache: ResponseCache | None = (
            ResponseCache(cache) if isinstance(cache, str) and cache else None
        )
        self.client = JSONClient(
            self.base_url,
            api_key=os.environ.get(api_key_env) if api_key_env else None,
            timeout=float(timeout),
            max_retries=max_retries,
            retry_base_seconds=float(retry_base_seconds),
            max_retry_seconds=float(max_retry_seconds),
            requests_per_second=requests_per_second,
            name=name,
        )
        self._reset_counts()

    def use_cache_file(self, path: str | Path) -> None:
        """Cache responses in ``path`` (the runner's default beside the store) unless the
        model's ``cache`` option turned caching off or named its own file."""
        if self.cache_option is True and (self.cache is None or self.cache.path != str(path)):
            self.cache = ResponseCache(path)

    def _reset_counts(self) -> None:
        self.requests_sent = 0
        self.cache_hits = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.latencies: list[float] = []
        self.retries_at_start = self.client.retries

    def fit(
        self,
        task: Task,
        dataset: Dataset,
        train: Sequence[Record],
        validation: Sequence[Record],
        seed: int,
    ) -> None:
        """Fix the iteration seed and draw the few-shot examples; nothing is loaded."""
        self.prepare(task, dataset, train, seed)
        self._reset_counts()

    # -- requests ------------------------------------------------------------------
    def request_body(self, prompt: str, seed: int) -> dict[str, Any]:
        """The OpenAI request of one prompt (and one sampling seed)."""
        body: dict[str, Any] = {"model": self.served_model, "max_tokens": self.max_new_tokens}
        if self.endpoint == "chat":
            body["messages"] = self.messages(prompt)  # as hf-generative's chat template gets
        else:
            body["prompt"] = prompt
        if self.do_sample:
            body["temperature"] = self.temperature
            if self.top_p < 1.0:
                body["top_p"] = self.top_p
            body["seed"] = seed
        else:
            body["temperature"] = 0.0
        if 0 < len(self.stop) <= 4:  # the API's limit; longer lists are cut here only
            body["stop"] = list(self.stop)
        return {**body, **self.extra_body}

    def response_text(self, reply: dict[str, Any]) -> str:
        """The generated text of a reply (``choices[0]``), cut at the stop strings."""
        try:
            choice = reply["choices"][0]
            text = choice["message"]["content"] if self.endpoint == "chat" else choice["text"]
        except (KeyError, IndexError, TypeError):
            raise ModelError(
                f"model {self.name!r}: the server's reply has no choices[0] "
                f"{'message.content' if self.endpoint == 'chat' else 'text'}: {str(reply)[:200]}"
            ) from None
        text = "" if text is None else str(text)
        return cut_at_stop(text, self.stop) if self.stop else text

    def _count(self, reply: dict[str, Any], latency: float) -> None:
        usage = reply.get("usage") or {}
        self.prompt_tokens += int(usage.get("prompt_tokens") or 0)
        self.completion_tokens += int(usage.get("completion_tokens") or 0)
        self.latencies.append(float(latency))

    def _send(self, key: str, body: dict[str, Any]) -> Reply:
        reply = self.client.post(ENDPOINTS[self.endpoint], body)
        self.response_text(reply.body)  # a malformed reply fails here, and is not cached
        if self.cache is not None:
            self.cache.put(key, self.endpoint, body, reply)
        return reply

    def generate(self, prompts: list[str], votes: int = 1) -> list[list[str]]:
        """The responses to ``prompts`` (``votes`` samples each): from the cache, else the server.

        Requests run ``concurrency`` at a time; each answered one is cached at
        once, so when one fails for good the others already answered are kept
        for the resumed run.
        """
        if self.seed is None:
            raise ModelError(f"model {self.name!r} must be prepared (fit) before it predicts")
        votes = votes if self.do_sample else 1
        out: list[list[str]] = [[""] * votes for _ in prompts]
        # identical requests (a prompt that occurs twice, greedy decoding) are sent once
        pending: dict[str, tuple[dict[str, Any], list[tuple[int, int]]]] = {}
        for i, prompt in enumerate(prompts):
            for v in range(votes):
                body = self.request_body(prompt, item_seed(self.seed, prompt, v))
                key = request_key(self.endpoint, body)
                if key in pending:
                    pending[key][1].append((i, v))
                    continue
                hit = self.cache.get(key) if self.cache is not None else None
                if hit is None:
                    pending[key] = (body, [(i, v)])
                    continue
                self.cache_hits += 1
                self._count(*hit)
                out[i][v] = self.response_text(hit[0])
        with (
            item_progress(f"{self.name} requests", len(pending)) as progress,
            ThreadPoolExecutor(max_workers=self.concurrency) as pool,
        ):
            futures = {
                pool.submit(self._send, key, body): key for key, (body, _) in pending.items()
            }
            done, not_done = wait(futures, return_when=FIRST_EXCEPTION)
            failed = [f for f in done if f.exception() is not None]
            if failed:
                for future in not_done:
                    future.cancel()
                wait(not_done)  # answered requests in flight are still cached
                raise failed[0].exception()  # type: ignore[misc]
            for future, key in futures.items():
                reply = future.result()
                self.requests_sent += 1
                for i, v in pending[key][1]:
                    self._count(reply.body, reply.latency)
                    out[i][v] = self.response_text(reply.body)
                progress.advance(1)
        return out

    def metadata(self) -> dict[str, Any]:
        out = super().metadata()
        for key in ("batch_size", "oom_events", "device", "precision", "path"):
            out.pop(key, None)
        latencies = np.asarray(self.latencies, dtype=float)
        seconds = float(latencies.sum()) if latencies.size else 0.0
        out.update(
            {
                "family": "openai",
                "served_model": self.served_model,
                "endpoint": self.endpoint,
                "requests": int(latencies.size),
                "requests_sent": self.requests_sent,
                "cache_hits": self.cache_hits,
                "retries": self.client.retries - self.retries_at_start,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "latency_seconds": None
                if not latencies.size
                else {
                    "mean": float(latencies.mean()),
                    "median": float(np.median(latencies)),
                    "p95": float(np.quantile(latencies, 0.95)),
                    "max": float(latencies.max()),
                },
                "completion_tokens_per_second": (
                    self.completion_tokens / seconds if seconds > 0 else None
                ),
                "concurrency": self.concurrency,
            }
        )
        return out
