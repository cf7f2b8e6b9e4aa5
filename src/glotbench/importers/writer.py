"""Writing a harness import to the store: :func:`write_import`.

Every importer hands it its :class:`~glotbench.importers.common.PendingRun`
runs and a tidy scores frame. It applies the store's guarantees, the same as
the tidy importers of :mod:`glotbench.ingest.tidy`:

* everything is read and checked before anything is written;
* a run whose key is already stored with the same statistics is skipped, with
  different statistics it is an error naming the file and line it came from;
* runs are written in transactions of whole runs (``store.runs.write_batches``),
  so an interrupted import is completed by running the same command again;
* scores are added in one transaction (``store.scores.add``), rows stored with
  the same values are skipped;
* the same input (same SHA-256 over its files) imported again is a no-op.
"""

from __future__ import annotations

import functools
import hashlib
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from glotbench.errors import InputError
from glotbench.importers.common import (
    HarnessImportResult,
    PendingRun,
    Progress,
    ScoreRow,
    check_runs,
    check_score_ranges,
    check_score_rows,
    dedupe_score_rows,
    scores_frame,
    split_nan_scores,
)
from glotbench.store.layout import new_import_id
from glotbench.store.results import ScoreConflictError
from glotbench.store.schema import ImportRecord, stats_digest
from glotbench.store.store import Store

#: examples per chunk when a large spilled run is written (:func:`write_import`)
CHUNK_WRITE_ROWS = 131_072


def check_against_store(store: Store, runs: Sequence[PendingRun]) -> list[PendingRun]:
    """Runs still to write; a run stored with different statistics is an error.

    Also checks that a new run covers the same example ids as the runs of other
    models already stored for its (dataset, task, language, metric, config):
    paired analyses need the same test examples for every model.
    """
    stored = store.runs.stored(r.record.run_id for r in runs)
    todo: list[PendingRun] = []
    for run in runs:
        existing = stored.get(run.record.run_id)
        if existing is None:
            todo.append(run)
            continue
        ids, stats = run.arrays()
        digest = stats_digest(ids, stats, tuple(run.record.stat_names))
        if digest != existing["stats_sha256"]:
            raise run.error(
                f"the run {run.record.describe()} is already stored with different statistics "
                f"({existing['n_examples']} examples, from {existing['source']}); a run's key "
                "must identify one result — import into another store, or give the runs "
                "different seeds"
            )
    _check_ids_against_store(store, todo)
    return todo


def _check_ids_against_store(store: Store, runs: Sequence[PendingRun]) -> None:
    cache: dict[tuple[str, ...], tuple[str, set[str]] | None] = {}
    con = store.connection
    for run in runs:
        r = run.record
        key = (r.dataset, r.task, r.language, r.metric, r.config_hash)
        if key not in cache:
            row = con.execute(
                "SELECT run_id, model FROM runs WHERE dataset = ? AND task = ? AND language = ? "
                "AND metric = ? AND config_hash = ? ORDER BY model, seed NULLS FIRST LIMIT 1",
                list(key),
            ).fetchall()
            if not row:
                cache[key] = None
            else:
                ids = con.execute(
                    "SELECT example_id FROM example_stats WHERE run_id = ?", [row[0][0]]
                ).fetchall()
                cache[key] = (row[0][1], {i[0] for i in ids})
        ref = cache[key]
        if ref is None:
            continue
        other_model, ref_ids = ref
        new_ids = set(run.ids().tolist())
        if new_ids != ref_ids:
            missing = sorted(ref_ids - new_ids)[:3]
            extra = sorted(new_ids - ref_ids)[:3]
            raise run.error(
                f"the examples of {r.describe()} differ from those stored for model "
                f"{other_model!r} on the same task and language ({len(new_ids)} vs "
                f"{len(ref_ids)} ids"
                + (f"; missing e.g. {missing}" if missing else "")
                + (f"; unexpected e.g. {extra}" if extra else "")
                + "); paired analyses need the same test examples for every model — "
                "evaluate on the full test set (without an example limit) or import into "
                "another store",
                field=run.field or "doc_id",
            )


def check_same_examples(runs: Sequence[PendingRun]) -> None:
    """All runs of one (dataset, task, language, metric, config) cover the same ids.

    Runs are compared by a digest of their sorted ids (one run's ids in memory
    at a time, so spilled runs stay on disk); the ids are read back only to
    describe a disagreement.
    """
    first: dict[tuple[str, ...], tuple[PendingRun, str]] = {}
    for run in runs:
        r = run.record
        key = (r.dataset, r.task, r.language, r.metric, r.config_hash)
        if key not in first:
            first[key] = (run, "")
            continue
        ref, ref_digest = first[key]
        if not ref_digest:
            ref_digest = _ids_digest(ref.ids())
            first[key] = (ref, ref_digest)
        if ref.n_examples == run.n_examples and _ids_digest(run.ids()) == ref_digest:
            continue
        ref_ids, new_ids = set(ref.ids().tolist()), set(run.ids().tolist())
        missing = sorted(ref_ids - new_ids)[:3]
        extra = sorted(new_ids - ref_ids)[:3]
        raise run.error(
            f"the example ids of model {r.model!r} (seed {r.seed}) on task {r.task!r}, language "
            f"{r.language!r} disagree with those of model {ref.record.model!r} (seed "
            f"{ref.record.seed}) in {ref.path}: {len(new_ids)} vs {len(ref_ids)} ids"
            + (f"; missing e.g. {missing}" if missing else "")
            + (f"; unexpected e.g. {extra}" if extra else "")
            + "; paired analyses need the same test examples for every model and seed",
            field=run.field or "doc_id",
        )


def _ids_digest(ids: np.ndarray) -> str:
    """SHA-256 of the sorted ids (as text), each followed by a NUL."""
    text = "\0".join(np.sort(ids.astype(str)).tolist()) + "\0"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def write_import(
    store: Store,
    *,
    kind: str,
    source: Path,
    sha: str,
    runs: Sequence[PendingRun],
    score_rows: Sequence[ScoreRow],
    n_files: int,
    progress: Progress | None = None,
    t0: float | None = None,
    chunk_rows: int | None = None,
) -> HarnessImportResult:
    """Write validated runs and scores with the store's guarantees (see module doc).

    A spilled run of more than ``chunk_rows`` (default :data:`CHUNK_WRITE_ROWS`)
    examples is written chunk by chunk, in several transactions with its
    ``runs`` row last (``store.runs.write_chunks``):
    memory holds one chunk of it and one transaction's rows; the stored rows
    and digest do not depend on the chunk size, and a re-run after a kill
    deletes the killed write's rows before writing the run again.
    """
    t0 = time.perf_counter() if t0 is None else t0
    models = sorted({r.record.model for r in runs} | {s.model for s in score_rows})
    tasks = sorted({r.record.task for r in runs} | {s.task for s in score_rows})
    languages = sorted({r.record.language for r in runs} | {s.language for s in score_rows})
    base = {
        "kind": kind,
        "source": str(source),
        "store": str(store.path),
        "sha256": sha,
        "files": n_files,
        "models": models,
        "tasks": tasks,
        "languages": languages,
    }
    # decide from the store's content and write under the writer lock: one writer at a time
    with store.writing():
        return _write_import(store, runs, score_rows, sha, base, progress, t0, chunk_rows)


def _write_import(
    store: Store,
    runs: Sequence[PendingRun],
    score_rows: Sequence[ScoreRow],
    sha: str,
    base: dict[str, Any],
    progress: Progress | None,
    t0: float,
    chunk_rows: int | None = None,
) -> HarnessImportResult:
    source = Path(base["source"])
    record_kind = "examples" if runs else "scores"
    done = store.imports.find(sha, record_kind, completed=True)
    if done is not None:
        return HarnessImportResult(
            status="skipped",
            import_id=done.import_id,
            message=(
                f"this input (sha256 {sha[:12]}…) was already imported (import "
                f"{done.import_id}); nothing to do"
            ),
            seconds=time.perf_counter() - t0,
            **base,
        )
    score_rows, nan_notes = split_nan_scores(score_rows)
    check_score_ranges(score_rows)
    check_score_rows(score_rows)
    unique_scores = dedupe_score_rows(score_rows)
    check_runs(runs)
    check_same_examples(runs)
    todo = check_against_store(store, runs)
    frame = scores_frame(unique_scores) if unique_scores else None

    scores_added = scores_skipped = 0
    status: Literal["imported", "resumed"] = "imported"
    if not runs:
        import_id = new_import_id()
        record = ImportRecord(
            import_id=import_id,
            kind="scores",
            source=str(source.resolve()),
            sha256=sha,
            rows=len(unique_scores),
        )
        if frame is not None:
            scores_added, scores_skipped = _add_scores(store, frame, record, unique_scores)
        else:
            store.imports.start(record)
            store.imports.complete(import_id, 0)
        return HarnessImportResult(
            status=status,
            import_id=import_id,
            scores_added=scores_added,
            scores_skipped=scores_skipped,
            message=_message(0, 0, 0, scores_added, scores_skipped, status),
            notes=list(nan_notes),
            seconds=time.perf_counter() - t0,
            **base,
        )

    if frame is not None:
        # scores first, in their own transaction, before the examples import is
        # started: a conflicting score leaves the store as it was; a re-run skips them
        scores_record = ImportRecord(
            import_id=new_import_id(),
            kind="scores",
            source=str(source.resolve()),
            sha256=hashlib.sha256((sha + ":scores").encode()).hexdigest(),
            rows=len(unique_scores),
        )
        scores_added, scores_skipped = _add_scores(store, frame, scores_record, unique_scores)
    import_id, status = _start_examples(store, runs, sha, source)
    total = len(todo)
    examples = _write_runs(store, todo, import_id, progress, chunk_rows)
    added = store.imports.count_runs(import_id)
    store.imports.complete(import_id, added)
    skipped = len(runs) - total
    return HarnessImportResult(
        status=status,
        import_id=import_id,
        runs_added=total,
        runs_skipped=skipped,
        examples_added=examples,
        scores_added=scores_added,
        scores_skipped=scores_skipped,
        message=_message(total, skipped, examples, scores_added, scores_skipped, status),
        notes=list(nan_notes),
        seconds=time.perf_counter() - t0,
        **base,
    )


def _start_examples(
    store: Store, runs: Sequence[PendingRun], sha: str, source: Path
) -> tuple[str, Literal["imported", "resumed"]]:
    """The examples import to write under: an interrupted one of this input, or a new one."""
    status: Literal["imported", "resumed"] = "imported"
    partial = store.imports.find(sha, "examples", completed=False)
    if partial is not None:
        import_id, status = partial.import_id, "resumed"
    else:
        import_id = new_import_id()
        store.imports.start(
            ImportRecord(
                import_id=import_id,
                kind="examples",
                source=str(source.resolve()),
                sha256=sha,
                rows=int(sum(r.n_examples for r in runs)),
            )
        )
    return import_id, status


def _write_runs(
    store: Store,
    todo: Sequence[PendingRun],
    import_id: str,
    progress: Progress | None,
    chunk_rows: int | None,
) -> int:
    """Write the runs not yet stored under ``import_id``; the examples written."""
    total = len(todo)
    if progress is not None:
        progress(0, total)
    for run in todo:
        run.record.import_id = import_id
    rows = CHUNK_WRITE_ROWS if chunk_rows is None else chunk_rows
    # a spilled run larger than a chunk is written chunk by chunk (several transactions a
    # run, its runs row last), the others in batches of whole runs
    large = [run for run in todo if run.spool is not None and run.n_examples > rows]
    small = [run for run in todo if not (run.spool is not None and run.n_examples > rows)]
    written = store.runs.write_batches(
        ((run.record, *run.arrays()) for run in small),  # spilled runs read back one at a time
        progress=None if progress is None else (lambda done: progress(done, total)),
    )
    examples = written.examples
    for n_done, run in enumerate(large, start=len(small) + 1):
        spool, index = run.spool, run.spool_index
        assert spool is not None
        if store.runs.write_chunks(run.record, functools.partial(spool.iter_chunks, index, rows)):
            examples += run.n_examples
        if progress is not None:
            progress(n_done, total)
    return examples


def _add_scores(
    store: Store, frame: pd.DataFrame, record: ImportRecord, rows: Sequence[ScoreRow]
) -> tuple[int, int]:
    try:
        return store.scores.add(frame, record)
    except ScoreConflictError as exc:
        row = rows[exc.position]
        raise InputError(exc.reason, path=row.path, line=row.line, field=row.field) from None


def _message(
    runs: int, skipped: int, examples: int, scores: int, scores_skipped: int, status: str
) -> str:
    parts = []
    if runs or skipped:
        parts.append(f"added {runs} run(s) ({examples} examples)")
        if skipped:
            parts.append(f"{skipped} run(s) already complete in the store, skipped")
    parts.append(f"added {scores} score(s)")
    if scores_skipped:
        parts.append(f"{scores_skipped} score(s) already stored with the same values, skipped")
    text = "; ".join(parts)
    if status == "resumed":
        text += " (resumed an interrupted import of this input)"
    return text
