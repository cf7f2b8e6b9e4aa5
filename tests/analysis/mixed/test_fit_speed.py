"""The fast deviance path (sparse cross-products, diagonal Λ, single-threaded BLAS) against
the textbook dense computation, and the 20,000-row crossed design of benchmarks/bench_lmm.py."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from glotbench.analysis.mixed import lmm
from glotbench.analysis.mixed.fit import ProfiledDeviance

from .golden import FIXTURES, golden


def _crossed(n_models: int = 50, n_langs: int = 40, seed: int = 0) -> pd.DataFrame:
    """The benchmark's design (benchmarks/bench_lmm.py): models × languages × 5 tasks × 2 seeds."""
    rng = np.random.default_rng(seed)
    grid = pd.MultiIndex.from_product(
        [
            [f"m{i:02d}" for i in range(n_models)],
            [f"l{i:02d}" for i in range(n_langs)],
            ["t1", "t2", "t3", "t4", "t5"],
            [1, 2],
        ],
        names=["model", "language", "task", "seed"],
    ).to_frame(index=False)
    mu = rng.normal(0, 0.05, n_models)[grid["model"].str[1:].astype(int)]
    la = rng.normal(0, 0.08, n_langs)[grid["language"].str[1:].astype(int)]
    ta = grid["task"].map({"t1": 0.0, "t2": 0.03, "t3": -0.02, "t4": 0.05, "t5": -0.04})
    grid["score"] = 0.6 + mu + la + ta + rng.normal(0, 0.04, len(grid))
    return grid


def _dense_deviance(dev: ProfiledDeviance, theta: np.ndarray, reml: bool) -> float:
    """Bates et al. (2015) eq. 34/41 from dense Z, Λ and a generic solver (no shortcuts)."""
    lam = dev.lambda_matrix(theta)
    x, z, y = dev.x, dev.z, dev.y
    zl = z @ lam
    # the augmented least-squares problem [ZΛ X; I 0] [u; β] ≈ [y; 0]
    a = np.block([[zl, x], [np.eye(dev.q), np.zeros((dev.q, dev.p))]])
    rhs = np.concatenate([y, np.zeros(dev.q)])
    sol, *_ = np.linalg.lstsq(a, rhs, rcond=None)
    r2 = float(np.sum((rhs - a @ sol) ** 2))
    _, ld_l = np.linalg.slogdet(zl.T @ zl + np.eye(dev.q))
    n, p = dev.n, dev.p
    if not reml:
        return ld_l + n * (1 + np.log(2 * np.pi * r2 / n))
    full = a.T @ a
    _, ld_all = np.linalg.slogdet(full)  # log|L|² + log|R_X|²
    return ld_all + (n - p) * (1 + np.log(2 * np.pi * r2 / (n - p)))


@pytest.mark.parametrize("name", ["crossed", "slopes", "nested"])
def test_profiled_deviance_equals_the_dense_textbook_formula(name: str) -> None:
    g = golden(name)
    model = lmm(g["formula"], pd.read_csv(FIXTURES / g["csv"]))
    dev = model.fit.deviance_object
    np.testing.assert_allclose(dev.ztz, dev.z.T @ dev.z, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dev.ztx, dev.z.T @ dev.x, rtol=1e-12, atol=1e-9)
    rng = np.random.default_rng(1)
    for theta in [model.fit.theta, dev.theta_start(), np.abs(rng.normal(size=dev.n_theta))]:
        for reml in (True, False):
            ours = dev.profiled(theta, reml)
            assert ours == pytest.approx(_dense_deviance(dev, theta, reml), rel=1e-9)


def test_diagonal_shortcut_matches_the_general_lambda_product() -> None:
    g = golden("crossed")
    dev = lmm(g["formula"], pd.read_csv(FIXTURES / g["csv"])).fit.deviance_object
    assert dev.diagonal
    theta = np.array([0.7, 1.3])
    fast = dev.solve(theta)
    dev.diagonal = False
    slow = dev.solve(theta)
    np.testing.assert_allclose(fast.beta, slow.beta, rtol=1e-12)
    np.testing.assert_allclose(fast.u, slow.u, rtol=1e-10, atol=1e-12)
    assert fast.ld_l2 == pytest.approx(slow.ld_l2, rel=1e-12)


def test_20000_row_crossed_design_recovers_the_simulated_components() -> None:
    """The benchmark's 20,000-row design (its fit time against lme4 is measured by
    benchmarks/bench_lmm.py, not here): the simulated SDs are recovered."""
    data = _crossed()
    assert len(data) == 20_000
    model = lmm("score ~ task + (1 | model) + (1 | language)", data)
    model.fixed_effects()
    # and the fit is right: the simulated SDs (0.05, 0.08, 0.04) are recovered
    sd = model.random_effects().set_index("group")["sd"]
    assert sd["model"] == pytest.approx(0.05, rel=0.3)
    assert sd["language"] == pytest.approx(0.08, rel=0.3)
    assert model.fit.sigma == pytest.approx(0.04, rel=0.03)
