"""The objects of a template suite: lists, placeholders, templates, tests, suites, cases.

Built by :mod:`glotbench.checklist.parse` from a YAML file (``docs/checklist.md``)
and expanded into :class:`Case` objects by :mod:`glotbench.checklist.engine`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

#: Test types, as in CheckList.
TEST_TYPES: tuple[str, ...] = ("MFT", "INV", "DIR")


#: Default number of perturbations per case of a ``swap`` test.
DEFAULT_SWAPS = 2


_PLACEHOLDER = re.compile(
    r"\{(?P<slot>[A-Za-z_]\w*)(?:=(?P<list>[A-Za-z_]\w*))?(?:~(?P<head>[A-Za-z_]\w*))?"
    r"(?:\|(?P<filter>cap|upper|lower))?\}"
)


@dataclass(frozen=True)
class Entry:
    """One fill-in: a word or phrase, its features, and its agreement forms."""

    text: str
    features: dict[str, str] = field(default_factory=dict)
    forms: dict[str, str] = field(default_factory=dict)

    def form_for(self, head: Entry, agree: str | None) -> str | None:
        """The form agreeing with ``head`` (None when no form matches)."""
        if not self.forms:
            return self.text
        names = [agree] if agree else list(head.features)
        for name in names:
            value = head.features.get(name)
            if value is not None and value in self.forms:
                return self.forms[value]
        return None


@dataclass(frozen=True)
class FillList:
    """A named fill-in list of one language; ``agree`` names the feature its forms follow."""

    name: str
    entries: tuple[Entry, ...]
    agree: str | None = None
    line: int | None = None


@dataclass(frozen=True)
class Placeholder:
    slot: str
    list_name: str
    head: str | None
    case_filter: str | None


@dataclass(frozen=True)
class Template:
    """One template of a test in one language: the original and its variants."""

    strings: tuple[str, ...]
    parts: tuple[tuple[str | Placeholder, ...], ...]
    line: int | None

    @property
    def slots(self) -> dict[str, Placeholder]:
        out: dict[str, Placeholder] = {}
        for parts in self.parts:
            for p in parts:
                if isinstance(p, Placeholder) and p.slot not in out:
                    out[p.slot] = p
        return out


@dataclass(frozen=True)
class TestSpec:
    """One test of a suite."""

    name: str
    type: str
    capability: str
    description: str
    expectation: dict[str, Any]
    templates: dict[str, tuple[Template, ...]]
    swap: str | None
    n_swaps: int
    n: int | None
    line: int | None

    __test__ = False  # not a pytest class


@dataclass(frozen=True)
class TemplateSuite:
    """A parsed template suite."""

    name: str
    description: str
    labels: tuple[str, ...]
    seed: int
    n: int | None
    lexicon: dict[str, dict[str, FillList]]
    tests: tuple[TestSpec, ...]
    path: str

    @property
    def languages(self) -> list[str]:
        langs: set[str] = set()
        for t in self.tests:
            langs.update(t.templates)
        return sorted(langs)


@dataclass(frozen=True)
class Case:
    """One test case: a text (MFT) or an original with its perturbations (INV, DIR)."""

    case_id: str
    suite: str
    test: str
    type: str
    capability: str
    language: str
    texts: tuple[str, ...]
    expectation: dict[str, Any]
    labels: tuple[str, ...]
    fills: dict[str, str] = field(default_factory=dict)

    def text_ids(self) -> list[str]:
        """Ids of the texts: ``<case_id>/0`` is the original, ``/1``… the perturbations."""
        return [f"{self.case_id}/{k}" for k in range(len(self.texts))]

    def rows(self) -> list[dict[str, Any]]:
        """One JSON row per text (the cases-file format)."""
        out = []
        for k, (tid, text) in enumerate(zip(self.text_ids(), self.texts, strict=True)):
            out.append(
                {
                    "id": tid,
                    "case_id": self.case_id,
                    "suite": self.suite,
                    "test": self.test,
                    "type": self.type,
                    "capability": self.capability,
                    "language": self.language,
                    "position": k,
                    "text": text,
                    "expect": self.expectation,
                    "labels": list(self.labels),
                    "fills": self.fills if k == 0 else {},
                }
            )
        return out
