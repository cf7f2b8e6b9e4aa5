"""Import tidy files into a store: validate everything, then write.

* :func:`import_scores_file` — validated in chunks through a staging table
  like examples and checked against the store, then written in batches, one
  transaction each (memory does not grow with the file; an interrupted import
  is completed by running it again). Re-importing a file
  with the same content (SHA-256) is a no-op; rows already stored with the same
  values are skipped; a stored key with a different value is an error naming
  the line, the field and the stored value.
* :func:`import_examples_file` — one transaction per batch of whole runs
  (``store.runs.write_batches``). Runs already complete are skipped, so an
  interrupted import (Ctrl-C, ``SIGKILL``, a power cut) is completed by
  running the same command again. The file is streamed: validated in chunks
  into a temporary staging table (:mod:`glotbench.ingest.staging`), then written
  run by run, so memory does not grow with the file.

A validation error leaves the store exactly as it was: nothing is written
before the whole file has been read and checked.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from glotbench.errors import InputError
from glotbench.ingest.chunked import CHUNK_ROWS
from glotbench.ingest.readers import TidyTable, detect_format, file_sha256
from glotbench.ingest.score_validation import validate_scores
from glotbench.ingest.staging import staging_dir
from glotbench.ingest.staging_examples import StagedExamples, stage_examples
from glotbench.ingest.staging_scores import (
    StagedScores,
    add_staged_scores,
    check_staged_scores,
    stage_scores,
)
from glotbench.store.layout import new_import_id
from glotbench.store.results import ImportResult, ImportStatus, ScoreConflictError  # noqa: F401
from glotbench.store.schema import ImportRecord, stats_digest
from glotbench.store.store import Store
from glotbench.store.writer_lock import writer_lock

Progress = Callable[[int, int], None]
#: example rows per write transaction of a streaming import (bounds the batch's memory)
STREAM_BATCH_ROWS = 500_000


@contextmanager
def open_store_for_import(path: str | Path, lock_timeout: float | None = None) -> Iterator[Store]:
    """Open (or create) a store for an import (waiting up to ``lock_timeout`` s for a lock).

    If the store did not exist and the import fails before writing anything
    (e.g. a validation error), the newly created, empty store file is removed
    again, so a failed import leaves no trace. A store that holds anything
    (e.g. runs committed before an interruption) is always kept.
    """
    p = Path(path)
    existed = p.exists()
    # hold=False: the file is locked only for each read and each batch's
    # transaction, so readers (`glotbench show`, analyses) are not locked out
    # while the import parses and validates
    store = Store.open(p, hold=False, lock_timeout=lock_timeout)
    try:
        yield store
    except BaseException:
        store.close()
        if not existed:
            _remove_if_empty(p)
        raise
    finally:
        store.close()


def _remove_if_empty(path: Path) -> None:
    """Remove a store this import created and left empty (under the writer lock; if another
    import holds it, the store is kept). Another process that opened the store meanwhile
    recreates it on its next use (``Store._con``)."""
    try:
        with writer_lock(path, timeout=0):
            with Store.open(path, read_only=True) as store:
                counts = store.summary().counts
            if counts["runs"] or counts["scores"] or counts["examples"] or counts["imports"]:
                return
            if counts["incomplete_imports"]:
                return
            for candidate in (path, path.with_name(path.name + ".wal")):
                with suppress(OSError):
                    candidate.unlink()
    except Exception:  # noqa: BLE001 - if in doubt (in use, unreadable), keep the file
        return


def _checked_path(path: str | Path) -> Path:
    """The path, after checking that it names an existing file of a known format."""
    p = Path(path)
    detect_format(p)
    if not p.exists():
        raise InputError("file not found", path=str(p))
    if not p.is_file():
        raise InputError("not a file", path=str(p))
    return p


def _skipped(
    kind: str, path: Path, store: Store, sha: str, done: ImportRecord, t0: float
) -> ImportResult:
    when = done.completed_at.strftime("%Y-%m-%d %H:%M:%S UTC") if done.completed_at else "earlier"
    return ImportResult(
        kind=kind,
        source=str(path),
        store=str(store.path),
        status="skipped",
        sha256=sha,
        import_id=done.import_id,
        rows=done.rows,
        message=(
            f"this file (sha256 {sha[:12]}…) was already imported on {when} "
            f"(import {done.import_id}); nothing to do"
        ),
        seconds=time.perf_counter() - t0,
    )


def import_scores_file(
    store: Store,
    path: str | Path,
    *,
    allow_unknown_metrics: bool = False,
    percent: bool = False,
    chunk_rows: int = CHUNK_ROWS,
    batch_rows: int = STREAM_BATCH_ROWS,
) -> ImportResult:
    """Validate a tidy scores file in chunks, check it against the store, then add it in batches.

    Streaming (``docs/store.md`` → *Streaming import*): the file is validated
    ``chunk_rows`` records at a time into a staging table
    (:func:`glotbench.ingest.staging_scores.stage_scores`); only when the whole file is
    valid and no row conflicts with a stored score are its rows added,
    ``batch_rows`` at a time, one transaction each (:func:`_write_staged_scores`),
    so memory does not grow with the file, an invalid file leaves the store as
    it was, and a killed import is completed by running it again.

    ``percent``: the file reports 0–1 metrics in percent; they are divided by 100.
    """
    t0 = time.perf_counter()
    p = _checked_path(path)
    sha = file_sha256(p)
    if percent:  # the same file read on another scale is another input
        sha = hashlib.sha256((sha + ":percent").encode()).hexdigest()
    done = store.imports.find(sha, "scores", completed=True)
    if done is not None:
        return _skipped("scores", p, store, sha, done, t0)
    with (
        stage_scores(
            p,
            allow_unknown_metrics=allow_unknown_metrics,
            percent=percent,
            chunk_rows=chunk_rows,
            work_dir=staging_dir(store.path),
        ) as staged,
        store.writing(),
    ):  # decide from the store's content and write: one writer
        done = store.imports.find(sha, "scores", completed=True)  # by another process meanwhile
        if done is not None:
            return _skipped("scores", p, store, sha, done, t0)
        try:
            added, skipped, status, import_id = _write_staged_scores(store, staged, sha, batch_rows)
        except ScoreConflictError as exc:
            raise staged.error(exc.reason, staged.loc_of(exc.position), exc.field) from None
        rows = staged.rows
    message = f"added {added} score(s)" + (
        f"; {skipped} already stored with the same value(s), skipped" if skipped else ""
    )
    if status == "resumed":
        message += " (resumed an interrupted import of this file)"
    return ImportResult(
        kind="scores",
        source=str(p),
        store=str(store.path),
        status=status,  # type: ignore[arg-type]
        sha256=sha,
        import_id=import_id,
        rows=rows,
        scores_added=added,
        scores_skipped=skipped,
        message=message,
        seconds=time.perf_counter() - t0,
    )


def _write_staged_scores(
    store: Store, staged: StagedScores, sha: str, batch_rows: int
) -> tuple[int, int, str, str]:
    """Check every batch against the store, then add them; (added, skipped, status, id).

    The check pass writes nothing, so a conflict anywhere leaves the store as
    it was. Then the import is recorded (or an interrupted one of the same
    file resumed) and each batch is added in its own transaction — memory does
    not grow with the file, and a killed import is completed by running it
    again (rows stored alike are skipped). An empty scores table needs no
    lookups: the file's keys are unique. The caller holds the writer lock
    (``Store.writing``): the table stays as checked until the import completes,
    and an unfinished import of this file belongs to a process that died.
    """
    check = check_staged_scores(store, staged, batch_rows)
    import_id, status = _open_import(store, Path(staged.path), sha, staged.rows, "scores")
    added = add_staged_scores(store, staged, import_id, check=check, batch_rows=batch_rows)
    store.imports.complete(import_id, added)
    return added, staged.rows - added, status, import_id


def add_scores_frame(
    store: Store,
    frame: pd.DataFrame,
    *,
    source: str = "<DataFrame>",
    allow_unknown_metrics: bool = False,
) -> ImportResult:
    """Validate a DataFrame of scores (the scores file columns) and add it.

    Errors name the 1-based row of ``frame``.
    """
    t0 = time.perf_counter()
    table = TidyTable.from_frame(frame, name=source)
    data = validate_scores(table, allow_unknown_metrics=allow_unknown_metrics)
    sha = hashlib.sha256(data.frame.to_csv(index=False).encode("utf-8")).hexdigest()
    record = ImportRecord(
        import_id=new_import_id(), kind="api", source=source, sha256=sha, rows=len(table)
    )
    try:
        with store.writing():  # a streaming import decided its unchecked inserts under it
            added, skipped = store.scores.add(data.frame, record)
    except ScoreConflictError as exc:
        raise table.error(exc.reason, exc.position, exc.field) from None
    return ImportResult(
        kind="api",
        source=source,
        store=str(store.path),
        status="imported",
        sha256=sha,
        import_id=record.import_id,
        rows=len(table),
        scores_added=added,
        scores_skipped=skipped,
        message=f"added {added} score(s), skipped {skipped}",
        seconds=time.perf_counter() - t0,
    )


def import_examples_file(
    store: Store,
    path: str | Path,
    *,
    labels: Sequence[str] | None = None,
    progress: Progress | None = None,
    chunk_rows: int = CHUNK_ROWS,
    batch_rows: int = STREAM_BATCH_ROWS,
) -> ImportResult:
    """Validate a tidy per-example file in chunks, then write its runs in batches of whole runs.

    Streaming (``docs/store.md`` → *Streaming import*): the file is validated
    ``chunk_rows`` records at a time into a staging table in a temporary
    DuckDB file next to the store (:func:`glotbench.ingest.staging_examples.stage_examples`),
    so memory does not grow with the file; only when the whole file is valid
    are its runs read back one at a time and written with
    ``store.runs.write_batches`` (batches of at most ``batch_rows`` example rows).

    ``labels`` fixes the label set of metrics that need one (macro-F1, MCC...);
    without it the labels are read from the statistic column names
    (``tp[LABEL]``...). ``progress(done, total)`` is called after each batch.
    """
    t0 = time.perf_counter()
    p = _checked_path(path)
    sha = file_sha256(p)
    done = store.imports.find(sha, "examples", completed=True)
    if done is not None:
        return _skipped("examples", p, store, sha, done, t0)
    with (
        stage_examples(
            p, labels=labels, chunk_rows=chunk_rows, work_dir=staging_dir(store.path)
        ) as staged,
        store.writing(),
    ):  # decide from the store's content and write: one writer
        done = store.imports.find(sha, "examples", completed=True)  # by another process meanwhile
        if done is not None:
            return _skipped("examples", p, store, sha, done, t0)
        to_write = _runs_to_write(store, staged)
        import_id, status = _open_import(store, p, sha, staged.rows, "examples")
        total = len(to_write)
        if progress is not None:
            progress(0, total)
        examples = 0

        def items() -> Iterator[tuple[Any, ...]]:
            nonlocal examples
            for run in staged.iter_runs(to_write):
                run.record.import_id = import_id
                examples += len(run.example_ids)
                yield run.record, run.example_ids, run.stats, run.source_positions

        store.runs.write_batches(
            items(),
            batch_rows=batch_rows,
            progress=None if progress is None else (lambda done: progress(done, total)),
        )
        added = store.imports.count_runs(import_id)
        store.imports.complete(import_id, added)
        skipped = len(staged.runs) - total
        message = f"added {total} run(s) ({examples} examples)"
        if skipped:
            message += f"; {skipped} run(s) already complete in the store, skipped"
        if status == "resumed":
            message += " (resumed an interrupted import of this file)"
        return ImportResult(
            kind="examples",
            source=str(p),
            store=str(store.path),
            status=status,  # type: ignore[arg-type]
            sha256=sha,
            import_id=import_id,
            rows=staged.rows,
            runs_added=total,
            runs_skipped=skipped,
            ignored_columns=staged.ignored_columns,
            message=message,
            seconds=time.perf_counter() - t0,
        )


def _runs_to_write(store: Store, staged: StagedExamples) -> list[int]:
    """Indices of the staged runs the store lacks; a staged run stored with other statistics
    is an error (a run's key must identify one result)."""
    # compare with what is stored: same content -> skip (resume); else an error
    stored = store.runs.stored(run.record.run_id for run in staged.runs)
    stored_indices = [r.index for r in staged.runs if r.record.run_id in stored]
    for run in staged.iter_runs(stored_indices):
        existing = stored[run.record.run_id]
        digest = stats_digest(run.example_ids, run.stats, run.record.stat_names)
        if digest != existing["stats_sha256"]:
            info = next(r for r in staged.runs if r.record.run_id == run.record.run_id)
            raise staged.error(
                f"the run starting here ({run.record.describe()}) is already stored with "
                f"different statistics ({existing['n_examples']} examples, from "
                f"{existing['source']}); a run's key must identify one result — change its "
                "seed or config_hash, or import into another store",
                info.first_loc,
                None,
            )
    return [r.index for r in staged.runs if r.record.run_id not in stored]


def _open_import(
    store: Store, path: Path, sha: str, rows: int, kind: Literal["scores", "examples"]
) -> tuple[str, str]:
    """The import's id and status: an interrupted import of the same file (of ``kind``) is
    resumed, else a new one is recorded as started."""
    partial = store.imports.find(sha, kind, completed=False)
    if partial is not None:
        import_id, status = partial.import_id, "resumed"
    else:
        import_id, status = new_import_id(), "imported"
        store.imports.start(
            ImportRecord(
                import_id=import_id,
                kind=kind,
                source=str(path.resolve()),
                sha256=sha,
                rows=rows,
            )
        )
    return import_id, status
