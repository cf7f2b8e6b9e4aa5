"""Benchmark suites: a YAML file of datasets, models and a replication protocol.

See ``docs/suites.md`` for the format. :func:`load_suite` reads a built-in
suite by name (``glotbench.suites``) or any YAML file.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from glotbench.errors import InputError
from glotbench.runner.datasets import SPLITS, DatasetSpec
from glotbench.runner.datasets.positions import check_ranges, is_positional
from glotbench.runner.errors import UnknownNameError
from glotbench.runner.models import REGISTRY, ModelSpec
from glotbench.runner.protocol import SPEED_CALLS, Job, Protocol
from glotbench.runner.tasks import get_task
from glotbench.runner.transfer import TransferSpec, plan


class Suite(BaseModel):
    """A benchmark suite."""

    model_config = ConfigDict(extra="forbid")

    name: str
    #: the suite's title, shown as the title of leaderboards and reports of its runs
    title: str = ""
    description: str = ""
    #: whether dataset paths are relative to a --data-dir (else to the suite file)
    needs_data_dir: bool = False
    protocol: Protocol = Field(default_factory=Protocol)
    #: cross-lingual protocol (zero-shot, translate-train, translate-train-all)
    transfer: TransferSpec | None = None
    #: default split sizes for datasets that do not set their own
    splits: dict[str, int | dict[str, Any]] | str | None = None
    datasets: list[DatasetSpec]
    models: list[ModelSpec]
    #: folder that relative paths resolve against (set by load_suite)
    base_dir: str | None = None
    #: accept dataset paths outside --data-dir (absolute, or leaving it with ``..``)
    allow_outside_paths: bool = False

    def select(
        self,
        *,
        models: list[str] | None = None,
        languages: list[str] | None = None,
        tasks: list[str] | None = None,
        datasets: list[str] | None = None,
        iterations: int | None = None,
        split_sizes: dict[str, int] | None = None,
        speed_seconds: float | None = None,
        speed: bool = True,
        limit: int | None = None,
        train_sizes: list[int] | None = None,
    ) -> Suite:
        """A copy restricted to the named models / languages / tasks / datasets.

        ``split_sizes`` (e.g. ``{"train": 128, "test": 256}``) replaces those
        sizes of every dataset's uniform splits — a smaller, CI-sized run; the
        datasets' content hashes change with their splits, so such runs never
        resume into full-size ones. ``speed_seconds`` replaces the speed
        benchmark's seconds per document (and caps its warm-up); ``speed=False``
        turns the benchmark off. ``limit`` keeps the first N examples of every
        dataset's test split (lm-eval's ``--limit``; a new dataset hash, as above).
        ``train_sizes`` replaces ``protocol.train_sizes`` (learning curves).
        """

        def check(wanted: list[str] | None, have: list[str], what: str) -> None:
            unknown = sorted(set(wanted or []) - set(have))
            if unknown:
                raise UnknownNameError(
                    f"unknown {what} {', '.join(map(repr, unknown))} in suite {self.name!r}; "
                    f"it has: {', '.join(sorted(set(have)))}"
                )

        check(models, [m.name for m in self.models], "model(s)")
        check(
            languages,
            [lang for d in self.datasets for lang in (d.language, *_item_languages(d))],
            "language(s)",
        )
        check(datasets, [d.name for d in self.datasets], "dataset(s)")
        if tasks:
            tasks = [get_task(t).name for t in tasks]
            check(tasks, [get_task(d.task).name for d in self.datasets], "task(s)")
        out = self.model_copy(deep=True)
        out.models = [m for m in out.models if not models or m.name in models]
        out.datasets = [
            _restrict_items(d, languages) if languages and d.language not in languages else d
            for d in out.datasets
            if (
                not languages or d.language in languages or set(_item_languages(d)) & set(languages)
            )
            and (not datasets or d.name in datasets)
            and (not tasks or get_task(d.task).name in tasks)
        ]
        if iterations is not None:
            out.protocol = out.protocol.model_copy(update={"iterations": iterations})
        if not speed:
            out.protocol = out.protocol.model_copy(update={"speed_iterations": 0})
        elif speed_seconds is not None:
            if speed_seconds < 0:
                raise InputError("the speed benchmark's seconds must be non-negative")
            warmup = min(out.protocol.speed_warmup_seconds, speed_seconds)
            out.protocol = out.protocol.model_copy(
                update={"speed_seconds": speed_seconds, "speed_warmup_seconds": warmup}
            )
        if split_sizes:
            sizes = check_split_sizes(split_sizes)
            resized = []
            for d in out.datasets:
                if is_positional(d.splits):  # ranges: keep the first N of each (train_sizes)
                    ranges = {k: dict(v) for k, v in d.splits.items()}  # type: ignore[union-attr,arg-type]
                    for name, size in sizes.items():
                        if name in ranges:
                            ranges[name]["size"] = size
                    resized.append(d.model_copy(update={"splits": ranges}))
                    continue
                if d.splits in ("predefined", "files"):
                    raise InputError(
                        f"dataset {d.name!r} uses {d.splits} splits; split sizes cannot be "
                        "changed (drop the size option or select other datasets)"
                    )
                current = dict(d.splits) if isinstance(d.splits, dict) else {}
                resized.append(d.model_copy(update={"splits": {**current, **sizes}}))
            out.datasets = resized
        if train_sizes is not None:
            out.protocol = out.protocol.model_copy(
                update={"train_sizes": check_train_sizes(train_sizes)}
            )
        if limit is not None:
            if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
                raise InputError(f"the limit must be a positive number of examples, got {limit!r}")
            out.datasets = [d.model_copy(update={"limit": limit}) for d in out.datasets]
        return out

    def jobs(self, *, include_optional: bool | None = None) -> tuple[list[Job], list[str]]:
        """All (model, dataset, iteration) jobs, and notes on skipped models."""
        from glotbench.runner.models import build_model

        notes: list[str] = []
        out: list[Job] = []
        for model in self.models:
            kind = REGISTRY.get(model.kind)
            if kind is None or include_optional:
                missing = []
            else:  # include_optional False: as if no extra were installed
                missing = kind.missing() if include_optional is None else list(kind.requires)
            if missing and kind is not None:
                if not model.optional:
                    raise InputError(
                        f"model {model.name!r} (kind {model.kind}) needs "
                        f"{' and '.join(missing)}, not installed: {kind.install_hint()}"
                        + (" (on Linux with a CUDA GPU)" if kind.extra == "vllm" else ""),
                        field="models",
                    )
                notes.append(
                    f"model {model.name!r} skipped: it needs {' and '.join(missing)} "
                    f"({kind.install_hint()})"
                )
                continue
            adapter = None
            cells: list[tuple[ModelSpec, DatasetSpec, tuple[str, ...]]]
            if self.transfer is None:
                cells = [(model, ds, ()) for ds in self.datasets]
            else:
                planned, skipped = plan(self.transfer, model, self.datasets)
                notes.extend(skipped)
                cells = [(c.model, c.target, c.train_from) for c in planned]
            cells = [(s, sized, t) for s, d, t in cells for sized in self._sized(d, t)]
            for spec, ds, train_from in cells:
                task = get_task(ds.task, **ds.task_options())
                if model.tasks and task.name not in {get_task(t).name for t in model.tasks}:
                    continue
                if model.languages and ds.language not in model.languages:
                    continue
                if adapter is None:
                    adapter = build_model(model, base=self.base_dir)
                if not adapter.supports(task):
                    continue
                for i in range(self.protocol.iterations):
                    out.append(
                        Job(
                            model=spec,
                            dataset=ds,
                            iteration=i,
                            protocol=self.protocol,
                            train_from=train_from,
                        )
                    )
        return mark_speed_jobs(out), notes

    def _sized(self, ds: DatasetSpec, train_from: tuple[str, ...]) -> list[DatasetSpec]:
        """``ds`` once per training size of a learning curve (``protocol.train_sizes``).

        Uniform splits draw a training split of the largest size, so the test and
        validation splits are the same at every size and each size's training
        examples are the first k of it (nested; :func:`~glotbench.runner.datasets.train_subset`).
        """
        sizes = self.protocol.train_sizes
        if not sizes:
            return [ds]
        if train_from:
            raise InputError(
                "protocol.train_sizes (learning curves) cannot be combined with a "
                "cross-lingual transfer protocol"
            )
        splits = ds.splits
        if splits is None or (isinstance(splits, dict) and not is_positional(splits)):
            splits = {**(splits or {}), "train": max(sizes)}
        return [ds.model_copy(update={"splits": splits, "train_size": k}) for k in sizes]


def check_split_sizes(sizes: dict[str, int]) -> dict[str, int]:
    """Validated split sizes: names among train/validation/test, non-negative integers."""
    out: dict[str, int] = {}
    for name, size in sizes.items():
        if name not in SPLITS:
            raise InputError(f"unknown split {name!r} in split sizes; use {', '.join(SPLITS)}")
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise InputError(f"split size of {name} must be a non-negative integer, got {size!r}")
        out[name] = size
    return out


def check_train_sizes(sizes: list[int]) -> list[int]:
    """Learning-curve sizes: distinct positive integers, returned in increasing order."""
    if not sizes:
        raise InputError("train sizes must name at least one size, e.g. 64,128,256")
    for size in sizes:
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise InputError(f"a training size must be a positive integer, got {size!r}")
    if len(set(sizes)) != len(sizes):
        raise InputError(f"train sizes must be distinct, got {sizes}")
    return sorted(sizes)


def parse_train_sizes(text: str) -> list[int]:
    """``"64,128,256"`` -> ``[64, 128, 256]`` (validated)."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts or not all(p.isdigit() for p in parts):
        raise InputError(f"train sizes must look like '64,128,256'; cannot read {text!r}")
    return check_train_sizes([int(p) for p in parts])


def parse_split_sizes(text: str) -> dict[str, int]:
    """``"train=128,test=256"`` -> ``{"train": 128, "test": 256}`` (validated)."""
    sizes: dict[str, int] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        name, sep, value = part.partition("=")
        if not sep or not value.strip().lstrip("-").isdigit():
            raise InputError(
                f"split sizes must look like 'train=128,test=256'; cannot read {part!r}"
            )
        sizes[name.strip()] = int(value)
    if not sizes:
        raise InputError("split sizes must name at least one split, e.g. 'train=128,test=256'")
    return check_split_sizes(sizes)


def _item_languages(spec: DatasetSpec) -> tuple[str, ...]:
    """Languages of the items of a multilingual (``mul``) CLDR dataset; else none."""
    if spec.loader != "cldr":
        return ()
    from glotbench.runner.datasets.cldr import STARTER_LANGUAGES

    return tuple(spec.options.get("languages", STARTER_LANGUAGES))


def _restrict_items(spec: DatasetSpec, languages: list[str]) -> DatasetSpec:
    """A multilingual dataset restricted to ``languages`` (a new dataset: a new name)."""
    keep = [lang for lang in _item_languages(spec) if lang in languages]
    if len(keep) < 2:
        raise UnknownNameError(
            f"dataset {spec.name!r} identifies languages: languages must name at least two "
            f"of its languages ({', '.join(_item_languages(spec))}), got {', '.join(keep)}"
        )
    return spec.model_copy(
        update={
            "name": f"{spec.name}:{'+'.join(keep)}",
            "options": {**spec.options, "languages": keep},
        }
    )


def builtin_suites() -> dict[str, Path]:
    """Names and files of the suites shipped in ``glotbench.suites``."""
    from importlib import resources

    folder = resources.files("glotbench.suites")
    return {
        Path(str(p)).stem: Path(str(p))
        for p in folder.iterdir()
        if str(p).endswith((".yaml", ".yml"))
    }


def load_suite(name_or_path: str | Path, *, data_dir: str | Path | None = None) -> Suite:
    """A built-in suite by name or a suite YAML file; ``data_dir`` roots relative paths."""
    path = Path(name_or_path)
    builtin = builtin_suites()
    if not path.exists():
        if str(name_or_path) in builtin:
            path = builtin[str(name_or_path)]
        else:
            raise UnknownNameError(
                f"no suite {str(name_or_path)!r}: not a file, and the built-in suites are "
                f"{', '.join(sorted(builtin))}"
            )
    from glotbench.ingest.yaml_files import key_lines, load_yaml

    # a key given twice (two 'models:' lists) is refused, not silently the last one
    text = path.read_text(encoding="utf-8")
    raw: Any = load_yaml(text, str(path))
    if not isinstance(raw, dict):
        raise InputError("a suite file must be a YAML mapping", path=str(path))
    lines = key_lines(text, str(path))
    raw.setdefault("name", path.stem)
    default_splits = raw.get("splits")
    for ds in raw.get("datasets") or []:
        if isinstance(ds, dict) and default_splits is not None:
            ds.setdefault("splits", default_splits)
    try:
        suite = Suite(**raw)
    except ValidationError as exc:
        raise schema_error(exc, str(path), lines) from None
    check_suite_values(suite, str(path), lines)
    _check_names(suite, str(path))
    if suite.transfer is not None and suite.transfer.sources is not None:
        languages = sorted({ds.language for ds in suite.datasets})
        unknown = sorted(set(suite.transfer.sources) - set(languages))
        if unknown:
            raise InputError(
                f"transfer source language(s) {', '.join(map(repr, unknown))} have no dataset; "
                f"the suite's languages are {', '.join(languages)}",
                path=str(path),
                field="transfer.sources",
            )
    if suite.needs_data_dir:
        if data_dir is None:
            raise InputError(
                f"suite {suite.name!r} reads data from a folder; pass data_dir=DIR "
                "(e.g. the folder holding ud/ and norne/)"
            )
        base = Path(data_dir)
        if not base.is_dir():
            raise InputError("the data folder does not exist", path=str(base))
        suite.base_dir = str(base.resolve())
        _confine_paths(suite, str(path))
    else:
        suite.base_dir = str(Path(data_dir).resolve()) if data_dir else str(path.parent.resolve())
        if data_dir:
            _confine_paths(suite, str(path))
    return suite


def schema_error(exc: ValidationError, path: str, lines: dict[tuple[Any, ...], int]) -> InputError:
    """The first schema error of a suite as an InputError naming its file, line and key."""
    from glotbench.ingest.yaml_files import line_of

    errors = exc.errors()
    first = errors[0]
    loc = tuple(first["loc"])
    field = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
    if first["type"] == "extra_forbidden":
        message = f"unknown key {loc[-1]!r}"
    else:
        given = first.get("input")
        message = f"{first['msg']}" + (
            f", got {given!r}" if not isinstance(given, (dict, list)) else ""
        )
    more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
    return InputError(message + more, path=path, line=line_of(lines, loc), field=field)


def check_suite_values(suite: Suite, path: str, lines: dict[tuple[Any, ...], int]) -> None:
    """What the schema's types cannot say, checked when the suite is read: known tasks and
    model kinds, split sizes, and every model's options against its adapter
    (:mod:`glotbench.runner.models.options`; numbers written as text become numbers)."""
    from glotbench.ingest.yaml_files import line_of
    from glotbench.runner.models.options import OptionError, check_options

    def fail(message: str, loc: tuple[Any, ...]) -> InputError:
        field = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
        return InputError(message, path=path, line=line_of(lines, loc), field=field)

    if isinstance(suite.splits, dict) and not is_positional(suite.splits):
        try:
            check_split_sizes(suite.splits)  # type: ignore[arg-type]
        except InputError as exc:
            raise fail(exc.reason, ("splits",)) from None
    if suite.protocol.train_sizes is not None:
        try:
            suite.protocol.train_sizes = check_train_sizes(suite.protocol.train_sizes)
        except InputError as exc:
            raise fail(exc.reason, ("protocol", "train_sizes")) from None
    for i, ds in enumerate(suite.datasets):
        try:
            get_task(ds.task)  # unknown task -> clear error now
        except UnknownNameError as exc:
            raise fail(str(exc), ("datasets", i, "task")) from None
        if is_positional(ds.splits):
            problem = check_ranges(ds.splits)  # type: ignore[arg-type]
            if problem:
                raise fail(problem, ("datasets", i, "splits"))
        elif isinstance(ds.splits, dict):
            try:
                check_split_sizes(ds.splits)  # type: ignore[arg-type]
            except InputError as exc:
                raise fail(exc.reason, ("datasets", i, "splits")) from None
        elif isinstance(ds.splits, str) and ds.splits not in ("predefined", "files"):
            raise fail(
                "splits must be a mapping of sizes or ranges, 'predefined' or 'files', "
                f"got {ds.splits!r}",
                ("datasets", i, "splits"),
            )
        if ds.k < 1:
            raise fail(f"k must be a positive integer, got {ds.k}", ("datasets", i, "k"))
    for i, model in enumerate(suite.models):
        if model.kind not in REGISTRY:
            raise fail(
                f"unknown model kind {model.kind!r}; known kinds: {', '.join(REGISTRY)}",
                ("models", i, "kind"),
            )
        try:
            model.options = check_options(model.kind, model.options)
        except OptionError as exc:
            loc = ("models", i, "options") + ((exc.key,) if exc.key else ())
            raise fail(f"model {model.name!r}: {exc}", loc) from None


def _check_names(suite: Suite, path: str) -> None:
    """Model, dataset, task and language names pass the store's name check (store/names.py)."""
    from glotbench.store.names import check_name

    for i, model in enumerate(suite.models):
        model.name = check_name(model.name, "model", path=path, field=f"models[{i}].name")
    for i, ds in enumerate(suite.datasets):
        for what in ("name", "task", "language"):
            label = "dataset" if what == "name" else what
            value = check_name(getattr(ds, what), label, path=path, field=f"datasets[{i}].{what}")
            setattr(ds, what, value)


def _confine_paths(suite: Suite, path: str) -> None:
    """Dataset paths stay inside --data-dir unless the suite says ``allow_outside_paths: true``.

    Refused: an absolute path, and a relative one that leaves the folder with
    ``..`` (``../../../tmp/x.csv``); checked on the text, before any glob.
    """
    if suite.allow_outside_paths:
        return
    for i, ds in enumerate(suite.datasets):
        for kind, items in (("paths", ds.paths), ("pool", ds.pool or [])):
            for item in items:
                text = str(item)
                parts = Path(os.path.normpath(text)).parts
                if Path(text).is_absolute() or (parts and parts[0] == ".."):
                    raise InputError(
                        f"the path {text!r} leaves data_dir ({suite.base_dir}); give paths "
                        "relative to it, or set 'allow_outside_paths: true' in the suite to "
                        "read files elsewhere",
                        path=path,
                        field=f"datasets[{i}].{kind}",
                    )


def mark_speed_jobs(jobs: list[Job]) -> list[Job]:
    """Mark each model's first job whose task kind has a speed call (iteration 0 of its
    first such dataset in suite order) to run the speed benchmark; the others do not."""
    seen: set[str] = set()
    out: list[Job] = []
    for job in jobs:
        mark = (
            job.model.name not in seen
            and job.protocol.speed_settings() is not None
            and get_task(job.dataset.task, **job.dataset.task_options()).kind in SPEED_CALLS
        )
        if mark:
            seen.add(job.model.name)
        out.append(dataclasses.replace(job, measure_speed=mark) if mark else job)
    return out
