"""The template suites shipped with glotbench: the YAML files of this folder (data only).

The format is in ``docs/checklist.md``; :mod:`glotbench.checklist.parse` reads them.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from glotbench.checklist.parse import load_suite
from glotbench.checklist.spec import TemplateSuite


def builtin_template_files() -> list[Path]:
    """The template suites shipped with glotbench (``glotbench/checklist/suites/*.yaml``)."""
    folder = resources.files("glotbench.checklist.suites")
    return sorted(Path(str(p)) for p in folder.iterdir() if str(p).endswith(".yaml"))


def builtin_suites() -> list[TemplateSuite]:
    """The shipped template suites, parsed."""
    return [load_suite(p) for p in builtin_template_files()]
