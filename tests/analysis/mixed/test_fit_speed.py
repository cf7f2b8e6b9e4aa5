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


def test_optimiser_gradient_is_scipys_three_point_difference() -> None:
    """central_gradient replaces scipy's approx_derivative(method="3-point") inside L-BFGS-B:
    the same floats on and off the bound 0 (one-sided there), unbounded elements too."""
    from scipy.optimize._numdiff import approx_derivative

    from glotbench.analysis.mixed.fit import central_gradient

    rng = np.random.default_rng(0)
    for _ in range(300):
        n = int(rng.integers(1, 5))
        lower = np.where(rng.random(n) < 0.6, 0.0, -np.inf)
        x = np.abs(rng.normal(size=n)) * 10.0 ** rng.integers(-9, 2, size=n)
        x = np.where(rng.random(n) < 0.2, 0.0, x)
        x = np.where(np.isfinite(lower), x, 2 * rng.normal(size=n))
        a = rng.normal(size=(n, n))

        def f(t: np.ndarray, a: np.ndarray = a) -> float:
            return float(np.sum(np.sin(a @ t)) + 3.7 * np.log1p(t @ t) - 100.0)

        theirs = approx_derivative(f, x, method="3-point", bounds=(lower, np.inf), f0=f(x))
        assert np.array_equal(central_gradient(f, f(x), x, lower), theirs)


@pytest.mark.parametrize("name", ["slopes", "nested", "singular"])
def test_coefficient_table_is_contest1d_of_each_unit_contrast(name: str) -> None:
    g = golden(name)
    model = lmm(g["formula"], pd.read_csv(FIXTURES / g["csv"]))
    table = model.fixed_effects()
    for i in range(model.fit.p):
        contrast = np.zeros(model.fit.p)
        contrast[i] = 1.0
        row = model.fit.contest1d(contrast)
        for key in ("estimate", "se", "df", "t", "p"):
            assert table[key].iloc[i] == row[key]


def test_remembered_deviance_pieces_equal_a_fresh_solve() -> None:
    """The per-θ memory (optimiser restarts, numDeriv's σ steps) returns what solving anew gives."""
    g = golden("slopes")
    model = lmm(g["formula"], pd.read_csv(FIXTURES / g["csv"]))
    dev = model.fit.deviance_object
    theta = model.fit.theta * 1.1
    first = dev.unprofiled(np.append(theta, 0.3), True)
    remembered = dev.unprofiled(np.append(theta, 0.3), True)
    dev.forget()
    s = dev.solve(theta)
    fresh = (
        s.ld_l2
        + s.pwrss / 0.09
        + dev.n * np.log(2 * np.pi * 0.09)
        + s.ld_rx2
        - dev.p * np.log(2 * np.pi * 0.09)
    )
    assert first == remembered == pytest.approx(fresh, rel=1e-14)
    np.testing.assert_array_equal(dev.cov_beta(np.append(theta, 0.3)), 0.3**2 * np.linalg.inv(s.m))


def test_model_frame_reads_text_columns_as_r_does() -> None:
    """Padded labels are stripped, "NA"/"" rows dropped, numbers given as text are numeric,
    a bool column is a factor (levels "False", "True") — each column converted once."""
    from glotbench.analysis.mixed.design import model_frame
    from glotbench.analysis.mixed.formula import parse_formula

    data = pd.DataFrame(
        {
            "score": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6],
            "shots": [" 1", "2 ", "4", "NA", "8", "16"],
            "lang": ["en ", " de", "en", "de", "", "fr"],
            "flag": [True, False, True, False, True, False],
            "model": ["a", "b", "a", "b", "a", "b"],
        }
    )
    mf = model_frame(data, parse_formula("score ~ shots + lang + flag + (1 | model)"))
    np.testing.assert_array_equal(mf.rows, [0, 1, 2, 5])
    assert mf.kinds == {
        "score": "numeric",
        "shots": "numeric",
        "lang": "factor",
        "flag": "factor",
        "model": "factor",
    }
    np.testing.assert_array_equal(mf.data["shots"], [1.0, 2.0, 4.0, 16.0])
    assert mf.data["lang"].tolist() == ["en", "de", "en", "fr"]
    assert mf.levels["lang"] == ["de", "en", "fr"]
    assert mf.levels["flag"] == ["False", "True"]
    assert mf.data["model"].tolist() == ["a", "b", "a", "b"]
