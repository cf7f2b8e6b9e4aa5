"""Hashed arc-factored feature templates (McDonald, Crammer & Pereira 2005).

Every possible arc h → d of a sentence (node 0 = root, words 1..n) gets the
features of McDonald et al. (2005, "Online large-margin training of
dependency parsers", ACL, Table 1), grouped into templates that a parser
may switch on (``features`` option):

``upos``      head POS; dependent POS; head POS + dependent POS
``form``      head/dependent word form (lower-cased) alone and with its POS, and
              the bigram combinations of (form, POS) of head and dependent
``lemma``     the same with lemmas (the form when the treebank has no lemma)
``context``   POS of head ±1 and dependent ±1 (the four "surrounding word
              POS" templates of Table 1)
``between``   head POS + the POS of a word between head and dependent +
              dependent POS, once for every POS that occurs between them
``distance``  every other template is also conjoined with the direction of
              the arc and its binned length (1, 2, 3, 4, 5, 6–10, > 10)

A feature is a tuple of small integers (template id, attribute hashes)
mixed into one 64-bit value and reduced modulo the weight-vector size
(the "hashing trick", Weinberger et al. 2009). :func:`arc_feature_index`
builds, for all (n + 1)² arcs at once, an integer array ``idx`` of shape
``(F, n + 1, n + 1)``; the arc scores are then ``w[idx].sum(axis=0)`` — the
product of the one-hot arc × feature matrix with the weights, done as a
gather. Absent features (``between`` where no word of that POS lies between)
point at the last weight, which is kept at 0.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: feature groups a parser can switch on; the default uses all
ARC_FEATURE_GROUPS = ("upos", "form", "lemma", "context", "between", "distance")

_MULT = np.uint64(0x9E3779B97F4A7C15)
_SHIFT = np.uint64(29)

# (group, components); h*/d* are head/dependent attributes: f form, l lemma,
# p POS, p-1/p+1 neighbouring POS
_TEMPLATES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("upos", ("hp",)),
    ("upos", ("dp",)),
    ("upos", ("hp", "dp")),
    ("form", ("hf",)),
    ("form", ("hf", "hp")),
    ("form", ("df",)),
    ("form", ("df", "dp")),
    ("form", ("hf", "hp", "df", "dp")),
    ("form", ("hp", "df", "dp")),
    ("form", ("hf", "df", "dp")),
    ("form", ("hf", "hp", "dp")),
    ("form", ("hf", "hp", "df")),
    ("form", ("hf", "df")),
    ("lemma", ("hl",)),
    ("lemma", ("dl",)),
    ("lemma", ("hl", "dl")),
    ("lemma", ("hl", "dp")),
    ("lemma", ("hp", "dl")),
    ("lemma", ("hl", "hp", "dl", "dp")),
    ("context", ("hp", "hp+1", "dp-1", "dp")),
    ("context", ("hp-1", "hp", "dp-1", "dp")),
    ("context", ("hp", "hp+1", "dp", "dp+1")),
    ("context", ("hp-1", "hp", "dp", "dp+1")),
)
_BETWEEN_ID = 1000
_DISTANCE_ID = 2000
_DISTANCE_BINS = np.array([0, 1, 2, 3, 4, 5, 6, 6, 6, 6, 6])  # |d - h| - 1 -> bin; > 10 -> 7


def string_hash(text: str) -> int:
    """A process-independent 32-bit hash of a string (CRC-32 of its UTF-8 bytes)."""
    return zlib.crc32(text.encode("utf-8"))


def _mix(*parts: np.ndarray | np.uint64) -> np.ndarray:
    """Combine broadcastable uint64 arrays into one hash (multiply–xorshift rounds)."""
    acc = np.asarray(parts[0], dtype=np.uint64)
    for part in parts[1:]:
        acc = (acc ^ np.asarray(part, dtype=np.uint64)) * _MULT
        acc = acc ^ (acc >> _SHIFT)
    return acc


@dataclass(frozen=True)
class SentenceAttributes:
    """Hashed attributes of positions 0..n (0 = root) of one sentence."""

    form: np.ndarray
    lemma: np.ndarray
    upos: np.ndarray
    upos_prev: np.ndarray
    upos_next: np.ndarray


def sentence_attributes(
    tokens: Sequence[str], upos: Sequence[str], lemmas: Sequence[str] | None = None
) -> SentenceAttributes:
    """Hash the words' forms (lower-cased), lemmas and UPOS; the root gets its own symbols."""
    forms = ["<root>"] + [t.lower() for t in tokens]
    if lemmas is None:
        lems = forms
    else:
        lems = ["<root>"] + [
            (lem if lem not in ("_", "") else tok).lower()
            for lem, tok in zip(lemmas, tokens, strict=True)
        ]
    tags = ["<root>", *upos]
    pos = np.array([string_hash(t) for t in tags], dtype=np.uint64)
    start, end = np.uint64(string_hash("<s>")), np.uint64(string_hash("</s>"))
    return SentenceAttributes(
        form=np.array([string_hash(f) for f in forms], dtype=np.uint64),
        lemma=np.array([string_hash(f) for f in lems], dtype=np.uint64),
        upos=pos,
        upos_prev=np.concatenate([[start], pos[:-1]]),
        upos_next=np.concatenate([pos[1:], [end]]),
    )


def _distance_code(n1: int) -> np.ndarray:
    """Direction and binned length of every arc h → d as one small integer."""
    h = np.arange(n1)[:, None]
    d = np.arange(n1)[None, :]
    length = np.abs(d - h)
    bins = np.where(length > 10, 7, _DISTANCE_BINS[np.clip(length - 1, 0, 10)])
    return (bins * 2 + (d > h)).astype(np.uint64)


def _side_hash(parts: Sequence[np.ndarray], tid: int, n1: int) -> np.ndarray:
    """Hash of a template's components on one side (constant when it has none)."""
    if not parts:
        return np.full(n1, tid, dtype=np.uint64)
    return _mix(np.uint64(tid), *parts)


def arc_feature_index(
    attrs: SentenceAttributes, groups: Sequence[str], n_features: int
) -> np.ndarray:
    """Feature indices of all arcs: int64 array ``(F, n + 1, n + 1)`` into ``w[: n_features + 1]``.

    Index ``n_features`` is the null feature (absent ``between`` features).
    """
    n1 = len(attrs.upos)
    attr = {
        "f": attrs.form,
        "l": attrs.lemma,
        "p": attrs.upos,
        "p-1": attrs.upos_prev,
        "p+1": attrs.upos_next,
    }
    chosen = [(tid + 1, comps) for tid, (g, comps) in enumerate(_TEMPLATES) if g in groups]
    blocks: list[np.ndarray] = []
    if chosen:
        head = np.stack(
            [
                _side_hash([attr[c[1:]] for c in comps if c[0] == "h"], tid, n1)
                for tid, comps in chosen
            ]
        )
        dep = np.stack(
            [
                _side_hash([attr[c[1:]] for c in comps if c[0] == "d"], tid, n1)
                for tid, comps in chosen
            ]
        )
        blocks.append(_mix(head[:, :, None], dep[:, None, :]))  # (T, n1, n1)
    use_distance = "distance" in groups
    if use_distance:
        dist = _distance_code(n1)
        alone = _mix(np.uint64(_DISTANCE_ID), dist)[None]
        if blocks:
            blocks.append(_mix(blocks[0], alone))
        blocks.append(alone)
    mask = np.uint64(n_features - 1) if n_features & (n_features - 1) == 0 else None

    def reduce(h: np.ndarray) -> np.ndarray:
        return (h & mask if mask is not None else h % np.uint64(n_features)).astype(np.int64)

    out = [reduce(b) for b in blocks]
    if "between" in groups and n1 > 2:
        tags, codes = np.unique(attrs.upos[1:], return_inverse=True)
        onehot = np.zeros((n1 + 1, len(tags)), dtype=np.int32)
        onehot[np.arange(2, n1 + 1), codes] = 1  # row k + 1 holds word k
        counts = np.cumsum(onehot, axis=0)  # counts[k] = words < k with each tag
        h = np.arange(n1)[:, None]
        d = np.arange(n1)[None, :]
        lo, hi = np.minimum(h, d), np.maximum(h, d)
        present = (counts[hi] - counts[lo + 1]).transpose(2, 0, 1) > 0  # (tags, n1, n1)
        head = _mix(np.uint64(_BETWEEN_ID), attrs.upos[None, :], tags[:, None])  # (tags, n1)
        feat = reduce(_mix(head[:, :, None], attrs.upos[None, None, :]))
        out.append(np.where(present, feat, n_features))
    if not out:
        return np.zeros((0, n1, n1), dtype=np.int64)
    return np.concatenate(out, axis=0)
