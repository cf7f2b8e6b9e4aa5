"""The executors of a job list: local (in process), processes and Ray.

Each executes jobs and yields, per job, its outcome (or, with shards, a
receipt of the shard file it wrote) or a :class:`JobFailure`; the driver
(:func:`glotbench.runner.executors.run_suite`) writes them to the store.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from glotbench.errors import GlotbenchError
from glotbench.ingest.shards import (
    write_shard,
)
from glotbench.runner.datasets import Dataset
from glotbench.runner.errors import UnknownNameError
from glotbench.runner.progress import report_step, set_step_sink
from glotbench.runner.protocol import (
    Job,
    JobOutcome,
    execute_job,
    run_keys,
)

EXECUTORS = ("local", "processes", "ray")


@dataclass
class JobFailure:
    """A job that failed: its label, error message and error type, and its key.

    ``failure_id`` is set once the failure is recorded in the store.
    """

    job: str
    error: str
    kind: str
    model: str = ""
    dataset: str = ""
    task: str = ""
    language: str = ""
    seed: int | None = None
    config_hash: str = ""
    iteration: int | None = None
    traceback: str | None = None
    failure_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form (without the traceback; ``glotbench failures --json`` has it)."""
        return {
            "job": self.job,
            "error": self.error,
            "kind": self.kind,
            "model": self.model,
            "dataset": self.dataset,
            "task": self.task,
            "language": self.language,
            "seed": self.seed,
            "iteration": self.iteration,
            "config_hash": self.config_hash,
            "failure_id": self.failure_id,
        }


def job_failure(job: Job, dataset: Dataset, exc: BaseException) -> JobFailure:
    """The failure of ``job`` with its key (as its runs would have it) and full traceback."""
    if isinstance(exc, GlotbenchError):
        message = str(exc)
    else:  # a bug in a model adapter or user code: name the exception type
        message = traceback.format_exception_only(type(exc), exc)[-1].strip()
    try:  # the config hash the job's runs have (their key), so a success resolves this
        chash = run_keys(job, dataset)[0].config_hash
    except Exception:  # the key itself cannot be built
        chash = ""
    return JobFailure(
        job=job.label(),
        error=message,
        kind=type(exc).__name__,
        model=job.model.name,
        dataset=dataset.name,
        task=dataset.task,
        language=dataset.language,
        seed=job.seed,
        config_hash=chash,
        iteration=job.iteration,
        traceback="".join(traceback.format_exception(exc)),
    )


@dataclass
class ShardReceipt:
    """What a worker returns in shard mode: where it wrote the job's shard, not the statistics."""

    job: Job
    path: str
    run_ids: list[str]
    scores: dict[str, float]
    job_seconds: float
    write_seconds: float


def _safe_execute(
    job: Job, dataset: Dataset, base: str | None, shards: str | None = None
) -> JobOutcome | ShardReceipt | JobFailure:
    """Run one job; in shard mode (``shards`` a folder) write its shard and return a receipt."""
    try:
        outcome = execute_job(job, dataset, base=base)
        if shards is None:
            return outcome
        t0 = time.perf_counter()
        path = write_shard(
            shards,
            [
                (record, ids, stats, pos)
                for (record, ids, stats), pos in zip(
                    outcome.runs,
                    outcome.source_positions or [None] * len(outcome.runs),
                    strict=True,
                )
            ],
            job=job.label(),
            attributes=outcome.attributes,
            unit_stats=outcome.unit_stats,
        )
        return ShardReceipt(
            job=job,
            path=str(path),
            run_ids=[record.run_id for record, _, _ in outcome.runs],
            scores=outcome.scores(),
            job_seconds=outcome.seconds,
            write_seconds=time.perf_counter() - t0,
        )
    except Exception as exc:  # keep going: the driver records the failure
        return job_failure(job, dataset, exc)


def job_groups(jobs: Sequence[Job]) -> list[list[Job]]:
    """``jobs`` as the tasks of a worker pool: the iterations of a deterministic model on
    one dataset together (one worker loads the model and predicts once, its other
    iterations reuse the predictions: ``deterministic`` in a suite), every other job alone.
    Split over two workers, the model would be loaded and run twice (the demo's lingua:
    ~14 s of CPU each time). Order is kept: a group sits where its first job was."""
    groups: list[list[Job]] = []
    index: dict[tuple[str, str, str], int] = {}
    for job in jobs:
        if not job.model.deterministic:
            groups.append([job])
            continue
        key = (job.model.name, job.model.config_hash(), job.dataset_key)
        if key in index:
            groups[index[key]].append(job)
        else:
            index[key] = len(groups)
            groups.append([job])
    return groups


def _safe_execute_group(
    jobs: list[Job], dataset: Dataset, base: str | None, shards: str | None = None
) -> list[JobOutcome | ShardReceipt | JobFailure]:
    """The jobs of one :func:`job_groups` group, one after another in this worker."""
    return [_safe_execute(job, dataset, base, shards) for job in jobs]


class _OneResultABatch:
    """:meth:`batches` for an executor whose results come back one at a time."""

    def map(
        self,
        jobs: list[Job],
        datasets: dict[str, Dataset],
        base: str | None,
        shards: str | None = None,
    ) -> Iterator[JobOutcome | ShardReceipt | JobFailure]:
        """Each job's result as it comes back (every executor defines it)."""
        raise NotImplementedError

    def batches(
        self,
        jobs: list[Job],
        datasets: dict[str, Dataset],
        base: str | None,
        shards: str | None = None,
    ) -> Iterator[list[JobOutcome | ShardReceipt | JobFailure]]:
        """The results one at a time (each a list of one, as :meth:`ProcessExecutor.batches`)."""
        for result in self.map(jobs, datasets, base, shards):
            yield [result]


class LocalExecutor(_OneResultABatch):
    """Jobs one after another in this process.

    BLAS thread pools are limited to ``blas_threads`` (default 1) while a job
    runs, as in a Ray worker: the small linear-algebra calls of the baselines
    run faster on one thread than spread over busy cores (see
    ``docs/performance.md``, Runner), and local and Ray runs then use the
    same kernels. ``blas_threads=None`` leaves the libraries' defaults.
    """

    name = "local"

    def __init__(self, *, blas_threads: int | None = 1) -> None:
        self.blas_threads = blas_threads

    def map(
        self,
        jobs: list[Job],
        datasets: dict[str, Dataset],
        base: str | None,
        shards: str | None = None,
    ) -> Iterator[JobOutcome | ShardReceipt | JobFailure]:
        from contextlib import nullcontext

        from threadpoolctl import threadpool_limits

        for job in jobs:
            limits = (
                threadpool_limits(limits=self.blas_threads, user_api="blas")
                if self.blas_threads is not None
                else nullcontext()
            )
            with limits:
                outcome = _safe_execute(job, datasets[job.dataset_key], base, shards)
            yield outcome

    def close(self) -> None:
        pass


def _relay_steps(steps: Any) -> None:
    """Driver thread: the steps the workers report, to this process's step sink."""
    while True:
        try:
            text = steps.get()
        except (EOFError, OSError):  # the queue was closed
            return
        if text is None:
            return
        report_step(text)


#: environment variables the BLAS libraries read when they load (threads of their pools)
_BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")


def _limit_blas(threads: int | None, parent: int | None = None, steps: Any = None) -> None:
    """Worker initializer: BLAS thread pools limited as in :class:`LocalExecutor`.

    ``parent``: the driver's process id; the worker ends when the driver does
    (:func:`glotbench.runner.worker_guard.die_with_parent`). ``steps``: a queue the
    worker's job steps (:func:`glotbench.runner.progress.report_step`) go to.
    """
    if steps is not None:
        set_step_sink(steps.put)
    if parent is not None:
        from glotbench.runner.worker_guard import die_with_parent

        die_with_parent(parent)
    if threads is not None:
        import os

        from threadpoolctl import threadpool_limits

        # the libraries loaded later in this worker too: threadpool_limits reaches only
        # those loaded now (numpy's OpenBLAS), while scipy's own OpenBLAS loads with the
        # first job (sklearn). Unlimited, its two threads spun against the other worker:
        # each char-logreg fit of the demo took 3.3 s of CPU instead of 1.2 s.
        for name in _BLAS_THREAD_VARIABLES:
            os.environ[name] = str(threads)
        threadpool_limits(limits=threads, user_api="blas")


class ProcessExecutor:
    """Jobs in ``workers`` worker processes on this machine (default: the CPU count, at most 4).

    The standard library's process pool with fresh (spawned) interpreters, so
    a worker never inherits the driver's open store or threads; each job is
    sent with its dataset and returns its statistics to the driver, which
    alone writes to the store — as with Ray, without a cluster to start.
    Results arrive as jobs finish. Each worker keeps its own loaded pretrained
    models and deterministic predictions (``protocol._ADAPTER_CACHE``), so a
    model split over two workers is loaded twice. Workers end when the driver
    ends, however it ends (``kill -9`` included; :mod:`glotbench.runner.worker_guard`).
    """

    name = "processes"

    def __init__(self, *, workers: int | None = None, blas_threads: int | None = 1) -> None:
        import os

        self.workers = max(1, workers or min(os.cpu_count() or 1, 4))
        self.blas_threads = blas_threads
        self._pool: Any = None
        self._steps: Any = None  # the workers' steps, relayed to this process's sink
        self._relay: threading.Thread | None = None

    def map(
        self,
        jobs: list[Job],
        datasets: dict[str, Dataset],
        base: str | None,
        shards: str | None = None,
    ) -> Iterator[JobOutcome | ShardReceipt | JobFailure]:
        for batch in self.batches(jobs, datasets, base, shards):
            yield from batch

    def batches(
        self,
        jobs: list[Job],
        datasets: dict[str, Dataset],
        base: str | None,
        shards: str | None = None,
    ) -> Iterator[list[JobOutcome | ShardReceipt | JobFailure]]:
        """The results as they arrive, those that arrive together as one list (a
        deterministic model's iterations, tasks ending at once; in the order the jobs were
        submitted), so that the driver opens the store once for them
        (:func:`glotbench.runner.executors.run_suite`)."""
        import multiprocessing
        import os
        from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

        context = multiprocessing.get_context("spawn")
        workers = min(self.workers, max(len(jobs), 1))
        report_step(f"starting {workers} worker processes")
        self._steps = context.Queue()
        self._relay = threading.Thread(target=_relay_steps, args=(self._steps,), daemon=True)
        self._relay.start()
        self._pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=context,
            initializer=_limit_blas,
            # workers die with the driver, and tell it their steps
            initargs=(self.blas_threads, os.getpid(), self._steps),
        )
        futures = [
            self._pool.submit(
                _safe_execute_group, group, datasets[group[0].dataset_key], base, shards
            )
            for group in job_groups(jobs)
        ]
        order = {future: i for i, future in enumerate(futures)}
        waiting = set(futures)
        while waiting:
            done, waiting = wait(waiting, return_when=FIRST_COMPLETED)
            yield [r for f in sorted(done, key=order.__getitem__) for r in f.result()]

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        if self._steps is not None:
            self._steps.put(None)  # ends the relay thread
            if self._relay is not None:
                self._relay.join(timeout=5)
            self._steps.close()
            self._steps, self._relay = None, None


class RayExecutor(_OneResultABatch):
    """Jobs as Ray tasks (one CPU each); results stream back as they finish.

    Starts a new local Ray (``num_cpus``) unless this process already has one
    or ``address`` is given (``"auto"``: the cluster ``ray start`` runs on this
    machine; ``"ray://host:port"``: a remote one). The driver alone writes to
    the store: a task returns the job's statistics (through Ray's object
    store), or in shard mode writes them as a Parquet shard into a folder all
    nodes share and returns only its path (:mod:`glotbench.ingest.shards`).
    """

    name = "ray"

    def __init__(self, *, num_cpus: int | None = None, address: str | None = None) -> None:
        try:
            import ray
        except ImportError:
            raise GlotbenchError(
                "the Ray executor needs ray: pip install 'glotbench[distributed]'"
            ) from None
        self._ray = ray
        self._started = False
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            if address:
                kwargs["address"] = address
            else:  # never attach silently to a cluster another process started
                kwargs["address"] = "local"
                if num_cpus:
                    kwargs["num_cpus"] = num_cpus
            ray.init(**kwargs)
            self._started = True

    def map(
        self,
        jobs: list[Job],
        datasets: dict[str, Dataset],
        base: str | None,
        shards: str | None = None,
    ) -> Iterator[JobOutcome | ShardReceipt | JobFailure]:
        ray = self._ray
        remote = ray.remote(num_cpus=1)(_safe_execute)
        keys = {j.dataset_key for j in jobs}
        refs = {key: ray.put(ds) for key, ds in datasets.items() if key in keys}
        pending = [remote.remote(job, refs[job.dataset_key], base, shards) for job in jobs]
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            yield ray.get(done[0])

    def close(self) -> None:
        if self._started:
            self._ray.shutdown()


def make_executor(name: str, **options: Any) -> LocalExecutor | ProcessExecutor | RayExecutor:
    if name == "local":
        return LocalExecutor()
    if name == "processes":
        return ProcessExecutor(workers=options.get("num_cpus"))
    if name == "ray":
        return RayExecutor(**options)
    raise UnknownNameError(f"unknown executor {name!r}; use one of {', '.join(EXECUTORS)}")
