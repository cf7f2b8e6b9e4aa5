"""``glotbench leaderboard`` and ``glotbench report``: the static site and the HTML report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from glotbench.analysis.settings import AnalysisSettings
from glotbench.cli._lazy import api
from glotbench.cli._options import (
    DEFAULT_SIZES,
    DEFAULTS,
    JsonOption,
    ListOption,
    StoreOption,
    parse_sizes,
    store_from_environment,
    with_analysis_settings,
)
from glotbench.cli._output import console, print_json

commands = typer.Typer()

OutOption = Annotated[Path, typer.Option("--out", "-o", help="Folder to write (index.html).")]

MetadataOption = Annotated[
    Path | None,
    typer.Option("--metadata", help="Model metadata file (CSV/JSONL/Parquet, 'model' column)."),
]

GroupOption = Annotated[
    list[str] | None,
    typer.Option("--group", help="Extra language group NAME=lang,lang (repeatable)."),
]

TitleOption = Annotated[str | None, typer.Option("--title", help="Page title.")]

PairModelsOption = Annotated[
    int | None,
    typer.Option(
        "--pair-models",
        min=2,
        help="The pairwise view holds every pair of this many top models. Default: as many "
        "as keep pairs × task-language cells within 50,000 (about 2 MB).",
    ),
]

ReportOutOption = Annotated[Path, typer.Option("--out", "-o", help="HTML file to write.")]

ReportTitleOption = Annotated[str | None, typer.Option("--title", help="Report title.")]

DatasizeOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--datasize",
        help="Add an evaluation-size analysis: JSON of `glotbench analyze datasize --json` "
        "(repeatable).",
    ),
]

DatasizeDatasetOption = Annotated[
    str | None,
    typer.Option("--datasize-dataset", help="Run the datasize analysis on the store: dataset."),
]

DatasizeTaskOption = Annotated[
    str | None,
    typer.Option(
        "--datasize-task",
        help="Run the datasize analysis on the store's runs of this task (dataset defaults "
        "to the task).",
    ),
]

DatasizeLanguageOption = Annotated[
    str | None, typer.Option("--datasize-language", help="Language of --datasize-task.")
]

DatasizeMetricOption = Annotated[
    str | None,
    typer.Option("--datasize-metric", help="Metric of --datasize-task (default: --metric)."),
]

DatasizeSizesOption = Annotated[
    str,
    typer.Option(
        "--datasize-sizes", help="Sizes of --datasize-task, comma-separated; 'all' = full set."
    ),
]

DatasizeDrawsOption = Annotated[
    int, typer.Option("--datasize-draws", help="Draws per size and strategy.")
]

LmmOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--lmm",
        help="Add a mixed model: JSON of `glotbench analyze lmm --residuals --json` (repeatable).",
    ),
]

LmmFormulaOption = Annotated[
    list[str] | None,
    typer.Option(
        "--lmm-formula",
        help="Fit this mixed model (lme4 syntax) to the store's scores table, with simulated "
        "residuals, and add it (repeatable).",
    ),
]

DemoOption = Annotated[bool, typer.Option("--demo", help="Use the embedded XTREME-R baselines.")]


def _site_source(
    ctx: typer.Context,
    store: Path | None,
    demo: bool,
    settings: Any,
    model: list[str] | None,
    task: list[str] | None,
    language: list[str] | None,
    metadata: Path | None,
) -> tuple[Any, Path | None]:
    """The source the page shows (and the store it read: None with --demo)."""
    if demo and store is not None and store_from_environment(ctx):
        store = None  # --demo typed wins over $GLOTBENCH_STORE
    if demo == (store is not None):
        raise typer.BadParameter("give exactly one of --store PATH or --demo")
    source = api.leaderboard_source(
        store=store,
        demo=demo,
        models=model,
        tasks=task,
        languages=language,
        metadata_file=metadata,
        settings=settings,
    )
    return source, store


@commands.command("leaderboard")
@with_analysis_settings
def leaderboard_command(
    ctx: typer.Context,
    out: OutOption,
    store: StoreOption = None,
    demo_data: DemoOption = False,
    model: ListOption = None,
    task: ListOption = None,
    language: ListOption = None,
    metadata: MetadataOption = None,
    group: GroupOption = None,
    title: TitleOption = None,
    settings: AnalysisSettings = DEFAULTS,
    pair_models: PairModelsOption = None,
    json_output: JsonOption = False,
) -> None:
    """Write a static interactive leaderboard folder (index.html; works offline, from disk).

    Its numbers are those of `glotbench analyze aggregate|compare|ranks` with the same
    settings (the defaults are the same); the page's footer records them.
    """
    source, _ = _site_source(ctx, store, demo_data, settings, model, task, language, metadata)
    from glotbench.report.leaderboard import LANGUAGE_GROUPS  # after the API: first line first

    groups = {**LANGUAGE_GROUPS, **api.parse_language_groups(group or [])}
    result = api.write_leaderboard_site(
        out,
        source,
        title=title,
        language_groups=groups,
        settings=settings,
        pair_models=pair_models,
    )
    if json_output:
        print_json(result.to_dict())
        return
    console.print(
        f"leaderboard of {len(result.models)} models ({len(result.views)} views) written to "
        f"{result.path}",
        highlight=False,
    )


@commands.command("report")
@with_analysis_settings
def report_command(
    ctx: typer.Context,
    out: ReportOutOption,
    store: StoreOption = None,
    demo_data: DemoOption = False,
    model: ListOption = None,
    task: ListOption = None,
    language: ListOption = None,
    title: ReportTitleOption = None,
    settings: AnalysisSettings = DEFAULTS,
    datasize: DatasizeOption = None,
    datasize_dataset: DatasizeDatasetOption = None,
    datasize_task: DatasizeTaskOption = None,
    datasize_language: DatasizeLanguageOption = None,
    datasize_metric: DatasizeMetricOption = None,
    datasize_sizes: DatasizeSizesOption = DEFAULT_SIZES,
    datasize_draws: DatasizeDrawsOption = 100,
    lmm: LmmOption = None,
    lmm_formula: LmmFormulaOption = None,
    json_output: JsonOption = False,
) -> None:
    """Write a self-contained HTML report (variance, aggregates, comparisons, ranks, plots).

    Its numbers are those of `glotbench analyze aggregate|compare|ranks` and `glotbench
    leaderboard` with the same settings (the defaults are the same); its footer records them.
    """
    source, store = _site_source(ctx, store, demo_data, settings, model, task, language, None)
    # the datasize analysis and the mixed models take one metric
    single_metric = settings.metric[0] if len(settings.metric) == 1 else None
    datasize_inputs: list[Any] = list(datasize or [])
    lmm_inputs: list[Any] = list(lmm or [])
    if (datasize_task or datasize_language or datasize_dataset) or lmm_formula:
        if store is None:
            raise typer.BadParameter(
                "--datasize-task and --lmm-formula read the store; give --store PATH"
            )
    if datasize_task or datasize_language or datasize_dataset:
        datasize_inputs.append(
            api.analyze_datasize(
                store=store,
                dataset=datasize_dataset or datasize_task,
                task=datasize_task,
                language=datasize_language,
                metric=datasize_metric or single_metric,
                models=model,
                sizes=parse_sizes(datasize_sizes),
                n_draws=datasize_draws,
                seed=settings.seed,
            )
        )
    for formula in lmm_formula or []:
        frame, error = api.load_lmm_frame(
            None, store, metric=single_metric, models=model, tasks=task, languages=language
        )
        lmm_inputs.append(
            api.analyze_mixed_model(frame, formula, error=error, residuals=True, seed=settings.seed)
        )
    result = api.write_report(
        out,
        source,
        title=title,
        settings=settings,
        datasize=datasize_inputs,
        lmm=lmm_inputs,
    )
    if json_output:
        print_json(result.to_dict())
        return
    console.print(f"report written to {result.path}", highlight=False)
