"""Template suites for behavioural tests: parsing, validation and expansion.

A suite is a YAML file (format in ``docs/checklist.md``) with per-language
fill-in lists (the *lexicon*) and tests of three types, after CheckList
(Ribeiro et al. 2020, "Beyond Accuracy: Behavioral Testing of NLP Models with
CheckList") and MultiCheckList (Ruder et al. 2021, XTREME-R):

* **MFT** (minimum functionality test): every filled template has an expected
  label;
* **INV** (invariance test): a perturbation (another name, …) must not change
  the prediction;
* **DIR** (directional expectation test): a perturbation (an intensifier, …)
  must move the probability of a label in a known direction.

Placeholders are ``{slot}``, ``{slot=list}`` (the slot is filled from a named
list, so ``{a=name} and {b=name}`` are two independent names), ``{slot~head}``
(agreement: the slot's form is chosen by a feature of the ``head`` slot's fill,
e.g. a Danish adjective's neuter form after a neuter noun) and a trailing
``|cap`` / ``|upper`` / ``|lower`` case filter. ``{{`` and ``}}`` are literal
braces.

Expansion is deterministic: when a test has more fill combinations than its
cap ``n``, the combinations are sampled without replacement from a generator
seeded by (suite seed, suite, test, language), so the same file gives the same
cases on every machine, whatever else the file contains.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from glotbench.errors import InputError

#: Test types, as in CheckList.
TEST_TYPES: tuple[str, ...] = ("MFT", "INV", "DIR")

#: Default number of perturbations per case of a ``swap`` test.
DEFAULT_SWAPS = 2

_PLACEHOLDER = re.compile(
    r"\{(?P<slot>[A-Za-z_]\w*)(?:=(?P<list>[A-Za-z_]\w*))?(?:~(?P<head>[A-Za-z_]\w*))?"
    r"(?:\|(?P<filter>cap|upper|lower))?\}"
)
_SUITE_KEYS = {"suite", "description", "labels", "seed", "n", "lexicon", "tests"}
_TEST_KEYS = {
    "name",
    "type",
    "capability",
    "description",
    "label",
    "expect",
    "tolerance",
    "swap",
    "n_swaps",
    "n",
    "templates",
}
_EXPECT_KEYS = {"label", "direction", "tolerance"}


# ---------------------------------------------------------------------------
# YAML with line numbers
# ---------------------------------------------------------------------------


class _Map(dict):  # type: ignore[type-arg]
    """A YAML mapping that remembers its line and the line of each key."""

    line: int = 0
    key_lines: dict[str, int]


class _Seq(list):  # type: ignore[type-arg]
    """A YAML sequence that remembers its line and the line of each item."""

    line: int = 0
    item_lines: list[int]


def _loader() -> type:
    import yaml

    class LineLoader(yaml.SafeLoader):
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:  # type: ignore[override]
            out = _Map(super().construct_mapping(node, deep=True))
            out.line = node.start_mark.line + 1
            out.key_lines = {
                str(k.value): k.start_mark.line + 1 for k, _ in node.value if hasattr(k, "value")
            }
            return out

        def construct_sequence(self, node: Any, deep: bool = False) -> Any:  # type: ignore[override]
            out = _Seq(super().construct_sequence(node, deep=True))
            out.line = node.start_mark.line + 1
            out.item_lines = [item.start_mark.line + 1 for item in node.value]
            return out

    LineLoader.add_constructor("tag:yaml.org,2002:map", LineLoader.construct_mapping)
    LineLoader.add_constructor("tag:yaml.org,2002:seq", LineLoader.construct_sequence)
    return LineLoader


def _line_of(container: Any, key: Any = None) -> int | None:
    if isinstance(container, _Map):
        return (
            container.key_lines.get(str(key), container.line) if key is not None else container.line
        )
    if isinstance(container, _Seq):
        if isinstance(key, int) and 0 <= key < len(container.item_lines):
            return container.item_lines[key]
        return container.line
    return None


# ---------------------------------------------------------------------------
# data model
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# parsing
# ---------------------------------------------------------------------------


class _Ctx:
    def __init__(self, path: str) -> None:
        self.path = path

    def error(
        self, message: str, container: Any = None, key: Any = None, field: str | None = None
    ) -> InputError:
        return InputError(message, path=self.path, line=_line_of(container, key), field=field)


def _str(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (str, int, float)):
        return str(value)
    return None


def _parse_entry(raw: Any, ctx: _Ctx, container: Any, idx: int, where: str) -> Entry:
    text = _str(raw)
    if text is not None:
        return Entry(text)
    if not isinstance(raw, dict):
        raise ctx.error(
            "a fill-in must be a string or a mapping (text/forms + features)", container, idx, where
        )
    forms_raw = raw.get("forms")
    forms: dict[str, str] = {}
    if forms_raw is not None:
        if not isinstance(forms_raw, dict) or not forms_raw:
            raise ctx.error(
                "'forms' must map feature values to word forms", raw, "forms", f"{where}.forms"
            )
        for key, value in forms_raw.items():
            form = _str(value)
            if form is None:
                raise ctx.error("a form must be a string", forms_raw, key, f"{where}.forms.{key}")
            for part in str(key).split("|"):
                forms[part.strip()] = form
    text_value = _str(raw.get("text"))
    if text_value is None and not forms:
        raise ctx.error("a fill-in mapping needs 'text' or 'forms'", raw, None, where)
    features = {}
    for key, value in raw.items():
        if key in ("text", "forms"):
            continue
        v = _str(value)
        if v is None:
            raise ctx.error("a feature value must be a string", raw, key, f"{where}.{key}")
        features[str(key)] = v
    return Entry(
        text_value if text_value is not None else next(iter(forms.values())), features, forms
    )


def _parse_lexicon(raw: Any, ctx: _Ctx, where: str) -> dict[str, FillList]:
    if not isinstance(raw, dict):
        raise ctx.error(
            "a language's lexicon must map list names to fill-in lists", raw, None, where
        )
    out: dict[str, FillList] = {}
    for name, value in raw.items():
        fw = f"{where}.{name}"
        agree = None
        items = value
        if isinstance(value, dict):
            unknown = set(value) - {"agree", "items"}
            if unknown or "items" not in value:
                raise ctx.error(
                    "a fill-in list is a sequence, or a mapping with 'items' "
                    "(and optional 'agree')",
                    raw,
                    name,
                    fw,
                )
            agree = _str(value.get("agree")) if value.get("agree") is not None else None
            items = value["items"]
        if not isinstance(items, list) or not items:
            raise ctx.error("a fill-in list must be a non-empty sequence", raw, name, fw)
        entries = tuple(
            _parse_entry(item, ctx, items, i, f"{fw}[{i}]") for i, item in enumerate(items)
        )
        out[str(name)] = FillList(str(name), entries, agree, _line_of(raw, name))
    return out


def _parse_template(
    text: str, ctx: _Ctx, container: Any, idx: Any, where: str
) -> tuple[str | Placeholder, ...]:
    parts: list[str | Placeholder] = []
    pos = 0
    buf = ""
    while pos < len(text):
        ch = text[pos]
        if text.startswith("{{", pos) or text.startswith("}}", pos):
            buf += ch
            pos += 2
            continue
        if ch == "{":
            m = _PLACEHOLDER.match(text, pos)
            if m is None:
                raise ctx.error(
                    f"malformed placeholder at character {pos + 1} of {text!r}; "
                    "write {slot}, {slot=list}, {slot~head} or {slot|cap} ({{ for a literal brace)",
                    container,
                    idx,
                    where,
                )
            if buf:
                parts.append(buf)
                buf = ""
            slot = m.group("slot")
            parts.append(
                Placeholder(slot, m.group("list") or slot, m.group("head"), m.group("filter"))
            )
            pos = m.end()
            continue
        if ch == "}":
            raise ctx.error(
                f"unmatched '}}' at character {pos + 1} of {text!r}", container, idx, where
            )
        buf += ch
        pos += 1
    if buf:
        parts.append(buf)
    return tuple(parts)


def _resolve_list(ph: Placeholder, lexicon: dict[str, FillList]) -> str | None:
    if ph.list_name in lexicon:
        return ph.list_name
    stripped = ph.list_name.rstrip("0123456789")
    return stripped if stripped in lexicon else None


def _check_template(
    tpl: Template, lexicon: dict[str, FillList], ctx: _Ctx, container: Any, idx: Any, where: str
) -> Template:
    slots = tpl.slots
    resolved: dict[str, Placeholder] = {}
    for parts in tpl.parts:
        for p in parts:
            if not isinstance(p, Placeholder):
                continue
            list_name = _resolve_list(p, lexicon)
            if list_name is None:
                raise ctx.error(
                    f"placeholder {{{p.slot}}} has no fill-in list {p.list_name!r} "
                    "in this language's "
                    f"lexicon (lists: {', '.join(sorted(lexicon)) or 'none'})",
                    container,
                    idx,
                    where,
                )
            p2 = Placeholder(p.slot, list_name, p.head, p.case_filter)
            prev = resolved.get(p.slot)
            if prev is not None and (prev.list_name, prev.head) != (p2.list_name, p2.head):
                raise ctx.error(
                    f"slot {p.slot!r} is used with different lists or heads", container, idx, where
                )
            resolved[p.slot] = p2
    for p in resolved.values():
        if p.head is None:
            continue
        head = slots.get(p.head)
        if head is None:
            raise ctx.error(
                f"slot {p.slot!r} agrees with {p.head!r}, which is not a slot of this template",
                container,
                idx,
                where,
            )
        if resolved[p.head].head is not None:
            raise ctx.error(
                f"slot {p.slot!r} agrees with {p.head!r}, which itself agrees with another "
                "slot; agree with an independent slot",
                container,
                idx,
                where,
            )
        dep = lexicon[p.list_name]
        for head_entry in lexicon[resolved[p.head].list_name].entries:
            for entry in dep.entries:
                if entry.form_for(head_entry, dep.agree) is None:
                    raise ctx.error(
                        f"fill-in {entry.text!r} of list {dep.name!r} has no form for "
                        f"{head_entry.text!r} (features {head_entry.features}); add the form "
                        "or a feature to the head entry",
                        container,
                        idx,
                        where,
                    )
    resolved_parts: tuple[tuple[str | Placeholder, ...], ...] = tuple(
        tuple(resolved[p.slot] if isinstance(p, Placeholder) else p for p in ps) for ps in tpl.parts
    )
    return Template(tpl.strings, resolved_parts, tpl.line)


def _parse_test(
    raw: Any,
    idx: int,
    suite_raw: Any,
    ctx: _Ctx,
    lexicon: dict[str, dict[str, FillList]],
    labels: tuple[str, ...],
) -> TestSpec:
    tests_seq = suite_raw["tests"]
    where = f"tests[{idx}]"
    if not isinstance(raw, dict):
        raise ctx.error("a test must be a mapping", tests_seq, idx, where)
    unknown = sorted(set(map(str, raw)) - _TEST_KEYS)
    if unknown:
        raise ctx.error(
            f"unknown key {unknown[0]!r}; allowed: {', '.join(sorted(_TEST_KEYS))}",
            raw,
            unknown[0],
            f"{where}.{unknown[0]}",
        )
    name = _str(raw.get("name"))
    if not name or not re.fullmatch(r"[A-Za-z0-9_\-]+", name):
        raise ctx.error(
            "a test needs a 'name' of letters, digits, '_' or '-'", raw, "name", f"{where}.name"
        )
    where = f"tests[{idx}] ({name})"
    ttype = (_str(raw.get("type")) or "").upper()
    if ttype not in TEST_TYPES:
        raise ctx.error(
            f"'type' must be one of {', '.join(TEST_TYPES)}, got {raw.get('type')!r}",
            raw,
            "type",
            f"{where}.type",
        )
    expectation: dict[str, Any] = {}
    if ttype == "MFT":
        label = _str(raw.get("label"))
        if label is None:
            raise ctx.error(
                "an MFT needs the expected 'label'",
                raw,
                "label" if "label" in raw else None,
                f"{where}.label",
            )
        if labels and label not in labels:
            raise ctx.error(
                f"label {label!r} is not one of the suite's labels {list(labels)}",
                raw,
                "label",
                f"{where}.label",
            )
        expectation = {"label": label}
    elif ttype == "INV":
        tol = raw.get("tolerance", 0.0)
        if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not 0 <= tol <= 1:
            raise ctx.error(
                "'tolerance' must be a number in [0, 1]", raw, "tolerance", f"{where}.tolerance"
            )
        expectation = {"tolerance": float(tol)}
    else:
        exp = raw.get("expect")
        if not isinstance(exp, dict):
            raise ctx.error(
                "a DIR test needs 'expect: {label, direction: increasing|decreasing, tolerance}'",
                raw,
                "expect" if "expect" in raw else None,
                f"{where}.expect",
            )
        bad = sorted(set(map(str, exp)) - _EXPECT_KEYS)
        if bad:
            raise ctx.error(
                f"unknown key {bad[0]!r} in 'expect'; allowed: label, direction, tolerance",
                exp,
                bad[0],
                f"{where}.expect.{bad[0]}",
            )
        direction = _str(exp.get("direction"))
        if direction not in ("increasing", "decreasing"):
            raise ctx.error(
                "'direction' must be 'increasing' or 'decreasing'",
                exp,
                "direction",
                f"{where}.expect.direction",
            )
        label = _str(exp.get("label")) if exp.get("label") is not None else None
        if label is not None and labels and label not in labels:
            raise ctx.error(
                f"label {label!r} is not one of the suite's labels {list(labels)}",
                exp,
                "label",
                f"{where}.expect.label",
            )
        tol = exp.get("tolerance", 0.0)
        if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not 0 <= tol <= 1:
            raise ctx.error(
                "'tolerance' must be a number in [0, 1]",
                exp,
                "tolerance",
                f"{where}.expect.tolerance",
            )
        expectation = {"label": label, "direction": direction, "tolerance": float(tol)}
    swap = _str(raw.get("swap")) if raw.get("swap") is not None else None
    if swap is not None and ttype == "MFT":
        raise ctx.error("'swap' applies to INV and DIR tests only", raw, "swap", f"{where}.swap")
    n_swaps = raw.get("n_swaps", DEFAULT_SWAPS)
    if isinstance(n_swaps, bool) or not isinstance(n_swaps, int) or n_swaps < 1:
        raise ctx.error("'n_swaps' must be a positive integer", raw, "n_swaps", f"{where}.n_swaps")
    n = raw.get("n")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise ctx.error(
            "'n' must be a positive integer (cases per language)", raw, "n", f"{where}.n"
        )
    tpl_raw = raw.get("templates")
    if not isinstance(tpl_raw, dict) or not tpl_raw:
        raise ctx.error(
            "'templates' must map language codes to lists of templates",
            raw,
            "templates" if "templates" in raw else None,
            f"{where}.templates",
        )
    templates: dict[str, tuple[Template, ...]] = {}
    for lang, items in tpl_raw.items():
        lang = str(lang)
        lw = f"{where}.templates.{lang}"
        if lang not in lexicon:
            raise ctx.error(
                f"language {lang!r} has no lexicon; add lexicon.{lang}", tpl_raw, lang, lw
            )
        if not isinstance(items, list) or not items:
            raise ctx.error("templates of a language must be a non-empty list", tpl_raw, lang, lw)
        out = []
        for j, item in enumerate(items):
            iw = f"{lw}[{j}]"
            strings: list[str]
            if isinstance(item, list):
                strings = [s for s in (_str(x) for x in item) if s is not None]
                if len(strings) != len(item) or not strings:
                    raise ctx.error("a template group must be a list of strings", items, j, iw)
            elif _str(item) is not None:
                strings = [str(item)]
            else:
                raise ctx.error(
                    "a template must be a string "
                    "(or, for INV/DIR, a list [original, perturbed, …])",
                    items,
                    j,
                    iw,
                )
            if ttype == "MFT" and len(strings) > 1:
                raise ctx.error(
                    "MFT templates are single strings; "
                    "a list [original, perturbed, …] is for INV/DIR",
                    items,
                    j,
                    iw,
                )
            if ttype != "MFT" and len(strings) == 1 and swap is None:
                raise ctx.error(
                    f"{ttype} template needs perturbations: give [original, perturbed, …] "
                    "or a test-level 'swap: SLOT'",
                    items,
                    j,
                    iw,
                )
            parts = tuple(_parse_template(s, ctx, items, j, iw) for s in strings)
            tpl = _check_template(
                Template(tuple(strings), parts, _line_of(items, j)),
                lexicon[lang],
                ctx,
                items,
                j,
                iw,
            )
            if swap is not None and len(strings) == 1:
                slot = tpl.slots.get(swap)
                if slot is None or slot.head is not None:
                    raise ctx.error(
                        f"'swap: {swap}' names no independent slot of this template", items, j, iw
                    )
            out.append(tpl)
        templates[lang] = tuple(out)
    return TestSpec(
        name=name,
        type=ttype,
        capability=_str(raw.get("capability")) or "",
        description=_str(raw.get("description")) or "",
        expectation=expectation,
        templates=templates,
        swap=swap,
        n_swaps=int(n_swaps),
        n=None if n is None else int(n),
        line=_line_of(tests_seq, idx),
    )


def parse_suite_text(text: str, path: str = "<string>") -> TemplateSuite:
    """Parse a template suite from YAML text; errors name the file, line and field."""
    import yaml

    ctx = _Ctx(path)
    try:
        raw = yaml.load(text, Loader=_loader())  # noqa: S506  (a SafeLoader subclass)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise InputError(
            f"not valid YAML: {getattr(exc, 'problem', exc)}", path=path, line=line
        ) from None
    if not isinstance(raw, dict):
        raise InputError(
            "a template suite must be a YAML mapping with 'suite', 'lexicon' and 'tests'",
            path=path,
            line=1,
        )
    unknown = sorted(set(map(str, raw)) - _SUITE_KEYS)
    if unknown:
        raise ctx.error(
            f"unknown key {unknown[0]!r}; allowed: {', '.join(sorted(_SUITE_KEYS))}",
            raw,
            unknown[0],
            unknown[0],
        )
    name = _str(raw.get("suite"))
    if not name or not re.fullmatch(r"[A-Za-z0-9_\-]+", name):
        raise ctx.error(
            "the suite needs a 'suite' name of letters, digits, '_' or '-'",
            raw,
            "suite" if "suite" in raw else None,
            "suite",
        )
    labels_raw = raw.get("labels", [])
    if not isinstance(labels_raw, list) or any(_str(x) is None for x in labels_raw):
        raise ctx.error("'labels' must be a list of label names", raw, "labels", "labels")
    labels = tuple(str(x) for x in labels_raw)
    seed = raw.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ctx.error("'seed' must be a non-negative integer", raw, "seed", "seed")
    n = raw.get("n")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise ctx.error(
            "'n' must be a positive integer (cases per test and language)", raw, "n", "n"
        )
    lex_raw = raw.get("lexicon")
    if not isinstance(lex_raw, dict) or not lex_raw:
        raise ctx.error(
            "'lexicon' must map language codes to fill-in lists",
            raw,
            "lexicon" if "lexicon" in raw else None,
            "lexicon",
        )
    lexicon = {str(lang): _parse_lexicon(v, ctx, f"lexicon.{lang}") for lang, v in lex_raw.items()}
    tests_raw = raw.get("tests")
    if not isinstance(tests_raw, list) or not tests_raw:
        raise ctx.error(
            "'tests' must be a non-empty list", raw, "tests" if "tests" in raw else None, "tests"
        )
    tests = tuple(_parse_test(t, i, raw, ctx, lexicon, labels) for i, t in enumerate(tests_raw))
    seen: set[str] = set()
    for i, t in enumerate(tests):
        if t.name in seen:
            raise ctx.error(f"test name {t.name!r} occurs twice", tests_raw, i, f"tests[{i}].name")
        seen.add(t.name)
    return TemplateSuite(
        name=name,
        description=_str(raw.get("description")) or "",
        labels=labels,
        seed=int(seed),
        n=None if n is None else int(n),
        lexicon=lexicon,
        tests=tests,
        path=path,
    )


def load_suite(path: str | Path) -> TemplateSuite:
    """Parse a template suite file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(
            f"cannot read the template file: {exc.strerror or exc}", path=str(p)
        ) from None
    except UnicodeDecodeError:
        raise InputError("the template file is not UTF-8 text", path=str(p)) from None
    return parse_suite_text(text, str(p))


def builtin_template_files() -> list[Path]:
    """The template suites shipped with glotbench (``glotbench/checklist/templates/*.yaml``)."""
    folder = resources.files("glotbench.checklist").joinpath("templates")
    return sorted(Path(str(p)) for p in folder.iterdir() if str(p).endswith(".yaml"))


def builtin_suites() -> list[TemplateSuite]:
    """The shipped template suites, parsed."""
    return [load_suite(p) for p in builtin_template_files()]


# ---------------------------------------------------------------------------
# expansion
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# cases files
# ---------------------------------------------------------------------------


def write_cases(cases: Sequence[Case], out: str | Path) -> Path:
    """Write cases as JSONL, one row per text (see :meth:`Case.rows`)."""
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for case in cases:
            for row in case.rows():
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


_REQUIRED_ROW = ("id", "case_id", "suite", "test", "type", "language", "position", "text")


def read_cases(path: str | Path) -> list[Case]:
    """Read a cases JSONL file written by :func:`write_cases` (errors name the line and field)."""
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputError(
            f"cannot read the cases file: {exc.strerror or exc}", path=str(p)
        ) from None
    groups: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON: {exc.msg}", path=str(p), line=lineno) from None
        if not isinstance(row, dict):
            raise InputError("each line must be a JSON object", path=str(p), line=lineno)
        for key in _REQUIRED_ROW:
            if key not in row:
                raise InputError(
                    "missing (write cases with 'glotbench checklist expand')",
                    path=str(p),
                    line=lineno,
                    field=key,
                )
        if row["type"] not in TEST_TYPES:
            raise InputError(
                f"must be one of {', '.join(TEST_TYPES)}", path=str(p), line=lineno, field="type"
            )
        if not isinstance(row.get("expect"), dict):
            raise InputError("must be a JSON object", path=str(p), line=lineno, field="expect")
        group = groups.setdefault(str(row["case_id"]), [])
        if int(row["position"]) != len(group):
            raise InputError(
                f"position {row['position']} out of order (expected {len(group)}); "
                "keep a case's rows together",
                path=str(p),
                line=lineno,
                field="position",
            )
        if row["id"] != f"{row['case_id']}/{row['position']}":
            raise InputError(
                f"must be '<case_id>/<position>', got {row['id']!r}",
                path=str(p),
                line=lineno,
                field="id",
            )
        group.append((lineno, row))
    cases = []
    for case_id, rows in groups.items():
        first = rows[0][1]
        if first["type"] == "MFT" and "label" not in first["expect"]:
            raise InputError(
                "an MFT case needs expect.label", path=str(p), line=rows[0][0], field="expect"
            )
        cases.append(
            Case(
                case_id=case_id,
                suite=str(first["suite"]),
                test=str(first["test"]),
                type=str(first["type"]),
                capability=str(first.get("capability") or ""),
                language=str(first["language"]),
                texts=tuple(str(r["text"]) for _, r in rows),
                expectation=dict(first["expect"]),
                labels=tuple(str(x) for x in first.get("labels") or ()),
                fills=dict(first.get("fills") or {}),
            )
        )
    if not cases:
        raise InputError("the cases file is empty", path=str(p))
    return cases


def iter_texts(cases: Sequence[Case]) -> Iterator[tuple[str, str]]:
    """(text id, text) of every text of every case."""
    for case in cases:
        yield from zip(case.text_ids(), case.texts, strict=True)
