"""Dataset loaders and the dataset specification used by suites.

``build_dataset(spec, data_dir=...)`` loads the records (CoNLL-U, JSONL/CSV,
Hugging Face, or a ScaLA build from UD), shapes them for the task, validates
them and draws the uniform splits. See ``docs/suites.md`` for the fields.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from glotbench.runner.datasets.base import (
    DEFAULT_SPLIT_SEED,
    DEFAULT_SPLIT_SIZES,
    SPLITS,
    Dataset,
    Record,
    check_unique_ids,
    content_hash,
    uniform_splits,
)
from glotbench.runner.datasets.cldr import STARTER_LANGUAGES, build_cldr_lid
from glotbench.runner.datasets.conllu import expand_paths, join_words, load_conllu, read_conllu
from glotbench.runner.datasets.hf import load_hf
from glotbench.runner.datasets.positions import file_splits, is_positional, range_splits
from glotbench.runner.datasets.scala import build_scala
from glotbench.runner.datasets.tabular import load_table
from glotbench.runner.datasets.textgen import load_parallel, load_squad
from glotbench.runner.errors import DatasetError, UnknownNameError

LOADERS = ("conllu", "scala", "jsonl", "csv", "table", "hf", "cldr", "squad", "parallel")
#: loaders that read records in the source's order (their index is a source position);
#: scala and cldr generate and shuffle records, so they have none
ORDERED_LOADERS = ("conllu", "jsonl", "csv", "table", "hf", "squad", "parallel")


class DatasetSpec(BaseModel):
    """How to build one dataset (one entry of a suite's ``datasets`` list)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    task: str
    language: str
    loader: str = "table"
    paths: list[str] = Field(default_factory=list)
    #: Hugging Face dataset id or folder (loader: hf)
    hf: str | None = None
    hf_name: str | None = None
    hf_splits: list[str] | None = None
    #: runner field -> column of the file
    fields: dict[str, str] = Field(default_factory=dict)
    #: split sizes (train/validation/test); "predefined" uses each record's ``split`` field;
    #: "files" each file's name, a mapping of ranges positions in the source (positions.py)
    splits: dict[str, int | dict[str, Any]] | str | None = None
    split_seed: int = DEFAULT_SPLIT_SEED
    #: retrieval: file(s) of candidates (``id``, ``text``); default: the targets' texts
    pool: list[str] | None = None
    #: retrieval: k of mAP@k
    k: int = 10
    #: check that every validation/test label occurs in train (classification)
    check_labels: bool = True
    #: loader options (loader cldr: languages, phrases_per_item, max_items_per_language);
    #: task translation: source_language, target_language (default: language)
    options: dict[str, Any] = Field(default_factory=dict)
    description: str = ""
    #: keep only the first N examples of the test split (``glotbench run --limit N``)
    limit: int | None = Field(default=None, ge=1)
    #: learning curves: train on the first N examples of the training split
    #: (``protocol.train_sizes``; nested across sizes, see :func:`train_subset`)
    train_size: int | None = Field(default=None, ge=1)

    @field_validator("paths", "pool", mode="before")
    @classmethod
    def _listify(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("loader")
    @classmethod
    def _loader(cls, value: str) -> str:
        if value not in LOADERS:
            raise ValueError(f"unknown loader {value!r}; use one of {', '.join(LOADERS)}")
        return value

    def task_options(self) -> dict[str, Any]:
        from glotbench.runner.tasks import get_task

        return {"k": self.k} if get_task(self.task).kind == "retrieval" else {}

    def key(self) -> str:
        return content_hash(self.model_dump())[:16]


#: loaders whose records come from files one by one (splits from files or positions)
FILE_LOADERS = ("conllu", "jsonl", "csv", "table")


def _records_by_file(spec: DatasetSpec, base: Path | None) -> list[tuple[Path, list[Record]]]:
    """The records of each of the dataset's files, in file order (file-loader datasets)."""
    from glotbench.runner.tasks import get_task

    if spec.loader not in FILE_LOADERS or not spec.paths:
        raise DatasetError(
            f"dataset {spec.name!r}: splits from file names or positions need files "
            f"('paths') and a file loader ({', '.join(FILE_LOADERS)}), not {spec.loader}"
        )
    task = get_task(spec.task, **spec.task_options())
    groups: list[tuple[Path, list[Record]]] = []
    for path in expand_paths(spec.paths, base):
        if spec.loader == "conllu":
            ud = read_conllu(path, ner=task.name == "ner")
            groups.append((path, [task.from_conllu(r) for r in ud]))
        else:
            groups.append((path, load_table([path], fields=spec.fields)))
    return groups


def train_subset(
    train: list[Record], size: int, *, uniform: bool, seed: int, stratify: str | None, where: str
) -> list[Record]:
    """The first ``size`` training records of a learning curve, nested across sizes.

    Uniform splits are already in a label-stratified random order
    (:func:`uniform_splits`), so their prefix is taken; other splits (from files,
    positions or a ``split`` field) are put in a stratified order drawn from the
    split seed first and the chosen records keep their source order. Either way
    the subset at size k lies inside the one at size k' > k.
    """
    import numpy as np

    from glotbench.runner.datasets.base import _stratified_order

    if size > len(train):
        raise DatasetError(
            f"{where}: training size {size} is larger than the training split "
            f"({len(train)} records); lower the largest of protocol.train_sizes"
        )
    if uniform:
        return train[:size]
    labels = [r.get(stratify) for r in train] if stratify else None
    order = _stratified_order(labels, len(train), np.random.default_rng([seed, 3]))
    return [train[int(i)] for i in sorted(order[:size])]


def _records(spec: DatasetSpec, base: Path | None) -> list[Record]:
    from glotbench.runner.tasks import get_task

    task = get_task(spec.task, **spec.task_options())
    if spec.loader in ("conllu", "scala") and not spec.paths:
        raise DatasetError(f"dataset {spec.name!r}: loader {spec.loader} needs 'paths'")
    if spec.loader == "conllu":
        ud = load_conllu(spec.paths, base=base, ner=task.name == "ner")
        return [task.from_conllu(r) for r in ud]
    if spec.loader == "scala":
        if task.name != "linguistic_acceptability":
            raise DatasetError(
                f"dataset {spec.name!r}: loader scala builds linguistic_acceptability data, "
                f"not {task.name}"
            )
        return build_scala(load_conllu(spec.paths, base=base), seed=spec.split_seed)
    if spec.loader == "cldr":
        if task.name != "language_id":
            raise DatasetError(
                f"dataset {spec.name!r}: loader cldr builds language_id data, not {task.name}"
            )
        try:
            return build_cldr_lid(seed=spec.split_seed, **spec.options)
        except TypeError as exc:
            raise DatasetError(f"dataset {spec.name!r}: bad loader options: {exc}") from None
    if spec.loader == "hf":
        if not spec.hf:
            raise DatasetError(f"dataset {spec.name!r}: loader hf needs 'hf: <folder or Hub id>'")
        return load_hf(
            spec.hf, base=base, name=spec.hf_name, splits=spec.hf_splits, fields=spec.fields
        )
    if not spec.paths:
        raise DatasetError(f"dataset {spec.name!r}: loader {spec.loader} needs 'paths'")
    if spec.loader == "squad":
        return load_squad(spec.paths, base=base)
    if spec.loader == "parallel":
        return load_parallel(spec.paths, base=base)
    return load_table(spec.paths, base=base, fields=spec.fields)


def build_dataset(
    spec: DatasetSpec | dict[str, Any], *, data_dir: str | Path | None = None
) -> Dataset:
    """Load, validate and split a dataset described by ``spec``."""
    from glotbench.runner.tasks import get_task

    if isinstance(spec, dict):
        spec = DatasetSpec(**spec)
    base = Path(data_dir) if data_dir is not None else None
    task = get_task(spec.task, **spec.task_options())
    where = f"dataset {spec.name!r}"
    from_files = spec.splits == "files" or is_positional(spec.splits)
    groups = _records_by_file(spec, base) if from_files else []
    records = [r for _, rs in groups for r in rs] if from_files else _records(spec, base)
    check_unique_ids(records, where)
    for r in records:
        task.prepare(r, spec.language, spec.options)
        task.validate(r, where)
    notes: list[str] = []
    if spec.splits == "predefined":
        parts: dict[str, list[Record]] = {s: [] for s in SPLITS}
        for r in records:
            split = r.get("split")
            if split == "dev":
                split = "validation"
            if split not in parts:
                raise DatasetError(
                    f"{where}: record {r['id']!r} has split {r.get('split')!r}; with "
                    "'splits: predefined' every record needs split train/validation/test"
                )
            parts[split].append(r)
    elif spec.splits == "files":
        parts = file_splits(groups)
    elif is_positional(spec.splits):
        parts = range_splits(spec.splits, groups, where)  # type: ignore[arg-type]
    elif spec.splits is None or isinstance(spec.splits, dict):
        parts, notes = uniform_splits(
            records,
            sizes=spec.splits,  # type: ignore[arg-type]  # sizes only: ranges are handled above
            seed=spec.split_seed,
            stratify=task.label_field,
        )
    else:
        raise DatasetError(
            f"{where}: splits must be a mapping of sizes or ranges, 'predefined' or 'files'"
        )
    if spec.train_size is not None:
        parts["train"] = train_subset(
            parts["train"],
            spec.train_size,
            uniform=spec.splits is None or (isinstance(spec.splits, dict) and not from_files),
            seed=spec.split_seed,
            stratify=task.label_field,
            where=where,
        )
    if spec.limit is not None and len(parts["test"]) > spec.limit:
        notes.append(
            f"test split limited to its first {spec.limit} of {len(parts['test'])} examples"
        )
        parts["test"] = parts["test"][: spec.limit]
    pool = None
    if task.kind == "retrieval":
        pool = _pool(spec, base, records)
    if not parts["test"]:
        raise DatasetError(f"{where}: the test split is empty ({len(records)} records loaded)")
    labels = task.label_inventory(records)
    dataset = Dataset(
        name=spec.name,
        task=task.name,
        language=spec.language,
        train=parts["train"],
        validation=parts["validation"],
        test=parts["test"],
        labels=labels,
        pool=pool,
        source=", ".join(spec.paths) if spec.paths else (spec.hf or _loader_source(spec)),
        notes=notes,
        source_positions=(
            {str(r["id"]): i for i, r in enumerate(records)}
            if spec.loader in ORDERED_LOADERS
            else None
        ),
    )
    if spec.check_labels and dataset.train:
        task.check_train_labels(dataset)
    return dataset


def _loader_source(spec: DatasetSpec) -> str:
    if spec.loader == "cldr":
        from glotbench.runner.datasets.cldr import cldr_source

        return cldr_source()
    return ""


def _pool(spec: DatasetSpec, base: Path | None, records: list[Record]) -> list[Record]:
    if spec.pool:
        given = load_table(spec.pool, base=base)
        for p in given:
            if "text" not in p:
                raise DatasetError(f"dataset {spec.name!r}: pool item {p['id']!r} has no 'text'")
        return [{"id": str(p["id"]), "text": p["text"]} for p in given]
    pool: list[Record] = []
    seen: set[str] = set()
    for r in records:
        if "target_text" not in r:
            raise DatasetError(
                f"dataset {spec.name!r}: retrieval needs a 'pool' file or a 'target_text' "
                "field on each record"
            )
        for t in r["targets"]:
            if t not in seen:
                seen.add(t)
                pool.append({"id": t, "text": r["target_text"]})
    return pool


__all__ = [
    "DEFAULT_SPLIT_SEED",
    "DEFAULT_SPLIT_SIZES",
    "Dataset",
    "DatasetSpec",
    "LOADERS",
    "STARTER_LANGUAGES",
    "build_cldr_lid",
    "build_dataset",
    "build_scala",
    "content_hash",
    "expand_paths",
    "join_words",
    "load_conllu",
    "load_hf",
    "load_parallel",
    "load_squad",
    "load_table",
    "read_conllu",
    "uniform_splits",
    "UnknownNameError",
]
