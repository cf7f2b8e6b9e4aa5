"""JSON and JSON Lines input of the harness importers, checked line by line.

Objects that repeat a key, over-long lines and files too large are errors
naming the file and line; also the SHA-256 of an import's files and the
finite-number test of JSON values.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from glotbench.ingest.limits import MAX_LINE_BYTES, check_file_size, line_too_long
from glotbench.ingest.readers import DuplicateKeyError, file_sha256, unique_keys

try:  # a C JSON parser, about 3x the standard library's with a duplicate-key hook
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is a dependency; the stdlib path is exact too
    _orjson = None  # type: ignore[assignment]
from glotbench.errors import InputError


def json_loads(text: str | bytes) -> Any:
    """Parse JSON, rejecting objects that repeat a key (:class:`DuplicateKeyError`).

    The standard library parser is used (not orjson) because only it can see
    repeated keys, through ``object_pairs_hook``; others keep the last silently.
    """
    return json.loads(text, object_pairs_hook=unique_keys)


_JSON_ERRORS: tuple[type[Exception], ...] = (json.JSONDecodeError, ValueError)


def read_json_file(path: Path) -> Any:
    """A whole JSON file; errors name the file and the line of the problem."""
    try:
        check_file_size(path.stat().st_size, str(path))
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise InputError(f"cannot read the file: {exc}", path=str(path)) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason})", path=str(path)) from None
    try:
        return json.loads(text, object_pairs_hook=unique_keys)
    except DuplicateKeyError as exc:
        raise InputError(
            f"the key {exc.key!r} appears twice in one JSON object; keep one (JSON readers "
            "silently keep the last)",
            path=str(path),
            line=_second_key_line(text, exc.key),
            field=exc.key,
        ) from None
    except json.JSONDecodeError as exc:
        truncated = exc.pos >= len(text.rstrip())
        reason = (
            f"truncated JSON: the file ends inside a value ({exc.msg}); was it completely written?"
            if truncated
            else f"invalid JSON ({exc.msg}, column {exc.colno})"
        )
        raise InputError(reason, path=str(path), line=exc.lineno) from None


def _second_key_line(text: str, key: str) -> int | None:
    """Line of the second ``"key":`` in ``text`` when the key occurs exactly twice, else None."""
    pattern = re.compile(re.escape(json.dumps(key)) + r"\s*:")
    hits = [m.start() for m in pattern.finditer(text)]
    if len(hits) != 2:  # with more, which pair shares an object is unknown
        return None
    return text.count("\n", 0, hits[1]) + 1


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-empty line; clear errors for bad lines."""
    for block in iter_jsonl_blocks(path):
        yield from block


def _parse_jsonl_line(raw: bytes, lineno: int, path: Path) -> dict[str, Any] | None:
    """One JSONL line, strictly (repeated keys are an error); None for a blank line."""
    text = raw.strip()
    if not text:
        return None
    try:
        value = json_loads(text)
    except DuplicateKeyError as exc:
        raise InputError(
            f"the key {exc.key!r} appears twice in one JSON object; keep one (JSON "
            "readers silently keep the last)",
            path=str(path),
            line=lineno,
            field=exc.key,
        ) from None
    except _JSON_ERRORS as exc:
        if not raw.endswith(b"\n"):
            reason = (
                "truncated JSON record: the file ends inside it; was the file completely written?"
            )
        else:
            reason = f"invalid JSON ({exc}); each line must be one JSON object"
        raise InputError(reason, path=str(path), line=lineno) from None
    if not isinstance(value, dict):
        raise InputError(
            f"expected a JSON object ({{...}}) per line, got {type(value).__name__}",
            path=str(path),
            line=lineno,
        )
    return value


#: a key's closing quote separated from its colon by whitespace, or a quote or a colon
#: written as an escape (re-serialising writes ``\":`` for the string text ``\"\u003a`` and so
#: adds a ``":`` the raw text lacks, which would hide one repeated key): the fast
#: duplicate-key check cannot count such blocks, the exact parser does
_UNCOUNTABLE_KEYS = re.compile(rb'"[ \t\r]+:|\\u0022|\\u003[aA]')


def _fast_block(lines: list[bytes]) -> list[Any] | None:
    """Parse a block of lines with orjson, or None when the strict parser must decide.

    orjson keeps the last of repeated keys silently, so the block is accepted
    only when it provably has none: every ``":`` in valid JSON ends a key or
    sits inside a string as ``\\":``; re-serialising the parsed objects
    (orjson writes ``"`` in strings as ``\\"``, and no whitespace) keeps the
    in-string ones and drops one key per repetition. Equal counts, with no key
    the count cannot see (:data:`_UNCOUNTABLE_KEYS`), mean no key was repeated.
    """
    if _orjson is None:
        return None
    blob = b"\n".join(lines)
    if _UNCOUNTABLE_KEYS.search(blob):
        return None
    try:
        values = [_orjson.loads(line) for line in lines]
    except _orjson.JSONDecodeError:
        return None
    if any(type(v) is not dict for v in values):
        return None
    try:
        dumped = _orjson.dumps(values)
    except TypeError:  # e.g. integers beyond 64 bits: the stdlib parser decides
        return None
    if blob.count(b'":') != dumped.count(b'":'):
        return None
    return values


def iter_jsonl_blocks(
    path: Path, *, block_lines: int = 65536
) -> Iterator[list[tuple[int, dict[str, Any]]]]:
    """Blocks of (line number, object) of a JSONL file, read ``block_lines`` lines at a time.

    A block is parsed with orjson when it is installed and the block provably
    has no repeated key (:func:`_fast_block`); otherwise, and for every error
    message, line by line with the strict standard-library parser, so the
    result and the errors are the same either way. Memory is bounded by the
    block, not the file.
    """
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise InputError(f"cannot read the file: {exc}", path=str(path)) from None
    with fh:
        first = 1
        while True:
            raw_lines = _read_block(fh, path, first, block_lines)
            if not raw_lines:
                return
            numbered = [(first + i, raw) for i, raw in enumerate(raw_lines) if raw.strip()]
            first += len(raw_lines)
            complete = raw_lines[-1].endswith(b"\n")
            fast = _fast_block([raw for _, raw in numbered]) if complete else None
            if fast is not None:
                yield [(lineno, value) for (lineno, _), value in zip(numbered, fast, strict=True)]
                continue
            block = []
            for lineno, raw in numbered:
                value = _parse_jsonl_line(raw, lineno, path)
                if value is not None:
                    block.append((lineno, value))
            yield block


#: bytes of lines read per block (besides ``block_lines``): memory stays bounded with long lines
BLOCK_BYTES = 1 << 26


def _read_block(fh: Any, path: Path, first: int, block_lines: int) -> list[bytes]:
    """Up to ``block_lines`` lines (and about :data:`BLOCK_BYTES`); an over-long line is refused.

    Each line is read with ``readline(MAX_LINE_BYTES + 1)``, so a line longer
    than the limit is refused after one limit's worth of it was read.
    """
    lines: list[bytes] = []
    size = 0
    while len(lines) < block_lines and size < BLOCK_BYTES:
        raw = fh.readline(MAX_LINE_BYTES + 1)
        if not raw:
            break
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            raise line_too_long(str(path), first + len(lines), MAX_LINE_BYTES)
        lines.append(raw)
        size += len(raw)
    return lines


def files_sha256(files: Sequence[Path], root: Path, extra: str = "") -> str:
    """SHA-256 over (relative name, content hash) of ``files`` and the import options."""
    h = hashlib.sha256()
    for p in sorted(files, key=lambda f: str(f.relative_to(root)) if root in f.parents else str(f)):
        rel = str(p.relative_to(root)) if root in p.parents else p.name
        h.update(rel.encode("utf-8") + b"\0" + file_sha256(p).encode("ascii") + b"\n")
    h.update(extra.encode("utf-8"))
    return h.hexdigest()


def finite_number(value: Any) -> float | None:
    """``value`` as a finite float, or None (booleans count as 0/1)."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and math.isfinite(float(value)):
        return float(value)
    return None
