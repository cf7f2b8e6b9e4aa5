"""Fine-grained analysis by buckets of examples (after ExplainaBoard, Liu et al. 2021).

Each example gets attributes (text length, entity length and tag, question /
context / answer length, lexical overlap, label, or any user column); examples
are grouped into buckets — equal-frequency quantile bins for a continuous
attribute, one bucket per value for a discrete one — and the metric is scored
per bucket.

A bucket is a 0/1 mask row m over the examples, so its score is
``score(m @ S)`` (:func:`glotbench.resample.engine.mask_scores`); nothing is
recomputed from text. Its bootstrap interval uses the engine's weight rows
w_r of the whole test set restricted to the bucket, ``score((w_r ∘ m) @ S)`` —
computed as ``replicate_scores`` of the masked statistics diag(m) S, so every
bucket and every system shares the same W (paired across systems; the bucket's
size varies across replicates, as in an unconditional bootstrap of a
sub-population). Percentile intervals ignore replicates in which the bucket is
empty or the score is undefined.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from glotbench.analysis.results import records
from glotbench.errors import InputError
from glotbench.ingest.attributes import tokens
from glotbench.metrics.base import Metric
from glotbench.resample.engine import (
    ScoreFn,
    as_score_fn,
    as_systems,
    mask_scores,
    replicate_scores,
)

#: text columns of an attributes file and the length attribute derived from each
LENGTH_COLUMNS = {
    "text": "text_length",
    "sentence": "text_length",
    "premise": "premise_length",
    "hypothesis": "hypothesis_length",
    "question": "question_length",
    "context": "context_length",
    "answer": "answer_length",
    "entity": "entity_length",
    "source": "source_length",
    "reference": "reference_length",
}
#: pairs of text columns whose lexical overlap becomes an attribute
OVERLAP_PAIRS = (("question", "context"), ("premise", "hypothesis"), ("source", "reference"))
#: discrete columns kept as they are
DISCRETE_COLUMNS = ("label", "tag", "entity_tag", "answer_type")


def lexical_overlap(a: Any, b: Any) -> float:
    """Share of the word types of ``a`` that occur in ``b`` (ExplainaBoard's overlap)."""
    first, second = set(tokens(a)), set(tokens(b))
    return len(first & second) / len(first) if first else 0.0


def example_attributes(frame: pd.DataFrame) -> pd.DataFrame:
    """Attributes per example from a table keyed by ``example_id``.

    Text columns (``text``, ``question``, ``context``, ``answer``, ``entity``, …)
    become token lengths (``*_length``); (question, context) and (premise,
    hypothesis) pairs add ``lexical_overlap``; every other column (label, tag,
    or any user column) is kept as is. Returns one row per example, indexed by
    example_id.
    """
    if "example_id" not in frame.columns:
        raise InputError("the attributes table needs an 'example_id' column", field="example_id")
    ids = frame["example_id"].astype(str)
    if ids.duplicated().any():
        raise InputError(
            f"example_id {ids[ids.duplicated()].iloc[0]!r} appears twice in the attributes; "
            "give one row per example",
            field="example_id",
        )
    out = pd.DataFrame(index=pd.Index(ids, name="example_id"))
    for column in frame.columns:
        if column == "example_id":
            continue
        values = frame[column].to_numpy()
        if column in LENGTH_COLUMNS:
            out[LENGTH_COLUMNS[column]] = [len(tokens(v)) for v in values]
        else:
            out[column] = values
    for a, b in OVERLAP_PAIRS:
        if a in frame.columns and b in frame.columns:
            out["lexical_overlap"] = [
                lexical_overlap(x, y) for x, y in zip(frame[a], frame[b], strict=True)
            ]
    return out


def is_continuous(values: pd.Series, max_discrete: int = 10) -> bool:
    """Numeric with more than ``max_discrete`` distinct values (else: bucket by value)."""
    numeric = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
    return bool(numeric and values.nunique(dropna=True) > max_discrete)


def bucket_masks(
    values: pd.Series, n_buckets: int = 4, max_discrete: int = 10, max_values: int = 20
) -> tuple[list[str], npt.NDArray[np.float64], str]:
    """Bucket labels, the (B × n) 0/1 masks and the kind (``continuous`` / ``discrete``).

    Continuous: equal-frequency bins by quantiles (ties never split; bins that
    would be empty are merged). Discrete: one bucket per value, the most
    frequent ``max_values`` values, the rest in ``(other)``; a float value is
    labelled (and grouped) by its 3 significant digits. Missing values are in
    no bucket.
    """
    present = values.notna().to_numpy()
    if is_continuous(values, max_discrete):
        numeric = pd.to_numeric(values, errors="coerce")
        bins = pd.qcut(numeric, q=n_buckets, duplicates="drop")
        categories = bins.cat.categories
        labels, masks = [], []
        for category in categories:
            mask = (bins == category).to_numpy() & present
            lo = numeric[mask].min()
            hi = numeric[mask].max()
            labels.append(f"{lo:g}–{hi:g}")
            masks.append(mask)
        return labels, np.asarray(masks, dtype=np.float64).reshape(len(labels), -1), "continuous"
    if pd.api.types.is_float_dtype(values):  # e.g. 1/3 → "0.333" (3 significant digits)
        text = values.map(lambda v: f"{v:.3g}").where(values.notna(), None)
    else:
        text = values.astype(str).where(values.notna(), None)
    counts = text.value_counts()
    kept = sorted(counts.index[:max_values], key=lambda v: (-counts[v], v))
    labels, masks = [], []
    for value in kept:
        labels.append(str(value))
        masks.append((text == value).to_numpy())
    rest = present & ~text.isin(kept).to_numpy()
    if rest.any():
        labels.append("(other)")
        masks.append(rest)
    return labels, np.asarray(masks, dtype=np.float64).reshape(len(labels), -1), "discrete"


def bucket_replicates(
    stats: npt.ArrayLike,
    score: Metric | ScoreFn,
    masks: npt.ArrayLike,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    compress: bool | Literal["auto"] = "auto",
) -> npt.NDArray[np.float64]:
    """Bootstrap replicates of every bucket and system: (R × B × m).

    Replicate r of bucket b is ``score((w_r ∘ m_b) @ S)``: the engine's
    ``replicate_scores`` on the masked statistics ``m_b[:, None] * S``, all
    buckets and systems stacked so they share W. ``compress`` as in the engine
    (identical example rows drawn as one multinomial cell; same distribution).
    """
    systems = as_systems(stats)
    weights = np.atleast_2d(np.asarray(masks, dtype=np.float64))
    return stats_replicates(
        weights[:, None, :, None] * systems[None],
        score,
        n_resamples=n_resamples,
        seed=seed,
        compress=compress,
    )


def stats_replicates(
    bucket_stats: npt.NDArray[np.float64],
    score: Metric | ScoreFn,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    compress: bool | Literal["auto"] = "auto",
) -> npt.NDArray[np.float64]:
    """Replicates (R × B × m) of per-bucket statistics ``bucket_stats`` (B × m × n × k).

    Replicate r of bucket b and system s is ``score(w_r @ S_bs)``, the engine's
    weight rows over the n examples shared by all buckets and systems. A mask
    bucket is ``S_bs = diag(m_b) S_s``; an entity-level bucket sums, per
    example, the statistics of the example's entities in the bucket.
    """
    n_b, m, n, k = bucket_stats.shape
    with np.errstate(divide="ignore", invalid="ignore"):
        reps = replicate_scores(
            bucket_stats.reshape(-1, n, k),
            score,
            n_resamples=n_resamples,
            seed=seed,
            compress=compress,
        )
    return reps.reshape(n_resamples, n_b, m)


def unit_bucket_stats(
    units: pd.DataFrame,
    values: pd.Series,
    run_ids: Sequence[str],
    example_ids: Sequence[str],
    k: int,
    n_buckets: int = 4,
) -> tuple[list[str], npt.NDArray[np.float64], npt.NDArray[np.float64], str]:
    """Entity-level buckets: labels, per-bucket statistics (B × m × n × k), unit counts, kind.

    ``units`` has columns run_id, example_id, unit, stats (one row per entity
    unit of a run, :mod:`glotbench.ingest.attributes`); ``values`` is the
    attribute of each unit, indexed by (example_id, unit). Units are bucketed
    by their value (:func:`bucket_masks` over the distinct units of all runs:
    gold entities and every system's predicted-only entities), and
    ``S_b[s, i]`` sums the statistics of the units of example i in bucket b
    for run s. Since an example's unit statistics sum to its own, the
    buckets' statistics sum to the run's (units without a value excepted), and
    resampling stays at the example level (entities of a sentence are drawn
    together, a cluster bootstrap). The count per bucket is its number of
    distinct units.
    """
    run_pos = {r: i for i, r in enumerate(run_ids)}
    ex_pos = {str(e): j for j, e in enumerate(example_ids)}
    frame = units[units["run_id"].isin(run_pos) & units["example_id"].astype(str).isin(ex_pos)]
    keys = pd.MultiIndex.from_arrays(
        [frame["example_id"].astype(str), frame["unit"].astype(str)], names=["example_id", "unit"]
    )
    distinct = keys.unique()
    unit_values = values.reindex(distinct)
    labels, masks, kind = bucket_masks(unit_values.reset_index(drop=True), n_buckets)
    out = np.zeros((len(labels), len(run_ids), len(example_ids), k))
    if not labels or frame.empty:
        return labels, out, masks.sum(axis=1), kind
    in_any = masks.any(axis=0)
    bucket_of_unit = np.where(in_any, masks.argmax(axis=0), -1)
    position = distinct.get_indexer(keys)
    bucket = bucket_of_unit[position]
    keep = bucket >= 0
    rows = frame["run_id"].map(run_pos).to_numpy()[keep]
    cols = np.asarray([ex_pos[str(e)] for e in frame["example_id"]], dtype=np.int64)[keep]
    stats = np.stack([np.asarray(v, dtype=np.float64) for v in frame["stats"]])[keep]
    np.add.at(out, (bucket[keep], rows, cols), stats)
    return labels, out, masks.sum(axis=1), kind


@dataclass(frozen=True)
class BucketAnalysis:
    """Result of :func:`analyze_buckets`.

    Attributes
    ----------
    buckets : pandas.DataFrame
        attribute, kind, bucket, n_examples, system, score, ci_low, ci_high,
        standard_error (``.to_frame()``).
    pairwise : pandas.DataFrame
        attribute, bucket, system_a, system_b, difference, ci_low, ci_high,
        share_a_better.
    diagnosis : pandas.DataFrame
        Per attribute and pair, where A beats B by the most and where B beats
        A by the most.
    settings : dict
        The analysis' settings.
    notes : tuple of str
        What the reader should know.
    """

    buckets: pd.DataFrame
    pairwise: pd.DataFrame
    diagnosis: pd.DataFrame
    settings: dict[str, Any]
    notes: tuple[str, ...] = field(default=())

    def to_frame(self) -> pd.DataFrame:
        """The per-bucket table (``buckets``)."""
        return self.buckets

    def to_dict(self) -> dict[str, Any]:
        """Settings, buckets and notes as a JSON-safe dict."""
        return {
            "settings": self.settings,
            "buckets": records(self.buckets),
            "pairwise": records(self.pairwise),
            "diagnosis": records(self.diagnosis),
            "notes": list(self.notes),
        }


def _interval(
    values: npt.NDArray[np.float64], confidence_level: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    alpha = (1 - confidence_level) / 2
    with np.errstate(all="ignore"):
        finite = np.where(np.isfinite(values), values, np.nan)
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            low = np.nanquantile(finite, alpha, axis=0)
            high = np.nanquantile(finite, 1 - alpha, axis=0)
            se = np.nanstd(finite, axis=0, ddof=1)
    return low, high, se


def _aligned_attributes(
    attributes: pd.DataFrame, example_ids: Sequence[str] | None, n: int, notes: list[str]
) -> pd.DataFrame:
    """``attributes`` in the order of the results' examples (a note for examples without)."""
    if example_ids is None:
        if len(attributes) != n:
            raise InputError(f"{len(attributes)} attribute rows for {n} examples")
        return attributes
    ids = pd.Index([str(e) for e in example_ids])
    missing = ids.difference(attributes.index)
    if len(missing) == len(ids):
        raise InputError(
            "no example id of the results appears in the attributes file "
            f"(e.g. results have {list(ids[:2])}, attributes {list(attributes.index[:2])})",
            field="example_id",
        )
    if len(missing):
        notes.append(
            f"{len(missing)} of {len(ids)} examples have no attributes and are in no bucket"
        )
    return attributes.reindex(ids)


def _column_scores(
    runs: npt.NDArray[np.float64],
    score: Metric | ScoreFn,
    column: str,
    attributes: pd.DataFrame,
    units: tuple[pd.DataFrame, pd.DataFrame, Sequence[str]] | None,
    example_ids: Sequence[str] | None,
    n_buckets: int,
    n_resamples: int,
    seed: int,
) -> tuple[list[str], str, Any, npt.NDArray[np.float64], npt.NDArray[np.float64]] | None:
    """Buckets of one attribute; None when the attribute has no values.

    Labels, kind, sizes, point scores (B × runs) and replicates (R × B × runs).
    """
    if column in attributes.columns:
        labels, masks, kind = bucket_masks(attributes[column].reset_index(drop=True), n_buckets)
        if not labels:
            return None
        with np.errstate(divide="ignore", invalid="ignore"):
            point_runs = mask_scores(runs, score, masks)  # (B × runs)
        reps_runs = bucket_replicates(runs, score, masks, n_resamples=n_resamples, seed=seed)
        return labels, kind, masks.sum(axis=1), point_runs, reps_runs
    assert units is not None
    unit_attributes, unit_stats, run_ids = units
    labels, bucket_stats, sizes, kind = unit_bucket_stats(
        unit_stats,
        unit_attributes[column],
        list(run_ids),
        [str(e) for e in example_ids] if example_ids is not None else [],
        runs.shape[2],
        n_buckets,
    )
    if not labels:
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        point_runs = np.asarray(as_score_fn(score)(bucket_stats.sum(axis=2)), dtype=np.float64)
    reps_runs = stats_replicates(bucket_stats, score, n_resamples=n_resamples, seed=seed)
    return labels, kind, sizes, point_runs, reps_runs


def _pair_rows(
    column: str,
    labels: Sequence[str],
    names: Sequence[str],
    point: npt.NDArray[np.float64],
    reps: npt.NDArray[np.float64],
    confidence_level: float,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Per pair of systems: the difference per bucket, and each one's best bucket."""
    pair_rows: list[dict[str, Any]] = []
    diagnosis_rows: list[dict[str, Any]] = []
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            diff = point[:, i] - point[:, j]
            diff_reps = reps[:, :, i] - reps[:, :, j]
            d_low, d_high, _ = _interval(diff_reps, confidence_level)
            with np.errstate(invalid="ignore"):
                share = np.nanmean(np.where(np.isfinite(diff_reps), diff_reps > 0, np.nan), 0)
            for b, label in enumerate(labels):
                pair_rows.append(
                    {
                        "attribute": column,
                        "bucket": label,
                        "system_a": names[i],
                        "system_b": names[j],
                        "difference": float(diff[b]),
                        "ci_low": float(d_low[b]),
                        "ci_high": float(d_high[b]),
                        "share_a_better": float(share[b]),
                    }
                )
            if np.isfinite(diff).any():
                best_a = int(np.nanargmax(diff))
                best_b = int(np.nanargmin(diff))
                diagnosis_rows.append(
                    {
                        "attribute": column,
                        "system_a": names[i],
                        "system_b": names[j],
                        "a_best_bucket": labels[best_a],
                        "a_best_difference": float(diff[best_a]),
                        "a_best_significant": bool(d_low[best_a] > 0),
                        "b_best_bucket": labels[best_b],
                        "b_best_difference": float(diff[best_b]),
                        "b_best_significant": bool(d_high[best_b] < 0),
                    }
                )
    return pair_rows, diagnosis_rows


def analyze_buckets(
    stats: npt.ArrayLike,
    score: Metric | ScoreFn,
    attributes: pd.DataFrame,
    *,
    systems: Sequence[str],
    example_ids: Sequence[str] | None = None,
    system_of_run: Sequence[str] | None = None,
    columns: Sequence[str] | None = None,
    n_buckets: int = 4,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    seed: int = 0,
    unit_attributes: pd.DataFrame | None = None,
    unit_stats: pd.DataFrame | None = None,
    run_ids: Sequence[str] | None = None,
) -> BucketAnalysis:
    """Score per bucket of every attribute, with bootstrap intervals; pairwise diagnosis.

    ``stats`` is (runs × n × k) on the same examples (e.g. ``store.stats.matrix``);
    ``system_of_run`` names each run's system (several seeds of a system are
    averaged, score by score and replicate by replicate); ``attributes`` is
    indexed by example id (:func:`example_attributes`) and aligned to
    ``example_ids``; ``columns`` picks attributes (default: all).

    Entity-level attributes: ``unit_attributes`` indexed by (example_id, unit)
    and ``unit_stats`` (run_id, example_id, unit, stats) of the runs
    ``run_ids`` (:func:`unit_bucket_stats`); their buckets report the number
    of distinct entities in ``n_examples``.
    """
    runs = as_systems(stats)
    owners = list(system_of_run) if system_of_run is not None else list(systems)
    if len(owners) != runs.shape[0]:
        raise InputError(f"{len(owners)} system names for {runs.shape[0]} runs")
    names = list(dict.fromkeys(systems))
    groups = [np.flatnonzero(np.asarray(owners) == name) for name in names]
    notes: list[str] = []
    attributes = _aligned_attributes(attributes, example_ids, runs.shape[1], notes)
    units = None
    if unit_attributes is not None and unit_stats is not None and run_ids is not None:
        units = (unit_attributes, unit_stats, run_ids)
    unit_columns = list(unit_attributes.columns) if units else []  # type: ignore[union-attr]
    available = list(attributes.columns) + [c for c in unit_columns if c not in attributes]
    chosen = list(columns) if columns else available
    unknown = [c for c in chosen if c not in available]
    if unknown:
        raise InputError(
            f"no attribute {unknown[0]!r}; available: {', '.join(available) or '(none)'}",
            field="attribute",
        )
    if units and example_ids is not None and any(c in unit_columns for c in chosen):
        _check_units_add_up(runs, units[1], units[2], example_ids, notes)
    bucket_rows: list[dict[str, Any]] = []
    pair_rows: list[dict[str, Any]] = []
    diagnosis_rows: list[dict[str, Any]] = []
    for column in chosen:
        scored = _column_scores(
            runs, score, column, attributes, units, example_ids, n_buckets, n_resamples, seed
        )
        if scored is None:
            notes.append(f"{column}: no values, skipped")
            continue
        labels, kind, sizes, point_runs, reps_runs = scored
        point = np.stack([point_runs[:, g].mean(axis=1) for g in groups], axis=1)  # (B × M)
        reps = np.stack([reps_runs[:, :, g].mean(axis=2) for g in groups], axis=2)  # (R×B×M)
        low, high, se = _interval(reps, confidence_level)
        for b, label in enumerate(labels):
            for s, name in enumerate(names):
                bucket_rows.append(
                    {
                        "attribute": column,
                        "kind": kind,
                        "bucket": label,
                        "n_examples": int(sizes[b]),
                        "system": name,
                        "score": float(point[b, s]),
                        "ci_low": float(low[b, s]),
                        "ci_high": float(high[b, s]),
                        "standard_error": float(se[b, s]),
                    }
                )
        pairs, diagnosis = _pair_rows(column, labels, names, point, reps, confidence_level)
        pair_rows += pairs
        diagnosis_rows += diagnosis
    settings = {
        "n_buckets": n_buckets,
        "n_resamples": n_resamples,
        "confidence_level": confidence_level,
        "seed": seed,
        "systems": names,
        "interval": "percentile of score((w_r ∘ mask) @ S), W shared by buckets and systems",
    }
    return BucketAnalysis(
        pd.DataFrame(bucket_rows),
        pd.DataFrame(pair_rows),
        pd.DataFrame(diagnosis_rows),
        settings,
        tuple(notes),
    )


def _check_units_add_up(
    runs: npt.NDArray[np.float64],
    unit_stats: pd.DataFrame,
    run_ids: Sequence[str],
    example_ids: Sequence[str],
    notes: list[str],
) -> None:
    """Note runs whose entity-unit statistics do not sum to their example statistics."""
    known = unit_stats[unit_stats["example_id"].astype(str).isin({str(e) for e in example_ids})]
    for i, run_id in enumerate(run_ids):
        part = known["stats"][known["run_id"] == run_id]
        total = (
            np.stack([np.asarray(v, dtype=np.float64) for v in part]).sum(axis=0)
            if len(part)
            else np.zeros(runs.shape[2])
        )
        expected = runs[i].sum(axis=0)
        if total.shape != expected.shape or not np.allclose(total, expected):
            notes.append(
                f"run {run_id}: its entity statistics ({total.tolist()}) do not add up to its "
                f"example statistics ({expected.tolist()}); entity buckets of this run are "
                "incomplete"
            )


def attributes_from_mapping(values: Mapping[str, Sequence[Any]]) -> pd.DataFrame:
    """Convenience: :func:`example_attributes` of a dict of columns."""
    return example_attributes(pd.DataFrame(dict(values)))
