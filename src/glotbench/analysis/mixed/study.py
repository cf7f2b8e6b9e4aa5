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

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per observation (:func:`glotbench.api.load_lmm_frame`).
    formula : str
        An lme4 formula, e.g. ``"score ~ model + (1|language)"``.
    emmeans : sequence of str, default ()
        Factors whose estimated marginal means and pairwise contrasts to report.
    reml : bool, default True
        Fit by REML (else maximum likelihood).
    adjust : str, default ``"tukey"``
        Multiplicity correction of the contrasts (``tukey``, ``holm``,
        ``bonferroni``, ``none``).
    confidence_level : float, default 0.95
        Level of the intervals.
    eta2_alternative : str, default ``"greater"``
        The partial η² interval: one-sided (``greater``, as effectsize),
        ``less`` or ``two.sided``.
    error : callable, optional
        The error factory of :func:`glotbench.api.load_lmm_frame`, so problems
        name the file's line.
    qq_plot : str or Path, optional
        Also simulate DHARMa-style residuals, run their tests (reported under
        ``residual_checks``) and write the Q-Q plot there.
    n_sim : int, default 250
        Simulations of the residuals.
    seed : int, default 0
        Seed of the simulations.
    residuals : bool, default False
        Simulate and test the residuals without writing a plot (the scaled
        residuals are in ``residual_checks["residuals"]``).
    residuals_by : sequence of str, optional
        Factors (``a:b`` = the cells of two factors) of DHARMa's per-group
        tests (KS uniformity within each group, Levene between groups);
        default: the factors of the fixed effects. Implies ``residuals``.

    Returns
    -------
    LmmResult
        ``fixed_effects`` (Satterthwaite df), ``anova`` (type III with partial
        η²), ``emmeans``, ``contrasts``, ``random_effects``, ``r2``,
        ``diagnostics`` and ``residual_checks``.

    Raises
    ------
    InputError
        A formula naming a column the frame lacks, a numeric ``emmeans``
        factor, or too few observations.

    Examples
    --------
    >>> from glotbench import api
    >>> frame, error = api.load_lmm_frame(input="scores.csv")
    >>> result = api.analyze_mixed_model(frame, "score ~ model + (1|language)",
    ...                                  emmeans=["model"], error=error)
    >>> print(result.emmeans["model"][["level", "emmean"]].round(3).to_string(index=False))
      level  emmean
    glot500   0.712
      mbert   0.631
       xlmr   0.695
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
    """Missing-data robustness study (Benito-Santos et al. §5).

    Remove 5 %…50 % of rows at random, refit, and report how often the mixed
    model and repeated-measures ANOVA still detect ``factor`` (p < alpha).

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per observation (:func:`glotbench.api.load_lmm_frame`).
    formula : str
        The mixed model's lme4 formula.
    factor : str
        The fixed effect whose detection is counted.
    subject : str
        The column of the repeated-measures ANOVA's subjects.
    within : sequence of str
        Its within-subject factors.
    fractions : sequence of float, optional
        Shares of rows removed (default 0.05, 0.10, …, 0.50).
    n_repeats : int, default 20
        Random removals per fraction.
    alpha : float, default 0.05
        Level of the tests.
    seed : int, default 0
        Seed of the removals.

    Returns
    -------
    RobustnessStudy
        ``frame``: one row per fraction with the share of repeats in which
        each method detected ``factor`` and was fitted at all.

    Examples
    --------
    >>> from glotbench import api
    >>> frame, _ = api.load_lmm_frame(input="scores.csv")
    >>> study = api.analyze_missing_data(frame, "score ~ model + (1|language)", "model",
    ...                                  subject="language", within=["model"],
    ...                                  fractions=[0.1, 0.3], n_repeats=2)
    >>> study.frame["fraction_removed"].tolist()
    [0.1, 0.3]
    """
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
