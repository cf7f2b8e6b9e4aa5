"""The input of EuroEval's rank score: iteration scores per model and dataset.

EuroEval runs every model :data:`EUROEVAL_ITERATIONS` times on every dataset
(a seed and a bootstrapped test set per iteration) and ranks each dataset on
one metric. :class:`IterationTable` holds those iteration scores (or, from
ready SDs, each cell's mean, SD and number of iterations);
:func:`iterations_from_replicated`, :func:`iterations_from_components` and
:func:`iterations_from_frame` build it from replicated scores, a component
table or a tidy scores frame, and :func:`select_dataset_metrics` picks each
dataset's metric. :mod:`glotbench.analysis.euroeval_rank` computes the rank
scores from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from glotbench.analysis.replicates import ReplicatedScores
from glotbench.analysis.variance import ComponentTable
from glotbench.errors import InputError

#: iterations EuroEval runs per model and dataset (seed × bootstrapped test set)
EUROEVAL_ITERATIONS = 10


@dataclass(frozen=True)
class IterationTable:
    """Iteration scores ``scores[model, dataset, iteration]`` (NaN where absent).

    ``scores`` is None when only summaries are known (ready SDs): then
    ``mean``, ``sd`` (ddof = 1) and ``n`` describe each model's iterations.
    """

    models: tuple[str, ...]
    datasets: tuple[str, ...]
    tasks: tuple[str, ...]  # per dataset
    languages: tuple[str, ...]  # per dataset
    scores: np.ndarray | None
    mean: np.ndarray
    sd: np.ndarray
    n: np.ndarray
    notes: tuple[str, ...] = field(default=())
    #: the metric of each dataset (empty: not known, e.g. a table without a metric column)
    metrics: tuple[str, ...] = field(default=())

    @classmethod
    def from_scores(
        cls,
        models: Sequence[str],
        datasets: Sequence[str],
        tasks: Sequence[str],
        languages: Sequence[str],
        scores: np.ndarray,
        notes: Sequence[str] = (),
        metrics: Sequence[str] = (),
    ) -> IterationTable:
        scores = np.asarray(scores, dtype=float)
        n = np.isfinite(scores).sum(axis=2).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            total = np.nansum(scores, axis=2)
            mean = np.where(n > 0, total / np.where(n > 0, n, 1), np.nan)
            dev = np.nansum((scores - mean[..., None]) ** 2, axis=2)
            sd = np.where(n >= 2, np.sqrt(dev / np.maximum(n - 1, 1)), 0.0)
        return cls(
            tuple(models),
            tuple(datasets),
            tuple(tasks),
            tuple(languages),
            scores,
            mean,
            sd,
            n,
            tuple(notes),
            tuple(metrics),
        )


def iterations_from_replicated(
    source: ReplicatedScores, units: Sequence[int] | np.ndarray
) -> IterationTable:
    """EuroEval-style iterations of the given units (each unit is one dataset).

    Iteration i is seed i's i-th bootstrap replicate (each EuroEval iteration
    has its own seed and resampled test set); with one seed, its first ten
    bootstrap replicates. When the replicates were drawn from per-example
    statistics, the iterations are shifted so that their mean is the point
    estimate (full-test-set scores, mean over seeds): the replicates supply
    the spread only, and a model's mean carries no Monte Carlo noise (issue 22).
    """
    values = source.values[:, list(units)]
    n_seeds = values.shape[2]
    if n_seeds >= 2:
        b = np.arange(n_seeds) % values.shape[3]
        scores = values[:, :, np.arange(n_seeds), b]
    else:
        scores = values[:, :, 0, : min(EUROEVAL_ITERATIONS, values.shape[3])]
    if source.point is not None:
        present = np.isfinite(scores)
        count = present.sum(axis=2)
        with np.errstate(invalid="ignore", divide="ignore"):
            drawn_mean = np.where(count > 0, np.nansum(scores, axis=2) / count, np.nan)
        scores = scores + (source.points()[:, list(units)] - drawn_mean)[..., None]
    picked = [source.units[u] for u in units]
    notes = []
    if np.isfinite(scores).sum(axis=2).max(initial=0) < 2:
        notes.append(
            "EuroEval rank score: one score per model and dataset, so there are no iterations "
            "to resample (zero-width intervals; the 2025 method's Welch t-test cannot run and "
            "counts every lower mean as significantly worse)"
        )
    per_task = dict(source.task_metrics)
    named = [per_task.get(u.task, source.metric) for u in picked]
    return IterationTable.from_scores(
        source.models,
        [f"{u.task}/{u.language}" for u in picked],
        [u.task for u in picked],
        [u.language for u in picked],
        scores,
        notes,
        [str(m) for m in named] if all(m is not None for m in named) else (),
    )


def iterations_from_components(
    table: ComponentTable, units: Sequence[int] | np.ndarray
) -> IterationTable:
    """Summaries only (ready SDs): unit mean, σ_w and the number of seeds (10 when unknown)."""
    idx = list(units)
    n = np.where(table.n_seeds[:, idx] >= 2, table.n_seeds[:, idx], EUROEVAL_ITERATIONS)
    picked = [table.units[u] for u in idx]
    return IterationTable(
        table.models,
        tuple(f"{u.task}/{u.language}" for u in picked),
        tuple(u.task for u in picked),
        tuple(u.language for u in picked),
        None,
        table.mean[:, idx],
        np.nan_to_num(table.sigma_w[:, idx]),
        n.astype(float),
        (
            "EuroEval rank score from ready SDs: no iteration scores to resample; pooled SD "
            "from each model's mean, SD and n, and the bootstrap median and interval replaced "
            "by their normal approximation (plug-in ± z·SD·√((n−1)/n)/√n / pooled SD)",
        ),
    )


def _check_overrides(overrides: Sequence[tuple[str, str]], by_task: dict[str, list[str]]) -> None:
    """Every ``TASK=METRIC`` names a task here and a metric it has."""
    for task, name in overrides:
        if task not in by_task or name not in by_task[task]:
            raise InputError(
                f"metric='{task}={name}': "
                + (
                    f"task {task!r} has no results of metric {name!r}; its metrics: "
                    f"{', '.join(by_task[task])}"
                    if task in by_task
                    else f"no task {task!r} here (tasks: {', '.join(by_task)})"
                ),
                field="metric",
            )


def _pick_metrics(
    data: pd.DataFrame,
    task_metric: dict[str, str],
    plain: Sequence[str],
    primary: dict[str, str | None],
) -> tuple[dict[str, str], list[str], dict[str, set[str]]]:
    """Each dataset's metric, the datasets without it, and per task the plain names
    chosen instead of its declared primary metric."""
    dataset_metric: dict[str, str] = {}
    left_out: list[str] = []
    off_primary: dict[str, set[str]] = {}
    for (dataset, task), group in data.groupby(["dataset", "task"], sort=True):
        have = set(group["metric"])
        task = str(task)
        if task in task_metric:
            pick = task_metric[task] if task_metric[task] in have else None
        elif plain:
            pick = next((m for m in plain if m in have), None)
            if pick is not None and primary.get(task) not in (None, pick):
                off_primary.setdefault(task, set()).add(pick)
        else:
            continue  # left out by choose_metrics, with its note
        if pick is None:
            left_out.append(str(dataset))
        else:
            dataset_metric[str(dataset)] = pick
    return dataset_metric, left_out, off_primary


def select_dataset_metrics(
    data: pd.DataFrame, metrics: Sequence[str] | None = None
) -> tuple[pd.DataFrame, dict[str, str], list[str]]:
    """The rows of each dataset's metric, the metric per dataset, and notes.

    ``data`` has columns dataset, task, metric (and optionally metadata, where
    importers declare each task's ``primary_metric``). ``metrics`` holds
    ``TASK=METRIC`` overrides and/or plain metric names:

    * a task named in an override is scored on that metric;
    * with plain names, each other dataset takes the first listed one it has
      (EuroEval ranks each dataset on its primary metric, so a plain name that
      is not a task's declared primary is named in a note);
    * without plain names, each task takes its declared primary metric (EuroEval's:
      MCC for classification, ``micro_f1_no_misc`` for NER, ...), else its only
      metric (:func:`glotbench.analysis.selection.choose_metrics`); a task with
      several metrics and none declared is an error that lists its metrics.
    """
    from glotbench.analysis.selection import (
        MetricChoice,
        choose_metrics,
        declared_primaries,
        top_declared,
    )

    specs = [str(m).strip() for m in (metrics or ()) if str(m).strip()]
    overrides = tuple(
        sorted(
            (t.strip(), m.strip().lower())
            for t, sep, m in (spec.rpartition("=") for spec in specs)
            if sep
        )
    )
    plain = [spec.lower() for spec in specs if "=" not in spec]
    data = data.assign(metric=data["metric"].astype(str).str.strip().str.lower())
    by_task = {str(t): sorted(set(g["metric"])) for t, g in data.groupby("task", sort=True)}
    declared = (
        {str(t): declared_primaries(g["metadata"]) for t, g in data.groupby("task", sort=True)}
        if "metadata" in data.columns
        else {}
    )
    primary = {t: top_declared(v) for t, v in declared.items() if v}
    notes: list[str] = []
    if plain:
        known = {m for ms in by_task.values() for m in ms}
        if not set(plain) & known:
            raise InputError(
                f"no dataset has metric(s) {', '.join(plain)}; metrics per task: "
                + "; ".join(f"{t}: {', '.join(ms)}" for t, ms in by_task.items()),
                field="metric",
            )
        task_metric = dict(overrides)
        _check_overrides(overrides, by_task)
    else:
        chosen = choose_metrics(by_task, declared, MetricChoice(None, overrides))
        task_metric = dict(chosen.chosen)
        notes.extend(chosen.notes)
    dataset_metric, left_out, off_primary = _pick_metrics(data, task_metric, plain, primary)
    if not dataset_metric:
        raise InputError(
            "no dataset has results of the chosen metric(s); metrics per task: "
            + "; ".join(f"{t}: {', '.join(ms)}" for t, ms in by_task.items()),
            field="metric",
        )
    if left_out:
        wanted = "/".join(plain) if plain else "its task's metric"
        notes.append(f"datasets without metric {wanted} left out: {', '.join(left_out)}")
    for task, picks in sorted(off_primary.items()):
        notes.append(
            f"task {task!r} scored on {', '.join(sorted(picks))}, not its declared primary "
            f"metric {primary[task]!r} (the one EuroEval ranks it on); leave metric unset to use it"
        )
    keep = data["metric"].to_numpy() == data["dataset"].astype(str).map(dataset_metric).to_numpy()
    return data.loc[keep].copy(), dataset_metric, notes


def iterations_from_frame(
    frame: pd.DataFrame, metrics: Sequence[str] | None = None
) -> IterationTable:
    """Iteration scores from a tidy scores table (e.g. a store holding EuroEval imports).

    Columns: model, language, score; optional dataset (default: task/language),
    task (default ``"task"``), metric, seed, replicate or iteration. Rows with
    a replicate index are iterations; a row without one (EuroEval's total) is
    used only when its (model, dataset) has no iterations. With several seeds,
    iteration i is seed i's i-th replicate. ``metrics``: see
    :func:`select_dataset_metrics` (default: each task's declared primary
    metric, as EuroEval ranks it).
    """
    missing = [c for c in ("model", "language", "score") if c not in frame.columns]
    if missing:
        raise InputError(
            f"scores table lacks column(s) {', '.join(missing)}; expected model, language, score "
            "and optionally dataset, task, metric, replicate",
            field=missing[0],
        )
    data = frame.copy()
    if "task" not in data.columns:
        data["task"] = "task"
    if "dataset" not in data.columns:
        data["dataset"] = data["task"].astype(str) + "/" + data["language"].astype(str)
    data["dataset"] = data["dataset"].astype(str)
    notes: list[str] = []
    dataset_metric: dict[str, str] = {}
    if "metric" in data.columns:
        data, dataset_metric, picked_notes = select_dataset_metrics(data, metrics)
        notes.extend(picked_notes)
    index_column = next((c for c in ("replicate", "iteration") if c in data.columns), None)
    score = pd.to_numeric(data["score"], errors="coerce")
    if not np.isfinite(score.to_numpy(dtype=float)).all():
        raise InputError("a score is not a finite number", field="score")
    data["score"] = score.astype(float)
    if index_column is None:
        data["_it"] = data.groupby(["model", "dataset"]).cumcount()
    else:
        it = pd.to_numeric(data[index_column], errors="coerce")
        data["_it"] = it
        has_iterations = data.assign(_has=it.notna()).groupby(["model", "dataset"])["_has"]
        keep = it.notna() | ~has_iterations.transform("any")
        data = data[keep].copy()
        if "seed" in data.columns and data["seed"].notna().any():
            # seeds × replicates: iteration i is seed i's i-th replicate (as from replicates)
            group = data.groupby(["model", "dataset"])["seed"]
            data["_s"] = group.rank(method="dense").fillna(1).astype(int) - 1
            reps = data.groupby(["model", "dataset", "seed"], dropna=False)["_it"]
            data["_b"] = reps.rank(method="dense").fillna(1).astype(int) - 1
            n_reps = data.groupby(["model", "dataset"])["_b"].transform("max") + 1
            several = data.groupby(["model", "dataset"])["_s"].transform("max") > 0
            data = data[~several | (data["_b"] == data["_s"] % n_reps)].copy()
        data["_it"] = data.groupby(["model", "dataset"]).cumcount()
    models = sorted(data["model"].astype(str).unique())
    cells = (
        data[["dataset", "task", "language"]]
        .astype(str)
        .drop_duplicates()
        .sort_values(["language", "task", "dataset"])
    )
    if cells["dataset"].duplicated().any():
        dataset = cells.loc[cells["dataset"].duplicated(), "dataset"].iloc[0]
        raise InputError(f"dataset {dataset!r} appears under several tasks or languages")
    datasets = list(cells["dataset"])
    m_index = {m: i for i, m in enumerate(models)}
    d_index = {d: i for i, d in enumerate(datasets)}
    scores = np.full((len(models), len(datasets), int(data["_it"].max()) + 1), np.nan)
    scores[
        data["model"].astype(str).map(m_index).to_numpy(),
        data["dataset"].map(d_index).to_numpy(),
        data["_it"].to_numpy(dtype=int),
    ] = data["score"].to_numpy()
    return IterationTable.from_scores(
        models,
        datasets,
        list(cells["task"]),
        list(cells["language"]),
        scores,
        notes,
        [dataset_metric[d] for d in datasets] if dataset_metric else (),
    )
