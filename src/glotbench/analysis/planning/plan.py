"""The planning analysis: power, minimum detectable difference, design search, curve.

:func:`plan_design` answers for given components and a design;
:func:`plan_from_inputs` first estimates the components from a store or a
scores file (:mod:`.estimate`), lets given values override them, and plans
for a typical adjacent pair in the ranking (or the two models named), with
each adjacent pair's minimum detectable difference beside its observed
difference.

Which method answers: the closed form (:mod:`.power`) for a balanced design
(same seeds for both models, one test-set size), the simulation
(:mod:`.simulate`) otherwise; ``method="both"`` computes both. The design
search uses the closed form (the per-language sum of Var(D) covers unequal
sizes) and, when simulating, checks the design it finds by simulation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
import pandas as pd

from glotbench.analysis.planning.estimate import PairEstimate
from glotbench.analysis.planning.power import (
    VARY,
    Components,
    Design,
    Vary,
    closed_form_power,
    difference_variance,
    minimum_detectable,
    smallest_design,
    z_power,
)
from glotbench.analysis.planning.simulate import SimulatedPower, simulate_power
from glotbench.analysis.results import records
from glotbench.errors import InputError

Method = Literal["auto", "closed", "simulation", "both"]
METHODS: tuple[str, ...] = ("auto", "closed", "simulation", "both")
CURVE_POINTS = 41


@dataclass(frozen=True)
class PlanSettings:
    """What to compute.

    Attributes
    ----------
    delta : float or None
        True difference δ to detect (None: report the minimum detectable
        difference only; a design search needs δ).
    alpha : float, default=0.05
        Two-sided level of the test.
    power : float, default=0.8
        Target power of the minimum detectable difference and the search.
    vary : {"examples", "seeds", "languages"} or None
        Dimension the design search varies (others fixed); None: no search.
    method : {"auto", "closed", "simulation", "both"}, default="auto"
        auto: closed form for balanced designs, simulation otherwise.
    simulations, replicates, seed : int
        Simulated evaluations, bootstrap replicates per run, and seed.
    """

    delta: float | None = None
    alpha: float = 0.05
    power: float = 0.8
    vary: Vary | None = None
    method: Method = "auto"
    simulations: int = 1000
    replicates: int = 200
    seed: int = 0

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise InputError(
                f"unknown method {self.method!r}; use {', '.join(METHODS)}", field="method"
            )
        if self.vary is not None and self.vary not in VARY:
            raise InputError(
                f"unknown design dimension {self.vary!r}; use {', '.join(VARY)}", field="vary"
            )
        if self.vary is not None and self.delta is None:
            raise InputError(
                "a design search needs the difference to detect (delta)", field="delta"
            )
        if self.delta is not None and (not math.isfinite(self.delta) or self.delta < 0):
            raise InputError("delta must be a finite difference ≥ 0", field="delta")
        if not 0 < self.alpha < self.power < 1:
            raise InputError("need 0 < alpha < power < 1", field="power")


@dataclass(frozen=True)
class Plan:
    """Result of :func:`plan_design` / :func:`plan_from_inputs`.

    Attributes
    ----------
    components, design, settings
        What was planned for.
    standard_error : float
        Closed-form SE of the aggregate difference, √Var(D).
    answers : dict
        Per method ("closed", "simulation"): power at δ, minimum detectable
        difference, and for the simulation its Monte Carlo SE and the SD of d̂.
    method : str
        The method whose numbers are the answer.
    search : dict or None
        The smallest design reaching the target power at δ.
    curve : DataFrame
        Power against δ (closed form, and simulated when simulated).
    pairs : DataFrame
        Adjacent pairs in the ranking: observed difference, SE and minimum
        detectable difference under the data's design (empty for given components).
    notes : tuple of str
        What the reader should know.
    models : tuple of str or None
        The pair planned for, when read from data.
    """

    components: Components
    design: Design
    settings: PlanSettings
    standard_error: float
    answers: dict[str, dict[str, float | None]]
    method: str
    search: dict[str, Any] | None
    curve: pd.DataFrame = field(repr=False)
    pairs: pd.DataFrame = field(repr=False)
    models: tuple[str, str] | None = None
    notes: tuple[str, ...] = ()

    def __repr__(self) -> str:
        answer = self.answers[self.method]
        return (
            f"Plan(method={self.method}, se={self.standard_error:.4g}, "
            f"mdd={answer['minimum_detectable_difference']:.4g}, power={answer['power']})"
        )

    def to_frame(self) -> pd.DataFrame:
        """One row per method: power at δ and minimum detectable difference."""
        return pd.DataFrame([{"method": name} | values for name, values in self.answers.items()])

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: non-finite numbers (an unreachable difference) become None."""
        return _finite(
            {
                "models": list(self.models) if self.models else None,
                "components": self.components.to_dict(),
                "design": self.design.to_dict(),
                "settings": self.settings.__dict__,
                "standard_error": self.standard_error,
                "method": self.method,
                "answers": self.answers,
                "search": self.search,
                "curve": records(self.curve),
                "pairs": records(self.pairs),
                "notes": list(self.notes),
            }
        )


def _finite(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    if isinstance(value, float | np.floating) and not math.isfinite(float(value)):
        return None
    return value


#: example values an automatic simulation may draw (languages × n × evaluations)
SIMULATION_BUDGET = 50_000_000


def _affordable(design: Design, settings: PlanSettings, reference: int | None) -> bool:
    sizes = design.sizes(reference if reference is not None else 100)
    return float(np.nansum(sizes)) * settings.simulations <= SIMULATION_BUDGET


def _uses_simulation(settings: PlanSettings, design: Design, reference: int | None) -> bool:
    """Simulate when asked, and for unbalanced designs within :data:`SIMULATION_BUDGET`."""
    return settings.method in ("simulation", "both") or (
        settings.method == "auto"
        and not design.balanced
        and _affordable(design, settings, reference)
    )


def _simulate(c: Components, design: Design, settings: PlanSettings) -> SimulatedPower:
    return simulate_power(
        c,
        design,
        n_simulations=settings.simulations,
        n_replicates=settings.replicates,
        seed=settings.seed,
    )


def _search(
    c: Components, design: Design, settings: PlanSettings, simulate: bool
) -> dict[str, Any]:
    assert settings.vary is not None and settings.delta is not None
    delta, alpha, target = settings.delta, settings.alpha, settings.power
    found, value = smallest_design(
        lambda d: closed_form_power(c, d, delta, alpha) >= target, design, settings.vary
    )
    out: dict[str, Any] = {
        "vary": settings.vary,
        "target_power": target,
        "delta": delta,
        "reachable": found is not None,
        "value": value if found is not None else None,
        "design": found.to_dict() if found is not None else None,
    }
    if found is None:
        limit = design.with_value(settings.vary, value)
        out["limit_power"] = closed_form_power(c, limit, delta, alpha)
        return out
    out["power"] = closed_form_power(c, found, delta, alpha)
    if simulate and not _affordable(found, settings, c.reference_examples):
        out["simulation_skipped"] = "the design found is too large to simulate within the budget"
    elif simulate:
        simulated = _simulate(c, found, settings)
        power = float(simulated.power(delta, alpha)[0])
        out["simulated_power"] = power
        out["monte_carlo_error"] = float(simulated.monte_carlo_error(power))
    return out


def _curve(
    se: float, mdd: float, settings: PlanSettings, sim: SimulatedPower | None
) -> pd.DataFrame:
    top = 1.5 * max(mdd, settings.delta or 0.0)
    deltas = np.linspace(0.0, top if top > 0 else 1.0, CURVE_POINTS)
    frame = pd.DataFrame({"delta": deltas, "power": z_power(deltas, se, settings.alpha)})
    if sim is not None:
        simulated = sim.power(deltas, settings.alpha)
        frame["simulated_power"] = simulated
        frame["monte_carlo_error"] = sim.monte_carlo_error(simulated)
    return frame


def pair_table(estimates: list[PairEstimate], settings: PlanSettings) -> pd.DataFrame:
    """Each pair: observed difference, SE and minimum detectable difference (closed form)."""
    rows = []
    for e in estimates:
        se = math.sqrt(difference_variance(e.components, e.design))
        mdd = minimum_detectable(se, settings.alpha, settings.power)
        rows.append(
            {
                "model_a": e.model_a,
                "model_b": e.model_b,
                "observed_difference": e.observed_difference,
                "standard_error": se,
                "minimum_detectable_difference": mdd,
                "detectable": abs(e.observed_difference) >= mdd,
                "correlation": e.components.correlation,
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "model_a",
            "model_b",
            "observed_difference",
            "standard_error",
            "minimum_detectable_difference",
            "detectable",
            "correlation",
        ],
    )


def plan_design(
    components: Components,
    design: Design,
    settings: PlanSettings | None = None,
    *,
    pairs: pd.DataFrame | None = None,
    models: tuple[str, str] | None = None,
    notes: tuple[str, ...] = (),
) -> Plan:
    """Power at δ, minimum detectable difference, optional design search and power curve.

    Parameters
    ----------
    components : Components
        The variance components of the pair (σ_seed, σ_boot per model, their
        correlation, the between-language SD of the difference).
    design : Design
        Examples, seeds and languages of the evaluation.
    settings : PlanSettings, optional
        δ, α, the target power, what to vary and the method (closed form or
        simulation).
    pairs : pandas.DataFrame, optional
        Per-language differences of the pair, for the simulation.
    models : tuple of str, optional
        The pair's names, for the result.
    notes : tuple of str, default ()
        Notes carried into the result.

    Returns
    -------
    Plan
        ``se`` of the difference, ``mdd`` (minimum detectable difference),
        ``power`` at δ and, with ``settings.vary``, the design search.

    Raises
    ------
    InputError
        A design or components the method cannot plan with (the message says
        which value is missing).

    See Also
    --------
    glotbench.api.plan : Components read from a store or file.
    write_power_curve : The power curve as a PNG.

    Examples
    --------
    >>> from glotbench import api
    >>> components = api.Components(sigma_seed_a=0.01, sigma_seed_b=0.01,
    ...                             sigma_boot_a=0.02, sigma_boot_b=0.02)
    >>> plan = api.plan_design(components, api.Design(examples=None, seeds=3, languages=1),
    ...                        api.PlanSettings(delta=0.02))
    >>> plan
    Plan(method=closed, se=0.02944, mdd=0.08248, power=0.10432099411448151)
    """
    settings = settings or PlanSettings()
    se = math.sqrt(difference_variance(components, design))
    mdd = minimum_detectable(se, settings.alpha, settings.power)
    delta = settings.delta
    answers: dict[str, dict[str, float | None]] = {
        "closed": {
            "power": None if delta is None else float(z_power(delta, se, settings.alpha)),
            "minimum_detectable_difference": mdd,
        }
    }
    simulate = _uses_simulation(settings, design, components.reference_examples)
    simulated = _simulate(components, design, settings) if simulate else None
    if simulated is not None:
        answers["simulation"] = _simulation_answer(simulated, settings)
    method = (
        "simulation"
        if simulated is not None and (settings.method == "simulation" or not design.balanced)
        else "closed"
    )
    plan_notes = [*notes, _unbalanced_note(method)] if not design.balanced else list(notes)
    return Plan(
        components=components,
        design=design,
        settings=settings,
        standard_error=se,
        answers=answers,
        method=method,
        search=_search(components, design, settings, simulate) if settings.vary else None,
        curve=_curve(se, mdd, settings, simulated),
        pairs=pairs if pairs is not None else pair_table([], settings),
        models=models,
        notes=tuple(plan_notes),
    )


def _simulation_answer(
    simulated: SimulatedPower, settings: PlanSettings
) -> dict[str, float | None]:
    """The simulation's power at δ (with its Monte Carlo error), MDD and SD of the difference."""
    delta = settings.delta
    power = None if delta is None else float(simulated.power(delta, settings.alpha)[0])
    return {
        "power": power,
        "monte_carlo_error": None if power is None else float(simulated.monte_carlo_error(power)),
        "minimum_detectable_difference": simulated.minimum_detectable(
            settings.alpha, settings.power
        ),
        "sd_of_difference": simulated.empirical_sd,
        "simulations": simulated.n_simulations,
    }


def _unbalanced_note(method: str) -> str:
    """What answers for an unbalanced design, and why."""
    return "unbalanced design (unequal seeds or test-set sizes): " + (
        "the simulation answers; the closed form sums the per-language variances"
        if method == "simulation"
        else "the closed form sums the per-language variances (too large to simulate "
        "within the budget; method='simulation' forces it)"
    )


def override(components: Components, **given: float | int | None) -> tuple[Components, list[str]]:
    """Replace estimated components by the given ones (None: keep the estimate)."""
    changes = {name: value for name, value in given.items() if value is not None}
    notes = [f"{name} given ({value}) instead of the estimate" for name, value in changes.items()]
    return replace(components, **changes), notes  # type: ignore[arg-type]
