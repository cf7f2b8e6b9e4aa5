"""Validate a tidy scores file before anything is stored.

One aggregate score per record: required ``model, task, language, metric,
score``; optional ``dataset, seed, replicate, stderr, n``; every other column
is free metadata, stored as a JSON object per row (a column named
``metadata`` holding JSON objects is merged into it). A score outside its
metric's range is an error naming the record (``docs/formats.md``).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from glotbench.errors import UnknownMetricError
from glotbench.ingest.column_checks import (
    Problems,
    check_duplicates,
    first_true,
    float_column,
    int_column,
    is_missing_scalar,
    known_metric_list,
    lookup_metric,
    raw_value,
    require_columns,
    resolve_columns,
    text_column,
)
from glotbench.ingest.readers import TidyTable
from glotbench.metrics.constraints import score_range_text
from glotbench.store.schema import normalise_metric_name

SCORE_REQUIRED: tuple[str, ...] = ("model", "task", "language", "metric", "score")
SCORE_OPTIONAL: tuple[str, ...] = ("dataset", "seed", "replicate", "stderr", "n")


# ---------------------------------------------------------------------------
# scores
# ---------------------------------------------------------------------------


@dataclass
class ScoresData:
    """A validated scores file: canonical columns, one row per record.

    ``frame`` columns: model, task, language, dataset, metric, score, seed,
    replicate, stderr, n, metadata (JSON text), position (record index in the
    file) and, when requested, import_id.
    """

    table: TidyTable
    frame: pd.DataFrame


def _metadata_json(table: TidyTable, extra: list[str], merged: pd.Series | None) -> list[str]:
    n = len(table)
    if not extra and merged is None:
        return ["{}"] * n
    text_source = table.kind == "csv"
    columns = {c: table.frame[c].to_numpy(dtype=object) for c in extra}
    base = merged.to_numpy(dtype=object) if merged is not None else None
    out: list[str] = []
    for i in range(n):
        obj: dict[str, Any] = dict(base[i]) if base is not None and base[i] else {}
        for c, arr in columns.items():
            v = arr[i]
            if is_missing_scalar(v) or (text_source and isinstance(v, str) and v == ""):
                continue
            if isinstance(v, np.generic):
                v = v.item()
            elif isinstance(v, np.ndarray):
                v = v.tolist()
            if isinstance(v, float) and not math.isfinite(v):
                v = None
            obj[c] = v
        out.append(json.dumps(obj, ensure_ascii=False, default=str, allow_nan=False))
    return out


def _parse_metadata_column(table: TidyTable, column: str, problems: Problems) -> pd.Series:
    """A ``metadata`` column: JSON objects (text or, in JSONL, objects)."""
    arr = table.frame[column].to_numpy(dtype=object)
    out = np.empty(len(arr), dtype=object)
    bad = np.zeros(len(arr), dtype=bool)
    for i, v in enumerate(arr):
        if isinstance(v, dict):
            out[i] = v
        elif is_missing_scalar(v) or (isinstance(v, str) and not v.strip()):
            out[i] = None
        elif isinstance(v, str):
            try:
                parsed = json.loads(v)
            except json.JSONDecodeError:
                bad[i] = True
                continue
            if isinstance(parsed, dict):
                out[i] = parsed
            else:
                bad[i] = True
        else:
            bad[i] = True
    problems.add_mask(
        bad,
        column,
        lambda p: (
            f'metadata must be a JSON object such as {{"params": 270}}, got '
            f"{raw_value(table, column, p)!r}"
        ),
    )
    return pd.Series(out, dtype=object)


def metric_score_range(name: str) -> tuple[float, float] | None:
    """The declared score range of a registry metric (None: unknown metric).

    An lm-eval filter suffix (``acc,strict-match``) is ignored.
    """
    base = name.split(",", 1)[0].strip()
    if not base:
        return None
    from glotbench.metrics import get_metric

    try:
        metric = get_metric(base)
    except UnknownMetricError:
        return None
    except (TypeError, ValueError):
        try:  # configured metrics (labels): the range does not depend on them
            metric = get_metric(base, labels=["_"])
        except Exception:  # noqa: BLE001 - no range known
            return None
    return metric.score_range


def _check_score_ranges(
    table: TidyTable, column: str, metric: pd.Series, score: np.ndarray, problems: Problems
) -> None:
    """Scores of known metrics must lie in the metric's declared range (its scale)."""
    names = metric.to_numpy(dtype=object)
    for name in pd.unique(metric.dropna()):
        bounds = metric_score_range(name)
        if bounds is None:
            continue
        lo, hi = bounds
        rows = names == name
        with np.errstate(invalid="ignore"):
            out = rows & np.isfinite(score) & ((score < lo) | (score > hi))
        hits = np.flatnonzero(out)
        if hits.size:
            first = int(hits[0])
            message = score_range_message(str(name), float(score[first]), lo, hi)
            problems.add(first, column, message, int(hits.size))


def score_range_message(metric: str, value: float, lo: float, hi: float) -> str:
    """Why an aggregate score is out of range, and what to do about it."""
    text = (
        f"score {value:.10g} is outside the range {score_range_text(lo, hi)} of metric "
        f"{metric!r}; glotbench stores {metric} on a {lo:g}–{hi:g} scale"
    )
    if hi == 1.0 and lo <= value <= 100.0:
        text += " — if the source reports percentages, divide them by 100 (percent=True)"
    return text


def percent_to_store_scale(
    metric: pd.Series, score: np.ndarray, stderr: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Divide the scores (and standard errors) of 0–1 and −1–1 metrics by 100.

    For a source that reports percentages (``--percent``): metrics whose
    declared :attr:`~glotbench.metrics.base.Metric.score_range` ends at 1 are
    stored on that scale; BLEU/chrF (0–100) and unregistered metrics are kept
    as given. Returns (score, stderr, rows divided).
    """
    names = metric.to_numpy(dtype=object)
    divided = np.zeros(len(names), dtype=bool)
    for name in pd.unique(metric.dropna()):
        bounds = metric_score_range(name)
        if bounds is not None and bounds[1] == 1.0:
            divided |= names == name
    return (
        np.where(divided, score / 100.0, score),
        np.where(divided, stderr / 100.0, stderr),
        divided,
    )


def validate_scores(
    table: TidyTable,
    *,
    allow_unknown_metrics: bool = False,
    keep_import_id: bool = False,
    percent: bool = False,
) -> ScoresData:
    """Validate a scores table; raise :class:`InputError` for the earliest problem.

    With ``percent`` the file's scores of 0–1 (and −1–1) metrics are
    percentages and are divided by 100 (:func:`percent_to_store_scale`).
    """
    # import_id is written by 'glotbench export'; it is provenance of the exporting
    # store and is ignored on import unless keep_import_id (snapshot merges)
    known = set(SCORE_REQUIRED) | set(SCORE_OPTIONAL) | {"metadata", "import_id"}
    cols = resolve_columns(table, known)
    require_columns(table, cols, SCORE_REQUIRED)
    problems = Problems(table)
    n = len(table)

    model = text_column(table, cols["model"], problems, label="model", required=True, name=True)
    task = text_column(table, cols["task"], problems, label="task", required=True, name=True)
    language = text_column(
        table, cols["language"], problems, label="language", required=True, name=True
    )
    metric = text_column(table, cols["metric"], problems, label="metric", required=True, name=True)
    if "dataset" in cols:
        dataset = text_column(
            table, cols["dataset"], problems, label="dataset", required=False, name=True
        )
        dataset = dataset.where(dataset.notna(), task)
    else:
        dataset = task.copy()
    score = float_column(table, cols["score"], problems, label="score", required=True)
    seed = _optional_int(table, cols, "seed", problems)
    replicate = _optional_int(table, cols, "replicate", problems)
    stderr = _stderr_column(table, cols, problems)
    n_col = _optional_int(table, cols, "n", problems, minimum=0)
    merged = (
        _parse_metadata_column(table, cols["metadata"], problems) if "metadata" in cols else None
    )
    import_id = (
        text_column(table, cols["import_id"], problems, label="import_id", required=False)
        if keep_import_id and "import_id" in cols
        else None
    )

    # metric names must be known (unless allowed), reported at their first record
    metric_norm = metric.map(lambda m: normalise_metric_name(m) if isinstance(m, str) else None)
    if not allow_unknown_metrics:
        _check_known_metrics(metric_norm, cols["metric"], problems)
    if percent:
        score, stderr, _ = percent_to_store_scale(metric_norm, score, stderr)
    _check_score_ranges(table, cols["score"], metric_norm, score, problems)
    problems.raise_first()

    frame = pd.DataFrame(
        {
            "model": model.astype(object),
            "task": task.astype(object),
            "language": language.astype(object),
            "dataset": dataset.astype(object),
            "metric": metric_norm.astype(object),
            "score": score,
            "seed": seed.to_numpy(),
            "replicate": replicate.to_numpy(),
            "stderr": stderr,
            "n": n_col.to_numpy(),
        }
    )
    frame["seed"] = frame["seed"].astype("Int64")
    frame["replicate"] = frame["replicate"].astype("Int64")
    frame["n"] = frame["n"].astype("Int64")
    key = ["model", "task", "language", "dataset", "metric", "seed", "replicate"]

    def describe(p: int) -> str:
        row = frame.iloc[p]
        parts = [f"{k}={row[k]!r}" for k in key[:5]]
        for k in ("seed", "replicate"):
            if not pd.isna(row[k]):
                parts.append(f"{k}={int(row[k])}")
        return ", ".join(parts)

    check_duplicates(table, frame[key], problems, describe, None)
    problems.raise_first()

    extra = [c for c in table.columns if c not in cols.values()]
    frame["metadata"] = _metadata_json(table, extra, merged)
    frame["position"] = np.arange(n, dtype=np.int64)
    if import_id is not None:
        frame["import_id"] = import_id.astype(object)
    return ScoresData(table=table, frame=frame)


def _optional_int(
    table: TidyTable,
    cols: dict[str, str],
    name: str,
    problems: Problems,
    minimum: int | None = None,
) -> pd.Series:
    """The optional integer column ``name`` (checked), or all missing when the table has none."""
    if name not in cols:
        return pd.Series(pd.array([pd.NA] * len(table), dtype="Int64"))
    return int_column(table, cols[name], problems, label=name, required=False, minimum=minimum)


def _stderr_column(table: TidyTable, cols: dict[str, str], problems: Problems) -> np.ndarray:
    """The optional stderr column (NaN where absent); a negative stderr is a problem."""
    if "stderr" not in cols:
        return np.full(len(table), np.nan)
    stderr = float_column(table, cols["stderr"], problems, label="stderr", required=False)
    with np.errstate(invalid="ignore"):
        problems.add_mask(
            stderr < 0,
            cols["stderr"],
            lambda p: f"stderr must not be negative, got {raw_value(table, cols['stderr'], p)!r}",
        )
    return stderr


def _check_known_metrics(metric_norm: pd.Series, column: str, problems: Problems) -> None:
    """Report each unknown metric name at its first record (with its count)."""
    for name in pd.unique(metric_norm.dropna()):
        try:
            lookup_metric(name)
        except UnknownMetricError:
            pos = first_true((metric_norm == name).to_numpy(dtype=bool))
            problems.add(
                pos,
                column,
                f"unknown metric {name!r}; known metrics: {known_metric_list()} "
                "(pass allow_unknown_metrics=True to store scores of other metrics)",
                int((metric_norm == name).sum()),
            )
        except (TypeError, ValueError):
            pass  # known but needs configuration: fine for an aggregate score
