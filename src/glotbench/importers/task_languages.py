"""Languages of task names: ISO 639 suffix detection and task → language mapping files.

Harnesses name per-language tasks ``<task>_<language>`` (lm-eval's
``xnli_de``, ``scala_da``, ``belebele_dan_Latn``). :func:`language_suffix`
recognises such a suffix when it is

* an ISO 639-1 code (the 183 two-letter codes of ISO 639-1:2002 as maintained
  by the Library of Congress, the ISO 639-2 registration authority), optionally
  with a region (``pt_BR``, ``zh-CN``, ``es_419``); or
* a three-letter code with an ISO 15924 script (``dan_Latn``, FLORES-200 and
  Belebele style);

and the part before it does not itself end in a language code (``wmt16_de_en``
is a translation direction, not an English task). Three-letter codes without a
script are not guessed (too many collide with words: ``gen``, ``all``, ``cot``);
map such tasks explicitly.

:func:`read_task_language_file` reads explicit mappings from a file;
:class:`TaskLanguageMap` splits task names with explicit entries, known
families, then these suffixes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from glotbench.errors import InputError

#: ISO 639-1 two-letter language codes (current, without the withdrawn ``sh``, ``mo``...)
ISO_639_1: frozenset[str] = frozenset(
    """
    aa ab ae af ak am an ar as av ay az ba be bg bi bm bn bo br bs ca ce ch co cr cs cu cv cy
    da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht
    hu hy hz ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky
    la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr nv ny
    oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so sq sr ss
    st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo
    za zh zu
    """.split()
)

_SEP = r"[_-]"
_REGION = r"(?:[A-Z]{2}|\d{3})"
#: <rest>_<ll>[_<RR>]
_TWO_LETTER = re.compile(rf"^(?P<rest>.+?){_SEP}(?P<lang>[a-z]{{2}}(?:{_SEP}{_REGION})?)$")
#: <rest>_<lll>_<Scrp>
_WITH_SCRIPT = re.compile(rf"^(?P<rest>.+?){_SEP}(?P<lang>[a-z]{{3}}{_SEP}[A-Z][a-z]{{3}})$")
_ENDS_IN_CODE = re.compile(rf"(?:^|{_SEP})([a-z]{{2}})$")


def language_suffix(name: str) -> tuple[str, str] | None:
    """``(task, language)`` when ``name`` ends in a language code, else None.

    >>> language_suffix("scala_da")
    ('scala', 'da')
    >>> language_suffix("belebele_dan_Latn")
    ('belebele', 'dan_Latn')
    >>> language_suffix("wmt16_de_en") is None  # a translation direction
    True
    >>> language_suffix("arc_challenge") is None
    True
    """
    match = _WITH_SCRIPT.match(name)
    if match:
        return match.group("rest"), match.group("lang")
    match = _TWO_LETTER.match(name)
    if not match or match.group("lang")[:2] not in ISO_639_1:
        return None
    rest = match.group("rest")
    before = _ENDS_IN_CODE.search(rest)
    if before and before.group(1) in ISO_639_1:
        return None  # <src>_<tgt>: a language pair
    return rest, match.group("lang")


def read_task_language_file(path: str | Path) -> dict[str, str]:
    """Task → ``LANGUAGE`` or ``NAME:LANGUAGE`` entries from a mapping file.

    * ``.json``: one object, ``{"xnli_de": "de", "scala_da": "scala:da"}``;
    * ``.csv`` / ``.tsv``: a header with ``task`` and ``language`` and optionally
      ``name`` (the task name to store), one task per line.

    Errors name the file, the line and the field.
    """
    p = Path(path)
    if not p.is_file():
        raise InputError("file not found", path=str(p))
    try:
        text = p.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the file ({exc})", path=str(p)) from None
    if p.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON ({exc.msg})", path=str(p), line=exc.lineno) from None
        if not isinstance(data, dict):
            raise InputError(
                'expected a JSON object {"TASK": "LANGUAGE" or "NAME:LANGUAGE", ...}',
                path=str(p),
                line=1,
            )
        out: dict[str, str] = {}
        for key, value in data.items():
            if not isinstance(value, str) or not value.strip() or value.strip().endswith(":"):
                raise InputError(
                    f"expected a language (or NAME:LANGUAGE) for task {key!r}, got {value!r}",
                    path=str(p),
                    field=str(key),
                )
            out[str(key)] = value.strip()
        return out
    delimiter = "\t" if p.suffix.lower() == ".tsv" else ","
    lines = text.splitlines()
    if not lines:
        raise InputError("the file is empty", path=str(p))
    header = [h.strip().lower() for h in lines[0].split(delimiter)]
    for column in ("task", "language"):
        if column not in header:
            raise InputError(
                f"the header needs the columns task and language (and optionally name); "
                f"got {', '.join(header)}",
                path=str(p),
                line=1,
                field=column,
            )
    out = {}
    for lineno, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        cells = [c.strip() for c in line.split(delimiter)]
        if len(cells) != len(header):
            raise InputError(
                f"expected {len(header)} fields, got {len(cells)}", path=str(p), line=lineno
            )
        row = dict(zip(header, cells, strict=True))
        for column in ("task", "language"):
            if not row[column]:
                raise InputError(f"empty {column}", path=str(p), line=lineno, field=column)
        if row["task"] in out:
            raise InputError(
                f"task {row['task']!r} is mapped twice", path=str(p), line=lineno, field="task"
            )
        name = row.get("name") or ""
        out[row["task"]] = f"{name}:{row['language']}" if name else row["language"]
    return out


#: language used for a task that names none (BCP 47 "undetermined")
UNDETERMINED_LANGUAGE = "und"


#: lm-evaluation-harness task families whose task names end in a language:
#: ``<family>_<language>`` (``xnli_de``, ``belebele_dan_Latn``, ``xquad_es``...)
KNOWN_FAMILIES: tuple[str, ...] = (
    "xnli",
    "belebele",
    "xquad",
    "xcopa",
    "xstorycloze",
    "xwinograd",
    "paws",
    "pawsx",
    "mgsm_direct",
    "mgsm_native_cot",
    "mgsm_en_cot",
    "m_mmlu",
    "global_mmlu",
    "arc",
    "hellaswag",
    "lambada_openai_mt",
    "afrixnli",
    "afrimmlu",
    "kmmlu",
    "mlqa",
    "tydiqa",
    "wikiann",
    "flores",
)


_LANGUAGE_RE = re.compile(r"^[a-z]{2,3}(?:[_-][A-Z][a-z]{3})?(?:[_-](?:[A-Z]{2}|\d{3}))?$")


@dataclass(frozen=True)
class TaskLanguageMap:
    """How task names are split into (task, language).

    ``overrides`` map a full task name to ``(task, language)``; ``families``
    are prefixes whose tasks are named ``<family>_<language>`` (the language
    a BCP 47-like code: ``de``, ``dan_Latn``, ``zh-CN``); with ``auto_suffix``
    any other name ending in an ISO 639 code is split too (``scala_da`` →
    ``scala``, ``da``; see :func:`~glotbench.importers.task_languages.language_suffix`);
    any other task keeps its name and gets ``default_language``.
    """

    families: tuple[str, ...] = KNOWN_FAMILIES
    overrides: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    default_language: str = UNDETERMINED_LANGUAGE
    auto_suffix: bool = True

    @classmethod
    def build(
        cls,
        families: Iterable[str] | None = None,
        mapping: Mapping[str, str] | Iterable[str] | None = None,
        default_language: str | None = None,
        auto_suffix: bool = True,
    ) -> TaskLanguageMap:
        """From extra families and ``TASK=NAME:LANG`` (or ``TASK=LANG``) entries."""
        overrides: dict[str, tuple[str, str]] = {}
        items: list[tuple[str, str]] = []
        if isinstance(mapping, Mapping):
            items = [(str(k), str(v)) for k, v in mapping.items()]
        elif mapping is not None:
            for entry in mapping:
                key, sep, value = str(entry).partition("=")
                if not sep or not key.strip() or not value.strip():
                    raise InputError(
                        f"a task mapping must look like TASK=NAME:LANGUAGE or TASK=LANGUAGE, "
                        f"got {entry!r}",
                        field="map",
                    )
                items.append((key.strip(), value.strip()))
        for key, value in items:
            name, sep, lang = value.rpartition(":")
            overrides[key] = (name.strip() or key, lang.strip()) if sep else (key, value)
        fams = tuple(dict.fromkeys([*(families or ()), *KNOWN_FAMILIES]))
        return cls(
            families=tuple(sorted(fams, key=len, reverse=True)),
            overrides=overrides,
            default_language=default_language or UNDETERMINED_LANGUAGE,
            auto_suffix=auto_suffix,
        )

    def split(self, name: str) -> tuple[str, str]:
        if name in self.overrides:
            return self.overrides[name]
        for family in sorted(self.families, key=len, reverse=True):
            for sep in ("_", "-"):
                prefix = family + sep
                if name.startswith(prefix):
                    rest = name[len(prefix) :]
                    if _LANGUAGE_RE.match(rest):
                        return family, rest
        if self.auto_suffix:
            found = language_suffix(name)
            if found is not None:
                return found
        return name, self.default_language
