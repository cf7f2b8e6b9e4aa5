"""The minimum detectable difference beside an observed one: "is this gap detectable?".

For a comparison whose difference d̂ has SD ``sd`` over the paired draws (the
benchmark's own replication SD, :func:`glotbench.analysis.compare.compare_models`),
the two-sided z-test at level α detects a true difference δ with power
Φ(δ/sd − z_{1−α/2}) + Φ(−δ/sd − z_{1−α/2}) (:mod:`.power`); the minimum
detectable difference at power π is MDD = k(α, π)·sd, with k the root for
sd = 1 (k ≈ z_{1−α/2} + z_π = 2.80 at α = 0.05, π = 0.8). A gap below it is one
that this benchmark's design would miss more often than 1 − π of the time even
if it were real.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

from glotbench.analysis.planning.power import minimum_detectable

#: the defaults of the planning analysis (two-sided α and target power)
ALPHA = 0.05
POWER = 0.8


@lru_cache(maxsize=16)
def mdd_factor(alpha: float = ALPHA, power: float = POWER) -> float:
    """k(α, π): the minimum detectable difference in units of the difference's SD."""
    return minimum_detectable(1.0, alpha, power)


def minimum_detectable_differences(
    sd: np.ndarray, alpha: float = ALPHA, power: float = POWER
) -> np.ndarray:
    """MDD = k(α, π)·sd for every SD (NaN stays NaN)."""
    return mdd_factor(alpha, power) * np.asarray(sd, dtype=np.float64)


def detectable_differences(
    comparisons: pd.DataFrame, alpha: float = ALPHA, power: float = POWER
) -> pd.DataFrame:
    """``comparisons`` (columns ``difference`` and ``sd``) with ``mdd`` and ``detectable``.

    ``detectable``: |difference| ≥ mdd, the observed gap is at least the
    smallest one the design detects with power π.
    """
    out = comparisons.copy()
    mdd = minimum_detectable_differences(out["sd"].to_numpy(dtype=np.float64), alpha, power)
    out["mdd"] = mdd
    with np.errstate(invalid="ignore"):
        out["detectable"] = np.abs(out["difference"].to_numpy(dtype=np.float64)) >= mdd
    return out
