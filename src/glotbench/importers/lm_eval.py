"""Import an lm-evaluation-harness output folder.

``lm_eval ... --output_path OUT [--log_samples]`` writes, per evaluation,
``OUT/<model>/results_<timestamp>.json`` and, with ``--log_samples``, one
``samples_<task>_<timestamp>.jsonl`` per task (see ``docs/importers/lm-eval.md``).

From the **samples** each task becomes runs with per-example statistics keyed
by ``doc_id``:

* every per-sample metric whose aggregation is the mean (``acc``,
  ``acc_norm``, ``exact_match``, ...) gives statistics ``(value, 1)``;
* corpus metrics whose per-sample record carries what the statistics need:
  ``f1`` and ``mcc`` (``[gold, pred]`` → ``f1_binary`` / ``mcc`` counts),
  ``bleu``, ``chrf`` and ``chrf++`` (``[reference, prediction]`` → sacrebleu's
  segment statistics);
* other aggregations (perplexity, bits per byte, ...) are reported and skipped.

The run metric is the glotbench registry metric that reproduces the harness's
aggregation: ``acc`` → ``accuracy``, ``f1`` → ``f1_binary``, ``mcc`` → ``mcc``,
``bleu``/``chrf``/``chrf++`` as named. Other mean metrics with 0/1 values
(``acc_norm``, ``exact_match``, ...) are stored as ``accuracy`` — the share of
examples the harness counted correct — with ``config_hash`` ``lm_eval=<name>``,
which keeps them apart from ``acc``; means of other values (brier score, ...)
are only imported as aggregate scores. A filter other than ``none`` (e.g.
``strict-match``) is added to the ``config_hash`` (``filter=strict-match``).

From the **results** JSON each task's metrics become aggregate scores with
their standard error (metric names as lm-eval writes them, ``acc``,
``acc_norm``, ...; ``,<filter>`` appended unless the filter is ``none``).
Group rows (``groups`` / ``group_subtasks``) are kept apart: their language is
``all`` and ``metadata.lm_eval_kind`` is ``group``.

Several results files of the same task (different ``--seed``) become runs with
different seeds: the seed is the ``fewshot_seed`` of the results' ``config``
(``random_seed`` when that is null), or the file's order with
``seed_from="order"``. Task names are split into (task, language) by a
:class:`~glotbench.importers.task_languages.TaskLanguageMap` (explicit entries, known
families, then ISO 639 suffixes).

Every run and score declares the task's ``primary_metric``
(:func:`~glotbench.importers.lm_eval_results.primary_metric`: the first metric
of the task's ``metric_list``) and every run its ``source_metric`` (lm-eval's
name, ``acc_norm``), so analyses rank each task on lm-eval's metric and
``--metric acc_norm`` reaches the runs (:mod:`glotbench.analysis.selection`).

This module reads and imports; the results files are parsed in
:mod:`~glotbench.importers.lm_eval_results`, samples files read whole in
:mod:`~glotbench.importers.lm_eval_samples` and streamed in
:mod:`~glotbench.importers.lm_eval_stream`.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import duckdb
import numpy as np

from glotbench.errors import InputError
from glotbench.importers.common import (
    HarnessImportResult,
    PendingRun,
    Progress,
    ScoreRow,
    check_runs,
)
from glotbench.importers.json_files import files_sha256
from glotbench.importers.lm_eval_results import (
    CORPUS_METRICS,
    LmEvalRun,
    _aggregations,
    _find_runs,
    _group_names,
    _model_name,
    _record_for,
    _score_rows,
    _seed,
    _task_language,
)
from glotbench.importers.lm_eval_samples import (
    SAMPLES_BATCH_BYTES,
    _Column,
    _column_stats,
    _first_metrics,
    _labels_for,
    iter_samples_files,
)
from glotbench.importers.lm_eval_stream import SAMPLES_CHUNK_ROWS, _stream_samples, _streamed_run
from glotbench.importers.task_languages import TaskLanguageMap, read_task_language_file
from glotbench.importers.writer import write_import
from glotbench.ingest.spool import RunSpool
from glotbench.ingest.staging import staging_dir
from glotbench.metrics import get_metric
from glotbench.store.names import check_name
from glotbench.store.store import Store


@dataclass
class LmEvalData:
    """Everything read from an output folder, validated, nothing written yet."""

    root: Path
    files: list[Path]
    runs: list[PendingRun]
    scores: list[ScoreRow]
    notes: list[str]


def read_lm_eval(
    path: str | Path,
    *,
    model: str | None = None,
    mapping: TaskLanguageMap | None = None,
    tasks: Sequence[str] | None = None,
    seed_from: Literal["config", "order"] = "config",
    samples: bool = True,
    spool: RunSpool | None = None,
    chunk_rows: int | None = None,
) -> LmEvalData:
    """Read and validate an lm-eval output folder (or one results file).

    Samples files are read one batch at a time (:func:`iter_samples_files`).
    With a ``spool`` each run is checked (:func:`check_runs`) and its example
    ids and statistics moved to the spool as soon as its file is read
    (:meth:`PendingRun.spill`), so memory holds one batch of samples plus the
    runs' records, not every sample of the folder; without one, the runs keep
    their arrays (``LmEvalData.runs[i].example_ids`` …).

    With a spool, a samples file larger than :data:`SAMPLES_BATCH_BYTES` (every
    file when ``chunk_rows`` is given) is streamed: read ``chunk_rows``
    (default :data:`SAMPLES_CHUNK_ROWS`) samples at a time, each chunk checked
    and appended to the spool as it arrives (:func:`_stream_samples`), so
    memory holds one chunk however many samples a run has. The runs, their
    example order and statistics are those of the whole-file read.
    """
    if chunk_rows is not None and chunk_rows < 1:
        raise InputError(f"chunk_rows must be at least 1, got {chunk_rows}", field="chunk-rows")
    root = Path(path)
    mapping = mapping or TaskLanguageMap.build()
    files, scores, to_read = _plan_reads(root, model, mapping, tasks, seed_from, samples)
    pending: list[PendingRun] = []
    notes: list[str] = []
    checks: list[tuple[PendingRun, str, str, str]] = []
    # one samples file (or one batch of files) at a time: its runs are built, checked
    # and, with a spool, moved to disk before the next file is read. MCC runs wait
    # until all files are read: their label set is shared by all runs of a task,
    # so their statistics line up
    index_of = {item[4]: i for i, item in enumerate(to_read)}
    built: dict[tuple[int, int], tuple[PendingRun, tuple[PendingRun, str, str, str]]] = {}
    deferred: list[tuple[int, int, _Column]] = []
    labels_by_task: dict[str, dict[str, list[Any]]] = defaultdict(dict)
    streamed: set[Path] = set()
    if spool is not None:
        streamed = _stream_large(to_read, spool, chunk_rows, mapping, notes, built)
    files_read = iter_samples_files(
        [(item[4], item[3]) for item in to_read if item[4] not in streamed]
    )
    for sample_path, (columns, _count) in files_read:
        i = index_of[sample_path]
        task = to_read[i][3]
        for key, values in _labels_for(columns.values(), sample_path).items():
            merged = set(labels_by_task[task].get(key, [])) | set(values)
            if all(isinstance(v, int) for v in merged):
                labels_by_task[task][key] = list(range(min(0, min(merged)), max(merged) + 1))
            else:
                labels_by_task[task][key] = sorted(merged, key=lambda v: (str(type(v)), v))
        for j, col in enumerate(columns.values()):
            if CORPUS_METRICS.get(col.metric) == "mcc":
                deferred.append((i, j, col))
                continue
            made = _run_of_column(to_read[i], col, None, mapping, notes)
            if made is not None:
                if spool is not None:
                    check_runs([made[0]])
                    made[0].spill(spool)
                built[(i, j)] = made
        del columns
    for i, j, col in deferred:
        task = to_read[i][3]
        made = _run_of_column(to_read[i], col, labels_by_task[task].get(col.metric), mapping, notes)
        if made is not None:
            if spool is not None:
                check_runs([made[0]])
                made[0].spill(spool)
            built[(i, j)] = made
    for position in sorted(built):  # the order of the files and their columns
        pending.append(built[position][0])
        checks.append(built[position][1])
    check_runs(pending)
    check_samples_agree(checks, scores)
    return LmEvalData(root=root, files=files, runs=pending, scores=scores, notes=notes)


def _plan_reads(
    root: Path,
    model: str | None,
    mapping: TaskLanguageMap,
    tasks: Sequence[str] | None,
    seed_from: Literal["config", "order"],
    samples: bool,
) -> tuple[list[Path], list[ScoreRow], list[tuple[LmEvalRun, str, int | None, str, Path]]]:
    """The folder's results files read: (files read, score rows, samples files to read as
    (run, model, seed, task, path)), task names checked against the results."""
    found = _find_runs(root)
    found.sort(key=lambda r: (str(r.results_path.parent), r.stamp))
    scores: list[ScoreRow] = []
    files: list[Path] = []
    wanted = set(tasks) if tasks else None
    seen_tasks: set[str] = set()
    order: dict[str, int] = defaultdict(int)
    to_read: list[tuple[LmEvalRun, str, int | None, str, Path]] = []
    for run in found:
        files.append(run.results_path)
        model_name = check_name(
            _model_name(run.data, model, str(run.results_path)),
            "model",
            path=str(run.results_path),
            field=None if model else "model_name",
        )
        index = order[model_name]
        order[model_name] += 1
        seed = _seed(run, index, seed_from)
        rows = _score_rows(run, model_name, seed, mapping)
        results = run.data.get("results") or {}
        known = set(results) | _group_names(run.data)
        seen_tasks |= known
        if wanted is not None:
            rows = [r for r in rows if r.metadata.get("lm_eval_task") in wanted]
        scores.extend(rows)
        if not samples:
            continue
        for task, sample_path in sorted(run.samples.items()):
            if wanted is not None and task not in wanted:
                continue
            files.append(sample_path)
            if task not in results:
                raise InputError(
                    f"unknown task {task!r}: the results file {run.results_path.name} has no "
                    f"entry for it (its tasks: {', '.join(sorted(results)) or 'none'})",
                    path=str(sample_path),
                    field="task",
                )
            to_read.append((run, model_name, seed, task, sample_path))
    if wanted is not None:
        unknown = sorted(wanted - seen_tasks)
        if unknown:
            raise InputError(
                f"unknown task name(s) {', '.join(map(repr, unknown))}; the results files "
                f"name: {', '.join(sorted(seen_tasks))}",
                path=str(root),
                field="task",
            )
    return files, scores, to_read


def _stream_large(
    to_read: list[tuple[LmEvalRun, str, int | None, str, Path]],
    spool: RunSpool,
    chunk_rows: int | None,
    mapping: TaskLanguageMap,
    notes: list[str],
    built: dict[tuple[int, int], tuple[PendingRun, tuple[PendingRun, str, str, str]]],
) -> set[Path]:
    """Samples files larger than :data:`SAMPLES_BATCH_BYTES` (all with ``chunk_rows``) streamed
    to the spool (:func:`_stream_samples`), their runs added to ``built``; the files streamed."""
    streamed: set[Path] = set()
    with duckdb.connect() as con:
        for i, item in enumerate(to_read):
            sample_path = item[4]
            if chunk_rows is None and sample_path.stat().st_size <= SAMPLES_BATCH_BYTES:
                continue
            names = _first_metrics(sample_path)
            if names is None:
                continue
            got = _stream_samples(
                con, item, names, spool, chunk_rows or SAMPLES_CHUNK_ROWS, mapping
            )
            if got is None:  # the strict reader names the line and field
                continue
            streamed.add(sample_path)
            for j, scol in enumerate(got):
                made = _streamed_run(item, scol, spool, notes)
                if made is not None:
                    built[(i, j)] = made
    return streamed


def _run_of_column(
    item: tuple[LmEvalRun, str, int | None, str, Path],
    col: _Column,
    labels: Sequence[Any] | None,
    mapping: TaskLanguageMap,
    notes: list[str],
) -> tuple[PendingRun, tuple[PendingRun, str, str, str]] | None:
    """One (metric, filter) column of a samples file as a run (None: not importable, noted)."""
    run, _model_name, _seed, task, sample_path = item
    metric, filt = col.metric, col.filt
    aggregations = _aggregations(run.data, task)
    _task_language(item, mapping)
    check_name(metric, "metric", path=str(sample_path), field="metrics")
    built = _column_stats(col, sample_path, aggregations.get(metric), labels)
    if built is None:
        notes.append(
            f"{sample_path.name}: metric {metric!r} (aggregation "
            f"{aggregations.get(metric)!r}) has no per-example statistics in glotbench; "
            "only its aggregate score was imported"
        )
        return None
    stored_metric, metric_config, stat_names, stats = built
    record = _record_for(item, metric, filt, stored_metric, metric_config, stat_names, mapping)
    pending = PendingRun(
        record=record,
        example_ids=np.asarray(col.ids, dtype=object),
        stats=np.ascontiguousarray(stats, dtype=np.float64),
        path=str(sample_path),
        line=col.first_line,
        field="doc_id",
        lines=np.asarray(col.lines, dtype=np.int64),
    )
    return pending, (pending, run.results_path.name, task, f"{metric},{filt}")


def rounding_tolerance(reported: float, width: float) -> float:
    """How far a recomputed score may lie from a reported one and still agree.

    A value written with d ≤ 6 decimals (a rounded table) may differ by half a
    unit of its last decimal; a full-precision value by 10⁻⁶ of the metric's
    range (float summation order).
    """
    text = repr(float(reported))
    decimals = len(text.split(".", 1)[1]) if "." in text and "e" not in text else 17
    if decimals <= 6:
        return 0.5 * 10.0**-decimals + 1e-9
    return 1e-6 * width


def check_samples_agree(
    checks: Sequence[tuple[PendingRun, str, str, str]], scores: Sequence[ScoreRow]
) -> None:
    """Each run's score recomputed from its samples equals the results JSON's score.

    ``checks`` holds (run, results file name, lm-eval task, ``metric,filter``).
    A disagreement beyond rounding (:func:`rounding_tolerance`) means the
    samples and the results do not belong together, or the per-sample values
    are not what the harness aggregated: an error naming the task.
    """
    reported: dict[tuple[Any, Any, Any], ScoreRow] = {}
    for score_row in scores:
        meta = score_row.metadata
        key = (meta.get("results_file"), meta.get("lm_eval_task"), meta.get("lm_eval_metric"))
        reported[key] = score_row
    for run, results_file, task, lm_metric in checks:
        row = reported.get((results_file, task, lm_metric))
        if row is None or not math.isfinite(row.score):
            continue
        r = run.record
        metric = get_metric(r.metric, **(r.metric_config or {}))
        value = float(metric.score(run.stat_totals()))
        lo, hi = metric.score_range
        if abs(value - row.score) > rounding_tolerance(row.score, hi - lo):
            raise InputError(
                f"task {task!r}: metric {lm_metric!r} recomputed from the {run.n_examples} "
                f"samples is {value:.10g}, but {results_file} reports {row.score:.10g}; the "
                "samples file and the results file disagree (were they written by the same "
                "run, and are the per-sample values what the harness aggregated?)",
                path=run.path,
                field=run.field,
            )


def import_lm_eval(
    store: Store,
    path: str | Path,
    *,
    model: str | None = None,
    families: Sequence[str] | None = None,
    task_map: Sequence[str] | Mapping[str, str] | None = None,
    default_language: str | None = None,
    tasks: Sequence[str] | None = None,
    seed_from: Literal["config", "order"] = "config",
    samples: bool = True,
    progress: Progress | None = None,
    task_map_file: str | Path | None = None,
    auto_language: bool = True,
    chunk_rows: int | None = None,
) -> HarnessImportResult:
    """Import an lm-eval output folder into ``store`` (see the module docstring).

    ``task_map_file`` adds ``TASK -> LANGUAGE`` entries from a file
    (:func:`~glotbench.importers.task_languages.read_task_language_file`);
    ``task_map`` entries win over it. ``auto_language`` splits task names
    ending in an ISO 639 code (``scala_da`` → ``scala``, ``da``).
    ``chunk_rows``: samples per chunk of a streamed samples file
    (:func:`read_lm_eval`); the stored runs do not depend on it.
    """
    t0 = time.perf_counter()
    if seed_from not in ("config", "order"):
        raise InputError(
            f"seed_from must be 'config' or 'order', got {seed_from!r}", field="seed-from"
        )
    entries: dict[str, str] = (
        read_task_language_file(task_map_file) if task_map_file is not None else {}
    )
    if isinstance(task_map, Mapping):
        entries.update({str(k): str(v) for k, v in task_map.items()})
        listed: list[str] = []
    else:
        listed = list(task_map or [])
    mapping = TaskLanguageMap.build(
        families,
        [*(f"{k}={v}" for k, v in entries.items()), *listed],
        default_language,
        auto_suffix=auto_language,
    )
    # the runs' examples wait on disk (next to the store) until they are written
    with RunSpool(staging_dir(store.path)) as spool:
        data = read_lm_eval(
            path,
            model=model,
            mapping=mapping,
            tasks=tasks,
            seed_from=seed_from,
            samples=samples,
            spool=spool,
            chunk_rows=chunk_rows,
        )
        return _write(
            store, data, model, mapping, tasks, seed_from, samples, progress, t0, chunk_rows
        )


def _write(
    store: Store,
    data: LmEvalData,
    model: str | None,
    mapping: TaskLanguageMap,
    tasks: Sequence[str] | None,
    seed_from: str,
    samples: bool,
    progress: Progress | None,
    t0: float,
    chunk_rows: int | None = None,
) -> HarnessImportResult:
    """Write what :func:`read_lm_eval` read (the import's hash covers files and options)."""
    options = repr(
        (
            model,
            sorted(mapping.families),
            sorted(mapping.overrides.items()),
            mapping.default_language,
            mapping.auto_suffix,
            sorted(tasks or []),
            seed_from,
            samples,
        )
    )
    root = data.root if data.root.is_dir() else data.root.parent
    sha = files_sha256(data.files, root, options)
    result = write_import(
        store,
        kind="lm-eval",
        source=data.root,
        sha=sha,
        runs=data.runs,
        score_rows=data.scores,
        n_files=len(data.files),
        progress=progress,
        t0=t0,
        chunk_rows=chunk_rows,
    )
    result.notes = [*result.notes, *sorted(set(data.notes))]
    return result


def recompute_scores(store: Store, model: str | None = None) -> list[dict[str, Any]]:
    """Each stored lm-eval run's score recomputed from its statistics, beside the reported one.

    Returns one dict per run: task, language, metric, seed, recomputed and
    reported score (``None`` when the results file had none). lm-eval reports
    BLEU/chrF on 0–100 as glotbench does, and the other metrics on 0–1.
    """
    runs = store.runs.frame(models=model)
    scores = store.scores.frame(models=model)
    out: list[dict[str, Any]] = []
    for _, run in runs.iterrows():
        meta = run["model_metadata"]
        lm_metric = meta.get("lm_eval_metric")
        if not lm_metric:
            continue
        name, _, filt = lm_metric.partition(",")
        stored = name if filt == "none" else f"{name},{filt}"
        _ids, stats = store.stats.of_run(run["run_id"])
        metric = get_metric(run["metric"], **run["metric_config"])
        value = float(metric.score(stats.sum(axis=0)))
        match = scores[
            (scores["model"] == run["model"])
            & (scores["task"] == run["task"])
            & (scores["language"] == run["language"])
            & (scores["metric"] == stored)
            & (
                scores["seed"].isna()
                if run["seed"] is None
                or (isinstance(run["seed"], float) and math.isnan(run["seed"]))
                else scores["seed"] == run["seed"]
            )
        ]
        reported = float(match["score"].iloc[0]) if len(match) else None
        out.append(
            {
                "model": run["model"],
                "task": run["task"],
                "language": run["language"],
                "metric": run["metric"],
                "lm_eval_metric": lm_metric,
                "seed": None if run["seed"] is None else run["seed"],
                "recomputed": value,
                "reported": reported,
            }
        )
    return out
