"""Serialising analysis results: tidy frames to JSON-ready records."""

from __future__ import annotations

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
