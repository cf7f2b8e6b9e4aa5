"""The one check of a name (model, task, language, dataset, metric) before it is stored.

Every importer, the tidy readers, the runner and the run key (``RunKey``) use
:func:`check_name` / :func:`name_problem`, so a name means the same thing
whichever way it came in:

* it is **NFC-normalised** (Unicode Standard Annex #15): ``"e\\u0301"`` (e +
  combining acute) and ``"é"`` are one name, not two that look the same;
* it is **refused** when it holds a control character (C0, DEL, C1: tab,
  newline, NUL, ESC…), a bidirectional override or isolate (U+202A–U+202E,
  U+2066–U+2069; Unicode Technical Report #36 §2.1 and the "Trojan Source"
  attacks, CVE-2021-42574), a bidi mark (U+200E, U+200F, U+061C) or an
  invisible zero-width character (U+200B–U+200D, U+2060–U+2064, U+FEFF,
  U+180E): ``mBERT`` and ``mBERT\\u200b`` would be two models that print alike;
* it is at most :data:`MAX_NAME_CHARS` characters long (after stripping).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from glotbench.errors import InputError

#: Longest name accepted (characters, after NFC and stripping). Hugging Face
#: model ids are at most 96 characters; 256 leaves room for paths and suffixes.
MAX_NAME_CHARS = 256

#: C0 and C1 control characters and DEL (tabs and newlines included)
CONTROL_CHARS = r"[\x00-\x1f\x7f-\x9f]"
#: bidi embeddings, overrides, isolates and marks; zero-width and other invisible characters
INVISIBLE_CHARS = "[\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
_CONTROL_RE = re.compile(CONTROL_CHARS)
_INVISIBLE_RE = re.compile(INVISIBLE_CHARS)


#: a language code read from a file name: BCP 47's shape (RFC 5646 §2.1) — a 2–8
#: letter primary subtag, then subtags of 1–8 letters or digits joined by ``-``
#: (``_`` accepted too, as in ``zh_Hans``)
LANGUAGE_CODE_RE = re.compile(r"[A-Za-z]{2,8}(?:[-_][A-Za-z0-9]{1,8})*")


def check_language_code(
    code: str, *, path: str | None = None, line: int | None = None, field: str | None = None
) -> str:
    """``code`` when it has the shape of a language code (``en``, ``zh-Hans``, ``pt_BR``)."""
    if not LANGUAGE_CODE_RE.fullmatch(code):
        raise InputError(
            f"{code!r} is not a language code (2–8 letters, then optional '-' subtags such as "
            "'en', 'zh-Hans', 'pt-BR')",
            path=path,
            line=line,
            field=field,
        )
    return code


def normalise_name(text: str) -> str:
    """``text`` stripped and in Unicode normal form C."""
    text = text.strip()
    return text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)


def name_problem(text: str, what: str = "name") -> str | None:
    """Why ``text`` (already normalised) cannot be a ``what``, or None when it can."""
    if not text:
        return f"the {what} is empty; every result needs a {what}"
    if len(text) > MAX_NAME_CHARS:
        return (
            f"the {what} {text[:40]!r}… has {len(text):,} characters; names may have at most "
            f"{MAX_NAME_CHARS}"
        )
    if _CONTROL_RE.search(text):
        return (
            f"the {what} {text!r} contains a control character (NUL, tab, newline...); names "
            "must be printable text"
        )
    found = _INVISIBLE_RE.search(text)
    if found:
        char = found.group()
        return (
            f"the {what} {text!r} contains the invisible character U+{ord(char):04X} "
            f"({unicodedata.name(char, 'format character')}); names that print alike must be "
            "equal, so remove it"
        )
    return None


def check_name(
    value: Any,
    what: str,
    *,
    path: str | None = None,
    line: int | None = None,
    field: str | None = None,
) -> str:
    """``value`` as a stored name (NFC, stripped); :class:`InputError` naming the place if not.

    A value that is not a string (a number, a JSON object…) is refused, never
    converted with ``str()``.
    """
    if value is None:
        value = ""  # reported as an empty name
    if not isinstance(value, str):
        raise InputError(
            f"the {what} must be text, got {type(value).__name__} {_short(value)}",
            path=path,
            line=line,
            field=field,
        )
    text = normalise_name(value)
    problem = name_problem(text, what)
    if problem is not None:
        raise InputError(problem, path=path, line=line, field=field)
    return text


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
