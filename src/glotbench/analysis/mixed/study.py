"""A mixed model as ``glotbench analyze lmm`` fits it, and the missing-data study.

:func:`analyze_mixed_model` fits the model (:mod:`glotbench.analysis.mixed.model`)
and, when asked, simulates and tests its residuals
(:mod:`glotbench.analysis.mixed.dharma`); :func:`analyze_missing_data` checks
the response and runs :func:`glotbench.analysis.mixed.robustness.missing_data_study`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from glotbench.analysis.mixed.model import LmmResult
from glotbench.errors import InputError


def analyze_mixed_model(
    frame: pd.DataFrame,
    formula: str,
    *,
    emmeans: Sequence[str] = (),
    reml: bool = True,
    adjust: str = "tukey",
    confidence_level: float = 0.95,
    eta2_alternative: str = "greater",
    error: Callable[..., InputError] | None = None,
    qq_plot: str | Path | None = None,
    n_sim: int = 250,
    seed: int = 0,
    residuals: bool = False,
    residuals_by: Sequence[str] | None = None,
) -> LmmResult:
    """Fit a linear mixed model (lme4 formula) and report as lmerTest/emmeans/effectsize do.

    With ``qq_plot`` also simulates DHARMa-style residuals, runs their tests
    (reported under ``residual_checks``) and writes the Q-Q plot there; with
    ``residuals`` simulates and tests them without writing a plot (the scaled
    residuals are in ``residual_checks["residuals"]``, e.g. for ``glotbench report``).
    The tests include DHARMa's quantile test against the fixed-effect prediction
    and its per-group tests (KS uniformity within each group, Levene between
    groups) for each factor of ``residuals_by`` (``a:b`` = the cells of two
    factors; default: the factors of the fixed effects); giving
    ``residuals_by`` implies ``residuals``.
    """
    from glotbench.analysis.mixed.dharma import simulate_residuals
    from glotbench.analysis.mixed.model import analyze_lmm

    result = analyze_lmm(
        frame,
        formula,
        emmeans_specs=list(emmeans),
        reml=reml,
        adjust=adjust,
        ci=confidence_level,
        alternative=eta2_alternative,
        error=error,
    )
    if qq_plot is not None or residuals or residuals_by:
        sims = simulate_residuals(
            result.model,
            n_sim=n_sim,
            seed=seed,
            by=list(residuals_by) if residuals_by else None,
            data=frame,
        )
        if qq_plot is not None:
            sims.qq_plot(qq_plot)
        result.residual_checks = {
            **sims.to_dict(),
            "qq_plot": None if qq_plot is None else str(qq_plot),
        }
    return result


def analyze_missing_data(
    frame: pd.DataFrame,
    formula: str,
    factor: str,
    *,
    subject: str,
    within: Sequence[str],
    fractions: Sequence[float] | None = None,
    n_repeats: int = 20,
    alpha: float = 0.05,
    seed: int = 0,
) -> Any:
    """Missing-data robustness study (Benito-Santos et al. §5): remove 5 %…50 % of rows at
    random, refit, and report how often the mixed model and repeated-measures ANOVA still
    detect ``factor`` (p < alpha)."""
    from glotbench.analysis.mixed.robustness import DEFAULT_FRACTIONS, missing_data_study

    response = formula.split("~", 1)[0].strip()
    if response not in frame.columns:
        raise InputError(f"the response {response!r} is not a column of the data", field=response)
    data = frame.copy()
    data[response] = pd.to_numeric(data[response], errors="coerce")
    if data[response].isna().any():
        row = int(np.flatnonzero(data[response].isna().to_numpy())[0]) + 1
        raise InputError(f"row {row}: the response is missing or not a number", field=response)
    return missing_data_study(
        data,
        formula,
        factor,
        subject=subject,
        within=list(within),
        fractions=tuple(fractions) if fractions else DEFAULT_FRACTIONS,
        n_repeats=n_repeats,
        alpha=alpha,
        seed=seed,
    )
