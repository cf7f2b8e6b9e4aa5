"""Planning from a store, a scores file or given components (what ``api.plan`` runs)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from glotbench.analysis.planning.estimate import PairEstimate, adjacent_pairs, estimate_pair, pooled
from glotbench.analysis.planning.plan import Plan, PlanSettings, override, pair_table, plan_design
from glotbench.analysis.planning.power import Components, Design
from glotbench.analysis.replicates import ReplicatedScores
from glotbench.analysis.sources.inputs import load_replicated
from glotbench.analysis.variance import ComponentTable, components
from glotbench.errors import InputError
from glotbench.store.store import Store


def store_sizes(store: str | Path, source: ReplicatedScores | ComponentTable) -> np.ndarray:
    """Test-set size of each unit of ``source``: the median over models of examples per run."""
    with Store.open(store, read_only=True) as handle:
        table = handle.summary().by_model_task_language
    table = table[table["runs"] > 0]
    per_run = table.assign(size=table["examples"] / table["runs"])
    median = per_run.groupby(["task", "language"])["size"].median()
    return np.array(
        [float(median.get((u.task, u.language), np.nan)) for u in source.units], dtype=np.float64
    )


def _given_components(
    sigma_seed: float | None,
    sigma_boot: float | None,
    sigma_example: float | None,
    reference_examples: int | None,
) -> Components:
    if sigma_seed is None and sigma_boot is None and sigma_example is None:
        raise InputError(
            "give a store or scores file to estimate the components from, or the components "
            "themselves (sigma_seed, and sigma_boot or sigma_example)",
            field="sigma_seed",
        )
    if sigma_boot is not None and sigma_example is not None:
        raise InputError("give sigma_boot or sigma_example, not both", field="sigma_example")
    boot = sigma_example if sigma_example is not None else (sigma_boot or 0.0)
    return Components(
        sigma_seed_a=sigma_seed or 0.0,
        sigma_seed_b=sigma_seed or 0.0,
        sigma_boot_a=boot,
        sigma_boot_b=boot,
        reference_examples=1 if sigma_example is not None else reference_examples,
    )


# Over 100 lines only through its 19 keyword parameters and the numpydoc docstring of
# ``api.plan``; the body (about 40 lines) delegates to the helpers below.
def plan_from_inputs(
    *,
    store: str | Path | None = None,
    input: str | Path | None = None,
    metric: str | Sequence[str] | None = None,
    models: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
    bootstrap_replicates: int = 200,
    sigma_seed: float | None = None,
    sigma_boot: float | None = None,
    sigma_example: float | None = None,
    reference_examples: int | None = None,
    sigma_b: float | None = None,
    correlation: float | None = None,
    examples: int | Sequence[int] | None = None,
    seeds: int | None = None,
    seeds_b: int | None = None,
    n_languages: int | None = None,
    resample_languages: bool = False,
    settings: PlanSettings | None = None,
) -> Plan:
    """Plan a paired comparison; components from ``store``/``input`` or given.

    With data, the components are estimated (:mod:`.estimate`) for the two
    ``models`` when exactly two are named, otherwise pooled over the pairs of
    neighbours in the ranking; given values (``sigma_*``, ``correlation``)
    replace estimates. ``sigma_boot`` is the test-set SD at
    ``reference_examples`` examples (default: the data's size, or
    ``examples``); ``sigma_example`` is a per-example SD (σ_boot = σ_ex/√n).
    The design defaults to the data's (sizes, seeds, shared languages);
    ``examples``, ``seeds``, ``seeds_b``, ``n_languages`` and
    ``resample_languages`` change it. ``docs/planning.md`` gives the formulas.

    Parameters
    ----------
    store, input : str or Path, optional
        Where the variance components are estimated from (as
        :func:`glotbench.analysis.sources.inputs.load_replicated`); neither: give them.
    metric, models, tasks, languages
        Select the data (as :func:`~glotbench.analysis.sources.inputs.load_replicated`).
    bootstrap_replicates : int, default 200
        Bootstrap replicates per seed when the store holds per-example statistics.
    sigma_seed, sigma_boot, sigma_example, sigma_b, correlation : float, optional
        Given components, replacing the estimates.
    reference_examples : int, optional
        The test-set size at which ``sigma_boot`` holds.
    examples : int or sequence of int, optional
        Test-set size(s) of the planned design (a sequence gives a curve).
    seeds, seeds_b, n_languages : int, optional
        Seeds of the two models and languages of the planned design.
    resample_languages : bool, default False
        Treat the languages as a sample (their variance enters the SE).
    settings : PlanSettings, optional
        Target power, level, difference to detect.

    Returns
    -------
    Plan
        ``standard_error`` and minimum detectable difference of the design
        (``to_frame()``, ``to_dict()``), the components used and ``notes``.

    Examples
    --------
    ``scores.csv`` holds 3 seeds of 3 models on 3 languages (no bootstrap
    replicates, so the correlation of the two models is taken as 0):

    >>> from glotbench import api
    >>> api.plan(input="scores.csv", models=["xlmr", "glot500"])
    Plan(method=closed, se=0.002375, mdd=0.006655, power=None)
    """
    settings = settings or PlanSettings()
    notes: list[str] = []
    given = _Given(sigma_seed, sigma_boot, sigma_example, reference_examples, sigma_b, correlation)
    pairs: pd.DataFrame | None = None
    chosen: tuple[str, str] | None = None
    if store is not None or input is not None:
        source = load_replicated(
            input=input,
            store=None if input is not None else store,
            metric=metric,
            models=models,
            tasks=tasks,
            languages=languages,
            n_replicates=bootstrap_replicates,
            seed=settings.seed,
        )
        component_values, design, pairs, chosen = _from_data(
            source, store, input, models, given, settings, notes
        )
    else:
        component_values = _from_given(given, examples, notes)
        design = Design(examples=None, seeds=1, languages=1)
    design = _planned_design(design, examples, seeds, seeds_b, n_languages, resample_languages)
    return plan_design(
        component_values, design, settings, pairs=pairs, models=chosen, notes=tuple(notes)
    )


@dataclass(frozen=True)
class _Given:
    """The components given as arguments (None: estimate or default)."""

    sigma_seed: float | None
    sigma_boot: float | None
    sigma_example: float | None
    reference_examples: int | None
    sigma_b: float | None
    correlation: float | None


def _from_data(
    source: ReplicatedScores | ComponentTable,
    store: str | Path | None,
    input: str | Path | None,
    models: Sequence[str] | None,
    given: _Given,
    settings: PlanSettings,
    notes: list[str],
) -> tuple[Components, Design, pd.DataFrame, tuple[str, str] | None]:
    """Components estimated from the data (the two ``models``, else pooled over neighbours),
    the given values replacing estimates; the data's design, the pairs' table and the pair."""
    sizes, reference_examples = _sizes(store, input, source, given.reference_examples)
    estimates, chosen = _estimates(source, sizes, models, notes)
    pairs = pair_table(estimates, settings)
    estimated = estimates[0].components if chosen else pooled(estimates)
    sigma_boot = given.sigma_boot
    if given.sigma_example is not None:
        sigma_boot, reference_examples = given.sigma_example, 1
    component_values, changed = override(
        estimated,
        sigma_seed_a=given.sigma_seed,
        sigma_seed_b=given.sigma_seed,
        sigma_boot_a=sigma_boot,
        sigma_boot_b=sigma_boot,
        correlation=given.correlation,
        sigma_between_difference=given.sigma_b,
        reference_examples=reference_examples,
    )
    notes.extend(changed)
    return component_values, estimates[0].design, pairs, chosen


def _from_given(
    given: _Given, examples: int | Sequence[int] | None, notes: list[str]
) -> Components:
    """Components from the given values alone (σ_boot at the design's size when no reference
    size is given); correlation 0 and σ_b unknown unless given."""
    reference = given.reference_examples
    if reference is None and isinstance(examples, int) and given.sigma_boot is not None:
        reference = examples
        notes.append(f"sigma_boot taken to hold at the design's {examples} examples")
    return replace(
        _given_components(given.sigma_seed, given.sigma_boot, given.sigma_example, reference),
        correlation=given.correlation if given.correlation is not None else 0.0,
        sigma_between_difference=given.sigma_b if given.sigma_b is not None else float("nan"),
    )


def _sizes(
    store: str | Path | None,
    input: str | Path | None,
    source: ReplicatedScores | ComponentTable,
    reference_examples: int | None,
) -> tuple[np.ndarray | None, int | None]:
    """Each unit's test-set size (the store's; a scores file's is the given reference), and
    the reference size left for ``sigma_boot``."""
    sizes = store_sizes(store, source) if input is None and store is not None else None
    if sizes is None and reference_examples is not None:
        # a scores file does not know its test-set size: the given one is the data's
        return np.full(len(source.units), float(reference_examples)), None
    return sizes, reference_examples


def _estimates(
    source: ReplicatedScores | ComponentTable,
    sizes: np.ndarray | None,
    models: Sequence[str] | None,
    notes: list[str],
) -> tuple[list[PairEstimate], tuple[str, str] | None]:
    """Components of the two ``models``, or of every pair of neighbours, and the pair chosen."""
    notes.extend(source.notes)
    if len({u.task for u in source.units}) > 1:
        notes.append(
            "several tasks: every task × language cell counts as one language of the aggregate "
            "(choose one task with task=TASK to plan per task)"
        )
    if models is not None and len(models) == 2:
        table = source if isinstance(source, ComponentTable) else components(source)
        missing = [m for m in models if m not in table.models]
        if missing:
            raise InputError(f"no scores for model {missing[0]!r}", field="model")
        estimate, pair_notes = estimate_pair(
            source, table.models.index(models[0]), table.models.index(models[1]), sizes, table
        )
        notes.extend(pair_notes)
        return [estimate], (estimate.model_a, estimate.model_b)
    estimates, pair_notes = adjacent_pairs(source, sizes)
    notes.append(
        f"components pooled over the {len(estimates)} pair(s) of neighbours in the "
        "ranking (name two models to plan for one pair)"
    )
    notes.extend(pair_notes)
    return estimates, None


def _planned_design(
    design: Design,
    examples: int | Sequence[int] | None,
    seeds: int | None,
    seeds_b: int | None,
    n_languages: int | None,
    resample_languages: bool,
) -> Design:
    """The data's design (or the given components' one) changed by the options given."""
    n_units = n_languages if n_languages is not None else design.languages
    sizes_of_design = (
        design.examples
        if examples is None
        else (examples if isinstance(examples, int) else tuple(int(v) for v in examples))
    )
    if examples is None and isinstance(sizes_of_design, tuple) and len(sizes_of_design) != n_units:
        # the data's per-language sizes no longer fit the number of languages: use their mean
        sizes_of_design = int(round(float(np.mean(sizes_of_design))))
    return Design(
        examples=sizes_of_design,
        seeds=seeds if seeds is not None else design.seeds,
        seeds_b=seeds_b if seeds_b is not None else (None if seeds is not None else design.seeds_b),
        languages=n_units,
        resample_languages=resample_languages,
    )
