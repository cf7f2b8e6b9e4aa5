"""Estimated marginal means and their pairwise contrasts (as R's emmeans).

The reference grid holds every combination of the levels of the factors in the
fixed part, with numeric covariates at their mean (emmeans' ``cov.reduce =
mean``). The EMM of a level (or a combination of levels of several factors,
``language:task``) is the equally weighted mean of the grid predictions over
the other factors: a linear function ``l β`` with ``SE = √(l V lᵀ)`` and
Satterthwaite df (``lmer.df = "satterthwaite"``). Pairwise differences use
the same machinery; the Tukey adjustment uses the studentized range
distribution with as many means as levels (``ptukey(√2 |t|, k, df)``).
Searle, Speed & Milliken (1980), "Population marginal means in the linear
model", Am. Stat. 34(4).
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from glotbench.analysis.mixed.design import model_matrix
from glotbench.errors import InputError

if TYPE_CHECKING:
    from glotbench.analysis.mixed.model import MixedModel


def _spec_factors(model: MixedModel, spec: str) -> list[str]:
    names = [s.strip() for s in spec.replace("*", ":").split(":") if s.strip()]
    fixed_vars = {v for t in model.formula.fixed_terms for v in t}
    for name in names:
        if name not in fixed_vars:
            raise InputError(
                f"emmeans={spec!r}: {name!r} is not a variable of the fixed part of the formula",
                field="emmeans",
            )
        if model.frame.kinds[name] != "factor":
            raise InputError(
                f"emmeans={spec!r}: {name!r} is numeric; marginal means are for factors",
                field="emmeans",
            )
    if len(set(names)) != len(names):
        raise InputError(f"emmeans={spec!r} names a factor twice", field="emmeans")
    return names


def emm_matrix(model: MixedModel, spec: str) -> tuple[list[str], np.ndarray]:
    """Labels and the rows ``l`` (one per level combination) of the EMMs of ``spec``."""
    factors = _spec_factors(model, spec)
    mf = model.frame
    fixed_vars: list[str] = []
    for t in model.formula.fixed_terms:
        for v in t:
            if v not in fixed_vars:
                fixed_vars.append(v)
    grid_factors = [v for v in fixed_vars if mf.kinds[v] == "factor"]
    combos = list(itertools.product(*(mf.levels[v] for v in grid_factors)))
    values: dict[str, np.ndarray] = {}
    for i, v in enumerate(grid_factors):
        values[v] = np.array([c[i] for c in combos], dtype=object)
    n_grid = max(len(combos), 1)
    for v in fixed_vars:
        if mf.kinds[v] == "numeric":
            values[v] = np.full(n_grid, float(np.mean(mf.data[v])))
    if not values:
        values["__dummy__"] = np.zeros(n_grid)
    xg = model_matrix(
        model.formula.fixed_terms,
        model.formula.intercept,
        mf,
        values=values,
        coding=model.design.coding,
    ).matrix
    # levels: first factor varies fastest (emmeans' order)
    level_tuples = [
        tuple(reversed(c)) for c in itertools.product(*(mf.levels[f] for f in reversed(factors)))
    ]
    labels, rows = [], []
    for lv in level_tuples:
        mask = np.ones(n_grid, dtype=bool)
        for f, level in zip(factors, lv, strict=True):
            mask &= values[f] == level
        labels.append(" ".join(lv))
        rows.append(xg[mask].mean(axis=0))
    return labels, np.array(rows)


def emmeans(model: MixedModel, spec: str, level: float = 0.95) -> pd.DataFrame:
    """EMMs of a factor or factor combination: level, emmean, se, df, lower, upper."""
    from scipy import stats

    labels, lmat = emm_matrix(model, spec)
    out = []
    for label, row in zip(labels, lmat, strict=True):
        res = model.fit.contest1d(row)
        q = stats.t.ppf(0.5 + level / 2, res["df"])
        out.append(
            {
                "level": label,
                "emmean": res["estimate"],
                "se": res["se"],
                "df": res["df"],
                "lower": res["estimate"] - q * res["se"],
                "upper": res["estimate"] + q * res["se"],
            }
        )
    return pd.DataFrame(out, columns=["level", "emmean", "se", "df", "lower", "upper"])


def _label(level: str) -> str:
    # emmeans 1.8 writes combinations as "de ner - en ner" (no parentheses)
    return level


def pairwise_contrasts(model: MixedModel, spec: str, adjust: str = "tukey") -> pd.DataFrame:
    """All pairwise differences of the EMMs (as ``pairs(emmeans(...))``)."""
    labels, lmat = emm_matrix(model, spec)
    k = len(labels)
    rows = []
    for i in range(k):
        for j in range(i + 1, k):
            res = model.fit.contest1d(lmat[i] - lmat[j])
            rows.append(
                {
                    "contrast": f"{_label(labels[i])} - {_label(labels[j])}",
                    "estimate": res["estimate"],
                    "se": res["se"],
                    "df": res["df"],
                    "t": res["t"],
                    "p_unadjusted": res["p"],
                }
            )
    frame = pd.DataFrame(rows, columns=["contrast", "estimate", "se", "df", "t", "p_unadjusted"])
    frame["p"] = adjust_p(frame, k, adjust)
    frame["adjust"] = adjust
    return frame


def adjust_p(frame: pd.DataFrame, n_means: int, adjust: str) -> np.ndarray:
    """Multiplicity-adjusted p-values: tukey, bonferroni, holm or none."""
    from scipy import stats

    p = frame["p_unadjusted"].to_numpy(dtype=float)
    m = len(p)
    if adjust == "none" or m == 0:
        return p
    if adjust == "bonferroni":
        return np.minimum(1.0, p * m)
    if adjust == "holm":
        order = np.argsort(p)
        adj = np.maximum.accumulate((m - np.arange(m)) * p[order])
        out = np.empty(m)
        out[order] = np.minimum(1.0, adj)
        return out
    if adjust == "tukey":
        if n_means < 2:
            return p
        t = frame["t"].to_numpy(dtype=float)
        df = frame["df"].to_numpy(dtype=float)
        return np.array(
            [
                float(stats.studentized_range.sf(np.sqrt(2) * abs(ti), n_means, min(dfi, 1e6)))
                if n_means > 2
                else 2 * stats.t.sf(abs(ti), dfi)
                for ti, dfi in zip(t, df, strict=True)
            ]
        )
    raise InputError(
        f"unknown p-value adjustment {adjust!r}; use tukey, bonferroni, holm or none",
        field="adjust",
    )
