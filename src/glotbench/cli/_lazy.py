"""Import-on-first-use proxies: the command modules reach :mod:`glotbench.api` through
:data:`api`, so ``glotbench --help`` (which imports every command module) loads no numpy,
pandas or scipy (see benchmarks/bench_cli_startup.py).

The first use of the API in a command is also the moment it starts loading the
analysis stack (about half a second of CPU for pandas alone): :func:`announce`
first prints what the command works on, one dim line on stderr when that is a
terminal, so a person sees the command's first line before the libraries load
(docs/cli-performance.md).
"""

from __future__ import annotations

import sys
from typing import Any

#: set once the command's first line is printed (one per process)
_announced: list[bool] = []


def _command_words(argv: list[str]) -> list[str]:
    """The command's name (``analyze aggregate``, ``show``) and its store, from its words."""
    words: list[str] = []
    for word in argv:
        if word.startswith("-") or len(words) == 2:
            break
        words.append(word)
    for position, word in enumerate(argv):
        if word == "--store" and position + 1 < len(argv):
            words.append(f"(store {argv[position + 1]})")
        elif word.startswith("--store="):
            words.append(f"(store {word.removeprefix('--store=')})")
        elif word == "--":
            break
    return words


def announce() -> None:
    """Once per process, on a terminal's stderr: ``glotbench <command> (store …) …``.

    Printed before the analysis stack loads, by the first use of :data:`api`
    and by the ``analyze`` commands when they compute (not when they answer from
    the cache). Nothing is printed when stderr is a file or a pipe, so logs and
    ``--json`` consumers see the same output as before.
    """
    if _announced:
        return
    _announced.append(True)
    if not sys.stderr.isatty():
        return
    from rich.console import Console
    from rich.markup import escape

    text = " ".join(["glotbench", *_command_words(sys.argv[1:])])
    Console(stderr=True).print(f"[dim]{escape(text)} …[/]", highlight=False)


class OnFirstUse:
    """A module imported when one of its names is first used.

    The analysis stack (pandas, scipy, the mixed models) takes a second or more
    to import, and ``glotbench --help`` or ``--version`` needs none of it, so
    the commands reach the API and the renderers through these proxies and the
    import happens inside the command that runs (see benchmarks/bench_cli_startup.py).
    With ``announce``, the command's first line (:func:`announce`) is printed
    before that import.
    """

    def __init__(self, module: str, *, announce: bool = False) -> None:
        self._module_name = module
        self._announce = announce

    def __getattr__(self, name: str) -> Any:
        import importlib

        if self._announce and self._module_name not in sys.modules:
            announce()
        return getattr(importlib.import_module(self._module_name), name)


api: Any = OnFirstUse("glotbench.api", announce=True)
