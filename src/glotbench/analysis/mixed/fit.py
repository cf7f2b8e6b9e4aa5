"""Fitting linear mixed models by lme4's profiled deviance, and lmerTest's Satterthwaite df.

The model is ``y = X β + Z Λ(θ) u + ε`` with ``u ~ N(0, σ² I)`` and
``ε ~ N(0, σ² I)`` (Bates, Mächler, Bolker & Walker 2015, "Fitting linear
mixed-effects models using lme4", J. Stat. Softw. 67(1), section 3). For given
relative covariance parameters ``θ`` the penalised least-squares problem is
solved by the Cholesky factors ``L Lᵀ = Λᵀ Zᵀ Z Λ + I`` and
``R_X ᵀ R_X = Xᵀ X − R_ZXᵀ R_ZX``; the profiled deviances are (eqs. 34, 41)

    ML:   log|L|² + n (1 + log(2π r²/n))
    REML: log|L|² + log|R_X|² + (n−p) (1 + log(2π r²/(n−p)))

with ``r²`` the penalised residual sum of squares. ``θ`` is found by bounded
quasi-Newton minimisation (diagonal elements of each factor ≥ 0, as lme4).

Satterthwaite degrees of freedom follow lmerTest (Kuznetsova, Brockhoff &
Christensen 2017, J. Stat. Softw. 82(13), section 3.2): the variance
parameters are ``(θ, σ)``; their asymptotic covariance is twice the
(pseudo-)inverse of the Hessian of the unprofiled deviance, and the Jacobian
of ``Var(β̂) = σ² (R_Xᵀ R_X)⁻¹`` with respect to them is taken numerically —
both with Richardson extrapolation exactly as R's numDeriv does.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from glotbench.analysis.mixed.design import RandomBlock

if TYPE_CHECKING:
    import scipy.optimize
    import scipy.sparse

# scipy's linalg, sparse, optimize and stats are imported where they are used: importing
# them costs about half a second of CPU, which every command line call would pay otherwise.

LOG_2PI = np.log(2 * np.pi)


@dataclass
class _Solution:
    beta: np.ndarray
    u: np.ndarray
    pwrss: float
    ld_l2: float
    ld_rx2: float
    m: np.ndarray  # Xᵀ X − R_ZXᵀ R_ZX (= R_Xᵀ R_X)


@functools.cache
def _lapack() -> tuple[Callable[..., Any], Callable[..., Any]]:
    """LAPACK's ``dpotrf`` and ``dtrtrs``, looked up once (each deviance calls them five times)."""
    from scipy.linalg.lapack import dpotrf, dtrtrs

    return dpotrf, dtrtrs


def _cholesky(a: np.ndarray) -> np.ndarray:
    """Lower Cholesky factor by LAPACK's dpotrf (no argument checks: called hundreds of times)."""
    c, info = _lapack()[0](a, lower=1, clean=1)
    if info != 0:
        raise np.linalg.LinAlgError("matrix is not positive definite")
    return c


def _tri_solve(chol: np.ndarray, b: np.ndarray, trans: int = 0) -> np.ndarray:
    """Solve ``L x = b`` (trans=0) or ``Lᵀ x = b`` (trans=1) for a lower-triangular L (dtrtrs)."""
    x, info = _lapack()[1](chol, b, lower=1, trans=trans)
    if info != 0:
        raise np.linalg.LinAlgError("singular triangular factor")
    return x


def _log_det2(chol: np.ndarray) -> float:
    """``log|C|²`` of a triangular factor: twice the sum of the logs of its diagonal."""
    return 2.0 * float(np.add.reduce(np.log(chol.diagonal())))


@functools.cache
def _blas_controller() -> Any:
    """threadpoolctl's controller of the loaded BLAS libraries, found once: finding them
    reads the process's libraries (~3 ms, a quarter of a small design's whole fit), after
    scipy's LAPACK is loaded so that the library of ``dpotrf``/``dtrtrs`` is among them."""
    import scipy.linalg.lapack  # noqa: F401
    import scipy.sparse  # noqa: F401
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


@contextmanager
def single_blas_thread() -> Iterator[None]:
    """Run BLAS/LAPACK single-threaded: a mixed-model fit works on q × q and n × p blocks
    small enough that thread start-up and, on a busy machine, waiting for cores cost far
    more than they save (the 20,000-row benchmark: 0.06 s vs 0.3–0.6 s under load)."""
    with _blas_controller().limit(limits=1, user_api="blas"):
        yield


def sparse_z(blocks: list[RandomBlock], n: int) -> scipy.sparse.csc_matrix:
    """Z as a sparse matrix, built from each block's group codes and effect columns.

    Each row of a block's Z has at most ``p`` non-zeros (its group's effects), so
    ``ZᵀZ`` and ``ZᵀX`` cost O(n p²) instead of the O(n q²) of a dense product.
    """
    import scipy.sparse

    parts = []
    for b in blocks:
        if b.codes is None or b.lhs is None:
            parts.append(scipy.sparse.csc_matrix(b.z))
            continue
        p = b.n_effects
        rows = np.repeat(np.arange(n), p)
        cols = (b.codes[:, None] * p + np.arange(p)[None, :]).reshape(-1)
        parts.append(
            scipy.sparse.csc_matrix((b.lhs.reshape(-1), (rows, cols)), shape=(n, b.n_levels * p))
        )
    if not parts:
        return scipy.sparse.csc_matrix((n, 0))
    return scipy.sparse.hstack(parts, format="csc")


class ProfiledDeviance:
    """lme4's penalised least squares and profiled deviance for one (X, Z, y).

    All n-sized work (the cross-products ``ZᵀZ``, ``ZᵀX``, ``XᵀX``, ``Zᵀy``,
    ``Xᵀy``, ``yᵀy``, from a sparse Z) is done once here; each deviance
    evaluation then costs O(q³ + p³) on q × q and p × p blocks (Bates et al.
    2015, section 3.2 — the same blocks lme4 updates, held dense since q is
    the number of random effects, not of observations). When every term is a
    scalar random intercept, Λ is diagonal and ``ΛᵀZᵀZΛ`` is a scaling of ZᵀZ.
    """

    def __init__(
        self,
        x: np.ndarray,
        z: np.ndarray,
        y: np.ndarray,
        blocks: list[RandomBlock],
        z_sparse: scipy.sparse.spmatrix | None = None,
    ):
        self.x = x
        self.z = z
        self.y = y
        self.blocks = blocks
        self.n, self.p = x.shape
        self.q = z.shape[1]
        # With an intercept column, centring y changes only the intercept; it keeps
        # r² = yᵀy − |c_u|² − |c_β|² free of cancellation.
        has_intercept = self.p > 0 and bool(np.all(x[:, 0] == 1.0))
        self.shift = float(np.mean(y)) if has_intercept else 0.0
        yw = y - self.shift
        zs = z_sparse if z_sparse is not None else sparse_z(blocks, self.n)
        zt = zs.T.tocsr()
        self.ztz = np.asarray((zt @ zs).toarray())
        self.ztx = np.asarray(zt @ x)
        self.zty = np.asarray(zt @ yw).reshape(-1)
        self.xtx = x.T @ x
        self.xty = x.T @ yw
        self.yty = float(yw @ yw)
        self.eye_q = np.eye(self.q)
        # θ layout: per block, the lower triangle of T column by column (lme4 order)
        self.theta_sizes = [b.n_theta for b in blocks]
        self.n_theta = int(sum(self.theta_sizes))
        lower = []
        lam_rows, lam_cols, lam_theta = [], [], []
        k0 = 0
        offset = 0
        for b in blocks:
            p = b.n_effects
            k = k0
            for c in range(p):
                for r in range(c, p):
                    lower.append(0.0 if r == c else -np.inf)
                    base = offset + np.arange(b.n_levels) * p
                    lam_rows.append(base + r)
                    lam_cols.append(base + c)
                    lam_theta.append(np.full(b.n_levels, k))
                    k += 1
            k0 = k
            offset += b.n_levels * p
        self.theta_lower = np.array(lower)
        cat = np.concatenate if lam_rows else (lambda _: np.zeros(0, dtype=np.int64))
        self._lam_rows = cat(lam_rows).astype(np.int64)
        self._lam_cols = cat(lam_cols).astype(np.int64)
        self._lam_theta = cat(lam_theta).astype(np.int64)
        self.diagonal = all(b.n_effects == 1 for b in blocks)
        self._lam_flat = self._lam_rows * self.q + self._lam_cols
        self._memory: dict[bytes, tuple[float, float, float]] = {}
        self._inverse: dict[bytes, np.ndarray] = {}

    def theta_start(self) -> np.ndarray:
        return np.where(np.isfinite(self.theta_lower), 1.0, 0.0)

    def factors(self, theta: np.ndarray) -> list[np.ndarray]:
        """Lower-triangular ``T`` of each block."""
        out = []
        k = 0
        for b in self.blocks:
            p = b.n_effects
            t = np.zeros((p, p))
            for c in range(p):
                for r in range(c, p):
                    t[r, c] = theta[k]
                    k += 1
            out.append(t)
        return out

    def lambda_matrix(self, theta: np.ndarray) -> np.ndarray:
        """Λ(θ) = blockdiag(I_m ⊗ T) of all terms, dense q × q."""
        lam = np.zeros(self.q * self.q)
        lam[self._lam_flat] = np.asarray(theta, dtype=float)[self._lam_theta]
        return lam.reshape(self.q, self.q)

    def _decompose(self, theta: np.ndarray) -> tuple[np.ndarray, ...]:
        """The factors of one evaluation: ``L``, ``c_u``, ``R_ZX``, ``M``, ``R_X``, ``c_β``."""
        if self.diagonal:
            d = np.empty(self.q)
            d[self._lam_rows] = theta[self._lam_theta]
            a = self.ztz * np.outer(d, d) + self.eye_q
            lzx = d[:, None] * self.ztx
            lzy = d * self.zty
        else:
            lam = self.lambda_matrix(theta)
            a = lam.T @ self.ztz @ lam + self.eye_q
            lzx = lam.T @ self.ztx
            lzy = lam.T @ self.zty
        chol_l = _cholesky(a)
        cu = _tri_solve(chol_l, lzy)
        rzx = _tri_solve(chol_l, lzx)
        m = self.xtx - rzx.T @ rzx
        chol_x = _cholesky(m)
        cb = _tri_solve(chol_x, self.xty - rzx.T @ cu)
        return chol_l, cu, rzx, m, chol_x, cb

    def _pwrss(self, cu: np.ndarray, cb: np.ndarray) -> float:
        return max(self.yty - float(cu @ cu) - float(cb @ cb), 1e-300)

    def solve(self, theta: np.ndarray) -> _Solution:
        theta = np.asarray(theta, dtype=float)
        chol_l, cu, rzx, m, chol_x, cb = self._decompose(theta)
        beta = _tri_solve(chol_x, cb, trans=1)
        u = _tri_solve(chol_l, cu - rzx @ beta, trans=1)
        if self.shift:
            beta = beta.copy()
            beta[0] += self.shift
        return _Solution(
            beta=beta,
            u=u,
            pwrss=self._pwrss(cu, cb),
            ld_l2=_log_det2(chol_l),
            ld_rx2=_log_det2(chol_x),
            m=m,
        )

    def pieces(self, theta: np.ndarray) -> tuple[float, float, float]:
        """``(log|L|², log|R_X|², r²)`` at θ — all a deviance needs, without β̂ and û.

        Remembered per θ (:meth:`forget` empties the memory): the optimiser's passes
        restart from points already evaluated, and numDeriv's Hessian and Jacobian
        in ``(θ, σ)`` revisit each θ for every step in σ, which changes no factor.
        """
        theta = np.asarray(theta, dtype=float)
        key = theta.tobytes()
        hit = self._memory.get(key)
        if hit is None:
            chol_l, cu, _, _, chol_x, cb = self._decompose(theta)
            hit = (_log_det2(chol_l), _log_det2(chol_x), self._pwrss(cu, cb))
            self._memory[key] = hit
        return hit

    def forget(self) -> None:
        """Drop the per-θ memory of :meth:`pieces` (and of :meth:`cov_beta`'s inverses)."""
        self._memory.clear()
        self._inverse.clear()

    def profiled(self, theta: np.ndarray, reml: bool) -> float:
        """The profiled (RE)ML deviance (−2 log-likelihood) at θ."""
        try:
            ld_l2, ld_rx2, pwrss = self.pieces(theta)
        except np.linalg.LinAlgError:
            return np.inf
        n, p = self.n, self.p
        if reml:
            dof = n - p
            return ld_l2 + ld_rx2 + dof * (1.0 + LOG_2PI + np.log(pwrss / dof))
        return ld_l2 + n * (1.0 + LOG_2PI + np.log(pwrss / n))

    def unprofiled(self, varpar: np.ndarray, reml: bool) -> float:
        """lmerTest's ``devfun_vp``: the deviance at (θ, σ), σ the residual SD."""
        theta, sigma = varpar[:-1], varpar[-1]
        ld_l2, ld_rx2, pwrss = self.pieces(theta)
        sigma2 = sigma**2
        dev = ld_l2 + pwrss / sigma2 + self.n * np.log(2 * np.pi * sigma2)
        if reml:
            dev += ld_rx2 - self.p * np.log(2 * np.pi * sigma2)
        return float(dev)

    def cov_beta(self, varpar: np.ndarray) -> np.ndarray:
        """lmerTest's ``get_covbeta``: σ² (R_Xᵀ R_X)⁻¹ at (θ, σ); (R_Xᵀ R_X)⁻¹ remembered per θ."""
        theta = np.asarray(varpar[:-1], dtype=float)
        key = theta.tobytes()
        inverse = self._inverse.get(key)
        if inverse is None:
            inverse = self._inverse[key] = np.linalg.inv(self._decompose(theta)[3])
        return varpar[-1] ** 2 * inverse


# ---------------------------------------------------------------------------
# numerical derivatives as R's numDeriv (Richardson extrapolation)
# ---------------------------------------------------------------------------

_ZERO_TOL = float(np.sqrt(np.finfo(float).eps / 7e-7))


def jacobian(
    func: Callable[[np.ndarray], np.ndarray],
    x: np.ndarray,
    d: float = 1e-4,
    eps: float = 1e-4,
    r: int = 4,
) -> np.ndarray:
    """numDeriv::jacobian (method "Richardson"): output shape (*func(x).shape, len(x))."""
    x = np.asarray(x, dtype=float)
    f0 = np.asarray(func(x))
    n = len(x)
    h = np.abs(d * x) + eps * (np.abs(x) < _ZERO_TOL)
    a = np.zeros((r, n) + f0.shape)
    for k in range(r):
        for i in range(n):
            e = np.zeros(n)
            e[i] = h[i]
            a[k, i] = (np.asarray(func(x + e)) - np.asarray(func(x - e))) / (2 * h[i])
        h = h / 2
    for m in range(1, r):
        a = (a[1:] * 4**m - a[:-1]) / (4**m - 1)
    return np.moveaxis(a[0], 0, -1)


def hessian(
    func: Callable[[np.ndarray], float],
    x: np.ndarray,
    d: float = 0.1,
    eps: float = 1e-4,
    r: int = 4,
) -> np.ndarray:
    """numDeriv::hessian (genD with its default method.args)."""
    x = np.asarray(x, dtype=float)
    n = len(x)
    f0 = func(x)
    h0 = np.abs(d * x) + eps * (np.abs(x) < _ZERO_TOL)

    def extrapolate(values: list[float]) -> float:
        a = list(values)
        for m in range(1, r):
            a = [(a[k + 1] * 4**m - a[k]) / (4**m - 1) for k in range(r - m)]
        return a[0]

    hdiag = np.zeros(n)
    for i in range(n):
        h = h0.copy()
        approx = []
        for _ in range(r):
            e = np.zeros(n)
            e[i] = h[i]
            approx.append((func(x + e) - 2 * f0 + func(x - e)) / h[i] ** 2)
            h = h / 2
        hdiag[i] = extrapolate(approx)
    out = np.diag(hdiag)
    for i in range(n):
        for j in range(i):
            h = h0.copy()
            approx = []
            for _ in range(r):
                e = np.zeros(n)
                e[i] += h[i]
                e[j] += h[j]
                f1, f2 = func(x + e), func(x - e)
                approx.append(
                    (f1 - 2 * f0 + f2 - hdiag[i] * h[i] ** 2 - hdiag[j] * h[j] ** 2)
                    / (2 * h[i] * h[j])
                )
                h = h / 2
            out[i, j] = out[j, i] = extrapolate(approx)
    return out


# ---------------------------------------------------------------------------
# the fit
# ---------------------------------------------------------------------------


@dataclass
class LmmFit:
    """A fitted model: estimates and what inference needs."""

    reml: bool
    theta: np.ndarray
    beta: np.ndarray
    sigma: float
    vcov: np.ndarray  # Var(β̂)
    deviance: float
    b: np.ndarray  # conditional modes of the random effects (Λ u), Z's column order
    n: int
    p: int
    converged: bool
    optimizer_message: str
    n_evaluations: int
    vcov_varpar: np.ndarray = field(repr=False)
    jac_list: list[np.ndarray] = field(repr=False)  # ∂Var(β̂)/∂varpar_k
    hessian_eigenvalues: np.ndarray = field(repr=False)
    deviance_object: ProfiledDeviance = field(repr=False)

    @property
    def varpar(self) -> np.ndarray:
        return np.append(self.theta, self.sigma)

    # -- lmerTest's contest1D / contestMD -----------------------------------
    def satterthwaite_df(self, contrast: np.ndarray) -> float:
        """Satterthwaite df of ``Lβ`` for one contrast row L (lmerTest ``contest1D``)."""
        contrast = np.asarray(contrast, dtype=float)
        var = float(contrast @ self.vcov @ contrast)
        grad = np.array([contrast @ j @ contrast for j in self.jac_list])
        denom = float(grad @ self.vcov_varpar @ grad)
        if denom <= 0:
            return np.inf
        return 2.0 * var**2 / denom

    def coefficient_tests(self) -> dict[str, np.ndarray]:
        """:meth:`contest1d` of every coefficient at once (lmerTest's ``summary`` table).

        For the unit contrast of coefficient i, ``Lβ`` is ``β_i``, ``LVLᵀ`` is
        ``V_ii`` and the gradient is the diagonal element i of each Jacobian slice,
        so the numbers are contest1d's exactly; the t tail is one vectorised call.
        """
        estimate = np.array(self.beta, dtype=float)
        var = np.diag(self.vcov).copy()
        grads = np.stack([np.diag(j) for j in self.jac_list], axis=1)
        df = np.empty(self.p)
        for i in range(self.p):
            denom = float(grads[i] @ self.vcov_varpar @ grads[i])
            df[i] = 2.0 * var[i] ** 2 / denom if denom > 0 else np.inf
        se = np.sqrt(var)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(se > 0, estimate / se, np.nan)
        from scipy import stats

        finite = np.isfinite(t)
        p = np.full(self.p, np.nan)
        p[finite] = 2 * stats.t.sf(np.abs(t[finite]), df[finite])
        return {"estimate": estimate, "se": se, "df": df, "t": t, "p": p}

    def contest1d(self, contrast: np.ndarray) -> dict[str, float]:
        contrast = np.asarray(contrast, dtype=float)
        estimate = float(contrast @ self.beta)
        se = float(np.sqrt(contrast @ self.vcov @ contrast))
        df = self.satterthwaite_df(contrast)
        t = estimate / se if se > 0 else np.nan
        from scipy import stats

        p = 2 * stats.t.sf(abs(t), df) if np.isfinite(t) else np.nan
        return {"estimate": estimate, "se": se, "df": df, "t": t, "p": float(p)}

    def contestmd(
        self, lmat: np.ndarray, eps: float = np.sqrt(np.finfo(float).eps)
    ) -> dict[str, float]:
        """Multi-df F test of ``Lβ = 0`` with Satterthwaite ddf (lmerTest ``contestMD``)."""
        lmat = np.atleast_2d(np.asarray(lmat, dtype=float))
        if lmat.shape[0] == 0:
            return {"num_df": 0.0, "den_df": np.nan, "F": np.nan, "p": np.nan}
        vl = lmat @ self.vcov @ lmat.T
        evals, evecs = np.linalg.eigh(vl)
        order = np.argsort(evals)[::-1]
        evals, evecs = evals[order], evecs[:, order]
        positive = evals > max(eps * evals[0], 0.0)
        q = int(positive.sum())
        ptl = (evecs.T @ lmat)[:q]
        if q == 1:
            res = self.contest1d(ptl[0])
            return {"num_df": 1.0, "den_df": res["df"], "F": res["t"] ** 2, "p": res["p"]}
        t2 = (ptl @ self.beta) ** 2 / evals[:q]
        f_value = float(t2.sum() / q)
        nu = np.empty(q)
        for m in range(q):
            grad = np.array([ptl[m] @ j @ ptl[m] for j in self.jac_list])
            denom = float(grad @ self.vcov_varpar @ grad)
            nu[m] = 2 * evals[m] ** 2 / denom if denom > 0 else np.inf
        ddf = _fstat_ddf(nu)
        from scipy import stats

        p = (
            float(stats.f.sf(f_value, q, ddf))
            if np.isfinite(ddf)
            else float(stats.chi2.sf(f_value * q, q))
        )
        return {"num_df": float(q), "den_df": float(ddf), "F": f_value, "p": p}


def _fstat_ddf(nu: np.ndarray, tol: float = 1e-8) -> float:
    """lmerTest ``get_Fstat_ddf``: denominator df of an F statistic from the t-statistics' df."""
    if len(nu) == 1:
        return float(nu[0])
    if np.all(np.abs(np.diff(nu)) < tol):
        return float(np.mean(nu))
    if np.any(nu <= 2):
        return 2.0
    e = float(np.sum(nu / (nu - 2)))
    return 2 * e / (e - len(nu))


#: scipy's relative step of the 3-point difference: machine epsilon to the power 1/3
_FD_STEP = float(np.finfo(np.float64).eps ** (1 / 3))


def central_gradient(
    objective: Callable[[np.ndarray], float], f0: float, x: np.ndarray, lower: np.ndarray
) -> np.ndarray:
    """The gradient scipy's ``approx_derivative(method="3-point")`` computes with bounds
    ``[lower, ∞)`` — same steps, same points, same arithmetic, so the same floats — at a
    fraction of its cost, which on a small design was half of the optimiser's time.

    Step ``h_i = ε^⅓ max(1, |x_i|)``; the central difference
    ``(f(x + h e_i) − f(x − h e_i)) / ((x_i + h_i) − (x_i − h_i))``, or where ``x − h``
    crosses the bound the one-sided ``(−3 f(x) + 4 f(x + h e_i) − f(x + 2h e_i)) /
    ((x_i + 2h_i) − x_i)`` (scipy's ``_adjust_scheme_to_bounds`` for a bound below only).
    """
    x = np.asarray(x, dtype=float)
    sign = (x >= 0).astype(float) * 2 - 1
    h = np.abs(_FD_STEP * sign * np.maximum(1.0, np.abs(x)))
    central = (x - lower) >= h
    grad = np.empty(len(x))
    for i in range(len(x)):
        x1 = x.copy()
        x2 = x.copy()
        if central[i]:
            x1[i] = x[i] - h[i]
            x2[i] = x[i] + h[i]
            grad[i] = (objective(x2) - objective(x1)) / (x2[i] - x1[i])
        else:
            x1[i] = x[i] + h[i]
            x2[i] = x[i] + 2 * h[i]
            f1 = objective(x1)
            grad[i] = (-3.0 * f0 + 4 * f1 - objective(x2)) / (x2[i] - x[i])
    return grad


#: a bounded θ element closer than this to its bound (0) gets the derivative-free polish
#: (lme4's ``isSingular`` tolerance is 1e-4: a boundary fit must land on 0 exactly)
POLISH_NEAR_BOUND = 1e-3


def _minimise(
    objective: Callable[[np.ndarray], float],
    value: Callable[[np.ndarray], float],
    start: np.ndarray,
    lower: np.ndarray,
) -> scipy.optimize.OptimizeResult:
    """Bounded quasi-Newton from ``start``, a second pass from its optimum, and Powell's
    derivative-free polish where the quasi-Newton result may be poor.

    The polish runs only near a bound (a diagonal θ element below
    :data:`POLISH_NEAR_BOUND`, where the bound-adjusted finite-difference gradient is
    least reliable) or when the quasi-Newton passes did not report convergence. After a
    converged interior optimum it was never taken on the golden designs or the 20,000-row
    benchmark design, and on 3 of 300 fits of simulated responses only for "gains" of
    1.1–1.4e-12 in deviances of 400–1,600 (a few ulps: rounding, θ within 3e-7), while it
    costs 30–80 deviance evaluations — a fifth to a third of a small fit.
    The quasi-Newton gradient is scipy's 3-point difference (:func:`central_gradient`);
    ``value`` is the objective without counting (the deviance at the point itself,
    remembered from the evaluation scipy has just made there).
    """
    import scipy.optimize

    def gradient(theta: np.ndarray) -> np.ndarray:
        return central_gradient(objective, value(theta), theta, lower)

    bounds = [(lo if np.isfinite(lo) else None, None) for lo in lower]
    quasi_newton = {
        "method": "L-BFGS-B",
        "jac": gradient,
        "bounds": bounds,
        "options": {"ftol": 1e-15, "gtol": 1e-10, "maxiter": 2000},
    }
    best = scipy.optimize.minimize(objective, start, **quasi_newton)
    # a second pass from the first optimum (cheap; guards against an early stop)
    again = scipy.optimize.minimize(objective, best.x, **quasi_newton)
    if again.fun <= best.fun:
        best = again
    near_bound = bool(np.any(np.isfinite(lower) & (best.x - lower < POLISH_NEAR_BOUND)))
    if near_bound or not best.success:
        polish = scipy.optimize.minimize(
            objective,
            best.x,
            method="Powell",
            bounds=bounds,
            options={"xtol": 1e-10, "ftol": 1e-15, "maxfev": 4000},
        )
        if polish.fun < best.fun - 1e-12:
            best = polish
    return best


def fit_lmm(
    x: np.ndarray,
    z: np.ndarray,
    y: np.ndarray,
    blocks: list[RandomBlock],
    reml: bool = True,
    satterthwaite: bool = True,
    hessian_tol: float = 1e-8,
) -> LmmFit:
    """Fit by minimising the profiled deviance over θ, then prepare Satterthwaite inference."""
    dev = ProfiledDeviance(x, z, y, blocks)
    counter = {"n": 0}

    def objective(theta: np.ndarray) -> float:
        counter["n"] += 1
        return dev.profiled(theta, reml)

    best = _minimise(objective, lambda t: dev.profiled(t, reml), dev.theta_start(), dev.theta_lower)
    theta = np.asarray(best.x, dtype=float)
    lower = dev.theta_lower
    theta = np.where(np.isfinite(lower) & (theta < lower + 1e-10) & (theta < 1e-8), 0.0, theta)
    sol = dev.solve(theta)
    n, p = dev.n, dev.p
    sigma = float(np.sqrt(sol.pwrss / (n - p if reml else n)))
    vcov = sigma**2 * np.linalg.inv(sol.m)
    deviance = dev.profiled(theta, reml)
    b = dev.lambda_matrix(theta) @ sol.u
    converged = bool(np.isfinite(deviance))
    varpar = np.append(theta, sigma)
    if satterthwaite:
        h = hessian(lambda vp: dev.unprofiled(vp, reml), varpar)
        evals, evecs = np.linalg.eigh(h)
        pos = evals > hessian_tol
        h_inv = (evecs[:, pos] / evals[pos]) @ evecs[:, pos].T
        vcov_varpar = 2 * h_inv
        jac = jacobian(dev.cov_beta, varpar)
        jac_list = [jac[..., k] for k in range(len(varpar))]
    else:
        evals = np.array([])
        vcov_varpar = np.zeros((len(varpar), len(varpar)))
        jac_list = [np.zeros((p, p)) for _ in varpar]
    dev.forget()
    return LmmFit(
        reml=reml,
        theta=theta,
        beta=sol.beta,
        sigma=sigma,
        vcov=vcov,
        deviance=float(deviance),
        b=b,
        n=n,
        p=p,
        converged=converged,
        optimizer_message=str(best.message),
        n_evaluations=counter["n"],
        vcov_varpar=vcov_varpar,
        jac_list=jac_list,
        hessian_eigenvalues=evals,
        deviance_object=dev,
    )
