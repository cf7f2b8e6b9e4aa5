"""Power of a paired comparison of two models' aggregate scores, in closed form.

The quantity compared is the one glotbench's analyses compare: the
difference D = A − B of two models' aggregate (mean over L languages) of
their seed-averaged full-test-set scores. Under the variance components of
Sälevä, Ataman & Lignos (2025) — a seed effect (σ_seed, independent between
the models, which are trained separately), a test-set sampling effect (the
bootstrap SD σ_boot at n₀ examples, correlated with ρ between the two models
because both are scored on the same examples: paired) and, when languages are
a sample from a population of languages, a language effect of the
*difference* (SD σ_b,diff) —

    Var(D) = (1/L) · [ σ²_seed,A/s_A + σ²_seed,B/s_B
                       + (n₀/n)·(σ²_boot,A + σ²_boot,B − 2ρ·σ_boot,A·σ_boot,B)
                       + σ²_b,diff · 1(languages resampled) ]

(the variance of a mean of L independent per-language differences; the
bootstrap variance of a mean-type score scales as 1/n, Efron & Tibshirani
1993, §5; pairing removes the covariance term, as in a paired t-test).

The test is the two-sided z-test of D = 0 at level α, whose power at a true
difference δ is (e.g. Chow, Shao & Wang 2008, *Sample Size Calculations in
Clinical Research*, §3.1; statsmodels' ``normal_power``)

    power(δ) = Φ(δ/SE − z_{1−α/2}) + Φ(−δ/SE − z_{1−α/2}),   SE = √Var(D);

the minimum detectable difference at power π solves power(δ) = π (≈ the
familiar (z_{1−α/2} + z_π)·SE, which ignores the far tail).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from glotbench.errors import InputError

Vary = Literal["examples", "seeds", "languages"]
VARY: tuple[Vary, ...] = ("examples", "seeds", "languages")
#: largest value the design search tries for each dimension
SEARCH_LIMIT: dict[str, int] = {"examples": 10**8, "seeds": 10_000, "languages": 100_000}


@dataclass(frozen=True)
class Components:
    """Variance components of one pair of models, A and B.

    Attributes
    ----------
    sigma_seed_a, sigma_seed_b : float
        Seed-to-seed SD of each model's score on one language.
    sigma_boot_a, sigma_boot_b : float
        Test-set (bootstrap) SD of each model's score at ``reference_examples``.
    correlation : float
        Correlation ρ of the two models' bootstrap replicates (paired examples).
    sigma_between_difference : float
        SD over languages of the per-language difference A − B (NaN: unknown;
        only needed when languages are resampled).
    reference_examples : int or None
        Test-set size n₀ at which ``sigma_boot_*`` hold (None: unknown, so the
        number of examples cannot be changed).
    """

    sigma_seed_a: float
    sigma_seed_b: float
    sigma_boot_a: float
    sigma_boot_b: float
    correlation: float = 0.0
    sigma_between_difference: float = float("nan")
    reference_examples: int | None = None

    def __post_init__(self) -> None:
        for name in ("sigma_seed_a", "sigma_seed_b", "sigma_boot_a", "sigma_boot_b"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise InputError(f"{name} must be a finite SD ≥ 0, not {value}", field=name)
        if not -1.0 <= self.correlation <= 1.0:
            raise InputError(
                f"the correlation must lie in [-1, 1], not {self.correlation}", field="correlation"
            )
        between = self.sigma_between_difference
        if not math.isnan(between) and (not math.isfinite(between) or between < 0):
            raise InputError("sigma_between_difference must be an SD ≥ 0", field="sigma_b")
        if self.reference_examples is not None and self.reference_examples < 1:
            raise InputError("the reference test-set size must be ≥ 1", field="examples")

    @property
    def boot_variance_difference(self) -> float:
        """Bootstrap variance of A − B at n₀: σ²_A + σ²_B − 2ρσ_Aσ_B (paired)."""
        a, b = self.sigma_boot_a, self.sigma_boot_b
        return max(a * a + b * b - 2.0 * self.correlation * a * b, 0.0)

    def to_dict(self) -> dict[str, float | int | None]:
        """The components as a JSON-safe dict."""
        between = self.sigma_between_difference
        return {
            "sigma_seed_a": self.sigma_seed_a,
            "sigma_seed_b": self.sigma_seed_b,
            "sigma_boot_a": self.sigma_boot_a,
            "sigma_boot_b": self.sigma_boot_b,
            "correlation": self.correlation,
            "sigma_between_difference": None if math.isnan(between) else between,
            "sigma_boot_difference": math.sqrt(self.boot_variance_difference),
            "reference_examples": self.reference_examples,
        }


@dataclass(frozen=True)
class Design:
    """An evaluation design: examples per test set, seeds per model, languages.

    Attributes
    ----------
    examples : int or tuple of int or None
        Test-set size n of every language, or one size per language (an
        unbalanced design); None: the reference size n₀.
    seeds : int
        Seeds (training runs) of model A.
    seeds_b : int or None
        Seeds of model B (None: as many as A).
    languages : int
        Number of languages L aggregated over.
    resample_languages : bool
        True when the languages are a sample from a population of languages
        (between-language variation of the difference counts), False when
        they are fixed.
    """

    examples: int | tuple[int, ...] | None
    seeds: int
    languages: int
    resample_languages: bool = False
    seeds_b: int | None = None

    def __post_init__(self) -> None:
        if self.seeds < 1 or (self.seeds_b is not None and self.seeds_b < 1):
            raise InputError("a design needs at least one seed per model", field="seeds")
        if self.languages < 1:
            raise InputError("a design needs at least one language", field="languages")
        if isinstance(self.examples, tuple):
            if len(self.examples) != self.languages:
                raise InputError(
                    f"{len(self.examples)} test-set sizes for {self.languages} languages; give "
                    "one size, or one per language",
                    field="examples",
                )
            if min(self.examples) < 1:
                raise InputError("test-set sizes must be ≥ 1", field="examples")
        elif self.examples is not None and self.examples < 1:
            raise InputError("the test-set size must be ≥ 1", field="examples")

    @property
    def n_seeds_b(self) -> int:
        """Seeds of model B (``seeds`` unless ``seeds_b`` is set)."""
        return self.seeds if self.seeds_b is None else self.seeds_b

    @property
    def balanced(self) -> bool:
        """Same seeds for both models and one test-set size for every language."""
        sizes = self.examples if isinstance(self.examples, tuple) else ()
        return self.n_seeds_b == self.seeds and len(set(sizes)) <= 1

    def sizes(self, reference: int | None) -> np.ndarray:
        """Test-set size of every language (n₀ where the design keeps the reference)."""
        if isinstance(self.examples, tuple):
            return np.asarray(self.examples, dtype=np.float64)
        size = self.examples if self.examples is not None else reference
        if size is None:
            return np.full(self.languages, np.nan)
        return np.full(self.languages, float(size))

    def with_value(self, vary: Vary, value: int) -> Design:
        """The design with one dimension set to ``value`` (seeds: both models)."""
        if vary == "examples":
            return replace(self, examples=value)
        if vary == "seeds":
            return replace(self, seeds=value, seeds_b=None)
        return replace(self, languages=value, examples=self.examples_scalar())

    def examples_scalar(self) -> int | None:
        """One test-set size (the mean of per-language sizes, rounded)."""
        if isinstance(self.examples, tuple):
            return int(round(float(np.mean(self.examples))))
        return self.examples

    def to_dict(self) -> dict[str, object]:
        """The design as a JSON-safe dict."""
        return {
            "examples": list(self.examples) if isinstance(self.examples, tuple) else self.examples,
            "seeds_a": self.seeds,
            "seeds_b": self.n_seeds_b,
            "languages": self.languages,
            "resample_languages": self.resample_languages,
            "balanced": self.balanced,
        }


def difference_variance(components: Components, design: Design) -> float:
    """Var(D) of the module docstring (per-language sizes enter as a mean of n₀/n_l)."""
    c = components
    sizes = design.sizes(c.reference_examples)
    if design.examples is not None and c.reference_examples is None:
        raise InputError(
            "the bootstrap SD was given without the test-set size it holds for; give the "
            "reference size (examples=N with sigma_boot=SD, or a store) to change the number "
            "of examples",
            field="examples",
        )
    scale = 1.0 if c.reference_examples is None else float(np.mean(c.reference_examples / sizes))
    within = (
        c.sigma_seed_a**2 / design.seeds
        + c.sigma_seed_b**2 / design.n_seeds_b
        + scale * c.boot_variance_difference
    )
    between = 0.0
    if design.resample_languages:
        if math.isnan(c.sigma_between_difference):
            raise InputError(
                "resampled languages need the between-language SD of the difference "
                "(sigma_b=SD, or a store / file with two or more languages)",
                field="sigma_b",
            )
        between = c.sigma_between_difference**2
    return (within + between) / design.languages


def critical_value(alpha: float) -> float:
    """z_{1−α/2} of the two-sided test."""
    from scipy.special import ndtri

    if not 0.0 < alpha < 1.0:
        raise InputError(f"alpha must lie in (0, 1), not {alpha}", field="alpha")
    return float(ndtri(1.0 - alpha / 2.0))


def z_power(delta: float | np.ndarray, se: float, alpha: float) -> np.ndarray:
    """Two-sided z-test power Φ(δ/SE − z_{1−α/2}) + Φ(−δ/SE − z_{1−α/2}).

    Source: the normal-approximation power of a two-sided test (Chow, Shao &
    Wang 2008, §3.1; as statsmodels' ``normal_power``). SE = 0 gives power 1
    for δ ≠ 0 and α for δ = 0.
    """
    from scipy.special import ndtr

    z = critical_value(alpha)
    delta = np.abs(np.asarray(delta, dtype=np.float64))
    if se <= 0:
        return np.where(delta > 0, 1.0, alpha)
    return np.asarray(ndtr(delta / se - z) + ndtr(-delta / se - z))


def minimum_detectable(se: float, alpha: float, power: float) -> float:
    """Smallest δ ≥ 0 with z_power(δ) = ``power`` (root of the exact two-tailed power)."""
    from scipy.optimize import brentq
    from scipy.special import ndtri

    if not alpha < power < 1.0:
        raise InputError(
            f"the target power must lie in (alpha, 1) = ({alpha}, 1), not {power}", field="power"
        )
    if se <= 0:
        return 0.0
    approx = (critical_value(alpha) + float(ndtri(power))) * se
    return float(
        brentq(
            lambda d: float(z_power(d, se, alpha)) - power, 0.0, 2.0 * approx + se, xtol=1e-12 * se
        )
    )


def closed_form_power(components: Components, design: Design, delta: float, alpha: float) -> float:
    """Power of the paired z-test of the aggregate difference under ``design``."""
    return float(z_power(delta, math.sqrt(difference_variance(components, design)), alpha))


def closed_form_mdd(components: Components, design: Design, alpha: float, power: float) -> float:
    """Minimum detectable difference of ``design`` at ``power`` and ``alpha``."""
    return minimum_detectable(math.sqrt(difference_variance(components, design)), alpha, power)


def smallest_design(
    reaches: Callable[[Design], bool], design: Design, vary: Vary
) -> tuple[Design | None, int]:
    """Smallest value of ``vary`` (others fixed) whose design ``reaches`` the target.

    Power grows monotonically with n, s and L (Var(D) shrinks in each), so a
    doubling search followed by bisection finds the smallest integer; returns
    (None, limit) when even :data:`SEARCH_LIMIT` does not reach it (the
    variance then has a floor the varied dimension cannot lower).
    """
    if vary not in VARY:
        raise InputError(f"unknown design dimension {vary!r}; use {', '.join(VARY)}", field="vary")
    limit = SEARCH_LIMIT[vary]
    low, high = 0, 1  # reaches(low) is False (0 is never a design), test high
    while not reaches(design.with_value(vary, high)):
        if high >= limit:
            return None, limit
        low, high = high, min(high * 2, limit)
    while high - low > 1:
        middle = (low + high) // 2
        if reaches(design.with_value(vary, middle)):
            high = middle
        else:
            low = middle
    return design.with_value(vary, high), high
