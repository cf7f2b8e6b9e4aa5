"""Dependency parsers for the ``parsing`` task (model kinds ``parser`` and ``parse-baseline``).

* :class:`DependencyParser` (kind ``parser``) — first-order graph-based
  parser: hashed McDonald et al. (2005) arc features, averaged perceptron,
  exact single-root Chu–Liu/Edmonds decoding, then a linear relation
  classifier (:mod:`.parser`). Reads the gold tokens, UPOS and lemmas of each
  sentence (the CoNLL-X "gold POS" setting), trains per seed on the
  iteration's training sentences (shuffled with the seed every epoch).
* :class:`ParseBaseline` (kind ``parse-baseline``) — every word attached to
  its left (or right) neighbour, the first (last) word to the root with
  ``root``, every other arc labelled with the most frequent non-root
  universal relation of the training split.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from glotbench.runner.errors import ModelError
from glotbench.runner.models.base import Model
from glotbench.runner.models.depparse.arborescence import is_single_root_tree, max_arborescence
from glotbench.runner.models.depparse.features import ARC_FEATURE_GROUPS
from glotbench.runner.models.depparse.parser import (
    ArcFactoredParser,
    RelationClassifier,
    Sentence,
    universal,
)

if TYPE_CHECKING:
    from glotbench.runner.datasets.base import Dataset, Record
    from glotbench.runner.tasks import Task


def _require_parsing(model: Model, task: Task) -> None:
    if task.kind != "parsing":
        raise ModelError(f"model {model.name!r} only does dependency parsing, not {task.name}")


def sentence_of(record: Record, model: str) -> Sentence:
    """The parser's view of a record: tokens, UPOS and (if present) lemmas."""
    if "upos" not in record or record["upos"] is None:
        raise ModelError(
            f"model {model!r} needs UPOS tags on item {record.get('id')!r} (load the dataset "
            "with the conllu loader and task parsing)"
        )
    lemmas = record.get("lemmas")
    return Sentence(
        tuple(map(str, record["tokens"])),
        tuple(map(str, record["upos"])),
        tuple(map(str, lemmas)) if lemmas is not None else None,
    )


class DependencyParser(Model):
    """Graph-based arc-factored parser + relation classifier (kind ``parser``)."""

    trains = True

    def __init__(
        self,
        name: str,
        features: Sequence[str] | None = None,
        epochs: int = 5,
        n_features: int = 2**20,
        max_train_length: int = 60,
        relation_estimator: str = "svm",
        relation_C: float = 0.1,
    ) -> None:
        chosen = tuple(ARC_FEATURE_GROUPS if features is None else features)
        unknown = sorted(set(chosen) - set(ARC_FEATURE_GROUPS))
        if unknown or not chosen:
            raise ModelError(
                f"parser {name!r}: unknown feature group(s) {', '.join(map(repr, unknown))}; "
                f"choose one or more of {', '.join(ARC_FEATURE_GROUPS)}"
                if unknown
                else f"parser {name!r}: 'features' must name at least one group"
            )
        if not isinstance(epochs, int) or epochs < 1:
            raise ModelError(f"parser {name!r}: epochs must be a positive integer, got {epochs!r}")
        if not isinstance(n_features, int) or n_features < 2:
            raise ModelError(f"parser {name!r}: n_features must be an integer >= 2")
        if relation_estimator not in ("svm", "logreg"):
            raise ModelError(
                f"parser {name!r}: relation_estimator must be 'svm' or 'logreg', "
                f"got {relation_estimator!r}"
            )
        super().__init__(name, features=list(chosen), epochs=epochs)
        self.features = chosen
        self.epochs = epochs
        self.n_features = n_features
        self.max_train_length = max_train_length
        self.relation_estimator = relation_estimator
        self.relation_C = relation_C
        self.arcs: ArcFactoredParser | None = None
        self.relations: RelationClassifier | None = None

    def fit(
        self,
        task: Task,
        dataset: Dataset,
        train: Sequence[Record],
        validation: Sequence[Record],
        seed: int,
    ) -> None:
        _require_parsing(self, task)
        if not train:
            raise ModelError(
                f"model {self.name!r}: the training split of {dataset.name!r} is empty"
            )
        sentences = [sentence_of(r, self.name) for r in train]
        heads = [list(map(int, r["heads"])) for r in train]
        self.arcs = ArcFactoredParser(
            self.features,
            epochs=self.epochs,
            n_features=self.n_features,
            max_train_length=self.max_train_length,
        )
        self.arcs.fit(sentences, heads, seed)
        self.relations = RelationClassifier(self.relation_estimator, C=self.relation_C)
        self.relations.fit(sentences, heads, [list(r["deprels"]) for r in train], seed)

    def parse(self, records: list[Record]) -> list[list[tuple[int, str]]]:
        if self.arcs is None or self.relations is None:
            raise ModelError(f"model {self.name!r} must be trained before it parses")
        sentences = [sentence_of(r, self.name) for r in records]
        heads = [self.arcs.predict(s) for s in sentences]
        rels = self.relations.predict(sentences, heads)
        return [list(zip(h, r, strict=True)) for h, r in zip(heads, rels, strict=True)]

    def metadata(self) -> dict[str, Any]:
        return {
            "family": "graph-based dependency parser",
            "decoder": "Chu-Liu/Edmonds, single root",
            "training": "averaged perceptron",
            "feature_groups": list(self.features),
            "epochs": self.epochs,
            "n_features": self.n_features,
            "max_train_length": self.max_train_length,
            "relation_classifier": self.relation_estimator,
            "perceptron_updates": self.arcs.updates if self.arcs is not None else None,
        }


BASELINE_STRATEGIES = ("left", "right")


class ParseBaseline(Model):
    """Left or right neighbour attachment, majority relation (kind ``parse-baseline``)."""

    trains = True

    def __init__(self, name: str, strategy: str = "left") -> None:
        if strategy not in BASELINE_STRATEGIES:
            raise ModelError(
                f"parse-baseline {name!r}: strategy must be one of "
                f"{', '.join(BASELINE_STRATEGIES)}, got {strategy!r}"
            )
        super().__init__(name, strategy=strategy)
        self.strategy = strategy
        self.relation: str | None = None

    def fit(
        self,
        task: Task,
        dataset: Dataset,
        train: Sequence[Record],
        validation: Sequence[Record],
        seed: int,
    ) -> None:
        _require_parsing(self, task)
        counts = Counter(
            universal(rel)
            for r in train
            for h, rel in zip(r["heads"], r["deprels"], strict=True)
            if int(h) != 0
        )
        if not counts:
            raise ModelError(
                f"model {self.name!r}: the training split of {dataset.name!r} has no arcs"
            )
        best = max(counts.values())
        self.relation = sorted(k for k, v in counts.items() if v == best)[0]

    def parse(self, records: list[Record]) -> list[list[tuple[int, str]]]:
        if self.relation is None:
            raise ModelError(f"model {self.name!r} must be trained before it parses")
        out = []
        for r in records:
            n = len(r["tokens"])
            if self.strategy == "left":
                heads = [i for i in range(n)]  # word i + 1 -> i; word 1 -> root
            else:
                heads = [i + 2 for i in range(n - 1)] + [0]
            out.append([(h, "root" if h == 0 else self.relation) for h in heads])
        return out

    def metadata(self) -> dict[str, Any]:
        return {"family": "baseline", "strategy": f"attach to {self.strategy} neighbour"}


__all__ = [
    "ARC_FEATURE_GROUPS",
    "ArcFactoredParser",
    "DependencyParser",
    "ParseBaseline",
    "RelationClassifier",
    "Sentence",
    "is_single_root_tree",
    "max_arborescence",
]
