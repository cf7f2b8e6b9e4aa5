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
from glotbench.cli._run_options import (
    BatchSizeOption,
    DataDirOption,
    DataOption,
    DeviceOption,
    DumpSuiteOption,
    ExecutorOption,
    ForceOption,
    IterationsOption,
    KeepOutputsOption,
    LimitOption,
    ListModelsOption,
    MergeOption,
    ModelArgOption,
    ModelOption,
    NumCpusOption,
    QuietOption,
    RayAddressOption,
    RunDatasetOption,
    RunLanguageOption,
    RunTaskOption,
    ShardsOption,
    SpeedOption,
    SpeedSecondsOption,
    SplitsOption,
    SuiteArgument,
    TrainSizesOption,
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
    spinner on a terminal and as a line otherwise. Returns ``(on_event, close)``.
    """
    reporter = _RunReporter(quiet)
    return reporter.on_event, reporter.close


class _RunReporter:
    """The state behind :func:`_run_reporter`: the bar, its task, the item sink it replaced,
    the spinner, and the models whose first step a log has shown."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.progress: Any = None
        self.task: Any = None
        self.sink: Any = None
        self.status: Any = None
        self.told: set[str] = set()
        self.err_console = stderr_console()
        self.interactive = self.err_console.is_terminal and not quiet

    def on_event(self, kind: str, job: Any, info: dict[str, Any]) -> None:
        if kind == "step":  # what is being loaded, trained or predicted: from the first second
            self._show_step(info["description"])
        elif kind == "phase":  # a long step after the jobs (analyses): a spinner with its name
            self._phase(info["description"])
        elif kind == "planned":
            self._planned(info["pending"], info["total"])
        elif kind in ("stored", "failed"):
            self._job_done(kind, job, info)

    def _phase(self, description: str) -> None:
        self._stop_bar()
        if self.interactive:
            if self.status is None:
                status = self.err_console.status(description)
                status.start()
                self.status = status
            else:
                self.status.update(description)
        elif not self.quiet:
            self.err_console.print(f"{description} …", highlight=False)

    def _planned(self, pending: int, total: int) -> None:
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

        self._stop_status()
        if self.interactive and pending:
            progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                *item_columns(),
                console=self.err_console,
            )
            progress.start()
            self.progress = progress
            self.task = progress.add_task("running", total=pending)
            # rows with items done and items/s inside long jobs (HF models)
            self.sink = set_item_sink(rich_item_sink(progress))
        elif not self.quiet:
            self.err_console.print(
                f"{pending} of {total} jobs to run ({total - pending} already stored)",
                highlight=False,
            )

    def _job_done(self, kind: str, job: Any, info: dict[str, Any]) -> None:
        if self.progress is not None:
            self.progress.advance(self.task)
        if kind == "failed":
            self.err_console.print(
                f"[red]failed:[/] {escape(job.label())}: {escape(str(info['error']))}",
                highlight=False,
            )
        elif not self.interactive and not self.quiet:
            scores = ", ".join(f"{k}={v:.3f}" for k, v in info["scores"].items())
            self.err_console.print(f"stored {job.label()}: {scores}", highlight=False)
            sys.stderr.flush()

    def _show_step(self, text: str) -> None:
        if self.quiet:
            return
        if not self.interactive:  # a log: the first step of each model (its loading or training)
            who = text.split(" on ", 1)[0]
            if who not in self.told:
                self.told.add(who)
                self.err_console.print(f"{text} …", highlight=False)
                sys.stderr.flush()
        elif self.progress is not None:  # the bar's line says what runs now
            short = text if len(text) <= STEP_WIDTH else text[: STEP_WIDTH - 1] + "…"
            self.progress.update(self.task, description=f"running · {escape(short)}")
        elif self.status is None:
            status = self.err_console.status(escape(text))
            status.start()
            self.status = status
        else:
            self.status.update(escape(text))

    def _stop_status(self) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None

    def _stop_bar(self) -> None:
        from glotbench.runner.progress import set_item_sink

        if self.progress is not None:
            set_item_sink(self.sink)
            self.progress.stop()
            self.progress = None

    def close(self) -> None:
        self._stop_bar()
        self._stop_status()


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
    suite: SuiteArgument = None,
    store: StoreOption = DEFAULT_STORE,
    lock_timeout: LockTimeoutOption = None,
    data_dir: DataDirOption = None,
    model: ModelOption = None,
    model_arg: ModelArgOption = None,
    device: DeviceOption = None,
    batch_size: BatchSizeOption = None,
    limit: LimitOption = None,
    data: DataOption = None,
    dump_suite: DumpSuiteOption = None,
    list_models: ListModelsOption = False,
    language: RunLanguageOption = None,
    task: RunTaskOption = None,
    dataset: RunDatasetOption = None,
    iterations: IterationsOption = None,
    splits: SplitsOption = None,
    train_sizes: TrainSizesOption = None,
    executor: ExecutorOption = "local",
    num_cpus: NumCpusOption = None,
    ray_address: RayAddressOption = None,
    shards: ShardsOption = None,
    merge: MergeOption = True,
    speed: SpeedOption = True,
    speed_seconds: SpeedSecondsOption = None,
    keep_outputs: KeepOutputsOption = None,
    force: ForceOption = False,
    quiet: QuietOption = False,
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
        _print_run(result)
    if result.failures:
        _raise_failures(result, json_output)


def _print_run(result: Any) -> None:
    """The run's notes, its ScandEval scores, the models' speed and what was run and stored."""
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


def _raise_failures(result: Any, json_output: bool) -> None:
    """Say where the failed jobs are recorded and how to resume; end with a JobError."""
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
