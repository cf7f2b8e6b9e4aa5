"""One score per stored run, computed from its per-example statistics.

A run's score on its whole test set is the metric's score of the summed
statistics, ``score(Σᵢ sᵢ)`` (the additive sufficient statistics of
docs/DESIGN; :meth:`glotbench.store.store.StatsMatrix.scores`). Analyses that
model run-level scores — the mixed models of ``glotbench analyze lmm`` — read
a store of runs (the runner's, or imported per-example results) through this
table, exactly as they read a scores file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import pandas as pd

from glotbench.analysis.replicates import systems_by_config
from glotbench.errors import InputError, StoreError
from glotbench.store.stats import in_configs

if TYPE_CHECKING:
    from glotbench.store.store import Store

COLUMNS = [
    "model",
    "dataset",
    "task",
    "language",
    "metric",
    "seed",
    "config_hash",
    "n_examples",
    "score",
    "run_id",
]


def run_scores_from_store(
    store: Store,
    *,
    metric: str | None = None,
    models: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
    configs: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """A tidy table of run scores: one row per stored run matching the filters.

    Columns: model, dataset, task, language, metric, seed, config_hash,
    n_examples, score, run_id. A model with runs of several configurations in
    one cell is named ``model [config]`` (as in every store-based analysis).
    ``metric`` may be omitted when the runs hold one metric. Returns an empty
    frame when no run matches.
    """
    runs = store.runs.frame(
        models=models, tasks=tasks, languages=languages, metrics=[metric] if metric else None
    )
    if configs is not None:
        runs = runs[in_configs(runs, configs)]
    if runs.empty:
        return pd.DataFrame(columns=COLUMNS)
    run_metrics = sorted(runs["metric"].unique())
    if len(run_metrics) > 1:
        raise InputError(
            f"the store holds runs of several metrics ({', '.join(run_metrics)}); "
            "choose one with metric=METRIC",
            field="metric",
        )
    chosen = run_metrics[0]
    frames = []
    cells = runs[["dataset", "task", "language"]].drop_duplicates()
    for dataset, task, language in cells.itertuples(index=False):
        try:
            matrices = [
                store.stats.matrix(dataset, task, language, chosen, models=models, configs=configs)
            ]
        except StoreError:
            # runs on different example sets (a run-level score needs no pairing): one by one
            cell_runs = runs[
                (runs["dataset"] == dataset)
                & (runs["task"] == task)
                & (runs["language"] == language)
            ]
            matrices = [
                store.stats.matrix(
                    dataset,
                    task,
                    language,
                    chosen,
                    models=[row.model],
                    seeds=None if pd.isna(row.seed) else [int(row.seed)],
                    config_hash=row.config_hash,
                )
                for row in cell_runs.itertuples(index=False)
            ]
        for matrix in matrices:
            frame = systems_by_config(matrix).to_frame()
            frame.insert(1, "dataset", dataset)
            frame.insert(2, "task", task)
            frame.insert(3, "language", language)
            frame.insert(4, "metric", chosen)
            frames.append(frame)
    out = pd.concat(frames, ignore_index=True).drop_duplicates("run_id")
    return (
        out[COLUMNS]
        .sort_values(
            ["model", "dataset", "task", "language", "seed"], na_position="first", kind="stable"
        )
        .reset_index(drop=True)
    )
