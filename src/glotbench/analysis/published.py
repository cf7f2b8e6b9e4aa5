"""Published (aggregate) scores beside resampled runs: kept, with the uncertainty they have.

A store often holds one's own runs (per-example statistics, bootstrapped
here) next to published numbers of other models on the same tasks (the
XTREME-R baselines, a paper's table) that come as one score per model and
language. Analysing the runs alone would silently drop those models. Instead
each (model, task, language) that has scores but no run is added to the
replicated scores as a cell with

* its score as the point estimate (several seeds: each seed's score; several
  datasets of one task and language: their mean, as
  :func:`glotbench.analysis.sources.store_selection.replicates_from_store_selection` pools
  them);
* replicates that carry the uncertainty the source gives:
  - a standard error ``stderr`` (EuroEval's totals, lm-eval's ``*_stderr``):
    draws score + SE·z_b with z_b ~ N(0, 1) from the stream of
    (seed, "published", model, task, language) — a normal approximation of the
    score's sampling distribution, a function of that cell alone;
  - replicate rows (``replicate`` index): their mean is the point and their SD
    the standard error of the same normal draws;
  - nothing: every draw equals the score — **no uncertainty known**; such
    models are named in a note, since their zero spread understates the
    uncertainty of any comparison with them.

Rows left out (a metric other than the task's chosen one) are listed in a
note with the reason.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable

import numpy as np
import pandas as pd

from glotbench.analysis.replicates import ReplicatedScores, Unit
from glotbench.metrics.task_names import canonical_metric, canonical_task


def canonical_names(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its task names canonical and its metric names the registry's
    (:mod:`glotbench.metrics.task_names`); other columns untouched."""
    if frame.empty or "task" not in frame.columns:
        return frame
    tasks = frame["task"].astype(str).map(canonical_task)
    out = frame.assign(task=tasks)
    if "metric" in frame.columns:
        out["metric"] = [
            canonical_metric(t, m) for t, m in zip(tasks, frame["metric"].astype(str), strict=True)
        ]
    return out


def _stream(seed: int, model: str, unit: Unit) -> np.random.Generator:
    digest = hashlib.blake2b(
        "\x1f".join(("published", str(seed), model, unit.task, unit.language)).encode(),
        digest_size=16,
    ).digest()
    return np.random.default_rng(int.from_bytes(digest, "little"))


def _cells(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, task, language, seed): point score and its standard error."""
    data = rows.copy()
    data["seed"] = pd.to_numeric(data.get("seed"), errors="coerce") if "seed" in data else np.nan
    data["stderr"] = pd.to_numeric(data["stderr"], errors="coerce") if "stderr" in data else np.nan
    replicate = (
        pd.to_numeric(data["replicate"], errors="coerce")
        if "replicate" in data
        else pd.Series(np.nan, index=data.index)
    )
    data["score"] = pd.to_numeric(data["score"], errors="coerce").astype(float)
    data["_seed"] = data["seed"].fillna(-1.0)
    key = ["model", "task", "language", "_seed"]
    # replicate rows (e.g. EuroEval iterations) give a point and an SD; totals beside them go
    has_replicates = replicate.notna().groupby([data[k] for k in key]).transform("any")
    data = data[replicate.notna() | ~has_replicates.astype(bool)].assign(_rep=replicate)
    out = []
    for (model, task, language, seed), group in data.groupby(key, sort=True):
        reps = group[group["_rep"].notna()]
        if len(reps) >= 2:
            # several datasets: average per replicate first
            per_rep = reps.groupby("_rep")["score"].mean()
            point, se = float(per_rep.mean()), float(per_rep.std(ddof=1))
        else:
            point = float(group["score"].mean())
            ses = group["stderr"].dropna()
            # several datasets averaged: SE of a mean of independent parts
            se = float(np.sqrt((ses**2).sum()) / len(group)) if len(ses) == len(group) else np.nan
        out.append(
            {"model": model, "task": task, "language": language, "seed": seed, "score": point,
             "stderr": se}
        )  # fmt: skip
    return pd.DataFrame(out, columns=["model", "task", "language", "seed", "score", "stderr"])


def _usable(
    scores: pd.DataFrame,
    chosen: dict[str, set[str]],
    with_runs: set[tuple[str, str]],
    notes: list[str],
) -> pd.DataFrame:
    """The scores of tasks with runs, of models without runs there, on the analysed metric;
    a note says what is left out and why."""
    data = scores[scores["task"].astype(str).isin(list(chosen))].copy()
    if data.empty:
        return data
    pair = list(zip(data["model"].astype(str), data["task"].astype(str), strict=True))
    beside_runs = np.array([p in with_runs for p in pair], dtype=bool)
    if beside_runs.any():
        twice = sorted({f"{m} ({t})" for (m, t), b in zip(pair, beside_runs, strict=True) if b})
        notes.append(
            "aggregate scores of models that also have runs on the task are not used (the runs "
            f"are): {', '.join(twice)}"
        )
    data = data[~beside_runs]
    matches = np.array(
        [m in chosen[t] for t, m in zip(data["task"].astype(str), data["metric"], strict=True)],
        dtype=bool,
    )
    other = data[~matches]
    if not other.empty:
        left = sorted(
            {
                f"{m} on {t} ({', '.join(sorted(set(g['metric'].astype(str))))}; analysed on "
                f"{'/'.join(sorted(chosen[t]))})"
                for (m, t), g in other.groupby(["model", "task"])
                if not data[(data["model"] == m) & (data["task"] == t) & matches].shape[0]
            }
        )
        if left:
            notes.append(
                "aggregate scores left out, their metric is not the one the task is analysed "
                f"on: {'; '.join(left)}"
            )
    return data[matches]


def add_published(
    replicated: ReplicatedScores,
    scores: pd.DataFrame,
    chosen: dict[str, set[str]],
    run_cells: Iterable[tuple[str, str]],
    seed: int,
) -> tuple[ReplicatedScores, list[str]]:
    """``replicated`` with the score-only (model, task) pairs of ``scores`` added.

    ``scores``: the store's scores, names canonical (:func:`canonical_names`);
    ``chosen``: task -> the metric names its runs are analysed on; ``run_cells``:
    the (model, task) pairs that have runs (their scores are not used: the runs are).
    Returns the merged scores and notes naming what was added and what left out.
    """
    notes: list[str] = []
    if scores.empty:
        return replicated, notes
    data = _usable(scores, chosen, set(run_cells), notes)
    if data.empty:
        return replicated, notes
    cells = _cells(data)
    new_models = sorted(set(cells["model"].astype(str)) - set(replicated.models))
    models = (*replicated.models, *new_models)
    unit_index = {(u.task, u.language): i for i, u in enumerate(replicated.units)}
    extra = sorted(
        {(str(t), str(lang)) for t, lang in zip(cells["task"], cells["language"], strict=True)}
        - set(unit_index)
    )
    units = (*replicated.units, *(Unit(t, lang) for t, lang in extra))
    for t, lang in extra:
        unit_index[(t, lang)] = len(unit_index)
    seeds_per_cell = cells.groupby(["model", "task", "language"]).size()
    n_seeds = max(replicated.values.shape[2], int(seeds_per_cell.max()))
    n_reps = replicated.values.shape[3]
    values = np.full((len(models), len(units), n_seeds, n_reps), np.nan)
    old = replicated.values
    values[: old.shape[0], : old.shape[1], : old.shape[2]] = old
    old_point = getattr(replicated, "point", None)
    point = None
    if old_point is not None:
        point = np.full(values.shape[:3], np.nan)
        point[: old.shape[0], : old.shape[1], : old.shape[2]] = old_point
    model_index = {m: i for i, m in enumerate(models)}
    without: set[str] = set()
    with_se: set[str] = set()
    for (model, task, language), group in cells.groupby(["model", "task", "language"], sort=True):
        m, u = model_index[str(model)], unit_index[(str(task), str(language))]
        for s, row in enumerate(group.sort_values("seed").itertuples()):
            se = float(row.stderr)
            if np.isfinite(se) and se > 0:
                z = _stream(seed, str(model), units[u]).standard_normal(n_reps)
                values[m, u, s] = row.score + se * z
                with_se.add(str(model))
            else:
                values[m, u, s] = row.score
                without.add(str(model))
            if point is not None:
                point[m, u, s] = row.score
    added = sorted(set(cells["model"].astype(str)))
    notes.append(
        "aggregate (e.g. published) scores shown beside resampled runs: "
        f"{', '.join(added)} on {', '.join(sorted(set(cells['task'].astype(str))))}"
    )
    if with_se:
        notes.append(
            f"{', '.join(sorted(with_se))}: uncertainty from the stored standard errors (normal "
            "draws score ± SE·z), not from resampled examples"
        )
    if without:
        notes.append(
            f"{', '.join(sorted(without))}: no uncertainty known (one score, no standard error "
            "or replicates): their SDs and interval widths are 0, so a comparison with them "
            "counts only the other model's uncertainty"
        )
    merged = dataclasses.replace(
        replicated,
        models=models,
        units=units,
        values=values,
        point=point,
        no_uncertainty=tuple(sorted({*replicated.no_uncertainty, *without})),
    )
    return merged, notes
