"""Column checks shared by the validators of tidy files: names, text, numbers, duplicates.

Checks are vectorised with pandas / numpy; when a check fails, the *earliest*
offending record is reported with its file, line (or Parquet row) and field,
and the message says how many further records have the same problem
(:class:`Problems`). The validators of the two kinds of file
(:mod:`glotbench.ingest.score_validation`,
:mod:`glotbench.ingest.example_validation`; ``docs/formats.md``) are built
from these.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from glotbench.ingest.readers import TidyTable
from glotbench.metrics.base import Metric
from glotbench.store.names import (
    CONTROL_CHARS,
    INVISIBLE_CHARS,
    MAX_NAME_CHARS,
    name_problem,
    normalise_name,
)

_MAX_EXACT_INT = 2**53
_NAN_WORDS = frozenset({"nan", "+nan", "-nan"})


# ---------------------------------------------------------------------------
# problem collection
# ---------------------------------------------------------------------------


@dataclass
class Problem:
    position: int | None  # None: the header / the file as a whole
    field: str | None
    message: str
    count: int = 1


@dataclass
class Problems:
    """Collects problems; :meth:`raise_first` reports the earliest one."""

    table: TidyTable
    items: list[Problem] = field(default_factory=list)

    def add(self, position: int | None, field: str | None, message: str, count: int = 1) -> None:
        self.items.append(Problem(position, field, message, count))

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


def resolve_columns(table: TidyTable, known: Iterable[str]) -> dict[str, str]:
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


def require_columns(table: TidyTable, found: dict[str, str], required: Sequence[str]) -> None:
    for name in required:
        if name not in found:
            if table.kind == "jsonl":
                msg = f"missing required field {name!r}: no record has it"
            else:
                header = ", ".join(table.columns)
                msg = f"missing required column {name!r} (the columns are: {header})"
            raise table.error(msg, None, name)


def raw_value(table: TidyTable, column: str, position: int) -> Any:
    return table.frame[column].iloc[position]


def _is_text_dtype(series: pd.Series) -> bool:
    return series.dtype != object and pd.api.types.is_string_dtype(series.dtype)


def is_missing_scalar(value: Any) -> bool:
    if value is None or value is pd.NA:
        return True
    return isinstance(value, float) and math.isnan(value)


def text_column(
    table: TidyTable,
    column: str,
    problems: Problems,
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
    characters and over-long names are reported (:mod:`glotbench.store.names`).
    """
    s = table.frame[column]
    if isinstance(s.dtype, pd.CategoricalDtype) and len(s.cat.categories) < len(s):
        # a dictionary-encoded column (Parquet): each distinct value checked once
        codes = s.cat.codes.to_numpy().astype(np.int64)
        distinct = pd.Series([*s.cat.categories.tolist(), None], dtype=object)
        codes[codes < 0] = len(distinct) - 1  # missing
        checked = _text_checks(distinct, allow_int, name)
        values = pd.Series(checked[0].to_numpy(dtype=object)[codes], dtype=object)
        missing, bad, control, invisible, too_long = (m[codes] for m in checked[1:])
    else:
        values, missing, bad, control, invisible, too_long = _text_checks(s, allow_int, name)
    if name:
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
            f"{label} {raw_value(table, column, p)!r} contains a control character (NUL, tab, "
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
        lambda p: f"{label} must be {expected}, got {raw_value(table, column, p)!r}",
    )
    return values


def _text_checks(
    s: pd.Series, allow_int: bool, name: bool
) -> tuple[pd.Series, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(values, missing, not text, control character, invisible, too long) of a column.

    ``values`` as :func:`text_column` returns them; the name checks only with ``name``.
    """
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
            elif is_missing_scalar(v):
                missing[i] = True
            elif (
                allow_int and isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_)
            ):
                out[i] = str(int(v))
            else:
                bad[i] = True
        values = pd.Series(out, dtype=object)
    control = _control_mask(values)
    invisible = too_long = np.zeros(n, dtype=bool)
    if name:
        values = _normalised_names(values)
        texts = values.where(values.notna(), "").astype(str)
        invisible = texts.str.contains(INVISIBLE_CHARS, regex=True).to_numpy(dtype=bool)
        too_long = (texts.str.len() > MAX_NAME_CHARS).to_numpy(dtype=bool)
    return values, missing, bad, control, invisible, too_long


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
class Numbers:
    values: np.ndarray  # float64, NaN where missing or invalid
    missing: np.ndarray  # empty / null
    not_number: np.ndarray  # text that is not a number, booleans, lists...
    nan: np.ndarray  # an explicit NaN
    infinite: np.ndarray


def parse_numbers(series: pd.Series, explicit_nan: np.ndarray | None = None) -> Numbers:
    """Parse a column of numbers (text, JSON values or a numeric dtype).

    ``explicit_nan`` marks rows of a numeric column that hold NaN rather than
    null (pandas cannot tell them apart; Arrow can).
    """
    n = len(series)
    zeros = np.zeros(n, dtype=bool)
    if pd.api.types.is_bool_dtype(series.dtype):
        return Numbers(np.full(n, np.nan), zeros, np.ones(n, dtype=bool), zeros, zeros)
    if pd.api.types.is_numeric_dtype(series.dtype):
        values = series.to_numpy(dtype=np.float64, na_value=np.nan)
        nan = explicit_nan if explicit_nan is not None else zeros.copy()
        missing = np.isnan(values) & ~nan
        return Numbers(values, missing, zeros, nan, np.isinf(values))
    if _is_text_dtype(series):
        stripped = series.str.strip()
        missing = (stripped.isna() | (stripped == "")).to_numpy(dtype=bool)
        values = pd.to_numeric(stripped.where(~missing, None), errors="coerce").to_numpy(
            dtype=np.float64, na_value=np.nan
        )
        unparsed = np.isnan(values) & ~missing
        nan = unparsed & stripped.str.lower().isin(_NAN_WORDS).to_numpy(dtype=bool)
        return Numbers(values, missing, unparsed & ~nan, nan, np.isinf(values))
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
    return Numbers(values, missing, not_number, nan, np.isinf(values))


def parse_column(table: TidyTable, column: str) -> Numbers:
    return parse_numbers(table.frame[column], table.explicit_nan.get(column))


def report_numbers(
    table: TidyTable,
    column: str,
    parsed: Numbers,
    problems: Problems,
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
        lambda p: f"{label} is not a number: {raw_value(table, column, p)!r}",
    )
    problems.add_mask(
        sel(parsed.nan),
        column,
        lambda p: f"{label} is NaN; {label} must be a finite number",
    )
    problems.add_mask(
        sel(parsed.infinite),
        column,
        lambda p: (
            f"{label} is infinite ({raw_value(table, column, p)!r}); it must be a finite number"
        ),
    )


def float_column(
    table: TidyTable,
    column: str,
    problems: Problems,
    *,
    label: str,
    required: bool,
    rows: np.ndarray | None = None,
) -> np.ndarray:
    """Finite floats (NaN where missing); reports non-numeric, NaN and infinite values."""
    parsed = parse_column(table, column)
    report_numbers(table, column, parsed, problems, label=label, required=required, rows=rows)
    return parsed.values


def int_column(
    table: TidyTable,
    column: str,
    problems: Problems,
    *,
    label: str,
    required: bool,
    minimum: int | None = None,
) -> pd.Series:
    """Integers as a nullable Int64 Series; reports fractions and out-of-range values.

    Integral floats (``3.0``, as pandas writes integer columns with gaps) are
    accepted.
    """
    parsed = parse_column(table, column)
    report_numbers(table, column, parsed, problems, label=label, required=required)
    v = parsed.values
    finite = np.isfinite(v)
    with np.errstate(invalid="ignore"):
        fractional = finite & (np.floor(v) != v)
        too_big = finite & ~fractional & (np.abs(v) > _MAX_EXACT_INT)
    problems.add_mask(
        fractional,
        column,
        lambda p: f"{label} must be an integer, got {raw_value(table, column, p)!r}",
    )
    problems.add_mask(
        too_big,
        column,
        lambda p: (
            f"{label} {raw_value(table, column, p)!r} is too large (at most 2**53 in magnitude)"
        ),
    )
    if minimum is not None:
        with np.errstate(invalid="ignore"):
            small = finite & (v < minimum)
        problems.add_mask(
            small,
            column,
            lambda p: f"{label} must be at least {minimum}, got {raw_value(table, column, p)!r}",
        )
    ok = finite & ~fractional & ~too_big
    out = pd.array(np.where(ok, v, 0).astype(np.int64), dtype="Int64")
    out[~ok] = pd.NA
    return pd.Series(out)


def check_duplicates(
    table: TidyTable,
    keys: pd.DataFrame,
    problems: Problems,
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


def first_true(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def lookup_metric(name: str, **config: Any) -> Metric:
    from glotbench.metrics import get_metric

    return get_metric(name, **config)


def known_metric_list() -> str:
    from glotbench.metrics import metric_names

    return ", ".join(metric_names())
