"""``glotbench plan``: power, minimum detectable difference and design search."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from glotbench.cli._lazy import api
from glotbench.cli._options import JsonOption, SeedOption, StoreOption
from glotbench.cli._output import console, frame_table, print_json, print_notes

commands = typer.Typer()

InputOption = Annotated[
    Path | None,
    typer.Option("--input", "-i", help="Estimate them from a scores file (as analyze takes)."),
]

ModelOption = Annotated[
    list[str] | None,
    typer.Option("--model", help="Two models: plan for this pair (default: neighbours pooled)."),
]

PlanTaskOption = Annotated[list[str] | None, typer.Option("--task", help="Only these tasks.")]

PlanLanguageOption = Annotated[
    list[str] | None, typer.Option("--language", help="Only these languages.")
]

MetricOption = Annotated[
    list[str] | None, typer.Option("--metric", help="Metric (or TASK=METRIC).")
]

SigmaSeedOption = Annotated[float | None, typer.Option("--sigma-seed", help="Seed SD.")]

SigmaBootOption = Annotated[
    float | None, typer.Option("--sigma-boot", help="Test-set SD at --boot-examples.")
]

SigmaExampleOption = Annotated[
    float | None, typer.Option("--sigma-example", help="Per-example SD (σ_boot = it/√n).")
]

ReferenceExamplesOption = Annotated[
    int | None,
    typer.Option("--boot-examples", help="Test-set size at which --sigma-boot holds."),
]

SigmaBOption = Annotated[
    float | None, typer.Option("--sigma-b", help="Between-language SD of the difference.")
]

CorrelationOption = Annotated[
    float | None, typer.Option("--correlation", help="Correlation of the paired models.")
]

ExamplesOption = Annotated[
    str | None, typer.Option("--examples", help="Test-set size n, or one per language.")
]

SeedsOption = Annotated[int | None, typer.Option("--seeds", help="Seeds per model.")]

SeedsBOption = Annotated[int | None, typer.Option("--seeds-b", help="Seeds of model B.")]

PlanLanguagesOption = Annotated[int | None, typer.Option("--languages", help="Languages L.")]

ResampleLanguagesOption = Annotated[
    bool,
    typer.Option("--resample-languages", help="Languages are sampled (default: fixed)."),
]

DeltaOption = Annotated[float | None, typer.Option("--delta", help="Difference to detect.")]

AlphaOption = Annotated[float, typer.Option("--alpha", help="Two-sided level.")]

PowerOption = Annotated[float, typer.Option("--power", help="Target power.")]

VaryOption = Annotated[
    str | None,
    typer.Option(
        "--vary",
        help="Smallest design reaching --power at --delta: examples, seeds or languages.",
    ),
]

MethodOption = Annotated[
    str,
    typer.Option("--method", help="auto (closed form if balanced), closed, simulation, both."),
]

SimulationsOption = Annotated[int, typer.Option("--simulations", help="Simulated evaluations.")]

PlanReplicatesOption = Annotated[
    int, typer.Option("--replicates", help="Bootstrap replicates per run.")
]

PlotOption = Annotated[Path | None, typer.Option("--plot", help="Write the power curve (PNG).")]

PAIR_COLUMNS = {
    "model_a": "A",
    "model_b": "B",
    "observed_difference": "A − B",
    "standard_error": "SE",
    "minimum_detectable_difference": "MDD",
    "detectable": "|A − B| ≥ MDD",
    "correlation": "ρ",
}


def _sizes(text: str | None) -> int | list[int] | None:
    """``--examples``: one size, or comma-separated sizes (one per language)."""
    if text is None:
        return None
    try:
        values = [int(part.strip().replace("_", "")) for part in text.split(",")]
    except ValueError:
        raise typer.BadParameter(
            f"{text!r} is not a size or list of sizes", param_hint="--examples"
        ) from None
    if min(values) < 1:
        raise typer.BadParameter("sizes must be positive", param_hint="--examples")
    return values[0] if len(values) == 1 else values


def _summary(plan: Any) -> Any:
    import pandas as pd

    rows = []
    for name, answer in plan.answers.items():
        rows.append(
            {
                "method": name + (" (answer)" if name == plan.method else ""),
                "power at δ": answer["power"],
                "± MC SE": answer.get("monte_carlo_error") or float("nan"),
                "MDD": answer["minimum_detectable_difference"],
                "SD of difference": answer.get("sd_of_difference", plan.standard_error),
            }
        )
    return pd.DataFrame(rows)


@commands.command("plan")
def plan_command(
    store: StoreOption = None,  # estimate the components from this store
    input: InputOption = None,
    model: ModelOption = None,
    task: PlanTaskOption = None,
    language: PlanLanguageOption = None,
    metric: MetricOption = None,
    sigma_seed: SigmaSeedOption = None,
    sigma_boot: SigmaBootOption = None,
    sigma_example: SigmaExampleOption = None,
    reference_examples: ReferenceExamplesOption = None,
    sigma_b: SigmaBOption = None,
    correlation: CorrelationOption = None,
    examples: ExamplesOption = None,
    seeds: SeedsOption = None,
    seeds_b: SeedsBOption = None,
    languages: PlanLanguagesOption = None,
    resample_languages: ResampleLanguagesOption = False,
    delta: DeltaOption = None,
    alpha: AlphaOption = 0.05,
    power: PowerOption = 0.8,
    vary: VaryOption = None,
    method: MethodOption = "auto",
    simulations: SimulationsOption = 1000,
    replicates: PlanReplicatesOption = 200,
    plot: PlotOption = None,
    seed: SeedOption = 0,
    json_output: JsonOption = False,
) -> None:
    """Power to detect a difference δ, the minimum detectable difference, the smallest design.

    For a paired comparison of two models' mean over languages, from a store,
    a scores file or given components (docs/planning.md).
    """
    from glotbench.analysis.planning.plan import PlanSettings

    settings = PlanSettings(
        delta=delta,
        alpha=alpha,
        power=power,
        vary=vary,  # type: ignore[arg-type]
        method=method,  # type: ignore[arg-type]
        simulations=simulations,
        replicates=replicates,
        seed=seed,
    )
    result = api.plan(
        store=store,
        input=input,
        metric=metric,
        models=model,
        tasks=task,
        languages=language,
        bootstrap_replicates=replicates,
        sigma_seed=sigma_seed,
        sigma_boot=sigma_boot,
        sigma_example=sigma_example,
        reference_examples=reference_examples,
        sigma_b=sigma_b,
        correlation=correlation,
        examples=_sizes(examples),
        seeds=seeds,
        seeds_b=seeds_b,
        n_languages=languages,
        resample_languages=resample_languages,
        settings=settings,
    )
    if plot is not None:
        api.write_power_curve(result, plot)
    if json_output:
        print_json(result.to_dict())
    else:
        _print_plan(result, plot)


def _print_plan(result: Any, plot: Path | None) -> None:
    """The plan's methods and answers, its design search, its neighbours and its notes."""
    console.print(frame_table(_summary(result), title=_title(result)))
    if result.search is not None:
        console.print(_search_line(result.search))
    if len(result.pairs):
        console.print(
            frame_table(
                result.pairs.rename(columns=PAIR_COLUMNS),
                title=f"Neighbours in the ranking: observed difference and MDD at power "
                f"{result.settings.power:g}",
            )
        )
    if plot is not None:
        console.print(f"wrote {plot}")
    print_notes(result.notes)


def _title(plan: Any) -> str:
    d = plan.design
    pair = f"{plan.models[0]} − {plan.models[1]}: " if plan.models else ""
    size = d.examples_scalar() or plan.components.reference_examples or "n₀"
    return (
        f"{pair}n = {size}{' (per language)' if not d.balanced else ''}, seeds = {d.seeds}"
        f"{'/' + str(d.n_seeds_b) if d.n_seeds_b != d.seeds else ''}, languages = {d.languages} "
        f"({'resampled' if d.resample_languages else 'fixed'}), α = {plan.settings.alpha:g}, "
        f"SE = {plan.standard_error:.4g}"
    )


def _search_line(search: dict[str, Any]) -> str:
    if not search["reachable"]:
        return (
            f"no number of {search['vary']} reaches power {search['target_power']:g} at "
            f"δ = {search['delta']:g} (power {search['limit_power']:.3f} at the search limit: "
            "the other components set a floor)"
        )
    line = (
        f"smallest {search['vary']}: {search['value']} (power {search['power']:.3f} at "
        f"δ = {search['delta']:g})"
    )
    if "simulated_power" in search:
        line += f"; simulated {search['simulated_power']:.3f} ± {search['monte_carlo_error']:.3f}"
    return line
