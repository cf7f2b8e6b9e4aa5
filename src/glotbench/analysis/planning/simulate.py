"""Power by simulation: synthetic evaluations analysed the way glotbench analyses data.

Each simulated evaluation draws, for every language l of the design,

* per-example values of A and B on n_l shared examples, bivariate normal with
  SDs σ_boot,X·√n₀ (so that a test-set score, the mean, has SD σ_boot,X at
  n₀ examples) and correlation ρ (both models see the same examples);
* one offset per model and seed, N(0, σ²_seed,X), added to every example of
  that run (a training run's shift);
* when languages are resampled, one language effect of the difference,
  N(0, σ²_b,diff), added to A;

as per-example statistics (value, 1) of a mean-type metric. The analysis is
then the real one: every run is bootstrapped by the resampling engine
(:func:`glotbench.resample.replicate_scores`, one weight matrix per test set
shared by all runs: paired), σ_seed per model and language comes from the
variance analysis' estimator (the SD of the seeds' full-test-set scores,
:func:`glotbench.analysis.variance.nan_sd`, as in
:func:`~glotbench.analysis.variance.components`; the planning value where a
model has one seed, which no analysis can estimate),
the paired bootstrap variance of the difference from the same estimator as
the store's (:func:`~glotbench.analysis.planning.estimate.paired_bootstrap_variances`),
and the test rejects when
|d̂| ≥ z_{1−α/2}·SÊ, with d̂ the mean over languages of the seed-averaged
full-test-set differences and

* languages fixed:     SÊ² = (1/L²) Σ_l (σ̂²_seed,A,l/s_A + σ̂²_seed,B,l/s_B + v̂_diff,l);
* languages resampled: SÊ² = Var_l(d̂_l) / L (languages as the sampling units).

The simulated evaluations are drawn once with true difference 0; since the
metric is a mean, a true difference δ shifts d̂ by δ and leaves SÊ unchanged,
so power(δ) = mean_r 1(|d̂_r + δ| ≥ z·SÊ_r) for every δ from the same draws
(common random numbers: the power curve is monotone and smooth).
Monte Carlo SE of a power p from R evaluations: √(p(1 − p)/R).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from glotbench.analysis.planning.estimate import paired_bootstrap_variances
from glotbench.analysis.planning.power import Components, Design, critical_value
from glotbench.analysis.variance import nan_sd
from glotbench.errors import InputError
from glotbench.resample.engine import replicate_scores

#: examples simulated per language when the bootstrap SD was given without a test-set size
UNSIZED_EXAMPLES = 100
#: most simulated evaluations per call of the engine
CHUNK = 1000
#: example values per model and call of the engine (bounds memory: rows × n ≤ this)
CHUNK_VALUES = 2_000_000


def _mean_score(summed: np.ndarray) -> np.ndarray:
    """Score of a mean-type metric from summed (value, count) statistics."""
    return summed[..., 0] / summed[..., 1]


@dataclass(frozen=True)
class SimulatedPower:
    """Null draws of (d̂, SÊ) from which power at any δ follows.

    Attributes
    ----------
    differences : ndarray
        d̂ of each simulated evaluation under a true difference of 0.
    standard_errors : ndarray
        SÊ of each simulated evaluation.
    n_replicates : int
        Bootstrap replicates per run.
    seed : int
        Seed of the simulation.
    """

    differences: np.ndarray = field(repr=False)
    standard_errors: np.ndarray = field(repr=False)
    n_replicates: int
    seed: int

    @property
    def n_simulations(self) -> int:
        return int(self.differences.shape[0])

    @property
    def empirical_sd(self) -> float:
        """SD of d̂ over the simulated evaluations (compare with the closed-form SE)."""
        return float(self.differences.std(ddof=1))

    def power(self, delta: float | np.ndarray, alpha: float) -> np.ndarray:
        """Share of simulated evaluations that reject at true difference ``delta``."""
        z = critical_value(alpha)
        delta = np.atleast_1d(np.abs(np.asarray(delta, dtype=np.float64)))
        shifted = np.abs(self.differences[None, :] + delta[:, None])
        return np.asarray((shifted >= z * self.standard_errors[None, :]).mean(axis=1))

    def monte_carlo_error(self, power: float | np.ndarray) -> np.ndarray:
        """Monte Carlo SE √(p(1 − p)/R) of a simulated power."""
        p = np.asarray(power, dtype=np.float64)
        return np.sqrt(p * (1.0 - p) / self.n_simulations)

    def minimum_detectable(self, alpha: float, power: float) -> float:
        """Smallest δ whose simulated power reaches ``power`` (bisection to 1e-6 relative)."""
        if not alpha < power < 1.0:
            raise InputError(f"the target power must lie in (alpha, 1), not {power}", field="power")
        scale = max(float(np.max(self.standard_errors)), self.empirical_sd, 1e-300)
        high = scale
        while float(self.power(high, alpha)[0]) < power:
            high *= 2.0
            if high > 1e6 * scale:
                return float("inf")
        low = 0.0
        while high - low > 1e-6 * scale:
            middle = 0.5 * (low + high)
            if float(self.power(middle, alpha)[0]) >= power:
                high = middle
            else:
                low = middle
        return high


def _language_block(
    c: Components,
    design: Design,
    n_examples: int,
    per_example: tuple[float, float],
    rows: int,
    rng: np.random.Generator,
    engine_seed: int,
    n_replicates: int,
) -> tuple[np.ndarray, np.ndarray]:
    """(d̂_l, within-language variance estimate of d̂_l) of ``rows`` evaluations, one language."""
    s_a, s_b = design.seeds, design.n_seeds_b
    first = rng.standard_normal((rows, n_examples))
    second = rng.standard_normal((rows, n_examples))
    rho = c.correlation
    values_a = per_example[0] * first
    values_b = per_example[1] * (rho * first + math.sqrt(max(1.0 - rho * rho, 0.0)) * second)
    if design.resample_languages:
        values_a = values_a + rng.normal(0.0, c.sigma_between_difference, size=(rows, 1))
    offsets_a = rng.normal(0.0, c.sigma_seed_a, size=(rows, s_a))
    offsets_b = rng.normal(0.0, c.sigma_seed_b, size=(rows, s_b))
    # each model's example values once per evaluation: a seed's offset adds the same constant
    # to the run's score and to each of its replicates (the weights of a replicate sum to n),
    # so the seeds' replicates are the model's replicates plus the offsets
    values = np.concatenate([values_a, values_b], axis=0)
    stats = np.stack([values, np.ones_like(values)], axis=-1)
    replicates = replicate_scores(stats, _mean_score, n_resamples=n_replicates, seed=engine_seed)
    point = values.mean(axis=1)
    difference = (point[:rows] + offsets_a.mean(axis=1)) - (point[rows:] + offsets_b.mean(axis=1))
    # the replicates of this language as the analyses hold them: (run, seed, replicate)
    n_seeds = max(s_a, s_b)
    laid = np.full((2 * rows, 1, n_seeds, n_replicates), np.nan)
    laid[0::2, 0, :s_a] = replicates.T[:rows, None, :] + offsets_a[:, :, None]
    laid[1::2, 0, :s_b] = replicates.T[rows:, None, :] + offsets_b[:, :, None]
    seed_points = np.full((2 * rows, n_seeds), np.nan)  # full-test-set score of each run
    seed_points[0::2, :s_a] = point[:rows, None] + offsets_a
    seed_points[1::2, :s_b] = point[rows:, None] + offsets_b
    # σ_seed as the variance analysis estimates it: the SD (ddof 1) of the seeds' points
    seed_sd = nan_sd(seed_points, axis=1)
    seed_a = np.where(np.isnan(seed_sd[0::2]), c.sigma_seed_a, seed_sd[0::2])
    seed_b = np.where(np.isnan(seed_sd[1::2]), c.sigma_seed_b, seed_sd[1::2])
    boot_diff = paired_bootstrap_variances(laid[0::2, 0], laid[1::2, 0])[2]
    within = seed_a**2 / s_a + seed_b**2 / s_b + boot_diff
    return difference, within


def simulate_power(
    components: Components,
    design: Design,
    *,
    n_simulations: int = 1000,
    n_replicates: int = 200,
    seed: int = 0,
) -> SimulatedPower:
    """Simulate ``n_simulations`` evaluations of ``design`` under ``components`` (δ = 0).

    Results depend only on the arguments (evaluations are drawn in chunks whose
    size depends on the test-set sizes, with seeds derived from (seed, chunk, language)).
    """
    if n_simulations < 10:
        raise InputError("simulate at least 10 evaluations", field="simulations")
    if n_replicates < 2:
        raise InputError("the bootstrap needs at least 2 replicates", field="replicates")
    if design.resample_languages:
        if design.languages < 2:
            raise InputError(
                "resampled languages need at least 2 languages to estimate their spread",
                field="languages",
            )
        if math.isnan(components.sigma_between_difference):
            raise InputError(
                "resampled languages need the between-language SD of the difference (sigma_b=SD)",
                field="sigma_b",
            )
    reference = components.reference_examples
    if reference is None:
        if design.examples is not None:
            raise InputError(
                "the bootstrap SD was given without its test-set size; give examples=N with "
                "sigma_boot=SD to change the number of examples",
                field="examples",
            )
        reference = UNSIZED_EXAMPLES
    sizes = design.sizes(reference).astype(np.int64)
    per_example = (
        components.sigma_boot_a * math.sqrt(reference),
        components.sigma_boot_b * math.sqrt(reference),
    )
    differences = np.empty(n_simulations)
    errors = np.empty(n_simulations)
    chunk_rows = int(np.clip(CHUNK_VALUES // max(int(sizes.max()), 1), 10, CHUNK))
    for chunk, start in enumerate(range(0, n_simulations, chunk_rows)):
        rows = min(chunk_rows, n_simulations - start)
        per_language = np.empty((design.languages, rows))
        within = np.empty((design.languages, rows))
        for language in range(design.languages):
            sequence = np.random.SeedSequence([seed, chunk, language, 0x504C414E])
            rng = np.random.default_rng(sequence)
            engine_seed = int(sequence.generate_state(1)[0] & 0x7FFFFFFF)
            per_language[language], within[language] = _language_block(
                components,
                design,
                int(sizes[language]),
                per_example,
                rows,
                rng,
                engine_seed,
                n_replicates,
            )
        differences[start : start + rows] = per_language.mean(axis=0)
        if design.resample_languages:
            variance = per_language.var(axis=0, ddof=1) / design.languages
        else:
            variance = within.sum(axis=0) / design.languages**2
        errors[start : start + rows] = np.sqrt(variance)
    return SimulatedPower(differences, errors, n_replicates, seed)
