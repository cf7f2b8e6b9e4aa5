"""JSONL and CSV loaders: one record per line / row, with field renaming."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path

from glotbench.runner.datasets.base import Record
from glotbench.runner.datasets.conllu import expand_paths
from glotbench.runner.errors import DatasetError


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
        for line_no, line in enumerate(handle, start=1):
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
        records = [dict(r) for r in csv.DictReader(handle, delimiter=delimiter)]
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
