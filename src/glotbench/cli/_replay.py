"""The fast path of a repeated ``glotbench analyze …``: the kept answer, before Typer loads.

:mod:`glotbench.cli._answer_cache` keeps each answer of an ``analyze`` command
on a store under two keys: the parsed question (command and option values) and
the **invocation** — the command line's words, the working directory, the
environment, which standard streams are terminals and their size, the
Python and glotbench installation (:func:`invocation_key`). The same
invocation parses to the same question, so :func:`replay`, called by
:func:`glotbench.cli.main` before anything else, can answer it from the words
alone: it digests the store (DuckDB only), looks the invocation up and prints
the kept bytes. It imports neither Typer, rich, numpy nor pandas; a repeated
question costs Python, DuckDB, rich's console and the digest
(docs/cli-performance.md). An answer printed by a console that is not the one a
new process would make (a test that changed its width) is kept under that
console's shape, so it is never replayed to a process that prints otherwise.

The invocation's store is found in its words as the parser finds it (the last
``--store``, else ``$GLOTBENCH_STORE``, else ``glotbench.duckdb``); the answer
is kept under the invocation only when that is the store the command read.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

#: the store a command reads when neither --store nor $GLOTBENCH_STORE names one
DEFAULT_STORE = Path("glotbench.duckdb")
#: environment variable naming the store (the --store option's fallback)
STORE_ENV = "GLOTBENCH_STORE"
#: environment variable: a value other than "" or "0" turns the answer cache off
NO_CACHE_ENV = "GLOTBENCH_NO_CACHE"
#: variables a shell changes without changing what a command prints
_VOLATILE_ENV = ("OLDPWD", "_")
#: the numerical libraries' thread counts (and MKL's reproducibility mode): another count
#: can add in another order and change a result's last bits, so they are part of every key
NUMERIC_ENV = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "MKL_CBWR",
)

#: this process's invocation (set by :func:`replay`) and the store content it digested,
#: with the store's write generation then
_state: dict[str, Any] = {"invocation": None, "store": None, "content": None}


def cache_disabled(argv: list[str] | None = None) -> bool:
    """``--no-cache`` among the words, or ``$GLOTBENCH_NO_CACHE`` set (not to 0)."""
    if os.environ.get(NO_CACHE_ENV, "").strip() not in ("", "0"):
        return True
    return argv is not None and "--no-cache" in _options_part(argv)


def _options_part(argv: list[str]) -> list[str]:
    return argv[: argv.index("--")] if "--" in argv else argv


def store_of(argv: list[str]) -> Path:
    """The store the words name as the parser reads them: the last ``--store``, else the
    environment's, else :data:`DEFAULT_STORE`."""
    words = _options_part(argv)
    value: str | None = None
    for position, word in enumerate(words):
        if word == "--store" and position + 1 < len(words):
            value = words[position + 1]
        elif word.startswith("--store="):
            value = word.removeprefix("--store=")
    if value is None:
        value = os.environ.get(STORE_ENV) or str(DEFAULT_STORE)
    return Path(value)


def _terminal(fd: int) -> list[int] | None:
    try:
        if not os.isatty(fd):
            return None
        size = os.get_terminal_size(fd)
        return [size.columns, size.lines]
    except OSError:
        return None


def output_shape(console: Any) -> list[Any]:
    """What shapes a rich console's text: width, height, colours, terminal, encoding."""
    return [
        console.width,
        console.height,
        console.color_system,
        console.is_terminal,
        console.is_dumb_terminal,
        console.encoding,
        console.legacy_windows,
        console.no_color,
        console.is_jupyter,
    ]


def fresh_output_shape() -> list[Any]:
    """:func:`output_shape` of the consoles a new process prints with, on stdout and on
    stderr (glotbench.cli._output)."""
    from rich.console import Console

    return output_shape(Console()) + output_shape(Console(stderr=True))


def installation(packages_only: bool = False) -> dict[str, Any]:
    """The Python executable and version, the import path and the modification times of
    its ``site-packages`` folders: installing, upgrading or removing a package (numpy,
    scipy, pandas, rich, …) renames or adds a folder there, which changes its time.
    ``packages_only``: of the import path only those folders (``python -m`` puts the
    working directory first on it)."""
    folders: list[list[Any]] = []
    for entry in sys.path:
        stamp = None
        if Path(entry).name in ("site-packages", "dist-packages"):
            try:
                stamp = os.stat(entry).st_mtime_ns
            except OSError:
                pass
        if stamp is not None or not packages_only:
            folders.append([entry, stamp])
    return {"python": [sys.executable, sys.version], "path": folders}


def numeric_environment() -> dict[str, str | None]:
    """The values of :data:`NUMERIC_ENV` (None: not set)."""
    return {name: os.environ.get(name) for name in NUMERIC_ENV}


def invocation(argv: list[str]) -> dict[str, Any]:
    """What decides a command's printed answer besides the store and the console.

    The words, the working directory, the environment (but ``OLDPWD`` and
    ``_``), whether stdin, stdout and stderr are terminals and their sizes,
    stdout's and stderr's encodings, the Python executable and version, the import path and
    the modification times of its ``site-packages`` folders (:func:`installation`)
    and the glotbench files
    (:func:`glotbench.store.analysis_cache.code_fingerprint`). Taken when the
    process starts: an analysis may set environment variables as it runs.
    """
    from glotbench.store.analysis_cache import code_fingerprint

    return {
        "argv": list(argv),
        "cwd": os.getcwd(),
        "environment": {k: v for k, v in os.environ.items() if k not in _VOLATILE_ENV},
        "terminals": [_terminal(fd) for fd in (0, 1, 2)],
        "stdout_encoding": getattr(sys.stdout, "encoding", None),
        "stdout_errors": getattr(sys.stdout, "errors", None),
        "stderr_encoding": getattr(sys.stderr, "encoding", None),
        "stderr_errors": getattr(sys.stderr, "errors", None),
        **installation(),
        "code": code_fingerprint(),
    }


def invocation_key(words: dict[str, Any], shape: list[Any]) -> str:
    """Key of an answer printed for the invocation ``words`` (:func:`invocation`) by a
    console of ``shape`` (:func:`output_shape`)."""
    import hashlib  # here, not at the top: ``glotbench --help`` needs neither
    import json

    text = json.dumps({**words, "console": shape}, sort_keys=True, default=str)
    return "argv-" + hashlib.sha256(text.encode()).hexdigest()


def store_content(store: Path) -> tuple[str, int] | None:
    """The content digest and write generation of ``store``
    (:func:`glotbench.store.analysis_cache.store_file_state`), reused when :func:`replay`
    read them already."""
    from glotbench.store.analysis_cache import store_file_state

    if _state["content"] is not None and _state["store"] == store:
        content, generation = _state["content"]
        return str(content), int(generation)
    return store_file_state(store)


def running_invocation() -> tuple[dict[str, Any], Path] | None:
    """The invocation (:func:`invocation`) and store of the command line :func:`replay`
    was given and :func:`glotbench.cli.main` is running (None outside ``main``)."""
    if _state["invocation"] is None:
        return None
    return dict(_state["invocation"]), Path(_state["store"])


def forget() -> None:
    """End of ``main``: no invocation is running (an in-process caller may run another)."""
    _state.update(invocation=None, store=None, content=None)


def write_answer(answer: bytes, errors: bytes = b"") -> None:
    """Print a kept answer's bytes as they were printed (a stream's buffer when it has one):
    ``errors`` on stderr (warnings and notes come before the result), ``answer`` on stdout."""
    for data, stream in ((errors, sys.stderr), (answer, sys.stdout)):
        if not data:
            continue
        stream.flush()
        buffer = getattr(stream, "buffer", None)
        if buffer is not None:
            buffer.write(data)
            buffer.flush()
        else:
            stream.write(data.decode(getattr(stream, "encoding", None) or "utf-8"))
            stream.flush()


def replay(argv: list[str]) -> bool:
    """Print the kept answer of ``argv`` (``glotbench analyze …``) and return True, if any.

    False (nothing printed) when the command is not an analysis, the cache is
    off, there is no store or no answer kept for this invocation and content.
    """
    forget()
    if not argv or argv[0] != "analyze" or cache_disabled(argv):
        return False
    options = _options_part(argv)
    if "--help" in options or "-h" in options:
        return False
    try:
        from glotbench.store.analysis_cache import AnalysisCache, store_file_state

        words = invocation(argv)
        store = store_of(argv)
        state = store_file_state(store)
        _state.update(invocation=words, store=store, content=state)
        if state is None:
            return False
        answer = AnalysisCache.beside(store).get_answer_streams(
            state[0], invocation_key(words, fresh_output_shape())
        )
    except Exception:  # a cache that cannot be read only costs time: run the command
        return False
    if answer is None:
        return False
    write_answer(*answer)
    return True
