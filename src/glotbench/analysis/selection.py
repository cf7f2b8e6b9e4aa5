"""Which metric each task is analysed on: leaderboard-style analysis over mixed metrics.

A store with several tasks usually holds several metrics per task (EuroEval
reports MCC and macro-F1 for sentiment, two micro-F1s for NER; lm-eval
``acc``, ``acc_norm``, ``f1``...). An analysis ranks each task on **one**
metric, chosen per task in this order:

1. an override ``task=metric`` (``--metric sentiment-classification=macro_f1``);
2. a plain ``metric`` for every task (``--metric mcc``); tasks without it are
   left out (with a note);
3. the task's **declared primary metric**: importers record it in each row's
   metadata under ``primary_metric`` — EuroEval's primary metric of the task
   (:data:`glotbench.importers.euroeval.PRIMARY_METRICS`), lm-eval's first
   metric of the task's ``metric_list``
   (:func:`glotbench.importers.lm_eval_results.primary_metric`). A declared ``null``
   (EuroEval's speed task, which EuroEval does not rank) leaves the task out
   unless a metric is chosen for it;
4. the only metric the task has (stores written by ``glotbench run``: one
   metric per task), else the benchmark's primary metric when glotbench knows
   it (:data:`glotbench.metrics.task_names.PRIMARY_METRICS`: SQuAD F1 for the
   XTREME QA tasks);
5. otherwise the choice is ambiguous: a clear error lists the task's metrics
   and asks for ``--metric task=metric``.

Names users type reach the per-example statistics when they exist: a run
answers to its registry metric (``accuracy``: every accuracy run, several
configurations as separate systems, as before) and to the harness's name
recorded as ``source_metric`` (lm-eval's ``acc``, ``acc_norm``,
``exact_match,strict-match``: exactly the runs of that lm-eval metric). A store
with runs is analysed from its runs (bootstrapped here, paired across models);
tasks with aggregate scores only are then left out with a note, since scores
without replicates cannot be mixed with resampled runs. A store without runs
is analysed from its scores table, where

* summary rows (no ``replicate``, e.g. EuroEval's totals) stored next to the
  replicate rows they summarise (EuroEval's per-iteration scores) are left
  out: the replicates carry the variation, the summary would collide with
  replicate 0;
* lm-eval group rows (``lm_eval_kind = group``, language ``all``) are left out
  unless ``--task`` names the group: they average their subtasks, which are
  analysed themselves;
* several datasets of one (task, language) are averaged per seed and
  replicate, as :func:`~glotbench.analysis.replicates.replicates_from_statistics`
  pools them.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from glotbench.analysis.replicates import (
    ErrorAt,
    ReplicatedScores,
    replicates_from_frame,
    row_error,
)
from glotbench.errors import InputError
from glotbench.metrics.task_names import known_primary

#: metadata key under which importers declare a task's primary metric
PRIMARY_KEY = "primary_metric"
#: run metadata key with the harness's own name of the run's metric (lm-eval ``acc_norm``)
SOURCE_KEY = "source_metric"


@dataclass(frozen=True)
class MetricChoice:
    """What the user asked for: one metric for all tasks and/or one per task.

    Attributes
    ----------
    metric : str or None
        A plain ``--metric m``: every task on ``m``.
    per_task : tuple of (task, metric)
        ``--metric task=metric`` overrides (they win over ``metric``).
    """

    metric: str | None = None
    per_task: tuple[tuple[str, str], ...] = ()

    @classmethod
    def parse(cls, specs: str | Sequence[str] | MetricChoice | None) -> MetricChoice:
        """From ``"m"``, ``"task=m"`` or a list of them (``--metric`` repeated)."""
        if isinstance(specs, MetricChoice):
            return specs
        if specs is None:
            return cls()
        items = [specs] if isinstance(specs, str) else list(specs)
        metric: str | None = None
        per_task: dict[str, str] = {}
        for item in items:
            text = str(item).strip()
            task, sep, name = text.rpartition("=")
            if sep:
                if not task.strip() or not name.strip():
                    raise InputError(
                        f"metric takes METRIC or TASK=METRIC entries, got {text!r}", field="metric"
                    )
                per_task[task.strip()] = _normalise(name)
            elif text:
                if metric is not None and metric != _normalise(text):
                    raise InputError(
                        f"two metrics for every task ({metric!r}, {text!r}); give one plain "
                        "metric=METRIC and metric=TASK=METRIC for the others",
                        field="metric",
                    )
                metric = _normalise(text)
        return cls(metric, tuple(sorted(per_task.items())))

    def describe(self) -> str:
        parts = ([self.metric] if self.metric else []) + [f"{t}={m}" for t, m in self.per_task]
        return ", ".join(parts) or "each task's primary metric"


def _normalise(name: str) -> str:
    return name.strip().lower()


#: the reasons :class:`TaskMetrics` gives for a metric the caller chose, in API words
ASKED = "metric=METRIC"
ASKED_FOR_TASK = "metric=TASK=METRIC"


@dataclass(frozen=True)
class TaskMetrics:
    """The metric chosen for each task, why, and what was left out."""

    chosen: dict[str, str]
    reasons: dict[str, str]
    notes: tuple[str, ...]

    def note(self) -> str | None:
        """One line naming each task's metric when tasks or metrics are several."""
        plain = all(r in ("only metric", ASKED, ASKED_FOR_TASK) for r in self.reasons.values())
        if plain and len(set(self.chosen.values())) <= 1:
            return None
        parts = [f"{t}: {m} ({self.reasons[t]})" for t, m in sorted(self.chosen.items())]
        return "metric per task: " + "; ".join(parts)


def choose_metrics(
    available: Mapping[str, Iterable[str]],
    declared: Mapping[str, Sequence[str | None]],
    choice: MetricChoice,
    *,
    accepted: Mapping[str, Iterable[str]] | None = None,
) -> TaskMetrics:
    """One metric per task (see the module docstring for the order of rules).

    Parameters
    ----------
    available : mapping task -> metric names
        The task's distinct metrics as the store names them for users.
    declared : mapping task -> declared primary metrics
        One entry per row that declares one (``None`` for "not ranked").
    choice : MetricChoice
        What the user asked for.
    accepted : mapping task -> names, optional
        Further names a user may type for the task (registry names of runs).
    """
    chosen: dict[str, str] = {}
    reasons: dict[str, str] = {}
    notes: list[str] = []
    unresolved: dict[str, list[str]] = {}
    lacking: list[str] = []
    overrides = dict(choice.per_task)
    unknown = sorted(set(overrides) - set(available))
    if unknown:
        raise InputError(
            f"metric names task(s) {', '.join(map(repr, unknown))} that the input does not "
            f"hold after filtering (tasks: {', '.join(sorted(available)) or 'none'})",
            field="metric",
        )
    for task in sorted(available):
        names = sorted(set(available[task]))
        typed = set(names) | set((accepted or {}).get(task, ()))
        if task in overrides:
            name = overrides[task]
            if name not in typed:
                raise InputError(
                    f"task {task!r} has no results of metric {name!r}; its metrics: "
                    f"{', '.join(names)}",
                    field="metric",
                )
            chosen[task], reasons[task] = name, ASKED_FOR_TASK
            continue
        if choice.metric is not None:
            if choice.metric in typed:
                chosen[task], reasons[task] = choice.metric, ASKED
            else:
                lacking.append(task)
            continue
        votes = declared.get(task, ())
        if votes:
            primary = top_declared(votes)
            if primary is None:
                notes.append(
                    f"task {task!r} left out: its source does not rank it (no primary metric); "
                    f"analyse it with metric='{task}=METRIC' ({', '.join(names)})"
                )
            elif primary in typed:
                chosen[task], reasons[task] = primary, "declared primary"
            else:
                notes.append(
                    f"task {task!r} left out: its primary metric {primary!r} has no results "
                    f"here ({', '.join(names)}); choose one with metric='{task}=METRIC'"
                )
            continue
        known = known_primary(task)
        if len(names) == 1:
            chosen[task], reasons[task] = names[0], "only metric"
        elif known is not None and known in typed:
            chosen[task], reasons[task] = known, "the benchmark's primary metric"
        else:
            unresolved[task] = names
    if unresolved:
        listed = "; ".join(f"{t}: {', '.join(m)}" for t, m in unresolved.items())
        first_task, first_names = next(iter(unresolved.items()))
        raise InputError(
            f"the input holds several metrics and no primary metric is declared for "
            f"{len(unresolved)} task(s) ({listed}); choose with metric=METRIC, or per task "
            f"with metric='{first_task}={first_names[0]}' (repeatable)",
            field="metric",
        )
    if lacking:
        notes.append(f"task(s) without metric {choice.metric!r} left out: {', '.join(lacking)}")
    if not chosen:
        raise InputError(
            f"no task has results of the chosen metric ({choice.describe()}); "
            "'glotbench show' lists the metrics per task",
            field="metric",
        )
    return TaskMetrics(chosen, reasons, tuple(notes))


def top_declared(votes: Sequence[str | None]) -> str | None:
    """The primary metric most rows declare (ties: a metric before ``None``, then by name)."""
    counts = Counter(votes)
    return sorted(counts, key=lambda m: (-counts[m], m is None, str(m)))[0]


def declared_primaries(metadata: Iterable[Any]) -> list[str | None]:
    """The ``primary_metric`` each row's metadata declares (``None``: "not ranked")."""
    return _declared(metadata)


def _declared(metadata: Iterable[Any]) -> list[str | None]:
    out: list[str | None] = []
    for meta in metadata:
        if isinstance(meta, Mapping) and PRIMARY_KEY in meta:
            value = meta[PRIMARY_KEY]
            out.append(_normalise(str(value)) if value else None)
    return out


def by_task(frame: pd.DataFrame, column: str) -> dict[str, list[Any]]:
    return {str(t): list(g[column]) for t, g in frame.groupby("task", sort=True)}


# --- tidy score tables (files and the store's scores table) ---------------------------------


def select_score_rows(
    frame: pd.DataFrame, choice: MetricChoice
) -> tuple[pd.DataFrame, TaskMetrics | None]:
    """Rows of each task's chosen metric (index kept, so callers can locate rows).

    A table without a ``metric`` column is returned as it is (``None``).
    """
    if "metric" not in frame.columns:
        if choice.per_task:
            raise InputError("metric=TASK=METRIC needs a 'metric' column", field="metric")
        return frame, None
    data = frame if "task" in frame.columns else frame.assign(task="task")
    metric = data["metric"].astype(str).str.strip().str.lower()
    data = data.assign(metric=metric)
    declared = (
        {t: _declared(v) for t, v in by_task(data, "metadata").items()}
        if "metadata" in data.columns
        else {}
    )
    result = choose_metrics(by_task(data, "metric"), declared, choice)
    keep = data["metric"].to_numpy() == data["task"].astype(str).map(result.chosen).to_numpy()
    return frame.loc[keep], result


def iteration_rows(frame: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Drop summary rows (no replicate) stored beside replicate rows of the same result.

    A result is (model, task, language, dataset, metric, seed); EuroEval stores
    its total (replicate empty) and its iterations (replicate 0..9) this way.
    Returns the remaining rows and how many summary rows were dropped.
    """
    if "replicate" not in frame.columns or frame["replicate"].notna().all():
        return frame, 0
    key = [c for c in ("model", "task", "language", "dataset", "metric", "seed") if c in frame]
    keys = [frame[c].astype(object).where(frame[c].notna(), "\x00").astype(str) for c in key]
    has_replicates = (
        frame["replicate"].notna().groupby(keys, dropna=False).transform("any").astype(bool)
    )
    summary = frame["replicate"].isna() & has_replicates
    return frame.loc[~summary], int(summary.sum())


def replicates_from_scores(
    scores: pd.DataFrame,
    choice: MetricChoice,
    explicit_tasks: Sequence[str] | None,
) -> ReplicatedScores:
    notes: list[str] = []
    if "metadata" in scores.columns:
        group = np.array(
            [
                isinstance(m, Mapping) and m.get("lm_eval_kind") == "group"
                for m in scores["metadata"]
            ]
        )
        named = scores["task"].astype(str).isin([str(t) for t in explicit_tasks or ()])
        drop = group & ~named.to_numpy()
        if drop.any() and not drop.all():
            dropped = sorted(set(scores.loc[drop, "task"].astype(str)))
            notes.append(
                f"lm-eval group row(s) left out ({', '.join(dropped)}): they average subtasks "
                "that are analysed themselves; name a group with task=TASK to analyse it"
            )
            scores = scores.loc[~drop]
    selected, metrics = select_score_rows(scores, choice)
    selected, n_summary = iteration_rows(selected)
    if n_summary:
        notes.append(
            f"{n_summary} summary score(s) (e.g. EuroEval totals) left out: their per-iteration "
            "replicates are analysed instead"
        )
    columns = ["model", "task", "language", "score", "seed", "replicate"]
    frame = selected[[c for c in columns if c in selected.columns]].copy()
    for column in ("seed", "replicate"):
        if column in frame.columns:
            frame[column] = frame[column].astype("Float64").fillna(-1.0).astype(float)
    key = [c for c in ("model", "task", "language", "seed", "replicate") if c in frame.columns]
    n_rows = len(frame)
    frame = frame.groupby(key, as_index=False, sort=False)["score"].mean()
    if len(frame) < n_rows:
        notes.append(
            "several datasets of one task and language: their scores are averaged per seed "
            "and replicate"
        )
    for column in ("seed", "replicate"):
        if column in frame.columns:
            frame[column] = frame[column].astype(object).where(frame[column] != -1.0, None)
    replicated = replicates_from_frame(frame.reset_index(drop=True), metric=metric_label(metrics))
    if replicated.source == "replicates" and _all_iterations(selected):
        replicated = dataclasses.replace(replicated, source="iterations")
    return annotate(replicated, metrics, notes)


def _all_iterations(rows: pd.DataFrame) -> bool:
    """Whether every replicate row is a EuroEval iteration (metadata ``kind`` = iteration)."""
    if "metadata" not in rows.columns or "replicate" not in rows.columns:
        return False
    replicate = rows["replicate"].notna().to_numpy()
    kinds = [
        isinstance(m, Mapping) and m.get("kind") == "iteration"
        for m in rows["metadata"].to_numpy()[replicate]
    ]
    return bool(kinds) and all(kinds)


def metric_label(metrics: TaskMetrics | None) -> str | None:
    if metrics is None:
        return None
    names = set(metrics.chosen.values())
    return names.pop() if len(names) == 1 else None


def annotate(
    replicated: ReplicatedScores, metrics: TaskMetrics | None, notes: Sequence[str]
) -> ReplicatedScores:
    if metrics is None:
        return dataclasses.replace(replicated, notes=replicated.notes + tuple(notes))
    line = metrics.note()
    return dataclasses.replace(
        replicated,
        task_metrics=tuple(sorted(metrics.chosen.items())),
        notes=replicated.notes + ((line,) if line else ()) + metrics.notes + tuple(notes),
    )


def replicates_from_table(
    frame: pd.DataFrame, choice: MetricChoice, error: ErrorAt = row_error
) -> ReplicatedScores:
    """A tidy scores table (a file) analysed on each task's chosen metric."""
    selected, metrics = select_score_rows(frame, choice)
    positions = selected.index.to_numpy()

    def located(message: str, position: int | None, field: str | None) -> InputError:
        return error(message, None if position is None else int(positions[position]), field)

    replicated = replicates_from_frame(
        selected.reset_index(drop=True), metric=metric_label(metrics), error=located
    )
    return annotate(replicated, metrics, ())


# --- runs with per-example statistics ------------------------------------------------------


def run_names(runs: pd.DataFrame) -> pd.Series:
    """The metric name each run answers to for users: the harness's name, else the metric."""
    names = []
    for metric, meta in zip(runs["metric"], runs["model_metadata"], strict=True):
        name = meta.get(SOURCE_KEY) if isinstance(meta, Mapping) else None
        if not name and isinstance(meta, Mapping) and meta.get("lm_eval_metric"):
            # stores imported before source_metric was recorded
            base, _, filt = str(meta["lm_eval_metric"]).partition(",")
            name = base if filt in ("", "none") else f"{base},{filt}"
        names.append(_normalise(str(name or metric)))
    return pd.Series(names, index=runs.index, dtype=object)
