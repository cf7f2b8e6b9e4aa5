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
  ``2 / (n_sim + 1)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import stats

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
            f"outlier p = {self.outlier_p:.3g}",
            transform=ax.transAxes,
            va="top",
            fontsize=9,
        )
        fig.tight_layout()
        fig.savefig(path)
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


def simulate_residuals(
    model: MixedModel, n_sim: int = 250, seed: int = 0, conditional: bool = True
) -> SimulatedResiduals:
    """DHARMa-style scaled residuals and their uniformity, dispersion and outlier tests."""
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
    )
