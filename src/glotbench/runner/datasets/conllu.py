"""CoNLL-U loader: UD treebanks (POS, heads, relations) and NorNE-style NER.

Each sentence becomes one record with its *syntactic words* (multi-word token
ranges and empty nodes are skipped, as in CoNLL-U evaluation):

``id``           ``<file stem>#<sent_id>`` (or the 1-based sentence number), stable
``tokens``       word forms
``upos``         universal POS tags
``lemmas``       lemmas (``_`` where the treebank has none)
``heads``        head indices (0 = root) as ints
``deprels``      dependency relations
``space_after``  booleans from ``SpaceAfter=No`` in MISC
``text``         the ``# text`` comment, else the words joined with their spacing
``has_multiword`` whether the sentence contains a multi-word token range
``ner``          (with ``ner=True``) IOB2 tags from ``name=B-PER`` in MISC (NorNE)

Lines longer than :data:`glotbench.ingest.limits.MAX_LINE_BYTES` characters are
refused by file and line after reading one limit's worth of them.
"""

from __future__ import annotations

import glob
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from glotbench.ingest.limits import MAX_LINE_BYTES, bounded_lines
from glotbench.runner.datasets.base import Record
from glotbench.runner.errors import DatasetError


def expand_paths(paths: str | Path | Sequence[str | Path], base: Path | None = None) -> list[Path]:
    """Glob patterns (relative to ``base``) to a sorted list of existing files."""
    items = [paths] if isinstance(paths, str | Path) else list(paths)
    out: list[Path] = []
    for item in items:
        pattern = Path(item)
        if base is not None and not pattern.is_absolute():
            pattern = base / pattern
        matches = sorted(Path(p) for p in glob.glob(str(pattern)))
        if not matches:
            raise DatasetError(
                f"no file matches {pattern}; check the path (and data_dir=DIR)", path=str(pattern)
            )
        out.extend(matches)
    return out


def join_words(words: Sequence[str], space_after: Sequence[bool]) -> str:
    """Detokenise words using their ``SpaceAfter`` flags."""
    parts: list[str] = []
    for i, (w, sp) in enumerate(zip(words, space_after, strict=True)):
        parts.append(w)
        if sp and i < len(words) - 1:
            parts.append(" ")
    return "".join(parts)


def _ner_tag(misc: dict[str, Any] | None, path: Path, line: int) -> str:
    if not misc or "name" not in misc:
        raise DatasetError(
            "NER from MISC needs 'name=...' on every word (NorNE style, e.g. name=B-PER)",
            path=str(path),
            line=line,
            field="MISC",
        )
    tag = str(misc["name"])
    if tag != "O" and not (tag[:2] in ("B-", "I-") and len(tag) > 2):
        raise DatasetError(
            f"NER tag {tag!r} is not IOB2 (O, B-TYPE, I-TYPE)", path=str(path), line=line
        )
    return tag


class _BoundedText:
    """A text file for ``conllu.parse_incr``: its lines, each at most ``limit`` characters.

    ``parse_incr`` iterates over its input's lines (and asks for a ``read``
    method); an over-long line is refused by file and line after reading one
    limit's worth of it (:func:`glotbench.ingest.limits.bounded_lines`).
    """

    def __init__(self, handle: Any, path: str, limit: int | None = None) -> None:
        self._lines = bounded_lines(handle, path, limit=MAX_LINE_BYTES if limit is None else limit)

    def read(self, *_: Any) -> str:  # pragma: no cover - parse_incr only checks it exists
        raise NotImplementedError("read line by line")

    def __iter__(self) -> Iterator[str]:
        return (line for _, line in self._lines)


def read_conllu(path: str | Path, *, ner: bool = False) -> Iterator[Record]:
    """Sentences of one CoNLL-U file as records (see the module docstring)."""
    import conllu

    p = Path(path)
    try:
        handle = p.open(encoding="utf-8")
    except OSError as exc:
        raise DatasetError(f"cannot read the file: {exc}", path=str(p)) from None
    with handle:
        try:
            lines = _BoundedText(handle, str(p))
            # a TextIO for parse_incr: it iterates over lines and asks for read()
            for index, sentence in enumerate(conllu.parse_incr(lines), start=1):  # type: ignore[arg-type]
                words = [t for t in sentence if isinstance(t["id"], int)]
                if not words:
                    continue
                sent_id = sentence.metadata.get("sent_id", str(index)).strip() or str(index)
                space_after = [
                    not (t["misc"] is not None and t["misc"].get("SpaceAfter") == "No")
                    for t in words
                ]
                forms = [str(t["form"]) for t in words]
                record: Record = {
                    "id": f"{p.stem}#{sent_id}",
                    "tokens": forms,
                    "upos": [str(t["upos"]) for t in words],
                    "lemmas": [str(t["lemma"]) if t["lemma"] is not None else "_" for t in words],
                    "heads": [int(t["head"]) if t["head"] is not None else 0 for t in words],
                    "deprels": [str(t["deprel"]) for t in words],
                    "space_after": space_after,
                    "text": sentence.metadata.get("text") or join_words(forms, space_after),
                    "has_multiword": any(not isinstance(t["id"], int) for t in sentence),
                }
                if ner:
                    record["ner"] = [_ner_tag(t["misc"], p, index) for t in words]
                yield record
        except conllu.exceptions.ParseException as exc:
            raise DatasetError(f"not valid CoNLL-U: {exc}", path=str(p)) from None


def load_conllu(
    paths: str | Path | Sequence[str | Path], *, base: Path | None = None, ner: bool = False
) -> list[Record]:
    """All sentences of the matching files, in file order; ids are unique."""
    records: list[Record] = []
    seen: set[str] = set()
    for path in expand_paths(paths, base):
        for record in read_conllu(path, ner=ner):
            if record["id"] in seen:
                record["id"] = f"{record['id']}~{len(records)}"
            seen.add(record["id"])
            records.append(record)
    return records
