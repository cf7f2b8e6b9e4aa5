"""The ``glotbench`` command line: one Typer app, thin.

Each command parses its options, calls a function of :mod:`glotbench.api`
and renders the result with rich (or prints its JSON form with ``--json``).
User errors (:class:`~glotbench.errors.GlotbenchError`) are printed without a
traceback and end the process with a non-zero exit code.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

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


_printed_json: list[bool] = []  # set once a command has printed its JSON document


def print_json(payload: Any) -> None:
    """Print a JSON document on stdout (no rich markup, no wrapping)."""
    sys.stdout.write(json.dumps(payload, indent=2, default=str, allow_nan=False) + "\n")
    _printed_json.append(True)


def _print_json_error(error: dict[str, Any]) -> None:
    """The error as JSON on stdout, unless the command already printed its document
    (a run that reports its failed jobs in its result, then exits non-zero)."""
    if not _printed_json:
        print_json({"error": error})


def _wants_json(argv: list[str]) -> bool:
    """True when the command line asks for JSON output (``--json`` before any ``--``)."""
    return "--json" in argv[: argv.index("--")] if "--" in argv else "--json" in argv


def main() -> None:
    """Console-script entry point.

    Errors go to stderr as text and end the process with the error's exit
    code. With ``--json`` they are also a JSON object on stdout, ``{"error":
    {"type", "message", "exit_code", "path", "line", "field"}}`` (where known).
    """
    json_mode = _wants_json(sys.argv[1:])
    _printed_json.clear()
    try:
        if not json_mode:
            app()
            return
        code = app(standalone_mode=False)
        if isinstance(code, int) and code:
            raise SystemExit(code)
    except GlotbenchError as exc:
        if json_mode:
            _print_json_error(exc.to_dict())
        err_console.print(f"[bold red]error:[/] {exc}", markup=True, highlight=False)
        raise SystemExit(exc.exit_code) from None
    except typer.Abort:
        _print_json_error({"type": "Abort", "message": "aborted", "exit_code": 1})
        raise SystemExit(1) from None
    except typer.TyperException as exc:  # usage errors; raised here with standalone_mode=False
        format_message = getattr(exc, "format_message", None)
        message = format_message() if callable(format_message) else str(exc)
        exit_code = int(getattr(exc, "exit_code", 2))
        _print_json_error({"type": type(exc).__name__, "message": message, "exit_code": exit_code})
        raise SystemExit(exit_code) from None


def _print_version(value: bool) -> None:
    if value:
        from glotbench import __version__

        print(f"glotbench {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Print glotbench's version and exit.",
            callback=_print_version,
            is_eager=True,
        ),
    ] = False,
    lock_timeout: Annotated[
        float | None,
        typer.Option(
            "--lock-timeout",
            min=0,
            help=(
                "Seconds to wait for a store another process holds (a run or import "
                "writing, or readers when writing) before failing; 0: do not wait. "
                "Default 60."
            ),
            envvar="GLOTBENCH_LOCK_TIMEOUT",
        ),
    ] = None,
) -> None:
    """Uncertainty-aware multilingual, multitask NLP evaluation."""
    if lock_timeout is not None:  # read by every Store.open (glotbench.core.lock)
        import os

        os.environ["GLOTBENCH_LOCK_TIMEOUT"] = repr(lock_timeout)


# Commands are defined in the sections below; keep each thin.


# --- analysis commands ---------------------------------------------------------


class _OnFirstUse:
    """A module imported when one of its names is first used.

    The analysis stack (pandas, scipy, the mixed models) takes a second or more
    to import, and ``glotbench --help`` or ``--version`` needs none of it, so
    the commands reach the API and the renderers through these proxies and the
    import happens inside the command that runs (see benchmarks/bench_cli_startup.py).
    """

    def __init__(self, module: str) -> None:
        self._module_name = module

    def __getattr__(self, name: str) -> Any:
        import importlib

        return getattr(importlib.import_module(self._module_name), name)


api: Any = _OnFirstUse("glotbench.api")
_tables: Any = _OnFirstUse("glotbench.report.tables")
_transfer: Any = _OnFirstUse("glotbench.report.transfer")


def frame_table(*args: Any, **kwargs: Any) -> Any:
    """:func:`glotbench.report.tables.frame_table`, imported on first use."""
    return _tables.frame_table(*args, **kwargs)


def leaderboard_tables(*args: Any, **kwargs: Any) -> Any:
    """:func:`glotbench.report.tables.leaderboard_tables`, imported on first use."""
    return _tables.leaderboard_tables(*args, **kwargs)


def transfer_table(*args: Any, **kwargs: Any) -> Any:
    """:func:`glotbench.report.transfer.transfer_table`, imported on first use."""
    return _transfer.transfer_table(*args, **kwargs)


@app.command()
def demo(
    json_output: JsonOption = False,
    draws: Annotated[int, typer.Option("--draws", help="Draws of the analyses.")] = 10_000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the draws.")] = 0,
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            help="Folder for the starter store (OUT/starter.duckdb; a re-run resumes it), the "
            "interactive leaderboard (OUT/leaderboard/index.html) and the HTML report "
            "(OUT/report.html); the XTREME-R pages go to OUT/xtreme-r/.",
        ),
    ] = Path("glotbench-demo"),
    iterations: Annotated[
        int | None,
        typer.Option("--iterations", min=1, help="Iterations of the starter suite (default 5)."),
    ] = None,
    starter: Annotated[
        bool,
        typer.Option(
            "--starter/--no-starter",
            help="Run the offline starter suite (language identification, 39 languages).",
        ),
    ] = True,
    pages: Annotated[
        bool, typer.Option("--pages/--no-pages", help="Write the leaderboards and reports.")
    ] = True,
    all_models: Annotated[
        bool,
        typer.Option(
            "--all-models",
            help="Also run langdetect (sampled trials, ~8 ms a text: it alone more than "
            "doubles the first run).",
        ),
    ] = False,
    k: Annotated[
        int | None,
        typer.Option(
            "--k",
            min=1,
            help="Subsample K languages per task without replacement in every draw (default: "
            "resample all languages with replacement). One setting for every number shown.",
        ),
    ] = None,
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
        try:
            starter_result = api.starter_demo(
                out / "starter.duckdb",
                iterations=iterations,
                n_draws=draws,
                seed=seed,
                k=k,
                on_event=on_event,
                all_models=all_models,
            )
        finally:
            close()
    settings = (
        starter_result.settings
        if starter_result is not None
        else api.AnalysisSettings(
            n_draws=draws, seed=seed, languages="with" if k is None else "without", k=k
        )
    )
    result = api.demo(settings=settings)
    written = (
        api.write_demo_pages(
            out, seed=seed, starter=starter_result, settings=settings, xtreme=result
        )
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
        console.print(f"[yellow]note:[/] {note}", highlight=False)


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
    frame["score_range"] = frame["score_range"].map(lambda r: f"{r[0]:g}–{r[1]:g}")
    frame = frame.drop(columns=["constraints"])  # in --json; too long for the table
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
    percent: Annotated[
        bool,
        typer.Option(
            "--percent",
            help="The file gives 0-1 metrics (accuracy, F1, MCC...) in percent: divide their "
            "scores and stderr by 100. BLEU/chrF are stored on 0-100 anyway.",
        ),
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """Import aggregate scores in one transaction (re-importing the same file is a no-op)."""
    result = api.import_scores(
        file, store=store, allow_unknown_metrics=allow_unknown_metrics, percent=percent
    )
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


@import_app.command("shards")
def import_shards_command(
    folder: Annotated[
        Path,
        typer.Argument(help="Folder of Parquet shards written by 'glotbench run --shards'."),
    ],
    store: StoreOption = DEFAULT_STORE,
    json_output: JsonOption = False,
) -> None:
    """Merge job shards into the store (idempotent: merged shards are skipped; resumable)."""
    result = api.import_shards(folder, store=store)
    if json_output:
        print_json(result.to_dict())
    else:
        console.print(
            f"{result.shards} shard(s): {result.merged} merged, {result.already_merged} "
            f"already merged; {result.runs_written} run(s) written, {result.runs_skipped} "
            f"already stored, in {result.seconds:.1f} s",
            highlight=False,
        )
        for name in result.temporary:
            console.print(
                f"[yellow]skipped[/] {name}: a shard still being written (or left by a killed "
                "worker)",
                highlight=False,
            )
        for item in result.unreadable:
            console.print(f"[yellow]skipped[/] {item['file']}: {item['error']}", highlight=False)
    if result.unreadable:
        raise typer.Exit(1)


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
    if c.get("failures"):
        console.print(
            f"[yellow]{c['failures']} open job failure(s)[/] of 'glotbench run': "
            f"glotbench failures --store {shlex.quote(summary.path)}",
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
    keep_formulas: Annotated[
        bool,
        typer.Option(
            "--keep-formulas",
            help="Write CSV text cells as stored, even those a spreadsheet would run as a "
            "formula (=, +, -, @, tab, CR at the start). By default they get a leading "
            "apostrophe.",
        ),
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """Export the store's tables to CSV or Parquet."""
    result = api.export_store(out, store=store, table=table.value, keep_formulas=keep_formulas)
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
MetricChoiceOption = Annotated[
    list[str] | None,
    typer.Option(
        "--metric",
        help="METRIC for every task, or TASK=METRIC for one task (repeatable). Default: each "
        "task on its primary metric (EuroEval's, lm-eval's first, or the only one stored); "
        "harness names such as acc, acc_norm, exact_match reach the per-example runs.",
    ),
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
RankMethodOption = Annotated[
    str,
    typer.Option(
        "--rank-method",
        help="EuroEval rank-score method: 2026-05-28 (EuroEval's current method: bootstrap "
        "median of 1 + (best − mean)/pooled SD, with interval) or legacy-2025 (Welch-t-test "
        "gating, SD of the models' means; superseded on 2026-05-28).",
    ),
]
RankBootstrapsOption = Annotated[
    int,
    typer.Option(
        "--rank-bootstraps",
        help="Bootstrap resamples of each model's iteration scores for the EuroEval rank score.",
    ),
]


def _source(
    input: Path | None,
    store: Path | None,
    metric: list[str] | None,
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
    metric: MetricChoiceOption = None,
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
            "task",
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
        frame_table(summary, title="Variance components per model and task (means over languages)")
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
    metric: MetricChoiceOption = None,
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
        frame_table(
            result.hierarchy,
            title="Hierarchy: task × language → language (mean over tasks) → overall",
        )
    )
    _print_notes(result.notes)


@analyze_app.command("compare")
def analyze_compare_command(
    input: InputOption = None,
    store: AnalysisStoreOption = None,
    model: ModelFilter = None,
    task: TaskFilter = None,
    language: LanguageFilter = None,
    metric: MetricChoiceOption = None,
    scheme: SchemeOption = "nonparametric",
    draws: DrawsOption = 10_000,
    resample_languages: LanguagesOption = "none",
    k: KOption = None,
    replicates: ReplicatesOption = 1000,
    seed: SeedOption = 0,
    confidence_level: LevelOption = 0.95,
    per_language: Annotated[
        bool,
        typer.Option(
            "--per-language",
            help="Also give the full per-language table (every pair × language; in --json as "
            "per_language). Without it, per-language results are summarised per language and "
            "per pair.",
        ),
    ] = False,
    pairs_out: Annotated[
        Path | None,
        typer.Option(
            "--pairs-out",
            help="Write the full per-language table (every pair × language) to this file: "
            "Parquet, or CSV if the name ends in .csv.",
        ),
    ] = None,
    json_output: JsonOption = False,
) -> None:
    """Pairwise differences, their SD over replications and effect sizes (flag: |effect| ≥ 2).

    Aggregates over languages: mean, geometric mean (a zero gives 0) and median.
    """
    source = _source(input, store, metric, model, task, language, replicates, seed)
    result = api.analyze_compare(
        source,
        _settings(scheme, draws, seed, resample_languages, k),
        confidence_level,
        per_language=per_language,
        pairs_out=pairs_out,
    )
    if json_output:
        print_json(result.to_dict())
        return
    console.print(
        frame_table(
            result.aggregates, title=f"Pairwise differences A − B ({result.settings.describe()})"
        )
    )
    if result.per_language is not None:
        console.print(frame_table(result.per_language, title="Per language"))
    else:
        console.print(
            frame_table(result.language_summary, title="Per language: flagged pair differences")
        )
    if pairs_out is not None:
        console.print(f"per-language table of every pair written to {pairs_out}")
    _print_notes(result.notes)


@analyze_app.command("ranks")
def analyze_ranks_command(
    input: InputOption = None,
    store: AnalysisStoreOption = None,
    model: ModelFilter = None,
    task: TaskFilter = None,
    language: LanguageFilter = None,
    metric: MetricChoiceOption = None,
    scheme: SchemeOption = "nonparametric",
    draws: DrawsOption = 10_000,
    resample_languages: LanguagesOption = "none",
    k: KOption = None,
    replicates: ReplicatesOption = 1000,
    seed: SeedOption = 0,
    confidence_level: LevelOption = 0.95,
    rank_method: RankMethodOption = "2026-05-28",
    rank_bootstraps: RankBootstrapsOption = 1000,
    json_output: JsonOption = False,
) -> None:
    """Rank distributions (% of draws at each rank), rank intervals and EuroEval rank scores."""
    source = _source(input, store, metric, model, task, language, replicates, seed)
    result = api.analyze_ranks(
        source,
        _settings(scheme, draws, seed, resample_languages, k),
        confidence_level,
        rank_method=rank_method,
        rank_bootstraps=rank_bootstraps,
    )
    if json_output:
        print_json(result.to_dict())
        return
    console.print(frame_table(result.summary, title=f"Ranks ({result.settings.describe()})"))
    console.print(frame_table(result.distribution, title="Rank distribution, % of draws"))
    _print_notes(result.notes)


@analyze_app.command("euroeval-rank")
def analyze_euroeval_rank_command(
    input: Annotated[
        Path | None,
        typer.Option(
            "--input",
            "-i",
            help="Tidy scores file: model, language, score and optional dataset, task, metric, "
            "seed, replicate (an iteration index). Default: the store.",
        ),
    ] = None,
    store: AnalysisStoreOption = None,
    metric: Annotated[
        list[str] | None,
        typer.Option(
            "--metric",
            help="Each dataset's primary metric: the first listed one it has (repeatable, "
            "e.g. --metric mcc --metric micro_f1).",
        ),
    ] = None,
    model: ModelFilter = None,
    task: TaskFilter = None,
    language: LanguageFilter = None,
    rank_method: RankMethodOption = "2026-05-28",
    bootstraps: Annotated[
        int, typer.Option("--bootstraps", help="Bootstrap resamples of each model's iterations.")
    ] = 1000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the bootstrap.")] = 0,
    confidence_level: LevelOption = 0.95,
    json_output: JsonOption = False,
) -> None:
    """EuroEval's leaderboard rank score (1 = best) per dataset, task, language and overall."""
    result = api.euroeval_rank(
        input=input,
        store=store,
        metrics=metric,
        models=model,
        tasks=task,
        languages=language,
        method=rank_method,
        n_bootstraps=bootstraps,
        seed=seed,
        confidence_level=confidence_level,
    )
    if json_output:
        print_json(result.to_dict())
        return
    settings = result.settings()
    title = f"EuroEval rank score, method {settings['method']}"
    if settings["superseded"]:
        title += " (superseded on 2026-05-28; no interval)"
    else:
        title += (
            f" (median of {settings['n_bootstraps']} bootstrap resamples, seed {seed}; "
            f"low/high: {confidence_level:.0%} interval)"
        )
    console.print(frame_table(result.overall, title=title))
    console.print(frame_table(result.languages, title="Per language"))
    columns = ["dataset", "model", "n_iterations", "mean", "plug_in", "score", "low", "high"]
    console.print(frame_table(result.datasets[columns], title="Per dataset"))
    _print_notes(result.notes)


@analyze_app.command("speed")
def analyze_speed_command(
    store: StoreOption = DEFAULT_STORE,
    model: ModelFilter = None,
    json_output: JsonOption = False,
) -> None:
    """Inference speed per model: ScandEval's GPT-2 tokens per second, mean ± 1.96·SD/√n.

    From 'glotbench run' (its speed benchmark, one per model) or imported EuroEval speed scores.
    """
    result = api.speed_summary(store, models=model)
    if json_output:
        print_json(result.to_dict())
        return
    if not len(result):
        console.print("no speed figures in the store (run a suite, or import EuroEval results)")
        return
    console.print(_speed_table(result))


# --- mixed models (issue 5) ---


@analyze_app.command("lmm")
def analyze_lmm_command(
    formula: Annotated[
        str,
        typer.Option(
            "--formula",
            "-f",
            help="Model in lme4 syntax, e.g. 'delta ~ language * task + (1 | architecture/model)'.",
        ),
    ],
    input: Annotated[
        Path | None,
        typer.Option("--input", "-i", help="Tidy table (CSV/JSONL/Parquet). Default: the store."),
    ] = None,
    store: AnalysisStoreOption = None,
    emmeans: Annotated[
        list[str] | None,
        typer.Option(
            "--emmeans",
            help="Factor (or combination a:b) for marginal means and pairwise contrasts "
            "(repeatable).",
        ),
    ] = None,
    reml: Annotated[
        bool, typer.Option("--reml/--ml", help="Fit by REML (default) or maximum likelihood.")
    ] = True,
    adjust: Annotated[
        str,
        typer.Option(
            "--adjust", help="Contrast p-value adjustment: tukey, bonferroni, holm, none."
        ),
    ] = "tukey",
    qq_plot: Annotated[
        Path | None,
        typer.Option(
            "--qq-plot",
            help="Simulate DHARMa-style residuals, test them and write their Q-Q plot here.",
        ),
    ] = None,
    residuals: Annotated[
        bool,
        typer.Option(
            "--residuals",
            help="Simulate DHARMa-style residuals and test them without a plot (with --json, "
            "the scaled residuals for `glotbench report --lmm`).",
        ),
    ] = False,
    residuals_by: Annotated[
        list[str] | None,
        typer.Option(
            "--residuals-by",
            help="Factor for DHARMa's per-group residual tests (KS uniformity within each "
            "group, Holm-adjusted; Levene between groups); 'a:b' = cells of two factors "
            "(repeatable; implies --residuals; default: the fixed-effect factors).",
        ),
    ] = None,
    model: ModelFilter = None,
    task: TaskFilter = None,
    language: LanguageFilter = None,
    metric: MetricFilter = None,
    seed: SeedOption = 0,
    json_output: JsonOption = False,
) -> None:
    """Linear mixed model: Satterthwaite tests, Type III ANOVA + partial η², EMMs, R²."""
    frame, error = api.load_lmm_frame(
        input,
        store if store is not None or input is not None else DEFAULT_STORE,
        metric=metric,
        models=model,
        tasks=task,
        languages=language,
    )
    result = api.analyze_mixed_model(
        frame,
        formula,
        emmeans=emmeans or [],
        reml=reml,
        adjust=adjust,
        error=error,
        qq_plot=qq_plot,
        seed=seed,
        residuals=residuals,
        residuals_by=residuals_by,
    )
    if json_output:
        print_json(result.to_dict())
        return
    criterion = "REML" if reml else "ML"
    console.print(
        frame_table(result.fixed_effects, title=f"Fixed effects ({criterion}, Satterthwaite df)")
    )
    console.print(frame_table(result.anova, title="Type III ANOVA (Satterthwaite) + partial η²"))
    for spec, table in result.emmeans.items():
        console.print(frame_table(table, title=f"Estimated marginal means: {spec}"))
        console.print(frame_table(result.contrasts[spec], title=f"Pairwise contrasts: {spec}"))
    console.print(frame_table(result.random_effects, title="Random effects"))
    console.print(
        f"residual variance {result.residual_variance:.6g}; R² marginal "
        f"{result.r2['marginal']:.4g}, conditional {result.r2['conditional']:.4g}",
        highlight=False,
    )
    _print_notes(tuple(result.diagnostics["messages"]))
    if result.residual_checks is not None:
        _print_residual_tests(result.residual_checks)
        _print_notes(tuple(result.residual_checks["messages"]))
        if result.residual_checks.get("qq_plot"):
            console.print(
                f"Q-Q plot written to {result.residual_checks['qq_plot']}", highlight=False
            )


def _print_residual_tests(checks: dict[str, Any]) -> None:
    """One line per DHARMa test of `analyze lmm --residuals`."""
    lines = [
        f"uniformity (KS) p = {checks['uniformity']['p']:.3g}",
        f"dispersion ratio {checks['dispersion']['ratio']:.3g}, "
        f"p = {checks['dispersion']['p']:.3g}",
        f"outliers {checks['outliers']['count']}, p = {checks['outliers']['p']:.3g}",
    ]
    if checks.get("quantiles"):
        lines.append(f"quantiles vs fixed-effect prediction p = {checks['quantiles']['p']:.3g}")
    for test in checks.get("categorical", []):
        lines.append(
            f"within {test['factor']} groups: min KS p (Holm) = {test['min_p_holm']:.3g} "
            f"over {len(test['groups'])} groups; Levene p = {test['levene']['p']:.3g}"
        )
    console.print("Simulated residuals (DHARMa): " + "; ".join(lines), highlight=False)


# --- design analyses (issue 6) ---
# `glotbench significance bootstrap|permutation|aso|mcnemar|adjust` and
# `glotbench analyze datasize|transfer`. Thin: parse, call glotbench.api, render.

significance_app = typer.Typer(
    help="Significance tests: paired bootstrap, permutation, ASO, McNemar, corrections.",
    no_args_is_help=True,
)
app.add_typer(significance_app, name="significance")

PairFiles = Annotated[
    list[Path] | None,
    typer.Argument(
        help="A and B: per-example scores (one number per line) or, with --references, "
        "line-aligned predictions. Omit when reading the store."
    ),
]
ReferencesOption = Annotated[
    Path | None,
    typer.Option("--references", "-r", help="References file: the inputs are predictions."),
]
SigMetricOption = Annotated[
    str | None,
    typer.Option("--metric", help="Metric (registry name); needed with --references or --store."),
]
SigStoreOption = Annotated[
    Path | None, typer.Option("--store", help="Read per-example statistics from this store.")
]
DatasetOption = Annotated[str | None, typer.Option("--dataset", help="Dataset (store).")]
TaskOption = Annotated[str | None, typer.Option("--task", help="Task (store).")]
LanguageOption = Annotated[str | None, typer.Option("--language", help="Language (store).")]
ModelsOption = Annotated[
    list[str] | None, typer.Option("--model", help="Model (repeatable; store).")
]
ResamplesOption = Annotated[int, typer.Option("--resamples", help="Number of resamples.")]


def _fields_table(payload: dict[str, Any], title: str) -> Any:
    """A one-row result as a two-column (field, value) table."""
    import pandas as pd

    rows = [
        {"field": key, "value": value if isinstance(value, str) else json.dumps(value)}
        for key, value in payload.items()
    ]
    return frame_table(pd.DataFrame(rows), title=title)


def _pair_source(
    files: list[Path] | None,
    references: Path | None,
    metric: str | None,
    store: Path | None,
    dataset: str | None,
    task: str | None,
    language: str | None,
    models: list[str] | None,
    run_seed: int | None,
) -> tuple[Any, Any, Any, tuple[str, str]]:
    if store is not None:
        if files:
            raise typer.BadParameter("give either files or --store, not both")
        if None in (dataset, task, language, metric):
            raise typer.BadParameter("--store needs --dataset, --task, --language and --metric")
        stats_a, stats_b, bound = api.store_pair_statistics(
            store,
            dataset=dataset,
            task=task,
            language=language,
            metric=metric,  # type: ignore[arg-type]
            models=models or [],
            seed=run_seed,
        )
        return stats_a, stats_b, bound, (str(models[0]), str(models[1]))  # type: ignore[index]
    if not files or len(files) != 2:
        raise typer.BadParameter("give two files, A and B (or --store)")
    stats_a, stats_b, bound = api.paired_statistics(
        files[0], files[1], references=references, metric=metric
    )
    return stats_a, stats_b, bound, (files[0].stem, files[1].stem)


def _paired_command(
    test: str,
    files: list[Path] | None,
    references: Path | None,
    metric: str | None,
    store: Path | None,
    dataset: str | None,
    task: str | None,
    language: str | None,
    models: list[str] | None,
    run_seed: int | None,
    resamples: int,
    seed: int,
    confidence_level: float,
    json_output: bool,
) -> None:
    stats_a, stats_b, bound, names = _pair_source(
        files, references, metric, store, dataset, task, language, models, run_seed
    )
    result = api.significance_test(
        test,
        stats_a,
        stats_b,
        bound,
        n_resamples=resamples,
        confidence_level=confidence_level,
        seed=seed,
        names=names,
    )
    if json_output:
        print_json(result.to_dict())
        return
    payload = result.to_dict()
    if test == "permutation":
        for key in ("confidence_interval", "confidence_level"):
            payload.pop(key)
    title = "Paired bootstrap test" if test == "bootstrap" else "Paired permutation test"
    console.print(_fields_table(payload, f"{title}: {names[0]} − {names[1]}"))


RunSeedOption = Annotated[
    int | None, typer.Option("--run-seed", help="Seed of the runs to compare (store).")
]


@significance_app.command("bootstrap")
def significance_bootstrap_command(
    files: PairFiles = None,
    references: ReferencesOption = None,
    metric: SigMetricOption = None,
    store: SigStoreOption = None,
    dataset: DatasetOption = None,
    task: TaskOption = None,
    language: LanguageOption = None,
    model: ModelsOption = None,
    run_seed: RunSeedOption = None,
    resamples: ResamplesOption = 10_000,
    seed: SeedOption = 0,
    confidence_level: LevelOption = 0.95,
    json_output: JsonOption = False,
) -> None:
    """Paired bootstrap test of score(A) − score(B): two-sided p-value (+1) and CI."""
    _paired_command(
        "bootstrap",
        files,
        references,
        metric,
        store,
        dataset,
        task,
        language,
        model,
        run_seed,
        resamples,
        seed,
        confidence_level,
        json_output,
    )


@significance_app.command("permutation")
def significance_permutation_command(
    files: PairFiles = None,
    references: ReferencesOption = None,
    metric: SigMetricOption = None,
    store: SigStoreOption = None,
    dataset: DatasetOption = None,
    task: TaskOption = None,
    language: LanguageOption = None,
    model: ModelsOption = None,
    run_seed: RunSeedOption = None,
    resamples: ResamplesOption = 10_000,
    seed: SeedOption = 0,
    json_output: JsonOption = False,
) -> None:
    """Paired approximate randomisation test of score(A) − score(B) (two-sided, +1)."""
    _paired_command(
        "permutation",
        files,
        references,
        metric,
        store,
        dataset,
        task,
        language,
        model,
        run_seed,
        resamples,
        seed,
        0.95,
        json_output,
    )


@significance_app.command("aso")
def significance_aso_command(
    files: Annotated[
        list[Path], typer.Argument(help="Score files, one score per line (e.g. per seed).")
    ],
    confidence_level: LevelOption = 0.95,
    iterations: Annotated[
        int, typer.Option("--iterations", help="Bootstrap iterations (deepsig default 1000).")
    ] = 1000,
    seed: Annotated[
        int,
        typer.Option(
            "--seed", help="Seed of the bootstrap (deepsig draws a random one; glotbench uses 0)."
        ),
    ] = 0,
    num_comparisons: Annotated[
        int, typer.Option("--num-comparisons", help="Bonferroni correction (two files).")
    ] = 1,
    no_bonferroni: Annotated[
        bool, typer.Option("--no-bonferroni", help="No correction (three or more files).")
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """Almost Stochastic Order: ε_min of A over B (two files), or all pairs (three or more)."""
    result = api.aso_files(
        files,
        confidence_level=confidence_level,
        num_bootstrap_iterations=iterations,
        seed=seed,
        num_comparisons=num_comparisons,
        use_bonferroni=not no_bonferroni,
    )
    if json_output:
        print_json(result.to_dict())
        return
    if isinstance(result, api.ASOResult):
        console.print(_fields_table(result.to_dict(), f"ASO: {files[0].stem} vs {files[1].stem}"))
        verdict = "is" if result.a_better else "is not"
        console.print(
            f"{files[0].stem} {verdict} almost stochastically better than {files[1].stem} "
            f"(ε_min = {result.eps_min:.4f}, threshold {result.threshold})",
            highlight=False,
        )
        return
    console.print(
        frame_table(
            result.to_frame().reset_index(names="A \\ B"),
            title=f"ε_min of row over column (level {result.corrected_confidence_level:.4g})",
        )
    )


@significance_app.command("mcnemar")
def significance_mcnemar_command(
    files: Annotated[
        list[Path],
        typer.Argument(help="A and B: 0/1 outcomes per line, or predictions with --references."),
    ],
    references: ReferencesOption = None,
    exact: Annotated[
        bool | None,
        typer.Option(
            "--exact/--asymptotic", help="Exact binomial or χ² (default: exact if b+c<25)."
        ),
    ] = None,
    no_correction: Annotated[
        bool, typer.Option("--no-correction", help="χ² without continuity correction.")
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """McNemar's test of paired binary outcomes."""
    if len(files) != 2:
        raise typer.BadParameter("give two files, A and B")
    result = api.mcnemar_files(
        files[0], files[1], references=references, exact=exact, correction=not no_correction
    )
    if json_output:
        print_json(result.to_dict())
        return
    console.print(_fields_table(result.to_dict(), "McNemar's test"))


@significance_app.command("adjust")
def significance_adjust_command(
    p_values: Annotated[list[float], typer.Argument(help="p-values to adjust.")],
    method: Annotated[
        str, typer.Option("--method", help="bonferroni, holm or fdr_bh (Benjamini-Hochberg).")
    ] = "holm",
    alpha: Annotated[float, typer.Option("--alpha", help="Family-wise level / FDR.")] = 0.05,
    json_output: JsonOption = False,
) -> None:
    """Adjust p-values for multiple comparisons (Bonferroni, Holm, Benjamini-Hochberg)."""
    result = api.adjust_p_values(p_values, method=method, alpha=alpha)
    if json_output:
        print_json(result.to_dict())
        return
    console.print(frame_table(result.to_frame(), title=f"{result.method} adjustment"))


def _parse_sizes(text: str) -> list[int | None]:
    sizes: list[int | None] = []
    for part in text.split(","):
        part = part.strip().lower()
        if part == "all":
            sizes.append(None)
            continue
        try:
            value = int(part.replace("_", ""))
        except ValueError:
            raise typer.BadParameter(f"{part!r} is not a size", param_hint="--sizes") from None
        if value <= 0:
            raise typer.BadParameter("sizes must be positive", param_hint="--sizes")
        sizes.append(value)
    return sizes


@analyze_app.command("datasize")
def analyze_datasize_command(
    store: AnalysisStoreOption = None,
    dataset: DatasetOption = None,
    task: TaskOption = None,
    language: LanguageOption = None,
    metric: Annotated[
        str | None, typer.Option("--metric", help="Metric (store), or las/uas/upos (CoNLL-U).")
    ] = None,
    model: ModelsOption = None,
    gold: Annotated[Path | None, typer.Option("--gold", help="Gold CoNLL-U file.")] = None,
    pred: Annotated[
        list[Path] | None,
        typer.Option(
            "--pred", help="CoNLL-U predictions (repeatable; name-seedN.conllu = seed N)."
        ),
    ] = None,
    simulate_models: Annotated[
        int, typer.Option("--simulate-models", help="Simulated UPOS taggers on --gold.")
    ] = 0,
    simulate_seeds: Annotated[
        int, typer.Option("--simulate-seeds", help="Seeds per simulated tagger.")
    ] = 3,
    sizes: Annotated[
        str, typer.Option("--sizes", help="Comma-separated sizes in tokens; 'all' = full set.")
    ] = "100,200,500,1000,2000,5000,10000,20000,all",
    strategy: Annotated[
        list[str] | None, typer.Option("--strategy", help="SEQ, RAND, RAND_SEQ (repeatable).")
    ] = None,
    draws: Annotated[int, typer.Option("--draws", help="Draws per size and strategy.")] = 100,
    level: Annotated[float, typer.Option("--level", help="τ level for the recommendation.")] = 0.9,
    seed: SeedOption = 0,
    no_aso: Annotated[bool, typer.Option("--no-aso", help="Skip the ASO agreement.")] = False,
    aso_draws: Annotated[
        int, typer.Option("--aso-draws", help="Draws per cell with ASO (0 = all).")
    ] = 25,
    aso_iterations: Annotated[
        int, typer.Option("--aso-iterations", help="ASO bootstrap iterations.")
    ] = 200,
    plot: Annotated[
        Path | None, typer.Option("--plot", help="Write the τ curve here (PNG).")
    ] = None,
    json_output: JsonOption = False,
) -> None:
    """How much test data is enough: ranking agreement (weighted τ, ASO) against test-set size."""
    result = api.analyze_datasize(
        store=store,
        dataset=dataset,
        task=task,
        language=language,
        metric=metric,
        models=model,
        gold=gold,
        predictions=pred or [],
        simulate_models=simulate_models,
        simulate_seeds=simulate_seeds,
        sizes=_parse_sizes(sizes),
        strategies=[s.upper() for s in strategy] if strategy else list(api.STRATEGIES),
        n_draws=draws,
        level=level,
        seed=seed,
        aso=not no_aso,
        aso_draws=aso_draws or None,
        aso_bootstrap_iterations=aso_iterations,
    )
    if plot is not None:
        result.plot(plot)
    if json_output:
        payload = result.to_dict()
        payload["plot"] = None if plot is None else str(plot)
        print_json(payload)
        return
    console.print(
        frame_table(
            result.table,
            title=f"Weighted τ vs the full set ({result.n_tokens:g} {result.token_unit}, "
            f"{len(result.models)} models × {result.n_seeds} seeds; example order: "
            f"{result.order})",
        )
    )
    console.print(frame_table(result.recommendation, title=f"Smallest size with mean τ ≥ {level}"))
    _print_notes(result.notes)
    if plot is not None:
        console.print(f"plot written to {plot}", highlight=False)


@analyze_app.command("transfer")
def analyze_transfer_command(
    input: Annotated[
        Path | None,
        typer.Option(
            "--input",
            "-i",
            help="Tidy scores (CSV/JSONL/Parquet): model_language, language (or "
            "dataset_language), score [, model, dataset].",
        ),
    ] = None,
    example: Annotated[
        bool,
        typer.Option("--example", help="Use the published ScandEval table (Nielsen 2023, App. A)."),
    ] = False,
    store: Annotated[
        Path | None,
        typer.Option(
            "--store",
            help="A store with zero-shot transfer runs (e.g. 'glotbench run scandi-transfer').",
        ),
    ] = None,
    metric: Annotated[
        list[str] | None,
        typer.Option(
            "--metric",
            help="With --store: TASK=METRIC (repeatable); default: each task's primary metric.",
        ),
    ] = None,
    observations: Annotated[
        str,
        typer.Option(
            "--observations",
            help="model: one score per model and language (mean over the language's datasets; "
            "the paper's unit); dataset: one per (model, dataset).",
        ),
    ] = "model",
    min_size: Annotated[
        int, typer.Option("--min-size", help="Smallest group (1 adds single languages).")
    ] = 2,
    top: Annotated[int, typer.Option("--top", help="Groups to print (table only).")] = 20,
    json_output: JsonOption = False,
) -> None:
    """Benchmark language groups by ScandEval's mean F-statistic (Nielsen 2023, §3.3).

    For each group G of dataset languages and each language d in G: one-way ANOVA F
    of the scores on d of the models whose language is in G against all other models;
    a group's score is the mean of its per-language F values. Largest mean F first.
    """
    if observations not in ("model", "dataset"):
        raise typer.BadParameter("use model or dataset", param_hint="--observations")
    if sum([input is not None, example, store is not None]) != 1:
        raise typer.BadParameter(
            "give one of --input FILE, --store PATH or --example", param_hint="--input"
        )
    metrics: dict[str, str] = {}
    for item in metric or []:
        task, sep, name = item.partition("=")
        if not sep or not task or not name:
            raise typer.BadParameter("use TASK=METRIC", param_hint="--metric")
        metrics[task] = name
    result = api.analyze_transfer(
        input,
        example=example,
        store=store,
        metrics=metrics or None,
        observations=observations,
        min_size=min_size,
    )
    if json_output:
        print_json(result.to_dict())
        return
    console.print(
        frame_table(
            transfer_table(result).head(top),
            title=f"Benchmark groups by mean F (observations: {result.observations})",
        )
    )
    console.print(
        f"best group: {', '.join(result.best)} (mean F {result.groups.iloc[0]['mean_f']:.2f})",
        highlight=False,
    )
    _print_notes(result.notes)


# --- leaderboard, report, buckets (issue 7) ---

ListOption = Annotated[list[str] | None, typer.Option(help="Repeatable filter.")]


def _site_source(
    store: Path | None,
    demo: bool,
    metric: str | None,
    model: list[str] | None,
    task: list[str] | None,
    language: list[str] | None,
    metadata: Path | None,
    replicates: int,
    seed: int,
) -> Any:
    if demo == (store is not None):
        raise typer.BadParameter("give exactly one of --store PATH or --demo")
    return api.leaderboard_source(
        store=store,
        demo=demo,
        metric=metric,
        models=model,
        tasks=task,
        languages=language,
        metadata_file=metadata,
        n_replicates=replicates,
        seed=seed,
    )


@app.command("leaderboard")
def leaderboard_command(
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder to write (index.html).")],
    store: Annotated[
        Path | None, typer.Option("--store", help="Results store.", envvar="GLOTBENCH_STORE")
    ] = None,
    demo_data: Annotated[
        bool, typer.Option("--demo", help="Use the embedded XTREME-R baselines.")
    ] = False,
    metric: Annotated[str | None, typer.Option("--metric", help="Metric to show.")] = None,
    model: ListOption = None,
    task: ListOption = None,
    language: ListOption = None,
    metadata: Annotated[
        Path | None,
        typer.Option("--metadata", help="Model metadata file (CSV/JSONL/Parquet, 'model' column)."),
    ] = None,
    group: Annotated[
        list[str] | None,
        typer.Option("--group", help="Extra language group NAME=lang,lang (repeatable)."),
    ] = None,
    title: Annotated[str | None, typer.Option("--title", help="Page title.")] = None,
    draws: Annotated[
        int,
        typer.Option(
            "--draws",
            help="Draws per view (SEs, intervals and ranks; as glotbench report's).",
        ),
    ] = 1000,
    replicates: Annotated[
        int, typer.Option("--replicates", help="Bootstrap replicates per stored run.")
    ] = 200,
    seed: Annotated[int, typer.Option("--seed", help="Seed of draws and replicates.")] = 0,
    json_output: JsonOption = False,
) -> None:
    """Write a static interactive leaderboard folder (index.html; works offline, from disk)."""
    from glotbench.report.leaderboard import LANGUAGE_GROUPS

    source = _site_source(
        store, demo_data, metric, model, task, language, metadata, replicates, seed
    )
    groups = {**LANGUAGE_GROUPS, **api.parse_language_groups(group or [])}
    result = api.write_leaderboard_site(
        out, source, title=title, language_groups=groups, n_draws=draws, seed=seed
    )
    if json_output:
        print_json(result.to_dict())
        return
    console.print(
        f"leaderboard of {len(result.models)} models ({len(result.views)} views) written to "
        f"{result.path}",
        highlight=False,
    )


@analyze_app.command("buckets")
def analyze_buckets_command(
    task: Annotated[str, typer.Option("--task", help="Task of the runs.")],
    language: Annotated[str, typer.Option("--language", help="Language of the runs.")],
    metric: Annotated[str, typer.Option("--metric", help="Metric of the runs.")],
    store: StoreOption = DEFAULT_STORE,
    dataset: Annotated[str | None, typer.Option("--dataset", help="Dataset (if several).")] = None,
    model: ListOption = None,
    attributes: Annotated[
        Path | None,
        typer.Option(
            "--attributes",
            "-a",
            help="Per-example attributes (CSV/TSV/JSONL/Parquet) with an example_id column; "
            "text columns (text, question, context, answer, entity, …) become lengths. "
            "Default: the built-in attributes `glotbench run` stored (sentence_length, "
            "oov_rate, label, entity_length/label/oov, context/question/answer_length, "
            "question_word).",
        ),
    ] = None,
    attribute: Annotated[
        list[str] | None, typer.Option("--attribute", help="Attribute to bucket (repeatable).")
    ] = None,
    buckets: Annotated[
        int, typer.Option("--buckets", help="Equal-frequency buckets per continuous attribute.")
    ] = 4,
    replicates: Annotated[int, typer.Option("--replicates", help="Bootstrap replicates.")] = 1000,
    seed: Annotated[int, typer.Option("--seed", help="Bootstrap seed.")] = 0,
    json_output: JsonOption = False,
) -> None:
    """Metric per bucket of examples (ExplainaBoard) with bootstrap CIs; pairwise diagnosis."""
    result = api.analyze_buckets(
        store=store,
        attributes=attributes,
        task=task,
        language=language,
        metric=metric,
        dataset=dataset,
        models=model,
        columns=attribute,
        n_buckets=buckets,
        n_resamples=replicates,
        seed=seed,
    )
    if json_output:
        print_json(result.to_dict())
        return
    console.print(frame_table(result.buckets, title=f"{metric} per bucket ({task}/{language})"))
    if not result.diagnosis.empty:
        console.print(
            frame_table(result.diagnosis, title="Where A beats B by the most, and B beats A")
        )
    _print_notes(result.notes)


@app.command("report")
def report_command(
    out: Annotated[Path, typer.Option("--out", "-o", help="HTML file to write.")],
    store: Annotated[
        Path | None, typer.Option("--store", help="Results store.", envvar="GLOTBENCH_STORE")
    ] = None,
    demo_data: Annotated[
        bool, typer.Option("--demo", help="Use the embedded XTREME-R baselines.")
    ] = False,
    metric: Annotated[str | None, typer.Option("--metric", help="Metric to show.")] = None,
    model: ListOption = None,
    task: ListOption = None,
    language: ListOption = None,
    title: Annotated[str | None, typer.Option("--title", help="Report title.")] = None,
    draws: Annotated[
        int,
        typer.Option(
            "--draws",
            help="Draws of the SEs, intervals, comparisons and ranks (as glotbench "
            "leaderboard's, so both show the same numbers).",
        ),
    ] = 1000,
    replicates: Annotated[
        int, typer.Option("--replicates", help="Bootstrap replicates per stored run.")
    ] = 200,
    seed: Annotated[int, typer.Option("--seed", help="Seed of draws and replicates.")] = 0,
    datasize: Annotated[
        list[Path] | None,
        typer.Option(
            "--datasize",
            help="Add an evaluation-size analysis: JSON of `glotbench analyze datasize --json` "
            "(repeatable).",
        ),
    ] = None,
    datasize_dataset: Annotated[
        str | None,
        typer.Option("--datasize-dataset", help="Run the datasize analysis on the store: dataset."),
    ] = None,
    datasize_task: Annotated[
        str | None,
        typer.Option(
            "--datasize-task",
            help="Run the datasize analysis on the store's runs of this task (dataset defaults "
            "to the task).",
        ),
    ] = None,
    datasize_language: Annotated[
        str | None, typer.Option("--datasize-language", help="Language of --datasize-task.")
    ] = None,
    datasize_metric: Annotated[
        str | None,
        typer.Option("--datasize-metric", help="Metric of --datasize-task (default: --metric)."),
    ] = None,
    datasize_sizes: Annotated[
        str,
        typer.Option(
            "--datasize-sizes", help="Sizes of --datasize-task, comma-separated; 'all' = full set."
        ),
    ] = "100,200,500,1000,2000,5000,10000,20000,all",
    datasize_draws: Annotated[
        int, typer.Option("--datasize-draws", help="Draws per size and strategy.")
    ] = 100,
    lmm: Annotated[
        list[Path] | None,
        typer.Option(
            "--lmm",
            help="Add a mixed model: JSON of `glotbench analyze lmm --residuals --json` "
            "(repeatable).",
        ),
    ] = None,
    lmm_formula: Annotated[
        list[str] | None,
        typer.Option(
            "--lmm-formula",
            help="Fit this mixed model (lme4 syntax) to the store's scores table, with simulated "
            "residuals, and add it (repeatable).",
        ),
    ] = None,
    json_output: JsonOption = False,
) -> None:
    """Write a self-contained HTML report (variance, aggregates, comparisons, ranks, plots)."""
    source = _site_source(store, demo_data, metric, model, task, language, None, replicates, seed)
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
                metric=datasize_metric or metric,
                models=model,
                sizes=_parse_sizes(datasize_sizes),
                n_draws=datasize_draws,
                seed=seed,
            )
        )
    for formula in lmm_formula or []:
        frame, error = api.load_lmm_frame(
            None, store, metric=metric, models=model, tasks=task, languages=language
        )
        lmm_inputs.append(
            api.analyze_mixed_model(frame, formula, error=error, residuals=True, seed=seed)
        )
    result = api.write_report(
        out,
        source,
        title=title,
        n_draws=draws,
        seed=seed,
        datasize=datasize_inputs,
        lmm=lmm_inputs,
    )
    if json_output:
        print_json(result.to_dict())
        return
    console.print(f"report written to {result.path}", highlight=False)


@analyze_app.command("lmm-robustness")
def analyze_lmm_robustness_command(
    formula: Annotated[str, typer.Option("--formula", "-f", help="Mixed model in lme4 syntax.")],
    factor: Annotated[str, typer.Option("--factor", help="Fixed factor whose effect to detect.")],
    subject: Annotated[
        str, typer.Option("--subject", help="Repeated-measures unit for RM-ANOVA (e.g. model).")
    ] = "model",
    within: Annotated[
        list[str] | None,
        typer.Option("--within", help="Within-subject factors for RM-ANOVA (repeatable)."),
    ] = None,
    input: InputOption = None,
    store: AnalysisStoreOption = None,
    metric: MetricFilter = None,
    fraction: Annotated[
        list[float] | None,
        typer.Option("--fraction", help="Share of rows to remove (repeatable; default 0.05…0.5)."),
    ] = None,
    repeats: Annotated[int, typer.Option("--repeats", help="Refits per fraction.")] = 20,
    alpha: Annotated[float, typer.Option("--alpha", help="Significance level.")] = 0.05,
    seed: SeedOption = 0,
    json_output: JsonOption = False,
) -> None:
    """How often LMM and RM-ANOVA still detect a factor as 5 %…50 % of rows go missing."""
    frame, _ = api.load_lmm_frame(
        input=input,
        store=store if store is not None or input is not None else DEFAULT_STORE,
        metric=metric,
    )
    result = api.analyze_missing_data(
        frame,
        formula,
        factor,
        subject=subject,
        within=within or [factor],
        fractions=fraction,
        n_repeats=repeats,
        alpha=alpha,
        seed=seed,
    )
    if json_output:
        print_json(result.to_dict())
        return
    console.print(
        frame_table(result.to_frame(), title=f"Detection of {factor!r} as rows go missing")
    )


# --- harness importers (issue 8) ---


def _print_harness_import(result: Any, json_output: bool) -> None:
    if json_output:
        print_json(result.to_dict())
        return
    style = {"imported": "green", "resumed": "green", "skipped": "yellow"}[result.status]
    console.print(
        f"[{style}]{result.status}[/] {result.source} -> {result.store}: {result.message} "
        f"[dim]({result.seconds:.2f} s)[/]",
        highlight=False,
    )
    if result.models:
        console.print(
            f"[dim]models: {', '.join(result.models)}; tasks: {', '.join(result.tasks)}; "
            f"languages: {', '.join(result.languages)}[/]",
            highlight=False,
        )
    for note in result.notes:
        console.print(f"[dim]note: {note}[/]", highlight=False)
    if result.aggregates:
        import pandas as pd

        rows = [
            {k: v for k, v in row.items() if k in ("level", "name", "metric", "score", "complete")}
            for row in result.aggregates
        ]
        console.print(frame_table(pd.DataFrame(rows), title="XTREME averages (0-100)"))


def _run_harness_import(call: Any, label: str, json_output: bool) -> Any:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    try:
        if json_output or not err_console.is_terminal:
            return call(None)
        with Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=err_console,
            transient=True,
        ) as bar:
            task = bar.add_task(f"reading and checking {label}", total=None)

            def progress(done: int, total: int) -> None:
                bar.update(task, description="writing runs", completed=done, total=total)

            return call(progress)
    except KeyboardInterrupt:
        err_console.print(
            "[yellow]interrupted:[/] the runs written so far are complete and kept; "
            "run the same command again to resume",
            highlight=False,
        )
        raise typer.Exit(130) from None


@import_app.command("lm-eval")
def import_lm_eval_command(
    path: Annotated[
        Path,
        typer.Argument(
            help="lm-evaluation-harness --output_path folder (or a results_<timestamp>.json): "
            "results_*.json and, with --log_samples, samples_<task>_*.jsonl."
        ),
    ],
    store: StoreOption = DEFAULT_STORE,
    model: Annotated[
        str | None,
        typer.Option("--model", help="Model name to store (default: the results' model_name)."),
    ] = None,
    family: Annotated[
        list[str] | None,
        typer.Option(
            "--family",
            help="Extra task family named <family>_<language> (repeatable); xnli, belebele, "
            "xquad, xcopa, ... are known.",
        ),
    ] = None,
    task_map: Annotated[
        list[str] | None,
        typer.Option(
            "--task-language",
            "--map",
            help="TASK=LANGUAGE (or TASK=NAME:LANGUAGE) for one task, e.g. xnli_de=de "
            "(repeatable; wins over --map-file).",
        ),
    ] = None,
    map_file: Annotated[
        Path | None,
        typer.Option(
            "--map-file",
            help="Task → language mapping file: JSON {TASK: LANGUAGE or NAME:LANGUAGE} or "
            "CSV/TSV with columns task, language and optionally name.",
        ),
    ] = None,
    auto_language: Annotated[
        bool,
        typer.Option(
            "--auto-language/--no-auto-language",
            help="Split task names ending in an ISO 639 code (scala_da → scala, da; "
            "belebele_dan_Latn → belebele, dan_Latn).",
        ),
    ] = True,
    language: Annotated[
        str | None,
        typer.Option("--language", help="Language of tasks no family names (default: und)."),
    ] = None,
    tasks: Annotated[
        list[str] | None, typer.Option("--task", help="Import only these lm-eval tasks.")
    ] = None,
    seed_from: Annotated[
        str,
        typer.Option(
            "--seed-from",
            help="config: the results' fewshot_seed; order: 0, 1, ... in timestamp order.",
        ),
    ] = "config",
    no_samples: Annotated[
        bool, typer.Option("--no-samples", help="Import the results JSON only.")
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """Import lm-evaluation-harness results and logged samples (re-run to resume)."""
    result = _run_harness_import(
        lambda progress: api.import_lm_eval(
            path,
            store=store,
            model=model,
            families=family,
            task_map=task_map,
            default_language=language,
            tasks=tasks,
            seed_from=seed_from,
            samples=not no_samples,
            progress=progress,
            task_map_file=map_file,
            auto_language=auto_language,
        ),
        path.name,
        json_output,
    )
    _print_harness_import(result, json_output)


@import_app.command("euroeval")
def import_euroeval_command(
    file: Annotated[
        Path,
        typer.Argument(
            help="euroeval_benchmark_results.jsonl or scandeval_benchmark_results.jsonl "
            "(records before v17 and v17+ Every Eval Ever records)."
        ),
    ],
    store: StoreOption = DEFAULT_STORE,
    json_output: JsonOption = False,
) -> None:
    """Import EuroEval / ScandEval results: totals with SEs and every iteration as a replicate."""
    _print_harness_import(api.import_euroeval(file, store=store), json_output)


@import_app.command("xtreme")
def import_xtreme_command(
    predictions: Annotated[
        Path,
        typer.Argument(help="Predictions folder: <task>/test-<lang>.<tsv|json|jsonl>."),
    ],
    labels: Annotated[Path, typer.Option("--labels", help="Labels folder with the same layout.")],
    store: StoreOption = DEFAULT_STORE,
    model: Annotated[
        str | None,
        typer.Option("--model", help="Model name (default: the predictions folder's name)."),
    ] = None,
    tasks: Annotated[list[str] | None, typer.Option("--task", help="Only these tasks.")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed of this submission.")] = None,
    json_output: JsonOption = False,
) -> None:
    """Score an XTREME / XTREME-R submission per example and store it (XTREME averages shown)."""
    result = _run_harness_import(
        lambda progress: api.import_xtreme(
            predictions,
            labels,
            store=store,
            model=model,
            tasks=tasks,
            seed=seed,
            progress=progress,
        ),
        predictions.name,
        json_output,
    )
    _print_harness_import(result, json_output)


# --- benchmark runner (issue 4) ---

build_app = typer.Typer(help="Build benchmark datasets.", no_args_is_help=True)
app.add_typer(build_app, name="build")


def _run_reporter(quiet: bool) -> Any:
    """Progress: a rich bar with ETA on a terminal, one line per job otherwise."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from glotbench.cli_progress import item_columns, rich_item_sink
    from glotbench.runner.progress import set_item_sink

    state: dict[str, Any] = {"progress": None, "task": None, "sink": None}
    interactive = err_console.is_terminal and not quiet

    def on_event(kind: str, job: Any, info: dict[str, Any]) -> None:
        if kind == "planned":
            if interactive and info["pending"]:
                progress = Progress(
                    TextColumn("[bold]{task.description}"),
                    BarColumn(),
                    MofNCompleteColumn(),
                    TimeElapsedColumn(),
                    TextColumn("ETA"),
                    TimeRemainingColumn(),
                    *item_columns(),
                    console=err_console,
                )
                progress.start()
                state["progress"] = progress
                state["task"] = progress.add_task("running", total=info["pending"])
                # rows with items done and items/s inside long jobs (HF models)
                state["sink"] = set_item_sink(rich_item_sink(progress))
            elif not quiet:
                err_console.print(
                    f"{info['pending']} of {info['total']} jobs to run "
                    f"({info['total'] - info['pending']} already stored)",
                    highlight=False,
                )
            return
        if kind in ("stored", "failed"):
            if state["progress"] is not None:
                state["progress"].advance(state["task"])
            if kind == "failed":
                err_console.print(
                    f"[red]failed:[/] {job.label()}: {info['error']}", highlight=False
                )
            elif not interactive and not quiet:
                scores = ", ".join(f"{k}={v:.3f}" for k, v in info["scores"].items())
                err_console.print(f"stored {job.label()}: {scores}", highlight=False)
                sys.stderr.flush()

    def close() -> None:
        if state["progress"] is not None:
            set_item_sink(state["sink"])
            state["progress"].stop()

    return on_event, close


@app.command("run")
def run_command(
    suite: Annotated[
        str,
        typer.Argument(help="Built-in suite name (see 'glotbench suites') or a suite YAML file."),
    ],
    store: StoreOption = DEFAULT_STORE,
    data_dir: Annotated[
        Path | None,
        typer.Option("--data-dir", help="Folder the suite's data paths are relative to."),
    ] = None,
    model: Annotated[
        list[str] | None, typer.Option("--model", help="Only this model (repeatable).")
    ] = None,
    language: Annotated[
        list[str] | None, typer.Option("--language", help="Only this language (repeatable).")
    ] = None,
    task: Annotated[
        list[str] | None, typer.Option("--task", help="Only this task (repeatable).")
    ] = None,
    dataset: Annotated[
        list[str] | None, typer.Option("--dataset", help="Only this dataset (repeatable).")
    ] = None,
    iterations: Annotated[
        int | None,
        typer.Option("--iterations", min=1, help="Iterations (default: the suite's, 10)."),
    ] = None,
    splits: Annotated[
        str | None,
        typer.Option(
            "--splits",
            help="Override every dataset's split sizes, e.g. 'train=128,test=256' "
            "(a smaller run, e.g. for CI).",
        ),
    ] = None,
    executor: Annotated[
        str,
        typer.Option(
            "--executor",
            help="local (one job at a time), processes (worker processes on this machine) or ray.",
        ),
    ] = "local",
    num_cpus: Annotated[
        int | None,
        typer.Option(
            "--num-cpus",
            help="Workers of --executor processes, or CPUs of the local Ray started by "
            "--executor ray.",
        ),
    ] = None,
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray-address",
            help="Address of a running Ray cluster ('auto': the one 'ray start' runs here); "
            "default: a new local Ray.",
        ),
    ] = None,
    shards: Annotated[
        Path | None,
        typer.Option(
            "--shards",
            help="Folder all workers can write to: each job's statistics are written there "
            "as a Parquet shard (one file per job) and merged into the store by this process.",
        ),
    ] = None,
    merge: Annotated[
        bool,
        typer.Option(
            "--merge/--no-merge",
            help="With --shards: merge each shard as its job finishes (default), or leave "
            "them for 'glotbench import shards'.",
        ),
    ] = True,
    speed: Annotated[
        bool,
        typer.Option(
            "--speed/--no-speed",
            help="Run ScandEval's speed benchmark once per model (default: as the suite says).",
        ),
    ] = True,
    speed_seconds: Annotated[
        float | None,
        typer.Option(
            "--speed-seconds",
            min=0.0,
            help="Seconds of calls per speed document (ScandEval: 3; default: the suite's).",
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Re-run and replace stored runs.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")] = False,
    json_output: JsonOption = False,
) -> None:
    """Run a benchmark suite (resumable: stored runs are skipped) and show ScandEval scores
    and each model's inference speed."""
    on_event, close = _run_reporter(quiet or json_output)
    try:
        result = api.run_benchmark(
            suite,
            store=store,
            data_dir=data_dir,
            models=model or None,
            languages=language or None,
            tasks=task or None,
            datasets=dataset or None,
            iterations=iterations,
            executor=executor,
            force=force,
            num_cpus=num_cpus,
            ray_address=ray_address,
            on_event=on_event,
            split_sizes=splits,
            shards=shards,
            merge=merge,
            speed=speed,
            speed_seconds=speed_seconds,
        )
    finally:
        close()
    if json_output:
        print_json(result.to_dict())
    else:
        for note in result.notes:
            console.print(f"[yellow]note:[/] {note}", highlight=False)
        frame = result.to_frame()
        if not frame.empty:
            console.print(
                frame_table(
                    _scandeval_display(frame),
                    title=f"{result.suite}: ScandEval scores (mean ± 1.96·SD/√N; a "
                    "multilingual dataset's per-language runs as their mean and range)",
                )
            )
        if result.speed is not None and len(result.speed):
            console.print(_speed_table(result.speed))
        console.print(
            f"{result.completed} job(s) run, {result.skipped} already stored, "
            f"{len(result.failures)} failed; {result.runs_written} run(s) written to "
            f"{result.store} in {result.seconds:.1f} s",
            highlight=False,
        )
    if result.failures:
        from glotbench.runner.errors import JobError

        listing = f"glotbench failures --store {shlex.quote(result.store)}"
        if not json_output:
            console.print(
                f"[red]{len(result.failures)} failure(s) recorded[/] in the store's failures "
                f"table (with tracebacks); list them with: {listing}",
                highlight=False,
            )
        raise JobError(
            f"{len(result.failures)} job(s) failed (listed above and recorded in the store: "
            f"{listing}); the others are stored. Fix the cause and run the same command "
            "again to resume: a job that then succeeds marks its failure resolved."
        )


def _speed_table(table: Any) -> Any:
    """The speed table as ScandEval shows it: tokens/s mean ± 95 % half-width."""
    import pandas as pd

    def cell(mean: Any, half: Any) -> str:
        if mean is None or mean != mean:
            return "–"
        return f"{mean:,.0f}" + (f" ± {half:,.0f}" if half is not None else "")

    rows = [
        {
            "model": r["model"],
            "tokens/s": cell(r["tokens_per_second"], r["ci_half_width"]),
            "tokens/s (short)": cell(r["tokens_per_second_short"], r["ci_half_width_short"]),
            "iterations": r["iterations"],
        }
        for r in table.rows
    ]
    return frame_table(
        pd.DataFrame(rows),
        title="Inference speed: GPT-2 tokens per second (ScandEval; mean ± 1.96·SD/√n over "
        "documents of ~100 … 1,000 tokens; short: ~12 … 125)",
    )


def _scandeval_display(frame: Any) -> Any:
    """One row per model, dataset, metric and language; per-language runs of a
    multilingual dataset (several languages of one metric) collapse into one row."""
    import pandas as pd

    rows = []
    for (model, dataset, metric), group in frame.groupby(
        ["model", "dataset", "metric"], sort=False
    ):
        if len(group) == 1:
            row = group.iloc[0]
            rows.append(
                {
                    "model": model,
                    "dataset": dataset,
                    "language": row["language"],
                    "metric": metric,
                    "iterations": int(row["iterations"]),
                    "score": f"{row['score']:.3f}"
                    + (
                        f" ± {row['ci_half_width']:.3f}"
                        if row["ci_half_width"] == row["ci_half_width"]  # one iteration: no ±
                        else ""
                    ),
                }
            )
        else:
            scores = group["score"]
            rows.append(
                {
                    "model": model,
                    "dataset": dataset,
                    "language": f"{len(group)} languages",
                    "metric": metric,
                    "iterations": int(group["iterations"].max()),
                    "score": f"{scores.mean():.3f} ({scores.min():.3f}–{scores.max():.3f})",
                }
            )
    return pd.DataFrame(rows)


@app.command("failures")
def failures_command(
    store: StoreOption = DEFAULT_STORE,
    model: Annotated[
        list[str] | None, typer.Option("--model", help="Only this model (repeatable).")
    ] = None,
    dataset: Annotated[
        list[str] | None, typer.Option("--dataset", help="Only this dataset (repeatable).")
    ] = None,
    task: Annotated[
        list[str] | None, typer.Option("--task", help="Only this task (repeatable).")
    ] = None,
    language: Annotated[
        list[str] | None, typer.Option("--language", help="Only this language (repeatable).")
    ] = None,
    failure_id: Annotated[
        list[str] | None, typer.Option("--id", help="Only this failure id (repeatable).")
    ] = None,
    include_resolved: Annotated[
        bool, typer.Option("--all", help="Also failures resolved since (by a later success).")
    ] = False,
    resolve: Annotated[
        bool,
        typer.Option(
            "--resolve",
            help="Mark the matching open failures resolved by hand (e.g. of a model you "
            "dropped); nothing is deleted.",
        ),
    ] = False,
    show_traceback: Annotated[
        bool, typer.Option("--traceback", help="Print each failure's traceback.")
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """List the failed benchmark jobs recorded by 'glotbench run' (open ones by default)."""
    result = api.list_failures(
        store,
        models=model,
        datasets=dataset,
        tasks=task,
        languages=language,
        failure_ids=failure_id,
        include_resolved=include_resolved,
        resolve=resolve,
    )
    if json_output:
        print_json(result.to_dict())
        return
    frame = result.to_frame()
    what = "resolved" if resolve else ("recorded" if include_resolved else "open")
    if frame.empty:
        console.print(f"no {what} failures in {result.store}", highlight=False)
        return
    columns = ["failure_id", "created_at", "model", "dataset", "language", "seed"]
    columns += ["error_type", "message"]
    if include_resolved or resolve:
        columns.append("resolved_at")
    shown = frame[columns].astype(object).where(frame[columns].notna(), "—")
    for col in ("created_at", "resolved_at"):
        if col in shown:
            shown[col] = [
                v.isoformat(sep=" ", timespec="seconds") if hasattr(v, "isoformat") else v
                for v in shown[col]
            ]
    console.print(frame_table(shown, title=f"{len(frame)} {what} failure(s) in {result.store}"))
    if show_traceback:
        for rec in frame.itertuples(index=False):
            console.print(f"\n[bold]{rec.failure_id}[/] {rec.model} on {rec.dataset}:")
            console.print(rec.traceback or "(no traceback recorded)", highlight=False, markup=False)
    if resolve:
        console.print(f"marked {result.resolved_now} failure(s) resolved", highlight=False)
    elif not include_resolved:
        console.print(
            "Fix the cause and run the suite again: a job that succeeds marks its failures "
            "resolved (--all lists them too; --traceback shows where each one failed).",
            highlight=False,
        )


@app.command("suites")
def suites_command(json_output: JsonOption = False) -> None:
    """List the built-in benchmark suites."""
    suites = api.list_suites()
    if json_output:
        print_json({"suites": suites})
        return
    for name, description in suites.items():
        console.print(f"[bold]{name}[/]  {description}", highlight=False)


@build_app.command("scala")
def build_scala_command(
    treebank: Annotated[list[Path], typer.Argument(help="UD CoNLL-U file(s) of one language.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="JSONL file to write.")],
    language: Annotated[str, typer.Option("--language", help="Language code.")] = "und",
    seed: Annotated[int, typer.Option("--seed", help="Seed of corruptions and splits.")] = 4242,
    train: Annotated[int, typer.Option("--train", help="Train size.")] = 1024,
    validation: Annotated[int, typer.Option("--validation", help="Validation size.")] = 256,
    test: Annotated[int, typer.Option("--test", help="Test size.")] = 2048,
    json_output: JsonOption = False,
) -> None:
    """Build a ScaLA linguistic-acceptability dataset from a UD treebank."""
    result = api.build_scala(
        list(treebank),
        out,
        language=language,
        seed=seed,
        splits={"train": train, "validation": validation, "test": test},
    )
    if json_output:
        print_json(result.to_dict())
        return
    for note in result.notes:
        console.print(f"[yellow]note:[/] {note}", highlight=False)
    sizes = ", ".join(f"{k} {v}" for k, v in result.sizes.items())
    console.print(f"wrote {result.out}: {sizes}; labels {result.labels}", highlight=False)


# --- checklist (issue 7) ---

checklist_app = typer.Typer(
    help="Template tests after CheckList / MultiCheckList (MFT, INV, DIR).", no_args_is_help=True
)
app.add_typer(checklist_app, name="checklist")


@checklist_app.command("expand")
def checklist_expand_command(
    templates: Annotated[
        list[Path] | None,
        typer.Argument(help="Template suite YAML file(s); default: the shipped suites."),
    ] = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="Cases JSONL file to write.")] = Path(
        "checklist_cases.jsonl"
    ),
    language: Annotated[
        list[str] | None, typer.Option("--language", "-l", help="Language (repeatable).")
    ] = None,
    test: Annotated[list[str] | None, typer.Option("--test", help="Test (repeatable).")] = None,
    n: Annotated[
        int | None,
        typer.Option("--n", min=1, help="Cases per test and language (seeded sample)."),
    ] = None,
    json_output: JsonOption = False,
) -> None:
    """Expand templates into test cases (one JSONL row per text; predict every 'id')."""
    result = api.checklist_expand(templates or None, out, languages=language, tests=test, n=n)
    if json_output:
        print_json(result.to_dict())
        return
    console.print(frame_table(result.counts, title="Test cases"))
    console.print(
        f"wrote {result.n_cases} cases ({result.n_texts} texts) to {result.out}", highlight=False
    )


@checklist_app.command("score")
def checklist_score_command(
    cases: Annotated[Path, typer.Argument(help="Cases JSONL file from 'checklist expand'.")],
    predictions: Annotated[
        list[Path],
        typer.Argument(help="Predictions per model (JSONL id+label/probs, or CSV/TSV)."),
    ],
    model: Annotated[
        list[str] | None,
        typer.Option("--model", "-m", help="Model name per predictions file (default: stem)."),
    ] = None,
    store: Annotated[
        Path | None, typer.Option("--store", help="Store the results as runs in this store.")
    ] = None,
    replicates: Annotated[int, typer.Option("--replicates", help="Bootstrap replicates.")] = 1000,
    confidence: Annotated[
        float, typer.Option("--confidence", help="Confidence level of the intervals.")
    ] = 0.95,
    seed: Annotated[int, typer.Option("--seed", help="Bootstrap seed.")] = 0,
    json_output: JsonOption = False,
) -> None:
    """Failure rates per model, test and language with paired bootstrap CIs."""
    result = api.checklist_score(
        cases,
        list(predictions),
        models=model,
        store=store,
        n_resamples=replicates,
        confidence_level=confidence,
        seed=seed,
    )
    if json_output:
        print_json(result.to_dict())
        return
    cols = ["model", "test", "type", "language", "n_applicable", "n_failed", "failure_rate"]
    cols += ["ci_low", "ci_high"]
    console.print(frame_table(result.rates[cols], title="Failure rates", digits=3))
    if result.stored:
        console.print(
            f"stored in {result.stored['store']}: {result.stored['runs_written']} runs written, "
            f"{result.stored['runs_skipped']} already stored",
            highlight=False,
        )
    _print_notes(result.notes)


@checklist_app.command("example")
def checklist_example_command(json_output: JsonOption = False) -> None:
    """The published MultiCheckList error rates (%) of XLM-R (Ruder et al. 2021)."""
    result = api.checklist_example()
    if json_output:
        print_json(result.to_dict())
        return
    console.print(frame_table(result.wide, title=f"{result.source} (%)"))
    console.print(frame_table(result.by_test, title="Per test, over languages"))
