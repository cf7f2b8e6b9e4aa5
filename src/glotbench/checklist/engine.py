"""Expand template suites into test cases: fill-in combinations and perturbations.

Expansion is deterministic: when a test has more fill combinations than its
cap ``n``, the combinations are sampled without replacement from a generator
seeded by (suite seed, suite, test, language), so the same file gives the same
cases on every machine, whatever else the file contains. INV and DIR tests add
perturbations of each case (``swap``: another fill of a slot). After CheckList
(Ribeiro et al. 2020) and MultiCheckList (Ruder et al. 2021).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from glotbench.checklist.spec import (
    Case,
    Entry,
    FillList,
    Placeholder,
    Template,
    TemplateSuite,
    TestSpec,
)
from glotbench.errors import InputError


def _rng(*parts: Any) -> np.random.Generator:
    """A generator seeded by a stable hash of ``parts`` (not Python's salted hash)."""
    text = json.dumps([str(p) for p in parts], ensure_ascii=False)
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def _render(
    parts: Sequence[str | Placeholder], fills: dict[str, Entry], lexicon: dict[str, FillList]
) -> str:
    out = []
    for p in parts:
        if isinstance(p, str):
            out.append(p)
            continue
        entry = fills[p.slot]
        word = entry.form_for(fills[p.head], lexicon[p.list_name].agree) if p.head else entry.text
        assert word is not None  # checked when parsing
        if p.case_filter == "cap":
            word = word[:1].upper() + word[1:]
        elif p.case_filter == "upper":
            word = word.upper()
        elif p.case_filter == "lower":
            word = word.lower()
        out.append(word)
    return "".join(out)


def _combinations(tpl: Template, lexicon: dict[str, FillList]) -> tuple[list[str], list[int]]:
    slots = sorted(tpl.slots.values(), key=lambda p: (p.head is not None, p.slot))
    names = [p.slot for p in slots]
    sizes = [len(lexicon[tpl.slots[s].list_name].entries) for s in names]
    return names, sizes


def _decode(index: int, sizes: Sequence[int]) -> list[int]:
    digits = []
    for size in reversed(sizes):
        index, d = divmod(index, size)
        digits.append(d)
    return digits[::-1]


def expand_test(
    suite: TemplateSuite, test: TestSpec, language: str, n: int | None = None
) -> list[Case]:
    """The cases of one test in one language (deterministic; capped at ``n``)."""
    templates = test.templates.get(language)
    if not templates:
        return []
    lexicon = suite.lexicon[language]
    spaces = [_combinations(t, lexicon) for t in templates]
    totals = [math.prod(sizes) for _, sizes in spaces]
    total = sum(totals)
    cap = n if n is not None else (test.n if test.n is not None else suite.n)
    if cap is not None and total > cap:
        chosen = np.sort(
            _rng(suite.seed, suite.name, test.name, language).choice(total, size=cap, replace=False)
        )
    else:
        chosen = np.arange(total)
    offsets = np.cumsum([0, *totals])
    width = max(4, len(str(total - 1)))
    cases = []
    for global_index in chosen.tolist():
        j = int(np.searchsorted(offsets, global_index, side="right") - 1)
        tpl = templates[j]
        names, sizes = spaces[j]
        digits = _decode(global_index - int(offsets[j]), sizes)
        fills = {
            name: lexicon[tpl.slots[name].list_name].entries[d]
            for name, d in zip(names, digits, strict=True)
        }
        case_id = f"{test.name}.{language}.{global_index:0{width}d}"
        texts = [_render(parts, fills, lexicon) for parts in tpl.parts]
        if test.swap is not None and len(tpl.parts) == 1:
            texts.extend(_swaps(suite, test, tpl, fills, lexicon, case_id))
        cases.append(
            Case(
                case_id=case_id,
                suite=suite.name,
                test=test.name,
                type=test.type,
                capability=test.capability,
                language=language,
                texts=tuple(texts),
                expectation=dict(test.expectation),
                labels=suite.labels,
                fills={k: v.text for k, v in fills.items()},
            )
        )
    return cases


def _swaps(
    suite: TemplateSuite,
    test: TestSpec,
    tpl: Template,
    fills: dict[str, Entry],
    lexicon: dict[str, FillList],
    case_id: str,
) -> list[str]:
    slot = tpl.slots[test.swap or ""]
    entries = lexicon[slot.list_name].entries
    current = fills[slot.slot]
    original = _render(tpl.parts[0], fills, lexicon)
    others = [i for i, e in enumerate(entries) if e.text != current.text]
    rng = _rng(suite.seed, suite.name, case_id, "swap")
    order = rng.permutation(len(others)).tolist() if others else []
    out: list[str] = []
    for k in order:
        text = _render(tpl.parts[0], {**fills, slot.slot: entries[others[k]]}, lexicon)
        if text != original and text not in out:
            out.append(text)
        if len(out) == test.n_swaps:
            break
    return out


def expand_suite(
    suite: TemplateSuite,
    languages: Iterable[str] | None = None,
    tests: Iterable[str] | None = None,
    n: int | None = None,
) -> list[Case]:
    """All cases of a suite, test by test and language by language."""
    langs = list(languages) if languages is not None else suite.languages
    wanted = set(tests) if tests is not None else None
    if wanted is not None:
        missing = sorted(wanted - {t.name for t in suite.tests})
        if missing:
            raise InputError(
                f"suite {suite.name!r} has no test {missing[0]!r}; tests: "
                f"{', '.join(t.name for t in suite.tests)}",
                path=suite.path,
            )
    out: list[Case] = []
    for test in suite.tests:
        if wanted is not None and test.name not in wanted:
            continue
        for lang in langs:
            out.extend(
                c for c in expand_test(suite, test, lang, n) if len(c.texts) > 1 or c.type == "MFT"
            )
    return out


def iter_texts(cases: Sequence[Case]) -> Iterator[tuple[str, str]]:
    """(text id, text) of every text of every case."""
    for case in cases:
        yield from zip(case.text_ids(), case.texts, strict=True)
