"""The user-facing linear mixed model: ``lmm(formula, data)``.

Fits by lme4's profiled REML/ML deviance (:mod:`.fit`), and reports what
lme4 + lmerTest + emmeans + effectsize + performance report: fixed effects
with Satterthwaite df, Type III ANOVA with partial η² and noncentral-F CIs,
estimated marginal means and their pairwise contrasts, variance components,
Nakagawa R², and a singular-fit diagnosis.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from glotbench.analysis.mixed.design import (
    DesignMatrix,
    ErrorFactory,
    ModelFrame,
    RandomBlock,
    check_fixed_design,
    model_frame,
    model_matrix,
    random_blocks,
)
from glotbench.analysis.mixed.fit import LmmFit, fit_lmm, single_blas_thread
from glotbench.analysis.mixed.formula import Formula, parse_formula
from glotbench.analysis.results import records


@dataclass
class MixedModel:
    """A fitted linear mixed model with everything inference needs."""

    formula: Formula
    frame: ModelFrame
    design: DesignMatrix
    blocks: list[RandomBlock]
    fit: LmmFit
    y: np.ndarray
    notes: list[str] = field(default_factory=list)

    # -- basic quantities ---------------------------------------------------
    @property
    def reml(self) -> bool:
        """Whether the model was fitted by REML (else by maximum likelihood)."""
        return self.fit.reml

    @property
    def coef_names(self) -> list[str]:
        """The names of the fixed-effect coefficients, in design-matrix order."""
        return self.design.columns

    @property
    def z(self) -> np.ndarray:
        """The random-effects design matrix Z."""
        return self.fit.deviance_object.z

    def fitted(self, conditional: bool = True) -> np.ndarray:
        """Fitted values Xβ, plus Zb when ``conditional``."""
        eta = self.design.matrix @ self.fit.beta
        if conditional and self.z.shape[1]:
            eta = eta + self.z @ self.fit.b
        return eta

    def residuals(self) -> np.ndarray:
        """Conditional residuals y − Xβ − Zb."""
        return self.y - self.fitted(True)

    def covariance_matrices(self) -> list[np.ndarray]:
        """Σ_k = σ² T_k T_kᵀ of each random-effect term (lme4's VarCorr)."""
        factors = self.fit.deviance_object.factors(self.fit.theta)
        return [self.fit.sigma**2 * t @ t.T for t in factors]

    # -- fixed effects --------------------------------------------------------
    def fixed_effects(self) -> pd.DataFrame:
        """Estimates, SEs, Satterthwaite df, t and p (lmerTest's ``summary``)."""
        columns = {"term": list(self.coef_names), **self.fit.coefficient_tests()}
        return pd.DataFrame(columns, columns=["term", "estimate", "se", "df", "t", "p"])

    # -- random effects -------------------------------------------------------
    def random_effects(self) -> pd.DataFrame:
        """Variance components as lme4's ``VarCorr``: one row per variance (and correlation)."""
        rows = []
        for block, cov in zip(self.blocks, self.covariance_matrices(), strict=True):
            names = block.effect_names
            sd = np.sqrt(np.clip(np.diag(cov), 0, None))
            for i, name in enumerate(names):
                rows.append(
                    {
                        "group": block.group_name,
                        "effect": name,
                        "variance": float(cov[i, i]),
                        "sd": float(sd[i]),
                        "kind": "variance",
                    }
                )
            for j in range(len(names)):
                for i in range(j + 1, len(names)):
                    corr = cov[i, j] / (sd[i] * sd[j]) if sd[i] * sd[j] > 0 else np.nan
                    rows.append(
                        {
                            "group": block.group_name,
                            "effect": f"{names[j]}:{names[i]}",
                            "variance": float(cov[i, j]),
                            "sd": float(corr),
                            "kind": "correlation",
                        }
                    )
        return pd.DataFrame(rows, columns=["group", "effect", "variance", "sd", "kind"])

    @property
    def residual_variance(self) -> float:
        """The residual variance σ²."""
        return self.fit.sigma**2

    # -- R² (Nakagawa) ----------------------------------------------------------
    def r2(self) -> dict[str, float]:
        """Marginal and conditional R² (Nakagawa, Johnson & Schielzeth 2017).

        Fixed-effect variance: the sample variance (n − 1) of ``Xβ̂``. Random
        variance: per term the mean over observations of ``zᵢᵀ Σ zᵢ`` (Johnson
        2014; for a random intercept simply its variance), summed over terms.
        As performance::r2_nakagawa, which reports no conditional R² (None)
        for a singular fit.
        """
        var_fixed = float(np.var(self.design.matrix @ self.fit.beta, ddof=1))
        var_random = 0.0
        for block, cov in zip(self.blocks, self.covariance_matrices(), strict=True):
            lhs = model_matrix(block.term.effects, block.term.intercept, self.frame).matrix
            var_random += float(np.mean(np.einsum("ni,ij,nj->n", lhs, cov, lhs)))
        var_resid = self.residual_variance
        total = var_fixed + var_random + var_resid
        conditional = (var_fixed + var_random) / total
        if self.is_singular():
            conditional = float("nan")
        return {"marginal": var_fixed / total, "conditional": conditional}

    # -- diagnosis ------------------------------------------------------------
    def is_singular(self, tol: float = 1e-4) -> bool:
        """lme4's ``isSingular``: a diagonal θ element on (within tol of) its bound 0."""
        lower = self.fit.deviance_object.theta_lower
        diag = np.isfinite(lower)
        return bool(np.any(np.abs(self.fit.theta[diag]) < tol))

    def diagnostics(self) -> dict[str, Any]:
        """Singular-fit and convergence diagnosis in plain words."""
        messages: list[str] = []
        singular_terms = []
        k = 0
        for block, t in zip(
            self.blocks, self.fit.deviance_object.factors(self.fit.theta), strict=True
        ):
            p = block.n_effects
            diag = np.abs(np.diag(t))
            k += block.n_theta
            if np.any(diag < 1e-4):
                singular_terms.append(block.group_name)
                if p == 1:
                    messages.append(
                        f"singular fit: the variance between {block.group_name} groups is "
                        f"estimated as zero — the data show no variation between "
                        f"{block.group_name} groups beyond the residual noise; the model is "
                        f"equivalent to one without (1 | {block.group_name}), which you may drop "
                        "(the conditional R² is not reported, as in R's performance package)"
                    )
                else:
                    messages.append(
                        f"singular fit: the covariance matrix of the {block.group_name} effects "
                        f"({', '.join(block.effect_names)}) is degenerate (a variance is zero or "
                        "a correlation is ±1); simplify the term, e.g. use '||' for "
                        "uncorrelated effects or drop the random slope"
                    )
        negative = self.fit.hessian_eigenvalues[self.fit.hessian_eigenvalues < -1e-8]
        if len(negative):
            messages.append(
                "the fit may not have converged: the Hessian of the deviance has "
                f"{len(negative)} negative eigenvalue(s); treat the df and p-values with care"
            )
        if not self.fit.converged:
            messages.append("the optimiser did not converge: " + self.fit.optimizer_message)
        return {
            "singular": bool(singular_terms),
            "singular_terms": singular_terms,
            "converged": self.fit.converged and not len(negative),
            "messages": messages + list(self.notes),
            "n_observations": self.fit.n,
            "n_dropped_missing": int(self.frame.n_input - self.frame.n),
            "groups": {b.group_name: b.n_levels for b in self.blocks},
            "deviance": self.fit.deviance,
            "criterion": "REML" if self.reml else "ML",
            "theta": [float(t) for t in self.fit.theta],
            "optimizer_evaluations": self.fit.n_evaluations,
        }

    # -- tests ----------------------------------------------------------------
    def anova(self, ci: float = 0.95, alternative: str = "greater") -> pd.DataFrame:
        """Type III ANOVA table of the fixed effects (see :mod:`.anova`)."""
        from glotbench.analysis.mixed.anova import type3_anova

        return type3_anova(self, ci=ci, alternative=alternative)

    def emmeans(self, spec: str, level: float = 0.95) -> pd.DataFrame:
        """Estimated marginal means of ``spec`` at ``level`` (see :mod:`.emmeans`)."""
        from glotbench.analysis.mixed.emmeans import emmeans

        return emmeans(self, spec, level=level)

    def contrasts(self, spec: str, adjust: str = "tukey") -> pd.DataFrame:
        """Pairwise contrasts of the marginal means of ``spec``, ``adjust``-corrected."""
        from glotbench.analysis.mixed.emmeans import pairwise_contrasts

        return pairwise_contrasts(self, spec, adjust=adjust)


def lmm(
    formula: str,
    data: pd.DataFrame,
    *,
    reml: bool = True,
    error: ErrorFactory | None = None,
    satterthwaite: bool = True,
) -> MixedModel:
    """Fit ``formula`` (lme4 syntax) to ``data`` by REML (default) or ML."""
    with single_blas_thread():
        return _lmm(formula, data, reml=reml, error=error, satterthwaite=satterthwaite)


def _lmm(
    formula: str,
    data: pd.DataFrame,
    *,
    reml: bool,
    error: ErrorFactory | None,
    satterthwaite: bool,
) -> MixedModel:
    parsed = parse_formula(formula)
    if not parsed.random_terms:
        from glotbench.errors import InputError

        raise InputError(
            f"the formula {formula!r} has no random-effect term; add one such as (1 | model)",
            field="formula",
        )
    mf = model_frame(data, parsed, error=error)
    design = model_matrix(parsed.fixed_terms, parsed.intercept, mf)
    check_fixed_design(design, mf, parsed.fixed_terms, error=error)
    blocks = random_blocks(parsed, mf, error=error)
    z = np.hstack([b.z for b in blocks])
    y = mf.data[parsed.response]
    fit = fit_lmm(design.matrix, z, y, blocks, reml=reml, satterthwaite=satterthwaite)
    return MixedModel(parsed, mf, design, blocks, fit, y)


@dataclass
class LmmResult:
    """Everything :func:`glotbench.api.analyze_mixed_model` reports, as tidy frames and JSON.

    Attributes
    ----------
    model : MixedModel
        The fitted model (design, fit, response).
    fixed_effects : pandas.DataFrame
        One row per coefficient: estimate, SE, Satterthwaite df, t, p.
    anova : pandas.DataFrame
        Type III ANOVA with partial η² and its interval.
    emmeans : dict of str to pandas.DataFrame
        Estimated marginal means per requested factor.
    contrasts : dict of str to pandas.DataFrame
        Their pairwise contrasts, multiplicity-adjusted.
    random_effects : pandas.DataFrame
        Variance and SD of each random effect and the residual.
    residual_variance : float
        σ².
    r2 : dict of str to float
        Nakagawa's marginal and conditional R².
    diagnostics : dict
        Convergence, singularity, observations and groups.
    residual_checks : dict or None
        The simulated residuals' tests (with ``residuals`` or ``qq_plot``).
    """

    model: MixedModel
    fixed_effects: pd.DataFrame
    anova: pd.DataFrame
    emmeans: dict[str, pd.DataFrame]
    contrasts: dict[str, pd.DataFrame]
    random_effects: pd.DataFrame
    residual_variance: float
    r2: dict[str, float]
    diagnostics: dict[str, Any]
    residual_checks: dict[str, Any] | None = None

    def to_frame(self) -> pd.DataFrame:
        """The fixed-effects table (``fixed_effects``)."""
        return self.fixed_effects

    def to_dict(self) -> dict[str, Any]:
        """Formula, effects, variance components and checks as a JSON-safe dict."""
        out: dict[str, Any] = {
            "formula": self.model.formula.text,
            "criterion": "REML" if self.model.reml else "ML",
            "n_observations": self.model.fit.n,
            "fixed_effects": records(self.fixed_effects),
            "emmeans": {k: records(v) for k, v in self.emmeans.items()},
            "contrasts": {k: records(v) for k, v in self.contrasts.items()},
            "anova": records(self.anova),
            "random_effects": records(self.random_effects),
            "residual_variance": self.residual_variance,
            "r2": {k: (v if np.isfinite(v) else None) for k, v in self.r2.items()},
            "diagnostics": self.diagnostics,
        }
        if self.residual_checks is not None:
            out["residual_checks"] = self.residual_checks
        return out


def analyze_lmm(
    data: pd.DataFrame,
    formula: str,
    *,
    emmeans_specs: list[str] | tuple[str, ...] = (),
    reml: bool = True,
    adjust: str = "tukey",
    ci: float = 0.95,
    alternative: str = "greater",
    error: ErrorFactory | None = None,
) -> LmmResult:
    """Fit and report: fixed effects, ANOVA, EMMs + contrasts, variances, R², diagnostics."""
    model = lmm(formula, data, reml=reml, error=error)
    emms = {spec: model.emmeans(spec, level=ci) for spec in emmeans_specs}
    cons = {spec: model.contrasts(spec, adjust=adjust) for spec in emmeans_specs}
    return LmmResult(
        model=model,
        fixed_effects=model.fixed_effects(),
        anova=model.anova(ci=ci, alternative=alternative),
        emmeans=emms,
        contrasts=cons,
        random_effects=model.random_effects(),
        residual_variance=model.residual_variance,
        r2=model.r2(),
        diagnostics=model.diagnostics(),
    )


def t_interval(estimate: float, se: float, df: float, level: float) -> tuple[float, float]:
    """The t interval estimate ± t_{df}·se at ``level`` (normal when df is infinite)."""
    from scipy import stats

    q = stats.t.ppf(0.5 + level / 2, df) if np.isfinite(df) else stats.norm.ppf(0.5 + level / 2)
    return estimate - q * se, estimate + q * se
