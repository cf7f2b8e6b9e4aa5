"""Type III ANOVA with Satterthwaite df (as lmerTest) and partial η² with CIs (as effectsize).

Contrasts follow lmerTest's ``get_contrasts_type3``: the Type III hypotheses
are built in treatment coding from the "complete" rank-deficient design
(``extract_contrasts_type3``: ``L = (X⁺ X_full)ᵀ``, columns of terms contained in
higher-order terms orthogonalised against those, higher orders first, SAS's
containment rule) and mapped to the model's sum-to-zero coding by
``X_treatment⁺ X``. Models with a single term use Type I contrasts from the
Doolittle decomposition of ``XᵀX`` (as lmerTest). Each term is tested with
:meth:`LmmFit.contestmd` (lmerTest ``contestMD``).

Partial η² from F: ``η²_p = F·df₁ / (F·df₁ + df₂)``; its confidence interval
inverts the noncentral F distribution in the noncentrality ``λ``
(Steiger 2004, Psychol. Methods 9(2)) and maps each bound ``λ`` back through
``F = λ / df₁``, i.e. ``η² = λ / (λ + df₂)`` (effectsize's ``F_to_eta2``). effectsize's default
is a one-sided interval (``alternative = "greater"``: the lower bound of a
two-sided 90% interval, upper bound 1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from glotbench.analysis.mixed.design import model_matrix
from glotbench.errors import InputError

if TYPE_CHECKING:
    from glotbench.analysis.mixed.model import MixedModel


def _zapsmall(a: np.ndarray, digits: int = 7) -> np.ndarray:
    """R's ``zapsmall``: round to ``digits`` relative to the largest magnitude."""
    mx = np.max(np.abs(a)) if a.size else 0.0
    if mx == 0 or not np.isfinite(mx):
        return a
    return np.round(a, int(max(0, digits - np.ceil(np.log10(mx)))))


def doolittle(x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Unit lower-triangular ``L`` of lmerTest's ``doolittle`` (with its zeroing rule)."""
    n = x.shape[0]
    lo = np.eye(n)
    up = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            up[i, j] = x[i, j] - lo[i, :i] @ up[:i, j]
        for j in range(i + 1, n):
            val = x[j, i] - lo[j, :i] @ up[:i, i]
            lo[j, i] = 0.0 if abs(up[i, i]) < eps else val / up[i, i]
    lo[np.abs(lo) < eps] = 0.0
    return lo


def _contained(term: tuple[str, ...], other: tuple[str, ...], numeric: set[str]) -> bool:
    """SAS containment: ``other`` contains ``term`` (lmerTest ``term_contain``)."""
    a, b = set(term), set(other)
    return a <= b and len(b - a) > 0 and (a & numeric) == (b & numeric)


def type3_contrasts(model: MixedModel) -> dict[str, np.ndarray]:
    """Contrast matrix of each fixed term, in the model's coding (lmerTest Type III)."""
    formula = model.formula
    terms = formula.fixed_terms
    labels = [":".join(t) for t in terms]
    design = model.design
    x_orig = design.matrix
    if x_orig.shape[1] <= 1 or len(terms) <= 1:
        return _type1_contrasts(model)
    mf = model.frame
    x_treat = model_matrix(terms, formula.intercept, mf, coding=design.coding, scheme="treatment")
    # complete design: one block per term with all indicator columns
    full_blocks = []
    for term in terms:
        block = model_matrix((term,), False, mf)
        full_blocks.append(block.matrix)
    full_names: list[str] = []
    for term in terms:
        full_names.extend(model_matrix((term,), False, mf).columns)
    rd_x = np.hstack(full_blocks)
    if formula.intercept:
        rd_x = np.hstack([np.ones((mf.n, 1)), rd_x])
        full_names = ["(Intercept)", *full_names]
    xt = x_treat.matrix
    pinv = np.linalg.pinv(xt)
    lmat = _zapsmall((pinv @ rd_x).T)  # rows: complete parameters, columns: X_treat coefs
    numeric = {v for v, k in mf.kinds.items() if k == "numeric"}
    order = sorted(range(len(terms)), key=lambda i: -len(terms[i]))  # stable: R's order()
    for i in order:
        term = terms[i]
        contains = [j for j, other in enumerate(terms) if _contained(term, other, numeric)]
        if not contains:
            continue
        cols = x_treat.term_columns[labels[i]]
        ccols = [c for j in contains for c in x_treat.term_columns[labels[j]]]
        a = lmat[:, ccols]
        coef, *_ = np.linalg.lstsq(a, lmat[:, cols], rcond=None)
        lmat[:, cols] = _zapsmall(lmat[:, cols] - a @ coef)
    keep = [full_names.index(c) for c in x_treat.columns]
    lmat = lmat[keep]
    mapping = _zapsmall(pinv @ x_orig)
    out: dict[str, np.ndarray] = {}
    for label in labels:
        cols = x_treat.term_columns[label]
        ctr = lmat[:, cols].T
        ctr = ctr[np.abs(ctr).sum(axis=1) > 1e-8]
        out[label] = ctr @ mapping
    return out


def _type1_contrasts(model: MixedModel) -> dict[str, np.ndarray]:
    x = model.design.matrix
    p = x.shape[1]
    lmat = np.eye(1) if p == 1 else doolittle(x.T @ x).T
    return {
        label: lmat[cols]
        for label, cols in model.design.term_columns.items()
        if label != "(Intercept)"
    }


def eta2_partial(f_value: float, df1: float, df2: float) -> float:
    """Partial η² from an F statistic: F·df₁ / (F·df₁ + df₂)."""
    return f_value * df1 / (f_value * df1 + df2)


def _ncp_bound(f_value: float, df1: float, df2: float, prob: float) -> float:
    """Noncentrality λ with P(F ≤ f | λ) = prob (0 if no λ ≥ 0 reaches it)."""
    from scipy import optimize, stats

    if stats.f.cdf(f_value, df1, df2) <= prob:
        return 0.0

    def g(lam: float) -> float:
        return float(stats.ncf.cdf(f_value, df1, df2, lam)) - prob

    hi = max(10.0, f_value * df1 * 2)
    while g(hi) > 0:
        hi *= 2
        if hi > 1e9:
            return hi
    return float(optimize.brentq(g, 0.0, hi, xtol=1e-12, rtol=1e-12))


def eta2_partial_ci(
    f_value: float, df1: float, df2: float, ci: float = 0.95, alternative: str = "greater"
) -> tuple[float, float]:
    """CI of partial η² by inverting the noncentral F (effectsize ``F_to_eta2``)."""
    if not (np.isfinite(f_value) and np.isfinite(df1) and np.isfinite(df2)):
        return (np.nan, np.nan)
    if alternative not in ("greater", "two.sided", "less"):
        raise InputError("alternative must be 'greater', 'two.sided' or 'less'")
    level = ci if alternative == "two.sided" else 2 * ci - 1
    alpha = 1 - level
    lam_low = _ncp_bound(f_value, df1, df2, 1 - alpha / 2)
    lam_high = _ncp_bound(f_value, df1, df2, alpha / 2)

    def to_eta2(lam: float) -> float:
        return lam / (lam + df2)

    low, high = to_eta2(lam_low), to_eta2(lam_high)
    if alternative == "greater":
        high = 1.0
    elif alternative == "less":
        low = 0.0
    return float(low), float(high)


def type3_anova(model: MixedModel, ci: float = 0.95, alternative: str = "greater") -> pd.DataFrame:
    """lmerTest ``anova(m, type = 3)`` plus effectsize's partial η² and its CI."""
    rows = []
    for label, lmat in type3_contrasts(model).items():
        res = model.fit.contestmd(lmat)
        eta = eta2_partial(res["F"], res["num_df"], res["den_df"])
        low, high = eta2_partial_ci(res["F"], res["num_df"], res["den_df"], ci, alternative)
        rows.append(
            {
                "term": label,
                "num_df": res["num_df"],
                "den_df": res["den_df"],
                "F": res["F"],
                "p": res["p"],
                "eta2_partial": eta,
                "eta2_ci_low": low,
                "eta2_ci_high": high,
            }
        )
    columns = ["term", "num_df", "den_df", "F", "p", "eta2_partial", "eta2_ci_low", "eta2_ci_high"]
    return pd.DataFrame(rows, columns=columns)
