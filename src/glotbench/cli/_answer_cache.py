"""A repeated question answered from the store's cache, before the analysis stack loads.

``glotbench analyze …`` on a store is a pure function of the command, its
options, what the store holds and the glotbench code. :func:`answer_cache`
wraps such a command: it digests the store with DuckDB alone
(:func:`glotbench.store.analysis_cache.store_file_state`; no numpy or
pandas), and when the same question was answered before for the same store
content, prints the kept answer byte for byte and returns. Otherwise the
command runs as always, its standard output and error (warnings, notes) are
recorded on the way, and on success the bytes are kept in
``<store>.cache/answers/`` for the next call, which prints both again.

The key holds every option's value, the store's content digest (every table:
any write changes it), the glotbench code, the installed libraries
(:func:`glotbench.cli._replay.installation`), their thread counts
(``OMP_NUM_THREADS``, … :data:`glotbench.cli._replay.NUMERIC_ENV`) and what shapes the printed text
(``--json``, the terminal's width, colours and encoding). A question that
reads or writes a file other than the store (``--input``, ``--plot``,
``--pairs-out``, …) is not cached, nor is a command that fails. ``--no-cache``
(or ``$GLOTBENCH_NO_CACHE=1``) computes afresh and keeps nothing; see
docs/analysis-cache.md.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from glotbench.cli._lazy import announce
from glotbench.cli._replay import (
    DEFAULT_STORE,
    NO_CACHE_ENV,
    cache_disabled,
    installation,
    invocation_key,
    numeric_environment,
    output_shape,
    running_invocation,
    store_content,
    write_answer,
)

NoCacheOption = Annotated[
    bool,
    typer.Option(
        "--no-cache",
        help="Compute afresh: do not answer from the store's cache (<store>.cache/) and keep "
        f"nothing there. ${NO_CACHE_ENV}=1 does the same.",
    ),
]


class _Recorder:
    """``sys.stdout`` (or ``sys.stderr``) while a command runs: everything written goes
    through, and is kept. ``unrecorded`` is the stream itself: notices about the moment
    (waiting for another process's lock, :func:`glotbench.errors.print_notice`) are
    written there, not kept with the answer."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self.unrecorded = stream
        self._encoding = getattr(stream, "encoding", None) or "utf-8"
        # the stream's own error handler (PYTHONIOENCODING=ascii:backslashreplace), so the
        # bytes kept are the bytes it printed
        self._errors = getattr(stream, "errors", None) or "strict"
        self.chunks: list[bytes] = []
        self.spoiled = False  # some text's bytes could not be told: keep nothing
        raw = getattr(stream, "buffer", None)
        self.buffer = _BufferRecorder(raw, self.chunks) if raw is not None else None

    def write(self, text: str) -> int:
        written = self._stream.write(text)  # raises first if the stream cannot encode it
        try:
            self.chunks.append(text.encode(self._encoding, errors=self._errors))
        except (UnicodeError, LookupError):  # bytes not known: this answer is not kept
            self.spoiled = True
        return written

    def __getattr__(self, name: str) -> Any:  # flush, isatty, fileno, encoding, …
        return getattr(self._stream, name)


class _BufferRecorder:
    def __init__(self, raw: Any, chunks: list[bytes]) -> None:
        self._raw = raw
        self._chunks = chunks

    def write(self, data: bytes) -> int:
        self._chunks.append(bytes(data))
        return self._raw.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


def _is_file_parameter(value: Any) -> bool:
    if isinstance(value, Path):
        return True
    return isinstance(value, list | tuple) and any(isinstance(v, Path) for v in value)


def _question(command: str, arguments: dict[str, Any]) -> str:
    """The request and what shapes its printed text, as one JSON string."""
    from glotbench.cli._output import console, stderr_console

    options = {
        name: [str(v) for v in value] if isinstance(value, list | tuple) else value
        for name, value in arguments.items()
        if not isinstance(value, typer.Context)
    }
    output = {
        "console": output_shape(console),
        "stderr_console": output_shape(stderr_console()),
        "stdout_encoding": getattr(sys.stdout, "encoding", None),
        "stdout_errors": getattr(sys.stdout, "errors", None),
        "stderr_encoding": getattr(sys.stderr, "encoding", None),
        "stderr_errors": getattr(sys.stderr, "errors", None),
    }
    # the libraries the answer is computed and printed with (an upgrade can change it), and
    # their thread counts (another count can change a sum's last bits)
    request = {
        "command": command,
        "options": options,
        "output": output,
        "threads": numeric_environment(),
        **installation(True),
    }
    return json.dumps(request, sort_keys=True, default=str)


def _write_answer(answer: tuple[bytes, bytes], json_output: bool) -> None:
    write_answer(*answer)
    if json_output:  # as print_json marks it (glotbench.cli.main)
        from glotbench.cli._output import _printed_json

        _printed_json.append(True)


def answer_cache(command: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Give an ``analyze`` command ``--no-cache`` and answer repeated questions from the cache.

    ``command`` names it in the key (``"analyze aggregate"``). The wrapped
    function takes its options as keyword arguments (as Typer calls it) and has
    a ``store`` option; ``--json`` output is ``json_output``.
    """

    def decorate(function: Callable[..., None]) -> Callable[..., None]:
        signature = inspect.signature(function, eval_str=True)
        parameters = list(signature.parameters.values())
        if "store" not in signature.parameters:
            raise TypeError(f"{function.__name__} has no 'store' option")
        parameters.append(
            inspect.Parameter(
                "no_cache", inspect.Parameter.KEYWORD_ONLY, default=False, annotation=NoCacheOption
            )
        )

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> None:
            no_cache = bool(kwargs.pop("no_cache", False))
            bound = signature.bind_partial(*args, **kwargs).arguments
            store = bound.get("store")
            store = store if store is not None else DEFAULT_STORE
            others = {k: v for k, v in bound.items() if k != "store"}
            if no_cache or cache_disabled() or any(_is_file_parameter(v) for v in others.values()):
                announce()
                function(*args, **kwargs)
                return
            _answer_from_cache_or_run(command, store, bound, lambda: function(*args, **kwargs))

        wrapper.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in parameters} | {
            "return": signature.return_annotation
        }
        return wrapper

    return decorate


def _answer_from_cache_or_run(
    command: str, store: Path, arguments: dict[str, Any], run: Callable[[], None]
) -> None:
    from glotbench.store.analysis_cache import AnalysisCache, code_fingerprint, store_file_state

    state = store_content(store)
    if state is None:  # no store there, or not one: the command says why
        announce()
        run()
        return
    content = state[0]
    question = _question(command, arguments)
    key = hashlib.sha256(f"{content}\n{code_fingerprint()}\n{question}".encode()).hexdigest()
    cache = AnalysisCache.beside(store)
    answer = cache.get_answer_streams(content, key)
    if answer is not None:
        _write_answer(answer, bool(arguments.get("json_output")))
    else:
        announce()
        answer = _run_recorded(run)
        # kept only if no write was committed meanwhile (another process wrote to the
        # store, even if a later write restored its content: the write generation counts)
        if answer is None or store_file_state(store) != state:
            return
        cache.put_answer(content, key, *answer)
    # the same words read the same store: kept for glotbench.cli._replay's fast path
    words = running_invocation()
    if words is not None and words[1] == store:
        from glotbench.cli._output import console, stderr_console

        shape = output_shape(console) + output_shape(stderr_console())
        cache.put_answer(content, invocation_key(words[0], shape), *answer)


def _run_recorded(run: Callable[[], None]) -> tuple[bytes, bytes] | None:
    """Run the command, recording the bytes it prints on stdout and stderr (None: some
    text's bytes could not be told, so nothing is kept)."""
    stdout, stderr = sys.stdout, sys.stderr
    out, err = _Recorder(stdout), _Recorder(stderr)
    sys.stdout, sys.stderr = out, err  # type: ignore[assignment]
    try:
        run()
    finally:
        sys.stdout, sys.stderr = stdout, stderr
    if out.spoiled or err.spoiled:
        return None
    return b"".join(out.chunks), b"".join(err.chunks)
