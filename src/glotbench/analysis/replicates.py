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
import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np
import pandas as pd

from glotbench.errors import InputError
from glotbench.resample.engine import replicate_and_point_scores
from glotbench.resample.weights import stream_seed

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


def model_rows(models: Sequence[str], names: Sequence[str]) -> list[int]:
    """The positions of ``names`` in ``models``, in one pass (a dict, not ``list.index``
    per name: linear in models at leaderboard scale). ValueError for a name not there."""
    where = {m: i for i, m in enumerate(models)}
    try:
        return [where[m] for m in names]
    except KeyError as missing:
        raise ValueError(f"{missing.args[0]!r} is not among the models") from None


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

    Attributes
    ----------
    models : tuple of str
        The models, in axis order.
    units : tuple of Unit
        The (task, language) units, in axis order.
    values : numpy.ndarray, shape (models, units, seeds, replicates)
        The scores.
    source : {"examples", "replicates", "seeds", "iterations"}
        Where the replicates come from: resampled per-example statistics,
        given bootstrap replicates, seeds only, or EuroEval's iterations.
    metric : str or None
        The metric, when one metric was analysed.
    task_metrics : tuple of (str, str)
        The metric of each task when it was chosen per task
        (:mod:`glotbench.analysis.selection`).
    notes : tuple of str
        How the input was selected (analyses pass them on).
    point : numpy.ndarray or None, shape (models, units, seeds)
        Each seed's full-test-set score, ``score(S.sum(0))``, when the
        replicates were drawn here from per-example statistics: the point
        estimate, which the replicates only spread around (``docs/methods.md``,
        "Score"). None for tables of ready scores, whose seed scores are the
        points themselves (see :meth:`seed_points`).
    no_uncertainty : tuple of str
        Models with no known uncertainty (one published score, no standard
        error or replicates): their SDs and interval widths are 0.
    """

    models: tuple[str, ...]
    units: tuple[Unit, ...]
    values: np.ndarray
    source: Source
    metric: str | None = None
    task_metrics: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = ()
    point: np.ndarray | None = None
    #: models whose scores carry no uncertainty (published scores without an SE or
    #: replicates, kept beside resampled runs: :mod:`glotbench.analysis.published`)
    no_uncertainty: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        shape = (len(self.models), len(self.units))
        if self.values.ndim != 4 or self.values.shape[:2] != shape:
            raise ValueError(f"values must be (models, units, seeds, replicates) = {shape}+(S, B)")
        if self.point is not None and self.point.shape != self.values.shape[:3]:
            raise ValueError("point must be (models, units, seeds) like values[..., 0]")

    def seed_points(self) -> np.ndarray:
        """Each seed's point estimate (M × U × S; NaN where the seed is absent).

        The full-test-set score when known (:attr:`point`); for a table of
        scores without replicates the seed's score itself; for replicates
        drawn elsewhere (no full-sample score given) their mean, the only
        estimate the table has.
        """
        absent = np.isnan(self.values[..., 0])
        if self.point is not None:
            return np.where(absent, np.nan, self.point)
        if self.values.shape[3] == 1:
            return self.values[..., 0]
        count = (~np.isnan(self.values)).sum(axis=3)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(count > 0, np.nansum(self.values, axis=3) / count, np.nan)

    def points(self) -> np.ndarray:
        """The point estimate of every (model, unit): mean over seeds of :meth:`seed_points`."""
        seeds = self.seed_points()
        count = (~np.isnan(seeds)).sum(axis=2)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(count > 0, np.nansum(seeds, axis=2) / count, np.nan)

    def take(self, models: Sequence[int], units: Sequence[int]) -> ReplicatedScores:
        """The scores of the models and units at these positions (point estimates kept)."""
        index = np.ix_(list(models), list(units))
        return dataclasses.replace(
            self,
            models=tuple(self.models[i] for i in models),
            units=tuple(self.units[i] for i in units),
            values=self.values[index],
            point=None if self.point is None else self.point[index],
        )

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
        index = model_rows(self.models, models)
        point = None if self.point is None else self.point[index]
        return dataclasses.replace(
            self, models=tuple(models), values=self.values[index], point=point
        )

    def point_frame(self) -> pd.DataFrame:
        """One row per model, task and language: its point estimate (:meth:`points`).

        The table every score shown as "the model's score" comes from (the
        leaderboard's cells, the analytic leaderboard); sorted by model, task,
        language. :meth:`to_frame` has every replicate instead.
        """
        points = self.points()
        m, u = np.nonzero(~np.isnan(points))
        frame = pd.DataFrame(
            {
                "model": np.asarray(self.models, dtype=object)[m],
                "task": np.asarray([unit.task for unit in self.units], dtype=object)[u],
                "language": np.asarray([unit.language for unit in self.units], dtype=object)[u],
                "score": points[m, u],
            }
        )
        order = ["model", "task", "language"]
        return frame.sort_values(order, kind="stable").reset_index(drop=True)

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


#: the message of a record whose (model, task, language, seed, replicate) came before
DUPLICATE_RECORD = (
    "this record repeats the model, task, language, seed and replicate of an earlier one; "
    "give each replicate its own 'replicate' index"
)


def unequal_replicates(model: str, unit: Unit, low: object, high: object) -> str:
    """The message of a seed with fewer bootstrap replicates than others."""
    return (
        f"model {model!r} on {unit.task}/{unit.language} has {low} replicates for one seed but "
        f"others have {high}; every seed needs the same number of bootstrap replicates (they "
        "are paired draws)"
    )


def check_numbers(frame: pd.DataFrame, error: ErrorAt = row_error) -> pd.DataFrame:
    """A copy of a tidy scores table with numeric ``seed`` / ``replicate`` (empty: missing)
    and ``score``, and a ``task`` column; the first value that is not an integer (seeds
    first, then replicates) or not a finite score is an error naming its row."""
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
    return data


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
    data = check_numbers(frame, error)
    has_seed = "seed" in data.columns and data["seed"].notna().any()
    has_replicate = "replicate" in data.columns and data["replicate"].notna().any()
    data["seed"] = data["seed"].fillna(-1) if has_seed else -1
    data["replicate"] = data["replicate"].fillna(0) if has_replicate else 0
    key = ["model", "task", "language", "seed", "replicate"]
    duplicated = data.duplicated(key, keep=False)
    if duplicated.any():
        rows = np.flatnonzero(duplicated.to_numpy())[:2]
        raise error(DUPLICATE_RECORD, int(rows[1]), "replicate")
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
        raise error(unequal_replicates(models[m], units[u], low, counts.max()), None, "replicate")
    values = np.full((len(models), len(units), n_seeds, n_reps), np.nan)
    values[data["m"], data["u"], data["s"], data["b"]] = data["score"].to_numpy()
    source: Source = "replicates" if has_replicate else "seeds"
    return ReplicatedScores(tuple(models), tuple(units), values, source, metric)


def unit_seed(seed: int, unit: Unit) -> tuple[int, ...]:
    """Stream of a unit's bootstrap when its test set is known by (task, language) only."""
    return stream_seed(seed, "test set", "", unit.task, unit.language)


def test_set_seed(
    seed: int, dataset: str, task: str, language: str, example_ids: Sequence[object]
) -> tuple[int, ...]:
    """Stream of a test set's bootstrap: a function of the seed and the test set alone.

    The identity is the dataset, task and language and a digest of the example
    ids (in the canonical order :func:`canonical_order` resamples them in), so
    two different test sets never share draws and one test set draws the same
    way whatever else is analysed with it.
    """
    # each id length-prefixed, hashed in one update (blake2b of the concatenation is the
    # digest of the same bytes fed piece by piece)
    parts = []
    for example in example_ids:
        data = str(example).encode("utf-8")
        parts.append(len(data).to_bytes(8, "little"))
        parts.append(data)
    digest = hashlib.blake2b(b"".join(parts), digest_size=16).hexdigest()
    return stream_seed(seed, "test set", dataset, task, language, digest)


def canonical_order(example_ids: Sequence[object] | np.ndarray | None, n: int) -> np.ndarray:
    """Positions of the examples sorted by id (as text): the order they are resampled in.

    The store hands examples out in the first run's stored order, which can
    change when another model is imported; sorting by id makes the order a
    property of the test set. Without ids the given order is kept.
    """
    if example_ids is None:
        return np.arange(n)
    return np.argsort(np.asarray([str(e) for e in example_ids], dtype=object), kind="stable")


class CellStatistics(Protocol):
    """Per-example statistics of all runs on one dataset (``core.store.StatsMatrix`` is one).

    ``dataset`` and ``example_ids`` (optional attributes) identify the test
    set; without them the (task, language) does.
    """

    task: str
    language: str
    models: list[str]
    stats: np.ndarray  # (runs, n, k), runs = models × seeds

    def get_metric(self) -> Any: ...


def seed_positions(cell: CellStatistics) -> list[int]:
    """Position of each run among its model's runs: by seed value when the cell has
    ``seeds`` (runs without a seed first), else by order of appearance — so a model's
    s-th seed does not depend on the order the runs were loaded in."""
    seeds = getattr(cell, "seeds", None)
    order: Sequence[int] = range(len(cell.models))
    if seeds is not None:
        order = sorted(order, key=lambda j: (seeds[j] is not None, seeds[j] or 0, j))
    position: Counter[str] = Counter()
    out = [0] * len(cell.models)
    for j in order:
        out[j] = position[cell.models[j]]
        position[cell.models[j]] += 1
    return out


def replicates_from_statistics(
    cells: Iterable[CellStatistics], metric: str, *, n_replicates: int = 1000, seed: int = 0
) -> ReplicatedScores:
    """Bootstrap every run of every cell and collect the replicate scores.

    Within a cell all runs (models × seeds) are resampled with one weight
    matrix, so replicates are paired across models. The weights are drawn from
    the test set's own stream (:func:`test_set_seed`) over its examples in
    canonical order, so they do not depend on which models or other cells
    are loaded. Each run's full-test-set score ``score(S.sum(0))`` is kept as
    the point estimate (:attr:`ReplicatedScores.point`). Several datasets of
    the same (task, language) are pooled by averaging their scores per
    replicate (and their points).
    """
    # one cell at a time: a cell's statistics (5,000 runs × 10,000 examples: 800 MB) are
    # freed once its replicates are drawn, so memory is one cell's, not every cell's
    done: list[tuple[Unit, list[str], list[int], np.ndarray, np.ndarray]] = []
    for cell in cells:
        unit = Unit(str(cell.task), str(cell.language))
        example_ids = getattr(cell, "example_ids", None)
        stats = np.asarray(cell.stats, dtype=np.float64)
        order = canonical_order(example_ids, stats.shape[1])
        stream = (
            unit_seed(seed, unit)
            if example_ids is None
            else test_set_seed(
                seed,
                str(getattr(cell, "dataset", "")),
                unit.task,
                unit.language,
                [example_ids[i] for i in order],
            )
        )
        # None: the order is 0..n-1; ids already in canonical order need no copy either
        in_order = example_ids is None or bool((order == np.arange(order.size)).all())
        ordered = stats if in_order else stats[:, order]
        metric_of_cell = cell.get_metric()
        # (B, runs), paired across all models and seeds of the cell, and (runs,) points
        reps, full = replicate_and_point_scores(
            ordered, metric_of_cell, n_resamples=n_replicates, seed=stream
        )
        done.append((unit, list(cell.models), seed_positions(cell), reps, full))
        del stats, ordered, cell
    if not done:
        raise InputError(f"no per-example statistics of metric {metric!r} to analyse")
    model_names = sorted({model for _, models, _, _, _ in done for model in models})
    units = sorted({unit for unit, *_ in done}, key=lambda u: (u.task, u.language))
    unit_index = {u: i for i, u in enumerate(units)}
    model_position = {m: i for i, m in enumerate(model_names)}
    max_seeds = max(max(Counter(models).values()) for _, models, _, _, _ in done)
    totals = np.zeros((len(model_names), len(units), max_seeds, n_replicates))
    points = np.zeros((len(model_names), len(units), max_seeds))
    counts = np.zeros((len(model_names), len(units), max_seeds))
    for unit, models, s_index, reps, full in done:
        # run j is the s-th seed of its model (by seed value); (model, seed) pairs are
        # unique within a cell, so one fancy-indexed add places every run's replicates
        m_index = [model_position[model] for model in models]
        u = unit_index[unit]
        for j, (m, s) in enumerate(zip(m_index, s_index, strict=True)):
            totals[m, u, s] += reps[:, j]  # run by run: no temporary of all the replicates
        points[m_index, u, s_index] += full
        counts[m_index, u, s_index] += 1
    with np.errstate(invalid="ignore"):  # 0 / 0 = NaN where a model lacks a seed
        totals /= counts[..., None]
        points /= counts
    return ReplicatedScores(
        tuple(model_names), tuple(units), totals, "examples", metric, point=points
    )


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
