"""Datasets as the runner sees them, ScandEval-style uniform splits, content hashes.

A dataset is three lists of *records* (plain dicts, JSON-serialisable) with a
stable ``id`` each; the fields depend on the task (see ``docs/runner.md``):

* sequence classification / language id: ``text`` (and optionally ``text_pair``), ``label``;
* token classification (NER, POS): ``tokens``, ``tags``;
* extractive QA: ``context``, ``question``, ``answers`` (list of strings);
* retrieval: ``query``, ``targets`` (ids into :attr:`Dataset.pool`);
* parsing: ``tokens``, ``heads``, ``deprels``.

:func:`uniform_splits` pools the records and draws fixed-size train /
validation / test splits (ScandEval: 1,024 / 256 / 2,048), label-stratified,
from a fixed seed; :func:`content_hash` names exactly what a run saw.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from glotbench.runner.errors import DatasetError

Record = dict[str, Any]

#: ScandEval's split sizes: train, validation, test.
DEFAULT_SPLIT_SIZES: dict[str, int] = {"train": 1024, "validation": 256, "test": 2048}
#: Seed of the uniform splits (fixed, so every run of a suite sees the same splits).
DEFAULT_SPLIT_SEED = 4242
SPLITS = ("train", "validation", "test")


def content_hash(obj: Any) -> str:
    """SHA-256 of the canonical JSON form of ``obj`` (sorted keys, no spaces, UTF-8)."""
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class Dataset:
    """A loaded, split dataset.

    ``labels`` is the label (or tag) inventory, sorted; ``pool`` holds the
    candidate items of a retrieval dataset; ``notes`` records anything a user
    should see about how the splits were made (e.g. shrunken sizes).
    ``source_positions`` maps a record id to the record's 0-based index in the
    source data as the loader read it (files in order; for CoNLL-U the
    sentence order of the file), before the splits shuffle it; None when the
    loader generates the records (ScaLA, CLDR). It is provenance, not content:
    it is not part of :attr:`content_hash`.
    """

    name: str
    task: str
    language: str
    train: list[Record]
    validation: list[Record]
    test: list[Record]
    labels: tuple[Any, ...] = ()
    pool: list[Record] | None = None
    source: str = ""
    notes: list[str] = field(default_factory=list)
    source_positions: dict[str, int] | None = field(default=None, repr=False)
    _hash: str | None = field(default=None, repr=False)

    def split(self, name: str) -> list[Record]:
        if name not in SPLITS:
            raise DatasetError(f"unknown split {name!r}; use one of {', '.join(SPLITS)}")
        return getattr(self, name)

    @property
    def content_hash(self) -> str:
        """SHA-256 of the three splits, the label inventory and the pool."""
        if self._hash is None:
            self._hash = content_hash(
                {
                    "train": self.train,
                    "validation": self.validation,
                    "test": self.test,
                    "labels": list(self.labels),
                    "pool": self.pool,
                }
            )
        return self._hash

    def sizes(self) -> dict[str, int]:
        return {s: len(self.split(s)) for s in SPLITS}

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "task": self.task,
            "language": self.language,
            "sizes": self.sizes(),
            "labels": list(self.labels),
            "content_sha256": self.content_hash,
            "source": self.source,
            "notes": list(self.notes),
        }


def _stratified_order(labels: Sequence[Any] | None, n: int, rng: np.random.Generator) -> np.ndarray:
    """A permutation of ``range(n)`` whose every prefix is (nearly) label-stratified.

    Within each label the items are shuffled; item ``r`` of a group of size
    ``m`` gets the key ``(r + u) / m`` with ``u`` uniform in [0, 1), and the
    items are sorted by key. Any prefix then holds each label in proportion
    to its frequency (up to one item per label). Without labels: a shuffle.
    """
    perm = rng.permutation(n)
    if labels is None:
        return perm
    keys = np.empty(n, dtype=np.float64)
    groups: dict[str, list[int]] = {}
    for i in perm:
        groups.setdefault(json.dumps(labels[i], sort_keys=True, default=str), []).append(int(i))
    jitter = rng.random(n)
    for members in groups.values():
        m = len(members)
        for rank, i in enumerate(members):
            keys[i] = (rank + jitter[i]) / m
    return perm[np.argsort(keys[perm], kind="stable")]


def uniform_splits(
    records: Sequence[Record],
    *,
    sizes: dict[str, int] | None = None,
    seed: int = DEFAULT_SPLIT_SEED,
    stratify: str | None = None,
) -> tuple[dict[str, list[Record]], list[str]]:
    """Draw train / validation / test splits of fixed sizes from pooled records.

    The test split is taken first, then train, then validation, from one
    label-stratified order (:func:`_stratified_order`). When the pool is
    smaller than the requested total, every size is scaled down by the same
    factor (floor) and a note says so. Returns the splits and the notes.
    """
    wanted = {**DEFAULT_SPLIT_SIZES, **(sizes or {})}
    for name, size in wanted.items():
        if name not in SPLITS:
            raise DatasetError(f"unknown split {name!r} in split sizes; use {', '.join(SPLITS)}")
        if not isinstance(size, int) or size < 0:
            raise DatasetError(f"split size of {name} must be a non-negative integer, got {size!r}")
    n = len(records)
    total = sum(wanted.values())
    notes: list[str] = []
    if n < total:
        factor = n / total
        scaled = {k: int(v * factor) for k, v in wanted.items()}
        notes.append(
            f"only {n} records for {total} requested; split sizes scaled by {factor:.3f} to "
            + ", ".join(f"{k}={v}" for k, v in scaled.items())
        )
        wanted = scaled
    labels = [r.get(stratify) for r in records] if stratify else None
    order = _stratified_order(labels, n, np.random.default_rng(seed))
    out: dict[str, list[Record]] = {}
    start = 0
    for name in ("test", "train", "validation"):
        take = wanted[name]
        out[name] = [records[int(i)] for i in order[start : start + take]]
        start += take
    return {s: out[s] for s in SPLITS}, notes


def check_unique_ids(records: Sequence[Record], where: str) -> None:
    seen: set[str] = set()
    for r in records:
        rid = r.get("id")
        if rid is None or str(rid).strip() == "":
            raise DatasetError(f"{where}: every record needs a non-empty 'id'")
        if str(rid) in seen:
            raise DatasetError(f"{where}: record id {rid!r} occurs more than once")
        seen.add(str(rid))
