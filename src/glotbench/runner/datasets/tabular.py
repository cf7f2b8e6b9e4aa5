"""JSONL and CSV loaders: one record per line / row, with field renaming.

Lines are read with the limits of :mod:`glotbench.ingest.limits`: a line
longer than :data:`~glotbench.ingest.limits.MAX_LINE_BYTES` characters, or a
CSV field longer than :data:`~glotbench.ingest.limits.MAX_FIELD_CHARS`, is
refused naming the file and line, after reading at most one limit's worth of
it (never the whole line).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path

from glotbench.ingest.limits import MAX_FIELD_CHARS, MAX_LINE_BYTES, bounded_lines
from glotbench.runner.datasets.base import Record
from glotbench.runner.datasets.conllu import expand_paths
from glotbench.runner.errors import DatasetError

# the csv module's own limit (128 KiB by default) raised a raw _csv.Error: fields are checked
# against MAX_FIELD_CHARS by name and line, the module's limit only bounds memory (as in
# glotbench.ingest.readers)
if csv.field_size_limit() < MAX_LINE_BYTES:
    csv.field_size_limit(MAX_LINE_BYTES)


def _finish(records: list[Record], fields: dict[str, str] | None, path: Path) -> list[Record]:
    rename = {src: dst for dst, src in (fields or {}).items()}
    out = []
    for i, r in enumerate(records):
        rec = {rename.get(k, k): v for k, v in r.items()}
        if "id" not in rec or rec["id"] in (None, ""):
            rec["id"] = f"{path.stem}#{i + 1}"
        rec["id"] = str(rec["id"])
        out.append(rec)
    return out


def read_jsonl(path: Path, fields: dict[str, str] | None = None) -> list[Record]:
    records: list[Record] = []
    with path.open(encoding="utf-8") as handle:
        for line_no, line in bounded_lines(handle, str(path), limit=MAX_LINE_BYTES):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"not JSON: {exc.msg}", path=str(path), line=line_no) from None
            if not isinstance(obj, dict):
                raise DatasetError("each line must be a JSON object", path=str(path), line=line_no)
            records.append(obj)
    return _finish(records, fields, path)


def read_csv(path: Path, fields: dict[str, str] | None = None) -> list[Record]:
    with path.open(encoding="utf-8", newline="") as handle:
        sample = handle.read(4096)
        handle.seek(0)
        delimiter = "\t" if path.suffix.lower() in (".tsv", ".tab") or "\t" in sample else ","
        # the csv module's own field limit bounds a quoted field spanning lines
        lines = (line for _, line in bounded_lines(handle, str(path), limit=MAX_LINE_BYTES))
        reader = csv.DictReader(lines, delimiter=delimiter)
        records = []
        while True:
            try:
                row = next(reader, None)
            except csv.Error as exc:
                raise DatasetError(
                    f"malformed CSV: {exc} (fields may have at most {MAX_FIELD_CHARS:,} "
                    "characters)",
                    path=str(path),
                    line=reader.line_num,
                ) from None
            if row is None:
                break
            long = [k for k, v in row.items() if isinstance(v, str) and len(v) > MAX_FIELD_CHARS]
            if long:
                raise DatasetError(
                    f"the field has more than {MAX_FIELD_CHARS:,} characters (the limit of "
                    "one field; see docs/formats.md, 'Limits')",
                    path=str(path),
                    line=reader.line_num,
                    field=str(long[0]),
                )
            records.append(dict(row))
    return _finish(records, fields, path)


def load_table(
    paths: str | Path | Sequence[str | Path],
    *,
    base: Path | None = None,
    fields: dict[str, str] | None = None,
) -> list[Record]:
    """Records of JSONL (``.jsonl``/``.json``) or CSV/TSV files.

    ``fields`` maps the runner's field names to the file's column names, e.g.
    ``{"text": "sentence", "label": "sentiment"}``. Rows without an ``id`` get
    ``<file stem>#<row number>``.
    """
    out: list[Record] = []
    for path in expand_paths(paths, base):
        suffix = path.suffix.lower()
        if suffix in (".jsonl", ".json", ".ndjson"):
            out.extend(read_jsonl(path, fields))
        elif suffix in (".csv", ".tsv", ".tab"):
            out.extend(read_csv(path, fields))
        else:
            raise DatasetError(
                "unknown file type; use .jsonl, .csv or .tsv (or loader: conllu / hf)",
                path=str(path),
            )
    return out
