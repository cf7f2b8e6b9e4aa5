"""Missing-data robustness study (Benito-Santos, Ghajari & Fresno, section 5).

Remove a share of the rows at random (5%, 10%, …, 50%), refit, and record
whether the effect of a chosen factor is still detected (Type III p < α) —
by the linear mixed model, and by repeated-measures ANOVA
(:class:`statsmodels.stats.anova.AnovaRM`) on the same data. RM-ANOVA needs
every subject in every within-subject cell, so subjects with a missing cell
are dropped (listwise deletion) before it is fitted; when fewer than two
subjects remain it cannot be fitted and counts as "not detected".
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from glotbench.analysis.mixed.model import lmm
from glotbench.analysis.results import records
from glotbench.errors import GlotbenchError

DEFAULT_FRACTIONS = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5)


@dataclass
class RobustnessStudy:
    """Share of refits detecting the effect, per removed fraction.

    Attributes
    ----------
    frame : pandas.DataFrame
        One row per fraction removed: repeats, and the share of refits in
        which the mixed model and the repeated-measures ANOVA detected
        ``factor`` and were fitted at all.
    factor : str
        The effect tested.
    alpha : float
        Level of the tests.
    """

    frame: pd.DataFrame
    factor: str
    alpha: float

    def to_frame(self) -> pd.DataFrame:
        return self.frame

    def to_dict(self) -> dict[str, Any]:
        return {"factor": self.factor, "alpha": self.alpha, "rows": records(self.frame)}


def rm_anova_p(
    data: pd.DataFrame, response: str, subject: str, within: Sequence[str], factor: str
) -> tuple[float, int]:
    """p of ``factor`` in RM-ANOVA after listwise deletion; (nan, n) if it cannot be fitted."""
    from statsmodels.stats.anova import AnovaRM

    cells = data.groupby([subject, *within], observed=True)[response].mean().reset_index()
    n_cells = int(np.prod([data[w].nunique() for w in within]))
    complete = cells.groupby(subject)[response].count()
    keep = complete[complete == n_cells].index
    cells = cells[cells[subject].isin(keep)]
    if len(keep) < 2:
        return float("nan"), int(len(keep))
    try:
        res = AnovaRM(cells, response, subject, within=list(within)).fit()
    except ValueError:
        return float("nan"), int(len(keep))
    return float(res.anova_table.loc[factor, "Pr > F"]), int(len(keep))


def missing_data_study(
    data: pd.DataFrame,
    formula: str,
    factor: str,
    *,
    subject: str,
    within: Sequence[str],
    fractions: Sequence[float] = DEFAULT_FRACTIONS,
    n_repeats: int = 20,
    alpha: float = 0.05,
    seed: int = 0,
) -> RobustnessStudy:
    """Detection rate of ``factor`` by the LMM and by RM-ANOVA as rows go missing.

    ``subject`` and ``within`` describe the same data for RM-ANOVA (e.g.
    subject ``model``, within ``language`` and ``task``); ``factor`` must be
    one of the formula's fixed terms and of ``within``.
    """
    if factor not in within:
        raise GlotbenchError(f"the factor {factor!r} must be one of the within factors {within}")
    response = formula.split("~", 1)[0].strip()
    rng = np.random.default_rng(seed)
    rows = []
    n = len(data)
    for frac in fractions:
        lmm_hits = rm_hits = rm_fitted = lmm_fitted = 0
        for _ in range(n_repeats):
            drop = rng.choice(n, size=int(round(frac * n)), replace=False)
            sub = data.drop(index=data.index[drop]).reset_index(drop=True)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    table = lmm(formula, sub).anova()
                p_lmm = float(table.set_index("term").loc[factor, "p"])
                lmm_fitted += 1
                lmm_hits += p_lmm < alpha
            except GlotbenchError:
                pass
            p_rm, _ = rm_anova_p(sub, response, subject, within, factor)
            if np.isfinite(p_rm):
                rm_fitted += 1
                rm_hits += p_rm < alpha
        rows.append(
            {
                "fraction_removed": frac,
                "n_repeats": n_repeats,
                "lmm_detected": lmm_hits / n_repeats,
                "rm_anova_detected": rm_hits / n_repeats,
                "lmm_fitted": lmm_fitted / n_repeats,
                "rm_anova_fitted": rm_fitted / n_repeats,
            }
        )
    return RobustnessStudy(pd.DataFrame(rows), factor, alpha)
