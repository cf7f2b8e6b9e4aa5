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
    """JSON-ready records: NaN and ±inf become None, numpy scalars become Python numbers."""
    clean = frame.astype(object).where(frame.notna(), None)
    return [{k: _json_value(v) for k, v in row.items()} for row in clean.to_dict(orient="records")]


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
