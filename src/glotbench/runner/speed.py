"""ScandEval's speed benchmark: tokens per second over documents of growing length.

The method is EuroEval's speed task (``euroeval --task speed``; docs
``tasks/speed.md``, Nielsen 2023 §3.4): in iteration ``i = 0 … n−1`` a base
document of about ten tokens is repeated ``10 · (i + 1)`` times (about 100,
200, …, 1,000 tokens) and, for the secondary figure, ``round(1.25 · (i + 1))``
times (about 12.5 … 125 tokens). After a warm-up, the model processes each
document repeatedly for a fixed time; the throughput is inferences per second
times the document's GPT-2 token count. The reported score is the mean over
iterations with ScandEval's interval ``± 1.96 · SD / √n``.

Token counts use GPT-2's pre-tokenisation pattern. Every piece of the base
document (``Document``, `` which``, `` contains``, `` roughly``, `` 10``,
`` tokens``, ``.``) is a single token of GPT-2's vocabulary, so for these
documents the count equals the GPT-2 tokenizer's (``7 · copies + 1``) without
loading it, which keeps the benchmark offline.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from glotbench.errors import InputError

#: the base document of EuroEval's speed task
BASE_DOCUMENT = "Document which contains roughly 10 tokens. "

#: GPT-2's pre-tokenisation pattern (Radford et al. 2019, ``encoder.py``), with
#: ``\p{L}`` written as ``[^\W\d_]`` and ``\p{N}`` as ``\d`` for the stdlib ``re``
_GPT2_PIECES = re.compile(
    r"'s|'t|'re|'ve|'m|'ll|'d| ?[^\W\d_]+| ?\d+| ?(?:[^\s\w]|_)+|\s+(?!\S)|\s+"
)


def gpt2_token_count(text: str) -> int:
    """GPT-2 pre-tokenisation pieces of ``text`` (= GPT-2 tokens for the speed documents)."""
    return len(_GPT2_PIECES.findall(text))


def speed_documents(iteration: int) -> tuple[str, str]:
    """The (long, short) documents of ``iteration`` (0-based), as EuroEval builds them."""
    if iteration < 0:
        raise ValueError("iteration must be non-negative")
    long_doc = BASE_DOCUMENT * (10 * (iteration + 1))
    short_doc = BASE_DOCUMENT * round(1.25 * (iteration + 1))
    return long_doc, short_doc


def inferences_per_second(
    predict: Callable[[str], Any], document: str, *, seconds: float, clock: Callable[[], float]
) -> float:
    """Calls of ``predict(document)`` per second of calling, over at least ``seconds``.

    At least one call is made; the rate is calls divided by the summed call
    durations (the time between calls is not counted).
    """
    calls = 0
    busy = 0.0
    while calls == 0 or busy < seconds:
        start = clock()
        predict(document)
        busy += clock() - start
        calls += 1
    return calls / busy if busy > 0 else float("inf")


@dataclass(frozen=True)
class SpeedSettings:
    """How long the benchmark runs (ScandEval: 10 iterations of 3 s after a 1 s warm-up)."""

    iterations: int = 10
    seconds: float = 3.0
    warmup_seconds: float = 1.0

    def __post_init__(self) -> None:
        if self.iterations < 1:
            raise InputError("speed iterations must be at least 1")
        if self.seconds < 0 or self.warmup_seconds < 0:
            raise InputError("speed seconds must be non-negative")


@dataclass
class SpeedResult:
    """Tokens per second of one model, per iteration, for the long and the short documents."""

    tokens_per_second: list[float]
    tokens_per_second_short: list[float]
    document_tokens: list[int]
    document_tokens_short: list[int]
    settings: SpeedSettings = field(default_factory=SpeedSettings)
    call: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON form, as stored in the run's ``model_metadata['speed']``.

        Only the per-iteration figures are stored; the mean and interval are
        computed by :func:`glotbench.analysis.sources.speed_store.speed_table`.
        """
        return {
            "method": "scandeval",
            "call": self.call,
            "iterations": self.settings.iterations,
            "seconds": self.settings.seconds,
            "warmup_seconds": self.settings.warmup_seconds,
            "tokens_per_second": list(self.tokens_per_second),
            "tokens_per_second_short": list(self.tokens_per_second_short),
            "document_tokens": list(self.document_tokens),
            "document_tokens_short": list(self.document_tokens_short),
        }


def benchmark_speed(
    predict: Callable[[str], Any],
    settings: SpeedSettings | None = None,
    *,
    call: str = "",
    clock: Callable[[], float] = time.perf_counter,
) -> SpeedResult:
    """Run ScandEval's speed benchmark on ``predict`` (one document in, anything out)."""
    settings = settings or SpeedSettings()
    if settings.warmup_seconds > 0:
        inferences_per_second(predict, BASE_DOCUMENT, seconds=settings.warmup_seconds, clock=clock)
    long_rates, short_rates, long_tokens, short_tokens = [], [], [], []
    for i in range(settings.iterations):
        long_doc, short_doc = speed_documents(i)
        n_long, n_short = gpt2_token_count(long_doc), gpt2_token_count(short_doc)
        rate = inferences_per_second(predict, long_doc, seconds=settings.seconds, clock=clock)
        rate_short = inferences_per_second(
            predict, short_doc, seconds=settings.seconds, clock=clock
        )
        long_rates.append(rate * n_long)
        short_rates.append(rate_short * n_short)
        long_tokens.append(n_long)
        short_tokens.append(n_short)
    return SpeedResult(
        tokens_per_second=long_rates,
        tokens_per_second_short=short_rates,
        document_tokens=long_tokens,
        document_tokens_short=short_tokens,
        settings=settings,
        call=call,
    )
