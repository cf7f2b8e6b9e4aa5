"""ScaLA: linguistic-acceptability datasets generated from a UD treebank.

After ScandEval's ScaLA (Nielsen 2023, §3.1): every original sentence is
*correct*; a negative is the sentence with **one** corruption:

* **delete** one word, but never an adjective, adverb, punctuation mark,
  determiner or number (``ADJ ADV PUNCT DET NUM``), and never a noun or
  proper noun whose neighbour (left or right) is a noun or proper noun;
* **swap** two neighbouring words, only when their POS tags differ and
  neither is punctuation or a symbol (``PUNCT SYM``); when the first word
  takes part, the casing is fixed (the new first word gets an upper-case
  initial if the old one had it, the old first word a lower-case initial
  unless it is a proper noun, an acronym or "I").

Sentences containing multi-word tokens are skipped (their surface form is not
the sequence of words). Both classes are detokenised the same way (the words
joined with their ``SpaceAfter`` flags) so spacing gives nothing away. Classes
are balanced: the eligible sentences (those that admit a corruption) are
shuffled with a fixed seed, half kept as they are and half corrupted (delete
or swap with equal probability, the other when one is impossible), so no
sentence appears in both forms.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from glotbench.runner.datasets.base import Record
from glotbench.runner.datasets.conllu import join_words

NEVER_DELETE = frozenset({"ADJ", "ADV", "PUNCT", "DET", "NUM"})
NOUNS = frozenset({"NOUN", "PROPN"})
NEVER_SWAP = frozenset({"PUNCT", "SYM"})
CORRECT, INCORRECT = "correct", "incorrect"


def deletable(upos: Sequence[str]) -> list[int]:
    """Indices of the words that may be deleted."""
    n = len(upos)
    out = []
    for i, tag in enumerate(upos):
        if tag in NEVER_DELETE:
            continue
        if tag in NOUNS and (
            (i > 0 and upos[i - 1] in NOUNS) or (i + 1 < n and upos[i + 1] in NOUNS)
        ):
            continue
        out.append(i)
    return out


def swappable(upos: Sequence[str]) -> list[int]:
    """Indices ``i`` such that words ``i`` and ``i + 1`` may be swapped."""
    return [
        i
        for i in range(len(upos) - 1)
        if upos[i] != upos[i + 1] and upos[i] not in NEVER_SWAP and upos[i + 1] not in NEVER_SWAP
    ]


def _upper_initial(word: str) -> str:
    return word[:1].upper() + word[1:]


def _lower_initial(word: str, upos: str) -> str:
    if upos == "PROPN" or word == "I" or (len(word) > 1 and word.isupper()):
        return word
    return word[:1].lower() + word[1:]


def delete_word(words: list[str], space: list[bool], index: int) -> tuple[list[str], list[bool]]:
    """Remove word ``index``; the word before it takes over its ``SpaceAfter`` flag."""
    new_space = space[:index] + space[index + 1 :]
    if index > 0:
        new_space[index - 1] = space[index]
    return words[:index] + words[index + 1 :], new_space


def swap_words(words: list[str], upos: list[str], index: int) -> list[str]:
    """Swap words ``index`` and ``index + 1``; fix the casing when the first word moves."""
    out = list(words)
    out[index], out[index + 1] = out[index + 1], out[index]
    if index == 0:
        first_was_upper = words[0][:1].isupper()
        moved_upos = upos[0]
        if first_was_upper:
            out[0] = _upper_initial(out[0])
            out[1] = _lower_initial(out[1], moved_upos)
    return out


def corrupt(
    record: Record, kind: str, rng: np.random.Generator
) -> tuple[str, dict[str, Any]] | None:
    """The corrupted text of a UD record by ``kind`` ('delete' or 'swap'), or None."""
    words, upos, space = list(record["tokens"]), list(record["upos"]), list(record["space_after"])
    original = join_words(words, space)
    if kind == "delete":
        options = deletable(upos)
        if not options or len(words) < 2:
            return None
        i = int(options[int(rng.integers(len(options)))])
        new_words, new_space = delete_word(words, space, i)
        text = join_words(new_words, new_space)
        info = {"corruption": "delete", "position": i, "word": words[i], "upos": upos[i]}
    else:
        options = swappable(upos)
        if not options:
            return None
        i = int(options[int(rng.integers(len(options)))])
        text = join_words(swap_words(words, upos, i), space)
        info = {"corruption": "swap", "position": i, "words": [words[i], words[i + 1]]}
    if text == original:
        return None
    return text, info


def build_scala(records: Sequence[Record], *, seed: int = 4242) -> list[Record]:
    """Balanced ScaLA records (``id``, ``text``, ``label``, ``corruption``) from UD records."""
    rng = np.random.default_rng(seed)
    eligible = [
        r
        for r in records
        if not r.get("has_multiword") and (deletable(r["upos"]) or swappable(r["upos"]))
    ]
    order = rng.permutation(len(eligible))
    half = len(eligible) // 2
    correct: list[Record] = []
    incorrect: list[Record] = []
    for rank, idx in enumerate(order):
        r = eligible[int(idx)]
        if rank < half:
            text = join_words(r["tokens"], r["space_after"])
            correct.append({"id": r["id"], "text": text, "label": CORRECT, "corruption": None})
            continue
        first = "delete" if rng.random() < 0.5 else "swap"
        second = "swap" if first == "delete" else "delete"
        result = corrupt(r, first, rng) or corrupt(r, second, rng)
        if result is None:
            continue
        text, info = result
        incorrect.append({"id": r["id"], "text": text, "label": INCORRECT, **info})
    n = min(len(correct), len(incorrect))
    return correct[:n] + incorrect[:n]
