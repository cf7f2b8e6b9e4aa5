"""The transfer table of a store's zero-shot runs (``glotbench run`` with ``transfer:``).

A run of the runner's zero-shot protocol (:mod:`glotbench.runner.transfer`)
records its source language (``model_metadata.source_languages``, one) and its
target language (the run's language). Each run is scored on its whole test
set from its stored statistics, ``score(Σᵢ sᵢ)``, with its task's primary
metric (or the one chosen per task); the seeds of one (model, dataset) are
averaged, with their standard error SD/√n. The representative model of a
source language is every model trained on it (e.g. its ScaLA classifier and
its tagger), so ``model`` is the source language — as in ScandEval's
Appendix A, one model per language.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from glotbench.analysis.results import records
from glotbench.errors import InputError
from glotbench.metrics import get_metric
from glotbench.resample.intervals import mean_standard_error

if TYPE_CHECKING:
    from glotbench.store.store import Store

COLUMNS = [
    "model",
    "model_language",
    "dataset",
    "task",
    "language",
    "metric",
    "score",
    "se",
    "n_seeds",
]


@dataclass(frozen=True)
class TransferScores:
    """Mean score per (source language, target dataset) over seeds, with its SE."""

    frame: pd.DataFrame
    notes: tuple[str, ...] = ()

    def to_frame(self) -> pd.DataFrame:
        return self.frame

    def to_dict(self) -> dict[str, Any]:
        return {"scores": records(self.frame), "notes": list(self.notes)}


def transfer_scores_from_store(
    store: Store, *, metrics: Mapping[str, str] | None = None
) -> TransferScores:
    """The zero-shot runs of ``store`` as a transfer table (see the module docstring).

    ``metrics`` maps a task to the metric to use (default: the task's primary
    metric, as the runner recorded it).
    """
    runs = store.runs.frame()
    if runs.empty:
        raise InputError(f"the store {store.path} holds no runs")
    meta = runs["model_metadata"]
    protocol = meta.map(lambda m: (m or {}).get("transfer_protocol"))
    sources = meta.map(lambda m: tuple((m or {}).get("source_languages") or ()))
    notes: list[str] = []
    others = sorted(set(protocol.dropna()) - {"zero-shot"})
    if others:
        notes.append(
            f"runs of {', '.join(others)} left out: the transfer analysis needs one source "
            "language per model (zero-shot)"
        )
    keep = (protocol == "zero-shot") & (sources.map(len) == 1)
    if not keep.any():
        raise InputError(
            f"the store {store.path} holds no zero-shot transfer runs; run a suite with a "
            "'transfer: {protocol: zero-shot}' block (e.g. glotbench run scandi-transfer)"
        )
    runs = runs[keep].copy()
    runs["model_language"] = sources[keep].map(lambda s: s[0])
    chosen: dict[str, str] = {}
    for task, group in runs.groupby("task", sort=True):
        wanted = (metrics or {}).get(str(task))
        if wanted is None:
            primary: set[str] = {
                p
                for m in group["model_metadata"]
                if (p := (m or {}).get("primary_metric")) is not None
            }
            wanted = sorted(primary)[0] if primary else sorted(group["metric"].unique())[0]
        if wanted not in set(group["metric"]):
            raise InputError(
                f"task {task!r} has no runs of metric {wanted!r}; it has "
                f"{', '.join(sorted(group['metric'].unique()))}",
                field="metric",
            )
        chosen[str(task)] = wanted
    runs = runs[[chosen[str(t)] == m for t, m in zip(runs["task"], runs["metric"], strict=True)]]
    scores = []
    for row in runs.itertuples(index=False):
        _, stats = store.stats.of_run(row.run_id)
        metric = get_metric(row.metric, **(row.metric_config or {}))
        scores.append(float(metric.score(np.asarray(stats, dtype=np.float64).sum(axis=0))))
    runs = runs.assign(score=scores)
    keys = ["model_language", "dataset", "task", "language", "metric"]
    rows = []
    for key, group in runs.groupby(keys, sort=True):
        values = group["score"].to_numpy(dtype=np.float64)
        se = float(mean_standard_error(values))
        cell = dict(zip(keys, key, strict=True))
        rows.append(
            {
                "model": cell["model_language"],
                **cell,
                "score": float(values.mean()),
                "se": se,
                "n_seeds": int(values.size),
            }
        )
    notes.append(
        "one model per source language (every model trained on it); scores on the whole test "
        "set from the stored statistics, mean over seeds ± SE; metrics: "
        + ", ".join(f"{t} {m}" for t, m in sorted(chosen.items()))
    )
    return TransferScores(pd.DataFrame(rows, columns=COLUMNS), tuple(notes))
