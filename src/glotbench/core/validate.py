"""Validate tidy score and per-example files before anything is stored.

Checks are vectorised with pandas / numpy; when a check fails, the *earliest*
offending record is reported with its file, line (or Parquet row) and field,
and the message says how many further records have the same problem.

Two kinds of file (see ``docs/formats.md``):

* **scores** — one aggregate score per record: required ``model, task,
  language, metric, score``; optional ``dataset, seed, replicate, stderr, n``;
  every other column is free metadata, stored as a JSON object per row (a
  column named ``metadata`` holding JSON objects is merged into it).
* **examples** — one example of one run per record: required ``model, task,
  language, seed, example_id, metric``; optional ``dataset, config_hash``;
  plus either the metric's statistic columns (``metric.stat_names()``, e.g.
  ``value, count`` or ``tp[POS], pred[POS], true[POS], ...``) or, for metrics
  that are a mean of one per-example value, a single ``score`` column; and
  optionally ``source_position`` (alias ``position``): the example's index in
  its source data, for every record of a run or for none.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from glotbench.core.names import (
    CONTROL_CHARS,
    INVISIBLE_CHARS,
    MAX_NAME_CHARS,
    name_problem,
    normalise_name,
)
from glotbench.core.readers import TidyTable
from glotbench.core.schema import RunRecord, normalise_metric_name
from glotbench.errors import UnknownMetricError
from glotbench.metrics.base import Metric
from glotbench.metrics.constraints import score_range_text

SCORE_REQUIRED: tuple[str, ...] = ("model", "task", "language", "metric", "score")
SCORE_OPTIONAL: tuple[str, ...] = ("dataset", "seed", "replicate", "stderr", "n")
EXAMPLE_REQUIRED: tuple[str, ...] = ("model", "task", "language", "seed", "example_id", "metric")
EXAMPLE_OPTIONAL: tuple[str, ...] = ("dataset", "config_hash", "score")
#: optional column names of an example's index in its source data (the first is canonical)
SOURCE_POSITION_COLUMNS: tuple[str, ...] = ("source_position", "position")

_MAX_EXACT_INT = 2**53
_NAN_WORDS = frozenset({"nan", "+nan", "-nan"})


# ---------------------------------------------------------------------------
# problem collection
# ---------------------------------------------------------------------------


@dataclass
class _Problem:
    position: int | None  # None: the header / the file as a whole
    field: str | None
    message: str
    count: int = 1


@dataclass
class _Problems:
    """Collects problems; :meth:`raise_first` reports the earliest one."""

    table: TidyTable
    items: list[_Problem] = field(default_factory=list)

    def add(self, position: int | None, field: str | None, message: str, count: int = 1) -> None:
        self.items.append(_Problem(position, field, message, count))

    def add_mask(self, mask: np.ndarray, field: str | None, message: Callable[[int], str]) -> None:
        """Record the first True row of ``mask`` (and how many there are)."""
        hits = np.flatnonzero(mask)
        if hits.size:
            first = int(hits[0])
            self.add(first, field, message(first), int(hits.size))

    def raise_first(self) -> None:
        if not self.items:
            return
        first = min(self.items, key=lambda p: -1 if p.position is None else p.position)
        message = first.message
        if first.count > 1:
            unit = self.table.unit
            more = first.count - 1
            verb = "has" if more == 1 else "have"
            message += f" ({more} more {unit}{'s' if more > 1 else ''} {verb} the same problem)"
        raise self.table.error(message, first.position, first.field)


# ---------------------------------------------------------------------------
# columns
# ---------------------------------------------------------------------------


def _resolve_columns(table: TidyTable, known: Iterable[str]) -> dict[str, str]:
    """Map canonical (lower-case) known column names to the file's column names."""
    known_set = set(known)
    found: dict[str, str] = {}
    for col in table.columns:
        canon = col.strip().lower()
        if canon in known_set:
            if canon in found:
                raise table.error(
                    f"columns {found[canon]!r} and {col!r} both name the {canon!r} column; "
                    "keep one",
                    None,
                    col,
                )
            found[canon] = col
    return found


def _require_columns(table: TidyTable, found: dict[str, str], required: Sequence[str]) -> None:
    for name in required:
        if name not in found:
            if table.kind == "jsonl":
                msg = f"missing required field {name!r}: no record has it"
            else:
                header = ", ".join(table.columns)
                msg = f"missing required column {name!r} (the columns are: {header})"
            raise table.error(msg, None, name)


def _raw(table: TidyTable, column: str, position: int) -> Any:
    return table.frame[column].iloc[position]


def _is_text_dtype(series: pd.Series) -> bool:
    return series.dtype != object and pd.api.types.is_string_dtype(series.dtype)


def _is_missing_scalar(value: Any) -> bool:
    if value is None or value is pd.NA:
        return True
    return isinstance(value, float) and math.isnan(value)


def text_column(
    table: TidyTable,
    column: str,
    problems: _Problems,
    *,
    label: str,
    required: bool,
    allow_int: bool = False,
    rows: np.ndarray | None = None,
    name: bool = False,
) -> pd.Series:
    """Stripped text values (object Series, None where missing).

    Reports empty required values and non-text values (JSON numbers, lists...;
    integers are accepted when ``allow_int``). With ``name`` (model, task,
    language, dataset, metric) the values are NFC-normalised and invisible
    characters and over-long names are reported (:mod:`glotbench.core.names`).
    """
    s = table.frame[column]
    n = len(s)
    if _is_text_dtype(s):
        stripped = s.str.strip()
        missing = (stripped.isna() | (stripped == "")).to_numpy(dtype=bool)
        values = stripped.astype(object).where(~missing, None)
        bad = np.zeros(n, dtype=bool)
    elif allow_int and pd.api.types.is_integer_dtype(s.dtype) and s.dtype != bool:
        missing = s.isna().to_numpy(dtype=bool)
        values = pd.Series(
            [None if m else str(int(v)) for v, m in zip(s.to_numpy(object), missing, strict=True)],
            dtype=object,
        )
        bad = np.zeros(n, dtype=bool)
    else:
        arr = s.to_numpy(dtype=object)
        out = np.empty(n, dtype=object)
        missing = np.zeros(n, dtype=bool)
        bad = np.zeros(n, dtype=bool)
        for i, v in enumerate(arr):
            if isinstance(v, str):
                t = v.strip()
                if t:
                    out[i] = t
                else:
                    missing[i] = True
            elif _is_missing_scalar(v):
                missing[i] = True
            elif (
                allow_int and isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_)
            ):
                out[i] = str(int(v))
            else:
                bad[i] = True
        values = pd.Series(out, dtype=object)
    control = _control_mask(values)
    if name:
        values = _normalised_names(values)
        texts = values.where(values.notna(), "").astype(str)
        invisible = texts.str.contains(INVISIBLE_CHARS, regex=True).to_numpy(dtype=bool)
        too_long = (texts.str.len() > MAX_NAME_CHARS).to_numpy(dtype=bool)
        for mask in (invisible, too_long):
            if rows is not None:
                mask &= rows
            problems.add_mask(
                mask & ~control,
                column,
                lambda p: str(name_problem(str(values.iloc[p]), label)),
            )
    if rows is not None:
        missing_report, bad_report = missing & rows, bad & rows
        control &= rows
    else:
        missing_report, bad_report = missing, bad
    problems.add_mask(
        control,
        column,
        lambda p: (
            f"{label} {_raw(table, column, p)!r} contains a control character (NUL, tab, "
            "newline...); names must be printable text"
        ),
    )
    if required:
        problems.add_mask(
            missing_report,
            column,
            lambda p: f"{label} is empty; every record needs a {label}",
        )
    expected = "text or an integer" if allow_int else "text"
    problems.add_mask(
        bad_report,
        column,
        lambda p: f"{label} must be {expected}, got {_raw(table, column, p)!r}",
    )
    return values


def _normalised_names(values: pd.Series) -> pd.Series:
    """Each distinct text of ``values`` in Unicode normal form C (None stays None)."""
    distinct = values.dropna().unique()
    changed = {v: normalise_name(v) for v in distinct if normalise_name(v) != v}
    return values.replace(changed) if changed else values


_CONTROL_RE = re.compile(CONTROL_CHARS)


def has_control_chars(text: str) -> bool:
    """True when ``text`` holds a control character (NUL, tab, newline, DEL...)."""
    return _CONTROL_RE.search(text) is not None


def _control_mask(values: pd.Series) -> np.ndarray:
    """Rows of a text Series (None = missing) that hold a control character."""
    texts = values.where(values.notna(), "").astype(str)
    return texts.str.contains(CONTROL_CHARS, regex=True).to_numpy(dtype=bool)


@dataclass
class _Numbers:
    values: np.ndarray  # float64, NaN where missing or invalid
    missing: np.ndarray  # empty / null
    not_number: np.ndarray  # text that is not a number, booleans, lists...
    nan: np.ndarray  # an explicit NaN
    infinite: np.ndarray


def parse_numbers(series: pd.Series, explicit_nan: np.ndarray | None = None) -> _Numbers:
    """Parse a column of numbers (text, JSON values or a numeric dtype).

    ``explicit_nan`` marks rows of a numeric column that hold NaN rather than
    null (pandas cannot tell them apart; Arrow can).
    """
    n = len(series)
    zeros = np.zeros(n, dtype=bool)
    if pd.api.types.is_bool_dtype(series.dtype):
        return _Numbers(np.full(n, np.nan), zeros, np.ones(n, dtype=bool), zeros, zeros)
    if pd.api.types.is_numeric_dtype(series.dtype):
        values = series.to_numpy(dtype=np.float64, na_value=np.nan)
        nan = explicit_nan if explicit_nan is not None else zeros.copy()
        missing = np.isnan(values) & ~nan
        return _Numbers(values, missing, zeros, nan, np.isinf(values))
    if _is_text_dtype(series):
        stripped = series.str.strip()
        missing = (stripped.isna() | (stripped == "")).to_numpy(dtype=bool)
        values = pd.to_numeric(stripped.where(~missing, None), errors="coerce").to_numpy(
            dtype=np.float64, na_value=np.nan
        )
        unparsed = np.isnan(values) & ~missing
        nan = unparsed & stripped.str.lower().isin(_NAN_WORDS).to_numpy(dtype=bool)
        return _Numbers(values, missing, unparsed & ~nan, nan, np.isinf(values))
    # object dtype: JSON values
    arr = series.to_numpy(dtype=object)
    values = np.full(n, np.nan)
    missing = np.zeros(n, dtype=bool)
    not_number = np.zeros(n, dtype=bool)
    nan = np.zeros(n, dtype=bool)
    for i, v in enumerate(arr):
        if v is None or v is pd.NA:
            missing[i] = True
        elif isinstance(v, bool | np.bool_):
            not_number[i] = True
        elif isinstance(v, int | float | np.integer | np.floating):
            f = float(v)
            if math.isnan(f):
                nan[i] = True
            values[i] = f
        elif isinstance(v, str):
            t = v.strip()
            if not t:
                missing[i] = True
                continue
            try:
                f = float(t)
            except ValueError:
                not_number[i] = True
                continue
            if math.isnan(f):
                nan[i] = True
            values[i] = f
        else:
            not_number[i] = True
    return _Numbers(values, missing, not_number, nan, np.isinf(values))


def _parse(table: TidyTable, column: str) -> _Numbers:
    return parse_numbers(table.frame[column], table.explicit_nan.get(column))


def _report_numbers(
    table: TidyTable,
    column: str,
    parsed: _Numbers,
    problems: _Problems,
    *,
    label: str,
    required: bool,
    rows: np.ndarray | None = None,
) -> None:
    def sel(mask: np.ndarray) -> np.ndarray:
        return mask if rows is None else mask & rows

    if required:
        problems.add_mask(
            sel(parsed.missing),
            column,
            lambda p: f"{label} is missing; every record needs a finite number here",
        )
    problems.add_mask(
        sel(parsed.not_number),
        column,
        lambda p: f"{label} is not a number: {_raw(table, column, p)!r}",
    )
    problems.add_mask(
        sel(parsed.nan),
        column,
        lambda p: f"{label} is NaN; {label} must be a finite number",
    )
    problems.add_mask(
        sel(parsed.infinite),
        column,
        lambda p: f"{label} is infinite ({_raw(table, column, p)!r}); it must be a finite number",
    )


def float_column(
    table: TidyTable,
    column: str,
    problems: _Problems,
    *,
    label: str,
    required: bool,
    rows: np.ndarray | None = None,
) -> np.ndarray:
    """Finite floats (NaN where missing); reports non-numeric, NaN and infinite values."""
    parsed = _parse(table, column)
    _report_numbers(table, column, parsed, problems, label=label, required=required, rows=rows)
    return parsed.values


def int_column(
    table: TidyTable,
    column: str,
    problems: _Problems,
    *,
    label: str,
    required: bool,
    minimum: int | None = None,
) -> pd.Series:
    """Integers as a nullable Int64 Series; reports fractions and out-of-range values.

    Integral floats (``3.0``, as pandas writes integer columns with gaps) are
    accepted.
    """
    parsed = _parse(table, column)
    _report_numbers(table, column, parsed, problems, label=label, required=required)
    v = parsed.values
    finite = np.isfinite(v)
    with np.errstate(invalid="ignore"):
        fractional = finite & (np.floor(v) != v)
        too_big = finite & ~fractional & (np.abs(v) > _MAX_EXACT_INT)
    problems.add_mask(
        fractional,
        column,
        lambda p: f"{label} must be an integer, got {_raw(table, column, p)!r}",
    )
    problems.add_mask(
        too_big,
        column,
        lambda p: f"{label} {_raw(table, column, p)!r} is too large (at most 2**53 in magnitude)",
    )
    if minimum is not None:
        with np.errstate(invalid="ignore"):
            small = finite & (v < minimum)
        problems.add_mask(
            small,
            column,
            lambda p: f"{label} must be at least {minimum}, got {_raw(table, column, p)!r}",
        )
    ok = finite & ~fractional & ~too_big
    out = pd.array(np.where(ok, v, 0).astype(np.int64), dtype="Int64")
    out[~ok] = pd.NA
    return pd.Series(out)


def _check_duplicates(
    table: TidyTable,
    keys: pd.DataFrame,
    problems: _Problems,
    describe: Callable[[int], str],
    field_name: str | None,
) -> None:
    """Report the first record whose key repeats an earlier record's key (naming both)."""
    later = keys.duplicated(keep="first").to_numpy(dtype=bool)
    if not later.any():
        return
    p = int(np.flatnonzero(later)[0])
    group = keys.groupby(list(keys.columns), sort=False, dropna=False).ngroup().to_numpy()
    first = int(np.flatnonzero(group == group[p])[0])
    count = int(later.sum())
    problems.add(
        p,
        field_name,
        f"duplicate key ({describe(p)}): the same key is on {table.where(first)}; "
        "each key may appear once per file",
        count,
    )


# ---------------------------------------------------------------------------
# metrics
# ---------------------------------------------------------------------------


def _first_position(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def _lookup_metric(name: str, **config: Any) -> Metric:
    from glotbench.metrics import get_metric

    return get_metric(name, **config)


def _known_metric_list() -> str:
    from glotbench.metrics import metric_names

    return ", ".join(metric_names())


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
            if _is_missing_scalar(v) or (text_source and isinstance(v, str) and v == ""):
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


def _parse_metadata_column(table: TidyTable, column: str, problems: _Problems) -> pd.Series:
    """A ``metadata`` column: JSON objects (text or, in JSONL, objects)."""
    arr = table.frame[column].to_numpy(dtype=object)
    out = np.empty(len(arr), dtype=object)
    bad = np.zeros(len(arr), dtype=bool)
    for i, v in enumerate(arr):
        if isinstance(v, dict):
            out[i] = v
        elif _is_missing_scalar(v) or (isinstance(v, str) and not v.strip()):
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
            f"{_raw(table, column, p)!r}"
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
    table: TidyTable, column: str, metric: pd.Series, score: np.ndarray, problems: _Problems
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
        text += " — if the source reports percentages, divide them by 100 (import scores --percent)"
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
    cols = _resolve_columns(table, known)
    _require_columns(table, cols, SCORE_REQUIRED)
    problems = _Problems(table)
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
    seed = (
        int_column(table, cols["seed"], problems, label="seed", required=False)
        if "seed" in cols
        else pd.Series(pd.array([pd.NA] * n, dtype="Int64"))
    )
    replicate = (
        int_column(table, cols["replicate"], problems, label="replicate", required=False)
        if "replicate" in cols
        else pd.Series(pd.array([pd.NA] * n, dtype="Int64"))
    )
    if "stderr" in cols:
        stderr = float_column(table, cols["stderr"], problems, label="stderr", required=False)
        with np.errstate(invalid="ignore"):
            problems.add_mask(
                stderr < 0,
                cols["stderr"],
                lambda p: f"stderr must not be negative, got {_raw(table, cols['stderr'], p)!r}",
            )
    else:
        stderr = np.full(n, np.nan)
    n_col = (
        int_column(table, cols["n"], problems, label="n", required=False, minimum=0)
        if "n" in cols
        else pd.Series(pd.array([pd.NA] * n, dtype="Int64"))
    )
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
        for name in pd.unique(metric_norm.dropna()):
            try:
                _lookup_metric(name)
            except UnknownMetricError:
                pos = _first_position((metric_norm == name).to_numpy(dtype=bool))
                problems.add(
                    pos,
                    cols["metric"],
                    f"unknown metric {name!r}; known metrics: {_known_metric_list()} "
                    "(pass --allow-unknown-metrics to store scores of other metrics)",
                    int((metric_norm == name).sum()),
                )
            except (TypeError, ValueError):
                pass  # known but needs configuration: fine for an aggregate score
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

    _check_duplicates(table, frame[key], problems, describe, None)
    problems.raise_first()

    extra = [c for c in table.columns if c not in cols.values()]
    frame["metadata"] = _metadata_json(table, extra, merged)
    frame["position"] = np.arange(n, dtype=np.int64)
    if import_id is not None:
        frame["import_id"] = import_id.astype(object)
    return ScoresData(table=table, frame=frame)


# ---------------------------------------------------------------------------
# examples
# ---------------------------------------------------------------------------


@dataclass
class ValidatedRun:
    """One run of an examples file: record, example ids and (n × k) statistics."""

    record: RunRecord
    example_ids: np.ndarray  # object array of str, in file order
    stats: np.ndarray  # float64 (n, k)
    positions: np.ndarray  # record positions in the file
    source_positions: np.ndarray | None = None  # int64 (n,): index in the source data

    @property
    def first_position(self) -> int:
        return int(self.positions[0])


@dataclass
class ExamplesData:
    table: TidyTable
    runs: list[ValidatedRun]
    #: columns that are neither key columns nor statistics of any metric
    ignored_columns: list[str]


@dataclass
class _MetricPlan:
    metric: Metric
    stat_names: tuple[str, ...]
    columns: tuple[str, ...] | None  # statistic columns, or None: use 'score'


def _split_labels(labels: Sequence[str] | None) -> list[str] | None:
    if not labels:
        return None
    out: list[str] = []
    for item in labels:
        out.extend(part.strip() for part in str(item).split(",") if part.strip())
    return out or None


def _plan_metric(
    table: TidyTable,
    name: str,
    first: int,
    score_column: str | None,
    labels: list[str] | None,
) -> _MetricPlan:
    columns = [c.strip() for c in table.columns]
    header_pos = None if table.kind != "jsonl" else first
    needs_labels = False
    try:
        metric = _lookup_metric(name)
        stat_names = tuple(metric.stat_names())
    except UnknownMetricError:
        raise table.error(
            f"unknown metric {name!r}; known metrics: {_known_metric_list()}", first, "metric"
        ) from None
    except (ValueError, TypeError):
        needs_labels = True
    if needs_labels:
        # the metric needs a label set: from --labels or from the column names
        if labels is None:
            try:
                probe = _lookup_metric(name, labels=["\x00"]).stat_names()
            except Exception:  # noqa: BLE001 - any failure means: cannot configure it here
                raise table.error(
                    f"metric {name!r} needs configuration that a tidy file cannot give",
                    first,
                    "metric",
                ) from None
            prefix, _, suffix = probe[0].partition("\x00")
            labels = [
                c[len(prefix) : len(c) - len(suffix)]
                for c in columns
                if c.startswith(prefix)
                and c.endswith(suffix)
                and len(c) > len(prefix) + len(suffix)
            ]
            if not labels:
                pattern = ", ".join(s.replace("\x00", "LABEL") for s in probe)
                raise table.error(
                    f"metric {name!r} needs its label set: add the statistic columns {pattern} "
                    "for every label, or pass the labels (--labels A,B,C)",
                    header_pos,
                    "metric",
                )
        try:
            metric = _lookup_metric(name, labels=labels)
            stat_names = tuple(metric.stat_names())
        except (TypeError, ValueError) as exc:
            raise table.error(
                f"cannot configure metric {name!r} with labels {labels}: {exc}", first, "metric"
            ) from None
    missing = [s for s in stat_names if s not in columns]
    if not missing:
        index = {c.strip(): c for c in table.columns}
        return _MetricPlan(metric, stat_names, tuple(index[s] for s in stat_names))
    if metric.is_mean and score_column is not None:
        return _MetricPlan(metric, stat_names, None)
    hint = " or one per-example 'score' column" if metric.is_mean else ""
    if table.kind == "jsonl":
        what = "fields"
    else:
        what = "columns"
    raise table.error(
        f"metric {name!r} needs the statistic {what} {', '.join(stat_names)}{hint}; "
        f"missing: {', '.join(missing)}",
        header_pos,
        missing[0],
    )


def _check_metric_stats(
    table: TidyTable,
    plan: _MetricPlan,
    idx: np.ndarray,
    matrix: np.ndarray,
    problems: _Problems,
    score_column: str | None,
) -> None:
    """Report statistics that break the metric's declared constraints (counts, ranges...)."""
    n = len(table)
    for problem in plan.metric.check_stats(matrix):
        mask = np.zeros(n, dtype=bool)
        mask[idx[problem.rows]] = True
        first = problem.first
        if plan.columns is None:
            column = score_column or "score"
            lo, hi = plan.metric.score_range
            message = (
                f"score is {matrix[first, 0]:.10g}; a per-example {plan.metric.name} lies in "
                f"{score_range_text(lo, hi)}"
            )
        else:
            column = plan.columns[plan.stat_names.index(problem.column)]
            message = problem.message(matrix[first])
        problems.add(int(idx[first]), column, message, problem.count)


def validate_examples(table: TidyTable, *, labels: Sequence[str] | None = None) -> ExamplesData:
    """Validate a per-example statistics table and group its records into runs."""
    label_list = _split_labels(labels)
    cols = _resolve_columns(
        table, set(EXAMPLE_REQUIRED) | set(EXAMPLE_OPTIONAL) | set(SOURCE_POSITION_COLUMNS)
    )
    _require_columns(table, cols, EXAMPLE_REQUIRED)
    given = [c for c in SOURCE_POSITION_COLUMNS if c in cols]
    if len(given) > 1:
        raise table.error(
            f"columns {cols[given[0]]!r} and {cols[given[1]]!r} both give the source position; "
            "keep one",
            None,
            cols[given[1]],
        )
    source_col = cols[given[0]] if given else None
    problems = _Problems(table)
    n = len(table)

    model = text_column(table, cols["model"], problems, label="model", required=True, name=True)
    task = text_column(table, cols["task"], problems, label="task", required=True, name=True)
    language = text_column(
        table, cols["language"], problems, label="language", required=True, name=True
    )
    metric = text_column(table, cols["metric"], problems, label="metric", required=True, name=True)
    example_id = text_column(
        table, cols["example_id"], problems, label="example_id", required=True, allow_int=True
    )
    if "dataset" in cols:
        dataset = text_column(
            table, cols["dataset"], problems, label="dataset", required=False, name=True
        )
        dataset = dataset.where(dataset.notna(), task)
    else:
        dataset = task.copy()
    if "config_hash" in cols:
        config_hash = text_column(
            table, cols["config_hash"], problems, label="config_hash", required=False
        ).fillna("")
    else:
        config_hash = pd.Series([""] * n, dtype=object)
    # the seed column is required; an empty seed means "no seed" (a deterministic run)
    seed = int_column(table, cols["seed"], problems, label="seed", required=False)
    source_pos = (
        int_column(table, source_col, problems, label=given[0], required=False, minimum=0)
        if source_col is not None
        else None
    )
    problems.raise_first()

    # normalise each distinct name once (a per-record Python call costs ~1 s per million rows)
    names = {m: normalise_metric_name(m) for m in pd.unique(metric.to_numpy(dtype=object))}
    metric_norm = metric.map(names)
    metric_arr = metric_norm.to_numpy(dtype=object)
    used_columns: set[str] = set(cols.values())
    stats_by_metric: dict[str, tuple[_MetricPlan, np.ndarray, np.ndarray]] = {}
    parsed_cache: dict[str, _Numbers] = {}
    for name in pd.unique(metric_arr):
        rows = metric_arr == name
        plan = _plan_metric(table, name, _first_position(rows), cols.get("score"), label_list)
        source = plan.columns if plan.columns is not None else (cols["score"],)
        used_columns.update(source)
        values = []
        for col in source:
            if col not in parsed_cache:
                parsed_cache[col] = _parse(table, col)
            parsed = parsed_cache[col]
            _report_numbers(table, col, parsed, problems, label=col, required=True, rows=rows)
            values.append(parsed.values)
        idx = np.flatnonzero(rows)
        if plan.columns is None:
            matrix = np.column_stack([values[0][idx], np.ones(idx.size)])
        else:
            matrix = np.column_stack([v[idx] for v in values])
        stats_by_metric[name] = (plan, idx, matrix)
    problems.raise_first()
    for plan, idx, matrix in stats_by_metric.values():
        _check_metric_stats(table, plan, idx, matrix, problems, cols.get("score"))
    problems.raise_first()

    keys = pd.DataFrame(
        {
            "model": model,
            "dataset": dataset,
            "task": task,
            "language": language,
            "seed": seed,
            "config_hash": config_hash,
            "metric": metric_norm,
            "example_id": example_id,
        }
    )

    def describe(p: int) -> str:
        row = keys.iloc[p]
        return ", ".join(f"{k}={row[k]!r}" if k != "seed" else f"seed={row[k]}" for k in keys)

    _check_duplicates(table, keys, problems, describe, cols["example_id"])
    problems.raise_first()

    # row -> (metric's row index) so each run can take its statistics rows
    row_in_metric = np.empty(n, dtype=np.int64)
    for _plan, idx, _matrix in stats_by_metric.values():
        row_in_metric[idx] = np.arange(idx.size)

    run_cols = ["model", "dataset", "task", "language", "seed", "config_hash", "metric"]
    groups = keys.groupby(run_cols, sort=False, dropna=False).indices
    source_name = str(table.path)
    ids = example_id.to_numpy(dtype=object)
    runs: list[ValidatedRun] = []
    for key, positions in groups.items():
        positions = np.sort(np.asarray(positions, dtype=np.int64))
        m, d, t, lang, s, cfg, met = key
        plan, _idx, matrix = stats_by_metric[met]
        record = RunRecord(
            model=m,
            dataset=d,
            task=t,
            language=lang,
            seed=None if pd.isna(s) else int(s),
            config_hash=cfg,
            metric=met,
            metric_config=plan.metric.config(),
            stat_names=plan.stat_names,
            n_examples=int(positions.size),
            source=source_name,
        )
        runs.append(
            ValidatedRun(
                record=record,
                example_ids=ids[positions],
                stats=np.ascontiguousarray(matrix[row_in_metric[positions]]),
                positions=positions,
                source_positions=_run_source_positions(
                    table, source_pos, source_col, positions, record.describe()
                ),
            )
        )
    runs.sort(key=lambda r: r.first_position)
    ignored = [c for c in table.columns if c not in used_columns]
    return ExamplesData(table=table, runs=runs, ignored_columns=ignored)


def _run_source_positions(
    table: TidyTable,
    source: pd.Series | None,
    column: str | None,
    positions: np.ndarray,
    run: str,
) -> np.ndarray | None:
    """A run's source positions: all given and unique, or none (None)."""
    if source is None or column is None:
        return None
    values = source.iloc[positions]
    missing = values.isna().to_numpy()
    if missing.all():
        return None
    if missing.any():
        p = int(positions[np.flatnonzero(missing)[0]])
        raise table.error(
            f"{column} is empty here but given for other examples of this run ({run}); "
            "give it for every example of a run or for none",
            p,
            column,
        )
    out = values.to_numpy(dtype=np.int64)
    dup = pd.Series(out).duplicated().to_numpy()
    if dup.any():
        p = int(positions[np.flatnonzero(dup)[0]])
        raise table.error(
            f"{column} {int(out[np.flatnonzero(dup)[0]])} occurs twice in this run ({run}); "
            "each example has its own position in the source data",
            p,
            column,
        )
    return out
