"""Parse and validate a template suite (the YAML format of ``docs/checklist.md``).

Every problem is an :class:`~glotbench.errors.InputError` naming the file, the
line (from a YAML loader that records line numbers) and the field.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from glotbench.checklist.spec import (
    _PLACEHOLDER,
    DEFAULT_SWAPS,
    TEST_TYPES,
    Entry,
    FillList,
    Placeholder,
    Template,
    TemplateSuite,
    TestSpec,
)
from glotbench.errors import InputError

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


class _Map(dict):  # type: ignore[type-arg]
    """A YAML mapping that remembers its line and the line of each key."""

    line: int = 0
    key_lines: dict[str, int]


class _Seq(list):  # type: ignore[type-arg]
    """A YAML sequence that remembers its line and the line of each item."""

    line: int = 0
    item_lines: list[int]


def _loader() -> type:
    from glotbench.ingest.yaml_files import UniqueKeyLoader

    class LineLoader(UniqueKeyLoader):  # a repeated key is an error, not the last value
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
    name, ttype = _test_name_and_type(raw, idx, tests_seq, ctx)
    where = f"tests[{idx}] ({name})"
    if ttype == "MFT":
        expectation = _mft_expectation(raw, labels, ctx, where)
    elif ttype == "INV":
        expectation = {"tolerance": _tolerance(raw, ctx, f"{where}.tolerance")}
    else:
        expectation = _dir_expectation(raw, labels, ctx, where)
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
        templates[lang] = tuple(
            _parse_test_template(item, items, j, ttype, swap, lexicon[lang], ctx, f"{lw}[{j}]")
            for j, item in enumerate(items)
        )
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


def _test_name_and_type(raw: Any, idx: int, tests_seq: Any, ctx: _Ctx) -> tuple[str, str]:
    """A test's keys checked, and its name and type (MFT, INV or DIR)."""
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
    return name, ttype


def _tolerance(container: Any, ctx: _Ctx, field: str) -> float:
    """The ``tolerance`` of a test or of its ``expect``: a number in [0, 1], default 0."""
    tol = container.get("tolerance", 0.0)
    if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not 0 <= tol <= 1:
        raise ctx.error("'tolerance' must be a number in [0, 1]", container, "tolerance", field)
    return float(tol)


def _check_label(
    label: str, labels: tuple[str, ...], container: Any, ctx: _Ctx, field: str
) -> None:
    """``label`` is one of the suite's ``labels``, when it declares them."""
    if labels and label not in labels:
        raise ctx.error(
            f"label {label!r} is not one of the suite's labels {list(labels)}",
            container,
            "label",
            field,
        )


def _mft_expectation(raw: Any, labels: tuple[str, ...], ctx: _Ctx, where: str) -> dict[str, Any]:
    """An MFT's expected ``label`` (one of the suite's labels, when it declares them)."""
    label = _str(raw.get("label"))
    if label is None:
        raise ctx.error(
            "an MFT needs the expected 'label'",
            raw,
            "label" if "label" in raw else None,
            f"{where}.label",
        )
    _check_label(label, labels, raw, ctx, f"{where}.label")
    return {"label": label}


def _dir_expectation(raw: Any, labels: tuple[str, ...], ctx: _Ctx, where: str) -> dict[str, Any]:
    """A DIR test's ``expect``: the label whose probability moves, the direction, the
    tolerance."""
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
    if label is not None:
        _check_label(label, labels, exp, ctx, f"{where}.expect.label")
    tolerance = _tolerance(exp, ctx, f"{where}.expect.tolerance")
    return {"label": label, "direction": direction, "tolerance": tolerance}


def _parse_test_template(
    item: Any,
    items: Any,
    j: int,
    ttype: str,
    swap: str | None,
    lexicon: dict[str, FillList],
    ctx: _Ctx,
    iw: str,
) -> Template:
    """Template ``j`` (``item``) of one language of a test: a string, or for INV/DIR a list
    [original, perturbed, …], checked against the test's type, ``swap`` and the lexicon."""
    strings: list[str]
    if isinstance(item, list):
        strings = [s for s in (_str(x) for x in item) if s is not None]
        if len(strings) != len(item) or not strings:
            raise ctx.error("a template group must be a list of strings", items, j, iw)
    elif _str(item) is not None:
        strings = [str(item)]
    else:
        raise ctx.error(
            "a template must be a string (or, for INV/DIR, a list [original, perturbed, …])",
            items,
            j,
            iw,
        )
    if ttype == "MFT" and len(strings) > 1:
        raise ctx.error(
            "MFT templates are single strings; a list [original, perturbed, …] is for INV/DIR",
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
        Template(tuple(strings), parts, _line_of(items, j)), lexicon, ctx, items, j, iw
    )
    if swap is not None and len(strings) == 1:
        slot = tpl.slots.get(swap)
        if slot is None or slot.head is not None:
            raise ctx.error(
                f"'swap: {swap}' names no independent slot of this template", items, j, iw
            )
    return tpl


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
