"""``glotbench import …``: tidy files, Parquet snapshots and shards, evaluation harnesses."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from glotbench.cli._lazy import api
from glotbench.cli._options import DEFAULT_STORE, JsonOption, LockTimeoutOption, StoreOption
from glotbench.cli._output import console, frame_table, print_json, run_with_import_progress
from glotbench.cli._words import cli_words

import_app = typer.Typer(help="Import results into a store.", no_args_is_help=True)


def _print_import(result: api.ImportResult, json_output: bool) -> None:
    if json_output:
        print_json(result.to_dict())
        return
    style = {"imported": "green", "resumed": "green", "skipped": "yellow"}[result.status]
    console.print(
        f"[{style}]{result.status}[/] {escape(str(result.source))} -> "
        f"{escape(str(result.store))}: {escape(str(result.message))} "
        f"[dim]({result.seconds:.2f} s)[/]",
        highlight=False,
    )
    if result.ignored_columns:
        console.print(
            f"[dim]note: ignored column(s) that are neither keys nor statistics: "
            f"{escape(', '.join(result.ignored_columns))}[/]",
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
    lock_timeout: LockTimeoutOption = None,
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
    lock_timeout: LockTimeoutOption = None,
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
    result = run_with_import_progress(
        lambda progress: api.import_examples(file, store=store, labels=labels, progress=progress),
        file.name,
        json_output,
    )
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
    lock_timeout: LockTimeoutOption = None,
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
    lock_timeout: LockTimeoutOption = None,
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
                f"[yellow]skipped[/] {escape(str(name))}: a shard still being written (or left "
                "by a killed worker)",
                highlight=False,
            )
        for item in result.unreadable:
            console.print(
                f"[yellow]skipped[/] {escape(str(item['file']))}: {escape(str(item['error']))}",
                highlight=False,
            )
    if result.unreadable:
        raise typer.Exit(1)


def _print_harness_import(result: Any, json_output: bool) -> None:
    if json_output:
        print_json(result.to_dict())
        return
    style = {"imported": "green", "resumed": "green", "skipped": "yellow"}[result.status]
    console.print(
        f"[{style}]{result.status}[/] {escape(str(result.source))} -> "
        f"{escape(str(result.store))}: {escape(str(result.message))} "
        f"[dim]({result.seconds:.2f} s)[/]",
        highlight=False,
    )
    if result.models:
        console.print(
            "[dim]"
            + escape(
                f"models: {', '.join(result.models)}; tasks: {', '.join(result.tasks)}; "
                f"languages: {', '.join(result.languages)}"
            )
            + "[/]",
            highlight=False,
        )
    for note in result.notes:
        console.print(f"[dim]note: {escape(cli_words(str(note)))}[/]", highlight=False)
    if result.aggregates:
        import pandas as pd

        rows = [
            {k: v for k, v in row.items() if k in ("level", "name", "metric", "score", "complete")}
            for row in result.aggregates
        ]
        console.print(frame_table(pd.DataFrame(rows), title="XTREME averages (0-100)"))


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
    lock_timeout: LockTimeoutOption = None,
    model: Annotated[
        str | None,
        typer.Option("--model", help="Model name to store (default: the results' model_name)."),
    ] = None,
    family: Annotated[
        list[str] | None,
        typer.Option(
            "--family",
            help="Extra task family: tasks named family_language, e.g. xnli_de (repeatable); "
            "xnli, belebele, xquad, xcopa, ... are known.",
        ),
    ] = None,
    task_map: Annotated[
        list[str] | None,
        typer.Option(
            "--task-language",
            help="TASK=LANGUAGE for one task, e.g. xnli_de=de, or TASK=NAME:LANG to store it "
            "under another task name (repeatable; wins over --map-file).",
        ),
    ] = None,
    map_alias: Annotated[
        list[str] | None,
        # the short alias, kept out of the help so that the option column fits 80 columns
        typer.Option("--map", hidden=True, help="Alias of --task-language."),
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
    result = run_with_import_progress(
        lambda progress: api.import_lm_eval(
            path,
            store=store,
            model=model,
            families=family,
            task_map=[*(task_map or ()), *(map_alias or ())] or None,
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
    lock_timeout: LockTimeoutOption = None,
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
    lock_timeout: LockTimeoutOption = None,
    model: Annotated[
        str | None,
        typer.Option("--model", help="Model name (default: the predictions folder's name)."),
    ] = None,
    tasks: Annotated[list[str] | None, typer.Option("--task", help="Only these tasks.")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed of this submission.")] = None,
    json_output: JsonOption = False,
) -> None:
    """Score an XTREME / XTREME-R submission per example and store it (XTREME averages shown)."""
    result = run_with_import_progress(
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


@import_app.command("reuben")
def import_reuben_command(
    file: Annotated[
        Path,
        typer.Argument(
            help="A reuben input file (.jsonl, .csv, .tsv): a summary (score and SD columns per "
            "model and task) or replications (seed / bootstrap index columns)."
        ),
    ],
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="reuben's YAML config naming the columns (score_col, model_col, task_col, "
            "seed_sd_col, boot_sd_col, replication_sd_col or *_idx_col); default: reuben's "
            "defaults (Mean, Model, Task).",
        ),
    ] = None,
    task: Annotated[
        str,
        typer.Option(
            "--task",
            help="glotbench task name of the file's scores (reuben's task column becomes the "
            "language: a language, language pair or dataset).",
        ),
    ] = "reuben",
    metrics: Annotated[
        list[str] | None,
        typer.Option(
            "--metric",
            help="COLUMN=NAME: the glotbench metric of a score column (F1=squad_f1), or "
            "COLUMN=NAME:LO:HI for a metric glotbench does not know (comet=comet:0:100). "
            "Repeatable; a base name (bleu) maps every column of that metric.",
        ),
    ] = None,
    percent: Annotated[
        bool,
        typer.Option(
            "--percent",
            help="The file gives 0-1 metrics in percent (reuben's files do): divide their scores "
            "and SDs by 100.",
        ),
    ] = False,
    allow_unknown_metrics: Annotated[
        bool,
        typer.Option(
            "--allow-unknown-metrics",
            help="Store score columns that name no glotbench metric (only finiteness and "
            "non-negative SDs are checked).",
        ),
    ] = False,
    store: StoreOption = DEFAULT_STORE,
    lock_timeout: LockTimeoutOption = None,
    json_output: JsonOption = False,
) -> None:
    """Import reuben's summary or replication file (Sälevä, Ataman & Lignos's toolkit).

    Stored so that 'analyze variance/aggregate/compare/ranks --scheme parametric' draw
    N(mean, σ_seed² + σ_boot²) per model and language as reuben does
    (docs/importers/reuben.md).
    """
    result = api.import_reuben(
        file,
        config=config,
        store=store,
        task=task,
        metrics=metrics,
        percent=percent,
        allow_unknown_metrics=allow_unknown_metrics,
    )
    _print_harness_import(result, json_output)
