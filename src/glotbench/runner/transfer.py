"""Cross-lingual protocols of a suite: where a model's training data comes from.

XTREME (Hu et al. 2020) and XTREME-R (Ruder et al. 2021) evaluate a model
fine-tuned on one language on every other language's test set; ScandEval
(Nielsen 2023, §3.3) evaluates one representative model per language on every
language's datasets. A suite's ``transfer:`` block expresses these protocols
over the datasets of one task in several languages (datasets with the same
task form a *task group*):

``zero-shot``
    for every source language ``s`` in ``sources`` and every target dataset of
    a task group: train on the training (and validation) split of the group's
    dataset in language ``s``, test on the target's test split. The model is
    stored as ``<model>@<s>`` (one representative model per source language).
``translate-train``
    train on the target's own training split — in XTREME, English training
    data machine-translated into the target language; here whatever the
    target dataset's training split holds. Stored as ``<model>@translate-train``.
``translate-train-all``
    train on the training splits of all languages of the task group pooled,
    test on each target. Stored as ``<model>@all``.

Every run records the protocol, its source language(s) and its target
language (the run's language) in its model metadata (``transfer``); the run's
identity includes the source through the model name, so transfer runs never
collide with in-language runs, and resume, replication, Ray and shards treat
them as any other run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, field_validator

from glotbench.runner.datasets import Dataset, DatasetSpec
from glotbench.runner.errors import UnknownNameError
from glotbench.runner.models import ModelSpec
from glotbench.runner.tasks import get_task

Protocol = Literal["zero-shot", "translate-train", "translate-train-all"]
PROTOCOLS: tuple[str, ...] = ("zero-shot", "translate-train", "translate-train-all")

#: model-name suffix of each protocol (zero-shot: the source language)
SUFFIX = {"translate-train": "translate-train", "translate-train-all": "all"}


class TransferSpec(BaseModel):
    """The ``transfer:`` block of a suite."""

    model_config = ConfigDict(extra="forbid")

    protocol: Protocol = "zero-shot"
    #: zero-shot source languages (default: every language with a dataset)
    sources: list[str] | None = None

    @field_validator("sources", mode="before")
    @classmethod
    def _listify(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value


@dataclasses.dataclass(frozen=True)
class TransferPlan:
    """One (model, target dataset) cell of a protocol: the training datasets and the name."""

    model: ModelSpec
    target: DatasetSpec
    train_from: tuple[str, ...]
    source_languages: tuple[str, ...]


def task_key(spec: DatasetSpec) -> str:
    """The task group a dataset belongs to (its task's canonical name)."""
    return get_task(spec.task).name


def plan(
    transfer: TransferSpec, model: ModelSpec, datasets: Sequence[DatasetSpec]
) -> tuple[list[TransferPlan], list[str]]:
    """The cells of ``model`` under ``transfer`` over ``datasets``, and notes on skipped ones."""
    groups: dict[str, list[DatasetSpec]] = {}
    for ds in datasets:
        groups.setdefault(task_key(ds), []).append(ds)
    languages = sorted({ds.language for ds in datasets})
    sources = transfer.sources if transfer.sources is not None else languages
    unknown = sorted(set(sources) - set(languages))
    if unknown:
        raise UnknownNameError(
            f"transfer sources {', '.join(map(repr, unknown))} have no dataset; the suite's "
            f"languages are {', '.join(languages)}"
        )
    cells: list[TransferPlan] = []
    notes: list[str] = []
    for target in datasets:
        group = groups[task_key(target)]
        if transfer.protocol == "zero-shot":
            for source in sources:
                train = [ds for ds in group if ds.language == source]
                if not train:
                    notes.append(
                        f"{model.name}@{source} not run on {target.name!r}: no "
                        f"{task_key(target)} dataset in {source!r} to train on"
                    )
                    continue
                cells.append(
                    TransferPlan(
                        _named(model, f"{model.name}@{source}", transfer.protocol, (source,)),
                        target,
                        tuple(ds.name for ds in train),
                        (source,),
                    )
                )
        elif transfer.protocol == "translate-train":
            cells.append(
                TransferPlan(
                    _named(
                        model,
                        f"{model.name}@{SUFFIX[transfer.protocol]}",
                        transfer.protocol,
                        None,
                    ),
                    target,
                    (target.name,),
                    (target.language,),
                )
            )
        else:
            cells.append(
                TransferPlan(
                    _named(
                        model,
                        f"{model.name}@{SUFFIX[transfer.protocol]}",
                        transfer.protocol,
                        tuple(sorted({ds.language for ds in group})),
                    ),
                    target,
                    tuple(ds.name for ds in group),
                    tuple(sorted({ds.language for ds in group})),
                )
            )
    return cells, notes


def _named(
    model: ModelSpec, name: str, protocol: str, sources: tuple[str, ...] | None
) -> ModelSpec:
    """A copy of ``model`` under ``name``, its metadata saying the protocol and sources.

    ``sources`` None: the target's own language (translate-train), filled in per run.
    """
    meta = {
        **model.metadata,
        "base_model": model.name,
        "transfer_protocol": protocol,
    }
    if sources is not None:
        meta["source_languages"] = list(sources)
    return model.model_copy(update={"name": name, "metadata": meta})


def dataset_key(name: str, train_from: Sequence[str]) -> str:
    """Key of the dataset a job evaluates: its target, and the datasets it trains on."""
    if not train_from or tuple(train_from) == (name,):
        return name
    return f"{name}<-{'+'.join(train_from)}"


def derive(target: Dataset, sources: Sequence[Dataset]) -> Dataset:
    """``target``'s test split with the training and validation splits of ``sources``.

    Records keep their ids (prefixed with the source dataset's name when
    several sources are pooled, so ids stay unique); the label inventory is
    the union of the target's and the sources'. The content hash covers the
    new splits, so such runs never resume into in-language ones.
    """
    pooled = len(sources) > 1

    def records(ds: Dataset, split: str) -> list[dict]:
        rows = ds.split(split)
        if not pooled:
            return list(rows)
        return [{**r, "id": f"{ds.name}/{r['id']}"} for r in rows]

    task = get_task(target.task)
    every = [*target.train, *target.validation, *target.test]
    for ds in sources:
        every += [*ds.train, *ds.validation, *ds.test]
    labels = task.label_inventory(every) if task.label_field is not None else target.labels
    return dataclasses.replace(
        target,
        train=[r for ds in sources for r in records(ds, "train")],
        validation=[r for ds in sources for r in records(ds, "validation")],
        labels=tuple(labels),
        notes=[
            *target.notes,
            f"trained on {', '.join(ds.name for ds in sources)} (cross-lingual transfer)",
        ],
        _hash=None,
    )
