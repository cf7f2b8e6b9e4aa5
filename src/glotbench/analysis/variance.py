"""Variance components of replicated multilingual scores.

After Sälevä, Ataman & Lignos (2025, "From tests to effect sizes"), for one
model and one unit (language, or task × language) with scores
``x[s, b]`` over seeds s = 1..S and bootstrap replicates b = 1..B:

* seed-to-seed SD   σ_seed = SD_s( mean_b x[s, b] )                 (ddof = 1)
* bootstrap SD      σ_boot = mean_s( SD_b x[s, b] )                 (ddof = 1)
* within-language   σ_w    = √(σ_seed² + σ_boot²)

and, over the units of a model, with ``μ_u`` the unit mean over seeds and
replicates,

* between-language SD σ_b = SD_u( μ_u )                              (ddof = 1).

Plug-in standard errors use the normal-theory standard error of a sample SD,
SE(s) = s / √(2(n − 1)) (e.g. Ahn & Fessler 2003), with the estimate plugged
in: n = S for σ_seed, n = U for σ_b; σ_boot averages S independent SDs of B
replicates, SE(σ_boot) = √(Σ_s SE_s²) / S when the seeds' replicates are
independent, and mean_s SE_s (the bound for fully correlated estimates) when
glotbench drew them itself with weights shared by all seeds; σ_w by the delta method,
SE(σ_w) = √((σ_seed·SE_seed)² + (σ_boot·SE_boot)²) / σ_w.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from glotbench.analysis.replicates import ErrorAt, ReplicatedScores, Unit, row_error
from glotbench.analysis.results import number, records, summary_repr
from glotbench.errors import InputError

COMPONENTS = ("sigma_seed", "sigma_boot", "sigma_w")


def sd_standard_error(sd: np.ndarray, n: np.ndarray | float) -> np.ndarray:
    """Normal-theory SE of a sample SD from n values: s / √(2(n − 1)) (NaN for n < 2)."""
    sd = np.asarray(sd, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    out = np.full(np.broadcast(sd, n).shape, np.nan)
    np.divide(sd, np.sqrt(np.maximum(2.0 * (n - 1.0), 1.0)), out=out, where=n >= 2)
    return out


def nan_sd(values: np.ndarray, axis: int) -> np.ndarray:
    """SD with ddof = 1 ignoring NaN; NaN (no warning) where fewer than 2 values.

    Without any NaN, ``np.std``: the same operations as ``np.nanstd`` (sum, divide
    by the count, subtract, square, sum, divide by count − 1) on the values
    themselves, so the same numbers, without ``np.nanstd``'s copy of the values
    with NaN replaced (80 MB for 20 models × 50 languages × 10 seeds × 1,000
    replicates).
    """
    count = (~np.isnan(values)).sum(axis=axis)
    complete = values.shape[axis] > 0 and bool((count == values.shape[axis]).all())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if complete:
            sd = _complete_sd(values, axis)
            constant = values.max(axis=axis) == values.min(axis=axis)
        else:
            sd = np.nanstd(values, axis=axis, ddof=1)
            constant = np.nanmax(values, axis=axis) == np.nanmin(values, axis=axis)
        # identical values (a deterministic model's seeds) have SD exactly 0,
        # not the rounding residue of their mean
    return np.where(count >= 2, np.where(constant, 0.0, sd), np.nan)


def _complete_sd(values: np.ndarray, axis: int) -> np.ndarray:
    """``np.std(values, axis, ddof=1)``, a slice of the first axis at a time.

    When the first axis is not the one reduced, each SD is computed from its own
    values alone, so the numbers are the same, and the temporaries (values − mean)
    are a slice's, not all values'.
    """
    axis = axis % values.ndim
    if axis == 0:
        return np.std(values, axis=axis, ddof=1)
    out = np.empty(values.shape[:axis] + values.shape[axis + 1 :])
    for i in range(values.shape[0]):
        out[i] = np.std(values[i], axis=axis - 1, ddof=1)
    return out


def nan_mean(values: np.ndarray, axis: int) -> np.ndarray:
    """``np.nanmean`` over ``axis`` without the all-NaN warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(values, axis=axis)


@dataclass(frozen=True)
class ComponentTable:
    """Per (model, unit): mean, σ_seed, σ_boot, σ_w and their SEs, as arrays (M × U).

    NaN marks a component that the design cannot estimate (one seed: no
    σ_seed; one replicate: no σ_boot) or a unit the model lacks; ``notes``
    says which, in words.
    """

    models: tuple[str, ...]
    units: tuple[Unit, ...]
    mean: np.ndarray
    sigma_seed: np.ndarray
    sigma_boot: np.ndarray
    se_seed: np.ndarray
    se_boot: np.ndarray
    n_seeds: np.ndarray
    n_replicates: np.ndarray
    notes: tuple[str, ...] = field(default=())
    #: σ_w measured directly (EuroEval's iterations, each a new seed and bootstrapped
    #: test set: their SD) with its SE; None: σ_w from its two components
    sigma_within: np.ndarray | None = None
    se_within: np.ndarray | None = None

    @property
    def single_task(self) -> bool:
        """Whether every unit belongs to one task."""
        return len({u.task for u in self.units}) == 1

    @property
    def sigma_w(self) -> np.ndarray:
        """Within-language SD √(σ_seed² + σ_boot²); a missing part counts as 0.

        Where the replicates mix seed and test-set variation (EuroEval's
        iterations), σ_w is their SD itself (``sigma_within``).
        """
        if self.sigma_within is not None:
            return np.where(np.isnan(self.mean), np.nan, self.sigma_within)
        seed = np.nan_to_num(self.sigma_seed)
        boot = np.nan_to_num(self.sigma_boot)
        both_missing = np.isnan(self.sigma_seed) & np.isnan(self.sigma_boot)
        return np.where(both_missing | np.isnan(self.mean), np.nan, np.sqrt(seed**2 + boot**2))

    @property
    def se_w(self) -> np.ndarray:
        """Delta-method SE of σ_w: NaN when a present component has no SE; 0 when σ_w = 0."""
        if self.se_within is not None:
            return np.where(np.isnan(self.mean), np.nan, self.se_within)
        seed = np.nan_to_num(self.sigma_seed * self.se_seed)
        boot = np.nan_to_num(self.sigma_boot * self.se_boot)
        w = self.sigma_w
        out = np.full_like(w, np.nan)
        np.divide(np.sqrt(seed**2 + boot**2), w, out=out, where=w > 0)
        # σ_w = 0: the limit, as both SEs are proportional to their SDs
        out = np.where(w == 0, 0.0, out)
        # a component without an SE (ready SDs without counts) leaves σ_w's SE unknown
        known = (np.isnan(self.sigma_seed) | ~np.isnan(self.se_seed)) & (
            np.isnan(self.sigma_boot) | ~np.isnan(self.se_boot)
        )
        return np.where(known, out, np.nan)

    def present(self) -> np.ndarray:
        """Where a (model, unit) cell has a score."""
        return ~np.isnan(self.mean)


def cell_intervals(
    replicates: ReplicatedScores, confidence_level: float
) -> tuple[np.ndarray, np.ndarray]:
    """Per (model, unit): the percentile interval of its seeds × replicates, pooled.

    These are the values a non-parametric draw takes for one cell (a seed
    picked uniformly, then one of its replicates), so the interval is the
    α/2 and 1 − α/2 quantiles of that draw (Efron & Tibshirani 1993, eq. 13.5;
    ``numpy.quantile``'s linear interpolation). Every value is a score of the
    metric, so the interval stays in the metric's range. It counts the seeds
    and test-set replicates of one language (no language variation); NaN
    where a cell has fewer than two values.
    """
    if not 0 < confidence_level < 1:
        raise InputError("the confidence level must be between 0 and 1", field="confidence_level")
    alpha = (1.0 - confidence_level) / 2.0
    values = replicates.values
    flat = values.reshape(*values.shape[:2], -1)
    enough = (~np.isnan(flat)).sum(axis=2) >= 2
    low = np.full(values.shape[:2], np.nan)
    high = np.full(values.shape[:2], np.nan)
    if enough.any():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # cells absent: all-NaN rows
            quantiles = np.nanquantile(flat[enough], [alpha, 1.0 - alpha], axis=1)
        low[enough], high[enough] = quantiles[0], quantiles[1]
    return low, high


def cell_summary(replicates: ReplicatedScores, confidence_level: float) -> pd.DataFrame:
    """Every (model, task, language) cell with a score, as the leaderboard's cell table shows it.

    Columns: ``model_index`` (the model's position in ``replicates.models``),
    ``model``, ``task``, ``language``, ``score`` (the point estimate: the mean
    over seeds of the full-test-set scores, :func:`components`), ``sigma_w``,
    ``ci_low`` / ``ci_high`` (:func:`cell_intervals`: the percentile interval of
    the cell's seeds × replicates) and ``n_seeds``; models in their order, each
    model's units in theirs.
    """
    table = components(replicates)
    low, high = cell_intervals(replicates, confidence_level)
    rows = [
        {
            "model_index": i,
            "model": table.models[i],
            "task": unit.task,
            "language": unit.language,
            "score": table.mean[i, j],
            "sigma_w": table.sigma_w[i, j],
            "ci_low": low[i, j],
            "ci_high": high[i, j],
            "n_seeds": int(table.n_seeds[i, j]),
        }
        for i in range(len(table.models))
        for j, unit in enumerate(table.units)
        if not np.isnan(table.mean[i, j])
    ]
    columns = ["model_index", "model", "task", "language", "score", "sigma_w", "ci_low"]
    return pd.DataFrame(rows, columns=[*columns, "ci_high", "n_seeds"])


def _design_notes(
    n_seeds: np.ndarray, n_replicates: np.ndarray, present: np.ndarray, models: tuple[str, ...]
) -> list[str]:
    notes = []
    has_replicates = present.any() and (n_replicates[present] >= 2).any()
    if present.any() and (n_seeds[present] < 2).all():
        consequence = (
            "sigma_w is the bootstrap SD alone" if has_replicates else "sigma_w is missing too"
        )
        notes.append(
            "one seed per model and language: seed-to-seed variance cannot be estimated "
            f"(sigma_seed is missing and {consequence})"
        )
    elif present.any() and (n_seeds[present] < 2).any():
        notes.append("some model-language cells have one seed: their sigma_seed is missing")
    if present.any() and not has_replicates:
        notes.append(
            "no bootstrap replicates: bootstrap variance cannot be estimated "
            "(import per-example statistics, or scores with a 'replicate' column)"
        )
    if (~present).any():
        lacking = [
            f"{models[m]} ({int((~present[m]).sum())})"
            for m in np.flatnonzero(~present.all(axis=1))
        ]
        notes.append(
            f"unbalanced design: {int((~present).sum())} model-language cell(s) have no scores "
            f"(missing per model: {', '.join(lacking)}); each model's summaries use its own "
            "languages"
        )
    return notes


def components(replicates: ReplicatedScores) -> ComponentTable:
    """σ_seed, σ_boot (and so σ_w) with plug-in SEs for every model and unit.

    ``mean`` is the point estimate: the mean over seeds of each seed's
    full-test-set score (:meth:`ReplicatedScores.seed_points`), never a mean of
    bootstrap replicates when the full-sample score is known; σ_seed is the
    SD of those per-seed scores, σ_boot the mean over seeds of the SD of each
    seed's bootstrap replicates (docs/methods.md).
    """
    values = replicates.values  # (M, U, S, B)
    seed_means = replicates.seed_points()  # each seed's point estimate (M, U, S)
    n_seeds = (~np.isnan(seed_means)).sum(axis=2)
    n_reps = np.full(n_seeds.shape, replicates.n_replicates)
    sigma_seed = nan_sd(seed_means, axis=2)
    per_seed_boot = nan_sd(values, axis=3)  # (M, U, S)
    sigma_boot = nan_mean(per_seed_boot, axis=2)
    se_each = sd_standard_error(per_seed_boot, replicates.n_replicates)
    with np.errstate(invalid="ignore", divide="ignore"):
        if replicates.source == "examples":
            # every seed of a dataset was resampled with the same weights, so the per-seed
            # bootstrap SDs are positively correlated: use the conservative bound for fully
            # correlated estimates, the mean of their SEs
            se_boot = nan_mean(se_each, axis=2)
        else:
            se_boot = np.sqrt(np.nansum(se_each**2, axis=2)) / n_seeds
    se_boot = np.where(np.isnan(sigma_boot), np.nan, se_boot)
    mean = nan_mean(seed_means, axis=2)
    present = n_seeds > 0
    if replicates.source == "iterations":
        return _iteration_components(replicates, mean, n_seeds, n_reps)
    return ComponentTable(
        models=replicates.models,
        units=replicates.units,
        mean=mean,
        sigma_seed=sigma_seed,
        sigma_boot=sigma_boot,
        se_seed=sd_standard_error(sigma_seed, n_seeds),
        se_boot=se_boot,
        n_seeds=n_seeds,
        n_replicates=n_reps,
        notes=replicates.notes + tuple(_design_notes(n_seeds, n_reps, present, replicates.models)),
    )


def _iteration_components(
    replicates: ReplicatedScores, mean: np.ndarray, n_seeds: np.ndarray, n_reps: np.ndarray
) -> ComponentTable:
    """The components of EuroEval's iterations: σ_w only.

    Each iteration is a new seed and a bootstrapped test set, so their SD
    (ddof = 1) is σ_w (seed + bootstrap) with SE s/√(2(n − 1)); σ_seed and σ_boot cannot be
    told apart and stay missing.
    """
    values = replicates.values  # (M, U, S, iterations); several "seeds" are rare
    flat = values.reshape(*values.shape[:2], -1)
    n_iterations = (~np.isnan(flat)).sum(axis=2)
    sigma_within = nan_sd(flat, axis=2)
    missing = np.full(mean.shape, np.nan)
    note = (
        "EuroEval iterations (each a new seed and a bootstrapped test set): their SD is "
        "sigma_w (seed + bootstrap); sigma_seed and sigma_boot cannot be separated and are "
        "missing"
    )
    return ComponentTable(
        models=replicates.models,
        units=replicates.units,
        mean=mean,
        sigma_seed=missing,
        sigma_boot=missing.copy(),
        se_seed=missing.copy(),
        se_boot=missing.copy(),
        n_seeds=n_seeds,
        n_replicates=n_reps,
        notes=(*replicates.notes, note),
        sigma_within=sigma_within,
        se_within=sd_standard_error(sigma_within, n_iterations),
    )


def components_from_summary(frame: pd.DataFrame, error: ErrorAt = row_error) -> ComponentTable:
    """A :class:`ComponentTable` from ready SDs: one row per model and language.

    Columns: model, language, score (the mean over seeds and replicates);
    optional task; and either ``sigma_seed`` and/or ``sigma_boot``, or
    ``sigma_w`` alone (then treated as the whole within-language SD); optional
    ``n_seeds`` and ``n_replicates`` for the plug-in SEs.
    """
    required = ("model", "language", "score")
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise error(f"summary table lacks column(s) {', '.join(missing)}", None, missing[0])
    if not {"sigma_seed", "sigma_boot", "sigma_w"} & set(frame.columns):
        raise error(
            "summary table needs SD columns: sigma_seed and/or sigma_boot, or sigma_w",
            None,
            "sigma_w",
        )
    data = frame.copy()
    if "task" not in data.columns:
        data["task"] = "task"
    duplicated = data.duplicated(["model", "task", "language"], keep=False)
    if duplicated.any():
        row = int(np.flatnonzero(duplicated.to_numpy())[1])
        raise error("model, task and language repeat an earlier record", row, "language")
    models = tuple(sorted(data["model"].astype(str).unique()))
    pairs = data[["task", "language"]].drop_duplicates().sort_values(["task", "language"])
    units = tuple(Unit(str(t), str(lang)) for t, lang in pairs.itertuples(index=False))
    shape = (len(models), len(units))
    m = data["model"].astype(str).map({name: i for i, name in enumerate(models)}).to_numpy()
    unit_pos = {(u.task, u.language): i for i, u in enumerate(units)}
    u = np.array(
        [
            unit_pos[(str(t), str(lang))]
            for t, lang in zip(data["task"], data["language"], strict=True)
        ]
    )

    def column(name: str, default: float = np.nan) -> np.ndarray:
        out = np.full(shape, np.nan)
        if name in data.columns:
            vals = pd.to_numeric(data[name], errors="coerce").to_numpy(dtype=np.float64)
            if (~np.isfinite(vals)).any() and name in (
                "score",
                "sigma_seed",
                "sigma_boot",
                "sigma_w",
            ):
                row = int(np.flatnonzero(~np.isfinite(vals))[0])
                raise error(f"{name} is missing or not a finite number", row, name)
            if (vals < 0).any():
                row = int(np.flatnonzero(vals < 0)[0])
                raise error("a standard deviation cannot be negative", row, name)
            out[m, u] = vals
        elif not np.isnan(default):
            out[m, u] = default
        return out

    mean = column("score")
    if "sigma_w" in data.columns and not {"sigma_seed", "sigma_boot"} & set(data.columns):
        sigma_seed, sigma_boot = column("sigma_w"), np.full(shape, np.nan)
    else:
        sigma_seed, sigma_boot = column("sigma_seed"), column("sigma_boot")
    n_seeds = np.nan_to_num(column("n_seeds")).astype(int)
    n_reps = np.nan_to_num(column("n_replicates")).astype(int)
    notes = (
        ["ready standard deviations: plug-in SEs need n_seeds / n_replicates columns"]
        if "n_seeds" not in data.columns
        else []
    )
    present = ~np.isnan(mean)
    if (~present).any():
        notes.append(f"unbalanced design: {int((~present).sum())} model-language cell(s) missing")
    return ComponentTable(
        models=models,
        units=units,
        mean=mean,
        sigma_seed=sigma_seed,
        sigma_boot=sigma_boot,
        se_seed=sd_standard_error(sigma_seed, n_seeds),
        se_boot=sd_standard_error(sigma_boot, n_reps),
        n_seeds=n_seeds,
        n_replicates=n_reps,
        notes=tuple(notes),
    )


@dataclass(frozen=True)
class VarianceComponents:
    """Variance components per language and model (:func:`glotbench.api.analyze_variance`).

    Attributes
    ----------
    per_unit : pandas.DataFrame
        One row per model, task and language: the mean, σ_seed, σ_boot, σ_w,
        their SEs and the seeds and replicates behind them (``.to_frame()``).
    per_model : pandas.DataFrame
        One row per model and task: σ_b (with its SE) and the mean, SD, min
        and max over languages of σ_seed, σ_boot and σ_w.
    notes : tuple of str
        What the reader should know.
    """

    per_unit: pd.DataFrame
    per_model: pd.DataFrame
    notes: tuple[str, ...]

    def to_frame(self) -> pd.DataFrame:
        """The per-unit components (``per_unit``): one row per model, task and language."""
        return self.per_unit

    def __repr__(self) -> str:
        frame = self.per_unit
        sizes = {
            "models": int(frame["model"].nunique()) if "model" in frame else 0,
            "units": len(frame),
        }
        headline = ""
        if "sigma_w" in frame and frame["sigma_w"].notna().any():
            headline = f"median sigma_w={number(frame['sigma_w'].median())}"
        return summary_repr(self, sizes, headline)

    def to_dict(self) -> dict[str, Any]:
        """Per-model and per-unit components and notes as a JSON-safe dict."""
        return {
            "per_model": records(self.per_model),
            "per_language": records(self.per_unit),
            "notes": list(self.notes),
        }


def variance_components(table: ComponentTable) -> VarianceComponents:
    """Per-unit components and a per-model summary (as the paper's Table 1).

    The summary has one row per model and task: σ_b (the SD of the model's
    per-language means within the task, so between-task differences never
    enter it) with its plug-in SE, and for each of σ_seed, σ_boot, σ_w its
    mean, SD, min and max over the task's languages.
    """
    rows = []
    labels = [u.label(table.single_task) for u in table.units]
    w, se_w = table.sigma_w, table.se_w
    for i, model in enumerate(table.models):
        for j, unit in enumerate(table.units):
            if not table.present()[i, j]:
                continue
            rows.append(
                {
                    "model": model,
                    "task": unit.task,
                    "language": unit.language,
                    "unit": labels[j],
                    "mean": table.mean[i, j],
                    "sigma_seed": table.sigma_seed[i, j],
                    "se_sigma_seed": table.se_seed[i, j],
                    "sigma_boot": table.sigma_boot[i, j],
                    "se_sigma_boot": table.se_boot[i, j],
                    "sigma_w": w[i, j],
                    "se_sigma_w": se_w[i, j],
                    "n_seeds": int(table.n_seeds[i, j]),
                    "n_replicates": int(table.n_replicates[i, j]),
                }
            )
    per_unit = pd.DataFrame(rows)
    if per_unit.empty:
        raise InputError("no scores to analyse after filtering")
    summary = []
    notes = list(table.notes)
    for (model, task), group in per_unit.groupby(["model", "task"], sort=False):
        n_units = len(group)
        between = float(group["mean"].std(ddof=1)) if n_units > 1 else float("nan")
        row: dict[str, Any] = {
            "model": model,
            "task": task,
            "n_languages": n_units,
            "mean": float(group["mean"].mean()),
            "sigma_b": between,
            "se_sigma_b": float(sd_standard_error(np.array(between), np.array(n_units))),
        }
        for component in COMPONENTS:
            col = group[component].dropna()
            row[f"{component}_mean"] = float(col.mean()) if len(col) else float("nan")
            row[f"{component}_sd"] = float(col.std(ddof=1)) if len(col) > 1 else float("nan")
            row[f"{component}_min"] = float(col.min()) if len(col) else float("nan")
            row[f"{component}_max"] = float(col.max()) if len(col) else float("nan")
        summary.append(row)
        if n_units < 2:
            notes.append(f"{model} on {task}: one language only, so no between-language SD")
    return VarianceComponents(
        per_unit=per_unit, per_model=pd.DataFrame(summary), notes=tuple(notes)
    )
