"""A graph-based, arc-factored dependency parser and a relation classifier.

:class:`ArcFactoredParser` scores every arc h → d with a linear model over
hashed feature templates (:mod:`.features`) and decodes the best single-root
tree exactly with Chu–Liu/Edmonds (:mod:`.arborescence`): the first-order
MST parser of McDonald, Pereira, Ribarov & Hajič (2005, HLT/EMNLP).
Training is the structured averaged perceptron (Collins 2002, EMNLP, Fig. 1
and §2.5): for each training sentence in a seeded random order, decode with
the current weights and, where a predicted head differs from the gold head,
add the gold arc's features and subtract the predicted arc's; the returned
weights are the average over all steps (computed with the usual
"lazy" sum trick, Daumé 2006, §2.1.1).

:class:`RelationClassifier` labels the arcs afterwards (a two-stage parser,
as McDonald, Lerman & Pereira 2006, CoNLL-X): multinomial logistic
regression over features of the dependent, its head, their POS pair and the
arc's direction and length, trained on gold arcs and applied to predicted
ones. Relations are the universal part of the UD label (``nmod:poss`` →
``nmod``), which is all LAS compares (CoNLL 2018).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from glotbench.errors import InputError
from glotbench.runner.models.depparse.arborescence import max_arborescence
from glotbench.runner.models.depparse.features import (
    ARC_FEATURE_GROUPS,
    arc_feature_index,
    sentence_attributes,
)
from glotbench.runner.models.sklearn import _int32


@dataclass(frozen=True)
class Sentence:
    """What the parser reads of one sentence (gold tokenisation, UPOS and lemmas)."""

    tokens: tuple[str, ...]
    upos: tuple[str, ...]
    lemmas: tuple[str, ...] | None = None


class ArcFactoredParser:
    """First-order MST parser trained with the averaged perceptron.

    Parameters
    ----------
    groups : sequence of str, default all of ``ARC_FEATURE_GROUPS``
        Feature templates (see :mod:`glotbench.runner.models.depparse.features`).
    epochs : int, default 5
        Passes over the training sentences.
    n_features : int, default 2**20
        Size of the hashed weight vector.
    max_train_length : int, default 60
        Training sentences with more words are skipped (they still get parsed).
    """

    def __init__(
        self,
        groups: Sequence[str] = ARC_FEATURE_GROUPS,
        epochs: int = 5,
        n_features: int = 2**20,
        max_train_length: int = 60,
    ) -> None:
        self.groups = tuple(groups)
        self.epochs = epochs
        self.n_features = n_features
        self.max_train_length = max_train_length
        self.weights = np.zeros(n_features + 1)
        self.updates = 0

    def _index(self, sentence: Sentence) -> np.ndarray:
        attrs = sentence_attributes(sentence.tokens, sentence.upos, sentence.lemmas)
        return arc_feature_index(attrs, self.groups, self.n_features)

    def arc_scores(self, index: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        """Scores ``S[h, d]`` of all arcs from a feature index array."""
        w = self.weights if weights is None else weights
        return w[index].sum(axis=0)

    def fit(self, sentences: Sequence[Sentence], heads: Sequence[Sequence[int]], seed: int) -> None:
        """Averaged-perceptron training on gold ``heads`` (1-based, 0 = root)."""
        rng = np.random.default_rng([seed, 7])
        keep = [i for i, s in enumerate(sentences) if 0 < len(s.tokens) <= self.max_train_length]
        indices = {i: self._index(sentences[i]) for i in keep}
        gold = {i: np.asarray([-1, *heads[i]], dtype=np.int64) for i in keep}
        w = np.zeros(self.n_features + 1)
        acc = np.zeros(self.n_features + 1)  # sum of step × update
        step = 1
        for _ in range(self.epochs):
            for i in rng.permutation(keep):
                idx = indices[int(i)]
                pred = max_arborescence(w[idx].sum(axis=0))
                g = gold[int(i)]
                wrong = np.flatnonzero(pred[1:] != g[1:]) + 1
                if wrong.size:
                    plus = idx[:, g[wrong], wrong].ravel()
                    minus = idx[:, pred[wrong], wrong].ravel()
                    np.add.at(w, plus, 1.0)
                    np.add.at(w, minus, -1.0)
                    np.add.at(acc, plus, float(step))
                    np.add.at(acc, minus, -float(step))
                    w[-1] = acc[-1] = 0.0  # the null feature
                    self.updates += 1
                step += 1
        self.weights = w - acc / step

    def predict(self, sentence: Sentence) -> list[int]:
        """Heads (1-based, 0 = root) of the best single-root tree."""
        n = len(sentence.tokens)
        if n == 0:
            return []
        heads = max_arborescence(self.arc_scores(self._index(sentence)))
        return [int(h) for h in heads[1:]]


def universal(deprel: str) -> str:
    """The universal part of a UD relation (``acl:relcl`` → ``acl``)."""
    return str(deprel).split(":")[0]


def _bin(length: int) -> str:
    return str(length) if length <= 5 else ("6-10" if length <= 10 else ">10")


def relation_features(sentence: Sentence, heads: Sequence[int], d: int) -> dict[str, float]:
    """Features of the arc into word ``d`` (1-based) under ``heads``."""
    n = len(sentence.tokens)
    h = heads[d - 1]

    def form(i: int) -> str:
        return "<root>" if i == 0 else sentence.tokens[i - 1].lower()

    def lemma(i: int) -> str:
        if i == 0:
            return "<root>"
        if sentence.lemmas is None or sentence.lemmas[i - 1] in ("_", ""):
            return form(i)
        return sentence.lemmas[i - 1].lower()

    def pos(i: int) -> str:
        if i == 0:
            return "<root>"
        return sentence.upos[i - 1] if 1 <= i <= n else ("<s>" if i < 1 else "</s>")

    direction = "L" if h > d else "R"
    children = [i + 1 for i, x in enumerate(heads) if x == d]
    siblings = [i + 1 for i, x in enumerate(heads) if x == h and i + 1 != d]
    feats = {
        "bias": 1.0,
        f"df={form(d)}": 1.0,
        f"dl={lemma(d)}": 1.0,
        f"dp={pos(d)}": 1.0,
        f"hf={form(h)}": 1.0,
        f"hl={lemma(h)}": 1.0,
        f"hp={pos(h)}": 1.0,
        f"hp,dp={pos(h)},{pos(d)}": 1.0,
        f"hp,dp,dir={pos(h)},{pos(d)},{direction}": 1.0,
        f"hl,dp,dir={lemma(h)},{pos(d)},{direction}": 1.0,
        f"hp,dl={pos(h)},{lemma(d)}": 1.0,
        f"dir,len={direction},{_bin(abs(h - d))}": 1.0,
        f"dp-1={pos(d - 1)}": 1.0,
        f"dp+1={pos(d + 1)}": 1.0,
        f"ds3={form(d)[-3:]}": 1.0,
        f"nchildren={min(len(children), 3)}": 1.0,
        f"root_child={h == 0}": 1.0,
    }
    for c in children:
        feats[f"child_p={pos(c)}"] = 1.0
        feats[f"child_p,dir={pos(c)},{'L' if c < d else 'R'}"] = 1.0
    left_sibling_of_same_pos = any(s < d and pos(s) == pos(d) for s in siblings)
    feats[f"same_pos_left_sibling={left_sibling_of_same_pos}"] = 1.0
    return feats


class RelationClassifier:
    """A linear classifier over arc features; ``root`` for every arc from the root.

    ``estimator``: ``svm`` (LinearSVC, one-vs-rest; the default, about 20× faster
    to train here than lbfgs logistic regression at the same relation
    accuracy) or ``logreg`` (multinomial logistic regression).
    """

    def __init__(self, estimator: str = "svm", C: float = 0.1, max_iter: int = 1000) -> None:
        if estimator not in ("svm", "logreg"):
            raise InputError(f"relation estimator must be 'svm' or 'logreg', got {estimator!r}")
        self.estimator = estimator
        self.C = C
        self.max_iter = max_iter
        self.vectorizer: Any = None
        self.model: Any = None
        self.constant: str | None = None

    def fit(
        self,
        sentences: Sequence[Sentence],
        heads: Sequence[Sequence[int]],
        deprels: Sequence[Sequence[str]],
        seed: int,
    ) -> None:
        from sklearn.feature_extraction import DictVectorizer
        from sklearn.linear_model import LogisticRegression
        from sklearn.svm import LinearSVC

        X, y = [], []
        for s, hs, rels in zip(sentences, heads, deprels, strict=True):
            for d in range(1, len(s.tokens) + 1):
                if hs[d - 1] == 0:
                    continue
                X.append(relation_features(s, hs, d))
                y.append(universal(rels[d - 1]))
        counts = Counter(y)
        if len(counts) < 2:
            self.constant = next(iter(counts), "dep")
            return
        self.constant = None
        self.vectorizer = DictVectorizer()
        matrix = _int32(self.vectorizer.fit_transform(X))
        if self.estimator == "svm":
            self.model = LinearSVC(C=self.C, max_iter=self.max_iter, random_state=seed)
        else:
            self.model = LogisticRegression(C=self.C, max_iter=self.max_iter, random_state=seed)
        self.model.fit(matrix, y)

    def predict(
        self, sentences: Sequence[Sentence], heads: Sequence[Sequence[int]]
    ) -> list[list[str]]:
        out: list[list[str]] = [["root" if h == 0 else "" for h in hs] for hs in heads]
        rows, where = [], []
        for k, (s, hs) in enumerate(zip(sentences, heads, strict=True)):
            for d in range(1, len(s.tokens) + 1):
                if hs[d - 1] != 0:
                    rows.append(relation_features(s, hs, d))
                    where.append((k, d - 1))
        if not rows:
            return out
        if self.constant is not None:
            labels = [self.constant] * len(rows)
        else:
            matrix = _int32(self.vectorizer.transform(rows))
            labels = [str(v) for v in self.model.predict(matrix)]
        for (k, i), label in zip(where, labels, strict=True):
            out[k][i] = label
        return out
