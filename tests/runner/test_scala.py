from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from glotbench.runner.datasets import build_dataset, load_conllu
from glotbench.runner.datasets.conllu import join_words
from glotbench.runner.datasets.scala import (
    NEVER_DELETE,
    NOUNS,
    build_scala,
    corrupt,
    deletable,
    delete_word,
    swap_words,
    swappable,
)


def test_delete_restrictions():
    upos = ["DET", "ADJ", "NOUN", "PROPN", "VERB", "ADV", "NUM", "PUNCT", "PRON", "NOUN"]
    # NOUN(2)/PROPN(3) are neighbours -> neither; NOUN(9) has PRON before it -> allowed
    assert deletable(upos) == [4, 8, 9]


def test_swap_restrictions():
    upos = ["PRON", "VERB", "VERB", "PUNCT", "NOUN", "SYM", "ADP", "NOUN"]
    assert swappable(upos) == [0, 6]


def test_swap_fixes_casing_of_first_word():
    assert swap_words(["Hun", "sover", "nu"], ["PRON", "VERB", "ADV"], 0) == ["Sover", "hun", "nu"]
    assert swap_words(["Oslo", "er", "stor"], ["PROPN", "AUX", "ADJ"], 0) == ["Er", "Oslo", "stor"]
    assert swap_words(["Hun", "sover", "nu"], ["PRON", "VERB", "ADV"], 1) == ["Hun", "nu", "sover"]


def test_corrupt_never_touches_forbidden_words():
    rec = {
        "tokens": ["Den", "store", "hund", "."],
        "upos": ["DET", "ADJ", "NOUN", "PUNCT"],
        "space_after": [True, True, False, True],
    }
    rng = np.random.default_rng(0)
    text, info = corrupt(rec, "delete", rng)
    assert info["word"] == "hund" and text == "Den store."


def _one_corruption(
    original: list[str], corrupted: str, upos: list[str], space: list[bool]
) -> str | None:
    for i in range(len(original)):
        if join_words(*delete_word(original, space, i)) == corrupted:
            if upos[i] not in NEVER_DELETE and not (
                upos[i] in NOUNS
                and (
                    (i > 0 and upos[i - 1] in NOUNS) or (i + 1 < len(upos) and upos[i + 1] in NOUNS)
                )
            ):
                return "delete"
    for i in swappable(upos):
        if join_words(swap_words(original, upos, i), space) == corrupted:
            return "swap"
    return None


@pytest.mark.parametrize("treebank", ["UD_Danish-DDT", "UD_Faroese-FarPaHC"])
def test_scala_on_ud(shared_data: Path, treebank: str):
    ud = load_conllu(sorted((shared_data / "ud" / treebank).glob("*-dev.conllu")))
    by_id = {r["id"]: r for r in ud}
    records = build_scala(ud, seed=3)
    counts = Counter(r["label"] for r in records)
    assert counts["correct"] == counts["incorrect"] > 100
    assert len({r["id"] for r in records}) == len(records)  # no sentence in both forms
    kinds = Counter()
    for r in records:
        src = by_id[r["id"]]
        if r["label"] == "correct":
            assert r["text"] == join_words(src["tokens"], src["space_after"])
        else:
            kind = _one_corruption(src["tokens"], r["text"], src["upos"], src["space_after"])
            assert kind == r["corruption"], r
            kinds[kind] += 1
    assert kinds["delete"] > 0 and kinds["swap"] > 0
    assert build_scala(ud, seed=3) == records


def test_scala_dataset_balanced_splits(shared_data: Path):
    ds = build_dataset(
        {
            "name": "scala-sv",
            "task": "linguistic_acceptability",
            "language": "sv",
            "loader": "scala",
            "paths": ["ud/UD_Swedish-Talbanken/*.conllu"],
            "splits": {"train": 512, "validation": 128, "test": 1024},
        },
        data_dir=shared_data,
    )
    assert ds.sizes() == {"train": 512, "validation": 128, "test": 1024}
    for split in ("train", "validation", "test"):
        c = Counter(r["label"] for r in ds.split(split))
        assert abs(c["correct"] - c["incorrect"]) <= 1
