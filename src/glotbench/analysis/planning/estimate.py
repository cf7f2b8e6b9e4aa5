"""Planning components estimated from replicated scores (a store or a scores file).

Per model and language, σ_seed and σ_boot come from the variance analysis
(:func:`glotbench.analysis.variance.components`). For a pair of models A, B
on the languages both have, pooled over languages u:

* σ²_seed,X = mean_u σ²_seed,X,u and, with test-set sizes n₀,u known, the
  per-example variance v_X = mean_u σ²_boot,X,u · n₀,u, so that
  σ_boot,X = √(v_X / n₀) at the reference size n₀ = mean_u n₀,u (the
  bootstrap variance of a mean-type score is v/n);
* ρ, the correlation of the paired bootstrap replicates: with r_X,u[b] the
  seed-averaged replicate b (the replicates of every model share their
  weights, so replicate b of A and of B resample the same examples),
  ρ = mean_u Cov_b(r_A, r_B) / mean_u √(Var_b r_A · Var_b r_B);
* σ²_b,diff, the between-language variance of the difference, by the method
  of moments of random-effects meta-analysis (DerSimonian & Laird 1986):
  the variance over languages of the observed differences d_u minus the mean
  within-language variance of d_u, floored at 0.

Where σ_seed and σ_boot are not separable — EuroEval's iterations, each a new
seed and a bootstrapped test set, whose SD the variance analysis reports as σ_w
with σ_seed and σ_boot missing — σ_w is the within-cell SD: it takes σ_boot's
place (test-set variance, not divided by the number of seeds: conservative),
σ_seed is 0 and the iterations of two models are not paired (ρ = 0), with a note.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from glotbench.analysis.planning.power import Components, Design
from glotbench.analysis.replicates import ReplicatedScores
from glotbench.analysis.variance import ComponentTable, components
from glotbench.errors import InputError


@dataclass(frozen=True)
class PairEstimate:
    """Components, observed difference and current design of one pair of models.

    Attributes
    ----------
    model_a, model_b : str
        The pair (A ranked above B by observed aggregate).
    observed_difference : float
        Mean over the shared languages of A's minus B's seed-averaged score.
    components : Components
        Pooled components of the pair (see the module docstring).
    design : Design
        The design the data have: sizes, seeds, shared languages.
    """

    model_a: str
    model_b: str
    observed_difference: float
    components: Components
    design: Design


def _nanmean(values: np.ndarray, axis: int | None = None) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(values, axis=axis)


def paired_bootstrap_variances(
    values_a: np.ndarray, values_b: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Var_b r_A, Var_b r_B and Var_b (r_A − r_B) of seed-averaged replicates.

    ``values_*``: replicate scores (..., seeds, replicates), NaN for absent
    seeds; replicate b of A and of B must share their resampling weights.
    """
    ra = _nanmean(values_a, axis=-2)
    rb = _nanmean(values_b, axis=-2)
    return ra.var(axis=-1, ddof=1), rb.var(axis=-1, ddof=1), (ra - rb).var(axis=-1, ddof=1)


def estimate_pair(
    source: ReplicatedScores | ComponentTable,
    a: int,
    b: int,
    sizes: np.ndarray | None = None,
    table: ComponentTable | None = None,
) -> tuple[PairEstimate, list[str]]:
    """Components of models ``a`` and ``b`` (indices) on the units both have.

    ``sizes``: test-set size of each unit (None: unknown, so the number of
    examples cannot be varied). Returns the estimate and notes.
    """
    table = table or (source if isinstance(source, ComponentTable) else components(source))
    notes: list[str] = []
    units = np.flatnonzero(table.present()[a] & table.present()[b])
    if not len(units):
        raise InputError(
            f"models {table.models[a]!r} and {table.models[b]!r} share no language", field="model"
        )
    seed_a, seed_b = table.sigma_seed[a, units], table.sigma_seed[b, units]
    boot_a, boot_b = table.sigma_boot[a, units], table.sigma_boot[b, units]
    separable = not (table.sigma_within is not None and np.isnan(boot_a).all())
    if not separable:
        # EuroEval's iterations (each a new seed and a bootstrapped test set): only their
        # SD σ_w is known, so it is the within-cell SD, counted as test-set variance
        boot_a, boot_b = table.sigma_w[a, units], table.sigma_w[b, units]
        seed_a = seed_b = np.zeros(len(units))
        notes.append(
            "sigma_seed and sigma_boot are not separable (each iteration is a new seed and a "
            "bootstrapped test set, as EuroEval's): planning uses their SD sigma_w as the "
            "within-cell SD, counted as test-set variance (more seeds do not reduce it, which "
            "is conservative), and the two models' iterations as unpaired (correlation 0; "
            "give sigma_seed=SD, sigma_boot=SD and correlation=R to plan otherwise)"
        )
    elif np.isnan(seed_a).all() or np.isnan(seed_b).all():
        notes.append(
            "one seed per model and language: sigma_seed is unknown and taken as 0 "
            "(give sigma_seed=SD to plan with seed variation)"
        )
    var_seed_a = float(np.nan_to_num(_nanmean(seed_a**2)))
    var_seed_b = float(np.nan_to_num(_nanmean(seed_b**2)))
    correlation, var_diff_units = 0.0, None
    if separable and isinstance(source, ReplicatedScores) and source.n_replicates >= 2:
        va, vb, vd = paired_bootstrap_variances(source.values[a, units], source.values[b, units])
        scale = float(_nanmean(np.sqrt(va * vb)))
        if scale > 0:
            correlation = float(np.clip(_nanmean((va + vb - vd) / 2.0) / scale, -1.0, 1.0))
        var_diff_units = vd
    elif separable:
        notes.append(
            "no paired bootstrap replicates: the correlation of the two models is unknown and "
            "taken as 0 (conservative when they err on the same examples; give correlation=R)"
        )
    reference: int | None = None
    if sizes is not None and np.isfinite(sizes[units]).all():
        n0 = sizes[units].astype(np.float64)
        reference = int(round(float(n0.mean())))
        var_boot_a = float(np.nan_to_num(_nanmean(boot_a**2 * n0))) / reference
        var_boot_b = float(np.nan_to_num(_nanmean(boot_b**2 * n0))) / reference
        examples: int | tuple[int, ...] | None = (
            int(n0[0]) if (n0 == n0[0]).all() else tuple(int(v) for v in n0)
        )
    else:
        var_boot_a = float(np.nan_to_num(_nanmean(boot_a**2)))
        var_boot_b = float(np.nan_to_num(_nanmean(boot_b**2)))
        examples = None
    n_seeds_a = max(int(np.median(table.n_seeds[a, units])), 1)
    n_seeds_b = max(int(np.median(table.n_seeds[b, units])), 1)
    difference = table.mean[a, units] - table.mean[b, units]
    between = float("nan")
    if len(units) >= 2:
        boot_diff = (
            var_diff_units
            if var_diff_units is not None
            else np.nan_to_num(boot_a**2) + np.nan_to_num(boot_b**2)
        )
        within = (
            np.nan_to_num(seed_a**2) / n_seeds_a + np.nan_to_num(seed_b**2) / n_seeds_b + boot_diff
        )
        spread = float(difference.var(ddof=1)) - float(_nanmean(within))
        between = float(np.sqrt(max(spread, 0.0)))
    estimate = PairEstimate(
        model_a=table.models[a],
        model_b=table.models[b],
        observed_difference=float(difference.mean()),
        components=Components(
            sigma_seed_a=float(np.sqrt(var_seed_a)),
            sigma_seed_b=float(np.sqrt(var_seed_b)),
            sigma_boot_a=float(np.sqrt(var_boot_a)),
            sigma_boot_b=float(np.sqrt(var_boot_b)),
            correlation=correlation,
            sigma_between_difference=between,
            reference_examples=reference,
        ),
        design=Design(examples=examples, seeds=n_seeds_a, seeds_b=n_seeds_b, languages=len(units)),
    )
    return estimate, notes


def ranking(table: ComponentTable) -> np.ndarray:
    """Model indices by observed mean over the languages all models share, best first."""
    shared = table.present().all(axis=0)
    if not shared.any():
        raise InputError(
            "the models share no language; choose two models that share one", field="model"
        )
    return np.argsort(-table.mean[:, shared].mean(axis=1), kind="stable")


def adjacent_pairs(
    source: ReplicatedScores | ComponentTable, sizes: np.ndarray | None = None
) -> tuple[list[PairEstimate], list[str]]:
    """Estimates for every pair of neighbours in the ranking (M − 1 pairs: linear in M)."""
    table = source if isinstance(source, ComponentTable) else components(source)
    if len(table.models) < 2:
        raise InputError("planning a comparison needs at least two models", field="model")
    order = ranking(table)
    estimates: list[PairEstimate] = []
    notes: list[str] = []
    for a, b in zip(order[:-1], order[1:], strict=True):
        estimate, pair_notes = estimate_pair(source, int(a), int(b), sizes, table)
        estimates.append(estimate)
        notes.extend(n for n in pair_notes if n not in notes)
    return estimates, notes


def pooled(estimates: list[PairEstimate]) -> Components:
    """One typical pair: the mean of the pairs' variances (and of their correlations)."""
    if not estimates:
        raise InputError("no pair of models to pool", field="model")

    def root_mean_square(name: str) -> float:
        values = np.array([getattr(e.components, name) for e in estimates], dtype=np.float64)
        return float(np.sqrt(np.nanmean(values**2))) if np.isfinite(values).any() else float("nan")

    references = [e.components.reference_examples for e in estimates]
    return Components(
        sigma_seed_a=root_mean_square("sigma_seed_a"),
        sigma_seed_b=root_mean_square("sigma_seed_b"),
        sigma_boot_a=root_mean_square("sigma_boot_a"),
        sigma_boot_b=root_mean_square("sigma_boot_b"),
        correlation=float(np.mean([e.components.correlation for e in estimates])),
        sigma_between_difference=root_mean_square("sigma_between_difference"),
        reference_examples=None if None in references else int(round(np.mean(references))),  # type: ignore[arg-type]
    )
