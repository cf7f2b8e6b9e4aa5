"""``glotbench run``, ``failures`` and ``suites``: the benchmark runner's commands."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from glotbench.cli._lazy import api
from glotbench.cli._options import DEFAULT_STORE, JsonOption, LockTimeoutOption, StoreOption
from glotbench.cli._output import (
    console,
    frame_table,
    print_json,
    print_notes,
    speed_table,
    stderr_console,
)
from glotbench.errors import InputError

commands = typer.Typer()


#: characters of the current step shown in the progress bar's label
STEP_WIDTH = 44


def _run_reporter(quiet: bool) -> Any:
    """Progress: a rich bar with ETA on a terminal, one line per job otherwise.

    Events ``(kind, job, info)``: ``step`` (``description``: what is being
    loaded, trained or predicted, from the first second: a spinner, then the
    bar's label on a terminal; otherwise a line for each model's first step),
    ``planned`` (``pending``, ``total``), ``stored`` / ``failed`` per job, and
    ``phase`` (``description``) for a long step after the jobs, shown as a
    spinner on a terminal and as a line otherwise.
    """
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from glotbench.cli.progress import item_columns, rich_item_sink
    from glotbench.runner.progress import set_item_sink

    state: dict[str, Any] = {
        "progress": None,
        "task": None,
        "sink": None,
        "status": None,
        "told": set(),
    }
    err_console = stderr_console()
    interactive = err_console.is_terminal and not quiet

    def on_event(kind: str, job: Any, info: dict[str, Any]) -> None:
        if kind == "step":  # what is being loaded, trained or predicted: from the first second
            _show_step(info["description"])
            return
        if kind == "phase":  # a long step after the jobs (analyses): a spinner with its name
            _stop_bar()
            if interactive:
                if state["status"] is None:
                    status = err_console.status(info["description"])
                    status.start()
                    state["status"] = status
                else:
                    state["status"].update(info["description"])
            elif not quiet:
                err_console.print(f"{info['description']} …", highlight=False)
            return
        if kind == "planned":
            _stop_status()
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
                    f"[red]failed:[/] {escape(job.label())}: {escape(str(info['error']))}",
                    highlight=False,
                )
            elif not interactive and not quiet:
                scores = ", ".join(f"{k}={v:.3f}" for k, v in info["scores"].items())
                err_console.print(f"stored {job.label()}: {scores}", highlight=False)
                sys.stderr.flush()

    def _show_step(text: str) -> None:
        if quiet:
            return
        if not interactive:  # a log: the first step of each model (its loading or training)
            who = text.split(" on ", 1)[0]
            if who not in state["told"]:
                state["told"].add(who)
                err_console.print(f"{text} …", highlight=False)
                sys.stderr.flush()
        elif state["progress"] is not None:  # the bar's line says what runs now
            short = text if len(text) <= STEP_WIDTH else text[: STEP_WIDTH - 1] + "…"
            state["progress"].update(state["task"], description=f"running · {escape(short)}")
        elif state["status"] is None:
            status = err_console.status(escape(text))
            status.start()
            state["status"] = status
        else:
            state["status"].update(escape(text))

    def _stop_status() -> None:
        if state["status"] is not None:
            state["status"].stop()
            state["status"] = None

    def _stop_bar() -> None:
        if state["progress"] is not None:
            set_item_sink(state["sink"])
            state["progress"].stop()
            state["progress"] = None

    def close() -> None:
        _stop_bar()
        _stop_status()

    return on_event, close


def _print_model_kinds(json_output: bool) -> None:
    kinds = api.model_kinds()
    if json_output:
        print_json({"model_kinds": kinds})
        return
    from rich.table import Table

    table = Table(title="model kinds (--model KIND:ID, or kind: in a suite)")
    for column in ("kind", "ID sets", "extra", "description"):
        table.add_column(column, overflow="fold")
    for k in kinds:
        extra = k["extra"] or ""
        if extra and not k["available"]:
            extra += " (missing)"
        table.add_row(k["kind"], k["id_option"] or "name", extra, k["description"])
    console.print(table)
    console.print(
        "extra: pip install 'glotbench[EXTRA]' installs what the kind needs", highlight=False
    )


@commands.command("run")
def run_command(
    suite: Annotated[
        str | None,
        typer.Argument(
            help="Built-in suite name (see 'glotbench suites') or a suite YAML file; "
            "omitted with --model KIND:ID: the built-in euroeval-hub.",
        ),
    ] = None,
    store: StoreOption = DEFAULT_STORE,
    lock_timeout: LockTimeoutOption = None,
    data_dir: Annotated[
        Path | None,
        typer.Option("--data-dir", help="Folder the suite's data paths are relative to."),
    ] = None,
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model",
            help="A model of your own as KIND:ID, e.g. hf:gpt2, openai:NAME, hf-encoder:ID, "
            "majority: (replaces the suite's models), or the name of one of the suite's "
            "models (repeatable; comma lists accepted).",
        ),
    ] = None,
    model_arg: Annotated[
        list[str] | None,
        typer.Option(
            "--model-arg",
            help="key=value option of the --model KIND:ID models (repeatable, or a comma "
            "list as lm-eval's --model_args; values read as YAML: 8, 0.5, true).",
        ),
    ] = None,
    device: Annotated[
        str | None,
        typer.Option("--device", help="Device of KIND:ID models: auto, cpu, cuda, cuda:N, mps."),
    ] = None,
    batch_size: Annotated[
        int | None,
        typer.Option(
            "--batch-size",
            min=1,
            help="Batch size of KIND:ID models (openai: requests in flight).",
        ),
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit", min=1, help="Keep the first N test examples of every dataset (a quick run)."
        ),
    ] = None,
    data: Annotated[
        list[str] | None,
        typer.Option(
            "--data",
            help="A local data file (JSONL/CSV/TSV, .conllu, or a saved HF dataset folder) "
            "for the one --task and --language given: runs without a suite (repeatable).",
        ),
    ] = None,
    dump_suite: Annotated[
        Path | None,
        typer.Option(
            "--dump-suite",
            help="Write the suite YAML of this run (models, datasets, limits) to this file and "
            "stop; 'glotbench run FILE' runs it.",
        ),
    ] = None,
    list_models: Annotated[
        bool,
        typer.Option(
            "--list-models",
            help="List the model kinds of --model KIND:ID and suites (what each needs, "
            "whether it is installed) and stop.",
        ),
    ] = False,
    language: Annotated[
        list[str] | None,
        typer.Option("--language", help="Only this language (repeatable; comma lists accepted)."),
    ] = None,
    task: Annotated[
        list[str] | None,
        typer.Option("--task", help="Only this task (repeatable; comma lists accepted)."),
    ] = None,
    dataset: Annotated[
        list[str] | None,
        typer.Option("--dataset", help="Only this dataset (repeatable; comma lists accepted)."),
    ] = None,
    iterations: Annotated[
        int | None,
        typer.Option("--iterations", min=1, help="Iterations (default: the suite's, 10)."),
    ] = None,
    splits: Annotated[
        str | None,
        typer.Option(
            "--splits",
            help="Override every dataset's split sizes: NAME=SIZE pairs joined by commas, "
            "e.g. train=128 or test=256 (a smaller run, e.g. for CI).",
        ),
    ] = None,
    train_sizes: Annotated[
        str | None,
        typer.Option(
            "--train-sizes",
            help="Learning curves: run every model at these training sizes, e.g. "
            "'64,128,256' (nested training subsets).",
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
    keep_outputs: Annotated[
        bool | None,
        typer.Option(
            "--keep-outputs/--drop-outputs",
            help="Store every test example's prediction or generated text, compressed "
            "(default: for generative models and free-text tasks); 'glotbench examples' "
            "lists them.",
            show_default=False,
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Re-run and replace stored runs.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")] = False,
    json_output: JsonOption = False,
) -> None:
    """Run a benchmark suite (resumable), then show ScandEval scores and inference speed.

    Runs already in the store are skipped, so a re-run resumes where a crash stopped.
    Models can be named here instead of in a suite: glotbench run --model hf:gpt2
    --task sentiment --language da --limit 64.
    """
    if list_models:
        _print_model_kinds(json_output)
        return
    if data and (_count(task) != 1 or _count(language) != 1):  # said in this command's words
        raise InputError("--data needs exactly one --task and one --language for its files")
    selection: dict[str, Any] = {  # the suite's models, data and sizes: dumped or run
        "data_dir": data_dir,
        "models": model or None,
        "languages": language or None,
        "tasks": task or None,
        "datasets": dataset or None,
        "iterations": iterations,
        "split_sizes": splits,
        "train_sizes": train_sizes,
        "speed_seconds": speed_seconds,
        "speed": speed,
        "model_args": model_arg or None,
        "device": device,
        "batch_size": batch_size,
        "limit": limit,
        "data": data or None,
    }
    if dump_suite is not None:
        written, notes = api.dump_suite(dump_suite, suite, **selection)
        if json_output:
            print_json({"suite_file": str(written), "notes": notes})
        else:
            print_notes(notes)
            console.print(f"suite written to {written}", highlight=False)
        return
    on_event, close = _run_reporter(quiet or json_output)
    try:
        result = api.run_benchmark(
            suite,
            store=store,
            executor=executor,
            force=force,
            num_cpus=num_cpus,
            ray_address=ray_address,
            on_event=on_event,
            shards=shards,
            merge=merge,
            keep_outputs=keep_outputs,
            **selection,
        )
    finally:
        close()
    if json_output:
        print_json(result.to_dict())
    else:
        print_notes(result.notes)
        if result.by_dataset is not None and not result.by_dataset.empty:
            console.print(
                frame_table(
                    _scandeval_display(result.by_dataset),
                    title=f"{result.suite}: ScandEval scores (mean ± 1.96·SD/√N; a "
                    "multilingual dataset's per-language runs as their mean and range)",
                )
            )
        if result.speed is not None and len(result.speed):
            console.print(speed_table(result.speed))
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
                f"table (with tracebacks); list them with: {escape(listing)}",
                highlight=False,
            )
        raise JobError(
            f"{len(result.failures)} job(s) failed (listed above and recorded in the store: "
            f"{listing}); the others are stored. Fix the cause and run the same command "
            "again to resume: a job that then succeeds marks its failure resolved."
        )


def _scandeval_display(by_dataset: Any) -> Any:
    """Rows of :func:`glotbench.analysis.dataset_scores.scores_by_dataset` as ScandEval shows
    them: score ± half-width, or a multilingual dataset's mean (minimum–maximum)."""
    import pandas as pd

    rows = []
    for row in by_dataset.to_dict(orient="records"):
        if row["n_languages"] == 1:
            half = row["ci_half_width"]
            score = f"{row['score']:.3f}" + (f" ± {half:.3f}" if half == half else "")
            language = row["language"]
        else:
            score = f"{row['score']:.3f} ({row['score_min']:.3f}–{row['score_max']:.3f})"
            language = f"{row['n_languages']} languages"
        rows.append(
            {
                "model": row["model"],
                "dataset": row["dataset"],
                "language": language,
                "metric": row["metric"],
                "iterations": int(row["iterations"]),
                "score": score,
            }
        )
    return pd.DataFrame(rows)


#: the filters 'failures' and 'examples' share
DatasetFilter = Annotated[
    list[str] | None, typer.Option("--dataset", help="Only this dataset (repeatable).")
]
LanguageFilter = Annotated[
    list[str] | None, typer.Option("--language", help="Only this language (repeatable).")
]


@commands.command("failures")
def failures_command(
    store: StoreOption = DEFAULT_STORE,
    model: Annotated[
        list[str] | None, typer.Option("--model", help="Only this model (repeatable).")
    ] = None,
    dataset: DatasetFilter = None,
    task: Annotated[
        list[str] | None, typer.Option("--task", help="Only this task (repeatable).")
    ] = None,
    language: LanguageFilter = None,
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
            console.print(
                f"\n[bold]{rec.failure_id}[/] {escape(str(rec.model))} on "
                f"{escape(str(rec.dataset))}:"
            )
            console.print(rec.traceback or "(no traceback recorded)", highlight=False, markup=False)
    if resolve:
        console.print(f"marked {result.resolved_now} failure(s) resolved", highlight=False)
    elif not include_resolved:
        console.print(
            "Fix the cause and run the suite again: a job that succeeds marks its failures "
            "resolved (--all lists them too; --traceback shows where each one failed).",
            highlight=False,
        )


@commands.command("examples")
def examples_command(
    store: StoreOption = DEFAULT_STORE,
    model: Annotated[
        list[str] | None,
        typer.Option("--model", help="A model whose kept outputs to show (repeatable)."),
    ] = None,
    dataset: DatasetFilter = None,
    language: LanguageFilter = None,
    seed: Annotated[
        list[int] | None, typer.Option("--seed", help="Only this seed (repeatable).")
    ] = None,
    disagree: Annotated[
        bool, typer.Option("--disagree", help="Only examples where the models' outputs differ.")
    ] = False,
    all_wrong: Annotated[
        bool,
        typer.Option("--all-wrong", help="Only examples no model gets right (exact match)."),
    ] = False,
    limit: Annotated[
        int, typer.Option("--limit", min=1, help="Examples shown (the total is reported).")
    ] = 20,
    samples: Annotated[
        Path | None,
        typer.Option(
            "--samples",
            help="Also write the selected examples as lm-eval-style samples JSONL "
            "(one line per model and example).",
        ),
    ] = None,
    json_output: JsonOption = False,
) -> None:
    """Kept outputs (predictions, generated texts) of models side by side, example by example."""
    result = api.kept_examples(
        store,
        models=model or [],
        datasets=dataset,
        languages=language,
        seeds=seed,
        disagree=disagree,
        all_wrong=all_wrong,
        limit=limit,
    )
    if samples is not None:
        import json

        from glotbench.store.atomic_files import write_text_atomic

        lines = [json.dumps(r, ensure_ascii=False, default=str) for r in result.samples()]
        write_text_atomic(samples, "".join(line + "\n" for line in lines))
    if json_output:
        print_json(result.to_dict())
        return
    print_notes(result.notes)
    frame = result.to_frame().astype(object)
    for col in frame.columns:
        frame[col] = [
            "—" if v is None else (v if isinstance(v, str) else str(v)) for v in frame[col]
        ]
    what = "where the outputs differ" if disagree else "kept"
    console.print(
        frame_table(
            frame,
            title=f"{len(frame)} of {result.total} example(s) {what}"
            + (", none right" if all_wrong else ""),
        )
    )
    if samples is not None:
        console.print(f"samples written to {samples}", highlight=False)


@commands.command("suites")
def suites_command(json_output: JsonOption = False) -> None:
    """List the built-in benchmark suites."""
    suites = api.list_suites()
    if json_output:
        print_json({"suites": suites})
        return
    for name, description in suites.items():
        console.print(f"[bold]{name}[/]  {description}", highlight=False)


def _count(values: list[str] | None) -> int:
    """How many names repeated or comma-separated options give (``--task a,b``: 2)."""
    return len([part for value in values or [] for part in value.split(",") if part.strip()])
