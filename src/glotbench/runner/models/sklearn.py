"""scikit-learn baselines, trained on the train split per seed.

* :class:`TextClassifier` — word (1–2) and character (2–5, within word
  boundaries) n-gram TF-IDF features with logistic regression (``logreg``),
  complement naive Bayes (``nb``) or a linear SVM (``svm``);
* :class:`Majority` — the most frequent training label (or tag);
* :class:`TokenTagger` — a token-level linear classifier over word, affix,
  shape and neighbour features (NER and POS); ``features`` picks the templates;
* :class:`HashingEmbedder` — character n-gram hashing vectors for retrieval.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from glotbench.runner.errors import ModelError
from glotbench.runner.models.base import Model

if TYPE_CHECKING:
    from glotbench.runner.datasets.base import Dataset, Record
    from glotbench.runner.tasks import Task

ESTIMATORS = ("logreg", "nb", "svm")


def _text(item: Any) -> str:
    if isinstance(item, tuple | list):
        return " ||| ".join(str(x) for x in item)
    return str(item)


def _require_sequence(model: Model, task: Task) -> None:
    if task.kind != "sequence":
        raise ModelError(f"model {model.name!r} only does sequence classification, not {task.name}")


class TextClassifier(Model):
    """TF-IDF (word + character n-grams) and a linear classifier."""

    trains = True

    def __init__(
        self,
        name: str,
        estimator: str = "logreg",
        word_ngrams: tuple[int, int] | list[int] = (1, 2),
        char_ngrams: tuple[int, int] | list[int] = (2, 5),
        max_features: int | None = 200_000,
        C: float = 1.0,
    ) -> None:
        if estimator not in ESTIMATORS:
            raise ModelError(f"unknown estimator {estimator!r}; use one of {', '.join(ESTIMATORS)}")
        super().__init__(name, estimator=estimator)
        self.estimator = estimator
        self.word_ngrams = tuple(word_ngrams)
        self.char_ngrams = tuple(char_ngrams)
        self.max_features = max_features
        self.C = C
        self.pipeline: Any = None

    def _build(self, seed: int) -> Any:
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
        from sklearn.naive_bayes import ComplementNB
        from sklearn.pipeline import FeatureUnion, make_pipeline
        from sklearn.svm import LinearSVC

        features = FeatureUnion(
            [
                (
                    "word",
                    TfidfVectorizer(
                        analyzer="word",
                        ngram_range=self.word_ngrams,
                        max_features=self.max_features,
                        sublinear_tf=True,
                    ),
                ),
                (
                    "char",
                    TfidfVectorizer(
                        analyzer="char_wb",
                        ngram_range=self.char_ngrams,
                        max_features=self.max_features,
                        sublinear_tf=True,
                    ),
                ),
            ]
        )
        if self.estimator == "logreg":
            clf: Any = LogisticRegression(C=self.C, max_iter=2000, random_state=seed)
        elif self.estimator == "nb":
            clf = ComplementNB()
        else:
            clf = LinearSVC(C=self.C, random_state=seed)
        return make_pipeline(features, clf)

    def fit(
        self,
        task: Task,
        dataset: Dataset,
        train: Sequence[Record],
        validation: Sequence[Record],
        seed: int,
    ) -> None:
        _require_sequence(self, task)
        labels = task.references(train)
        if len(set(map(repr, labels))) < 2:
            raise ModelError(
                f"model {self.name!r}: the training split of {dataset.name!r} has fewer than two "
                "labels; a classifier cannot be trained (use the 'majority' baseline)"
            )
        inputs = [_text(x) for x in task.inputs(train)]  # type: ignore[attr-defined]
        self.pipeline = self._build(seed).fit(inputs, labels)

    def predict_labels(self, texts: list[Any]) -> list[Any]:
        if self.pipeline is None:
            raise ModelError(f"model {self.name!r} must be trained before it predicts")
        return [_py(v) for v in self.pipeline.predict([_text(t) for t in texts])]

    def metadata(self) -> dict[str, Any]:
        return {
            "family": "scikit-learn",
            "estimator": self.estimator,
            "word_ngrams": list(self.word_ngrams),
            "char_ngrams": list(self.char_ngrams),
        }


def _py(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


class Majority(Model):
    """Majority-class baseline (sequence and token tasks); ties go to the smallest label."""

    trains = True

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.label: Any = None

    def fit(
        self,
        task: Task,
        dataset: Dataset,
        train: Sequence[Record],
        validation: Sequence[Record],
        seed: int,
    ) -> None:
        refs = task.references(train)
        if task.kind == "token":
            counts = Counter(t for tags in refs for t in tags)
        elif task.kind == "sequence":
            counts = Counter(refs)
        else:
            raise ModelError(f"model {self.name!r} cannot do task {task.name!r}")
        if not counts:
            raise ModelError(
                f"model {self.name!r}: the training split of {dataset.name!r} is empty"
            )
        best = max(counts.values())
        self.label = sorted((k for k, v in counts.items() if v == best), key=repr)[0]

    def predict_labels(self, texts: list[Any]) -> list[Any]:
        return [self.label] * len(texts)

    def predict_tags(self, sentences: list[list[str]]) -> list[list[Any]]:
        return [[self.label] * len(s) for s in sentences]

    def metadata(self) -> dict[str, Any]:
        return {"family": "baseline", "strategy": "majority"}


#: feature templates of the token tagger (``options.features``); the default uses all
TOKEN_FEATURE_TEMPLATES = ("word", "affix", "shape", "context")


def token_features(
    tokens: Sequence[str], i: int, templates: Sequence[str] = TOKEN_FEATURE_TEMPLATES
) -> dict[str, Any]:
    """Features of token ``i`` from the chosen templates (default: all).

    ``word``: lower-cased form; ``affix``: 3-letter prefix, 2–4-letter suffixes;
    ``shape``: shape, sentence-initial, capitalised, has a digit; ``context``:
    neighbouring forms (±2) and the ±1 neighbours' suffixes and capitalisation.
    A bias feature is always present.
    """
    w = tokens[i]
    low = w.lower()
    feats: dict[str, Any] = {"bias": 1.0}
    if "word" in templates:
        feats["w=" + low] = 1.0
    if "affix" in templates:
        feats["p3=" + low[:3]] = 1.0
        feats["s2=" + low[-2:]] = 1.0
        feats["s3=" + low[-3:]] = 1.0
        feats["s4=" + low[-4:]] = 1.0
    if "shape" in templates:
        feats["shape=" + _shape(w)] = 1.0
        feats["first"] = float(i == 0)
        feats["upper"] = float(w[:1].isupper())
        feats["digit"] = float(any(c.isdigit() for c in w))
    if "context" in templates:
        for off in (-2, -1, 1, 2):
            j = i + off
            nb = tokens[j].lower() if 0 <= j < len(tokens) else ("<s>" if j < 0 else "</s>")
            feats[f"w{off:+d}={nb}"] = 1.0
            if off in (-1, 1) and 0 <= j < len(tokens):
                feats[f"s3{off:+d}={nb[-3:]}"] = 1.0
                feats[f"up{off:+d}"] = float(tokens[j][:1].isupper())
    return feats


def _int32(matrix: Any) -> Any:
    """CSR with 32-bit indices (liblinear refuses 64-bit ones)."""
    matrix = matrix.tocsr()
    matrix.indices = matrix.indices.astype(np.int32)
    matrix.indptr = matrix.indptr.astype(np.int32)
    return matrix


def _shape(word: str) -> str:
    out = []
    for c in word[:6]:
        out.append("X" if c.isupper() else "x" if c.islower() else "d" if c.isdigit() else c)
    return "".join(out)


class TokenTagger(Model):
    """Token-level linear tagger (LinearSVC or logistic regression) for NER and POS."""

    trains = True

    def __init__(
        self,
        name: str,
        estimator: str = "svm",
        C: float = 0.5,
        features: Sequence[str] | None = None,
    ) -> None:
        if estimator not in ("svm", "logreg"):
            raise ModelError(f"tagger estimator must be 'svm' or 'logreg', got {estimator!r}")
        chosen = tuple(TOKEN_FEATURE_TEMPLATES if features is None else features)
        unknown = sorted(set(chosen) - set(TOKEN_FEATURE_TEMPLATES))
        if unknown or not chosen:
            raise ModelError(
                f"tagger {name!r}: unknown feature template(s) {', '.join(map(repr, unknown))}; "
                f"choose one or more of {', '.join(TOKEN_FEATURE_TEMPLATES)}"
                if unknown
                else f"tagger {name!r}: 'features' must name at least one template"
            )
        super().__init__(name, estimator=estimator)
        self.estimator = estimator
        self.C = C
        self.features = chosen
        self.vectorizer: Any = None
        self.classifier: Any = None
        self.constant: Any = None

    def fit(
        self,
        task: Task,
        dataset: Dataset,
        train: Sequence[Record],
        validation: Sequence[Record],
        seed: int,
    ) -> None:
        from sklearn.feature_extraction import DictVectorizer
        from sklearn.linear_model import LogisticRegression
        from sklearn.svm import LinearSVC

        if task.kind != "token":
            raise ModelError(f"model {self.name!r} only does token classification, not {task.name}")
        X = [
            token_features(r["tokens"], i, self.features)
            for r in train
            for i in range(len(r["tokens"]))
        ]
        y = [t for r in train for t in r["tags"]]
        if not y:
            raise ModelError(
                f"model {self.name!r}: the training split of {dataset.name!r} is empty"
            )
        self.vectorizer = DictVectorizer()
        matrix = _int32(self.vectorizer.fit_transform(X))
        if len(set(y)) == 1:
            self.constant = y[0]
            return
        self.constant = None
        if self.estimator == "svm":
            self.classifier = LinearSVC(C=self.C, random_state=seed)
        else:
            self.classifier = LogisticRegression(C=self.C, max_iter=1000, random_state=seed)
        self.classifier.fit(matrix, y)

    def predict_tags(self, sentences: list[list[str]]) -> list[list[Any]]:
        if self.vectorizer is None:
            raise ModelError(f"model {self.name!r} must be trained before it predicts")
        if self.constant is not None:
            return [[self.constant] * len(s) for s in sentences]
        feats = [token_features(s, i, self.features) for s in sentences for i in range(len(s))]
        if not feats:
            return [[] for _ in sentences]
        flat = [_py(v) for v in self.classifier.predict(_int32(self.vectorizer.transform(feats)))]
        out, pos = [], 0
        for s in sentences:
            out.append(flat[pos : pos + len(s)])
            pos += len(s)
        return out

    def metadata(self) -> dict[str, Any]:
        return {
            "family": "scikit-learn",
            "estimator": self.estimator,
            "features": "token window",
            "feature_templates": list(self.features),
        }


class HashingEmbedder(Model):
    """Character n-gram hashing vectors (l2-normalised); a retrieval baseline."""

    trains = False

    def __init__(
        self, name: str, n_features: int = 4096, ngrams: tuple[int, int] | list[int] = (1, 4)
    ) -> None:
        super().__init__(name)
        self.n_features = n_features
        self.ngrams = tuple(ngrams)

    def embed(self, texts: list[str]) -> np.ndarray:
        from sklearn.feature_extraction.text import HashingVectorizer

        vec = HashingVectorizer(
            analyzer="char_wb",
            ngram_range=self.ngrams,
            n_features=self.n_features,
            alternate_sign=False,
            norm="l2",
        )
        return vec.transform([str(t) for t in texts]).toarray()

    def metadata(self) -> dict[str, Any]:
        return {"family": "scikit-learn", "features": "char n-gram hashing"}
