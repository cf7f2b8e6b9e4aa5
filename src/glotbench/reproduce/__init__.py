"""The papers' published tables recomputed from their published inputs.

One module per paper, each exposing ``reproduce(data_dir) -> PaperReproduction``;
:mod:`.base` defines the result objects. See docs/reproductions.md.

Papers (command-line name -> module), in the order ``glotbench reproduce`` runs them:

==================  =====================================================
``saleva``          :mod:`.saleva` (Sälevä, Ataman & Lignos; reuben inputs)
``xtreme-r``        :mod:`.xtreme_r` (Ruder et al., XTREME-R)
``scandeval``       :mod:`.scandeval` (Nielsen, ScandEval Table 2)
``euroeval``        :mod:`.euroeval` (EuroEval's rank score)
``mixed-models``    :mod:`.mixed_models` (lme4/emmeans designs in R)
==================  =====================================================

A module that is not present (being written) is left out of :func:`papers`; asking for
it by name is an error that says so.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from glotbench.errors import InputError
from glotbench.reproduce.base import PaperReproduction

#: command-line name -> module path, in run order
PAPER_MODULES: dict[str, str] = {
    "saleva": "glotbench.reproduce.saleva",
    "xtreme-r": "glotbench.reproduce.xtreme_r",
    "scandeval": "glotbench.reproduce.scandeval",
    "euroeval": "glotbench.reproduce.euroeval",
    "mixed-models": "glotbench.reproduce.mixed_models",
}

#: environment variable naming the data directory (default ``../shared/data``)
DATA_DIR_ENV = "GLOTBENCH_DATA_DIR"


def papers() -> dict[str, ModuleType]:
    """Name -> module of every paper whose module exists (``PAPERS``)."""
    out: dict[str, ModuleType] = {}
    for name, module in PAPER_MODULES.items():
        try:
            out[name] = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:  # the module exists but something it imports does not
                raise
    return out


def __getattr__(name: str) -> object:
    if name == "PAPERS":
        return papers()
    raise AttributeError(name)


def default_data_dir() -> Path:
    """``$GLOTBENCH_DATA_DIR``, else ``../shared/data`` relative to the working directory."""
    env = os.environ.get(DATA_DIR_ENV)
    return Path(env) if env else Path.cwd() / ".." / "shared" / "data"


def reproduce(
    names: Sequence[str] | None = None, data_dir: str | Path | None = None
) -> list[PaperReproduction]:
    """Run the named papers' reproductions (all present ones when ``names`` is empty)."""
    data = Path(data_dir) if data_dir is not None else default_data_dir()
    if not data.is_dir():
        raise InputError(
            f"the data directory {data} does not exist; pass data_dir=DIR or set "
            f"{DATA_DIR_ENV} to the folder holding saleva/, xtreme-r/, … (the published inputs)",
            field="data-dir",
        )
    available = papers()
    wanted = list(names) if names else list(available)
    unknown = [n for n in wanted if n not in PAPER_MODULES]
    if unknown:
        raise InputError(
            f"unknown paper(s) {', '.join(unknown)}; known: {', '.join(PAPER_MODULES)}",
            field="paper",
        )
    absent = [n for n in wanted if n not in available]
    if absent:
        raise InputError(
            f"the reproduction of {', '.join(absent)} is not available in this version "
            f"(available: {', '.join(available)})",
            field="paper",
        )
    return [available[name].reproduce(data) for name in wanted]
