"""Import-on-first-use proxies: the command modules reach :mod:`glotbench.api` through
:data:`api`, so ``glotbench --help`` (which imports every command module) loads no numpy,
pandas or scipy (see benchmarks/bench_cli_startup.py)."""

from __future__ import annotations

from typing import Any


class OnFirstUse:
    """A module imported when one of its names is first used.

    The analysis stack (pandas, scipy, the mixed models) takes a second or more
    to import, and ``glotbench --help`` or ``--version`` needs none of it, so
    the commands reach the API and the renderers through these proxies and the
    import happens inside the command that runs (see benchmarks/bench_cli_startup.py).
    """

    def __init__(self, module: str) -> None:
        self._module_name = module

    def __getattr__(self, name: str) -> Any:
        import importlib

        return getattr(importlib.import_module(self._module_name), name)


api: Any = OnFirstUse("glotbench.api")
