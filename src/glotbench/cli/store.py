"""``glotbench show`` and ``glotbench export``: what a store holds, and its tables as files."""

from __future__ import annotations

import shlex
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from glotbench.cli._lazy import api
from glotbench.cli._options import DEFAULT_STORE, JsonOption, StoreOption
from glotbench.cli._output import console, frame_table, print_json

commands = typer.Typer()


class ExportTable(StrEnum):
    """Tables ``glotbench export`` can write."""

    runs = "runs"
    examples = "examples"
    scores = "scores"
    imports = "imports"
    meta = "meta"
    all = "all"


@commands.command("show")
def show_command(store: StoreOption = DEFAULT_STORE, json_output: JsonOption = False) -> None:
    """Show what the store holds: counts, and runs / examples / scores per model, task, language."""
    summary = api.show_store(store)
    if json_output:
        print_json(summary.to_dict())
        return
    c = summary.counts
    console.print(
        f"[bold]{escape(str(summary.path))}[/] (schema version {summary.schema_version}): "
        f"{c['runs']} runs, {c['examples']} example rows, {c['scores']} scores, "
        f"{c['imports']} imports; {c['models']} models, {c['tasks']} tasks, "
        f"{c['languages']} languages, {c['metrics']} metrics",
        highlight=False,
    )
    if not summary.by_model_task_language.empty:
        console.print(frame_table(summary.to_frame(), title="By model, task and language"))
    for item in summary.incomplete_imports:
        running = item.get("running")
        if running:  # its process holds the store's writer lock: in progress, not interrupted
            console.print(
                f"[cyan]import in progress[/] {item['import_id']} of "
                f"{escape(str(item['source']))} ({item['kind']}, {item['runs_written']} runs "
                f"written so far, started {item['started_at']}) by process {running['pid']} "
                f"({escape(str(running.get('command') or ''))})",
                highlight=False,
            )
            continue
        console.print(
            f"[yellow]interrupted import[/] {item['import_id']} of {escape(str(item['source']))} "
            f"({item['kind']}, {item['runs_written']} runs written, started "
            f"{item['started_at']}): run the same import again to complete it",
            highlight=False,
        )
    if c.get("failures"):
        console.print(
            f"[yellow]{c['failures']} open job failure(s)[/] of 'glotbench run': "
            f"glotbench failures --store {escape(shlex.quote(summary.path))}",
            highlight=False,
        )


@commands.command("export")
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
