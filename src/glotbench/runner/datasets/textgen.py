"""Loaders for QA and translation files: SQuAD-layout JSON and parallel text.

``squad``: the official SQuAD JSON layout (Rajpurkar et al. 2016; also
XQuAD, MLQA, TyDi QA GoldP, GermanQuAD), ``{"data": [{"title": ...,
"paragraphs": [{"context": ..., "qas": [{"id", "question", "answers":
[{"text", "answer_start"}, ...]}]}]}]}``. One record per question: ``id``,
``question``, ``context``, ``answers`` (the answer texts, in file order,
duplicates kept as in the official evaluation) and ``title``. Questions
without an answer (SQuAD 2.0 ``is_impossible``) are skipped: SQuAD v1.1
F1/EM score answerable questions only.

``parallel``: translation pairs, either

* one ``.tsv`` file without a header: ``source<TAB>target[<TAB>target2 ...]``
  (further columns are further references), or
* two or more plain-text files with one sentence per line, line-aligned
  (the FLORES / WMT layout): the first file holds the sources, the others
  one reference each.

Record ids are ``<first file's stem>#<line number>``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from glotbench.ingest.limits import MAX_LINE_BYTES, bounded_lines
from glotbench.runner.datasets.base import Record
from glotbench.runner.datasets.conllu import expand_paths
from glotbench.runner.errors import DatasetError


def read_squad(path: Path) -> list[Record]:
    """Answerable questions of one SQuAD-layout JSON file."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DatasetError(f"not JSON: {exc.msg}", path=str(path), line=exc.lineno) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("data"), list):
        raise DatasetError(
            'not the SQuAD layout: expected {"data": [{"paragraphs": [...]}, ...]}',
            path=str(path),
        )
    records: list[Record] = []
    for a, article in enumerate(doc["data"]):
        title = str(article.get("title", ""))
        for p, paragraph in enumerate(article.get("paragraphs", [])):
            if "context" not in paragraph:
                raise DatasetError(
                    f"article {a}, paragraph {p} has no 'context' (SQuAD layout)", path=str(path)
                )
            for q, qa in enumerate(paragraph.get("qas", [])):
                answers = [str(ans["text"]) for ans in qa.get("answers", [])]
                if not answers:  # SQuAD 2.0 unanswerable
                    continue
                qid = qa.get("id")
                records.append(
                    {
                        "id": str(qid) if qid not in (None, "") else f"{path.stem}#{a}.{p}.{q}",
                        "question": str(qa["question"]),
                        "context": str(paragraph["context"]),
                        "answers": answers,
                        "title": title,
                    }
                )
    return records


def load_squad(
    paths: str | Path | Sequence[str | Path], *, base: Path | None = None
) -> list[Record]:
    """Records of SQuAD-layout JSON files (see the module docstring)."""
    out: list[Record] = []
    for path in expand_paths(paths, base):
        out.extend(read_squad(path))
    return out


def _lines(path: Path) -> list[str]:
    """The file's lines (without terminators); an over-long line is refused by line."""
    with path.open(encoding="utf-8", newline="") as handle:
        lines = "".join(
            line for _, line in bounded_lines(handle, str(path), limit=MAX_LINE_BYTES)
        ).splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def load_parallel(
    paths: str | Path | Sequence[str | Path], *, base: Path | None = None
) -> list[Record]:
    """Translation records (``source``, ``target`` list) of a TSV or line-aligned text files."""
    files = expand_paths(paths, base)
    if not files:
        raise DatasetError("loader parallel: no file matches 'paths'")
    stem = files[0].stem
    if len(files) == 1:
        if files[0].suffix.lower() not in (".tsv", ".tab"):
            raise DatasetError(
                "loader parallel: one file must be a .tsv (source<TAB>target); or give the "
                "source file and the reference file(s), one sentence per line",
                path=str(files[0]),
            )
        records = []
        for i, line in enumerate(_lines(files[0]), start=1):
            cells = line.split("\t")
            if len(cells) < 2 or not all(c.strip() for c in cells[:2]):
                raise DatasetError(
                    "expected source<TAB>target[<TAB>target2 ...]", path=str(files[0]), line=i
                )
            records.append({"id": f"{stem}#{i}", "source": cells[0], "target": cells[1:]})
        return records
    columns = [_lines(f) for f in files]
    if len({len(c) for c in columns}) != 1:
        sizes = ", ".join(f"{f.name}: {len(c)}" for f, c in zip(files, columns, strict=True))
        raise DatasetError(
            f"loader parallel: the files must have the same number of lines ({sizes})"
        )
    return [
        {"id": f"{stem}#{i + 1}", "source": src, "target": [c[i] for c in columns[1:]]}
        for i, src in enumerate(columns[0])
    ]
