"""The replication protocol: N iterations of (seed, train, evaluate) per model and dataset.

Iteration ``i`` has the seed ``protocol.seed + i``. A model that trains is
fit on the training split — by default on a bootstrap of it, as EuroEval
does (``bootstrap_train``) — with that seed, and every model is evaluated on
the **full** test split; the per-example statistics of every metric of the
task are stored (one run per metric, key ``(model, dataset, task, language,
seed, config_hash, metric)``) in the test split's (shuffled) order, each
example with its index in the source data (``source_position``) when the
loader reads records in the source's order.

The ScandEval score is then derived from the stored statistics exactly
(:func:`scandeval_scores`): iteration ``i`` is scored on a bootstrap of the
test set drawn from its seed, ``score(w_i @ S_i)``, and the result is the
mean over iterations ± 1.96 · SD / √N (Nielsen 2023, ScandEval §4;
:mod:`glotbench.resample.scandeval` holds both formulas).

Inference speed is measured once per model with ScandEval's speed benchmark
(:mod:`glotbench.runner.speed`: GPT-2 tokens per second over documents of
about 100 … 1,000 and 12.5 … 125 tokens), by the model's first job
(iteration 0 of its first dataset, ``Job.measure_speed``) on the model it has
just trained; the result is stored in that run's model metadata (``speed``).
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, model_validator

from glotbench.metrics import get_metric
from glotbench.resample.scandeval import iteration_score, mean_and_half_width
from glotbench.runner.datasets import Dataset, DatasetSpec, content_hash
from glotbench.runner.errors import ModelError
from glotbench.runner.models import GENERATIVE_KINDS, ModelSpec, build_model
from glotbench.runner.progress import report_step
from glotbench.runner.speed import SpeedSettings, benchmark_speed
from glotbench.runner.tasks import Task, get_task
from glotbench.runner.transfer import dataset_key
from glotbench.store.schema import RunKey, RunRecord, runner_source

if TYPE_CHECKING:
    from glotbench.store.store import Store

PROTOCOL_VERSION = 1


class Protocol(BaseModel):
    """Replication settings of a suite (``protocol:`` in the YAML)."""

    model_config = ConfigDict(extra="forbid")

    iterations: int = Field(default=10, ge=1)
    seed: int = 4242
    bootstrap_train: bool = True
    #: ScandEval's speed benchmark (:mod:`glotbench.runner.speed`): iterations
    #: (documents of 100 … 1,000 tokens; 0 turns it off), seconds of calls per
    #: document, warm-up seconds. ScandEval: 10, 3.0, 1.0.
    speed_iterations: int = Field(default=10, ge=0)
    speed_seconds: float = Field(default=3.0, ge=0)
    speed_warmup_seconds: float = Field(default=1.0, ge=0)
    #: learning curves (ScandEval Appendix B): run every model at each of these
    #: training-set sizes (nested subsets of the training split; docs/learning-curves.md)
    train_sizes: list[int] | None = None

    @model_validator(mode="before")
    @classmethod
    def _speed_repeats(cls, data: Any) -> Any:
        """``speed_repeats`` (before 0.9) is the number of speed iterations."""
        if isinstance(data, dict) and "speed_repeats" in data:
            data = dict(data)
            repeats = data.pop("speed_repeats")
            data.setdefault("speed_iterations", repeats)
        return data

    def speed_settings(self) -> SpeedSettings | None:
        """The speed benchmark's settings, or None when it is off."""
        if self.speed_iterations == 0:
            return None
        return SpeedSettings(
            iterations=self.speed_iterations,
            seconds=self.speed_seconds,
            warmup_seconds=self.speed_warmup_seconds,
        )

    def seed_of(self, iteration: int) -> int:
        return self.seed + iteration


@dataclass(frozen=True)
class Job:
    """One (model, dataset, iteration).

    ``session`` names the ``run_suite`` call the job belongs to: a loaded
    pretrained adapter or a deterministic model's predictions are reused
    between jobs of one session only, so an edited model is never stale.
    """

    model: ModelSpec
    dataset: DatasetSpec
    iteration: int
    protocol: Protocol
    session: str = ""
    #: name of the suite the job belongs to (recorded in its runs' ``source``)
    suite: str = ""
    #: the model's one job that runs the speed benchmark (see ``Suite.jobs``)
    measure_speed: bool = False
    #: cross-lingual protocols: the datasets whose training splits this job trains
    #: on instead of its own (:mod:`glotbench.runner.transfer`); empty: its own
    train_from: tuple[str, ...] = ()
    #: the file that caches HTTP models' responses (beside the store); empty: none
    response_cache: str = ""
    #: store each test example's prediction / generated text (``glotbench run --keep-outputs``)
    keep_outputs: bool = False

    @property
    def dataset_key(self) -> str:
        """Key of the (possibly derived) dataset this job evaluates."""
        key = dataset_key(self.dataset.name, self.train_from)
        size = self.dataset.train_size  # learning curves: one dataset per training size
        return key if size is None else f"{key}@train={size}"

    @property
    def seed(self) -> int:
        return self.protocol.seed_of(self.iteration)

    def label(self) -> str:
        trained = (
            f" trained on {'+'.join(self.train_from)}"
            if self.train_from and self.train_from != (self.dataset.name,)
            else ""
        )
        return (
            f"{self.model.name} on {self.dataset.name}{trained} "
            f"(iteration {self.iteration}, seed {self.seed})"
        )


def run_source(suite: str = "") -> str:
    """The ``source`` of a run the runner stores: ``glotbench run [SUITE ](protocol vN)``."""
    return runner_source(suite, PROTOCOL_VERSION)


def config_hash(job: Job, dataset: Dataset) -> str:
    """Hash of what determines a run besides its key: model config, data, protocol."""
    return content_hash(
        {
            "model": job.model.config_hash(),
            "dataset": dataset.content_hash,
            "bootstrap_train": job.protocol.bootstrap_train,
            "protocol": PROTOCOL_VERSION,
        }
    )[:16]


def run_keys(job: Job, dataset: Dataset) -> list[RunKey]:
    """The keys of the runs ``job`` stores (one per metric and language)."""
    task = get_task(dataset.task, **job.dataset.task_options())
    chash = config_hash(job, dataset)
    return [
        RunKey(
            model=job.model.name,
            dataset=dataset.name,
            task=dataset.task,
            language=language,
            seed=job.seed,
            config_hash=chash,
            metric=m,
        )
        for m, language in task.result_keys(dataset)
    ]


@dataclass
class JobOutcome:
    """What a job produced: one (record, example ids, statistics) per metric.

    ``source_positions`` has one entry per run: each example's index in the
    dataset's source data (:attr:`Dataset.source_positions`), or None.
    """

    job: Job
    runs: list[tuple[RunRecord, list[str], np.ndarray]] = field(default_factory=list)
    seconds: float = 0.0
    source_positions: list[list[int] | None] = field(default_factory=list)
    #: built-in attributes of the dataset's examples and entity units (long rows,
    #: :mod:`glotbench.store.attributes`), including predicted-only entities
    attributes: list[dict[str, Any]] = field(default_factory=list)
    #: per run id: (example_id, unit, statistics) of the entity units of span metrics
    unit_stats: dict[str, list[tuple[str, str, np.ndarray]]] = field(default_factory=dict)
    #: kept outputs (``Job.keep_outputs``): (key columns, {ids, outputs, references, inputs})
    outputs: tuple[dict[str, Any], dict[str, list[Any]]] | None = None

    def scores(self) -> dict[str, float]:
        """Full-test score per metric; per-language runs as their mean over languages."""
        out: dict[str, float] = {}
        per_language: dict[str, list[float]] = {}
        for record, _, stats in self.runs:
            metric = get_metric(record.metric, **record.metric_config)
            score = float(metric.score(stats.sum(axis=0)))
            if record.language == self.job.dataset.language:
                out[record.metric] = score
            else:
                per_language.setdefault(record.metric, []).append(score)
        for name, values in per_language.items():
            out[f"{name} (mean of {len(values)} languages)"] = float(np.mean(values))
        return out


#: task kind -> how a speed document is put to a model (ScandEval times one
#: document per call; QA asks one question about it, translation translates it,
#: retrieval embeds it)
SPEED_CALLS: dict[str, Any] = {
    "sequence": lambda model: lambda doc: model.predict_labels([doc]),
    "token": lambda model: lambda doc: model.predict_tags([doc.split()]),
    "qa": lambda model: lambda doc: model.answer(["What is this about?"], [doc]),
    "translation": lambda model: lambda doc: model.translate([doc], ["en"], ["en"]),
    "retrieval": lambda model: lambda doc: model.embed([doc]),
}


def measure_speed(model: Any, task: Task, settings: SpeedSettings | None) -> dict[str, Any] | None:
    """ScandEval's speed benchmark on a trained model, through the task kind's call."""
    if settings is None or task.kind not in SPEED_CALLS or not model.supports(task):
        return None
    if type(model).__name__ == "PredictionsFile" or not getattr(model, "speed_benchmark", True):
        return None
    result = benchmark_speed(SPEED_CALLS[task.kind](model), settings, call=task.kind)
    return result.to_dict()


def training_sample(
    train: Sequence[dict[str, Any]], seed: int, bootstrap: bool
) -> list[dict[str, Any]]:
    """The training records of an iteration: the split, or its bootstrap from ``seed``."""
    if not bootstrap or not train:
        return list(train)
    idx = np.random.default_rng([seed, 1]).integers(0, len(train), len(train))
    return [train[int(i)] for i in idx]


#: (session, model config, model name, dataset hash) -> (predictions, predict
#: seconds, iteration) of the last deterministic model evaluated in this
#: process (``ModelSpec.deterministic``)
_PREDICTION_CACHE: dict[tuple[Any, ...], tuple[list[Any], float, int]] = {}


#: the last adapter of a model that does not train, kept for its next job in
#: this process: a pretrained model (an identifier, a generative LM) is loaded
#: once, not once per iteration; ``fit`` still receives every iteration's seed
_ADAPTER_CACHE: dict[tuple[str, str, str, str], Any] = {}


def _adapter_key(job: Job, base: str | Path | None) -> tuple[str, str, str, str]:
    return (job.session, job.model.name, job.model.config_hash(), str(base))


def _adapter_cached(job: Job, base: str | Path | None) -> bool:
    return bool(job.session) and _adapter_key(job, base) in _ADAPTER_CACHE


def _adapter(job: Job, base: str | Path | None) -> Any:
    key = _adapter_key(job, base)
    if not job.session:  # a job outside a run_suite session: nothing is reused
        return build_model(job.model, base=base)
    cached = _ADAPTER_CACHE.get(key)
    if cached is not None:
        return cached
    model = build_model(job.model, base=base)
    if not model.trains:
        _ADAPTER_CACHE.clear()
        _ADAPTER_CACHE[key] = model
    return model


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % (2**32))  # third-party code may use the global RNG


def execute_job(job: Job, dataset: Dataset, *, base: str | Path | None = None) -> JobOutcome:
    """Train (if the model trains) and evaluate one iteration; nothing is written here."""
    start = time.perf_counter()
    task = get_task(dataset.task, **job.dataset.task_options())
    fresh = not _adapter_cached(job, base)
    model = _adapter(job, base)
    if job.response_cache and hasattr(model, "use_cache_file"):
        model.use_cache_file(job.response_cache)
    if not model.supports(task):
        raise ModelError(f"model {job.model.name!r} cannot do task {task.name!r}")
    _seed_everything(job.seed)
    train = training_sample(dataset.train, job.seed, job.protocol.bootstrap_train and model.trains)
    if model.trains and not train:
        raise ModelError(
            f"model {job.model.name!r} trains but dataset {dataset.name!r} has no train split"
        )
    if job.model.deterministic and model.trains:
        raise ModelError(
            f"model {job.model.name!r} trains, so its answers depend on the seed; "
            "remove 'deterministic: true' from its suite entry"
        )
    where = f"{job.model.name} on {dataset.name} (iteration {job.iteration})"
    if model.trains:
        report_step(f"{where}: training on {len(train):,} examples")
    t0 = time.perf_counter()
    model.fit(task, dataset, train, dataset.validation, job.seed)
    fit_seconds = time.perf_counter() - t0
    predictions, predict_seconds, first_iteration = _predictions(
        job, model, task, dataset, where, fresh
    )
    speed = measure_speed(model, task, job.protocol.speed_settings()) if job.measure_speed else None
    results = task.statistics(predictions, dataset.test, dataset)
    ids = [str(r["id"]) for r in dataset.test]
    n = len(ids)
    chash = config_hash(job, dataset)
    metadata = _run_metadata(
        job,
        model,
        task,
        dataset,
        len(train),
        (fit_seconds, predict_seconds),
        speed,
        first_iteration,
    )
    outcome = JobOutcome(job=job)
    for res in results:
        run_ids = ids if res.rows is None else [ids[int(i)] for i in res.rows]
        record = RunRecord(
            model=job.model.name,
            dataset=dataset.name,
            task=dataset.task,
            language=res.language or dataset.language,
            seed=job.seed,
            config_hash=chash,
            metric=res.name,
            metric_config=res.metric.config(),
            stat_names=res.metric.stat_names(),
            model_metadata=metadata,
            seconds=predict_seconds,
            examples_per_second=(n / predict_seconds) if predict_seconds > 0 else None,
            source=run_source(job.suite),
        )
        outcome.runs.append((record, run_ids, res.stats))
        outcome.source_positions.append(
            None
            if dataset.source_positions is None
            else [dataset.source_positions[i] for i in run_ids]
        )
        rows = dataset.test if res.rows is None else [dataset.test[int(i)] for i in res.rows]
        preds = predictions if res.rows is None else [predictions[int(i)] for i in res.rows]
        units = task.unit_statistics(preds, rows, res.metric, dataset)
        if units is not None:
            outcome.unit_stats[record.key.run_id] = units[0]
            outcome.attributes.extend(units[1])
    outcome.attributes[:0] = task.example_attributes(dataset)
    if job.keep_outputs and task.kind != "retrieval":  # retrieval predicts vectors: not kept
        outcome.outputs = kept_outputs(job, dataset, task, predictions, chash)
    outcome.seconds = time.perf_counter() - start
    return outcome


def _predictions(
    job: Job, model: Any, task: Any, dataset: Dataset, where: str, fresh: bool
) -> tuple[Any, float, int]:
    """The model's predictions of the test set, their seconds and the iteration that made
    them: a deterministic model's first iteration in a session serves its later ones."""
    reuse_key = (
        job.session,
        job.model.config_hash(),
        job.model.name,
        dataset.content_hash,
    )
    reused = _PREDICTION_CACHE.get(reuse_key) if job.model.deterministic and job.session else None
    if reused is not None:
        predictions, predict_seconds, first_iteration = reused
    else:
        loading = "loading the model, then " if fresh and not model.trains else ""
        report_step(f"{where}: {loading}predicting {len(dataset.test):,} test items")
        t1 = time.perf_counter()
        predictions = task.predict(model, dataset.test, dataset)
        predict_seconds = time.perf_counter() - t1
        first_iteration = job.iteration
        if job.model.deterministic and job.session:
            _PREDICTION_CACHE.clear()  # one entry: a suite runs a model's iterations together
            _PREDICTION_CACHE[reuse_key] = (predictions, predict_seconds, job.iteration)
    return predictions, predict_seconds, first_iteration


def _run_metadata(
    job: Job,
    model: Any,
    task: Any,
    dataset: Dataset,
    train_examples: int,
    seconds: tuple[float, float],
    speed: Any,
    first_iteration: int,
) -> dict[str, Any]:
    """The ``model_metadata`` of the job's runs: the model's and the suite's metadata, the
    protocol, the data, the fit and predict ``seconds``, the speed, the transfer setting and
    (deterministic models) the iteration whose predictions they reuse."""
    fit_seconds, predict_seconds = seconds
    metadata = {
        "kind": job.model.kind,
        "options": job.model.options,
        **model.metadata(),
        **job.model.metadata,
        "iteration": job.iteration,
        "trains": model.trains,
        "bootstrap_train": job.protocol.bootstrap_train and model.trains,
        "train_examples": train_examples,
        "dataset_sha256": dataset.content_hash,
        "dataset_sizes": dataset.sizes(),
        "fit_seconds": fit_seconds,
        "predict_seconds": predict_seconds,
        "speed": speed,
        "primary_metric": task.primary_metric(dataset),
    }
    if job.model.metadata.get("transfer_protocol"):  # cross-lingual: source and target
        metadata["source_languages"] = job.model.metadata.get("source_languages") or [
            dataset.language
        ]
        metadata["target_language"] = dataset.language
        metadata["trained_on"] = list(job.train_from) or [dataset.name]
    if job.dataset.train_size is not None:  # a learning curve's training size
        metadata["train_size"] = job.dataset.train_size
    if job.model.deterministic:
        metadata["deterministic"] = True
        metadata["predictions_of_iteration"] = first_iteration
    if task.kind == "token":
        # words per test sentence, in the stored order: the size unit of
        # `glotbench analyze datasize` for metrics without a token statistic (NER F1)
        metadata["test_tokens"] = [len(r["tokens"]) for r in dataset.test]
    return metadata


#: record fields shown as an example's input, first present wins
_INPUT_FIELDS = ("text", "question", "source", "query", "tokens")
#: task kinds whose outputs are kept by default (free text), beside generative model kinds
GENERATIVE_TASK_KINDS = frozenset({"qa", "translation"})


def keeps_outputs(job: Job, keep: bool | None) -> bool:
    """``keep``, or by default: generative models and free-text tasks keep their outputs."""
    if keep is not None:
        return keep
    kind = get_task(job.dataset.task, **job.dataset.task_options()).kind
    return job.model.kind in GENERATIVE_KINDS or kind in GENERATIVE_TASK_KINDS


def kept_outputs(
    job: Job, dataset: Dataset, task: Task, predictions: Sequence[Any], chash: str
) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """The key and payload of a job's kept outputs (:mod:`glotbench.store.outputs`)."""
    test = dataset.test
    inputs = [next((r[f] for f in _INPUT_FIELDS if r.get(f) is not None), None) for r in test]
    key = {
        "model": job.model.name,
        "dataset": dataset.name,
        "task": dataset.task,
        "language": dataset.language,
        "seed": job.seed,
        "config_hash": chash,
    }
    payload = {
        "ids": [str(r["id"]) for r in test],
        "outputs": list(predictions),
        "references": list(task.references(test)),
        "inputs": inputs,
    }
    return key, payload


def write_outcome(store: Store, outcome: JobOutcome, *, force: bool = False) -> int:
    """Store a job's runs — all its metrics — in one transaction; returns how many were written.

    Runs already stored are skipped; with ``force`` they are replaced: the old
    runs are deleted and the new ones written in that same transaction
    (``store.runs.write_many`` with ``replace=True``), so a failure in between
    leaves the old runs intact. The transaction also resolves the job's open
    failures (same model, dataset, seed and config_hash).
    """
    positions = outcome.source_positions if outcome.source_positions else None
    written = store.runs.write_many(outcome.runs, replace=force, source_positions=positions)
    write_outcome_attributes(store, outcome)
    if outcome.outputs is not None:
        store.outputs.write(*outcome.outputs)
    return written


def write_outcome_attributes(store: Store, outcome: JobOutcome) -> None:
    """Store a job's example attributes and entity-unit statistics (additive tables).

    Written after the runs, in their own transaction: attributes are keyed by
    (dataset, example_id, unit) and replaced by a re-run; a run's unit
    statistics are replaced as a whole.
    """
    if outcome.attributes:
        store.attributes.write(outcome.runs[0][0].dataset, outcome.attributes)
    if outcome.unit_stats:
        store.attributes.write_unit_stats(outcome.unit_stats)


def scandeval_scores(
    store: Store,
    *,
    models: Sequence[str] | None = None,
    datasets: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
) -> pd.DataFrame:
    """ScandEval scores from stored runs: mean over iterations of bootstrapped-test scores.

    For every (model, dataset, task, language, metric, config_hash) with
    seeded runs: ``score_i = score(w_i @ S_i)`` with ``w_i`` the bootstrap
    counts of iteration ``i``'s seed, ``score = mean(score_i)`` and
    ``ci_half_width = 1.96 · SD(score_i, ddof=1) / √N`` (ScandEval's
    ``aggregate_scores``; both formulas in :mod:`glotbench.resample.scandeval`).
    ``full_test_mean`` is the mean of the full-test-set scores.
    """
    runs = store.runs.frame(models=models, datasets=datasets, metrics=metrics)
    runs = runs[runs["seed"].notna()]
    rows = []
    keys = ["model", "dataset", "task", "language", "metric", "config_hash"]
    # one read per (dataset, task, language, metric): all models' runs of one test set at once
    slices = ["dataset", "task", "language", "metric"]
    for _, test_set in runs.groupby(slices, sort=False):
        stats_of = store.stats.of_runs(test_set["run_id"].tolist())
        for key, group in test_set.groupby(keys, sort=False):
            rows.append(_scandeval_row(dict(zip(keys, key, strict=True)), group, stats_of))
    frame = pd.DataFrame(
        rows,
        columns=[*keys, "iterations", "score", "ci_half_width", "full_test_mean", "n_examples"],
    )
    return frame.sort_values(keys, kind="stable").reset_index(drop=True)


def _scandeval_row(
    key: dict[str, Any],
    group: pd.DataFrame,
    stats_of: Mapping[str, tuple[np.ndarray, np.ndarray]],
) -> dict[str, Any]:
    """One (model, test set, configuration): ScandEval's mean ± 1.96·SD/√N over iterations."""
    boot, full = [], []
    for run in group.sort_values("seed").itertuples(index=False):
        metric = get_metric(run.metric, **run.metric_config)
        _, stats = stats_of[run.run_id]
        boot.append(iteration_score(metric, stats, int(run.seed)))
        full.append(float(metric.score(stats.sum(axis=0))))
    score, half = mean_and_half_width(boot)
    return {
        **key,
        "iterations": len(boot),
        "score": score,
        "ci_half_width": half,
        "full_test_mean": float(np.mean(full)),
        "n_examples": int(group["n_examples"].iloc[0]),
    }
