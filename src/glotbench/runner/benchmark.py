"""Run a benchmark suite into a store: select the jobs, run them, report.

:func:`run_benchmark` is what ``glotbench run`` does (the facade
:func:`glotbench.api.run_benchmark` adds the speed table of the analysis
layer through ``speed_of``); :func:`list_suites` names the built-in suites.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glotbench.store.layout import DEFAULT_STORE_PATH

if TYPE_CHECKING:  # the runner's modules load on first use (the facade imports this module)
    import pandas as pd

    from glotbench.runner.executors import RunSummary
    from glotbench.runner.suite import Suite


def list_suites() -> dict[str, str]:
    """Built-in suites: name -> description.

    Returns
    -------
    dict of str to str
        Suite name -> one-line description; :func:`glotbench.api.run_benchmark`
        runs any of them by name.

    Examples
    --------
    >>> from glotbench import api
    >>> "starter" in api.list_suites()
    True
    """
    from glotbench.ingest.yaml_files import load_yaml
    from glotbench.runner.suite import builtin_suites

    out = {}
    for name, path in sorted(builtin_suites().items()):
        raw = load_yaml(path.read_text(encoding="utf-8"), str(path)) or {}
        out[name] = str(raw.get("description", ""))
    return out


def run_benchmark(
    suite: str | Path | None,
    *,
    store: str | Path = DEFAULT_STORE_PATH,
    data_dir: str | Path | None = None,
    models: list[str] | None = None,
    languages: list[str] | None = None,
    tasks: list[str] | None = None,
    datasets: list[str] | None = None,
    iterations: int | None = None,
    executor: str = "local",
    force: bool = False,
    num_cpus: int | None = None,
    ray_address: str | None = None,
    on_event: Any = None,
    split_sizes: dict[str, int] | str | None = None,
    train_sizes: list[int] | str | None = None,
    shards: str | Path | None = None,
    merge: bool = True,
    speed_seconds: float | None = None,
    speed: bool = True,
    scores: bool = True,
    speed_of: Callable[[str | Path, list[str]], Any] | None = None,
    model_args: list[str] | None = None,
    device: str | None = None,
    batch_size: int | None = None,
    limit: int | None = None,
    keep_outputs: bool | None = None,
    data: list[str] | None = None,
) -> RunSummary:
    """Run (or resume) a benchmark suite — a built-in name or a YAML file — into ``store``.

    ``shards`` (a folder all workers can write to): each job's statistics are
    written as a Parquet shard and merged by this process; ``merge=False``
    leaves them for :func:`import_shards` (``docs/runner.md``, Several machines).

    ``split_sizes`` (``{"train": 128, "test": 256}`` or ``"train=128,test=256"``)
    replaces those split sizes of every dataset (a smaller run, e.g. for CI).
    ``train_sizes`` (``[64, 128]`` or ``"64,128"``) runs learning curves (replaces
    ``protocol.train_sizes``; docs/learning-curves.md).
    ``speed_seconds`` / ``speed`` set or turn off ScandEval's speed benchmark
    (one per model; ``docs/runner.md``, Inference speed).

    Returns a :class:`~glotbench.runner.executors.RunSummary` (``.to_dict()``,
    ``.to_frame()`` = ScandEval scores per model, dataset and metric;
    ``.speed`` = ``speed_of(store, the suite's models)`` when given).

    ``models`` are suite model names or ``KIND:ID`` models named on the command
    line (``hf:path``, ``openai:name``, ``majority:``; with ``model_args``
    ``["key=value"]``, ``device``, ``batch_size``); ``suite=None`` with such
    models runs the built-in ``euroeval-hub``. ``limit`` keeps the first N test
    examples of every dataset. See :func:`prepare_suite`.
    """
    from glotbench.runner.executors import run_suite

    selected, notes = prepare_suite(
        suite,
        data_dir=data_dir,
        models=models,
        languages=languages,
        tasks=tasks,
        datasets=datasets,
        iterations=iterations,
        split_sizes=split_sizes,
        train_sizes=train_sizes,
        speed_seconds=speed_seconds,
        speed=speed,
        model_args=model_args,
        device=device,
        batch_size=batch_size,
        limit=limit,
        data=data,
    )
    summary = run_suite(
        selected,
        store=store,
        executor=executor,
        force=force,
        on_event=on_event,
        num_cpus=num_cpus,
        ray_address=ray_address,
        shards=shards,
        merge=merge,
        scores=scores,
        keep_outputs=keep_outputs,
    )
    summary.notes[:0] = notes
    if speed_of is not None:
        summary.speed = speed_of(store, [m.name for m in selected.models])
    return summary


def prepare_suite(
    suite: str | Path | None,
    *,
    data_dir: str | Path | None = None,
    models: list[str] | None = None,
    languages: list[str] | None = None,
    tasks: list[str] | None = None,
    datasets: list[str] | None = None,
    iterations: int | None = None,
    split_sizes: dict[str, int] | str | None = None,
    train_sizes: list[int] | str | None = None,
    speed_seconds: float | None = None,
    speed: bool = True,
    model_args: list[str] | None = None,
    device: str | None = None,
    batch_size: int | None = None,
    limit: int | None = None,
    data: list[str] | None = None,
) -> tuple[Suite, list[str]]:
    """The suite a run executes, and notes: ``suite`` (default, with command-line models:
    the built-in ``euroeval-hub``) with ``--model KIND:ID`` entries in place of its models
    (:mod:`glotbench.runner.command_line`), restricted by the filters (comma lists accepted)."""
    from glotbench.errors import InputError
    from glotbench.runner.command_line import (
        DEFAULT_TASK_SUITE,
        command_line_models,
        data_suite,
        split_list,
        with_models,
    )
    from glotbench.runner.suite import load_suite, parse_split_sizes, parse_train_sizes

    if isinstance(split_sizes, str):
        split_sizes = parse_split_sizes(split_sizes)
    if isinstance(train_sizes, str):  # learning curves
        train_sizes = parse_train_sizes(train_sizes)
    run_sizes: dict[str, Any] = {  # how much of each dataset is run, with or without a suite
        "iterations": iterations,
        "split_sizes": split_sizes,
        "train_sizes": train_sizes,
        "speed_seconds": speed_seconds,
        "speed": speed,
        "limit": limit,
    }
    specs, names, notes = command_line_models(
        split_list(models) or [], model_args=model_args, device=device, batch_size=batch_size
    )
    if not specs and (model_args or device is not None or batch_size is not None):
        raise InputError(
            "model_args, device and batch_size set options of models named on the command "
            "line, as KIND:ID (e.g. models='hf:gpt2'); edit the suite for its own models"
        )
    if data:
        if suite is not None:
            raise InputError("data builds the suite from files: give a suite or data, not both")
        task_list, language_list = split_list(tasks) or [], split_list(languages) or []
        if len(task_list) != 1 or len(language_list) != 1:
            raise InputError("data needs exactly one task and one language for its files")
        if not specs:
            raise InputError("data needs a model: models='KIND:ID' (e.g. hf:gpt2, majority:)")
        loaded = with_models(data_suite(list(data), task_list[0], language_list[0]), specs, [])
        selected = loaded.select(**run_sizes)
        return selected, notes
    if suite is None:
        if not specs:
            raise InputError(
                "name a suite (see 'glotbench suites') or a model with models='KIND:ID' "
                f"(then the tasks of the built-in suite {DEFAULT_TASK_SUITE!r} are run)"
            )
        suite = DEFAULT_TASK_SUITE
    loaded = load_suite(suite, data_dir=data_dir)
    if specs:
        loaded = with_models(loaded, specs, names)
        names = []
    selected = loaded.select(
        models=names or None,
        languages=split_list(languages),
        tasks=split_list(tasks),
        datasets=split_list(datasets),
        **run_sizes,
    )
    return selected, notes


def dump_suite(
    path: str | Path, suite: str | Path | None = None, **selection: Any
) -> tuple[Path, list[str]]:
    """Write the suite of a (command-line) run as YAML (``glotbench run --dump-suite``)."""
    from glotbench.runner.command_line import dump_suite as write

    selected, notes = prepare_suite(suite, **selection)
    return write(selected, path), notes


def benchmark_scores(
    store: str | Path,
    *,
    models: list[str] | None = None,
    datasets: list[str] | None = None,
    metrics: list[str] | None = None,
) -> pd.DataFrame:
    """ScandEval scores (mean of bootstrapped-test scores over iterations ± 1.96·SD/√N)."""
    from glotbench.runner.protocol import scandeval_scores
    from glotbench.store.store import Store

    with Store.open(store, read_only=True) as handle:
        return scandeval_scores(handle, models=models, datasets=datasets, metrics=metrics)
