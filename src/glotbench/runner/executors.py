"""Running a suite: one job list, through the executors of :mod:`glotbench.runner.backends`
(local, processes, Ray).

:func:`run_suite` builds every dataset once (in the driver), plans the jobs,
skips those whose runs are all stored (unless ``force``), executes the rest
through the chosen executor and writes each finished job to the store as soon
as it arrives — all runs of a job in one transaction (with ``force``, the
replaced runs are deleted in that same transaction), so an interrupted run
(Ctrl-C, SIGKILL) loses at most the jobs in flight and resumes where it
stopped. The store is opened with ``hold=False``: it is locked only while
the driver reads or writes it, so other processes read it between jobs. A
job that fails (a model raising on an item, a wrong predictions
file, statistics that cannot be stored, ...) is recorded in the store's
``failures`` table (``store.failures.record``, with its traceback) and in
the summary; the other jobs still run and are stored. When the job later
succeeds, the transaction that stores its runs marks the failure resolved.
"""

from __future__ import annotations

import dataclasses
import json
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from glotbench.errors import InputError
from glotbench.ingest.shards import (
    ShardMerge,
    list_shards,
    merge_shard,
    merge_shards,
    read_header,
)
from glotbench.runner.backends import JobFailure, ShardReceipt, job_failure, make_executor
from glotbench.runner.datasets import Dataset, build_dataset
from glotbench.runner.errors import UnknownNameError
from glotbench.runner.progress import set_step_sink
from glotbench.runner.protocol import (
    Job,
    JobOutcome,
    config_hash,
    keeps_outputs,
    run_keys,
    write_outcome,
)
from glotbench.runner.suite import Suite
from glotbench.runner.transfer import derive


@dataclass
class RunSummary:
    """What ``glotbench run`` did."""

    suite: str
    store: str
    executor: str
    jobs: int
    skipped: int
    completed: int
    runs_written: int
    failures: list[JobFailure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    datasets: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    scores: pd.DataFrame | None = None
    #: shard mode: the folder, and the merge of shards left by an earlier run
    shards: str | None = None
    shard_merge: ShardMerge | None = None
    #: inference speed per model (an ``analysis.speed.SpeedTable``, set by ``api.run_benchmark``)
    speed: Any = None
    #: scores per model, dataset and metric, a multilingual dataset's languages collapsed
    #: (``analysis.dataset_scores.scores_by_dataset``, set by ``api.run_benchmark``)
    by_dataset: pd.DataFrame | None = None
    #: model -> config hash of the runs this suite makes (with this installation's data)
    configs: dict[str, str] = field(default_factory=dict)

    def to_frame(self) -> pd.DataFrame:
        return self.scores if self.scores is not None else pd.DataFrame()

    def to_dict(self) -> dict[str, Any]:
        scores = self.to_frame()
        return {
            "suite": self.suite,
            "store": self.store,
            "executor": self.executor,
            "jobs": self.jobs,
            "skipped": self.skipped,
            "completed": self.completed,
            "runs_written": self.runs_written,
            "failures": [f.to_dict() for f in self.failures],
            "notes": list(self.notes),
            "datasets": self.datasets,
            "seconds": self.seconds,
            **(
                {
                    "shards": self.shards,
                    "shard_merge": self.shard_merge.to_dict() if self.shard_merge else None,
                }
                if self.shards is not None
                else {}
            ),
            "scores": [
                {k: (None if isinstance(v, float) and v != v else v) for k, v in row.items()}
                for row in scores.to_dict(orient="records")
            ],
            **({"speed": self.speed.to_dict()} if self.speed is not None else {}),
        }


#: ``(kind, job, info)``; ``job`` is None for the steps of the run itself
Event = Callable[[str, Job | None, dict[str, Any]], None]


def reject_shard(path: str | Path) -> Path:
    """Hide a shard that cannot be merged (``.NAME.rejected``): kept to inspect, never merged."""
    source = Path(path)
    target = source.with_name(f".{source.name}.rejected")
    source.replace(target)
    return target


def shard_run_ids(folder: str | Path) -> set[str]:
    """Run ids of the complete shards in ``folder`` (footers only; unreadable files ignored)."""
    ids: set[str] = set()
    for path in list_shards(folder)[0]:
        try:
            ids.update(read_header(path, extras=False).run_ids)
        except InputError:
            continue
    return ids


def build_datasets(suite: Suite, jobs: Sequence[Job] = ()) -> dict[str, Dataset]:
    """Every dataset of the suite, loaded and split once, keyed by name; plus, for
    ``jobs`` of a cross-lingual protocol, each target trained on other datasets'
    training splits (:func:`glotbench.runner.transfer.derive`), keyed by ``Job.dataset_key``."""
    names = [d.name for d in suite.datasets]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise UnknownNameError(
            f"suite {suite.name!r} names dataset(s) {sorted(dup)} more than once"
        )
    out = {d.name: build_dataset(d, data_dir=suite.base_dir) for d in suite.datasets}
    for job in jobs:
        key = job.dataset_key
        if key not in out and job.dataset.train_size is not None:  # a learning curve's size
            out[key] = build_dataset(job.dataset, data_dir=suite.base_dir)
        elif key not in out:
            out[key] = derive(out[job.dataset.name], [out[n] for n in job.train_from])
    return out


class NoJobError(InputError):
    """The suite, after its filters, pairs no model with a dataset it can evaluate.

    Raised before the store is opened, so a selection that runs nothing leaves no
    store behind.
    """

    def __init__(self, suite: Suite, notes: Sequence[str]) -> None:
        from glotbench.runner.tasks import get_task

        models = ", ".join(repr(m.name) for m in suite.models) or "none"
        datasets = (
            ", ".join(f"{d.name!r} ({get_task(d.task).name}, {d.language})" for d in suite.datasets)
            or "none"
        )
        message = (
            f"suite {suite.name!r} has no job to run: none of the selected models ({models}) "
            f"evaluates any of the selected datasets ({datasets}); choose models and tasks "
            "that fit (`glotbench suites` lists each suite's models and datasets)"
        )
        if notes:
            message += "; " + "; ".join(notes)
        super().__init__(message)


def response_cache_path(store: str | Path) -> str:
    """The file beside ``store`` caching HTTP models' responses: ``<store>.responses.sqlite``."""
    return str(Path(store).resolve()) + ".responses.sqlite"


def run_suite(
    suite: Suite,
    *,
    store: str | Path,
    executor: str = "local",
    force: bool = False,
    on_event: Event | None = None,
    num_cpus: int | None = None,
    ray_address: str | None = None,
    shards: str | Path | None = None,
    merge: bool = True,
    scores: bool = True,
    keep_outputs: bool | None = None,
) -> RunSummary:
    """Run (or resume) every job of ``suite`` and store the statistics.

    With ``shards`` (a folder every worker can write to), each job's
    statistics are written by the worker as a Parquet shard
    (:func:`glotbench.ingest.shards.write_shard`, atomically) and the driver
    merges the shard when the job reports back — one transaction per job, the
    driver still the only writer of the store. Shards already in the folder
    (a killed run) are merged before the jobs are planned, so their jobs are
    not run again. With ``merge=False`` the shards are left for a later
    ``glotbench import shards`` (:func:`~glotbench.ingest.shards.merge_shards`).

    ``keep_outputs`` stores each test example's prediction or generated text
    (:mod:`glotbench.store.outputs`); None: for generative models and
    free-text tasks only. Shards carry statistics only, not outputs.
    """
    from glotbench.runner.protocol import scandeval_scores
    from glotbench.store.store import Store

    started = time.perf_counter()
    jobs, notes = suite.jobs()
    if not jobs:
        raise NoJobError(suite, notes)
    jobs = _session_jobs(suite, jobs, store, keep_outputs)
    emit = on_event or (lambda *_: None)
    names = ", ".join(d.name for d in suite.datasets)
    emit("step", None, {"description": f"building the data ({names}) and planning the jobs"})
    datasets = build_datasets(suite, jobs)
    own = [datasets[d.name] for d in suite.datasets]  # without the derived transfer datasets
    for ds in own:
        notes.extend(f"dataset {ds.name!r}: {n}" for n in ds.notes)
    summary = RunSummary(
        suite=suite.name,
        store=str(store),
        executor=executor,
        jobs=len(jobs),
        skipped=0,
        completed=0,
        runs_written=0,
        notes=notes,
        datasets=[ds.describe() for ds in own],
        shards=str(shards) if shards is not None else None,
        configs={job.model.name: config_hash(job, datasets[job.dataset_key]) for job in jobs},
    )
    shard_folder = str(Path(shards).resolve()) if shards is not None else None
    # hold=False: the file is locked only while the driver reads or writes it
    # (planning, each job's write, the final scores), never while jobs execute,
    # so `glotbench show` / analyses can read the store during a run; each of those
    # blocks also holds the store's writer lock (_writing), so it decides and writes
    # between imports, never in the middle of one
    with Store.open(store, hold=False) as handle:
        pending = _plan_pending(
            handle, suite, jobs, datasets, summary, shard_folder, merge, force, emit
        )
        emit(
            "planned",
            pending[0] if pending else jobs[0] if jobs else None,  # type: ignore[arg-type]
            {"pending": len(pending), "total": len(jobs)},
        )
        if pending:
            _execute(
                handle,
                suite,
                pending,
                datasets,
                summary,
                emit,
                force=force,
                merge=merge,
                executor=executor,
                num_cpus=num_cpus,
                ray_address=ray_address,
                shard_folder=shard_folder,
            )
        model_names = sorted({j.model.name for j in jobs})
        ds_names = sorted(ds.name for ds in own)
        if scores:  # the caller may compute them itself (e.g. from a cache)
            with _writing(handle):  # a consistent view: no import half-written
                summary.scores = (
                    scandeval_scores(handle, models=model_names, datasets=ds_names)
                    if model_names and ds_names
                    else pd.DataFrame()
                )
    summary.seconds = time.perf_counter() - started
    return summary


def _session_jobs(
    suite: Suite, jobs: Sequence[Job], store: str | Path, keep_outputs: bool | None
) -> list[Job]:
    """The suite's jobs with this run's session, suite name, response cache and outputs flag."""
    session = uuid.uuid4().hex  # adapters / deterministic predictions are reused within it
    cache = response_cache_path(store)
    return [
        dataclasses.replace(
            job,
            session=session,
            suite=suite.name,
            response_cache=cache,
            keep_outputs=keeps_outputs(job, keep_outputs),
        )
        for job in jobs
    ]


def _execute(
    handle: Any,
    suite: Suite,
    pending: list[Job],
    datasets: dict[str, Dataset],
    summary: RunSummary,
    emit: Event,
    *,
    force: bool,
    merge: bool,
    executor: str,
    num_cpus: int | None,
    ray_address: str | None,
    shard_folder: str | None,
) -> None:
    """Run the pending jobs through the executor, storing each result as it arrives and
    recording each failure (:func:`_store_result`)."""
    runner = make_executor(
        executor,
        **(
            {"num_cpus": num_cpus, "address": ray_address}
            if executor == "ray"
            else {"num_cpus": num_cpus}
            if executor == "processes"
            else {}
        ),
    )
    source = f"glotbench run {suite.name} (executor {executor})"
    previous_sink = set_step_sink(lambda text: emit("step", None, {"description": text}))
    try:
        for batch in runner.batches(pending, datasets, suite.base_dir, shard_folder):
            # one opening of the file for the results that arrived together (each job still
            # in its own transactions): each opening and closing costs DuckDB a checkpoint,
            # 35 of them ~2.6 s of the demo's CPU (docs/performance.md, Demo)
            with _writing(handle) if len(batch) > 1 else nullcontext():
                for result in batch:
                    _store_or_record(
                        handle,
                        result,
                        pending,
                        datasets,
                        summary,
                        emit,
                        source,
                        force=force,
                        merge=merge,
                    )
    finally:
        runner.close()
        set_step_sink(previous_sink)


def _store_or_record(
    handle: Any,
    result: JobOutcome | ShardReceipt | JobFailure,
    pending: list[Job],
    datasets: dict[str, Dataset],
    summary: RunSummary,
    emit: Event,
    source: str,
    *,
    force: bool,
    merge: bool,
) -> None:
    """Store one executor result, or record it as the job's failure (:func:`_store_result`)."""
    failure = _store_result(handle, result, datasets, summary, force, merge, emit)
    if failure is None:
        return
    with _writing(handle):
        failure.failure_id = _record(handle, failure, source)
    summary.failures.append(failure)
    emit(
        "failed",
        _job_of(pending, failure),
        {"error": failure.error, "failure_id": failure.failure_id},
    )


def _plan_pending(
    handle: Any,
    suite: Suite,
    jobs: list[Job],
    datasets: dict[str, Dataset],
    summary: RunSummary,
    shard_folder: str | None,
    merge: bool,
    force: bool,
    emit: Event,
) -> list[Job]:
    """Record the suite in the store, merge the shards of an interrupted run and return the
    jobs still to run (the others counted as skipped)."""
    from glotbench.store.store import SUITE_META_PREFIX

    with _writing(handle):
        # the suite's own title and description, for leaderboards and reports of the store
        handle.set_meta(
            f"{SUITE_META_PREFIX}{suite.name}",
            json.dumps({"title": suite.title, "description": suite.description}),
        )
        if shard_folder is not None:
            Path(shard_folder).mkdir(parents=True, exist_ok=True)
            if merge:  # shards of an interrupted run: merge them, their jobs are done
                try:
                    summary.shard_merge = merge_shards(handle, shard_folder)
                except InputError as exc:  # the jobs of the shards not merged run again
                    summary.notes.append(f"shards left in {shard_folder} not all merged: {exc}")
                else:
                    summary.runs_written += summary.shard_merge.runs_written
        complete = handle.runs.completed_ids()
    if shard_folder is not None and not merge:  # jobs whose shard is already written
        complete |= shard_run_ids(shard_folder)
    pending: list[Job] = []
    for job in jobs:
        ids = [k.run_id for k in run_keys(job, datasets[job.dataset_key])]
        if not force and all(i in complete for i in ids):
            summary.skipped += 1
            emit("skipped", job, {})
        else:
            pending.append(job)
    return pending


def _store_result(
    handle: Any,
    result: JobOutcome | ShardReceipt | JobFailure,
    datasets: dict[str, Dataset],
    summary: RunSummary,
    force: bool,
    merge: bool,
    emit: Event,
) -> JobFailure | None:
    """Write one executor result to the store (a job's runs or its shard, in the job's own
    transactions) and count it; None when stored, else the job's failure to record."""
    if isinstance(result, ShardReceipt):
        try:
            with _writing(handle):  # one lock for the shard's transactions
                written = merge_shard(handle, result.path, replace=force) if merge else 0
        except InputError as exc:  # e.g. non-finite statistics: nothing written
            reject_shard(result.path)
            dataset = datasets[result.job.dataset_key]
            result = job_failure(result.job, dataset, exc)  # type: ignore[assignment]
        else:
            summary.runs_written += written
            summary.completed += 1
            emit(
                "stored",
                result.job,
                {
                    "scores": result.scores,
                    "written": written,
                    "shard": result.path,
                    "shard_write_seconds": result.write_seconds,
                },
            )
            return None
    if isinstance(result, JobOutcome):
        try:
            with _writing(handle):  # one lock for the job's transactions
                if not force:
                    summary.notes.extend(stored_differently(handle, result))
                written = write_outcome(handle, result, force=force)
        except InputError as exc:  # e.g. non-finite statistics: nothing written
            result = job_failure(result.job, datasets[result.job.dataset_key], exc)
        else:
            summary.runs_written += written
            summary.completed += 1
            emit(
                "stored",
                result.job,
                {"scores": result.scores(), "written": written},
            )
            return None
    return result


@contextmanager
def _writing(handle: Any) -> Iterator[Any]:
    """The store's writer lock, then its file, for one of the driver's blocks.

    Always in this order (as importers take them), so a driver and an import
    never each hold the lock the other waits for. Held only around planning,
    each job's write and the final scores — never while jobs execute — so an
    import can run between two jobs' writes and readers are never blocked
    (:mod:`glotbench.store.writer_lock`).
    """
    with handle.writing(), handle.held():
        yield handle


def stored_differently(store: Any, outcome: JobOutcome) -> list[str]:
    """Notes for the runs of ``outcome`` already stored with other statistics.

    Called under the writer lock just before :func:`write_outcome`, which
    skips stored runs: an import (or another run) stored the key first, so
    the stored result is kept and this job's copy is not written. Compares
    the statistics' digests (:func:`glotbench.store.schema.stats_digest`).
    """
    from glotbench.store.schema import stats_digest

    stored = store.runs.stored(record.run_id for record, _, _ in outcome.runs)
    notes = []
    for record, ids, stats in outcome.runs:
        existing = stored.get(record.run_id)
        if existing is None:
            continue
        if stats_digest(ids, stats, tuple(record.stat_names)) != existing["stats_sha256"]:
            notes.append(
                f"run {record.describe()} not written: it is already stored with different "
                f"statistics ({existing['n_examples']} examples, from {existing['source']}); "
                "the stored one is kept (re-run with force=True to replace it)"
            )
    return notes


def _record(store: Any, failure: JobFailure, source: str) -> str:
    """Record a failure in the store's ``failures`` table; returns its id."""
    return str(
        store.failures.record(
            model=failure.model,
            dataset=failure.dataset,
            task=failure.task,
            language=failure.language,
            seed=failure.seed,
            config_hash=failure.config_hash,
            iteration=failure.iteration,
            error_type=failure.kind,
            message=failure.error,
            traceback=failure.traceback,
            source=source,
        )
    )


def _job_of(jobs: list[Job], failure: JobFailure) -> Job:
    return next((j for j in jobs if j.label() == failure.job), jobs[0])
