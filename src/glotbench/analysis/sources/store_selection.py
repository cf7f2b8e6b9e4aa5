"""Replicated scores of a store, each task on its chosen metric.

The store's side of :mod:`glotbench.analysis.selection` (whose docstring has
the rules): runs with per-example statistics of each task's chosen metric are
bootstrapped (:func:`replicates_from_runs`); a store without such runs is
analysed from its scores table (:func:`replicates_from_store_selection`).
Task names are matched through the alias table
(:mod:`glotbench.metrics.task_names`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from glotbench.analysis.replicates import (
    ReplicatedScores,
    replicates_from_statistics,
    systems_by_config,
)
from glotbench.analysis.selection import (
    MetricChoice,
    annotate,
    by_task,
    choose_metrics,
    declared_primaries,
    metric_label,
    replicates_from_scores,
    run_names,
)
from glotbench.errors import InputError
from glotbench.store.stats import in_configs

if TYPE_CHECKING:
    from glotbench.store.store import Store


def _runs_of(task_runs: pd.DataFrame, name: str) -> tuple[pd.DataFrame, bool]:
    """Runs selected by ``name``: all runs of a registry metric (True), or of a harness name."""
    by_metric = task_runs[task_runs["metric"] == name]
    if not by_metric.empty:
        return by_metric, True
    return task_runs[task_runs["_name"] == name], False


def replicates_from_runs(
    store: Store,
    choice: MetricChoice,
    *,
    models: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
    n_replicates: int = 1000,
    seed: int = 0,
    configs: Mapping[str, str] | None = None,
) -> ReplicatedScores | None:
    """Bootstrap the runs of each task's chosen metric; None when no run matches.

    Task names are canonical (:mod:`glotbench.metrics.task_names`: ``panx`` runs
    and ``wikiann-ner`` scores are one task), and models with aggregate scores
    only on a task that has runs are kept beside them
    (:func:`glotbench.analysis.published.add_published`).
    """
    from glotbench.analysis.published import add_published, canonical_names

    tasks = with_task_aliases(tasks)
    runs = store.runs.frame(models=models, tasks=tasks, languages=languages)
    if configs is not None and not runs.empty:
        runs = runs[in_configs(runs, configs)]
    if runs.empty:
        return None
    runs = runs.assign(_stored_task=runs["task"].astype(str), task=_canonical(runs["task"]))
    runs = runs.assign(_name=run_names(runs))
    run_tasks = set(runs["task"].astype(str))
    scores = canonical_names(store.scores.frame(models=models, tasks=tasks, languages=languages))
    score_only = sorted(set(scores["task"].astype(str)) - run_tasks)
    named = sorted(set(dict(choice.per_task)) & set(score_only))
    if named:
        raise InputError(
            f"task(s) {', '.join(map(repr, named))} have aggregate scores only, which cannot be "
            "analysed together with resampled runs; analyse them alone with task=TASK",
            field="metric",
        )
    accepted = {t: set(g["metric"]) | set(g["_name"]) for t, g in runs.groupby("task")}
    if (
        choice.metric is not None
        and not any(choice.metric in names for names in accepted.values())
        and not choice.per_task
    ):
        return None  # the metric exists as aggregate scores only
    declared = {str(t): declared_primaries(g["model_metadata"]) for t, g in runs.groupby("task")}
    metrics = choose_metrics(by_task(runs, "_name"), declared, choice, accepted=accepted)
    notes: list[str] = []
    if score_only:
        notes.append(
            f"task(s) with aggregate scores only left out ({', '.join(score_only)}): scores "
            "without replicates cannot be mixed with resampled runs; analyse them alone with "
            "task=TASK"
        )
    cells, analysed_on = _cells(runs, metrics.chosen)

    def matrices() -> Iterator[Any]:
        """Each cell's statistics, read when the bootstrap asks for it (one cell in memory)."""
        for task, dataset, stored_task, language, metric, config_hash, cell_models in cells:
            matrix = store.stats.matrix(
                dataset,
                stored_task,
                language,
                metric,
                models=cell_models,
                config_hash=config_hash,
                configs=configs,
            )
            matrix = dataclasses.replace(matrix, task=task)  # the canonical name
            yield systems_by_config(matrix)
            del matrix  # before the next cell is read

    label = metric_label(metrics)
    replicated = replicates_from_statistics(
        matrices(), label or "per-task metrics", n_replicates=n_replicates, seed=seed
    )
    run_cells = set(zip(runs["model"].astype(str), runs["task"].astype(str), strict=True))
    replicated, published = add_published(replicated, scores, analysed_on, run_cells, seed)
    notes.extend(published)
    return annotate(dataclasses.replace(replicated, metric=label), metrics, notes)


#: a cell's (task, dataset, stored task name, language, metric, config hash, models)
Cell = tuple[str, str, str, str, str, str | None, list[str]]


def _cells(
    runs: pd.DataFrame, metrics: Mapping[str, str]
) -> tuple[list[Cell], dict[str, set[str]]]:
    """The cells to bootstrap, one per dataset, stored task name, language, metric and (for
    a harness name) config hash of each task's chosen runs; and per task the names of the
    metrics it is analysed on."""
    analysed_on: dict[str, set[str]] = {}
    cells: list[Cell] = []
    for task, name in sorted(metrics.items()):
        chosen, whole_metric = _runs_of(runs[runs["task"] == task], name)
        analysed_on[task] = {name, *chosen["metric"].astype(str)}
        for (dataset, stored_task, language, metric), cell in chosen.groupby(
            ["dataset", "_stored_task", "language", "metric"], sort=True
        ):
            hashes = [None] if whole_metric else sorted(set(cell["config_hash"]))
            for config_hash in hashes:
                part = cell if config_hash is None else cell[cell["config_hash"] == config_hash]
                cells.append(
                    (
                        str(task),
                        str(dataset),
                        str(stored_task),
                        str(language),
                        str(metric),
                        config_hash,
                        sorted(set(part["model"].astype(str))),
                    )
                )

    return cells, analysed_on


def _canonical(tasks: pd.Series) -> pd.Series:
    from glotbench.metrics.task_names import canonical_task

    return tasks.astype(str).map(canonical_task)


def with_task_aliases(tasks: Sequence[str] | None) -> list[str] | None:
    """A task filter that also matches every other name of each task."""
    if tasks is None:
        return None
    from glotbench.metrics.task_names import task_aliases

    return sorted({name for task in tasks for name in (str(task), *task_aliases(str(task)))})


def replicates_from_store_selection(
    store: Store,
    choice: MetricChoice | str | Sequence[str] | None = None,
    *,
    models: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
    n_replicates: int = 1000,
    seed: int = 0,
    configs: Mapping[str, str] | None = None,
) -> ReplicatedScores:
    """Replicated scores of a store, each task on its chosen metric (module docstring).

    Runs (per-example statistics) when the store holds runs of the chosen
    metrics, else the scores table.
    """
    choice = MetricChoice.parse(choice)
    if choice.per_task:  # TASK=METRIC under any of the task's names
        from glotbench.metrics.task_names import canonical_task

        per_task = tuple(sorted((canonical_task(t), m) for t, m in choice.per_task))
        choice = dataclasses.replace(choice, per_task=per_task)
    replicated = replicates_from_runs(
        store,
        choice,
        models=models,
        tasks=tasks,
        languages=languages,
        n_replicates=n_replicates,
        seed=seed,
        configs=configs,
    )
    if replicated is not None:
        return replicated
    scores = store.scores.frame(models=models, tasks=with_task_aliases(tasks), languages=languages)
    # one task under one name (panx and wikiann-ner scores meet); metric names as stored
    scores = scores.assign(task=_canonical(scores["task"])) if not scores.empty else scores
    if scores.empty:
        raise InputError(
            "no stored runs or scores match the filters; see 'glotbench show' for what the "
            "store holds"
        )
    return replicates_from_scores(scores, choice, tasks)
