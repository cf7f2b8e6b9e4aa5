"""Tasks: what a model is asked, and how its outputs become metric statistics.

A task knows the fields of its records, the metrics it reports (each from
the foundation's registry, configured with the dataset's label inventory so
that every run of a dataset has the same statistic layout), how to ask a model
(which adapter method it calls) and how to turn the answers into the
per-example (n × k) statistics the store keeps.

Model adapters answer through one method per task *kind*:

=============  ============================================  ===========================
kind           adapter method                                answer per record
=============  ============================================  ===========================
sequence       ``predict_labels(texts)``                     a label
token          ``predict_tags(token_lists)``                 one tag per token
qa             ``answer(questions, contexts)``               an answer string
translation    ``translate(sources, src_langs, tgt_langs)``  a translation string
retrieval      ``embed(texts)``                              a vector (cosine NN here)
parsing        ``parse(records)``                            (head, deprel) per word
=============  ============================================  ===========================
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from glotbench.metrics import Metric, get_metric
from glotbench.runner.errors import DatasetError, ModelError

if TYPE_CHECKING:
    from glotbench.runner.datasets.base import Dataset, Record

KIND_METHODS: dict[str, str] = {
    "sequence": "predict_labels",
    "token": "predict_tags",
    "qa": "answer",
    "translation": "translate",
    "retrieval": "embed",
    "parsing": "parse",
}


def call_checked(
    fn: Callable[[list[Any]], Sequence[Any]],
    items: list[Any],
    ids: Sequence[str],
    model: str,
    what: str,
) -> list[Any]:
    """``fn(items)``, checked: one answer per item; a failure names the item.

    When the batch call raises, the items are retried one at a time to find
    the first one that fails; the :class:`ModelError` names its id.
    """
    try:
        out = list(fn(items))
    except ModelError:
        raise
    except Exception as batch_exc:
        for item, rid in zip(items, ids, strict=True):
            try:
                fn([item])
            except Exception as exc:
                raise ModelError(
                    f"model {model!r} raised on {what} item {rid!r}: {type(exc).__name__}: {exc}"
                ) from exc
        raise ModelError(
            f"model {model!r} raised on a batch of {what} items: "
            f"{type(batch_exc).__name__}: {batch_exc}"
        ) from batch_exc
    if len(out) != len(items):
        raise ModelError(
            f"model {model!r} returned {len(out)} answers for {len(items)} {what} items; "
            "it must return exactly one per item"
        )
    return out


@dataclass(frozen=True)
class MetricStats:
    """One metric's statistics of a test split, or of a part of it.

    ``language`` (default: the dataset's) and ``rows`` (indices into the
    test split; default: all) let a multilingual dataset report one run per
    language, as language identification does.
    """

    metric: Metric
    stats: np.ndarray
    language: str | None = None
    rows: np.ndarray | None = None

    @property
    def name(self) -> str:
        return self.metric.name

    def score(self) -> float:
        return float(self.metric.score(self.stats.sum(axis=0)))


class Task:
    """Base class; subclasses set the class attributes and override hooks."""

    name: str = ""
    kind: str = "sequence"
    description: str = ""
    metrics: tuple[str, ...] = ()
    #: field holding the label (stratification and label inventory), if any
    label_field: str | None = None
    #: fields every record must have
    fields: tuple[str, ...] = ()
    #: labelled metrics get the dataset's label inventory
    labelled_metrics: frozenset[str] = frozenset({"mcc", "f1_macro"})

    # -- data ------------------------------------------------------------
    def prepare(self, record: Record, language: str, options: dict[str, Any]) -> None:
        """Complete a loaded record from its dataset (language, spec options); default: no-op."""

    def from_conllu(self, record: Record) -> Record:
        raise DatasetError(f"task {self.name!r} cannot be built from CoNLL-U sentences")

    def validate(self, record: Record, where: str) -> None:
        for f in self.fields:
            if f not in record or record[f] is None:
                raise DatasetError(
                    f"{where}: record {record.get('id')!r} has no field {f!r} "
                    f"(task {self.name} needs {', '.join(self.fields)})"
                )

    def label_inventory(self, records: Sequence[Record]) -> tuple[Any, ...]:
        if self.label_field is None:
            return ()
        return _sorted({r[self.label_field] for r in records})

    def check_train_labels(self, dataset: Dataset) -> None:
        """Every label of validation/test must occur in train (classification tasks)."""
        if self.label_field is None:
            return
        train = {r[self.label_field] for r in dataset.train}
        for split in ("validation", "test"):
            missing = {r[self.label_field] for r in dataset.split(split)} - train
            if missing:
                raise DatasetError(
                    f"dataset {dataset.name!r}: label(s) {', '.join(map(repr, _sorted(missing)))} "
                    f"of the {split} split never occur in train; a trained model cannot predict "
                    "them. Use more data, larger train size, or drop those examples"
                )

    # -- attributes of fine-grained buckets ----------------------------------
    def example_attributes(self, dataset: Dataset) -> list[dict[str, Any]]:
        """Built-in attributes of the test examples, long rows {example_id, unit, attribute, value}.

        ``unit`` is ``""`` for the example itself, or an entity unit
        (:mod:`glotbench.ingest.attributes`). Default: none.
        """
        return []

    def unit_statistics(
        self,
        predictions: Sequence[Any],
        records: Sequence[Record],
        metric: Metric,
        dataset: Dataset,
    ) -> tuple[list[tuple[str, str, np.ndarray]], list[dict[str, Any]]] | None:
        """Per-unit statistics of one metric run and the attributes of predicted-only units.

        ``None`` (the default) when the metric has no units below the example.
        """
        return None

    # -- evaluation --------------------------------------------------------
    def references(self, records: Sequence[Record]) -> list[Any]:
        raise NotImplementedError

    def predict(self, model: Any, records: list[Record], dataset: Dataset) -> list[Any]:
        raise NotImplementedError

    def metric(self, name: str, dataset: Dataset) -> Metric:
        if name in self.labelled_metrics:
            return get_metric(name, labels=list(dataset.labels))
        return get_metric(name)

    def statistics(
        self, predictions: Sequence[Any], records: Sequence[Record], dataset: Dataset
    ) -> list[MetricStats]:
        refs = self.references(records)
        out = []
        for name in self.metrics:
            metric = self.metric(name, dataset)
            out.append(MetricStats(metric, metric.stats(list(predictions), refs)))
        return out

    def primary_metric(self, dataset: Dataset) -> str:
        """The metric analyses rank this task on by default: the first of :attr:`metrics`.

        Stored as ``primary_metric`` in each run's metadata
        (:mod:`glotbench.analysis.selection`).
        """
        return self.metric(self.metrics[0], dataset).name

    def result_keys(self, dataset: Dataset) -> list[tuple[str, str]]:
        """The (metric name, language) of every run a job on ``dataset`` stores.

        Must list exactly what :meth:`statistics` returns, in any order; the
        executors use it to skip completed jobs.
        """
        return [(self.metric(n, dataset).name, dataset.language) for n in self.metrics]

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "metrics": list(self.metrics),
            "fields": list(self.fields),
            "description": self.description,
        }


def _sorted(values: set[Any]) -> tuple[Any, ...]:
    try:
        return tuple(sorted(values))
    except TypeError:
        return tuple(sorted(values, key=repr))


def require(model: Any, task: Task) -> Callable[..., Any]:
    method = KIND_METHODS[task.kind]
    fn = getattr(model, method, None)
    if fn is None:
        raise ModelError(
            f"model {getattr(model, 'name', model)!r} cannot do task {task.name!r} "
            f"(it has no {method}())"
        )
    return fn
