"""Replicated scores: the table every replication-aware analysis starts from.

A multilingual evaluation with replication gives one score per

    model × unit × seed × bootstrap replicate,

where a *unit* is a (task, language) cell (just the language when one task is
analysed). :class:`ReplicatedScores` holds these as a dense array
``values[model, unit, seed, replicate]`` with NaN where a model lacks a unit
or a seed, so unbalanced designs are represented, not padded with guesses.

Three inputs lead here (Sälevä, Ataman & Lignos 2025, §3):

* per-example statistics from the store: glotbench draws B bootstrap
  replicates of every run itself, with the *same* resampling weights for every
  model and seed on a dataset (paired), via :func:`glotbench.resample.replicate_scores`;
* a scores table with ``seed`` and ``replicate`` columns (replicates drawn elsewhere);
* a scores table with ``seed`` only (B = 1: no bootstrap component).

A table with ready standard deviations (one row per model and language) has no
replicates; it becomes a :class:`~glotbench.analysis.variance.ComponentTable`
directly (see :func:`glotbench.analysis.variance.components_from_summary`).
"""

from __future__ import annotations

import dataclasses
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np
import pandas as pd

from glotbench.errors import InputError
from glotbench.resample.engine import replicate_scores

if TYPE_CHECKING:
    pass

#: where the replicates come from: resampled per-example statistics, given bootstrap
#: replicates, seeds only, or EuroEval's iterations (each a new seed *and* a bootstrapped
#: test set, so their SD is the within-language σ_w, not a bootstrap SD)
Source = Literal["examples", "replicates", "seeds", "iterations"]
#: builds the error for record ``position`` (0-based; None: the whole table) and ``field``
ErrorAt = Callable[[str, int | None, str | None], InputError]


def row_error(message: str, position: int | None, field: str | None) -> InputError:
    """Default locator for in-memory tables: 'row N' (1-based) in the message."""
    where = f"row {position + 1}: " if position is not None else ""
    return InputError(where + message, field=field)


@dataclass(frozen=True)
class Unit:
    """One (task, language) cell of the design."""

    task: str
    language: str

    def label(self, single_task: bool) -> str:
        return self.language if single_task else f"{self.task}/{self.language}"


@dataclass(frozen=True)
class ReplicatedScores:
    """Scores ``values[model, unit, seed, replicate]`` (NaN where absent).

    Seeds are positions, not seed values: a model's s-th seed on a unit is at
    ``values[m, u, s]``; models may have different numbers of seeds.
    ``task_metrics`` names the metric of each task when it was chosen per task
    (:mod:`glotbench.analysis.selection`); ``notes`` say how the input was
    selected (analyses pass them on).
    """

    models: tuple[str, ...]
    units: tuple[Unit, ...]
    values: np.ndarray
    source: Source
    metric: str | None = None
    task_metrics: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        shape = (len(self.models), len(self.units))
        if self.values.ndim != 4 or self.values.shape[:2] != shape:
            raise ValueError(f"values must be (models, units, seeds, replicates) = {shape}+(S, B)")

    @property
    def single_task(self) -> bool:
        return len({u.task for u in self.units}) == 1

    @property
    def unit_labels(self) -> tuple[str, ...]:
        return tuple(u.label(self.single_task) for u in self.units)

    @property
    def n_replicates(self) -> int:
        return int(self.values.shape[3])

    def seed_counts(self) -> np.ndarray:
        """Number of seeds present per (model, unit)."""
        return (~np.isnan(self.values[..., 0])).sum(axis=2)

    def present(self) -> np.ndarray:
        """(model, unit) cells that have at least one seed."""
        return self.seed_counts() > 0

    def select_models(self, models: Sequence[str]) -> ReplicatedScores:
        index = [self.models.index(m) for m in models]
        return dataclasses.replace(self, models=tuple(models), values=self.values[index])

    def to_frame(self) -> pd.DataFrame:
        """Long form: model, task, language, seed (position), replicate, score."""
        m, u, s, b = np.nonzero(~np.isnan(self.values))
        return pd.DataFrame(
            {
                "model": np.asarray(self.models, dtype=object)[m],
                "task": [self.units[i].task for i in u],
                "language": [self.units[i].language for i in u],
                "seed": s,
                "replicate": b,
                "score": self.values[m, u, s, b],
            }
        )


def _unit_order(frame: pd.DataFrame) -> list[Unit]:
    pairs = frame[["task", "language"]].drop_duplicates().sort_values(["task", "language"])
    return [Unit(str(t), str(lang)) for t, lang in pairs.itertuples(index=False)]


def replicates_from_frame(
    frame: pd.DataFrame, metric: str | None = None, error: ErrorAt = row_error
) -> ReplicatedScores:
    """Build :class:`ReplicatedScores` from a tidy scores table.

    Columns: model, language, score; optional task (default ``"task"``), seed,
    replicate. Rows without a seed are one seed; rows without a replicate are
    the seed's only replicate (no bootstrap component). Duplicate
    (model, task, language, seed, replicate) rows and non-finite scores are
    errors that name the first offending row.
    """
    required = ("model", "language", "score")
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise error(
            f"scores table lacks column(s) {', '.join(missing)}; expected model, language, "
            "score and optionally task, seed, replicate",
            None,
            missing[0],
        )
    data = frame.copy()
    if "task" not in data.columns:
        data["task"] = "task"
    for column in ("seed", "replicate"):
        if column in data.columns:
            raw = data[column].replace("", None)
            numeric = pd.to_numeric(raw, errors="coerce")
            bad = numeric.isna() & raw.notna()
            bad |= numeric.notna() & (numeric != numeric.round())
            if bad.any():
                row = int(np.flatnonzero(bad.to_numpy())[0])
                raise error(f"{column} {raw.iloc[row]!r} is not an integer", row, column)
            data[column] = numeric
    has_seed = "seed" in data.columns and data["seed"].notna().any()
    has_replicate = "replicate" in data.columns and data["replicate"].notna().any()
    data["seed"] = data["seed"].fillna(-1) if has_seed else -1
    data["replicate"] = data["replicate"].fillna(0) if has_replicate else 0
    score = pd.to_numeric(data["score"], errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(score)
    if bad.any():
        row = int(np.argmax(bad))
        raise error(
            f"score {data['score'].iloc[row]!r} is not a finite number; remove the row or fix "
            "the value (NaN scores are never averaged silently)",
            row,
            "score",
        )
    data["score"] = score
    key = ["model", "task", "language", "seed", "replicate"]
    duplicated = data.duplicated(key, keep=False)
    if duplicated.any():
        rows = np.flatnonzero(duplicated.to_numpy())[:2]
        raise error(
            "this record repeats the model, task, language, seed and replicate of an earlier "
            "one; give each replicate its own 'replicate' index",
            int(rows[1]),
            "replicate",
        )
    models = sorted(data["model"].astype(str).unique())
    units = _unit_order(data)
    model_index = {m: i for i, m in enumerate(models)}
    unit_index = {(u.task, u.language): i for i, u in enumerate(units)}
    # seed and replicate positions within each (model, unit)
    data["m"] = data["model"].astype(str).map(model_index)
    data["u"] = [
        unit_index[(str(t), str(lang))]
        for t, lang in zip(data["task"], data["language"], strict=True)
    ]
    data["s"] = data.groupby(["m", "u"])["seed"].rank(method="dense").astype(int) - 1
    data["b"] = data.groupby(["m", "u", "seed"])["replicate"].rank(method="dense").astype(int) - 1
    n_seeds, n_reps = int(data["s"].max()) + 1, int(data["b"].max()) + 1
    counts = data.groupby(["m", "u", "s"])["b"].count()
    if has_replicate and counts.nunique() > 1:
        (m, u, _), low = counts.idxmin(), counts.min()
        raise error(
            f"model {models[m]!r} on {units[u].task}/{units[u].language} has {low} replicates "
            f"for one seed but others have {counts.max()}; every seed needs the same number of "
            "bootstrap replicates (they are paired draws)",
            None,
            "replicate",
        )
    values = np.full((len(models), len(units), n_seeds, n_reps), np.nan)
    values[data["m"], data["u"], data["s"], data["b"]] = data["score"].to_numpy()
    source: Source = "replicates" if has_replicate else "seeds"
    return ReplicatedScores(tuple(models), tuple(units), values, source, metric)


def unit_seed(seed: int, unit: Unit) -> int:
    """Seed of a unit's bootstrap: independent of which other units are analysed."""
    return zlib.crc32(f"{seed}\x1f{unit.task}\x1f{unit.language}".encode()) ^ (seed & 0xFFFFFFFF)


class CellStatistics(Protocol):
    """Per-example statistics of all runs on one dataset (``core.store.StatsMatrix`` is one)."""

    task: str
    language: str
    models: list[str]
    stats: np.ndarray  # (runs, n, k), runs = models × seeds

    def get_metric(self) -> Any: ...


def replicates_from_statistics(
    cells: Iterable[CellStatistics], metric: str, *, n_replicates: int = 1000, seed: int = 0
) -> ReplicatedScores:
    """Bootstrap every run of every cell and collect the replicate scores.

    Within a cell all runs (models × seeds) are resampled with one weight
    matrix, so replicates are paired across models. Several datasets of the
    same (task, language) are pooled by averaging their scores per replicate.
    """
    cells = list(cells)
    if not cells:
        raise InputError(f"no per-example statistics of metric {metric!r} to analyse")
    model_names = sorted({model for cell in cells for model in cell.models})
    units = sorted(
        {Unit(str(c.task), str(c.language)) for c in cells}, key=lambda u: (u.task, u.language)
    )
    unit_index = {u: i for i, u in enumerate(units)}
    model_position = {m: i for i, m in enumerate(model_names)}
    max_seeds = max(max(Counter(cell.models).values()) for cell in cells)
    totals = np.zeros((len(model_names), len(units), max_seeds, n_replicates))
    counts = np.zeros((len(model_names), len(units), max_seeds))
    for cell in cells:
        unit = Unit(str(cell.task), str(cell.language))
        reps = replicate_scores(
            cell.stats, cell.get_metric(), n_resamples=n_replicates, seed=unit_seed(seed, unit)
        )  # (B, runs), paired across all models and seeds of the cell
        # run j is the s-th seed of its model; (model, seed) pairs are unique within a
        # cell, so one fancy-indexed add places every run's replicates
        position: Counter[str] = Counter()
        m_index, s_index = [], []
        for model in cell.models:
            m_index.append(model_position[model])
            s_index.append(position[model])
            position[model] += 1
        u = unit_index[unit]
        totals[m_index, u, s_index] += reps.T
        counts[m_index, u, s_index] += 1
    with np.errstate(invalid="ignore"):  # 0 / 0 = NaN where a model lacks a seed
        totals /= counts[..., None]
    return ReplicatedScores(tuple(model_names), tuple(units), totals, "examples", metric)


def systems_by_config(matrix: Any) -> Any:
    """Runs of one model under different configurations are different systems, not seeds.

    When a model has runs of two or more configuration hashes in one cell
    (e.g. lm-eval's ``acc_norm`` beside ``acc``), each hash is appended to
    the model name as ``model [config]``; a model with one configuration
    keeps its plain name (its seeds are replications).
    """
    hashes = getattr(matrix, "config_hashes", None)
    if not hashes or not any(hashes):
        return matrix
    configs: dict[str, set[str]] = {}
    for m, c in zip(matrix.models, hashes, strict=True):
        configs.setdefault(m, set()).add(c)
    labels = [
        f"{m} [{c}]" if c and len(configs[m]) > 1 else m
        for m, c in zip(matrix.models, hashes, strict=True)
    ]
    return dataclasses.replace(matrix, models=labels)
