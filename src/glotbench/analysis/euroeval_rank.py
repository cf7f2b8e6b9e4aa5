"""EuroEval's leaderboard rank score, current (2026-05-28) and superseded (2025) method.

EuroEval (formerly ScandEval) ranks models by a *rank score*: per dataset, how
many pooled standard deviations a model lies below the best model, plus 1;
lower is better, the best model scores 1. Scores are averaged over the
datasets of a task (within a language), over the tasks of a language, and over
languages. Source: the EuroEval leaderboards ("Score aggregation";
``EuroEval/leaderboards``, ``score_computation.py``), learnt from, not copied.

Current method (EuroEval, from 2026-05-28), on dataset d with iteration
scores x_{m,1..n_m} of model m (EuroEval runs n = 10 iterations, each a seed
with a bootstrapped test set):

* best_d = max_m x̄_m (the highest mean iteration score of any model);
* σ_d = population SD (ddof = 0) of all iteration scores of all models on d,
  replaced by 1.0 when it is 0;
* plug-in score r_m = 1 + (best_d − x̄_m) / σ_d;
* reported: the **median** over B bootstrap resamples of r*_m = 1 + (best_d −
  x̄*_m)/σ_d, where x̄*_m is the mean of n_m iteration scores of model m drawn
  with replacement (best_d and σ_d stay fixed), with the percentile interval
  [q_{α/2}, q_{1−α/2}] of the r*_m (2.5 / 97.5 % at 95 %);
* aggregation (dataset → task → language → overall): the mean of the parts'
  scores, with half-width h = z·√(Σ_i v_i)/k over the k parts, v_i = (h_i/z)²,
  h_i = (high_i − low_i)/2 and z = Φ⁻¹(1 − α/2) (1.959964 at 95 %) — the SE
  of a mean of independent parts; z cancels, h = √(Σ h_i²)/k. Aggregated
  intervals are symmetric: score ± h.

Bootstrap convention (glotbench): each model on each dataset has its own
generator, ``default_rng(SeedSequence(stream_seed(seed, "euroeval rank",
task, language, k, model)))`` (k: the dataset's position among the table's
datasets of the same task and language, 0 for the first), and draws
``rng.integers(0, n_m, size=(B, n_m))`` resample indices. The draws are a
function of the seed and the (dataset, model) identity alone, so ``analyze
ranks`` and ``analyze euroeval-rank`` draw the same way for the same units,
whatever order they list them in, and adding a model or dataset changes no
other model's resamples (issue 22).
EuroEval's own default number of resamples is a constant of its leaderboard
scripts; the stored versions we read use ``n_bootstraps = 1000`` as the
default of their bootstrap function, so glotbench's default is 1000.

Superseded method (EuroEval leaderboards until 2026-05-28, ``method="2025"``):
per dataset, models sorted by mean; the best gets 1; each next model is
compared with the current reference model by a one-sided Welch t-test
(p < 0.05); if significantly worse its score is the reference's plus
(mean_ref − mean)/SD, SD being the population SD (ddof = 0) of the models'
*mean* scores, and it becomes the reference; otherwise it shares the
reference's score. No interval. Welch's t (Welch 1947): t = (x̄_a − x̄_b) /
√(s_a²/n_a + s_b²/n_b), df by the Welch–Satterthwaite equation.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from glotbench.analysis.euroeval_iterations import IterationTable
from glotbench.analysis.results import records
from glotbench.errors import InputError
from glotbench.resample.row_sums import MAX_ROW, row_sums_columns_first
from glotbench.resample.seeding import generators
from glotbench.resample.weights import stream_seeds

Method = Literal["2026-05-28", "2025"]

#: the date EuroEval switched to the bootstrap rank score
CURRENT_METHOD: Method = "2026-05-28"
LEGACY_METHOD: Method = "2025"
#: accepted spellings of the two methods
METHOD_ALIASES: dict[str, Method] = {
    "2026-05-28": "2026-05-28",
    "current": "2026-05-28",
    "2025": "2025",
    "legacy-2025": "2025",
}
#: default number of bootstrap resamples of a model's iteration scores
DEFAULT_BOOTSTRAPS = 1000


def resolve_method(method: str) -> Method:
    """The canonical name of a rank-score method (``2026-05-28`` or ``2025``)."""
    try:
        return METHOD_ALIASES[method]
    except KeyError:
        raise InputError(
            f"unknown EuroEval rank-score method {method!r}; use 2026-05-28 (current, the "
            "default) or legacy-2025 (superseded on 2026-05-28)",
            field="rank_method",
        ) from None


# --- the current method (2026-05-28) -------------------------------------------------------


def pooled_sd(iterations: np.ndarray) -> float:
    """Population SD (ddof = 0) of all finite iteration scores; 1.0 when it is 0.

    The SD is 0 exactly when all scores are equal (tested as such, so rounding
    of ``np.std`` — 1e-16 for three copies of 0.7 — does not divide by ~0).
    """
    values = iterations[np.isfinite(iterations)]
    if values.size < 2 or np.ptp(values) == 0:
        return 1.0
    return float(np.std(values))


#: at most this many models' resamples are gathered before they are summed (EuroEval's
#: B = 1000 × 10 iterations: 1.25 MiB of float64 for 16 models, within the CPU cache)
MODEL_BATCH = 16


def _generator_of(
    rng: np.random.Generator | Sequence[np.random.Generator] | Callable[[int], np.random.Generator],
    m: int,
) -> np.random.Generator:
    """Model ``m``'s generator: the shared one, ``rng[m]`` or ``rng(m)``."""
    if isinstance(rng, np.random.Generator):
        return rng
    return rng(m) if callable(rng) else rng[m]


def _resampled_means(
    iterations: np.ndarray,
    present: np.ndarray,
    n_bootstraps: int,
    rng: np.random.Generator | Sequence[np.random.Generator] | Callable[[int], np.random.Generator],
) -> np.ndarray:
    """Bootstrap means (len(present) × B) of the finite iterations of the models ``present``.

    Model m's indices are ``rng_m.integers(0, n_m, size=(B, n_m))``, drawn in the order
    of ``present`` (so a shared generator gives each model the same draws as before),
    and its resample b's mean is ``np.add.reduce(values_m[indices[b]]) / n_m``, the
    way ``ndarray.mean`` computes it. Consecutive models with equal n_m are gathered
    columns first (iteration j of every resample contiguous), up to
    :data:`MODEL_BATCH` at a time, and summed by
    :func:`~glotbench.resample.row_sums.row_sums_columns_first` in numpy's order of
    additions, so every float equals the model-by-model ``np.add.reduce``, without
    its per-row overhead (10⁸ rows of ten for 1,000 models × 100 datasets).
    """
    values = [iterations[m][np.isfinite(iterations[m])] for m in present]
    out = np.empty((len(present), n_bootstraps))
    first = 0
    while first < len(present):
        size = values[first].size
        stop = first + 1
        while stop < min(len(present), first + MODEL_BATCH) and values[stop].size == size:
            stop += 1
        if size > MAX_ROW:
            for row in range(first, stop):
                indices = _generator_of(rng, int(present[row])).integers(
                    0, size, size=(n_bootstraps, size)
                )
                out[row] = np.add.reduce(values[row][indices], axis=1) / size
        else:
            gathered = np.empty((stop - first, size, n_bootstraps))
            for row in range(first, stop):
                indices = _generator_of(rng, int(present[row])).integers(
                    0, size, size=(n_bootstraps, size)
                )
                # indices are in range, so "clip" changes nothing but lets take write in place
                values[row].take(indices.T, out=gathered[row - first], mode="clip")
            out[first:stop] = row_sums_columns_first(np.moveaxis(gathered, 1, 0)) / size
        first = stop
    return out


def dataset_rank_scores(
    iterations: np.ndarray,
    n_bootstraps: int,
    rng: np.random.Generator | Sequence[np.random.Generator] | Callable[[int], np.random.Generator],
    confidence_level: float = 0.95,
) -> dict[str, np.ndarray | float]:
    """Current EuroEval rank score of each model on one dataset.

    ``iterations`` is (models × iterations), NaN where absent; ``rng`` one
    generator for all models in turn, one per model, or a function of the
    model's row giving its generator (called only for models that are
    resampled). Returns best, pooled SD, the plug-in score and the bootstrap
    median and percentile interval per model (NaN for a model without scores).

    A model with one iteration has every resample equal to its plug-in score,
    so its median and interval are that score (numpy's median and linear
    percentile of a constant row return the constant exactly) and no
    generator is made for it; drawing from a range of one value consumes no
    random numbers in numpy, so a shared generator's stream is unchanged too.
    """
    finite = np.isfinite(iterations)
    n = finite.sum(axis=1)
    with np.errstate(invalid="ignore"):
        means = np.where(n > 0, np.nansum(iterations, axis=1) / np.maximum(n, 1), np.nan)
    best = float(np.nanmax(means)) if (n > 0).any() else np.nan
    spread = pooled_sd(iterations)
    alpha = (1 - confidence_level) / 2
    plug_in = 1 + (best - means) / spread
    median = np.full(len(means), np.nan)
    low, high = median.copy(), median.copy()
    single = np.flatnonzero(n == 1)
    median[single] = low[single] = high[single] = plug_in[single]
    present = np.flatnonzero(n > 1)
    boots = 1 + (best - _resampled_means(iterations, present, n_bootstraps, rng)) / spread
    if len(present):
        # along an axis numpy computes each row's median and percentiles as for that row
        # alone (the same floats), in one call instead of one per model; both are read
        # from order statistics that numpy's partition finds, so they are the same floats
        # for the sorted rows, which one SIMD sort gives faster than two partitions
        boots.sort(axis=1)
        # numpy's median of a row is its middle order statistic, or the mean of the middle
        # two, (a + b) / 2 (finite here): read from the sorted rows, no partition
        half = n_bootstraps // 2
        median[present] = (
            boots[:, half] if n_bootstraps % 2 else (boots[:, half - 1] + boots[:, half]) / 2
        )
        low[present], high[present] = np.percentile(boots, [100 * alpha, 100 * (1 - alpha)], axis=1)
    return {
        "best": best,
        "pooled_sd": spread,
        "mean": means,
        "plug_in": plug_in,
        "score": median,
        "low": low,
        "high": high,
    }


def _summary_rank_scores(
    mean: np.ndarray, sd: np.ndarray, n: np.ndarray, confidence_level: float
) -> dict[str, np.ndarray | float]:
    """Current method from summaries: exact pooled SD, normal-approximation interval."""
    from scipy.special import ndtri  # the normal quantile (scipy.stats' norm.ppf calls it)

    ok = np.isfinite(mean)
    best = float(np.nanmax(mean)) if ok.any() else np.nan
    m, s, k = mean[ok], sd[ok], n[ok]
    total = k.sum()
    grand = (k * m).sum() / total if total > 0 else np.nan
    ss = ((k - 1) * s**2 + k * (m - grand) ** 2).sum()
    spread = float(np.sqrt(ss / total)) if total > 1 else 0.0
    spread = spread if spread > 0 else 1.0
    z = float(ndtri(1 - (1 - confidence_level) / 2))
    plug_in = 1 + (best - mean) / spread
    half = z * sd * np.sqrt(np.maximum(n - 1, 0) / n) / np.sqrt(n) / spread
    return {
        "best": best,
        "pooled_sd": spread,
        "mean": mean,
        "plug_in": plug_in,
        "score": plug_in,
        "low": plug_in - half,
        "high": plug_in + half,
    }


def combine_intervals(
    scores: np.ndarray, half_widths: np.ndarray, z: float = 1.959964
) -> tuple[float, float]:
    """Mean of k parts and its half-width z·√(Σ (h_i/z)²)/k (EuroEval's aggregation).

    The parts are treated as independent: v_i = (h_i/z)² is part i's variance.
    """
    scores, half_widths = np.asarray(scores, float), np.asarray(half_widths, float)
    k = scores.size
    variances = (half_widths / z) ** 2
    return float(scores.mean()), float(z * np.sqrt(variances.sum()) / k)


# --- the superseded method (2025) -----------------------------------------------------------


def welch_greater_pvalue(
    mean_a: np.ndarray,
    sd_a: np.ndarray,
    n_a: np.ndarray,
    mean_b: np.ndarray,
    sd_b: np.ndarray,
    n_b: np.ndarray,
) -> np.ndarray:
    """One-sided Welch t-test p-value of H1: mean_a > mean_b (Welch 1947; as scipy's ttest_ind)."""
    from scipy.special import stdtr

    var_a, var_b = sd_a**2 / n_a, sd_b**2 / n_b
    se = np.sqrt(var_a + var_b)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (mean_a - mean_b) / se
        df = (var_a + var_b) ** 2 / (var_a**2 / (n_a - 1) + var_b**2 / (n_b - 1))
    p = 1.0 - stdtr(df, t)
    # identical iteration scores (se = 0): not significant unless the means differ
    return np.where(se > 0, p, np.where(mean_a > mean_b, 0.0, 1.0))


def euroeval_rank_scores(
    mean: np.ndarray, sd: np.ndarray, n: np.ndarray, alpha: float = 0.05
) -> np.ndarray:
    """Superseded (2025) EuroEval rank score of each model on one dataset (best = 1).

    Models without a mean (NaN) get NaN and do not enter the SD of the means.
    """
    out = np.full(len(mean), np.nan)
    present = np.flatnonzero(np.isfinite(mean))
    if present.size == 0:
        return out
    order = present[np.argsort(-mean[present], kind="stable")]
    spread = float(np.std(mean[present]))  # population SD of the models' mean scores
    reference = order[0]
    score = 1.0
    for model in order:
        if model != reference:
            p = welch_greater_pvalue(
                mean[reference], sd[reference], n[reference], mean[model], sd[model], n[model]
            )
            if p < alpha:
                score += (mean[reference] - mean[model]) / spread if spread > 0 else 0.0
                reference = model
        out[model] = score
    return out


# --- both methods, aggregated --------------------------------------------------------------


@dataclass(frozen=True)
class EuroEvalRank:
    """EuroEval rank scores per dataset, task, language and overall (lower is better).

    Every table has ``score``, the reported rank score (current method: the
    bootstrap median), and ``low``/``high``, its interval (None for the 2025
    method).

    Attributes
    ----------
    method : str
        ``2026-05-28`` or ``2025``.
    n_bootstraps : int
        Bootstrap draws of the intervals.
    seed : int
        Seed of the draws.
    confidence_level : float
        Level of the intervals.
    datasets : pandas.DataFrame
        One row per dataset and model.
    tasks : pandas.DataFrame
        One row per language, task and model.
    languages : pandas.DataFrame
        One row per language and model.
    overall : pandas.DataFrame
        One row per model (``.to_frame()``).
    notes : tuple of str
        Metrics chosen, datasets left out.
    """

    method: Method
    n_bootstraps: int
    seed: int
    confidence_level: float
    datasets: pd.DataFrame
    tasks: pd.DataFrame
    languages: pd.DataFrame
    overall: pd.DataFrame
    notes: tuple[str, ...]

    def settings(self) -> dict[str, Any]:
        """The method, bootstrap and level settings as a dict."""
        return {
            "method": self.method,
            "superseded": self.method == LEGACY_METHOD,
            "n_bootstraps": self.n_bootstraps if self.method == CURRENT_METHOD else None,
            "seed": self.seed,
            "confidence_level": self.confidence_level,
        }

    def to_frame(self) -> pd.DataFrame:
        """The overall rank scores (``overall``): one row per model."""
        return self.overall

    def metric_per_dataset(self) -> dict[str, str | None]:
        """The metric each dataset was scored on (None where the input names none)."""
        frame = self.datasets.drop_duplicates("dataset")
        return {
            str(d): (None if m is None or m != m else str(m))
            for d, m in zip(frame["dataset"], frame["metric"], strict=True)
        }

    def to_dict(self) -> dict[str, Any]:
        """Settings, rank scores per level and notes as a JSON-safe dict."""
        return {
            "settings": self.settings(),
            "overall": records(self.overall),
            "languages": records(self.languages),
            "tasks": records(self.tasks),
            "datasets": records(self.datasets),
            "metrics": self.metric_per_dataset(),
            "notes": list(self.notes),
        }


def _aggregate(
    parts: pd.DataFrame, keys: list[str], z: float, models: Sequence[str]
) -> pd.DataFrame:
    """Per ``keys`` and model: the mean of the parts and a combined half-width.

    The half-width is :func:`combine_intervals`'s, z·√(Σ (h_i/z)²)/k, computed
    for all groups at once.
    """
    columns = [*keys, "model", "score", "low", "high", "n"]
    valid = parts[parts["score"].notna() & parts["model"].isin(list(models))]
    if valid.empty:
        return pd.DataFrame(columns=columns)
    variance = ((valid["high"] - valid["low"]) / 2 / z) ** 2
    grouped = (
        valid.assign(_variance=variance)
        .groupby([*keys, "model"], sort=False)
        .agg(score=("score", "mean"), _variance=("_variance", "sum"), n=("score", "size"))
        .reset_index()
    )
    # a missing half-width (the 2025 method has none) leaves the interval missing
    missing = valid.assign(_missing=variance.isna()).groupby([*keys, "model"], sort=False)
    grouped["_variance"] = grouped["_variance"].where(~missing["_missing"].any().to_numpy(), np.nan)
    half = z * np.sqrt(grouped["_variance"]) / grouped["n"]
    grouped["low"] = grouped["score"] - half
    grouped["high"] = grouped["score"] + half
    order = {model: i for i, model in enumerate(models)}
    grouped["_order"] = grouped["model"].map(order)
    grouped = grouped.sort_values([*keys, "_order"], kind="stable").reset_index(drop=True)
    grouped["n"] = grouped["n"].astype(int)
    return grouped[columns]


#: columns of :attr:`EuroEvalRank.datasets`, one row per model and dataset
DATASET_COLUMNS = [
    "dataset",
    "task",
    "language",
    "metric",
    "model",
    "n_iterations",
    "mean",
    "best",
    "pooled_sd",
    "plug_in",
    "score",
    "low",
    "high",
]


def _dataset_frame(parts: list[dict[str, Any]]) -> pd.DataFrame:
    """:attr:`EuroEvalRank.datasets` from each dataset's columns (the rated models' rows)."""
    if not any(len(part["model"]) for part in parts):
        return pd.DataFrame([], columns=DATASET_COLUMNS)
    columns: dict[str, Any] = {}
    for name in DATASET_COLUMNS:
        values = [part[name] for part in parts]
        if isinstance(values[0], list):
            columns[name] = np.array([v for part in values for v in part], dtype=object)
        else:
            columns[name] = np.concatenate(values)
    return pd.DataFrame(columns, columns=DATASET_COLUMNS)


def _one_dataset(
    table: IterationTable,
    d: int,
    method: Method,
    n_bootstraps: int,
    rngs: Callable[[int], np.random.Generator],
    confidence_level: float,
) -> dict[str, Any]:
    """Rank scores of every model on dataset ``d`` by ``method``.

    Best, pooled SD, plug-in, score and interval (the 2025 method has none: NaN).
    """
    if method == LEGACY_METHOD:
        legacy = euroeval_rank_scores(table.mean[:, d], table.sd[:, d], table.n[:, d])
        nan = np.full(len(table.models), np.nan)
        return {
            "best": float(np.nanmax(table.mean[:, d])),
            "pooled_sd": float(np.std(table.mean[np.isfinite(table.mean[:, d]), d])),
            "mean": table.mean[:, d],
            "plug_in": legacy,
            "score": legacy,
            "low": nan,
            "high": nan,
        }
    if table.scores is None:
        return _summary_rank_scores(
            table.mean[:, d], table.sd[:, d], table.n[:, d], confidence_level
        )
    return dataset_rank_scores(table.scores[:, d], n_bootstraps, rngs, confidence_level)


def _model_streams(
    seed: int, cell: tuple[str, str], occurrence: int, models: Sequence[str]
) -> Callable[[int], np.random.Generator]:
    """The generator of model ``models[m]`` on a dataset: ``default_rng(SeedSequence(e))``.

    A model with one iteration needs none (see :func:`dataset_rank_scores`). Its
    entropy e is ``stream_seed(seed, "euroeval rank", task, language, occurrence,
    model)``, computed for all models at once by :func:`stream_seeds`; the
    generators come from :func:`glotbench.resample.seeding.generators` (the same
    draws, seeded for all models at once; one generator object is reseeded per
    model, so each is drawn from before the next is asked for).
    """
    return generators(stream_seeds(seed, ("euroeval rank", *cell, occurrence), models))


def euroeval_rank(
    table: IterationTable,
    method: str = CURRENT_METHOD,
    n_bootstraps: int = DEFAULT_BOOTSTRAPS,
    seed: int = 0,
    confidence_level: float = 0.95,
) -> EuroEvalRank:
    """EuroEval rank scores of ``table`` by the current (default) or the 2025 method."""
    from scipy.special import ndtri  # the normal quantile (scipy.stats' norm.ppf calls it)

    chosen = resolve_method(method)
    if n_bootstraps < 1:
        raise InputError("the number of bootstrap resamples must be at least 1", field="bootstraps")
    if not 0 < confidence_level < 1:
        raise InputError("the confidence level must lie between 0 and 1", field="confidence_level")
    z = float(ndtri(1 - (1 - confidence_level) / 2))
    parts: list[dict[str, Any]] = []
    occurrence: Counter[tuple[str, str]] = Counter()
    models = np.array(table.models, dtype=object)
    for d, dataset in enumerate(table.datasets):
        cell = (table.tasks[d], table.languages[d])
        rngs = _model_streams(seed, cell, occurrence[cell], table.models)
        occurrence[cell] += 1
        out = _one_dataset(table, d, chosen, n_bootstraps, rngs, confidence_level)
        rated = np.isfinite(table.mean[:, d])
        count = int(rated.sum())
        parts.append(
            {
                "dataset": [dataset] * count,
                "task": [table.tasks[d]] * count,
                "language": [table.languages[d]] * count,
                "metric": [table.metrics[d] if table.metrics else None] * count,
                "model": models[rated],
                "n_iterations": table.n[rated, d].astype(np.int64),
                "mean": table.mean[rated, d].astype(float),
                "best": np.full(count, out["best"], dtype=float),
                "pooled_sd": np.full(count, out["pooled_sd"], dtype=float),
                **{k: np.asarray(out[k], dtype=float)[rated] for k in DATASET_COLUMNS[-4:]},
            }
        )
    datasets = _dataset_frame(parts)
    tasks = _aggregate(datasets, ["language", "task"], z, table.models)
    languages = _aggregate(tasks, ["language"], z, table.models)
    overall = _aggregate(languages.assign(all="overall"), ["all"], z, table.models).drop(
        columns="all"
    )
    notes = list(table.notes)
    if chosen == LEGACY_METHOD:
        notes.append(
            "EuroEval rank score by the 2025 method (Welch t-test gating, SD of the models' "
            "means), superseded by EuroEval on 2026-05-28; it has no interval"
        )
    return EuroEvalRank(
        chosen,
        n_bootstraps,
        seed,
        confidence_level,
        datasets,
        tasks,
        languages,
        overall,
        tuple(notes),
    )
