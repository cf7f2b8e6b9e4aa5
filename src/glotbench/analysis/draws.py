"""Replicate draws of every model's per-language scores, and their aggregates.

One *draw* is a hypothetical replication of the whole evaluation: for every
model and unit (language, or task × language) a score. Two schemes, after
Sälevä, Ataman & Lignos (2025):

* ``parametric`` (their §4.2): score = unit mean + ε, ε ~ N(0, σ_w²), drawn
  independently per model and unit, from a :class:`ComponentTable` — works
  from ready SDs too;
* ``nonparametric`` (their §6.2): per draw and unit, pick a seed and a
  bootstrap replicate and take that replicate's score. The pick is shared by
  all models (the same uniform number selects each model's seed; the same
  bootstrap replicate index, whose weights were shared when drawn), so draws
  are paired across models.

* ``languages-only``: no replication noise — every draw keeps the observed
  unit means, and only the language resampling below varies. For published
  tables with one score per language.

Optionally the languages are resampled too — ``"without"`` replacement to size
k, or ``"with"`` replacement to the full size — so that between-language
variation enters the uncertainty ("subsampled", §6.2). The same language draw
is used for all models.

Every random number is keyed by what it is for, never by a position
(:func:`glotbench.resample.weights.keyed_uniforms`): draw r's seed and
replicate pick for a unit by (seed, task, language, r); a model's parametric
noise by (seed, model, task, language, r); a task's language draw by (seed,
task, r), and the order of its languages by (seed, task, language, r). So
adding, removing or reordering other models, tasks or languages changes no
draw of the others, and every command draws the same units the same way
under the same seed. Draw r is the same however many draws are computed, or
in how many blocks. The
analyses consume them block by block (:meth:`DrawnDesign.blocks`), so the full
(draws × models × units) array is only built when a caller asks for
:attr:`DrawnDesign.draws`; memory then stays bounded by one block.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

import numpy as np

from glotbench.analysis.replicates import ReplicatedScores, Unit
from glotbench.analysis.variance import ComponentTable, components
from glotbench.errors import GlotbenchError, InputError
from glotbench.resample.weights import BLOCK, keyed_integers, keyed_uniforms, stream_key

Scheme = Literal["parametric", "nonparametric", "languages-only"]
LanguageSampling = Literal["none", "without", "with"]
Aggregator = Literal["mean", "geometric_mean", "median"]
AGGREGATORS: tuple[Aggregator, ...] = ("mean", "geometric_mean", "median")

#: purposes of keyed draws (part of every key, so two purposes never share numbers)
_PARAMETRIC, _NONPARAMETRIC, _LANGUAGES, _LANGUAGE_ORDER = (
    "parametric draw",
    "replicate pick",
    "language draw",
    "language order",
)


def unit_keys(seed: int, purpose: str, units: Sequence[Unit]) -> np.ndarray:
    """One 64-bit key per unit: the unit's identity (task, language) under ``seed``."""
    return np.array([stream_key(seed, purpose, u.task, u.language) for u in units], dtype=np.uint64)


class DesignError(GlotbenchError, ValueError):
    """The data cannot support the requested analysis (e.g. no variance information).

    Caused by the input, so also a :class:`ValueError` (as :class:`~glotbench.errors.InputError`).
    """

    exit_code = 2


@dataclass(frozen=True)
class DrawSettings:
    """How to draw replications: scheme, count, seed and language resampling.

    A resolved recipe (no ``auto`` scheme). The defaults of the commands, pages
    and API are not these field defaults but those of
    :class:`glotbench.analysis.settings.AnalysisSettings`, whose
    :meth:`~glotbench.analysis.settings.AnalysisSettings.draws` gives the
    recipe for a source.
    """

    scheme: Scheme = "nonparametric"
    n_draws: int = 10_000
    seed: int = 0
    languages: LanguageSampling = "none"
    k: int | None = None

    def describe(self) -> str:
        text = f"{self.scheme} resampling, {self.n_draws} draws"
        if self.languages == "without":
            text += f", languages subsampled without replacement to k = {self.k}"
        elif self.languages == "with":
            text += ", languages resampled with replacement"
        return text


def common_units(
    present: np.ndarray, models: tuple[str, ...], labels: tuple[str, ...]
) -> tuple[np.ndarray, list[str]]:
    """Units every model has; notes naming what was dropped (unbalanced designs)."""
    keep = present.all(axis=0)
    notes = []
    if not keep.any():
        raise DesignError(
            "the models share no language: comparisons and ranks need at least one language "
            "that every selected model was evaluated on; select models or languages that share one"
        )
    if not keep.all():
        dropped = [labels[u] for u in np.flatnonzero(~keep)]
        lacking = {
            models[m]: [labels[u] for u in np.flatnonzero(~present[m])]
            for m in range(len(models))
            if not present[m].all()
        }
        detail = "; ".join(
            f"{m} lacks {', '.join(v[:5])}{' …' if len(v) > 5 else ''}" for m, v in lacking.items()
        )
        notes.append(
            f"unbalanced design: {len(dropped)} language(s) not shared by all models were left out "
            f"of comparisons and ranks ({detail})"
        )
    return np.asarray(keep), notes


def _parametric_block(table: ComponentTable, keys: np.ndarray, start: int, rows: int) -> np.ndarray:
    """Draws ``start``..``start + rows`` of mean + σ_w·z, z ~ N(0, 1) keyed by (model, unit).

    ``keys`` (M × U) from :func:`unit_keys`-like hashes of each model and unit;
    z = Φ⁻¹(u) of keyed uniforms (inverse-CDF sampling).
    """
    from scipy.special import ndtri

    counters = np.arange(start, start + rows, dtype=np.uint64)[:, None, None]
    z = ndtri(keyed_uniforms(keys[None], counters))
    return table.mean[None] + z * table.sigma_w[None]


class _ReplicatePicker:
    """Reads draws of the non-parametric scheme out of a ReplicatedScores, prepared once.

    When every model has the same number of seeds on each kept unit (the usual
    case), one (seed, replicate) pick per draw and unit serves every model, and
    the scores are re-laid out as rows (unit, seed, replicate) × models, so a
    draw reads whole contiguous rows instead of M scattered values
    (:meth:`block`); or kept as models × (unit, seed, replicate), so that each
    model's draws are gathered from its own row, contiguous per unit run
    (:attr:`by_model`, :meth:`DrawnDesign.aggregate_all`: no transpose of the
    block). Both layouts are built on first use.
    """

    def __init__(self, replicates: ReplicatedScores, keep: np.ndarray | None) -> None:
        values = replicates.values
        self.values = values
        self.shape = values.shape
        n_models, n_units, _, _ = values.shape
        self.keep = keep
        self.units = np.arange(n_units) if keep is None else np.arange(n_units)[keep]
        self.seeds = replicates.seed_counts()[:, self.units]  # (M, U')
        self.balanced = bool(n_models) and bool((self.seeds == self.seeds[:1]).all())
        if not self.balanced:
            self.flat = values.ravel()

    @cached_property
    def rows(self) -> np.ndarray:
        """Scores as rows (unit, seed, replicate) × models (balanced designs)."""
        # every unit kept: the values themselves, not a fancy-indexed copy of them
        kept = self.values if len(self.units) == self.shape[1] else self.values[:, self.units]
        by_cell = kept.transpose(1, 2, 3, 0)  # (U', S, B, M)
        return np.ascontiguousarray(by_cell).reshape(-1, self.shape[0])

    @cached_property
    def by_model(self) -> np.ndarray:
        """Scores as models × (unit, seed, replicate) of the kept units (balanced designs)."""
        kept = self.values if len(self.units) == self.shape[1] else self.values[:, self.units]
        return np.ascontiguousarray(kept).reshape(self.shape[0], -1)

    def _picks(self, keys: np.ndarray, start: int, rows: int) -> tuple[np.ndarray, np.ndarray]:
        """Seed and replicate index of draws ``start``..``start + rows`` (rows × M or 1 × U')."""
        n_reps = self.shape[3]
        counters = 2 * np.arange(start, start + rows, dtype=np.uint64)[:, None, None]
        uniform = keyed_uniforms(keys[None, None], counters)  # (rows, 1, U'), shared by models
        rep_index = keyed_integers(keys[None, None], counters + np.uint64(1), n_reps)
        seeds = self.seeds[:1] if self.balanced else self.seeds
        seed_index = np.minimum(
            (uniform * seeds[None]).astype(np.int64), np.maximum(seeds[None] - 1, 0)
        )
        return seed_index, rep_index

    def positions(self, keys: np.ndarray, start: int, rows: int) -> np.ndarray:
        """Balanced designs: the column of :attr:`by_model` (row of :attr:`rows`) that draw
        r reads for kept unit u, (rows × U')."""
        _, _, n_seeds, n_reps = self.shape
        seed_index, rep_index = self._picks(keys, start, rows)
        unit = np.arange(len(self.units))
        return (unit * n_seeds + seed_index[:, 0, :]) * n_reps + rep_index[:, 0, :]

    def block(self, keys: np.ndarray, start: int, rows: int) -> np.ndarray:
        """Draws ``start``..``start + rows`` (rows × M × units[keep]).

        ``keys`` (one per kept unit, :func:`unit_keys`) decide each unit's
        uniform (which seed) and replicate index at counters 2r and 2r + 1,
        shared by all models: a function of the unit and the draw alone.
        """
        n_models, n_units, n_seeds, n_reps = self.shape
        if self.balanced:
            picked = np.take(self.rows, self.positions(keys, start, rows), axis=0)  # (rows, U', M)
            return np.ascontiguousarray(picked.transpose(0, 2, 1))
        seed_index, rep_index = self._picks(keys, start, rows)
        # flat position of values[m, u, seed, rep]
        cell = (np.arange(n_models)[:, None] * n_units + self.units[None, :]) * (n_seeds * n_reps)
        return np.take(self.flat, seed_index * n_reps + rep_index + cell[None])


def _nonparametric_source(source: ReplicatedScores | ComponentTable) -> ReplicatedScores:
    """``source`` if the non-parametric scheme can draw from it, else its DesignError."""
    if not isinstance(source, ReplicatedScores):
        raise DesignError(
            "non-parametric resampling needs seeds and bootstrap replicates; with ready SDs "
            "use scheme='parametric'"
        )
    if source.n_replicates < 2 and (source.seed_counts() < 2).all():
        raise DesignError(
            "non-parametric resampling needs several seeds or bootstrap replicates per "
            "language, but each model-language cell has a single score; import per-example "
            "statistics or replicated scores, or use ready SDs with scheme='parametric'"
        )
    return source


def _block_maker(
    source: ReplicatedScores | ComponentTable,
    settings: DrawSettings,
    keep: np.ndarray | None,
) -> Callable[[int, int], np.ndarray]:
    """Check that ``settings`` can draw from ``source``; return make(start, rows) → block."""
    if settings.n_draws < 2:
        raise InputError("n_draws must be at least 2", field="n_draws")
    if settings.scheme == "nonparametric":
        source = _nonparametric_source(source)
        picker = _ReplicatePicker(source, keep)
        kept = [source.units[u] for u in picker.units]
        pick_keys = unit_keys(settings.seed, _NONPARAMETRIC, kept)

        def nonparametric(start: int, rows: int) -> np.ndarray:
            return picker.block(pick_keys, start, rows)

        return nonparametric
    elif settings.scheme == "languages-only":
        if settings.languages == "none":
            raise DesignError(
                "the languages-only scheme has no replication noise, so it needs language "
                "resampling: add languages='with' or languages='without'"
            )
        table = source if isinstance(source, ComponentTable) else components(source)
        mean = table.mean if keep is None else table.mean[:, keep]
        return lambda start, rows: np.broadcast_to(mean[None], (rows, *mean.shape))
    elif settings.scheme == "parametric":
        table = source if isinstance(source, ComponentTable) else components(source)
        present = table.present()
        if np.isnan(table.sigma_w[present]).all():
            raise DesignError(
                "parametric resampling needs a within-language SD (σ_w), but the data have one "
                "score per model and language; supply seeds, replicates or SD columns"
            )

        noise_keys = np.array(
            [
                [stream_key(settings.seed, _PARAMETRIC, m, u.task, u.language) for u in table.units]
                for m in table.models
            ],
            dtype=np.uint64,
        ).reshape(len(table.models), len(table.units))

        def block(start: int, rows: int) -> np.ndarray:
            out = _parametric_block(table, noise_keys, start, rows)
            return out if keep is None else out[..., keep]

        return block
    raise InputError(
        f"unknown scheme {settings.scheme!r}; use nonparametric, parametric or languages-only",
        field="scheme",
    )


def check_draws(source: ReplicatedScores | ComponentTable, settings: DrawSettings) -> None:
    """Raise the error :func:`unit_draws` would raise, without drawing anything.

    The non-parametric checks read the replicates' shape only: laying the
    replicates out for drawing (a copy of all of them) waits for the draws.
    """
    if settings.scheme == "nonparametric":
        if settings.n_draws < 2:
            raise InputError("n_draws must be at least 2", field="n_draws")
        _nonparametric_source(source)
        return
    _block_maker(source, settings, None)


def unit_draw_blocks(
    source: ReplicatedScores | ComponentTable,
    settings: DrawSettings,
    keep: np.ndarray | None = None,
) -> Iterator[tuple[int, np.ndarray]]:
    """(first draw, block of ≤ 256 draws (rows, models, units[keep])) in order.

    Concatenated, the blocks are :func:`unit_draws`; consuming them one at a
    time bounds memory by one block whatever the number of draws. Bad settings
    raise at the call, not at the first block.
    """
    make = _block_maker(source, settings, keep)

    def generate() -> Iterator[tuple[int, np.ndarray]]:
        for start in range(0, settings.n_draws, BLOCK):
            yield start, make(start, min(BLOCK, settings.n_draws - start))

    return generate()


def unit_draws(
    source: ReplicatedScores | ComponentTable,
    settings: DrawSettings,
    keep: np.ndarray | None = None,
) -> np.ndarray:
    """Draws of every model's unit scores, shape (n_draws, models, units[keep])."""
    make = _block_maker(source, settings, keep)
    if settings.scheme == "languages-only":  # no noise: one read-only view of the means
        first = make(0, 1)
        return np.broadcast_to(first[:1], (settings.n_draws, *first.shape[1:]))
    return np.concatenate(
        [
            make(start, min(BLOCK, settings.n_draws - start))
            for start in range(0, settings.n_draws, BLOCK)
        ],
        axis=0,
    )


def task_layout(units: Sequence[Unit]) -> list[np.ndarray]:
    """Positions of each task's units (tasks in order of first appearance)."""
    tasks: dict[str, list[int]] = {}
    for i, unit in enumerate(units):
        tasks.setdefault(unit.task, []).append(i)
    return [np.asarray(idx, dtype=np.int64) for idx in tasks.values()]


def language_draws(
    n_draws: int,
    layout: list[np.ndarray],
    settings: DrawSettings,
    units: Sequence[Unit] | None = None,
) -> list[np.ndarray] | None:
    """Per task, unit positions drawn for every draw (n_draws × k_t); None: languages fixed.

    Languages are resampled within each task (stratified), the same way for all
    models; ``k`` is per task, capped at the task's number of languages when
    sampling without replacement. The draws are keyed by identity (``units``;
    without them, by position): with replacement, pick j of draw r of task t is
    keyed by (seed, t, r·k + j) over the task's languages in order; without
    replacement, the k languages with the smallest keyed uniforms at (seed, t,
    language, r) are taken — so adding a language to a task keeps every other
    language's keys, and no task's draws depend on the other tasks.
    """
    if settings.languages == "none":
        return None
    if settings.languages not in ("with", "without"):
        raise InputError(f"unknown language resampling {settings.languages!r}", field="languages")
    if settings.k is not None and settings.k < 1:
        raise InputError("k must be at least 1", field="k")
    sizes = [
        min(settings.k or len(idx), len(idx))
        if settings.languages == "without"
        else (settings.k or len(idx))
        for idx in layout
    ]
    out = []
    draws = np.arange(n_draws, dtype=np.uint64)
    for t, (idx, size) in enumerate(zip(layout, sizes, strict=True)):
        members = (
            [units[int(i)] for i in idx]
            if units is not None
            else [Unit(f"task {t}", f"unit {int(i)}") for i in idx]
        )
        if settings.languages == "with":
            key = stream_key(settings.seed, _LANGUAGES, members[0].task, "", len(idx), size)
            counters = draws[:, None] * np.uint64(size) + np.arange(size, dtype=np.uint64)[None]
            picks = keyed_integers(np.uint64(key), counters, len(idx))
        else:
            keys = unit_keys(settings.seed, _LANGUAGE_ORDER, members)
            order = np.argsort(keyed_uniforms(keys[None, :], draws[:, None]), axis=1, kind="stable")
            picks = order[:, :size]
        out.append(idx[picks])
    return out


def median(values: np.ndarray, axis: int = -1) -> np.ndarray:
    """``numpy.median`` along ``axis``, the same floats, from a sort instead of a partition.

    numpy's median is the mean of the two middle order statistics ((a + b) / 2,
    as here) or the middle one; a NaN anywhere makes it NaN. numpy's sort of
    short rows (SIMD) is about 5x faster than its two-point partition, which
    made the median the slowest aggregate of ``analyze compare``.
    """
    ordered = np.sort(np.moveaxis(values, axis, -1), axis=-1)
    n = ordered.shape[-1]
    if n == 0:
        return np.median(values, axis=axis)  # numpy's warning and NaN
    middle = (
        ordered[..., n // 2] if n % 2 else (ordered[..., n // 2 - 1] + ordered[..., n // 2]) / 2
    )
    nan = np.isnan(ordered[..., -1])  # NaNs sort last
    if nan.any():
        middle = np.where(nan, np.nan, middle)
    return middle


def aggregate(
    scores: np.ndarray, aggregator: Aggregator, axis: int = -1, *, checked: bool = False
) -> np.ndarray:
    """Aggregate over languages: arithmetic mean, geometric mean or median.

    The geometric mean is exp(mean log x) (as ``scipy.stats.gmean``). A score
    of exactly 0 makes it 0 (log 0 = −∞; the limit of the product), which is
    its value for non-negative numbers; negative scores have no geometric mean
    and raise :class:`DesignError` (callers then skip the aggregator with a note);
    ``checked=True``: the caller knows that no score is negative (no count).
    """
    if aggregator == "mean":
        return scores.mean(axis=axis)
    if aggregator == "median":
        return median(scores, axis=axis)
    if aggregator == "geometric_mean":
        negative = 0 if checked else int(np.count_nonzero(scores < 0))
        if negative:
            raise DesignError(
                "the geometric mean needs positive scores (zeros are allowed and give 0), but "
                f"{negative} (resampled) score(s) are negative; use the mean or median, or a "
                "metric on a positive scale"
            )
        with np.errstate(divide="ignore"):
            return np.exp(np.log(scores).mean(axis=axis))
    raise InputError(f"unknown aggregator {aggregator!r}; use one of {', '.join(AGGREGATORS)}")


def aggregate_units(
    scores: np.ndarray,
    layout: list[np.ndarray],
    aggregator: Aggregator,
    languages: list[np.ndarray] | None = None,
) -> np.ndarray:
    """Aggregate unit scores (..., units) over languages within each task, then over tasks.

    With one task this is the aggregate over its languages; with several it
    is XTREME-R's convention (each task counts once, whatever its number of
    languages). ``languages`` (from :func:`language_draws`) replaces each
    task's units by the drawn ones, draw by draw (``scores`` then (R, M, U)).
    """
    return aggregate_picked(pick_units(scores, layout, languages), aggregator)


def pick_units(
    scores: np.ndarray, layout: list[np.ndarray], languages: list[np.ndarray] | None = None
) -> list[np.ndarray]:
    """Each task's unit scores (..., units of the task), resampled when ``languages`` is given."""
    picked = []
    for t, idx in enumerate(layout):
        if languages is None:
            contiguous = len(idx) and idx[-1] - idx[0] == len(idx) - 1 and (np.diff(idx) == 1).all()
            # a run of units is a view (the same values, no copy of the block)
            picked.append(scores[..., idx[0] : idx[-1] + 1] if contiguous else scores[..., idx])
        elif scores.strides[0] == 0:  # languages-only: every draw holds the same unit means
            picked.append(scores[0][:, languages[t]].transpose(1, 0, 2))
        else:
            picked.append(np.take_along_axis(scores, languages[t][:, None, :], axis=2))
    return picked


def aggregate_picked(picked: list[np.ndarray], aggregator: Aggregator) -> np.ndarray:
    """Aggregate within each task (of :func:`pick_units`), then over tasks."""
    per_task = [aggregate(task, aggregator) for task in picked]
    if len(per_task) == 1:
        return per_task[0]
    return aggregate(np.stack(per_task, axis=-1), aggregator)


@dataclass(frozen=True)
class DrawnDesign:
    """Everything an analysis over draws needs, prepared once.

    ``table`` has the observed unit means and σ's; ``keep`` marks the units all
    models share; ``units``/``labels`` are the kept units; ``layout`` groups
    kept units by task; ``languages`` holds the per-task language draws (None:
    languages fixed). The unit draws (R × M × U') come block by block from
    :meth:`blocks`; :attr:`draws` builds the whole array on first use.
    """

    table: ComponentTable
    keep: np.ndarray
    units: tuple[Unit, ...]
    labels: tuple[str, ...]
    layout: list[np.ndarray]
    languages: list[np.ndarray] | None
    notes: tuple[str, ...]
    source: ReplicatedScores | ComponentTable = field(repr=False)
    settings: DrawSettings = field(default_factory=DrawSettings)

    @property
    def observed(self) -> np.ndarray:
        """Observed unit means of the kept units (M × U')."""
        return self.table.mean[:, self.keep]

    @property
    def n_draws(self) -> int:
        return self.settings.n_draws

    @cached_property
    def draws(self) -> np.ndarray:
        """All unit draws at once (R × M × U'); prefer :meth:`blocks` at scale."""
        return unit_draws(self.source, self.settings, self.keep)

    def blocks(self) -> Iterator[tuple[slice, np.ndarray]]:
        """(rows of the draws, unit draws of those rows) in blocks of ≤ 256 draws."""
        if "draws" in self.__dict__:  # already built: slice it
            for start in range(0, self.n_draws, BLOCK):
                rows = slice(start, min(start + BLOCK, self.n_draws))
                yield rows, self.draws[rows]
            return
        for start, block in unit_draw_blocks(self.source, self.settings, self.keep):
            yield slice(start, start + block.shape[0]), block

    def block_languages(self, rows: slice) -> list[np.ndarray] | None:
        """The language draws of ``rows`` (None: languages fixed)."""
        return None if self.languages is None else [t[rows] for t in self.languages]

    def aggregate(self, aggregator: Aggregator) -> tuple[np.ndarray, np.ndarray]:
        """Observed aggregate (M,) and its draws (R × M)."""
        result = self.aggregate_all((aggregator,))[aggregator]
        if isinstance(result, Exception):
            raise result
        return result

    def aggregate_all(
        self,
        aggregators: Sequence[Aggregator],
        visit: Callable[[slice, np.ndarray], None] | None = None,
    ) -> dict[str, tuple[np.ndarray, np.ndarray] | DesignError]:
        """Observed aggregates and their draws for several aggregators in one pass.

        ``visit(rows, block)`` is called with every block of unit draws, for
        analyses that need more than the aggregates (per-language statistics).
        An aggregator that cannot be computed (the geometric mean of negative
        scores) maps to its :class:`DesignError`; the others are unaffected.
        """
        n_models = len(self.table.models)
        out: dict[str, tuple[np.ndarray, np.ndarray] | DesignError] = {}
        replicated: dict[Aggregator, np.ndarray] = {}
        for aggregator in aggregators:
            try:
                observed = aggregate_units(self.observed, self.layout, aggregator)
            except DesignError as exc:
                out[aggregator] = exc
                continue
            replicated[aggregator] = np.empty((self.n_draws, n_models))
            out[aggregator] = (observed, replicated[aggregator])
        picker = self._model_picker() if visit is None else None
        if picker is not None:
            self._aggregate_by_model(picker, replicated, out)
            return out
        for rows, block in self.blocks():
            picked = pick_units(block, self.layout, self.block_languages(rows))
            for name in list(replicated):
                try:
                    replicated[name][rows] = aggregate_picked(picked, name)
                except DesignError as exc:
                    out[name] = exc
                    del replicated[name]
            if visit is not None:
                visit(rows, block)
        return out

    def _model_picker(self) -> _ReplicatePicker | None:
        """The picker of :meth:`_aggregate_by_model`: balanced non-parametric draws not yet
        built (None otherwise: the blocks of :meth:`blocks` are aggregated)."""
        if (
            "draws" in self.__dict__
            or self.settings.scheme != "nonparametric"
            or not isinstance(self.source, ReplicatedScores)
        ):
            return None
        picker = _ReplicatePicker(self.source, self.keep)
        return picker if picker.balanced else None

    def _aggregate_by_model(
        self,
        picker: _ReplicatePicker,
        replicated: dict[Aggregator, np.ndarray],
        out: dict[str, tuple[np.ndarray, np.ndarray] | DesignError],
    ) -> None:
        """The draws of :meth:`aggregate_all` from blocks laid out models × draws × units.

        The same unit draws as :meth:`blocks` (the same picks, made once for all
        draws: draws × units, no model axis), gathered from each model's row of
        scores a few models at a time (:data:`MODEL_CHUNK_ELEMENTS`), all draws of
        a chunk of models before the next chunk, so that the chunk's scores stay
        in the CPU cache (models outer was measured 20% faster than draws outer at
        1,000 models × 100 units): every task's scores of a model and draw are one
        contiguous run, reduced by numpy in the same order as a run of the draws ×
        models × units block, so every aggregate is the same float, and no block is
        transposed or built whole. When a score is negative, chunks hold every
        model, so that the geometric mean's error counts the negative draws of the
        first block as before.
        """
        keys = unit_keys(
            self.settings.seed, _NONPARAMETRIC, [self.source.units[u] for u in picker.units]
        )
        n_models = picker.shape[0]
        negative = "geometric_mean" in replicated and bool((picker.by_model < 0).any())
        # every block's picks, per task (draws × units of the task: no model axis)
        blocks = []
        for start in range(0, self.n_draws, BLOCK):
            rows = slice(start, min(start + BLOCK, self.n_draws))
            where = picker.positions(keys, start, rows.stop - start)  # (rows, U')
            languages = self.block_languages(rows)
            columns = [
                where[:, idx] if languages is None else np.take_along_axis(where, languages[t], 1)
                for t, idx in enumerate(self.layout)
            ]
            blocks.append((rows, columns))
        block_size = min(BLOCK, self.n_draws) * len(picker.units)
        step = n_models if negative else max(1, MODEL_CHUNK_ELEMENTS // block_size)
        # models outer, draws inner: a chunk's scores stay in the CPU cache for all its draws
        for first in range(0, n_models, step):
            models = slice(first, min(first + step, n_models))
            chunk = picker.by_model[models]
            for rows, columns in blocks:
                picked = [np.take(chunk, c, axis=1) for c in columns]  # (models, rows, k_t)
                for name in list(replicated):
                    try:
                        per_task = [aggregate(task, name, checked=not negative) for task in picked]
                    except DesignError as exc:
                        out[name] = exc
                        del replicated[name]
                        continue
                    combined = (
                        per_task[0]
                        if len(per_task) == 1
                        else aggregate(np.stack(per_task, -1), name, checked=True)
                    )
                    replicated[name][rows, models] = combined.T


#: elements of the unit draws aggregated at a time by :meth:`DrawnDesign.aggregate_all` (2 MiB)
MODEL_CHUNK_ELEMENTS = 2**18


def prepare_draws(source: ReplicatedScores | ComponentTable, settings: DrawSettings) -> DrawnDesign:
    """Component table, shared units and language draws for ``settings``.

    Checks that the unit draws can be made (scheme, replication) without
    making them: they come lazily from :meth:`DrawnDesign.blocks`.
    """
    table = source if isinstance(source, ComponentTable) else components(source)
    labels = tuple(u.label(table.single_task) for u in table.units)
    keep, notes = common_units(table.present(), table.models, labels)
    units = tuple(u for u, k in zip(table.units, keep, strict=True) if k)
    check_draws(source, settings)
    layout = task_layout(units)
    languages = language_draws(settings.n_draws, layout, settings, units)
    kept_labels = tuple(label for label, k in zip(labels, keep, strict=True) if k)
    return DrawnDesign(
        table,
        keep,
        units,
        kept_labels,
        layout,
        languages,
        tuple(list(table.notes) + notes),
        source,
        settings,
    )
