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
    """Result of :func:`glotbench.api.build_scala`.

    Attributes
    ----------
    out : str
        The JSONL file written.
    sizes : dict of str to int
        Records per split.
    labels : dict of str to int
        Records per label (``correct``, ``incorrect``).
    content_sha256 : str
        The dataset's content hash.
    notes : list of str
        E.g. split sizes scaled down to the treebank.
    """

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
    r"""Build a ScaLA dataset from UD CoNLL-U files into a JSONL file with a ``split`` field.

    Every sentence gives a correct record and a corrupted one (two neighbouring
    words swapped, or a word deleted; Nielsen 2023). The file can be used in a
    suite with ``loader: jsonl`` and ``splits: predefined``.

    Parameters
    ----------
    treebank : list of str or Path
        UD CoNLL-U files.
    out : str or Path
        The JSONL file to write.
    language : str, default ``"und"``
        The records' language code.
    seed : int, default 4242
        Seed of the corruptions and the split.
    splits : dict of str to int, optional
        Records per split (default: ScandEval's 1,024 / 256 / 2,048); scaled
        down, with a note, when the treebank is smaller.

    Returns
    -------
    ScalaBuild
        ``out``, the split ``sizes``, ``labels`` counts, the file's
        ``content_sha256`` and notes.

    Raises
    ------
    InputError
        A file that is not CoNLL-U, or no sentence that can be corrupted.

    Examples
    --------
    >>> from pathlib import Path
    >>> from glotbench import api
    >>> words = [("the", "DET"), ("cat", "NOUN"), ("sat", "VERB"), ("on", "ADP"),
    ...          ("a", "DET"), ("mat", "NOUN")]
    >>> sentence = "\n".join(
    ...     f"{i}\t{w}\t{w}\t{t}\t_\t_\t{i - 1}\t{'dep' if i > 1 else 'root'}\t_\t_"
    ...     for i, (w, t) in enumerate(words, 1))
    >>> _ = Path("ud.conllu").write_text("\n\n".join([sentence] * 20) + "\n\n")
    >>> result = api.build_scala(["ud.conllu"], "scala.jsonl", language="en",
    ...                          splits={"train": 8, "validation": 8, "test": 16})
    >>> result.sizes, result.labels  # 20 records: the splits scaled down to fit
    ({'train': 5, 'validation': 5, 'test': 10}, {'correct': 10, 'incorrect': 10})
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
