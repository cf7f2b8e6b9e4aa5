"""The ``glotbench`` command line: one Typer app, thin.

Each command parses its options, calls a function of :mod:`glotbench.api`
and renders the result with rich (or prints its JSON form with ``--json``).
User errors (:class:`~glotbench.errors.GlotbenchError`) are printed without a
traceback and end the process with a non-zero exit code.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from glotbench.errors import GlotbenchError

app = typer.Typer(
    name="glotbench",
    help="Uncertainty-aware multilingual, multitask NLP evaluation.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
import_app = typer.Typer(help="Import results into a store.", no_args_is_help=True)
app.add_typer(import_app, name="import")

console = Console()
err_console = Console(stderr=True)

StoreOption = Annotated[
    Path,
    typer.Option(
        "--store", help="DuckDB results store (created if missing).", envvar="GLOTBENCH_STORE"
    ),
]
DEFAULT_STORE = Path("glotbench.duckdb")
JsonOption = Annotated[bool, typer.Option("--json", help="Print the result as a JSON object.")]


def print_json(payload: Any) -> None:
    """Print a JSON document on stdout (no rich markup, no wrapping)."""
    sys.stdout.write(json.dumps(payload, indent=2, default=str, allow_nan=False) + "\n")


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    except GlotbenchError as exc:
        err_console.print(f"[bold red]error:[/] {exc}", markup=True, highlight=False)
        raise SystemExit(exc.exit_code) from None


# Commands are defined in the sections below; keep each thin.


# --- analysis commands ---------------------------------------------------------

from glotbench import api  # noqa: E402
from glotbench.report.tables import frame_table, leaderboard_tables  # noqa: E402


@app.command()
def demo(
    json_output: JsonOption = False,
    draws: Annotated[int, typer.Option("--draws", help="Language resampling draws.")] = 10_000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the draws.")] = 0,
) -> None:
    """XTREME-R baselines (embedded, offline): leaderboard with SEs, between-language SDs,
    pairwise effect sizes and rank distributions under language subsampling.

    Scores are the published per-language test results; each task score is the
    mean over languages with SE = between-language SD / √L, and the overall
    score is the unweighted mean of the tasks.
    """
    result = api.demo(n_draws=draws, seed=seed)
    if json_output:
        print_json(result.to_dict())
        return
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
    shared = _tasks(result)
    console.print(
        f"[yellow]note:[/] the published table has one score per language (no seeds or test-set "
        f"replicates), so these uncertainties come from the choice of languages only; the "
        f"comparisons and ranks use the {len(shared)} of {len(board.tasks)} tasks every model "
        "was evaluated on.",
        highlight=False,
    )


def _tasks(result: Any) -> list[str]:
    return sorted({label.split("/")[0] for label in result.comparison.languages})


@app.command("metrics")
def metrics_command(json_output: JsonOption = False) -> None:
    """List the metrics in the registry and their sufficient statistics."""
    rows = api.list_metrics()
    if json_output:
        print_json({"metrics": rows})
        return
    import pandas as pd

    frame = pd.DataFrame(rows)
    frame["stats"] = frame["stats"].map(lambda s: s if isinstance(s, str) else ", ".join(s))
    console.print(frame_table(frame, title="Metrics"))


@app.command("bootstrap")
def bootstrap_command(
    predictions: Annotated[
        Path,
        typer.Argument(help="Predictions, one example per line (.jsonl: one JSON value per line)."),
    ],
    references: Annotated[
        Path, typer.Argument(help="References, line-aligned with the predictions.")
    ],
    metric: Annotated[
        str, typer.Option("--metric", "-m", help="Metric name (see 'glotbench metrics').")
    ] = "accuracy",
    n_resamples: Annotated[
        int, typer.Option("--n-resamples", "-B", help="Number of bootstrap resamples.")
    ] = 10_000,
    confidence_level: Annotated[
        float, typer.Option("--confidence-level", help="Level of the interval.")
    ] = 0.95,
    method: Annotated[
        str, typer.Option("--method", help="Interval: percentile or bca.")
    ] = "percentile",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the resampling.")] = 0,
    json_output: JsonOption = False,
) -> None:
    """Score a predictions file with a bootstrap standard error and confidence interval."""
    result = api.bootstrap_files(
        metric,
        predictions,
        references,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        seed=seed,
        method=method,
    )
    if json_output:
        print_json(result.to_dict())
        return
    frame = result.to_frame()[
        ["metric", "score", "standard_error", "ci_low", "ci_high", "n_examples"]
    ]
    console.print(
        frame_table(frame, title=f"{metric}: bootstrap ({n_resamples} resamples, {method})")
    )


# --- store commands ------------------------------------------------------------

from enum import StrEnum  # noqa: E402


class ExportTable(StrEnum):
    """Tables ``glotbench export`` can write."""

    runs = "runs"
    examples = "examples"
    scores = "scores"
    imports = "imports"
    meta = "meta"
    all = "all"


def _print_import(result: api.ImportResult, json_output: bool) -> None:
    if json_output:
        print_json(result.to_dict())
        return
    style = {"imported": "green", "resumed": "green", "skipped": "yellow"}[result.status]
    console.print(
        f"[{style}]{result.status}[/] {result.source} -> {result.store}: {result.message} "
        f"[dim]({result.seconds:.2f} s)[/]",
        highlight=False,
    )
    if result.ignored_columns:
        console.print(
            f"[dim]note: ignored column(s) that are neither keys nor statistics: "
            f"{', '.join(result.ignored_columns)}[/]",
            highlight=False,
        )


@import_app.command("scores")
def import_scores_command(
    file: Annotated[
        Path,
        typer.Argument(
            help="Tidy scores file (.csv, .csv.gz, .jsonl, .jsonl.gz, .parquet): one score per "
            "row with model, task, language, metric, score (docs/formats.md)."
        ),
    ],
    store: StoreOption = DEFAULT_STORE,
    allow_unknown_metrics: Annotated[
        bool,
        typer.Option(
            "--allow-unknown-metrics",
            help="Accept metric names that are not in the registry (e.g. published scores of "
            "metrics glotbench cannot compute).",
        ),
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """Import aggregate scores in one transaction (re-importing the same file is a no-op)."""
    result = api.import_scores(file, store=store, allow_unknown_metrics=allow_unknown_metrics)
    _print_import(result, json_output)


@import_app.command("examples")
def import_examples_command(
    file: Annotated[
        Path,
        typer.Argument(
            help="Tidy per-example file (.csv, .csv.gz, .jsonl, .jsonl.gz, .parquet): one example "
            "of one run per row with model, task, language, seed, example_id, metric and the "
            "metric's statistic columns or a 'score' column (docs/formats.md)."
        ),
    ],
    store: StoreOption = DEFAULT_STORE,
    labels: Annotated[
        list[str] | None,
        typer.Option(
            "--labels",
            help="Label set of label-count metrics (f1_macro, mcc, ...): comma-separated and/or "
            "repeated. Default: read from the tp[LABEL] column names.",
        ),
    ] = None,
    json_output: JsonOption = False,
) -> None:
    """Import per-example statistics, one transaction per run; re-run to resume."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    try:
        if json_output or not err_console.is_terminal:
            result = api.import_examples(file, store=store, labels=labels)
        else:
            with Progress(
                "[progress.description]{task.description}",
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=err_console,
                transient=True,
            ) as bar:
                task = bar.add_task(f"reading and checking {file.name}", total=None)

                def progress(done: int, total: int) -> None:
                    bar.update(task, description="writing runs", completed=done, total=total)

                result = api.import_examples(file, store=store, labels=labels, progress=progress)
    except KeyboardInterrupt:
        err_console.print(
            "[yellow]interrupted:[/] the runs written so far are complete and kept; "
            "run the same command again to resume",
            highlight=False,
        )
        raise typer.Exit(130) from None
    _print_import(result, json_output)


@import_app.command("parquet")
def import_parquet_command(
    path: Annotated[
        Path,
        typer.Argument(
            help="Snapshot written by 'glotbench export': a directory of runs.parquet, "
            "examples.parquet, ... or NAME.parquet with siblings NAME_runs.parquet, ..."
        ),
    ],
    store: StoreOption = DEFAULT_STORE,
    json_output: JsonOption = False,
) -> None:
    """Merge a Parquet snapshot of a store into this store (skips what is already there)."""
    _print_import(api.import_parquet(path, store=store), json_output)


@app.command("show")
def show_command(store: StoreOption = DEFAULT_STORE, json_output: JsonOption = False) -> None:
    """Show what the store holds: counts, and runs / examples / scores per model, task, language."""
    summary = api.show_store(store)
    if json_output:
        print_json(summary.to_dict())
        return
    c = summary.counts
    console.print(
        f"[bold]{summary.path}[/] (schema version {summary.schema_version}): "
        f"{c['runs']} runs, {c['examples']} example rows, {c['scores']} scores, "
        f"{c['imports']} imports; {c['models']} models, {c['tasks']} tasks, "
        f"{c['languages']} languages, {c['metrics']} metrics",
        highlight=False,
    )
    if not summary.by_model_task_language.empty:
        console.print(frame_table(summary.to_frame(), title="By model, task and language"))
    for item in summary.incomplete_imports:
        console.print(
            f"[yellow]interrupted import[/] {item['import_id']} of {item['source']} "
            f"({item['kind']}, {item['runs_written']} runs written, started "
            f"{item['started_at']}): run the same import again to complete it",
            highlight=False,
        )


@app.command("export")
def export_command(
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            "-o",
            help="Where to write: FILE.csv, FILE.csv.gz or FILE.parquet (with --table all: "
            "FILE_runs.EXT, FILE_examples.EXT, ...), or a directory (a Parquet snapshot that "
            "'glotbench import parquet' reads back).",
        ),
    ],
    store: StoreOption = DEFAULT_STORE,
    table: Annotated[
        ExportTable,
        typer.Option("--table", help="Table to export, or all of them.", case_sensitive=False),
    ] = ExportTable.all,
    json_output: JsonOption = False,
) -> None:
    """Export the store's tables to CSV or Parquet."""
    result = api.export_store(out, store=store, table=table.value)
    if json_output:
        print_json(result.to_dict())
        return
    for file in result.files:
        console.print(f"wrote {file}", highlight=False)


# --- replication-aware analyses ---------------------------------------------------------

analyze_app = typer.Typer(
    help="Replication-aware analyses: variance components, aggregates, comparisons, ranks.",
    no_args_is_help=True,
)
app.add_typer(analyze_app, name="analyze")

InputOption = Annotated[
    Path | None,
    typer.Option(
        "--input",
        "-i",
        help="Tidy scores file (CSV/JSONL/Parquet): model, language, score and optional task, "
        "seed, replicate; or ready SDs (sigma_seed/sigma_boot or sigma_w). Default: the store.",
    ),
]
AnalysisStoreOption = Annotated[
    Path | None,
    typer.Option(
        "--store",
        help="Results store to read (used when --input is not given).",
        envvar="GLOTBENCH_STORE",
    ),
]
ModelFilter = Annotated[
    list[str] | None, typer.Option("--model", help="Only these models (repeatable).")
]
TaskFilter = Annotated[
    list[str] | None, typer.Option("--task", help="Only these tasks (repeatable).")
]
LanguageFilter = Annotated[
    list[str] | None, typer.Option("--language", help="Only these languages (repeatable).")
]
MetricFilter = Annotated[
    str | None, typer.Option("--metric", help="Metric to analyse (needed when several are stored).")
]
SchemeOption = Annotated[
    str,
    typer.Option(
        "--scheme",
        help="Replication draws: nonparametric (seed + bootstrap replicate), parametric "
        "(Gaussian noise with sd σ_w) or languages-only (no replication noise; needs "
        "--resample-languages).",
    ),
]
DrawsOption = Annotated[int, typer.Option("--draws", help="Number of replication draws.")]
SeedOption = Annotated[int, typer.Option("--seed", help="Seed of all random draws.")]
LanguagesOption = Annotated[
    str,
    typer.Option(
        "--resample-languages",
        help="Also resample languages: none, without (to size --k) or with replacement.",
    ),
]
KOption = Annotated[
    int | None, typer.Option("--k", help="Number of languages per draw when resampling languages.")
]
ReplicatesOption = Annotated[
    int,
    typer.Option(
        "--replicates", help="Bootstrap replicates per run when reading per-example statistics."
    ),
]
LevelOption = Annotated[float, typer.Option("--confidence-level", help="Level of intervals.")]


def _source(
    input: Path | None,
    store: Path | None,
    metric: str | None,
    models: list[str] | None,
    tasks: list[str] | None,
    languages: list[str] | None,
    replicates: int,
    seed: int,
) -> Any:
    return api.load_replicated(
        input=input,
        store=store if store is not None or input is not None else DEFAULT_STORE,
        metric=metric,
        models=models,
        tasks=tasks,
        languages=languages,
        n_replicates=replicates,
        seed=seed,
    )


def _settings(scheme: str, draws: int, seed: int, resample_languages: str, k: int | None) -> Any:
    from glotbench.analysis.draws import DrawSettings

    if scheme not in ("parametric", "nonparametric", "languages-only"):
        raise typer.BadParameter(
            "use nonparametric, parametric or languages-only", param_hint="--scheme"
        )
    if resample_languages not in ("none", "with", "without"):
        raise typer.BadParameter("use none, with or without", param_hint="--resample-languages")
    return DrawSettings(scheme=scheme, n_draws=draws, seed=seed, languages=resample_languages, k=k)  # type: ignore[arg-type]


def _print_notes(notes: tuple[str, ...]) -> None:
    for note in notes:
        console.print(f"[yellow]note:[/] {note}", highlight=False)


@analyze_app.command("variance")
def analyze_variance_command(
    input: InputOption = None,
    store: AnalysisStoreOption = None,
    model: ModelFilter = None,
    task: TaskFilter = None,
    language: LanguageFilter = None,
    metric: MetricFilter = None,
    replicates: ReplicatesOption = 1000,
    seed: SeedOption = 0,
    json_output: JsonOption = False,
) -> None:
    """Variance components per model: between-language SD σ_b; per language σ_seed, σ_boot, σ_w."""
    result = api.analyze_variance(
        _source(input, store, metric, model, task, language, replicates, seed)
    )
    if json_output:
        print_json(result.to_dict())
        return
    summary = result.per_model[
        [
            "model",
            "n_languages",
            "mean",
            "sigma_b",
            "se_sigma_b",
            "sigma_seed_mean",
            "sigma_boot_mean",
            "sigma_w_mean",
            "sigma_w_min",
            "sigma_w_max",
        ]
    ]
    console.print(
        frame_table(summary, title="Variance components per model (means over languages)")
    )
    columns = [
        "model",
        "unit",
        "mean",
        "sigma_seed",
        "sigma_boot",
        "sigma_w",
        "se_sigma_w",
        "n_seeds",
    ]
    console.print(frame_table(result.per_unit[columns], title="Per language"))
    _print_notes(result.notes)


@analyze_app.command("aggregate")
def analyze_aggregate_command(
    input: InputOption = None,
    store: AnalysisStoreOption = None,
    model: ModelFilter = None,
    task: TaskFilter = None,
    language: LanguageFilter = None,
    metric: MetricFilter = None,
    scheme: SchemeOption = "nonparametric",
    draws: DrawsOption = 10_000,
    resample_languages: LanguagesOption = "none",
    k: KOption = None,
    replicates: ReplicatesOption = 1000,
    seed: SeedOption = 0,
    json_output: JsonOption = False,
) -> None:
    """Mean, geometric mean and median over languages with standard errors; language → overall."""
    source = _source(input, store, metric, model, task, language, replicates, seed)
    result = api.analyze_aggregate(source, _settings(scheme, draws, seed, resample_languages, k))
    if json_output:
        print_json(result.to_dict())
        return
    console.print(frame_table(result.frame, title=f"Aggregates ({result.settings.describe()})"))
    console.print(
        frame_table(result.hierarchy, title="Hierarchy: language (mean over tasks) → overall")
    )
    _print_notes(result.notes)


@analyze_app.command("compare")
def analyze_compare_command(
    input: InputOption = None,
    store: AnalysisStoreOption = None,
    model: ModelFilter = None,
    task: TaskFilter = None,
    language: LanguageFilter = None,
    metric: MetricFilter = None,
    scheme: SchemeOption = "nonparametric",
    draws: DrawsOption = 10_000,
    resample_languages: LanguagesOption = "none",
    k: KOption = None,
    replicates: ReplicatesOption = 1000,
    seed: SeedOption = 0,
    confidence_level: LevelOption = 0.95,
    per_language: Annotated[
        bool, typer.Option("--per-language", help="Also print per-language differences.")
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """Pairwise differences, their SD over replications and effect sizes (flag: |effect| ≥ 2)."""
    source = _source(input, store, metric, model, task, language, replicates, seed)
    result = api.analyze_compare(
        source, _settings(scheme, draws, seed, resample_languages, k), confidence_level
    )
    if json_output:
        print_json(result.to_dict())
        return
    console.print(
        frame_table(
            result.aggregates, title=f"Pairwise differences A − B ({result.settings.describe()})"
        )
    )
    if per_language:
        console.print(frame_table(result.per_language, title="Per language"))
    _print_notes(result.notes)


@analyze_app.command("ranks")
def analyze_ranks_command(
    input: InputOption = None,
    store: AnalysisStoreOption = None,
    model: ModelFilter = None,
    task: TaskFilter = None,
    language: LanguageFilter = None,
    metric: MetricFilter = None,
    scheme: SchemeOption = "nonparametric",
    draws: DrawsOption = 10_000,
    resample_languages: LanguagesOption = "none",
    k: KOption = None,
    replicates: ReplicatesOption = 1000,
    seed: SeedOption = 0,
    confidence_level: LevelOption = 0.95,
    json_output: JsonOption = False,
) -> None:
    """Rank distributions (% of draws at each rank), rank intervals and EuroEval rank scores."""
    source = _source(input, store, metric, model, task, language, replicates, seed)
    result = api.analyze_ranks(
        source, _settings(scheme, draws, seed, resample_languages, k), confidence_level
    )
    if json_output:
        print_json(result.to_dict())
        return
    console.print(frame_table(result.summary, title=f"Ranks ({result.settings.describe()})"))
    console.print(frame_table(result.distribution, title="Rank distribution, % of draws"))
    _print_notes(result.notes)
