"""Store analyses find their own scope: the (dataset, task, language, metric) cells they run on.

Analyses of one test set at a time (evaluation size, buckets) need one
dataset, task, language and metric. Asking the user for all four when the
store has the answer is needless: the filters given (any of ``dataset``,
``task``, ``language``, ``metric``, ``models``) are matched against the
store's runs and

* one matching cell is used (a note says which, when not every part was given);
* several matching cells are each analysed (:class:`ScopedResults`), as
  ``analyze variance`` analyses every task and language it finds;
* none is an error that lists what the store holds.

The metric of a cell, when not given, is its only metric, else its task's
declared primary metric (:func:`glotbench.analysis.selection.choose_metrics`
with the rules of ``analyze variance``), else an error that lists the metrics.
Task names are matched through the alias table
(:mod:`glotbench.metrics.task_names`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from glotbench.errors import InputError

if TYPE_CHECKING:
    from glotbench.store.store import Store


@dataclass(frozen=True)
class Scope:
    """One test set of the store and the metric it is analysed on."""

    dataset: str
    task: str
    language: str
    metric: str

    def to_dict(self) -> dict[str, str]:
        return {
            "dataset": self.dataset,
            "task": self.task,
            "language": self.language,
            "metric": self.metric,
        }

    def label(self) -> str:
        return f"{self.dataset} ({self.task}/{self.language}, {self.metric})"

    def slug(self) -> str:
        """A file-name part naming the scope (plots of several scopes)."""
        text = f"{self.dataset}-{self.task}-{self.language}-{self.metric}"
        return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)


@dataclass(frozen=True)
class ScopedResults:
    """One analysis result per scope, when the filters match several test sets.

    JSON: ``{"scopes": [{"scope": {dataset, task, language, metric}, "result":
    <the analysis' own JSON>}, ...], "notes": [...]}``; :meth:`to_frame` stacks
    the results' frames with the scope's columns first.

    Attributes
    ----------
    scopes : tuple of Scope
        The test sets (dataset, task, language, metric).
    results : tuple
        One analysis result per scope, in the same order.
    notes : tuple of str
        What the reader should know.
    """

    scopes: tuple[Scope, ...]
    results: tuple[Any, ...]
    notes: tuple[str, ...] = ()

    def __iter__(self) -> Iterator[tuple[Scope, Any]]:
        return iter(zip(self.scopes, self.results, strict=True))

    def __len__(self) -> int:
        return len(self.scopes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "scopes": [
                {"scope": scope.to_dict(), "result": result.to_dict()} for scope, result in self
            ],
            "notes": list(self.notes),
        }

    def to_frame(self) -> pd.DataFrame:
        frames = []
        for scope, result in self:
            frame = result.to_frame().copy()
            for i, (key, value) in enumerate(scope.to_dict().items()):
                if key in frame.columns:
                    frame = frame.drop(columns=key)
                frame.insert(i, key, value)
            frames.append(frame)
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def store_scopes(
    store: Store,
    *,
    dataset: str | None = None,
    task: str | None = None,
    language: str | None = None,
    metric: str | None = None,
    models: Sequence[str] | None = None,
) -> tuple[list[Scope], list[str]]:
    """The scopes the store's runs hold under these filters, and notes on the choice."""
    from glotbench.analysis.selection import (
        MetricChoice,
        choose_metrics,
        declared_primaries,
        run_names,
    )
    from glotbench.metrics.task_names import task_aliases

    tasks = None if task is None else sorted(set(task_aliases(task)) | {task})
    runs = store.runs.frame(
        models=list(models) if models else None,
        tasks=tasks,
        languages=[language] if language else None,
    )
    if dataset is not None and not runs.empty:
        runs = runs[runs["dataset"].astype(str) == dataset]
    given = {"dataset": dataset, "task": task, "language": language, "metric": metric}
    asked = ", ".join(f"{k} {v!r}" for k, v in given.items() if v is not None) or "no filter"
    if runs.empty:
        raise InputError(
            f"no stored runs match {asked}; the store holds: {_holdings(store, models)} "
            "(see 'glotbench show')",
            field="dataset" if dataset else "task",
        )
    runs = runs.assign(_name=run_names(runs))
    scopes: list[Scope] = []
    notes: list[str] = []
    for (ds, tk, lang), cell in runs.groupby(["dataset", "task", "language"], sort=True):
        names = sorted(set(cell["metric"].astype(str)) | set(cell["_name"].astype(str)))
        if metric is not None:
            if metric not in names:
                continue
            picked = metric if metric in set(cell["metric"]) else _registry(cell, metric)
        else:
            declared = {str(tk): declared_primaries(cell["model_metadata"])}
            available = {str(tk): sorted(set(cell["metric"].astype(str)))}
            try:
                picked = choose_metrics(available, declared, MetricChoice()).chosen[str(tk)]
            except (InputError, KeyError):
                raise InputError(
                    f"{ds} ({tk}/{lang}) has runs of several metrics "
                    f"({', '.join(available[str(tk)])}); choose one with metric=METRIC, e.g. "
                    f"metric='{available[str(tk)][0]}'",
                    field="metric",
                ) from None
        scopes.append(Scope(str(ds), str(tk), str(lang), str(picked)))
    if not scopes:
        raise InputError(
            f"no stored runs of metric {metric!r} match {asked}; the store holds: "
            f"{_holdings(store, models)}",
            field="metric",
        )
    missing = [k for k, v in given.items() if v is None]
    if len(scopes) == 1 and missing:
        notes.append(f"analysed {scopes[0].label()}: the only stored test set matching {asked}")
    elif len(scopes) > 1:
        notes.append(
            f"{len(scopes)} stored test sets match {asked}; each is analysed: "
            + "; ".join(s.label() for s in scopes)
        )
    return scopes, notes


def _registry(cell: pd.DataFrame, name: str) -> str:
    """The registry metric of the runs a harness name (``source_metric``) selects."""
    return str(cell.loc[cell["_name"] == name, "metric"].iloc[0])


def _holdings(store: Store, models: Sequence[str] | None) -> str:
    runs = store.runs.frame(models=list(models) if models else None)
    if runs.empty:
        return "no runs"
    cells = runs[["dataset", "task", "language", "metric"]].astype(str).drop_duplicates()
    listed = [f"{d} ({t}/{lang}, {m})" for d, t, lang, m in cells.itertuples(index=False)]
    more = f" and {len(listed) - 12} more" if len(listed) > 12 else ""
    return "; ".join(listed[:12]) + more


def scoped(scopes: Sequence[Scope], notes: Sequence[str], analyse: Callable[[Scope], Any]) -> Any:
    """``analyse`` each scope: its result alone for one scope (the choice in its notes,
    when it has ``notes``), else a :class:`ScopedResults`."""
    import dataclasses

    if len(scopes) == 1:
        result = analyse(scopes[0])
        if (
            notes
            and dataclasses.is_dataclass(result)
            and not isinstance(result, type)
            and hasattr(result, "notes")
        ):
            result = dataclasses.replace(result, notes=(*notes, *result.notes))
        return result
    return ScopedResults(tuple(scopes), tuple(analyse(s) for s in scopes), tuple(notes))


def lmm_frames(
    input: Any = None,
    store: Any = None,
    *,
    metric: str | None = None,
    models: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
) -> tuple[list[tuple[str | None, pd.DataFrame, Callable[..., InputError]]], list[str]]:
    """The tables a mixed model is fitted on: one per metric the store's matches hold.

    A file, or a store with ``metric`` given or one metric among the matching
    runs (else scores), gives one table
    (:func:`glotbench.analysis.sources.inputs.load_lmm_frame`); a store whose matching
    runs (or, without runs, scores) hold several metrics gives one table per
    metric, each analysed on its own (scores of different metrics are not one
    response variable). Returns ``[(metric, frame, error), ...]`` and notes.
    """
    from glotbench.analysis.sources.inputs import load_lmm_frame
    from glotbench.store.layout import DEFAULT_STORE_PATH
    from glotbench.store.store import Store

    def one(name: str | None) -> tuple[str | None, pd.DataFrame, Callable[..., InputError]]:
        frame, error = load_lmm_frame(
            input, store, metric=name, models=models, tasks=tasks, languages=languages
        )
        return name, frame, error

    if input is not None or metric is not None:
        return [one(metric)], []
    path = store if store is not None else DEFAULT_STORE_PATH
    filters = {
        "models": list(models) if models else None,
        "tasks": list(tasks) if tasks else None,
        "languages": list(languages) if languages else None,
    }
    with Store.open(path, read_only=True) as handle:
        runs = handle.runs.frame(**filters)
        table = runs if not runs.empty else handle.scores.frame(**filters)
    names = sorted(set(table["metric"].astype(str))) if not table.empty else []
    if len(names) <= 1:
        return [one(None)], []
    source = "runs" if not runs.empty else "scores"
    note = (
        f"the matching {source} hold {len(names)} metrics ({', '.join(names)}); a mixed model "
        "is fitted for each (pass metric=METRIC to fit one)"
    )
    return [one(name) for name in names], [note]
