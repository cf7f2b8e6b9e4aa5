"""``glotbench demo``: the offline starter suite and the embedded XTREME-R baselines."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from glotbench.cli._lazy import api
from glotbench.cli._options import DEFAULTS, DrawsOption, JsonOption, SeedOption
from glotbench.cli._output import (
    console,
    frame_table,
    leaderboard_tables,
    print_json,
    stderr_console,
)
from glotbench.cli.run import _run_reporter

commands = typer.Typer()

OutOption = Annotated[
    Path,
    typer.Option(
        "--out",
        help="Folder for the starter store (OUT/starter.duckdb; a re-run resumes it), the "
        "interactive leaderboard (index.html in OUT/leaderboard) and the HTML report "
        "(OUT/report.html); the XTREME-R pages go to OUT/xtreme-r/.",
    ),
]

IterationsOption = Annotated[
    int | None,
    typer.Option("--iterations", min=1, help="Iterations of the starter suite (default 5)."),
]

StarterOption = Annotated[
    bool,
    typer.Option(
        "--starter/--no-starter",
        help="Run the offline starter suite (language identification, 39 languages).",
    ),
]

PagesOption = Annotated[
    bool, typer.Option("--pages/--no-pages", help="Write the leaderboards and reports.")
]

AllModelsOption = Annotated[
    bool,
    typer.Option(
        "--all-models",
        help="Also run langdetect (sampled trials, ~8 ms a text: it alone more than "
        "doubles the first run).",
    ),
]

DemoKOption = Annotated[
    int | None,
    typer.Option(
        "--k",
        min=1,
        help="Subsample K languages per task without replacement in every draw (default: "
        "resample all languages with replacement). One setting for every number shown.",
    ),
]


@commands.command()
def demo(
    json_output: JsonOption = False,
    draws: DrawsOption = DEFAULTS.n_draws,
    seed: SeedOption = DEFAULTS.seed,
    out: OutOption = Path("glotbench-demo"),
    iterations: IterationsOption = None,
    starter: StarterOption = True,
    pages: PagesOption = True,
    all_models: AllModelsOption = False,
    k: DemoKOption = None,
) -> None:
    """Run the embedded default: the offline `starter` suite, then the analyses.

    1. `starter`: language identification over 39 languages on CLDR text that
    babel ships, five pretrained identifiers (lingua, CLD2, py3langid,
    langid.py, langdetect) and trainable character n-gram baselines, 5
    iterations; per-example statistics go to OUT/starter.duckdb. Then variance
    components, the mean over languages with SEs, pairwise effect sizes of
    neighbours in the ranking and rank distributions, all from paired draws of
    the stored statistics.

    2. XTREME-R baselines (published per-language scores, embedded): leaderboard
    with SEs, between-language SDs, pairwise effect sizes and rank
    distributions, with the languages resampled.

    Every number comes from one analysis (--draws, --seed, --k), and the
    leaderboards and reports written to OUT render that same analysis.
    """
    from glotbench.demo_starter import missing_starter_packages

    missing = missing_starter_packages() if starter else []
    starter_result = None
    notes: list[str] = []
    fallback = api.AnalysisSettings(
        n_draws=draws, seed=seed, languages="with" if k is None else "without", k=k
    )
    ahead = None
    if starter and missing:
        notes.append(
            f"the starter suite needs {', '.join(missing)}; install them with "
            "pip install 'glotbench[starter]' (the README's first command does). "
            "Showing the XTREME-R part only."
        )
    elif starter:
        if not json_output:
            console.rule("[bold]starter: offline language identification, 39 languages")
        on_event, close = _run_reporter(json_output)
        on_event("step", None, {"description": "loading the runner and the starter suite"})
        # the XTREME-R part (analysis and pages) in a thread while the starter's jobs run
        # (it depends on the settings only: kept beside the starter store, in its cache)
        ahead = api.XtremeAhead(
            fallback, out / "xtreme-r" if pages else None, cache_store=out / "starter.duckdb"
        )
        try:
            starter_result = api.starter_demo(
                out / "starter.duckdb",
                iterations=iterations,
                n_draws=draws,
                seed=seed,
                k=k,
                on_event=_starting_ahead(on_event, ahead),
                all_models=all_models,
            )
        finally:
            close()
    settings = starter_result.settings if starter_result is not None else fallback
    # the XTREME-R part depends on the settings only: kept beside the starter store
    result, xtreme_pages = (
        ahead.result(settings)
        if ahead is not None
        else (api.demo(settings=settings, cache_store=out / "starter.duckdb"), None)
    )
    written = (
        _write_pages(out, seed, starter_result, settings, result, xtreme_pages, json_output)
        if pages
        else []
    )
    if json_output:
        print_json(
            {
                "starter": starter_result.to_dict() if starter_result else None,
                "xtreme_r": result.to_dict(),
                "written": [str(p) for p in written],
                "notes": notes,
            }
        )
        return
    for note in notes:
        console.print(f"[yellow]note:[/] {escape(note)}", highlight=False)
    if starter_result is not None:
        _print_starter_demo(starter_result)
        console.rule("[bold]XTREME-R baselines (published scores, embedded)")
    _print_xtreme_demo(result)
    for path in written:
        console.print(
            f"wrote {path.resolve()} (open it in a browser)", highlight=False, soft_wrap=True
        )


def _write_pages(
    out: Path,
    seed: int,
    starter_result: Any,
    settings: Any,
    result: Any,
    xtreme_pages: Any,
    json_output: bool,
) -> list[Path]:
    """The demo's leaderboards and reports, under a spinner on a terminal."""
    err = stderr_console()
    writing = (
        err.status("writing the leaderboards and reports")
        if err.is_terminal and not json_output
        else contextlib.nullcontext()
    )
    with writing:
        return api.write_demo_pages(
            out,
            seed=seed,
            starter=starter_result,
            settings=settings,
            xtreme=result,
            xtreme_pages=xtreme_pages,
        )


def _starting_ahead(on_event: Any, ahead: Any) -> Any:
    """``on_event``, which also starts ``ahead`` (:class:`glotbench.api.XtremeAhead`) when
    the run has jobs to execute: a second run, with every job stored, starts nothing."""

    def relay(kind: str, job: Any, info: dict[str, Any]) -> None:
        if kind == "planned" and info.get("pending"):
            ahead.start()
        on_event(kind, job, info)

    return relay


def _print_starter_demo(result: Any) -> None:
    run = result.run
    for note in result.notes:
        console.print(f"[yellow]note:[/] {escape(note)}", highlight=False)
    summary = result.summary()
    iterations = int(summary["iterations"].max()) if not summary.empty else 0
    shown = summary.assign(
        accuracy=[
            f"{m:.3f} ± {se:.3f}"
            for m, se in zip(summary["mean_accuracy"], summary["se"], strict=True)
        ]
    )[["model", "accuracy", "se_languages", "macro_f1", "languages"]]
    console.print(
        frame_table(
            shown.rename(
                columns={"accuracy": "mean accuracy ± SE", "se_languages": "SE (languages)"}
            ),
            title=f"Language identification: mean per-language accuracy over "
            f"{int(summary['languages'].max())} languages ({iterations} iterations; "
            f"{result.analysis.interval_text if result.analysis is not None else ''})",
            digits=3,
        )
    )
    per_model = result.variance.per_model
    console.print(
        frame_table(
            per_model[["model", "mean", "sigma_b", "sigma_seed_mean", "sigma_boot_mean"]].rename(
                columns={
                    "sigma_b": "σ_b languages",
                    "sigma_seed_mean": "σ_seed (mean)",
                    "sigma_boot_mean": "σ_boot (mean)",
                }
            ),
            title="Variance components: between languages (σ_b), between iterations "
            "(σ_seed: training bootstrap and langdetect's sampling) and of the test set (σ_boot)",
            digits=3,
        )
    )
    order = list(summary["model"])
    pairs = result.comparison.aggregates
    neighbours = [
        pairs[
            ((pairs["model_a"] == a) & (pairs["model_b"] == b))
            | ((pairs["model_a"] == b) & (pairs["model_b"] == a))
        ]
        for a, b in zip(order, order[1:], strict=False)
    ]
    if neighbours:
        import pandas as pd

        table = pd.concat(neighbours)[
            ["model_a", "model_b", "difference", "sd", "effect_size", "share_a_better", "flagged"]
        ]
        console.print(
            frame_table(
                table,
                title="Neighbours in the ranking: difference of the mean accuracy (paired draws, "
                "languages resampled; flagged: |effect| ≥ 2)",
                digits=3,
            )
        )
    distribution = result.ranks.distribution.drop(columns="aggregator")
    console.print(
        frame_table(
            distribution,
            title=f"Rank distribution, % of draws ({result.ranks.settings.describe()})",
            digits=3,
        )
    )
    hardest = result.hardest_languages(8)
    if not hardest.empty:
        console.print(
            frame_table(
                hardest,
                title="Hardest languages (mean accuracy over models; the models' best and worst)",
                digits=3,
            )
        )
    console.print(
        f"{run.completed} job(s) run, {run.skipped} already stored; statistics in "
        f"{result.store} (re-running the demo resumes it)",
        highlight=False,
    )


def _print_xtreme_demo(result: Any) -> None:
    board = result.leaderboard
    for table in leaderboard_tables(
        board, title="XTREME-R baselines (Ruder et al. 2021): overall test score"
    ):
        console.print(table)
    sd = board.per_task.pivot(index="task", columns="model", values="between_language_sd")
    console.print(
        frame_table(
            sd.reindex(columns=list(board.overall["model"])).reset_index(),
            title="Between-language SD σ_b (SD of the per-language scores)",
            digits=3,
        )
    )
    comparison = result.comparison.aggregates[
        ["model_a", "model_b", "difference", "sd", "effect_size", "flagged"]
    ]
    console.print(
        frame_table(
            comparison,
            title=f"Pairwise differences of the average over {', '.join(_tasks(result))} "
            "(languages resampled within tasks; flagged: |effect| ≥ 2)",
            digits=3,
        )
    )
    distribution = result.ranks.distribution.drop(columns="aggregator")
    console.print(
        frame_table(
            distribution,
            title=f"Rank distribution, % of draws ({result.ranks.settings.describe()})",
            digits=3,
        )
    )
    ranked = list(result.ranks.distribution["model"])
    what = (
        result.analysis.interval_text
        if result.analysis is not None
        else "the uncertainties come from the choice of languages only"
    )
    console.print(
        f"[yellow]note:[/] the published table has one score per language (no seeds or test-set "
        f"replicates): {what}. Overall scores, comparisons and ranks cover the models with all "
        f"{len(board.tasks)} tasks ({', '.join(ranked)}), as the leaderboard page and report.",
        highlight=False,
    )
    for note in result.notes:
        console.print(f"[yellow]note:[/] {escape(note)}", highlight=False)


def _tasks(result: Any) -> list[str]:
    return sorted({label.split("/")[0] for label in result.comparison.languages})
