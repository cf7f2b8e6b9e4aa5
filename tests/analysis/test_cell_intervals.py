"""Per-cell intervals mean ± z·σ_w of the component table, against scipy's normal interval."""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.stats as sps

from glotbench.analysis.replicates import replicates_from_frame
from glotbench.analysis.variance import components


def test_cell_intervals_are_scipy_normal_intervals() -> None:
    rng = np.random.default_rng(4)
    frame = pd.DataFrame(
        [
            (model, "xnli", lang, seed, rep, float(rng.normal(0.7, 0.05)))
            for model in ("a", "b")
            for lang in ("da", "sv", "de")
            for seed in range(3)
            for rep in range(4)
        ],
        columns=["model", "task", "language", "seed", "replicate", "score"],
    )
    table = components(replicates_from_frame(frame))
    for level in (0.9, 0.95):
        low, high = table.cell_intervals(level)
        ref_low, ref_high = sps.norm.interval(level, loc=table.mean, scale=table.sigma_w)
        np.testing.assert_allclose(low, ref_low, rtol=1e-12)
        np.testing.assert_allclose(high, ref_high, rtol=1e-12)
