"""Build datasets from raw corpora (``glotbench build``): ScaLA from UD treebanks."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from glotbench.store.atomic_files import atomic_path


@dataclass(frozen=True)
class ScalaBuild:
    """Result of ``glotbench build scala``."""

    out: str
    sizes: dict[str, int]
    labels: dict[str, int]
    content_sha256: str
    notes: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "out": self.out,
            "sizes": self.sizes,
            "labels": self.labels,
            "content_sha256": self.content_sha256,
            "notes": self.notes,
        }

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([{"split": k, "examples": v} for k, v in self.sizes.items()])


def build_scala(
    treebank: list[str | Path],
    out: str | Path,
    *,
    language: str = "und",
    seed: int = 4242,
    splits: dict[str, int] | None = None,
) -> ScalaBuild:
    """Build a ScaLA dataset from UD CoNLL-U files into a JSONL file with a ``split`` field.

    The file can be used in a suite with ``loader: jsonl`` and ``splits: predefined``.
    """
    from collections import Counter

    from glotbench.runner.datasets import build_dataset

    ds = build_dataset(
        {
            "name": Path(out).stem,
            "task": "linguistic_acceptability",
            "language": language,
            "loader": "scala",
            "paths": [str(p) for p in treebank],
            "splits": splits,
            "split_seed": seed,
        }
    )
    target = Path(out)
    with atomic_path(target) as tmp, tmp.open("w", encoding="utf-8") as handle:
        for split in ("train", "validation", "test"):
            for rec in ds.split(split):
                handle.write(json.dumps({**rec, "split": split}, ensure_ascii=False) + "\n")
    labels = Counter(r["label"] for s in ("train", "validation", "test") for r in ds.split(s))
    return ScalaBuild(
        str(target), ds.sizes(), dict(sorted(labels.items())), ds.content_hash, ds.notes
    )
