"""Template suites for behavioural tests: the names of the former single module.

The work is split by responsibility (each module documents its part):

* :mod:`glotbench.checklist.spec` — the objects (lists, placeholders, templates,
  tests, suites, cases) and the test types MFT / INV / DIR;
* :mod:`glotbench.checklist.parse` — reading and validating the YAML format;
* :mod:`glotbench.checklist.engine` — expansion into cases and perturbations;
* :mod:`glotbench.checklist.cases` — test-case files;
* :mod:`glotbench.checklist.suites` — the shipped suites (YAML data).

This module re-exports their public names, so ``glotbench.checklist.templates``
imports keep working; new code imports from the modules above or from
:mod:`glotbench.checklist`.
"""

from __future__ import annotations

from glotbench.checklist.cases import read_cases, write_cases
from glotbench.checklist.engine import expand_suite, expand_test, iter_texts
from glotbench.checklist.parse import load_suite, parse_suite_text
from glotbench.checklist.spec import (
    DEFAULT_SWAPS,
    TEST_TYPES,
    Case,
    Entry,
    FillList,
    Placeholder,
    Template,
    TemplateSuite,
    TestSpec,
)
from glotbench.checklist.suites import builtin_suites, builtin_template_files

__all__ = [
    "DEFAULT_SWAPS",
    "TEST_TYPES",
    "Case",
    "Entry",
    "FillList",
    "Placeholder",
    "Template",
    "TemplateSuite",
    "TestSpec",
    "builtin_suites",
    "builtin_template_files",
    "expand_suite",
    "expand_test",
    "iter_texts",
    "load_suite",
    "parse_suite_text",
    "read_cases",
    "write_cases",
]
