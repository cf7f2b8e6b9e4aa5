"""The overall view's scope: which models it ranks and which cells it averages.

One rule for every door (the leaderboard page, the report, ``glotbench
analyze aggregate|compare|ranks`` and the API; docs/methods.md, "Overall
view"):

1. a model with no score on a whole task of the selection is **left out of
   the overall view** (a mean of task means without one of the tasks is not
   the same quantity), with a note naming it and the tasks it lacks; it keeps
   its rows in that task's views (``--task``);
2. the overall view then averages the cells (task, language) that **every
   model it ranks** has; cells some of them lack are left out for all of them
   (:func:`glotbench.analysis.draws.common_units`, with its own note).

So a model missing one language of a task stays in the overall view (that
cell is dropped for every model), while a model missing a whole task leaves
it, and the other models' overall numbers are the same through every door.
XTREME-R's leaderboard reports overall scores only for models with every task
(Ruder et al. 2021) in the same way.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar, cast

import numpy as np

from glotbench.analysis.replicates import ReplicatedScores, model_rows
from glotbench.analysis.variance import ComponentTable
from glotbench.errors import InputError

#: how the note on models left out of the overall view begins (pages replace it by a table)
LEFT_OUT = "left out of the overall view:"

Source = TypeVar("Source", bound=ReplicatedScores | ComponentTable)


def lacking_tasks(
    has: Mapping[str, Iterable[str]], models: Sequence[str], tasks: Sequence[str]
) -> dict[str, tuple[str, ...]]:
    """Per model of ``models`` without a score on some task of ``tasks``: the tasks it lacks.

    ``has`` maps a model to the tasks it has at least one score on.
    """
    out: dict[str, tuple[str, ...]] = {}
    for model in models:
        held = set(has.get(model, ()))
        missing = tuple(t for t in tasks if t not in held)
        if missing:
            out[model] = missing
    return out


@dataclass(frozen=True)
class OverallScope:
    """The models the overall view ranks, and those left out with the tasks they lack."""

    models: tuple[str, ...]
    tasks: tuple[str, ...]
    lacking: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def note(self) -> str | None:
        """The note naming the models left out and why (None: none left out)."""
        if not self.lacking:
            return None
        detail = "; ".join(f"{m} (no score on {', '.join(t)})" for m, t in self.lacking.items())
        note = (
            f"{LEFT_OUT} {detail}. The overall view ranks the models with a score on every "
            "task, on the cells they all have; the models left out appear in the views of "
            "the tasks they have (task=TASK)"
        )
        if len(self.models) < 2:
            shared = "; ".join(
                f"task='{task}' ({', '.join(models)})"
                for task, models in self.per_task().items()
                if len(models) > 1
            )
            note += ". Fewer than two models have every task, so nothing is compared overall" + (
                f"; compare per task the models that cover it: {shared}" if shared else ""
            )
        return note

    def per_task(self) -> dict[str, tuple[str, ...]]:
        """Per task, the models with a score on it (the overall view's and those left out)."""
        models = (*self.models, *self.lacking)
        return {
            task: tuple(m for m in models if task not in self.lacking.get(m, ()))
            for task in self.tasks
        }


def overall_scope(source: ReplicatedScores | ComponentTable) -> OverallScope:
    """Which models of ``source`` the overall view ranks (see the module's rule)."""
    tasks = tuple(dict.fromkeys(u.task for u in source.units))
    present = np.asarray(source.present(), dtype=bool)
    has = {
        model: {u.task for u, p in zip(source.units, present[m], strict=True) if p}
        for m, model in enumerate(source.models)
    }
    lacking = lacking_tasks(has, source.models, tasks)
    kept = tuple(m for m in source.models if m not in lacking)
    return OverallScope(kept, tasks, lacking)


def _take_models(source: Source, index: Sequence[int]) -> Source:
    if isinstance(source, ReplicatedScores):
        return cast(Source, source.take(index, range(len(source.units))))
    n_models = len(source.models)
    changes: dict[str, object] = {"models": tuple(source.models[i] for i in index)}
    for item in dataclasses.fields(source):
        value = getattr(source, item.name)
        if isinstance(value, np.ndarray) and value.ndim >= 1 and value.shape[0] == n_models:
            changes[item.name] = value[list(index)]
    return dataclasses.replace(source, **changes)  # type: ignore[arg-type]


def overall_source(source: Source) -> tuple[Source, tuple[str, ...]]:
    """``source`` restricted to the models the overall view ranks, and the note on the others.

    No model with every task is an :class:`InputError` that names what each lacks.
    """
    scope = overall_scope(source)
    if not scope.lacking:
        return source, ()
    if not scope.models:
        detail = "; ".join(f"{m} lacks {', '.join(t)}" for m, t in scope.lacking.items())
        raise InputError(
            f"no model has scores on every task ({detail}); select tasks with task=TASK"
        )
    index = model_rows(source.models, scope.models)
    note = scope.note()
    return _take_models(source, index), (note,) if note else ()
