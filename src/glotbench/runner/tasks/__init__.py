"""Task registry: ``get_task(name)``; see :mod:`glotbench.runner.tasks.base`."""

from __future__ import annotations

from typing import Any

from glotbench.runner.errors import UnknownNameError
from glotbench.runner.tasks.base import KIND_METHODS, MetricStats, Task, call_checked
from glotbench.runner.tasks.builtin import (
    NER,
    NLI,
    POS,
    ExtractiveQA,
    LanguageIdentification,
    LinguisticAcceptability,
    Parsing,
    Retrieval,
    Sentiment,
    SequenceClassification,
)
from glotbench.runner.tasks.generation import AbstractiveQA, Translation

TASKS: dict[str, type[Task]] = {
    cls.name: cls
    for cls in (
        SequenceClassification,
        Sentiment,
        LinguisticAcceptability,
        NLI,
        LanguageIdentification,
        NER,
        POS,
        ExtractiveQA,
        AbstractiveQA,
        Translation,
        Retrieval,
        Parsing,
    )
}
ALIASES = {
    "la": "linguistic_acceptability",
    "scala": "linguistic_acceptability",
    "langid": "language_id",
    "generative_qa": "abstractive_qa",
    "mt": "translation",
}


def get_task(name: str, **options: Any) -> Task:
    """The task registered as ``name`` (``options`` e.g. ``k`` for retrieval)."""
    key = ALIASES.get(name.strip().lower(), name.strip().lower())
    if key not in TASKS:
        raise UnknownNameError(f"unknown task {name!r}; known tasks: {', '.join(sorted(TASKS))}")
    return TASKS[key](**options)


def task_names() -> list[str]:
    return sorted(TASKS)


__all__ = ["KIND_METHODS", "MetricStats", "TASKS", "Task", "call_checked", "get_task", "task_names"]
