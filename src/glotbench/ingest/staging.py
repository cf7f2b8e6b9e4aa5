"""Staging of large tidy files: a temporary DuckDB file that holds validated records.

The streaming counterparts of :func:`glotbench.ingest.example_validation.validate_examples`
(:func:`glotbench.ingest.staging_examples.stage_examples`) and
:func:`glotbench.ingest.score_validation.validate_scores`
(:func:`glotbench.ingest.staging_scores.stage_scores`) validate files of any
size chunk by chunk (``docs/store.md`` → *Streaming import*). This module is
what both share: :class:`StagedFile` (the temporary DuckDB file, locating
records for errors, clean-up), the staging folders next to the store
(:func:`staging_dir`, :func:`remove_stale_staging`) and the Arrow helpers
that read runs back.

Peak memory is one chunk (plus, for examples, the largest run), whatever the
file size. Errors name the file, the line (CSV, JSONL) or row (Parquet) and the
field, as the whole-file validation does.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

import numpy as np
import pandas as pd

from glotbench.errors import InputError
from glotbench.ingest.readers import SourceKind, TidyTable
from glotbench.store.schema import RunRecord

#: memory DuckDB may use for the staging table's sorts and aggregates before spilling
STAGING_MEMORY = "64MB"
#: name prefix of a staging folder (followed by the importing process's id)
STAGING_PREFIX = ".glotbench-staging-"


@dataclass
class StagedRun:
    """A run of a staged file: its record (``n_examples`` over the whole file)."""

    index: int
    record: RunRecord
    first_loc: int  # where its first record is (record number / line / row)
    has_source_positions: bool
    chunks: int = 1
    last_chunk: int = 0


@dataclass
class StagedFile:
    """A validated tidy file held in a staging DuckDB file; close it when done."""

    path: str
    kind: SourceKind
    gz: bool
    columns: list[str]
    rows: int
    ignored_columns: list[str]
    _con: Any = field(repr=False)
    _dir: Path = field(repr=False)

    # -- locating records ---------------------------------------------------
    def error(self, message: str, loc: int | None, field_name: str | None) -> InputError:
        """An InputError at the record whose location is ``loc`` (None: the file)."""
        table = self._locator(0 if loc is None else loc)
        return table.error(message, None if loc is None else 0, field_name)

    def where(self, loc: int) -> str:
        """``line N`` / ``row N`` of a record location."""
        return self._locator(loc).where(0)

    def more(self, extra: int) -> str:
        """`` (N more lines have the same problem)`` (empty for 0)."""
        if extra <= 0:
            return ""
        unit = "line" if self.kind in ("csv", "jsonl") else "row"
        verb = "has" if extra == 1 else "have"
        return f" ({extra} more {unit}{'s' if extra > 1 else ''} {verb} the same problem)"

    def _locator(self, loc: int) -> TidyTable:
        return TidyTable(
            path=self.path,
            kind=self.kind,
            frame=pd.DataFrame(),
            columns=self.columns,
            record_index=np.asarray([loc], dtype=np.int64),
            gz=self.gz,
        )

    def close(self) -> None:
        try:
            self._con.close()
        finally:
            shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def group_runs(reader: Any) -> Iterator[tuple[int, Any]]:
    """(run, its rows as one Arrow table) from batches ordered by their first column ``run``."""
    import pyarrow as pa

    pending: list[pa.RecordBatch] = []
    current = -1
    for batch in reader:
        runs = batch.column(0).to_numpy()
        starts = np.flatnonzero(np.diff(runs)) + 1
        bounds = [0, *starts.tolist(), len(runs)]
        for a, b in zip(bounds[:-1], bounds[1:], strict=True):
            if a == b:
                continue
            r = int(runs[a])
            if r != current and pending:
                yield current, pa.Table.from_batches(pending)
                pending = []
            current = r
            pending.append(batch.slice(a, b - a))
    if pending:
        yield current, pa.Table.from_batches(pending)


def ids_and_stats(table: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``example_id`` column as an object array and ``stats`` as an (n × k) matrix."""
    ids = np.asarray(table.column("example_id").to_pylist(), dtype=object)
    values = table.column("stats").combine_chunks().flatten().to_numpy(zero_copy_only=False)
    return ids, np.ascontiguousarray(values.reshape(len(ids), k), dtype=np.float64)


def stats_list(stats: np.ndarray) -> Any:
    """An (n × k) matrix as an Arrow list array of n lists of k doubles."""
    import pyarrow as pa

    n, k = stats.shape
    return pa.ListArray.from_arrays(
        pa.array(np.arange(0, (n + 1) * k, k, dtype=np.int32)),
        pa.array(np.ascontiguousarray(stats, dtype=np.float64).reshape(-1)),
    )


def staging_dir(store_path: str | Path) -> Path | None:
    """Where to stage for a store: its folder (same disk, usually not a RAM-backed /tmp).

    None (the system's temporary directory) when that folder is not writable.
    """
    try:
        folder = Path(store_path).resolve().parent
    except (TypeError, OSError):
        return None
    return folder if folder.is_dir() and os.access(folder, os.W_OK) else None


def remove_stale_staging(work_dir: str | Path | None) -> list[Path]:
    """Remove staging folders left by processes that no longer run (e.g. after ``kill -9``).

    A staging folder is named ``.glotbench-staging-<pid>-<random>``; it is
    stale when no process with that id exists. Returns the folders removed.
    """
    folder = Path(work_dir) if work_dir is not None else Path(tempfile.gettempdir())
    removed = []
    for candidate in folder.glob(f"{STAGING_PREFIX}*"):
        pid_text = candidate.name[len(STAGING_PREFIX) :].split("-", 1)[0]
        if not pid_text.isdigit() or not candidate.is_dir():
            continue
        try:
            os.kill(int(pid_text), 0)
        except ProcessLookupError:
            shutil.rmtree(candidate, ignore_errors=True)
            removed.append(candidate)
        except OSError:  # e.g. another user's process: alive
            continue
    return removed


@contextmanager
def open_staging(work_dir: str | Path | None, ddl: str) -> Iterator[tuple[Any, Path]]:
    """A fresh staging folder and DuckDB connection with table ``ddl``.

    Both are removed if the block raises; otherwise the caller's
    :class:`StagedFile` owns them (and removes them on ``close``).
    """
    con, tmp = _connect_staging(work_dir, ddl)
    try:
        yield con, tmp
    except BaseException:
        con.close()
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def new_staging_folder(work_dir: str | Path | None) -> Path:
    """A new ``.glotbench-staging-<pid>-…`` folder in ``work_dir``; stale ones removed first."""
    remove_stale_staging(work_dir)
    return Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-", dir=work_dir))


def _connect_staging(work_dir: str | Path | None, ddl: str) -> tuple[Any, Path]:
    """A new staging folder (stale ones removed first) and its DuckDB file with table ``ddl``."""
    import duckdb

    tmp = new_staging_folder(work_dir)
    try:
        con = duckdb.connect(str(tmp / "staging.duckdb"))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    try:
        con.execute(f"SET memory_limit = '{STAGING_MEMORY}'")
        con.execute(f"SET temp_directory = '{tmp / 'spill'}'")
        con.execute("SET preserve_insertion_order = false")
        con.execute("SET enable_progress_bar = false")
        con.execute(ddl)
    except BaseException:
        con.close()
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return con, tmp
