"""Deep biaffine dependency parsing on a Hugging Face encoder (``hf-encoder``, task ``parsing``).

The parser of Dozat & Manning (2017, "Deep biaffine attention for neural
dependency parsing", ICLR, §2–3) on the states of a fine-tuned transformer
encoder instead of a BiLSTM, as in UDify (Kondratyuk & Straka 2019, EMNLP)
and Trankit (Nguyen et al. 2021, EACL):

* **Word vectors**: the last-layer state of each word's *first* sub-token
  (gold tokenisation; ``is_split_into_words``). The artificial root (node 0)
  is a learned vector of the encoder's width.
* **MLP projections** (§2.2): four one-layer MLPs (LeakyReLU 0.1, dropout
  ``mlp_dropout``) give each node an arc-head and arc-dependent vector of
  size ``arc_mlp`` and a label-head and label-dependent vector of size
  ``label_mlp``.
* **Arc scores** (eq. 2–3): ``s[h, d] = a_h^T U a'_d + a_h^T u`` for head
  ``h`` (root or word) and dependent word ``d``: a bilinear term and a
  head-only prior term.
* **Label scores** (eq. 4–5): for the arc h → d, per relation ``l``,
  ``r_d^T U_l r'_h + W_l [r_d; r'_h] + b_l``.
* **Training**: cross-entropy of each word's gold head over all candidate
  heads (a softmax over the column of ``s``) plus cross-entropy of the gold
  relation at the gold head; the encoder and the head are trained together
  with the ``hf-encoder`` recipe (AdamW, warm-up + linear schedule, early
  stopping on validation loss, out-of-memory halving).
* **Decoding**: the head log-probabilities ``log softmax_h s[h, d]`` are
  decoded by the exact single-root maximum spanning arborescence
  (Chu–Liu/Edmonds, :func:`glotbench.runner.models.depparse.arborescence.max_arborescence`),
  so every analysis is a tree with one root arc; then each arc gets the
  highest-scoring relation at its predicted head (``root`` for the arc
  from the root, never ``root`` elsewhere).

Relations are universal UD relations (``nmod:poss`` → ``nmod``), which is
all LAS compares (CoNLL 2018). Words cut off by ``max_length`` (or left
without a sub-token by the tokenizer) are not scored: each is attached to
the word before it (the first word to the predicted root word) with the
training split's most frequent non-root relation, which keeps the output a
tree. Training ignores arcs into or out of such words.

torch and transformers are imported only inside the functions that need them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import numpy as np

from glotbench.runner.errors import ModelError
from glotbench.runner.models.depparse.arborescence import max_arborescence
from glotbench.runner.models.depparse.parser import universal

if TYPE_CHECKING:
    from glotbench.runner.datasets.base import Record

#: word-level fields of an encoded sentence (padded to the batch's word count)
WORD_FIELDS = ("first", "heads", "rels")


def relation_inventory(records: Sequence[Record]) -> tuple[list[str], str]:
    """Sorted universal relations of ``records`` (with ``root``) and the most frequent non-root one.

    Ties for the most frequent relation go to the alphabetically first.
    """
    counts: Counter[str] = Counter()
    labels = {"root"}
    for r in records:
        for h, rel in zip(r["heads"], r["deprels"], strict=True):
            u = universal(rel)
            labels.add(u)
            if int(h) != 0:
                counts[u] += 1
    if counts:
        best = max(counts.values())
        fallback = sorted(k for k, v in counts.items() if v == best)[0]
    else:
        fallback = "dep"
    return sorted(labels), fallback


def encode_sentences(
    tokenizer: Any,
    records: Sequence[Record],
    max_length: int,
    relations: dict[str, int] | None,
    model: str,
) -> list[dict[str, Any]]:
    """Sub-token inputs plus word-level fields of each record.

    ``first`` holds the sub-token position of each *kept* word (a word with a
    sub-token inside ``max_length``), ``_kept`` the kept words' 0-based indices.
    With ``relations``, ``heads`` holds each kept word's gold head as a node
    index (0 = root, k = k-th kept word) and ``rels`` its relation's index;
    -100 (ignored by the loss) where the gold head is not kept.
    """
    out = []
    for r in records:
        words = [str(t) for t in r["tokens"]]
        if not words:
            enc = tokenizer("", truncation=True, max_length=max_length)
            word_ids: list[int | None] = []
        else:
            enc = tokenizer(words, is_split_into_words=True, truncation=True, max_length=max_length)
            try:
                word_ids = enc.word_ids()
            except (ValueError, AttributeError):
                raise ModelError(
                    f"model {model!r}: parsing needs a fast tokenizer (word alignment)"
                ) from None
        first: dict[int, int] = {}
        for position, w in enumerate(word_ids):
            if w is not None and w not in first:
                first[w] = position
        kept = sorted(first)
        node = {w: k + 1 for k, w in enumerate(kept)}
        item: dict[str, Any] = {k: list(v) for k, v in enc.items()}
        item["first"] = [first[w] for w in kept]
        item["_kept"] = kept
        item["_n"] = len(words)
        if relations is not None:
            heads, rels = [], []
            for w in kept:
                gold = int(r["heads"][w])
                target = 0 if gold == 0 else node.get(gold - 1, -100)
                heads.append(target)
                rel = relations.get(universal(r["deprels"][w]), -100)
                rels.append(rel if target != -100 else -100)
            item["heads"] = heads
            item["rels"] = rels
        out.append(item)
    return out


def collate_words(items: list[dict[str, Any]], torch: Any, device: str) -> dict[str, Any]:
    """Word-level tensors of ``items``: ``first`` (0-padded), ``word_mask``, gold fields (-100)."""
    width = max(1, max(len(i["first"]) for i in items))
    batch = {
        "first": torch.tensor([i["first"] + [0] * (width - len(i["first"])) for i in items]),
        "word_mask": torch.tensor(
            [[True] * len(i["first"]) + [False] * (width - len(i["first"])) for i in items]
        ),
    }
    for key in ("heads", "rels"):
        if key in items[0]:
            batch[key] = torch.tensor([i[key] + [-100] * (width - len(i[key])) for i in items])
    return {k: v.to(device) for k, v in batch.items()}


def biaffine_module(
    encoder: Any, n_relations: int, arc_mlp: int, label_mlp: int, dropout: float
) -> Any:
    """The encoder with a deep biaffine arc scorer and relation classifier (a ``torch.nn.Module``).

    ``forward`` returns ``loss`` (when gold ``heads``/``rels`` are given),
    ``arc`` (batch × (words + 1) heads × words dependents; impossible heads
    at the dtype's minimum) and the label vectors ``label_dep``/``label_head``
    for :meth:`label_scores`.
    """
    import torch
    from torch import nn

    hidden = int(encoder.config.hidden_size)

    def mlp(size: int) -> Any:
        return nn.Sequential(nn.Linear(hidden, size), nn.LeakyReLU(0.1), nn.Dropout(dropout))

    class BiaffineParser(nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.encoder = encoder
            self.config = encoder.config
            self.root = nn.Parameter(torch.randn(hidden) * 0.02)
            self.arc_dep, self.arc_head = mlp(arc_mlp), mlp(arc_mlp)
            self.label_dep, self.label_head = mlp(label_mlp), mlp(label_mlp)
            # the biaffine weights start at zero (Dozat & Manning 2017, §3: uniform scores)
            self.arc_U = nn.Parameter(torch.zeros(arc_mlp, arc_mlp))
            self.arc_u = nn.Parameter(torch.zeros(arc_mlp))
            self.label_U = nn.Parameter(torch.zeros(n_relations, label_mlp, label_mlp))
            self.label_W = nn.Linear(2 * label_mlp, n_relations)

        def label_scores(self, dep: Any, head: Any) -> Any:
            """Relation scores of arcs with dependent vectors ``dep`` and head vectors ``head``."""
            bilinear = torch.einsum("bnk,lkj,bnj->bnl", dep, self.label_U, head)
            return bilinear + self.label_W(torch.cat([dep, head], dim=-1))

        def forward(
            self,
            input_ids: Any,
            attention_mask: Any,
            first: Any,
            word_mask: Any,
            heads: Any = None,
            rels: Any = None,
            **extra: Any,
        ) -> SimpleNamespace:
            states = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask, **extra
            ).last_hidden_state
            b, n = first.shape
            words = states.gather(1, first.unsqueeze(-1).expand(b, n, states.shape[-1]))
            nodes = torch.cat([self.root.to(words.dtype).expand(b, 1, -1), words], dim=1)
            dep, head = self.arc_dep(words), self.arc_head(nodes)
            arc = torch.einsum("bhk,kl,bdl->bhd", head, self.arc_U, dep)
            arc = arc + (head @ self.arc_u).unsqueeze(-1)
            node_mask = torch.cat([word_mask.new_ones(b, 1), word_mask], dim=1)
            allowed = node_mask.unsqueeze(-1) & word_mask.unsqueeze(1)
            positions = torch.arange(n + 1, device=arc.device)
            self_loop = positions.unsqueeze(-1) == positions[1:].unsqueeze(0)  # node d + 1 -> d
            allowed = allowed & ~self_loop
            arc = arc.masked_fill(~allowed, torch.finfo(arc.dtype).min)
            label_dep, label_head = self.label_dep(words), self.label_head(nodes)
            loss = None
            if heads is not None:
                # means over the scored words (summed, then divided: a batch without any
                # scored word has loss 0, not NaN)
                logits = arc.transpose(1, 2).float()  # b × dependents × heads
                arc_loss = nn.functional.cross_entropy(
                    logits.reshape(b * n, n + 1),
                    heads.reshape(-1),
                    ignore_index=-100,
                    reduction="sum",
                )
                at = heads.clamp(min=0).unsqueeze(-1).expand(b, n, label_head.shape[-1])
                scores = self.label_scores(label_dep, label_head.gather(1, at)).float()
                rel_loss = nn.functional.cross_entropy(
                    scores.reshape(b * n, -1), rels.reshape(-1), ignore_index=-100, reduction="sum"
                )
                loss = arc_loss / (heads != -100).sum().clamp(min=1)
                loss = loss + rel_loss / (rels != -100).sum().clamp(min=1)
            return SimpleNamespace(loss=loss, arc=arc, label_dep=label_dep, label_head=label_head)

    return BiaffineParser()


def decode_batch(
    module: Any, out: Any, items: list[dict[str, Any]], root_label: int, torch: Any
) -> list[tuple[list[int], list[int]]]:
    """Trees of a forward pass: node-index heads and relation indices of each kept word.

    Heads: the single-root maximum spanning arborescence of the head
    log-probabilities (float64). Relations: the best relation at the
    predicted head, ``root_label`` exactly for arcs from the root.
    """
    arc = torch.log_softmax(out.arc.float(), dim=1).cpu().numpy().astype(np.float64)
    b, n = arc.shape[0], arc.shape[2]
    predicted = np.zeros((b, n), dtype=np.int64)
    for i, item in enumerate(items):
        m = len(item["first"])
        if m == 0:
            continue
        scores = np.zeros((m + 1, m + 1))
        scores[:, 1:] = arc[i, : m + 1, :m]
        np.fill_diagonal(scores, 0.0)  # self-loops (masked, and ignored by the decoder)
        predicted[i, :m] = max_arborescence(scores)[1:]
    at_heads = torch.as_tensor(predicted, device=out.label_head.device)
    at = at_heads.unsqueeze(-1).expand(b, n, out.label_head.shape[-1])
    scores = module.label_scores(out.label_dep, out.label_head.gather(1, at)).float()
    from_root = at_heads == 0
    scores[..., root_label] = torch.where(
        from_root, torch.finfo(scores.dtype).max, torch.finfo(scores.dtype).min
    )
    labels = scores.argmax(-1).cpu().numpy()
    return [
        (predicted[i, : len(item["first"])].tolist(), labels[i, : len(item["first"])].tolist())
        for i, item in enumerate(items)
    ]


def to_arcs(
    item: dict[str, Any],
    node_heads: list[int],
    labels: list[int],
    relations: Sequence[str],
    fallback: str,
) -> list[tuple[int, str]]:
    """(head, relation) per word of the sentence (1-based heads, 0 = root).

    Kept words take their decoded arcs (node indices mapped back to word
    positions). A word that was not kept hangs from the word before it (the
    first word from the predicted root word, or from the root when no word
    was kept) with ``fallback``; the result is a single-root tree.
    """
    n, kept = item["_n"], item["_kept"]
    word_of = [0, *(w + 1 for w in kept)]  # node index -> 1-based word position
    arcs: list[tuple[int, str] | None] = [None] * n
    root_word = 0
    for w, h, lab in zip(kept, node_heads, labels, strict=True):
        arcs[w] = (word_of[h], relations[lab])
        if h == 0:
            root_word = w + 1
    for w in range(n):
        if arcs[w] is None:
            if w > 0:
                arcs[w] = (w, fallback)
            else:
                arcs[w] = (root_word, fallback) if root_word else (0, "root")
    return [a for a in arcs if a is not None]
