"""Test-case files: one JSON line per text of a case (``glotbench checklist expand``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from glotbench.checklist.spec import (
    TEST_TYPES,
    Case,
)
from glotbench.errors import InputError
from glotbench.store.atomic_files import atomic_path


def write_cases(cases: Sequence[Case], out: str | Path) -> Path:
    """Write cases as JSONL, one row per text (see :meth:`Case.rows`)."""
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp, tmp.open("w", encoding="utf-8") as handle:
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
