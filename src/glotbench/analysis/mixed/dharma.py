"""Simulation-based residual diagnostics, as R's DHARMa (Hartig 2022).

For each observation the scaled (quantile) residual is the share of values
simulated from the fitted model that fall below the observed value (ties
broken at random), so a well-specified model gives residuals uniform on
(0, 1). By default new responses are simulated *conditionally* on the
estimated random effects (``Xβ̂ + Zb̂ + ε``, ``ε ~ N(0, σ̂²)``);
``conditional=False`` draws new random effects too (lme4's
``simulate(use.u = FALSE)``, DHARMa's default for lme4).

Tests (as DHARMa's ``testUniformity``, ``testDispersion`` and
``testOutliers``):

* uniformity: one-sample Kolmogorov–Smirnov test of the residuals against
  U(0, 1);
* dispersion: the SD of ``y − fitted`` over the mean of the same SD in the
  simulations (ratio > 1: overdispersion), two-sided simulation p-value;
* outliers: the number of observations outside the whole simulation envelope
  (residual 0 or 1), two-sided binomial test against the expected rate
  ``2 / (n_sim + 1)``;

and, in :mod:`.dharma_tests`, DHARMa's ``testQuantiles`` (residual quantiles
against the fixed-effect prediction, DHARMa's default predictor for lme4:
``predict(re.form = ~0)``) and ``testCategorical`` (uniformity within each
group of a factor, and Levene's test between groups).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from glotbench.analysis.mixed.dharma_tests import (
    CategoricalTest,
    QuantileTest,
    categorical_test,
    quantile_test,
)
from glotbench.errors import InputError
from glotbench.store.atomic_files import atomic_path

if TYPE_CHECKING:
    from glotbench.analysis.mixed.model import MixedModel


@dataclass
class SimulatedResiduals:
    """Scaled residuals and the three DHARMa tests."""

    residuals: np.ndarray
    n_sim: int
    conditional: bool
    ks_statistic: float
    ks_p: float
    dispersion_ratio: float
    dispersion_p: float
    n_outliers: int
    outlier_p: float
    expected_outlier_rate: float
    simulated: np.ndarray = field(repr=False)
    quantiles: QuantileTest | None = None
    categorical: list[CategoricalTest] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_sim": self.n_sim,
            "conditional": self.conditional,
            "uniformity": {"ks_statistic": self.ks_statistic, "p": self.ks_p},
            "dispersion": {"ratio": self.dispersion_ratio, "p": self.dispersion_p},
            "outliers": {
                "count": self.n_outliers,
                "expected_rate": self.expected_outlier_rate,
                "p": self.outlier_p,
            },
            "quantiles": None if self.quantiles is None else self.quantiles.to_dict(),
            "categorical": [c.to_dict() for c in self.categorical],
            "messages": self.messages(),
            # per observation, in the model frame's order (for a Q-Q plot: uniform_qq)
            "residuals": [float(r) for r in self.residuals],
        }

    def messages(self, alpha: float = 0.05) -> list[str]:
        out = []
        if self.ks_p < alpha:
            out.append(
                f"residuals are not uniform (KS p = {self.ks_p:.3g}): the model's distribution "
                "does not fit the data; look at the Q-Q plot"
            )
        if self.dispersion_p < alpha:
            kind = "over" if self.dispersion_ratio > 1 else "under"
            out.append(
                f"{kind}dispersion (ratio {self.dispersion_ratio:.3g}, p = "
                f"{self.dispersion_p:.3g}): the residual variance is not what the model says"
            )
        if self.outlier_p < alpha:
            out.append(
                f"{self.n_outliers} observation(s) lie outside all simulated values "
                f"(p = {self.outlier_p:.3g})"
            )
        if self.quantiles is not None and self.quantiles.p < alpha:
            out.append(
                f"the residual quantiles depend on the predicted value (quantile test p = "
                f"{self.quantiles.p:.3g}): a missing effect or a non-linear relation; plot the "
                "residuals against the predicted values"
            )
        for test in self.categorical:
            out.extend(test.messages(alpha))
        return out

    def qq_plot(self, path: str | Path) -> Path:
        """Q-Q plot of the scaled residuals against U(0, 1), written to ``path`` (PNG, PDF, SVG)."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        path = Path(path)
        expected, res = uniform_qq(self.residuals)
        fig, ax = plt.subplots(figsize=(5, 5))
        ax.plot([0, 1], [0, 1], color="tab:red", linewidth=1)
        ax.scatter(expected, res, s=8, color="black")
        ax.set_xlabel("expected (uniform)")
        ax.set_ylabel("observed scaled residual")
        ax.set_title("Q-Q plot of simulated residuals")
        ax.text(
            0.02,
            0.98,
            f"KS p = {self.ks_p:.3g}\ndispersion p = {self.dispersion_p:.3g}\n"
            f"outlier p = {self.outlier_p:.3g}"
            + (f"\nquantile test p = {self.quantiles.p:.3g}" if self.quantiles else ""),
            transform=ax.transAxes,
            va="top",
            fontsize=9,
        )
        fig.tight_layout()
        with atomic_path(path) as tmp:  # a killed run keeps the previous figure
            fig.savefig(tmp, format=Path(path).suffix.lstrip(".").lower() or "png")
        plt.close(fig)
        return path


def uniform_qq(residuals: Any) -> tuple[np.ndarray, np.ndarray]:
    """Points of a Q-Q plot against U(0, 1): expected ``(i − ½)/n`` and the sorted residuals."""
    res = np.sort(np.asarray(residuals, dtype=np.float64).reshape(-1))
    n = len(res)
    return (np.arange(1, n + 1) - 0.5) / n, res


def simulate_responses(
    model: MixedModel, n_sim: int, rng: np.random.Generator, conditional: bool = True
) -> np.ndarray:
    """``n × n_sim`` responses simulated from the fitted model."""
    n = model.fit.n
    sigma = model.fit.sigma
    if conditional:
        mean = model.fitted(conditional=True)
        return mean[:, None] + rng.normal(0.0, sigma, size=(n, n_sim))
    fixed = model.design.matrix @ model.fit.beta
    lam = model.fit.deviance_object.lambda_matrix(model.fit.theta)
    u = rng.normal(0.0, sigma, size=(lam.shape[0], n_sim))
    return fixed[:, None] + model.z @ (lam @ u) + rng.normal(0.0, sigma, size=(n, n_sim))


def default_groups(model: MixedModel) -> list[str]:
    """The factors of the fixed effects: the per-group tests' default grouping factors."""
    return [v for v in model.formula.variables if model.frame.kinds.get(v) == "factor"]


def group_values(model: MixedModel, factor: str, data: pd.DataFrame | None = None) -> np.ndarray:
    """The level of ``factor`` (or of an interaction ``a:b``) of each observation of the model.

    Variables of the model come from its frame; others from ``data`` (the table
    the model was fitted to), restricted to the rows the model used.
    """
    parts = []
    for var in factor.split(":"):
        var = var.strip()
        if var in model.frame.data:
            parts.append(np.asarray(model.frame.data[var]).astype(str))
        elif data is not None and var in data.columns:
            parts.append(data[var].iloc[model.frame.rows].astype(str).to_numpy())
        else:
            known = sorted(set(model.frame.data) | set(data.columns if data is not None else []))
            raise InputError(
                f"cannot group the residuals by {var!r}: no such column "
                f"(available: {', '.join(known)})",
                field=var,
            )
    if len(parts) == 1:
        return parts[0]
    return np.array([":".join(row) for row in zip(*parts, strict=True)])


def simulate_residuals(
    model: MixedModel,
    n_sim: int = 250,
    seed: int = 0,
    conditional: bool = True,
    *,
    by: Sequence[str] | None = None,
    data: pd.DataFrame | None = None,
) -> SimulatedResiduals:
    """DHARMa-style scaled residuals and their tests.

    Uniformity, dispersion and outliers; the quantile test against the
    fixed-effect prediction; and the per-group tests for each factor of ``by``
    (default: the factors of the fixed effects; ``a:b`` groups by the cells of
    two factors; columns not in the model are taken from ``data``).
    """
    from scipy import stats

    rng = np.random.default_rng(seed)
    sims = simulate_responses(model, n_sim, rng, conditional)
    y = model.y
    below = (sims < y[:, None]).sum(axis=1)
    ties = (sims == y[:, None]).sum(axis=1)
    residuals = (below + rng.uniform(size=len(y)) * ties) / n_sim
    ks = stats.kstest(residuals, "uniform")
    fitted = model.fitted(conditional=True)
    observed_spread = float(np.std(y - fitted, ddof=1))
    simulated_spread = np.std(sims - fitted[:, None], axis=0, ddof=1)
    ratio = observed_spread / float(np.mean(simulated_spread))
    p_disp = min(
        1.0,
        2
        * min(
            float(np.mean(simulated_spread >= observed_spread)),
            float(np.mean(simulated_spread <= observed_spread)),
        ),
    )
    outside = int(np.sum((below == 0) | (below == n_sim)))
    rate = 2.0 / (n_sim + 1)
    p_out = float(stats.binomtest(outside, len(y), rate).pvalue)
    quantiles = quantile_test(
        residuals, model.fitted(conditional=False), predictor_name="fixed-effect prediction"
    )
    factors = default_groups(model) if by is None else list(by)
    categorical = [
        categorical_test(residuals, group_values(model, f, data), factor=f) for f in factors
    ]
    return SimulatedResiduals(
        residuals=residuals,
        n_sim=n_sim,
        conditional=conditional,
        ks_statistic=float(ks.statistic),
        ks_p=float(ks.pvalue),
        dispersion_ratio=ratio,
        dispersion_p=p_disp,
        n_outliers=outside,
        outlier_p=p_out,
        expected_outlier_rate=rate,
        simulated=sims,
        quantiles=quantiles,
        categorical=categorical,
    )
