"""Serialising and showing analysis results: JSON-ready records and short reprs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd


def _json_value(value: Any) -> Any:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None  # JSON has no NaN or infinity; the notes and flags carry the meaning
    return value


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """JSON-ready records: NaN and ±inf become None, numpy scalars become Python numbers.

    Column by column (:func:`_column_values`): numeric columns become Python
    numbers in one ``tolist`` each instead of a conversion per value (the
    59,700 pair rows of 200 models: about 4x faster), the same values as
    :func:`records_by_value`.
    """
    names = list(frame.columns)
    if not frame.columns.is_unique:
        return records_by_value(frame)
    if not names:
        return [{} for _ in range(len(frame))]
    columns = [_column_values(frame[name]) for name in names]
    return [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)]


def records_by_value(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """:func:`records` value by value (the general way, for frames with repeated column names)."""
    clean = frame.astype(object).where(frame.notna(), None)
    return [{k: _json_value(v) for k, v in row.items()} for row in clean.to_dict(orient="records")]


def _column_values(column: pd.Series) -> list[Any]:
    """One column's JSON-ready values (see :func:`records`)."""
    if isinstance(column.dtype, np.dtype) and column.dtype.kind in "biuf":
        values = column.to_numpy()
        out = values.tolist()  # Python bools, ints and floats
        if column.dtype.kind == "f":
            for position in np.flatnonzero(~np.isfinite(values)).tolist():
                out[position] = None
        return out
    missing = column.isna().to_numpy().tolist()
    return [
        None if gone else _json_value(value)
        for value, gone in zip(column.astype(object).tolist(), missing, strict=True)
    ]


def number(value: Any) -> str:
    """A number for a repr: 4 significant digits; NaN as ``nan``."""
    try:
        return f"{float(value):.4g}"
    except (TypeError, ValueError):
        return str(value)


def summary_repr(obj: Any, sizes: Mapping[str, int], headline: str = "") -> str:
    """A short repr, as scipy's result objects: the class, its sizes, the headline numbers.

    ``Aggregates(models=3, languages=5, best='b': mean 0.7333 (SE 0.02), notes=1)``
    instead of every row of every frame; the tables stay in the attributes and
    ``to_frame()``. The length does not grow with the number of models or languages.
    """
    parts = [f"{key}={value}" for key, value in sizes.items()]
    if headline:
        parts.append(headline)
    notes = getattr(obj, "notes", ())
    if notes:
        parts.append(f"notes={len(notes)}")
    return f"{type(obj).__name__}({', '.join(parts)})"


def best_row(frame: Any, column: str, *, lowest: bool = False) -> Any:
    """The row of ``frame`` with the highest (``lowest``: smallest) ``column``; None if empty."""
    values = frame[column] if column in getattr(frame, "columns", ()) else None
    if values is None or values.dropna().empty:
        return None
    return frame.loc[values.idxmin() if lowest else values.idxmax()]
