"""The built-in tasks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from glotbench.ingest import attributes as attrs
from glotbench.metrics import Metric, get_metric
from glotbench.runner.datasets.base import Dataset, Record
from glotbench.runner.errors import DatasetError, ModelError
from glotbench.runner.tasks.base import MetricStats, Task, call_checked, require


class SequenceClassification(Task):
    """Text (or text pair) -> label. ScandEval reports MCC and macro-F1."""

    name = "classification"
    kind = "sequence"
    description = "sequence classification (text or text pair -> label)"
    metrics = ("mcc", "f1_macro")
    label_field = "label"
    fields: tuple[str, ...] = ("text", "label")

    def inputs(self, records: Sequence[Record]) -> list[Any]:
        return [(r["text"], r["text_pair"]) if "text_pair" in r else r["text"] for r in records]

    @staticmethod
    def _words(record: Record) -> list[str]:
        return attrs.tokens(record["text"]) + attrs.tokens(record.get("text_pair"))

    def example_attributes(self, dataset: Dataset) -> list[dict[str, Any]]:
        """sentence_length (word tokens of text and text_pair), oov_rate, label."""
        vocab = attrs.vocabulary(self._words(r) for r in dataset.train) if dataset.train else None
        rows: list[dict[str, Any]] = []
        for r in dataset.test:
            words = self._words(r)
            eid = str(r["id"])
            rows.append({"example_id": eid, "attribute": "sentence_length", "value": len(words)})
            if vocab is not None:
                rows.append(
                    {
                        "example_id": eid,
                        "attribute": "oov_rate",
                        "value": attrs.oov_rate(words, vocab),
                    }
                )
            rows.append({"example_id": eid, "attribute": "label", "value": str(r["label"])})
        return rows

    def references(self, records: Sequence[Record]) -> list[Any]:
        return [r["label"] for r in records]

    def predict(self, model: Any, records: list[Record], dataset: Dataset) -> list[Any]:
        fn = require(model, self)
        return call_checked(
            fn, self.inputs(records), [r["id"] for r in records], model.name, "test"
        )


class Sentiment(SequenceClassification):
    name = "sentiment"
    description = "sentiment classification (MCC, macro-F1)"


class LinguisticAcceptability(SequenceClassification):
    name = "linguistic_acceptability"
    description = "linguistic acceptability, e.g. ScaLA (MCC, macro-F1)"


class NLI(SequenceClassification):
    name = "nli"
    description = "natural language inference on (premise=text, hypothesis=text_pair)"
    fields = ("text", "text_pair", "label")


class LanguageIdentification(SequenceClassification):
    """Text -> language code.

    A dataset of one language reports accuracy and macro-F1. A multilingual
    dataset (language ``mul``, labels = language codes) reports macro-F1 over
    all items (language ``mul``) and, for every language in the test split,
    the **accuracy on that language's items** (its recall) as a run of that
    language. Analyses across languages then see each language as a cell,
    and the mean over languages is the macro-averaged recall (as in per-
    language LID tables, e.g. Jauhiainen et al. 2019, JAIR 65, §7).
    """

    name = "language_id"
    description = "language identification (per-language accuracy, macro-F1)"
    metrics = ("accuracy", "f1_macro")
    #: language of a dataset whose items carry their own language as the label
    MULTILINGUAL = "mul"

    def _languages(self, records: Sequence[Record]) -> list[str]:
        return sorted({str(r["label"]) for r in records})

    def result_keys(self, dataset: Dataset) -> list[tuple[str, str]]:
        if dataset.language != self.MULTILINGUAL:
            return super().result_keys(dataset)
        macro = self.metric("f1_macro", dataset).name
        accuracy = get_metric("accuracy").name
        return [(macro, dataset.language)] + [
            (accuracy, lang) for lang in self._languages(dataset.test)
        ]

    def statistics(
        self, predictions: Sequence[Any], records: Sequence[Record], dataset: Dataset
    ) -> list[MetricStats]:
        if dataset.language != self.MULTILINGUAL:
            return super().statistics(predictions, records, dataset)
        refs = self.references(records)
        preds = list(predictions)
        macro = self.metric("f1_macro", dataset)
        out = [MetricStats(macro, macro.stats(preds, refs))]
        accuracy = get_metric("accuracy")
        gold = np.asarray([str(r) for r in refs], dtype=object)
        for lang in self._languages(records):
            rows = np.flatnonzero(gold == lang)
            stats = accuracy.stats([preds[i] for i in rows], [refs[i] for i in rows])
            out.append(MetricStats(accuracy, stats, language=lang, rows=rows))
        return out


class TokenClassification(Task):
    kind = "token"
    label_field = None
    fields = ("tokens", "tags")

    def validate(self, record: Record, where: str) -> None:
        super().validate(record, where)
        if len(record["tokens"]) != len(record["tags"]):
            raise DatasetError(
                f"{where}: record {record['id']!r} has {len(record['tokens'])} tokens but "
                f"{len(record['tags'])} tags"
            )

    def label_inventory(self, records: Sequence[Record]) -> tuple[Any, ...]:
        return tuple(sorted({t for r in records for t in r["tags"]}))

    def references(self, records: Sequence[Record]) -> list[Any]:
        return [list(r["tags"]) for r in records]

    @staticmethod
    def _vocabulary(dataset: Dataset) -> set[str] | None:
        return attrs.vocabulary(r["tokens"] for r in dataset.train) if dataset.train else None

    def example_attributes(self, dataset: Dataset) -> list[dict[str, Any]]:
        """sentence_length (tokens) and oov_rate (tokens unseen in train)."""
        vocab = self._vocabulary(dataset)
        rows: list[dict[str, Any]] = []
        for r in dataset.test:
            eid = str(r["id"])
            rows.append(
                {"example_id": eid, "attribute": "sentence_length", "value": len(r["tokens"])}
            )
            if vocab is not None:
                rows.append(
                    {
                        "example_id": eid,
                        "attribute": "oov_rate",
                        "value": attrs.oov_rate(list(r["tokens"]), vocab),
                    }
                )
        return rows

    def predict(self, model: Any, records: list[Record], dataset: Dataset) -> list[Any]:
        fn = require(model, self)
        out = call_checked(
            fn, [list(r["tokens"]) for r in records], [r["id"] for r in records], model.name, "test"
        )
        for r, tags in zip(records, out, strict=True):
            if len(tags) != len(r["tokens"]):
                raise ModelError(
                    f"model {model.name!r} returned {len(tags)} tags for the "
                    f"{len(r['tokens'])} tokens of item {r['id']!r}"
                )
        return [list(t) for t in out]


class NER(TokenClassification):
    name = "ner"
    description = "named-entity recognition, IOB2 spans (micro-F1, micro-F1 without MISC)"
    metrics = ("ner_f1", "ner_f1_no_misc")

    def from_conllu(self, record: Record) -> Record:
        if "ner" not in record:
            raise DatasetError("task ner from CoNLL-U needs 'ner: true' (name=B-PER in MISC)")
        return {"id": record["id"], "tokens": record["tokens"], "tags": record["ner"]}

    #: ``options: {ner_labels: ...}`` of a dataset: the source's tags as they are, or
    #: mapped to ScandEval's PER/LOC/ORG/MISC (:mod:`glotbench.metrics.ner_labels`)
    LABEL_SCHEMES = ("as-is", "scandeval")

    def prepare(self, record: Record, language: str, options: dict[str, Any]) -> None:
        """With ``ner_labels: scandeval``, map the tags to ScandEval's four types (NorNE's
        GPE_LOC -> LOC, GPE_ORG -> ORG, PROD/DRV/EVT -> MISC, as EuroEval converts it)."""
        scheme = options.get("ner_labels", "as-is")
        if scheme not in self.LABEL_SCHEMES:
            raise DatasetError(
                f"options.ner_labels {scheme!r} is not one of {', '.join(self.LABEL_SCHEMES)}"
            )
        if scheme == "scandeval":
            from glotbench.metrics.ner_labels import scandeval_tags

            record["tags"] = scandeval_tags(record["tags"])

    def example_attributes(self, dataset: Dataset) -> list[dict[str, Any]]:
        """Sentence attributes, and per gold entity unit its length, label and OOV share."""
        rows = super().example_attributes(dataset)
        vocab = self._vocabulary(dataset)
        for r in dataset.test:
            for unit, label, start, end, _ in attrs.entity_units(r["tags"], r["tags"]):
                rows.extend(
                    self._unit_rows(str(r["id"]), unit, r["tokens"], label, start, end, vocab)
                )
        return rows

    @staticmethod
    def _unit_rows(
        eid: str, unit: str, tokens: Sequence[str], label: str, start: int, end: int, vocab: Any
    ) -> list[dict[str, Any]]:
        values = attrs.entity_attributes(tokens, label, start, end, vocab)
        return [
            {"example_id": eid, "unit": unit, "attribute": name, "value": value}
            for name, value in values.items()
        ]

    def unit_statistics(
        self,
        predictions: Sequence[Any],
        records: Sequence[Record],
        metric: Metric,
        dataset: Dataset,
    ) -> tuple[list[tuple[str, str, np.ndarray]], list[dict[str, Any]]] | None:
        """Entity units (:func:`glotbench.ingest.attributes.entity_units`) of a span-F1 run."""
        if metric.stat_names() != ("correct", "predicted", "gold"):
            return None
        drop_misc = bool(getattr(metric, "drop_misc", False))
        vocab = self._vocabulary(dataset)
        stats: list[tuple[str, str, np.ndarray]] = []
        rows: list[dict[str, Any]] = []
        for pred, r in zip(predictions, records, strict=True):
            eid = str(r["id"])
            for unit, label, start, end, values in attrs.entity_units(
                pred, r["tags"], drop_misc=drop_misc
            ):
                stats.append((eid, unit, values))
                if values[2] == 0:  # a predicted entity that is not gold: its own attributes
                    rows.extend(self._unit_rows(eid, unit, r["tokens"], label, start, end, vocab))
        return stats, rows


class POS(TokenClassification):
    name = "pos"
    description = "part-of-speech tagging with UPOS (token accuracy)"
    metrics = ("token_accuracy",)

    def from_conllu(self, record: Record) -> Record:
        return {"id": record["id"], "tokens": record["tokens"], "tags": record["upos"]}


class ExtractiveQA(Task):
    name = "qa"
    kind = "qa"
    description = "extractive question answering (SQuAD F1 and exact match)"
    metrics = ("squad_f1", "squad_exact_match")
    fields: tuple[str, ...] = ("context", "question", "answers")

    def validate(self, record: Record, where: str) -> None:
        super().validate(record, where)
        answers = record["answers"]
        if isinstance(answers, dict):  # SQuAD layout {"text": [...], "answer_start": [...]}
            record["answers"] = list(answers.get("text", []))
        elif isinstance(answers, str):
            record["answers"] = [answers]
        if not record["answers"]:
            raise DatasetError(f"{where}: record {record['id']!r} has no gold answer")

    def references(self, records: Sequence[Record]) -> list[Any]:
        return [list(r["answers"]) for r in records]

    def example_attributes(self, dataset: Dataset) -> list[dict[str, Any]]:
        """context_length, question_length, answer_length (first gold answer), question_word."""
        rows: list[dict[str, Any]] = []
        for r in dataset.test:
            eid = str(r["id"])
            values: dict[str, Any] = {
                "context_length": len(attrs.tokens(r["context"])),
                "question_length": len(attrs.tokens(r["question"])),
                "answer_length": len(attrs.tokens(r["answers"][0])),
            }
            kind = attrs.question_word(str(r["question"]), dataset.language)
            if kind is not None:
                values["question_word"] = kind
            rows.extend({"example_id": eid, "attribute": k, "value": v} for k, v in values.items())
        return rows

    def predict(self, model: Any, records: list[Record], dataset: Dataset) -> list[Any]:
        fn = require(model, self)

        def ask(items: list[tuple[str, str]]) -> list[str]:
            return list(fn([q for q, _ in items], [c for _, c in items]))

        pairs = [(r["question"], r["context"]) for r in records]
        return [
            str(a) for a in call_checked(ask, pairs, [r["id"] for r in records], model.name, "test")
        ]


class Retrieval(Task):
    """Sentence retrieval: nearest neighbour by cosine over a candidate pool.

    Tatoeba-style accuracy (the top candidate is a target) and mAP@k for
    multi-target pools (LAReQA). Records: ``query`` and ``targets`` (pool ids).
    """

    name = "retrieval"
    kind = "retrieval"
    description = "sentence retrieval by cosine nearest neighbour (accuracy@1, mAP@k)"
    metrics = ("accuracy", "map@10")
    fields = ("query", "targets")

    def __init__(self, k: int = 10) -> None:
        self.k = k
        self.metrics = ("accuracy", f"map@{k}")

    def validate(self, record: Record, where: str) -> None:
        super().validate(record, where)
        if isinstance(record["targets"], str | int):
            record["targets"] = [record["targets"]]
        record["targets"] = [str(t) for t in record["targets"]]

    def references(self, records: Sequence[Record]) -> list[Any]:
        return [list(r["targets"]) for r in records]

    def predict(self, model: Any, records: list[Record], dataset: Dataset) -> list[Any]:
        if not dataset.pool:
            raise DatasetError(f"retrieval dataset {dataset.name!r} has no candidate pool")
        fn = require(model, self)
        pool_ids = [str(p["id"]) for p in dataset.pool]
        pool_vec = np.asarray(
            call_checked(fn, [p["text"] for p in dataset.pool], pool_ids, model.name, "pool"),
            dtype=np.float64,
        )
        query_vec = np.asarray(
            call_checked(
                fn, [r["query"] for r in records], [r["id"] for r in records], model.name, "query"
            ),
            dtype=np.float64,
        )
        sims = _normalise(query_vec) @ _normalise(pool_vec).T
        depth = min(max(self.k, 1), len(pool_ids))
        order = np.argsort(-sims, axis=1, kind="stable")[:, :depth]
        return [[pool_ids[j] for j in row] for row in order]

    def statistics(
        self, predictions: Sequence[Any], records: Sequence[Record], dataset: Dataset
    ) -> list[MetricStats]:
        refs = self.references(records)
        top1 = [ranked[0] if ranked else "" for ranked in predictions]
        acc_refs = [t if t in gold else gold[0] for t, gold in zip(top1, refs, strict=True)]
        acc = get_metric("accuracy")
        mapk = get_metric(f"map@{self.k}")
        return [
            MetricStats(acc, acc.stats(top1, acc_refs)),
            MetricStats(mapk, mapk.stats(list(predictions), refs)),
        ]


def _normalise(x: np.ndarray) -> np.ndarray:
    if x.ndim != 2:
        raise ModelError(
            f"embeddings must be a 2-d array (items × dimensions), got shape {x.shape}"
        )
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms == 0, 1.0, norms)


class Parsing(Task):
    """Dependency parsing on gold tokenisation (LAS/UAS, CoNLL 2018).

    Records hold ``tokens``, ``heads`` and ``deprels``; from CoNLL-U also the
    gold ``upos`` and ``lemmas`` that parser models read (``parser``,
    ``parse-baseline``). A model's ``parse(records)`` answers one
    ``(head, deprel)`` pair per word; the ``las``/``uas`` metrics turn each
    sentence into ``(correct, words)``.
    """

    name = "parsing"
    kind = "parsing"
    description = "dependency parsing (LAS, UAS): a parser model or a CoNLL-U predictions file"
    metrics = ("las", "uas")
    fields = ("tokens", "heads", "deprels")

    def from_conllu(self, record: Record) -> Record:
        return {
            "id": record["id"],
            "tokens": record["tokens"],
            "heads": record["heads"],
            "deprels": record["deprels"],
            # parser inputs (gold POS and lemmas, the CoNLL-X setting); not evaluated
            "upos": record.get("upos"),
            "lemmas": record.get("lemmas"),
        }

    def references(self, records: Sequence[Record]) -> list[Any]:
        return [list(zip(r["heads"], r["deprels"], strict=True)) for r in records]

    def predict(self, model: Any, records: list[Record], dataset: Dataset) -> list[Any]:
        fn = require(model, self)
        out = call_checked(fn, records, [r["id"] for r in records], model.name, "test")
        for r, arcs in zip(records, out, strict=True):
            if len(arcs) != len(r["tokens"]):
                raise ModelError(
                    f"model {model.name!r} returned {len(arcs)} arcs for the "
                    f"{len(r['tokens'])} words of item {r['id']!r}"
                )
        return out
