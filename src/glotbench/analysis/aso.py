"""Almost Stochastic Order (ASO), vectorised.

The test of del Barrio, Cuesta-Albertos & Matrán (2018, "An optimal transportation
approach for assessing almost stochastic order") as adapted to comparing deep
learning models by Dror, Shlomov & Reichart (2019, "Deep dominance — how to
properly compare deep neural models", ACL) and implemented in deep-significance
(Ulmer, Hardmeier & Frellsen 2022, ``deepsig.aso``, version 1.2.8). glotbench
reproduces deep-significance's *current* formula exactly; only the computation
is different (sort once, ``searchsorted`` quantiles, all bootstrap replicates
as arrays), so results agree with ``deepsig.aso`` within Monte Carlo error.

Formula (deepsig 1.2.8)
-----------------------
With the empirical quantile function ``F⁻¹(t) = x_(⌈n t⌉)`` of the n scores of A
(``x_(k)`` the k-th smallest; likewise ``G⁻¹`` for the m scores of B) on the grid
``t_i = i·dt``, i = 1 … ⌊1/dt⌋ − 1 (``numpy.arange(dt, 1, dt)``):

* squared Wasserstein distance ``W₂² = Σ_i (G⁻¹(t_i) − F⁻¹(t_i))² dt``;
* violation set integral ``V = Σ_{i ≥ 2} (G⁻¹(t_i) − F⁻¹(t_i))² [F⁻¹(t_i) < G⁻¹(t_i)] dt``
  (deepsig skips the first grid point here, ``diff[1:]``, and so does glotbench);
* violation ratio ``ε_W₂ = V / W₂²`` (0.5 when ``W₂² = 0``; Dror et al. eq. 4–5);
* ``σ̂`` = standard deviation (ddof 0) of ``√(nm/(n+m)) (ε*_b − ε_W₂)`` over B
  bootstrap replicates ε*_b, each the violation ratio of a resample (with
  replacement) of A against a resample of B;
* ``ε_min = clip(ε_W₂ − σ̂ / √(nm/(n+m)) · Φ⁻¹(1 − α'), 0, 1)`` with the
  confidence level ``α' = α + (1 − α)/c`` after a Bonferroni correction for
  c comparisons (deepsig's ``num_comparisons``).

ε_min < 0.5 (the usual threshold) says A is almost stochastically larger than B.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import numpy.typing as npt
import pandas as pd

from glotbench.errors import InputError
from glotbench.resample.weights import BLOCK, block_rng

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: stream tag of ASO resamples in :func:`glotbench.resample.weights.block_rng`
_ASO_STREAM = 3
#: bound on the number of floats of one intermediate array
_CHUNK_FLOATS = 8_000_000
#: up to this many runs the violation ratio is accumulated run by run
_FEW_RUNS = 16


# --- building blocks ----------------------------------------------------------


def quantile_grid(dt: float) -> FloatArray:
    """The grid ``t = numpy.arange(dt, 1, dt)`` deepsig integrates over."""
    if not 0.0 < dt < 0.5:
        raise InputError(f"dt must lie in (0, 0.5), got {dt}")
    return np.arange(dt, 1, dt)


def quantile_positions(n: int, grid: FloatArray) -> IntArray:
    """0-based order-statistic index of ``F⁻¹(t) = x_(⌈n t⌉)`` at every grid point.

    Exactly deepsig's ``get_quantile_function``: ``clip(ceil(n t) − 1, 0, n − 1)``.
    """
    return np.clip(np.ceil(n * grid).astype(np.int64) - 1, 0, n - 1)


@dataclass(frozen=True)
class Segments:
    """Grid points grouped by the pair of order statistics they read (exact compression).

    ``F⁻¹`` and ``G⁻¹`` are step functions, so the ⌊1/dt⌋ − 1 grid points fall
    into runs on which both quantiles are constant; the sums over the grid are
    sums over runs weighted by their lengths. ``first`` holds one grid index per
    run, ``weight_all`` the run lengths (for W₂²) and ``weight_violation`` the
    run lengths without the first grid point (deepsig's ``diff[1:]``).
    """

    first: IntArray
    weight_all: FloatArray
    weight_violation: FloatArray


def segments(n_a: int, n_b: int, grid: FloatArray) -> Segments:
    """Runs of grid points with constant (A, B) order statistics."""
    pa, pb = quantile_positions(n_a, grid), quantile_positions(n_b, grid)
    change = np.ones(grid.size, dtype=bool)
    change[1:] = (pa[1:] != pa[:-1]) | (pb[1:] != pb[:-1])
    first = np.flatnonzero(change)
    lengths = np.diff(np.append(first, grid.size)).astype(np.float64)
    violation = lengths.copy()
    violation[0] -= 1.0  # the first grid point is not part of deepsig's violation integral
    return Segments(first.astype(np.int64), lengths, violation)


def violation_ratio(
    quantiles_a: FloatArray, quantiles_b: FloatArray, segs: Segments, dt: float
) -> FloatArray:
    """ε_W₂ = V / W₂² over the last axis (runs); vectorised over leading axes.

    Dror et al. (2019) eqs. 4–5 as computed by ``deepsig.aso.compute_violation_ratio``
    (0.5 where W₂² = 0).
    """
    if segs.first.size <= _FEW_RUNS:
        # few runs (small samples, e.g. seeds): accumulate run by run, no (…, runs) temporaries
        w2 = np.zeros(np.broadcast_shapes(quantiles_a.shape, quantiles_b.shape)[:-1])
        v = np.zeros_like(w2)
        for run in range(segs.first.size):
            diff = quantiles_b[..., run] - quantiles_a[..., run]
            squared = diff * diff
            w2 += segs.weight_all[run] * squared
            v += segs.weight_violation[run] * np.where(diff > 0, squared, 0.0)
        w2 *= dt
        v *= dt
    else:
        diff = quantiles_b - quantiles_a
        squared = diff * diff
        w2 = (squared @ segs.weight_all) * dt
        violated = np.where(quantiles_a < quantiles_b, squared, 0.0)
        v = (violated @ segs.weight_violation) * dt
    out = np.full(np.shape(w2), 0.5)
    np.divide(v, w2, out=out, where=w2 != 0)
    return out


def resampled_positions(rng: np.random.Generator, n: int, rows: int, ranks: IntArray) -> IntArray:
    """Order statistics of ``rows`` bootstrap resamples of n sorted values, at ``ranks``.

    Each resample is a multinomial count vector over the n sorted values (n
    uniform draws with replacement, as deepsig's ``quantile_func(uniform(0, 1, n))``);
    the k-th smallest resampled value is the sorted value at the first index
    whose cumulative count reaches k. One ``searchsorted`` over all rows at once
    (rows are made disjoint by an offset of n + 1). ``ranks`` are 0-based.
    Returns (rows × len(ranks)) indices into the sorted values.
    """
    row = np.arange(rows, dtype=np.int64)
    draws = rng.integers(0, n, size=(rows, n), dtype=np.int64) + (row * n)[:, None]
    counts = np.bincount(draws.ravel(), minlength=rows * n).reshape(rows, n)
    offsets = (row * (n + 1))[:, None]
    cumulative = (np.cumsum(counts, axis=1) + offsets).ravel()
    targets = (ranks[None, :] + 1 + offsets).ravel()
    found = np.searchsorted(cumulative, targets, side="left").reshape(rows, ranks.size)
    return found - (row * n)[:, None]


def bootstrap_quantile_positions(
    n: int, ranks: IntArray, n_bootstrap: int, seed: int, stream: int
) -> IntArray:
    """(n_bootstrap × len(ranks)) resampled order-statistic indices of one sample.

    Replicates come in seeded blocks of :data:`~glotbench.resample.weights.BLOCK`
    (``block_rng(seed, block, 3, stream)``), so they do not depend on chunking.
    """
    out = np.empty((n_bootstrap, ranks.size), dtype=np.int64)
    for start in range(0, n_bootstrap, BLOCK):
        rows = min(BLOCK, n_bootstrap - start)
        rng = block_rng(seed, start // BLOCK, _ASO_STREAM, stream)
        out[start : start + rows] = resampled_positions(rng, n, rows, ranks)
    return out


def _as_scores(values: npt.ArrayLike, what: str) -> FloatArray:
    try:
        arr = np.asarray(values, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise InputError(f"{what}: scores must be numbers") from None
    if arr.size == 0:
        raise InputError(f"{what}: no scores; ASO needs at least one score per system")
    if not np.isfinite(arr).all():
        raise InputError(f"{what}: scores contain NaN or infinite values")
    return arr


def _check(confidence_level: float, num_bootstrap_iterations: int, num_comparisons: int) -> None:
    if not 0.0 < confidence_level < 1.0:
        raise InputError(f"confidence_level must lie in (0, 1), got {confidence_level}")
    if num_bootstrap_iterations < 1:
        raise InputError("num_bootstrap_iterations must be at least 1")
    if num_comparisons < 1:
        raise InputError("num_comparisons must be at least 1")


def corrected_level(confidence_level: float, num_comparisons: float) -> float:
    """Bonferroni-corrected level ``α + (1 − α)/c`` for c > 1 comparisons (deepsig's rule).

    With c = 1 the level is unchanged. (``deepsig.multi_aso`` applies the
    formula even for two systems, c = 1, which gives level 1 and ε_min = 1;
    glotbench does not reproduce that edge case.)
    """
    if num_comparisons <= 1:
        return confidence_level
    return confidence_level + (1.0 - confidence_level) / num_comparisons


def _fresh_seed(seed: int | None) -> int:
    return int(cast(int, np.random.SeedSequence().entropy)) if seed is None else int(seed)


def eps_min_from(
    ratio: FloatArray | np.float64,
    sigma_hat: FloatArray | np.float64,
    const: FloatArray | np.float64,
    level: float,
) -> FloatArray:
    """ε_min = clip(ε_W₂ − σ̂/const · Φ⁻¹(1 − level), 0, 1) (deepsig 1.2.8, ``aso``)."""
    from scipy.special import ndtri

    return np.clip(ratio - (sigma_hat / const) * ndtri(1.0 - level), 0.0, 1.0)


# --- results ---------------------------------------------------------------------


@dataclass(frozen=True)
class ASOResult:
    """Outcome of one ASO comparison of A against B.

    ``eps_min`` < ``threshold`` (0.5) means A is almost stochastically larger
    than B at the (corrected) confidence level.

    Attributes
    ----------
    eps_min : float
        The upper confidence bound of the violation ratio: 0 when A
        stochastically dominates B, 1 when B dominates A.
    violation_ratio : float
        The estimated violation ratio ε_W of A's quantile function below B's.
    sigma_hat : float
        The bootstrap estimate of its spread.
    confidence_level : float
        The requested level.
    corrected_confidence_level : float
        The level after the Bonferroni correction.
    num_comparisons : int
        Comparisons corrected for.
    num_bootstrap_iterations : int
        Bootstrap iterations of ``sigma_hat``.
    seed : int
        Seed of the bootstrap.
    n_a, n_b : int
        Sample sizes of A and B.
    dt : float
        Step of the quantile grid.
    threshold : float
        The ε_min below which A counts as better.
    """

    eps_min: float
    violation_ratio: float
    sigma_hat: float
    confidence_level: float
    corrected_confidence_level: float
    num_comparisons: int
    num_bootstrap_iterations: int
    seed: int
    n_a: int
    n_b: int
    dt: float
    threshold: float = 0.5

    @property
    def a_better(self) -> bool:
        """True when ε_min < threshold (A almost stochastically dominates B)."""
        return self.eps_min < self.threshold

    def to_frame(self) -> pd.DataFrame:
        """One tidy row."""
        return pd.DataFrame([self.to_dict()])

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "test": "aso",
            "eps_min": float(self.eps_min),
            "violation_ratio": float(self.violation_ratio),
            "sigma_hat": float(self.sigma_hat),
            "a_better": bool(self.a_better),
            "threshold": self.threshold,
            "confidence_level": self.confidence_level,
            "corrected_confidence_level": self.corrected_confidence_level,
            "num_comparisons": self.num_comparisons,
            "num_bootstrap_iterations": self.num_bootstrap_iterations,
            "seed": self.seed,
            "n_a": self.n_a,
            "n_b": self.n_b,
            "dt": self.dt,
        }


@dataclass(frozen=True)
class MultiASOResult:
    """ε_min of every ordered pair: ``eps_min[i, j]`` compares system i (A) with j (B).

    The diagonal is 1, as in ``deepsig.multi_aso``.

    Attributes
    ----------
    names : tuple of str
        The systems, in row and column order.
    eps_min : numpy.ndarray, shape (m, m)
        ε_min of row i against column j.
    violation_ratio : numpy.ndarray, shape (m, m)
        The estimated violation ratios.
    confidence_level : float
        The requested level.
    corrected_confidence_level : float
        The level after the Bonferroni correction (if ``use_bonferroni``).
    use_bonferroni : bool
        Whether the level was corrected for m(m − 1)/2 comparisons.
    num_bootstrap_iterations : int
        Bootstrap iterations of σ̂.
    seed : int
        Seed of the bootstrap.
    dt : float
        Step of the quantile grid.
    threshold : float
        The ε_min below which a system counts as better.
    """

    names: tuple[str, ...]
    eps_min: FloatArray = field(repr=False)
    violation_ratio: FloatArray = field(repr=False)
    confidence_level: float
    corrected_confidence_level: float
    use_bonferroni: bool
    num_bootstrap_iterations: int
    seed: int
    dt: float
    threshold: float = 0.5

    def to_frame(self) -> pd.DataFrame:
        """Square frame of ε_min, rows = A, columns = B (as deepsig's ``return_df``)."""
        return pd.DataFrame(self.eps_min, index=list(self.names), columns=list(self.names))

    def pairs(self) -> pd.DataFrame:
        """Tidy: one row per ordered pair (a, b) with ε_min and the decision."""
        rows = [
            {
                "a": a,
                "b": b,
                "eps_min": float(self.eps_min[i, j]),
                "violation_ratio": float(self.violation_ratio[i, j]),
                "a_better": bool(self.eps_min[i, j] < self.threshold),
            }
            for i, a in enumerate(self.names)
            for j, b in enumerate(self.names)
            if i != j
        ]
        return pd.DataFrame(rows, columns=["a", "b", "eps_min", "violation_ratio", "a_better"])

    def to_dict(self) -> dict[str, Any]:
        """JSON form: the names, the ε_min matrix and the pairs."""
        return {
            "test": "multi_aso",
            "names": list(self.names),
            "eps_min": self.eps_min.tolist(),
            "pairs": self.pairs().to_dict(orient="records"),
            "threshold": self.threshold,
            "confidence_level": self.confidence_level,
            "corrected_confidence_level": self.corrected_confidence_level,
            "use_bonferroni": self.use_bonferroni,
            "num_bootstrap_iterations": self.num_bootstrap_iterations,
            "seed": self.seed,
            "dt": self.dt,
        }


# --- the tests ------------------------------------------------------------------


def aso(
    scores_a: npt.ArrayLike,
    scores_b: npt.ArrayLike,
    confidence_level: float = 0.95,
    num_bootstrap_iterations: int = 1000,
    seed: int | None = 0,
    *,
    num_comparisons: int = 1,
    dt: float = 0.005,
    threshold: float = 0.5,
) -> ASOResult:
    """Almost Stochastic Order test of A (``scores_a``, higher is better) against B.

    Same formula and defaults as ``deepsig.aso`` 1.2.8 (del Barrio et al. 2018;
    Dror et al. 2019; see the module docstring): violation ratio of the
    quantile functions, bootstrap estimate of its spread with
    ``const = √(nm/(n+m))``, Bonferroni correction for ``num_comparisons``.
    Vectorised: each sample is sorted once and the quantiles of all bootstrap
    resamples are found with one ``searchsorted``.

    Parameters
    ----------
    scores_a, scores_b : array_like
        Scores of A and B (e.g. one per seed); the samples need not be paired.
    confidence_level : float, default 0.95
        Level of the upper bound ε_min.
    num_bootstrap_iterations : int, default 1000
        Bootstrap iterations of σ̂.
    seed : int or None, default 0
        Seed of the bootstrap (None: fresh entropy).
    num_comparisons : int, default 1
        Bonferroni correction of the level for this many comparisons.
    dt : float, default 0.005
        Step of the quantile grid.
    threshold : float, default 0.5
        ε_min below this counts as A almost stochastically dominating B.

    Returns
    -------
    ASOResult
        ``eps_min`` (0: A stochastically dominates B; 1: B dominates A),
        ``violation_ratio``, ``sigma_hat`` and the settings.

    Raises
    ------
    InputError
        An empty or non-finite sample, or a level outside (0, 1).

    See Also
    --------
    multi_aso : Every pair of several systems.
    aso_files : From score files.

    Examples
    --------
    >>> from glotbench import api
    >>> result = api.aso([0.9, 0.8, 0.85, 0.88], [0.5, 0.55, 0.6, 0.52], seed=0)
    >>> result.eps_min, result.eps_min < result.threshold
    (0.0, True)
    """
    _check(confidence_level, num_bootstrap_iterations, num_comparisons)
    a = np.sort(_as_scores(scores_a, "scores_a"))
    b = np.sort(_as_scores(scores_b, "scores_b"))
    seed = _fresh_seed(seed)
    grid = quantile_grid(dt)
    segs = segments(a.size, b.size, grid)
    ranks_a = quantile_positions(a.size, grid)[segs.first]
    ranks_b = quantile_positions(b.size, grid)[segs.first]
    ratio = float(violation_ratio(a[ranks_a], b[ranks_b], segs, dt))
    boot_a = bootstrap_quantile_positions(a.size, ranks_a, num_bootstrap_iterations, seed, 0)
    boot_b = bootstrap_quantile_positions(b.size, ranks_b, num_bootstrap_iterations, seed, 1)
    samples = violation_ratio(a[boot_a], b[boot_b], segs, dt)
    const = np.sqrt(a.size * b.size / (a.size + b.size))
    sigma_hat = float(np.std(const * (samples - ratio)))
    level = corrected_level(confidence_level, num_comparisons)
    eps = float(eps_min_from(np.float64(ratio), np.float64(sigma_hat), np.float64(const), level))
    return ASOResult(
        eps_min=eps,
        violation_ratio=ratio,
        sigma_hat=sigma_hat,
        confidence_level=confidence_level,
        corrected_confidence_level=level,
        num_comparisons=num_comparisons,
        num_bootstrap_iterations=num_bootstrap_iterations,
        seed=seed,
        n_a=int(a.size),
        n_b=int(b.size),
        dt=dt,
        threshold=threshold,
    )


def _collection(
    scores: Mapping[str, npt.ArrayLike] | Sequence[npt.ArrayLike] | npt.ArrayLike,
    names: Sequence[str] | None,
) -> tuple[tuple[str, ...], list[FloatArray]]:
    if isinstance(scores, Mapping):
        labels = tuple(str(k) for k in scores)
        samples = [_as_scores(v, f"scores[{k!r}]") for k, v in scores.items()]
    else:
        rows = list(scores)  # type: ignore[arg-type]
        samples = [_as_scores(v, f"scores[{i}]") for i, v in enumerate(rows)]
        labels = (
            tuple(names) if names is not None else tuple(f"system_{i}" for i in range(len(rows)))
        )
    if len(labels) != len(samples):
        raise InputError(f"{len(labels)} names for {len(samples)} systems")
    if len(samples) < 2:
        raise InputError("multi_aso needs at least two systems")
    return labels, samples


def multi_aso(
    scores: Mapping[str, npt.ArrayLike] | Sequence[npt.ArrayLike] | npt.ArrayLike,
    confidence_level: float = 0.95,
    use_bonferroni: bool = True,
    num_bootstrap_iterations: int = 1000,
    seed: int | None = 0,
    *,
    names: Sequence[str] | None = None,
    dt: float = 0.005,
    threshold: float = 0.5,
) -> MultiASOResult:
    """ASO for every pair of systems, as ``deepsig.multi_aso`` 1.2.8.

    For i < j the violation ratio ε_ij and σ̂_ij are estimated once;
    ``eps_min[i, j]`` uses ε_ij and ``eps_min[j, i]`` uses 1 − ε_ij with the
    same σ̂ (del Barrio et al. 2018's symmetry, as deepsig). Each system is
    resampled once per replicate and its resamples are shared by all its pairs
    (every pair's bootstrap distribution is unchanged), so pair (0, 1) gives
    exactly :func:`aso` of the two with the same seed.

    Parameters
    ----------
    scores : mapping of str to array_like, or sequence of array_like, or 2-D array
        Name -> scores, a list of score lists or one row per system.
    confidence_level : float, default 0.95
        Level of the upper bounds.
    use_bonferroni : bool, default True
        Correct the level for the m(m − 1)/2 comparisons.
    num_bootstrap_iterations : int, default 1000
        Bootstrap iterations of σ̂.
    seed : int or None, default 0
        Seed of the bootstrap.
    names : sequence of str, optional
        The systems' names when ``scores`` is not a mapping.
    dt : float, default 0.005
        Step of the quantile grid.
    threshold : float, default 0.5
        ε_min below this counts as almost stochastic dominance.

    Returns
    -------
    MultiASOResult
        ``eps_min`` (an m × m matrix: row i against column j), ``names`` and
        ``.to_frame()`` (one row per ordered pair).

    Raises
    ------
    InputError
        Fewer than two systems, or an empty sample.

    Examples
    --------
    >>> from glotbench import api
    >>> result = api.multi_aso({"a": [0.71, 0.73, 0.70, 0.72], "b": [0.66, 0.69, 0.65, 0.68],
    ...                         "c": [0.70, 0.72, 0.69, 0.74]})
    >>> result.names, result.eps_min.round(2).tolist()
    (('a', 'b', 'c'), [[1.0, 0.0, 1.0], [1.0, 1.0, 1.0], [1.0, 0.01, 1.0]])
    """
    _check(confidence_level, num_bootstrap_iterations, 1)
    labels, samples = _collection(scores, names)
    seed = _fresh_seed(seed)
    m = len(samples)
    grid = quantile_grid(dt)
    level = (
        corrected_level(confidence_level, m * (m - 1) / 2) if use_bonferroni else confidence_level
    )
    sorted_samples = [np.sort(s) for s in samples]
    boot_values = _resampled_quantiles(sorted_samples, grid, num_bootstrap_iterations, seed)
    eps = np.eye(m)
    ratios = np.full((m, m), np.nan)
    for i in range(m):
        for j in range(i + 1, m):
            ratio, eps[i, j], eps[j, i] = _pair_eps_min(
                sorted_samples[i],
                sorted_samples[j],
                boot_values[i],
                boot_values[j],
                grid,
                dt,
                level,
            )
            ratios[i, j], ratios[j, i] = ratio, 1.0 - ratio
    return MultiASOResult(
        names=labels,
        eps_min=eps,
        violation_ratio=ratios,
        confidence_level=confidence_level,
        corrected_confidence_level=level,
        use_bonferroni=use_bonferroni,
        num_bootstrap_iterations=num_bootstrap_iterations,
        seed=seed,
        dt=dt,
        threshold=threshold,
    )


def _resampled_quantiles(
    sorted_samples: Sequence[FloatArray], grid: FloatArray, n_iterations: int, seed: int
) -> list[FloatArray]:
    """Resampled order statistics of every system at every grid point, shared by its pairs."""
    return [
        s[
            bootstrap_quantile_positions(
                s.size, quantile_positions(s.size, grid), n_iterations, seed, i
            )
        ]
        for i, s in enumerate(sorted_samples)
    ]


def _pair_eps_min(
    a: FloatArray,
    b: FloatArray,
    boot_a: FloatArray,
    boot_b: FloatArray,
    grid: FloatArray,
    dt: float,
    level: float,
) -> tuple[float, FloatArray, FloatArray]:
    """Violation ratio ε of sorted samples ``a`` over ``b``, and ε_min both ways.

    σ̂ comes from their resampled order statistics at the grid points
    (``boot_a``, ``boot_b``).
    """
    segs = segments(a.size, b.size, grid)
    qa = a[quantile_positions(a.size, grid)[segs.first]]
    qb = b[quantile_positions(b.size, grid)[segs.first]]
    ratio = float(violation_ratio(qa, qb, segs, dt))
    samples_ij = violation_ratio(boot_a[:, segs.first], boot_b[:, segs.first], segs, dt)
    const = np.sqrt(a.size * b.size / (a.size + b.size))
    sigma_hat = np.std(const * (samples_ij - ratio))
    eps_ab = eps_min_from(np.float64(ratio), sigma_hat, np.float64(const), level)
    eps_ba = eps_min_from(np.float64(1.0 - ratio), sigma_hat, np.float64(const), level)
    return ratio, eps_ab, eps_ba


def batched_multi_aso(
    samples: npt.ArrayLike,
    confidence_level: float = 0.95,
    use_bonferroni: bool = True,
    num_bootstrap_iterations: int = 1000,
    seed: int = 0,
    *,
    dt: float = 0.005,
) -> FloatArray:
    """ε_min matrices of many score sets at once: ``samples`` (D × m × s) → (D × m × m).

    Every one of the D sets holds m systems with s scores each (e.g. seeds) —
    the evaluation-size analysis scores the same systems on D subsets. All
    sets share the bootstrap resampling indices (common random numbers), so
    differences between sets are not blurred by Monte Carlo noise. Same
    formula as :func:`multi_aso`, vectorised over sets, pairs and replicates.
    """
    values = np.sort(np.asarray(samples, dtype=np.float64), axis=-1)
    if values.ndim != 3:
        raise ValueError(f"samples must be (sets, systems, scores); got shape {values.shape}")
    n_sets, m, s = values.shape
    grid = quantile_grid(dt)
    segs = segments(s, s, grid)
    ranks = quantile_positions(s, grid)[segs.first]
    boot = np.stack(
        [
            bootstrap_quantile_positions(s, ranks, num_bootstrap_iterations, seed, i)
            for i in range(m)
        ],
        axis=1,
    )  # (B, m, runs)
    level = (
        corrected_level(confidence_level, m * (m - 1) / 2) if use_bonferroni else confidence_level
    )
    const = np.sqrt(s * s / (2.0 * s))
    rows, cols = np.triu_indices(m, k=1)
    out = np.broadcast_to(np.eye(m), (n_sets, m, m)).copy()
    point = values[:, :, ranks]  # (D, m, runs)
    ratio = violation_ratio(point[:, rows], point[:, cols], segs, dt)  # (D, pairs)
    per_set = num_bootstrap_iterations * rows.size * ranks.size
    chunk = max(1, _CHUNK_FLOATS // max(per_set, 1))
    system = np.arange(m)[None, :, None]
    for start in range(0, n_sets, chunk):
        block = values[start : start + chunk]  # (d, m, s)
        w2 = np.zeros((block.shape[0], num_bootstrap_iterations, rows.size))
        v = np.zeros_like(w2)
        for run in range(ranks.size):  # few runs (s scores per system): accumulate run by run
            resampled = block[:, system[..., 0], boot[:, :, run]]  # (d, B, m)
            diff = resampled[:, :, cols] - resampled[:, :, rows]
            squared = diff * diff
            w2 += segs.weight_all[run] * squared
            v += segs.weight_violation[run] * np.where(diff > 0, squared, 0.0)
        sampled = np.full(w2.shape, 0.5)
        np.divide(v, w2, out=sampled, where=w2 != 0)  # dt cancels in V / W₂²
        sigma = np.std(const * (sampled - ratio[start : start + chunk, None, :]), axis=1)
        r = ratio[start : start + chunk]
        out[start : start + chunk, rows, cols] = eps_min_from(r, sigma, np.float64(const), level)
        out[start : start + chunk, cols, rows] = eps_min_from(
            1.0 - r, sigma, np.float64(const), level
        )
    return out
