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

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from glotbench.analysis.results import records
from glotbench.errors import InputError
from glotbench.metrics.base import Metric
from glotbench.resample.engine import ScoreFn, as_systems, mask_scores, replicate_scores

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
TOKEN = re.compile(r"\w+", re.UNICODE)


def tokens(text: Any) -> list[str]:
    """Word tokens (Unicode ``\\w+``), lower-cased; missing text has none."""
    if text is None or (isinstance(text, float) and np.isnan(text)):
        return []
    return [t.lower() for t in TOKEN.findall(str(text))]


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
    frequent ``max_values`` values, the rest in ``(other)``. Missing values are
    in no bucket.
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
    m, n, k = systems.shape
    stacked = (weights[:, None, :, None] * systems[None]).reshape(-1, n, k)
    with np.errstate(divide="ignore", invalid="ignore"):
        reps = replicate_scores(
            stacked, score, n_resamples=n_resamples, seed=seed, compress=compress
        )
    return reps.reshape(n_resamples, weights.shape[0], m)


@dataclass(frozen=True)
class BucketAnalysis:
    """Result of :func:`analyze_buckets`.

    ``buckets``: attribute, kind, bucket, n_examples, system, score, ci_low,
    ci_high, standard_error. ``pairwise``: attribute, bucket, system_a,
    system_b, difference, ci_low, ci_high, share_a_better. ``diagnosis``: per
    attribute and pair, where A beats B by the most and where B beats A by the most.
    """

    buckets: pd.DataFrame
    pairwise: pd.DataFrame
    diagnosis: pd.DataFrame
    settings: dict[str, Any]
    notes: tuple[str, ...] = field(default=())

    def to_frame(self) -> pd.DataFrame:
        return self.buckets

    def to_dict(self) -> dict[str, Any]:
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
) -> BucketAnalysis:
    """Score per bucket of every attribute, with bootstrap intervals; pairwise diagnosis.

    ``stats`` is (runs × n × k) on the same examples (e.g. ``Store.stats_matrix``);
    ``system_of_run`` names each run's system (several seeds of a system are
    averaged, score by score and replicate by replicate); ``attributes`` is
    indexed by example id (:func:`example_attributes`) and aligned to
    ``example_ids``; ``columns`` picks attributes (default: all).
    """
    runs = as_systems(stats)
    n = runs.shape[1]
    owners = list(system_of_run) if system_of_run is not None else list(systems)
    if len(owners) != runs.shape[0]:
        raise InputError(f"{len(owners)} system names for {runs.shape[0]} runs")
    names = list(dict.fromkeys(systems))
    groups = [np.flatnonzero(np.asarray(owners) == name) for name in names]
    notes: list[str] = []
    if example_ids is not None:
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
        attributes = attributes.reindex(ids)
    elif len(attributes) != n:
        raise InputError(f"{len(attributes)} attribute rows for {n} examples")
    chosen = list(columns) if columns else list(attributes.columns)
    unknown = [c for c in chosen if c not in attributes.columns]
    if unknown:
        raise InputError(
            f"no attribute {unknown[0]!r}; available: {', '.join(attributes.columns)}",
            field="attribute",
        )
    bucket_rows: list[dict[str, Any]] = []
    pair_rows: list[dict[str, Any]] = []
    diagnosis_rows: list[dict[str, Any]] = []
    for column in chosen:
        labels, masks, kind = bucket_masks(attributes[column].reset_index(drop=True), n_buckets)
        if not labels:
            notes.append(f"{column}: no values, skipped")
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            point_runs = mask_scores(runs, score, masks)  # (B × runs)
        reps_runs = bucket_replicates(runs, score, masks, n_resamples=n_resamples, seed=seed)
        point = np.stack([point_runs[:, g].mean(axis=1) for g in groups], axis=1)  # (B × M)
        reps = np.stack([reps_runs[:, :, g].mean(axis=2) for g in groups], axis=2)  # (R×B×M)
        low, high, se = _interval(reps, confidence_level)
        sizes = masks.sum(axis=1)
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


def attributes_from_mapping(values: Mapping[str, Sequence[Any]]) -> pd.DataFrame:
    """Convenience: :func:`example_attributes` of a dict of columns."""
    return example_attributes(pd.DataFrame(dict(values)))
