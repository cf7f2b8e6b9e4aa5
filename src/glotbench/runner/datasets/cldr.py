"""A language-identification dataset from the CLDR locale data that ``babel`` ships.

The Unicode Common Locale Data Repository (CLDR) holds, for every locale,
text written and reviewed by native speakers: the names of territories,
languages, scripts, currencies and measurement units, month and day names,
relative-time phrases ("i fjor", "for 5 år sidan"), and the grammar of lists
("A, B og C"). ``babel`` ships CLDR inside its wheel, so this dataset builds
offline on any machine where glotbench's ``starter`` extra is installed.

How items are made (:func:`build_cldr_lid`):

1. **Phrases of a locale** are the strings the locale *itself* defines
   (``babel.localedata.load(code, merge_inherited=False)``), so a locale that
   inherits a name from its parent does not get it twice. Norwegian Bokmål
   (``nb``) defines nothing of its own in CLDR — it is the ``no`` locale — so
   its phrases are those of ``no``; Nynorsk (``nn``) keeps only what it
   overrides, which is exactly where it differs from Bokmål.
2. Placeholders (``{0}``) of relative-time phrases are filled with a number;
   abbreviated (short/narrow) relative-time forms and phrases without a
   letter are dropped.
3. **Ambiguous phrases are removed**: a phrase (case-folded) that two or more
   of the chosen languages define has no single gold language ("april",
   "afrikaans", "Kosovo"), so it is dropped from all of them.
4. The remaining phrases of each language are shuffled from ``seed`` and
   cut into groups of ``phrases_per_item``; each group becomes one item,
   joined with the locale's own CLDR list pattern ("Aust-Europa, Kokosøyane
   og Elfenbeinskysten"). Each phrase is used at most once, so items are
   disjoint. At most ``max_items_per_language`` items per language are kept.

Every record has ``id`` (``"<lang>-<n>"``), ``text``, ``label`` (the
language code) and ``cldr`` (the babel / CLDR version it came from).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from glotbench.runner.datasets.base import Record
from glotbench.runner.errors import DatasetError

#: The starter suite's languages: six North Germanic (including both written
#: Norwegians and Faroese), West Germanic, seven Romance (es/pt/gl/ca and
#: it/fr/ro), South and West Slavic in Latin script, East and South Slavic in
#: Cyrillic, Finnic and Hungarian, Baltic, Greek, Turkish, Indonesian/Malay,
#: and Basque, Welsh and Irish.
STARTER_LANGUAGES: tuple[str, ...] = (
    "da", "nb", "nn", "sv", "fo", "is",
    "de", "nl", "en", "af",
    "es", "pt", "gl", "ca", "it", "fr", "ro",
    "pl", "cs", "sk", "sl", "hr", "bs",
    "ru", "uk", "bg", "mk",
    "fi", "et", "hu", "lt", "lv",
    "el", "tr", "id", "ms",
    "eu", "cy", "ga",
)  # fmt: skip

#: Locales whose CLDR data lives under another code.
DATA_LOCALE: dict[str, str] = {"nb": "no"}
#: Where babel does not resolve a locale's list grammar through CLDR's parent
#: chain (nn -> no), the parent whose list pattern applies.
LIST_PARENT: dict[str, str] = {"nn": "no"}

_PLACEHOLDER = re.compile(r"\{\d\}")
_LETTER = re.compile(r"[^\W\d_]")


def _babel() -> Any:
    try:
        import babel
        from babel import localedata
    except ImportError:  # pragma: no cover - babel is in the starter extra
        raise DatasetError(
            "the cldr loader needs the 'babel' package: pip install 'glotbench[starter]'"
        ) from None
    return babel, localedata


def _strings(value: Any) -> Iterator[str]:
    """Every string leaf of a (nested) CLDR mapping."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict) or hasattr(value, "items"):
        for v in value.values():
            yield from _strings(v)


def _wide_names(data: Any, key: str) -> Iterator[str]:
    forms = data.get(key) or {}
    for context in ("format", "stand-alone"):
        yield from _strings((forms.get(context) or {}).get("wide") or {})


def locale_phrases(code: str) -> list[str]:
    """The display phrases locale ``code`` defines itself (see the module docstring)."""
    _, localedata = _babel()
    source = DATA_LOCALE.get(code, code)
    if not localedata.exists(source):
        raise DatasetError(f"CLDR (babel) has no locale {code!r}")
    data = localedata.load(source, merge_inherited=False)
    raw: list[str] = []
    for key in ("territories", "languages", "scripts", "currency_names", "variants"):
        raw.extend(_strings(data.get(key) or {}))
    currency_plural = data.get("currency_names_plural") or {}
    for forms in currency_plural.values():
        raw.extend(_strings(forms))
    for names in (data.get("unit_display_names") or {}).values():
        if isinstance(names, dict) and "long" in names:
            raw.append(names["long"])
    for field, forms in (data.get("date_fields") or {}).items():
        if not field.endswith(("-short", "-narrow")):  # abbreviations ("5 dn.") are not text
            raw.extend(_strings(forms))
    raw.extend(_wide_names(data, "months"))
    raw.extend(_wide_names(data, "days"))
    out: list[str] = []
    seen: set[str] = set()
    for phrase in raw:
        text = " ".join(_PLACEHOLDER.sub("5", phrase).split())
        if not text or not _LETTER.search(text) or text in seen:
            continue
        seen.add(text)
        out.append(text)
    return out


def cldr_source() -> str:
    """Where the data came from, for the dataset's ``source``."""
    babel, _ = _babel()
    return f"CLDR locale data in babel {babel.__version__}"


def _join(phrases: Sequence[str], code: str) -> str:
    from babel.lists import format_list

    if len(phrases) == 1:
        return phrases[0]
    locale = DATA_LOCALE.get(code, code)
    try:
        return str(format_list(list(phrases), style="standard", locale=locale))
    except ValueError:
        if code not in LIST_PARENT:
            raise
        return str(format_list(list(phrases), style="standard", locale=LIST_PARENT[code]))


def build_cldr_lid(
    languages: Iterable[str] = STARTER_LANGUAGES,
    *,
    phrases_per_item: int = 2,
    max_items_per_language: int = 150,
    seed: int = 4242,
) -> list[Record]:
    """Language-identification records from CLDR (see the module docstring)."""
    babel, _ = _babel()
    langs = list(dict.fromkeys(languages))
    if len(langs) < 2:
        raise DatasetError("the cldr loader needs at least two languages")
    if phrases_per_item < 1:
        raise DatasetError(f"phrases_per_item must be >= 1, got {phrases_per_item}")
    pools = {code: locale_phrases(code) for code in langs}
    owners: dict[str, set[str]] = {}
    for code, phrases in pools.items():
        for p in phrases:
            owners.setdefault(p.casefold(), set()).add(code)
    version = f"babel {babel.__version__}"
    records: list[Record] = []
    for li, code in enumerate(langs):
        unique = sorted(p for p in pools[code] if len(owners[p.casefold()]) == 1)
        order = np.random.default_rng([seed, li]).permutation(len(unique))
        n_items = min(len(unique) // phrases_per_item, max_items_per_language)
        if n_items == 0:
            raise DatasetError(
                f"CLDR has no phrases of {code!r} that the other languages do not share"
            )
        for i in range(n_items):
            group = [
                unique[int(j)] for j in order[i * phrases_per_item : (i + 1) * phrases_per_item]
            ]
            records.append(
                {
                    "id": f"{code}-{i:04d}",
                    "text": _join(group, code),
                    "label": code,
                    "cldr": version,
                }
            )
    return records
