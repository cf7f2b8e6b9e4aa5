"""Splits from the data's own order: file names and position ranges.

van der Goot et al. train on the head of a treebank and evaluate on its
contiguous tail; UD ships ``*-train``/``*-dev``/``*-test`` files. A dataset's
``splits`` may therefore be

``files``
    each file's split from its name: a stem ending in ``-train``/``_train``
    (train), ``-dev``/``-validation``/``-valid`` (validation) or ``-test``
    (test), e.g. ``en_ewt-ud-train.conllu``;
a mapping of ranges
    ``{train: {file: "*-dev.conllu", first: 0.8}, test: {last: 0.2}}``: each
    split is a range of the records of its files (``file``: a glob matched
    against the dataset's file names, default all of them) in document order,
    ``first`` / ``last`` a count (integer) or a share (a number in (0, 1)) of
    them, neither = all; ``size`` keeps the first ``size`` records of the range
    (a contiguous stretch; ``glotbench run --splits`` sets it).

Records keep the source's order inside each split, so the test split is a
contiguous stretch of the source and SEQ subsets of ``glotbench analyze
datasize`` are contiguous in the treebank.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from glotbench.runner.datasets.base import SPLITS, Record
from glotbench.runner.errors import DatasetError

#: the keys of one positional split
RANGE_KEYS = ("file", "first", "last", "size")
_NAME = re.compile(r"(?:^|[-_.])(train|dev|validation|valid|test)$", re.IGNORECASE)
_SPLIT_OF = {
    "train": "train",
    "dev": "validation",
    "validation": "validation",
    "valid": "validation",
}


def is_positional(splits: Any) -> bool:
    """Whether ``splits`` is a mapping of position ranges (not of uniform sizes)."""
    return isinstance(splits, Mapping) and any(isinstance(v, Mapping) for v in splits.values())


def check_ranges(splits: Mapping[str, Any]) -> str | None:
    """The first problem of a mapping of position ranges, or None."""
    for name, value in splits.items():
        if name not in SPLITS:
            return f"unknown split {name!r}; use {', '.join(SPLITS)}"
        if not isinstance(value, Mapping):
            return (
                f"split {name}: give every split as a range ({{first: ...}}, {{last: ...}}, "
                f"{{file: ...}}) when one is, got {value!r}"
            )
        unknown = sorted(set(value) - set(RANGE_KEYS))
        if unknown:
            return f"split {name}: unknown key(s) {', '.join(unknown)}; use {', '.join(RANGE_KEYS)}"
        if "first" in value and "last" in value:
            return f"split {name}: give 'first' or 'last', not both"
        for key in ("first", "last"):
            if key in value and _amount_problem(value[key]):
                return f"split {name}: {key} {_amount_problem(value[key])}"
        size = value.get("size")
        if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 0):
            return f"split {name}: size must be a non-negative integer, got {size!r}"
        if "file" in value and not isinstance(value["file"], str):
            return f"split {name}: file must be a file-name pattern, got {value['file']!r}"
    if "test" not in splits:
        return "position ranges need a test split"
    return None


def _amount_problem(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"must be a count or a share in (0, 1), got {value!r}"
    if isinstance(value, float) and not 0 < value < 1 and value != 1.0:
        return f"as a share must lie in (0, 1], got {value!r}"
    if isinstance(value, int) and value < 1:
        return f"as a count must be positive, got {value!r}"
    return None


def split_of_file(path: Path) -> str:
    """The split a file's name gives (``*-train``, ``*-dev``, ``*-test``)."""
    match = _NAME.search(path.stem)
    if match is None:
        raise DatasetError(
            "with 'splits: files' every file name must end in -train, -dev or -test "
            "(e.g. en_ewt-ud-test.conllu)",
            path=str(path),
        )
    word = match.group(1).lower()
    return _SPLIT_OF.get(word, word)


def file_splits(groups: Sequence[tuple[Path, list[Record]]]) -> dict[str, list[Record]]:
    """The splits of ``splits: files``: each file's records go to its name's split."""
    parts: dict[str, list[Record]] = {s: [] for s in SPLITS}
    for path, records in groups:
        parts[split_of_file(path)].extend(records)
    return parts


def _count(amount: int | float, n: int) -> int:
    """Records in ``first``/``last``: an int as given, a share rounded down (at least 1)."""
    if isinstance(amount, float):
        return max(1, int(amount * n)) if n else 0
    return min(int(amount), n)


def range_splits(
    ranges: Mapping[str, Mapping[str, Any]],
    groups: Sequence[tuple[Path, list[Record]]],
    where: str,
) -> dict[str, list[Record]]:
    """The splits of a mapping of position ranges, each in document order.

    Splits taken from the same files must not overlap (train on the head,
    test on the tail); an overlap raises :class:`DatasetError`.
    """
    problem = check_ranges(ranges)
    if problem:
        raise DatasetError(f"{where}: {problem}")
    parts: dict[str, list[Record]] = {s: [] for s in SPLITS}
    taken: dict[int, str] = {}
    flat = [r for _, records in groups for r in records]
    offsets, start = [], 0
    for _, records in groups:
        offsets.append(start)
        start += len(records)
    for name, spec in ranges.items():
        pattern = spec.get("file")
        chosen = [
            (offset, records)
            for (path, records), offset in zip(groups, offsets, strict=True)
            if pattern is None or fnmatch.fnmatch(path.name, str(pattern))
        ]
        if not chosen:
            names = ", ".join(p.name for p, _ in groups)
            raise DatasetError(
                f"{where}: split {name}: no file matches {pattern!r} (files: {names})"
            )
        positions = [offset + i for offset, records in chosen for i in range(len(records))]
        n = len(positions)
        if "first" in spec:
            positions = positions[: _count(spec["first"], n)]
        elif "last" in spec:
            positions = positions[n - _count(spec["last"], n) :]
        if spec.get("size") is not None:
            positions = positions[: int(spec["size"])]
        for p in positions:
            if p in taken:
                raise DatasetError(
                    f"{where}: the ranges of {taken[p]} and {name} overlap (record {p} of the "
                    "source is in both); use first/last shares that add up to at most 1"
                )
            taken[p] = name
        parts[name] = [flat[p] for p in positions]
    return parts
