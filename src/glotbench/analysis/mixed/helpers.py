"""Score transformations used before fitting (Benito-Santos, Ghajari & Fresno, section 4).

* :func:`normalize_by_gold`: put scores on a common scale by the range
  between a floor (e.g. chance or a baseline) and a gold standard (e.g. human
  agreement): ``(s − low) / (high − low)``.
* :func:`headroom_fraction`: the fraction of the headroom over a baseline that
  a system closes, ``(s − b) / (1 − b)`` (scores on a 0–1 scale).
"""

from __future__ import annotations

from typing import TypeAlias

import numpy as np
import pandas as pd

from glotbench.errors import InputError

ArrayLike: TypeAlias = float | np.ndarray | pd.Series


def normalize_by_gold(score: ArrayLike, low: ArrayLike, high: ArrayLike) -> ArrayLike:
    """``(score − low) / (high − low)``: 0 at ``low``, 1 at the gold standard ``high``."""
    span = np.asarray(high, dtype=float) - np.asarray(low, dtype=float)
    if np.any(span <= 0):
        raise InputError(
            "the gold-standard range is empty or reversed (high ≤ low); give high > low",
            field="high",
        )
    out = (np.asarray(score, dtype=float) - np.asarray(low, dtype=float)) / span
    return _like(score, out)


def headroom_fraction(score: ArrayLike, baseline: ArrayLike) -> ArrayLike:
    """``(s − b) / (1 − b)``: the share of the headroom above baseline ``b`` that ``s`` closes.

    Scores must be on a 0–1 scale; a baseline of 1 leaves no headroom (error).
    """
    b = np.asarray(baseline, dtype=float)
    if np.any(b >= 1):
        raise InputError(
            "a baseline of 1 (or more) leaves no headroom; scores must be on a 0–1 scale",
            field="baseline",
        )
    out = (np.asarray(score, dtype=float) - b) / (1.0 - b)
    return _like(score, out)


def _like(template: ArrayLike, values: np.ndarray) -> ArrayLike:
    if isinstance(template, pd.Series):
        return pd.Series(values, index=template.index, name=template.name)
    if np.ndim(values) == 0:
        return float(values)
    return values
