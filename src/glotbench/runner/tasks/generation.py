"""Tasks answered with free text: abstractive QA and machine translation.

* ``abstractive_qa`` (kind ``qa``): a question (and optionally a context) →
  an answer string, scored like extractive QA with SQuAD v1.1 token F1 and
  exact match (:mod:`glotbench.metrics.qa`; Rajpurkar et al. 2016), the
  answer need not be a span of the context.
* ``translation`` (kind ``translation``): a source sentence → a translation,
  scored with corpus chrF and BLEU from sacrebleu's per-sentence sufficient
  statistics (:mod:`glotbench.metrics.translation`; Popović 2015, Papineni
  et al. 2002, Post 2018). chrF comes first (the primary metric): it is the
  better-correlated of the two across languages (Kocmi et al. 2021, *To Ship
  or Not to Ship*, §5). A record's ``target`` is one reference or a list
  (multi-reference BLEU/chrF).

Models answer translation through ``translate(sources, source_languages,
target_languages)`` (one language pair per item). Each record carries its
``source_language`` and ``target_language``: from the record itself, else
the dataset's ``options`` (``source_language``, ``target_language``), and the
target language defaults to the dataset's ``language`` (the language the
runs are stored under, so analyses across languages compare target
languages).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from glotbench.ingest import attributes as attrs
from glotbench.metrics import Metric, get_metric
from glotbench.runner.datasets.base import Dataset, Record
from glotbench.runner.errors import DatasetError
from glotbench.runner.tasks.base import Task, call_checked, require
from glotbench.runner.tasks.builtin import ExtractiveQA


class AbstractiveQA(ExtractiveQA):
    """Question (+ optional context) → free-text answer; SQuAD F1 and exact match."""

    name = "abstractive_qa"
    description = "abstractive / generative question answering (SQuAD F1 and exact match)"
    fields = ("question", "answers")

    def example_attributes(self, dataset: Dataset) -> list[dict[str, Any]]:
        """question_length, answer_length (first gold answer), context_length, question_word."""
        rows: list[dict[str, Any]] = []
        for r in dataset.test:
            eid = str(r["id"])
            values: dict[str, Any] = {
                "question_length": len(attrs.tokens(r["question"])),
                "answer_length": len(attrs.tokens(r["answers"][0])),
            }
            if r.get("context"):
                values["context_length"] = len(attrs.tokens(r["context"]))
            kind = attrs.question_word(str(r["question"]), dataset.language)
            if kind is not None:
                values["question_word"] = kind
            rows.extend({"example_id": eid, "attribute": k, "value": v} for k, v in values.items())
        return rows

    def predict(self, model: Any, records: list[Record], dataset: Dataset) -> list[Any]:
        fn = require(model, self)

        def ask(items: list[tuple[str, str]]) -> list[str]:
            return list(fn([q for q, _ in items], [c for _, c in items]))

        pairs = [(str(r["question"]), str(r.get("context") or "")) for r in records]
        return [
            str(a) for a in call_checked(ask, pairs, [r["id"] for r in records], model.name, "test")
        ]


class Translation(Task):
    """Source sentence → translation; corpus chrF, chrF++ and BLEU as sacrebleu (0–100)."""

    name = "translation"
    kind = "translation"
    description = "machine translation (corpus chrF, chrF++ and BLEU as sacrebleu, 0-100)"
    metrics = ("chrf", "chrf++", "bleu")
    fields = ("source", "target", "source_language", "target_language")

    def prepare(self, record: Record, language: str, options: dict[str, Any]) -> None:
        """Fill a missing ``source_language`` / ``target_language`` from the dataset."""
        if record.get("source_language") in (None, "") and options.get("source_language"):
            record["source_language"] = str(options["source_language"])
        if record.get("target_language") in (None, ""):
            record["target_language"] = str(options.get("target_language") or language)

    def validate(self, record: Record, where: str) -> None:
        if record.get("source_language") in (None, ""):
            raise DatasetError(
                f"{where}: record {record.get('id')!r} has no source language; give each record "
                "a 'source_language' field or the dataset 'options: {source_language: xx}'"
            )
        super().validate(record, where)
        target = record["target"]
        refs = [target] if isinstance(target, str) else list(target)
        if not refs or not all(isinstance(t, str) for t in refs):
            raise DatasetError(
                f"{where}: record {record['id']!r}: 'target' must be a reference string or a "
                "non-empty list of them"
            )
        record["target"] = refs
        if not isinstance(record["source"], str):
            raise DatasetError(f"{where}: record {record['id']!r}: 'source' must be a string")

    def references(self, records: Sequence[Record]) -> list[Any]:
        return [list(r["target"]) for r in records]

    def metric(self, name: str, dataset: Dataset) -> Metric:
        """BLEU into Chinese uses sacrebleu's ``zh`` tokeniser (as ``sacrebleu -l xx-zh`` does)."""
        if name == "bleu" and _base_language(dataset.language) == "zh":
            return get_metric(name, tokenize="zh")
        return super().metric(name, dataset)

    def example_attributes(self, dataset: Dataset) -> list[dict[str, Any]]:
        """source_length and reference_length (word tokens of the first reference)."""
        rows: list[dict[str, Any]] = []
        for r in dataset.test:
            eid = str(r["id"])
            rows.append(
                {
                    "example_id": eid,
                    "attribute": "source_length",
                    "value": len(attrs.tokens(r["source"])),
                }
            )
            rows.append(
                {
                    "example_id": eid,
                    "attribute": "reference_length",
                    "value": len(attrs.tokens(r["target"][0])),
                }
            )
        return rows

    def predict(self, model: Any, records: list[Record], dataset: Dataset) -> list[Any]:
        fn = require(model, self)

        def ask(items: list[tuple[str, str, str]]) -> list[str]:
            return list(
                fn([s for s, _, _ in items], [a for _, a, _ in items], [b for *_, b in items])
            )

        items = [
            (str(r["source"]), str(r["source_language"]), str(r["target_language"]))
            for r in records
        ]
        return [
            str(t) for t in call_checked(ask, items, [r["id"] for r in records], model.name, "test")
        ]


def _base_language(code: str) -> str:
    """``zh`` of ``zh``, ``zh-Hans``, ``zho_Hans``-style codes' first part (lower-cased)."""
    base = code.replace("_", "-").split("-")[0].lower()
    return "zh" if base in ("zh", "zho", "cmn") else base
