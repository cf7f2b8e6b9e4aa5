"""The results store: one embedded DuckDB file.

Tables (see ``docs/store.md`` for every column):

``meta``           key/value pairs; ``schema_version`` guards the layout
``runs``           one row per complete run (key, metric, statistic names, ...)
``example_stats``  one row per example of a run: (run_id, position, example_id, stats[],
                   source_position)
``scores``         aggregate scores without per-example data
``imports``        one row per imported file (kind, source, sha256, rows, completed_at)
``failures``       one row per failed benchmark job (key, error, traceback, resolved_at)

:class:`Store` is assembled from parts, one module per responsibility: this
module opens, creates and migrates the file (schema), writes runs and scores
and summarises; :mod:`~glotbench.core.store_reads` reads runs and statistics,
:mod:`~glotbench.core.store_failures` records and resolves job failures,
:mod:`~glotbench.core.store_imports` tracks imported files and
:mod:`~glotbench.core.store_export` exports tables and merges snapshots. Shared
helpers are in :mod:`~glotbench.core.store_sql` and :mod:`~glotbench.core.layout`.
The names importable from here before the split still are.

Guarantees:

* a run is written in **one transaction** together with all its example
  statistics (:meth:`Store.write_run`): a crash or ``SIGKILL`` never leaves a
  half-written run, and a run is *complete* exactly when its ``runs`` row exists;
* many runs are written in transactions of whole runs
  (:meth:`Store.write_run_batches`): per batch one Arrow insert per table and
  one anti-join of the incoming run ids against ``runs``, so a run never spans
  two transactions and the guarantee above holds for every batch;
* a repeated run (same key, hence same ``run_id``) is skipped, so a re-run or
  a re-import resumes where it stopped;
* ``replace=True`` (``glotbench run --force``) deletes the stored run and writes
  the new one in the **same** transaction, so a failure in between keeps the old run;
* a job failure is recorded (:meth:`Store.record_failure`) and marked resolved in
  the transaction that later stores a run with the same (model, dataset, seed,
  config_hash);
* a scores import is one transaction (:meth:`Store.add_scores`);
* opening waits (up to ``lock_timeout``) for a store another process holds,
  and a ``hold=False`` store locks the file only while it reads or writes, so
  readers in other processes get in between a writer's transactions and see
  only complete runs (:mod:`glotbench.core.lock`, ``docs/store.md``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa

from glotbench.core.layout import (
    _RUN_COLUMNS,
    _first,
    new_import_id,  # noqa: F401  (importable from here, as before)
    run_id_of_row,  # noqa: F401
)
from glotbench.core.lock import connect as connect_waiting
from glotbench.core.results import ScoreConflictError
from glotbench.core.schema import (
    SCHEMA_VERSION,
    SCORE_COLUMNS,
    ImportRecord,
    RunKey,
    RunRecord,
    stats_digest,
    utc_now,
)
from glotbench.core.store_export import ExportPart, ExportResult, ExportTable  # noqa: F401
from glotbench.core.store_failures import FailureList, FailuresPart  # noqa: F401
from glotbench.core.store_imports import ImportsPart
from glotbench.core.store_reads import ReadsPart, StatsMatrix, in_configs  # noqa: F401
from glotbench.core.store_sql import Filter, _in_use, _sql_ident, _where  # noqa: F401
from glotbench.errors import InputError, StoreError

#: A run to write: (record, example ids, n × k statistics[, source positions])
RunItem = (
    tuple[RunRecord, Sequence[Any] | np.ndarray, npt.ArrayLike]
    | tuple[RunRecord, Sequence[Any] | np.ndarray, npt.ArrayLike, npt.ArrayLike | None]
)
#: ``meta`` keys ``suite:NAME`` hold the JSON title and description of a suite that ran here
SUITE_META_PREFIX = "suite:"

_DDL = """
CREATE TABLE meta (
    key VARCHAR PRIMARY KEY,
    value VARCHAR NOT NULL
);
CREATE TABLE runs (
    run_id VARCHAR PRIMARY KEY,
    model VARCHAR NOT NULL,
    dataset VARCHAR NOT NULL,
    task VARCHAR NOT NULL,
    language VARCHAR NOT NULL,
    seed BIGINT,
    config_hash VARCHAR NOT NULL,
    metric VARCHAR NOT NULL,
    metric_config JSON NOT NULL,
    stat_names VARCHAR[] NOT NULL,
    n_examples BIGINT NOT NULL,
    model_metadata JSON NOT NULL,
    seconds DOUBLE,
    examples_per_second DOUBLE,
    source VARCHAR,
    import_id VARCHAR,
    stats_sha256 VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL
);
CREATE TABLE example_stats (
    run_id VARCHAR NOT NULL,
    position INTEGER NOT NULL,
    example_id VARCHAR NOT NULL,
    stats DOUBLE[] NOT NULL,
    source_position BIGINT
);
CREATE TABLE scores (
    model VARCHAR NOT NULL,
    task VARCHAR NOT NULL,
    language VARCHAR NOT NULL,
    dataset VARCHAR NOT NULL,
    metric VARCHAR NOT NULL,
    score DOUBLE NOT NULL,
    seed BIGINT,
    replicate BIGINT,
    stderr DOUBLE,
    n BIGINT,
    metadata JSON NOT NULL,
    import_id VARCHAR
);
CREATE TABLE imports (
    import_id VARCHAR PRIMARY KEY,
    kind VARCHAR NOT NULL,
    source VARCHAR NOT NULL,
    sha256 VARCHAR NOT NULL,
    rows BIGINT NOT NULL,
    added BIGINT,
    started_at TIMESTAMP NOT NULL,
    completed_at TIMESTAMP
);
"""

#: The ``failures`` table (added after schema version 1 was released). It is
#: *additive*: glotbench versions that do not know it ignore it, so the schema
#: version stays 1. New stores get it with the others; an older store gets it
#: the first time it is opened for writing; read paths treat a missing table as
#: empty (an old store opened read-only).
_FAILURES_DDL = """
CREATE TABLE IF NOT EXISTS failures (
    failure_id VARCHAR PRIMARY KEY,
    model VARCHAR NOT NULL,
    dataset VARCHAR NOT NULL,
    task VARCHAR NOT NULL,
    language VARCHAR NOT NULL,
    seed BIGINT,
    config_hash VARCHAR NOT NULL,
    iteration BIGINT,
    error_type VARCHAR NOT NULL,
    message VARCHAR NOT NULL,
    traceback VARCHAR,
    source VARCHAR,
    created_at TIMESTAMP NOT NULL,
    resolved_at TIMESTAMP
);
"""

#: Migrations from schema version ``v`` to ``v + 1``, run in one transaction
#: when an older store is opened for writing (read-only, it is read as it is).
_MIGRATIONS: dict[int, str] = {
    # 1 -> 2: an example's index in its source data (NULL: unknown)
    1: "ALTER TABLE example_stats ADD COLUMN source_position BIGINT",
}

#: Tables every store has (a store without one of them is damaged).
_TABLES = ("meta", "runs", "example_stats", "scores", "imports")


_SCORE_TABLE_COLUMNS = SCORE_COLUMNS

_EXAMPLE_COLUMNS = ("run_id", "position", "example_id", "stats", "source_position")

#: Arrow types of the ``runs`` columns as :meth:`Store._prepare_run` builds them
#: (JSON columns travel as text; DuckDB casts them on insert)
_RUN_ARROW_TYPES: dict[str, pa.DataType] = {
    "seed": pa.int64(),
    "metric_config": pa.string(),
    "stat_names": pa.list_(pa.string()),
    "n_examples": pa.int64(),
    "model_metadata": pa.string(),
    "seconds": pa.float64(),
    "examples_per_second": pa.float64(),
    "created_at": pa.timestamp("us"),
}

#: runs in the first transaction of :meth:`Store.write_run_batches`; each next
#: batch doubles, up to ``batch_runs``, so the first runs are committed (and
#: reported) at once and large imports still pay few commits
FIRST_BATCH_RUNS = 16
#: most runs per transaction of :meth:`Store.write_run_batches` (by default)
BATCH_RUNS = 2_000
#: example rows per transaction of :meth:`Store.write_run_batches`; bounds the
#: memory of one batch's Arrow tables (about 50 bytes a row with k = 2)
BATCH_ROWS = 2_000_000

#: relative tolerance under which a re-imported score equals the stored one
SCORE_RTOL = 1e-9


def _list_array(stats: npt.NDArray[np.float64]) -> pa.ListArray:
    n, k = stats.shape
    offsets = pa.array(np.arange(0, n * k + 1, k, dtype=np.int32))
    return pa.ListArray.from_arrays(offsets, pa.array(stats.reshape(-1), type=pa.float64()))


def _source_position_array(
    positions: npt.ArrayLike | None, ids: np.ndarray, where: str
) -> pa.Array:
    """The ``source_position`` column of a run: NULLs, or unique integers ≥ 0 (validated)."""
    if positions is None:
        return pa.nulls(ids.size, type=pa.int64())
    raw = np.asarray(positions)
    if raw.ndim != 1 or raw.size != ids.size:
        raise InputError(
            f"{where}: {raw.size} source positions for {ids.size} examples (one per example)"
        )
    values = pd.to_numeric(pd.Series(raw, dtype=object), errors="coerce").to_numpy(np.float64)
    bad = ~np.isfinite(values) | (values < 0) | (values != np.floor(values))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"{where}: source position of example {ids[i]!r} must be an integer ≥ 0, got {raw[i]!r}"
        )
    ints = values.astype(np.int64)
    unique, counts = np.unique(ints, return_counts=True)
    if (counts > 1).any():
        dup = int(unique[counts > 1][0])
        raise InputError(f"{where}: source position {dup} is given to more than one example")
    return pa.array(ints, type=pa.int64())


@dataclass
class StoreSummary:
    """What a store holds (``glotbench show``)."""

    path: str
    schema_version: int
    counts: dict[str, int]
    by_model_task_language: pd.DataFrame
    incomplete_imports: list[dict[str, Any]] = field(default_factory=list)

    def to_frame(self) -> pd.DataFrame:
        return self.by_model_task_language.copy()

    def to_dict(self) -> dict[str, Any]:
        rows = []
        for rec in self.by_model_task_language.to_dict("records"):
            rows.append({k: (v.item() if isinstance(v, np.generic) else v) for k, v in rec.items()})
        return {
            "store": self.path,
            "schema_version": self.schema_version,
            "counts": dict(self.counts),
            "by_model_task_language": rows,
            "incomplete_imports": self.incomplete_imports,
        }


@dataclass
class _PreparedRun:
    """A validated run, ready to insert (:meth:`Store._prepare_run`).

    ``row`` holds the ``runs`` columns in :data:`_RUN_COLUMNS` order;
    ``examples`` the run's ``example_stats`` columns except ``run_id``.
    """

    run_id: str
    description: str
    row: list[Any]
    examples: pa.Table

    @property
    def n_examples(self) -> int:
        return int(self.examples.num_rows)


@dataclass
class BatchWrite:
    """What :meth:`Store.write_run_batches` wrote."""

    run_ids: list[str] = field(default_factory=list)
    examples: int = 0
    skipped: int = 0
    batches: int = 0

    @property
    def written(self) -> int:
        return len(self.run_ids)

    def add(self, runs: Sequence[_PreparedRun], *, skipped: int) -> None:
        self.run_ids.extend(r.run_id for r in runs)
        self.examples += sum(r.n_examples for r in runs)
        self.skipped += skipped
        self.batches += 1


def _id_strings(example_ids: Sequence[Any] | np.ndarray) -> tuple[list[str], pa.Array]:
    """Example ids as a list of ``str`` (non-strings converted with ``str``) and as Arrow.

    The common case — all ids already strings — converts in C (no Python loop).
    """
    raw = example_ids.tolist() if isinstance(example_ids, np.ndarray) else list(example_ids)
    try:
        arr = pa.array(raw)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        arr = None
    if arr is None or arr.type != pa.string() or arr.null_count:
        raw = [e if isinstance(e, str) else str(e) for e in raw]
        arr = pa.array(raw, type=pa.string())
    return raw, arr


def _has_blank(ids: list[str]) -> bool:
    """Whether an id is empty or whitespace only (``not id.strip()``), looping in C."""
    return not all(map(str.strip, ids))


def _example_columns(
    ids: pa.Array, matrix: npt.NDArray[np.float64], source_position: pa.Array
) -> pa.Table:
    """A run's ``example_stats`` columns except ``run_id`` (inserted by name)."""
    return pa.table(
        {
            "position": pa.array(np.arange(len(ids), dtype=np.int32)),
            "example_id": ids,
            "stats": _list_array(matrix),
            "source_position": source_position,
        }
    )


def _with_positions(
    runs: Iterable[tuple[Any, ...]], source_positions: Sequence[npt.ArrayLike | None] | None
) -> list[tuple[Any, ...]]:
    """Runs as (record, ids, stats, source_positions) tuples.

    A run is given as (record, ids, stats) or with its source positions as a
    fourth item; ``source_positions`` (one entry per run) fills them in instead.
    """
    items = [tuple(item) for item in runs]
    if source_positions is None:
        return [item if len(item) == 4 else (*item, None) for item in items]
    positions = list(source_positions)
    if len(positions) != len(items):
        raise InputError(f"{len(positions)} source_positions entries for {len(items)} runs")
    return [(*item[:3], pos) for item, pos in zip(items, positions, strict=True)]


def _batch_examples(runs: Sequence[_PreparedRun]) -> pa.Table:
    """The ``example_stats`` rows of a batch of runs, in run order, as one Arrow table."""
    body = pa.concat_tables([r.examples for r in runs]).combine_chunks()  # one chunk: fast scan
    owner = np.repeat(np.arange(len(runs), dtype=np.int32), [r.n_examples for r in runs])
    run_ids = pa.DictionaryArray.from_arrays(
        pa.array(owner), pa.array([r.run_id for r in runs], type=pa.string())
    )  # DuckDB stores it as VARCHAR; no string per row is built in Python
    return body.add_column(0, "run_id", run_ids)


def _batch_runs(runs: Sequence[_PreparedRun]) -> pa.Table:
    """The ``runs`` rows of a batch as one Arrow table (columns in table order)."""
    columns = list(zip(*(r.row for r in runs), strict=True))
    return pa.table(
        {
            name: pa.array(values, type=_RUN_ARROW_TYPES.get(name, pa.string()))
            for name, values in zip(_RUN_COLUMNS, columns, strict=True)
        }
    )


def _check_unique(runs: Sequence[_PreparedRun], seen: set[str]) -> None:
    """Refuse a run given twice (within ``runs`` or already in ``seen``); extends ``seen``."""
    for item in runs:
        if item.run_id in seen:
            raise InputError(f"run ({item.description}) is given more than once")
        seen.add(item.run_id)


@contextmanager
def _registered(con: duckdb.DuckDBPyConnection, prefix: str, table: pa.Table) -> Iterator[str]:
    """Register an Arrow table as a uniquely named view for the duration of the block."""
    view = f"{prefix}_{uuid.uuid4().hex[:8]}"
    con.register(view, table)
    try:
        yield view
    finally:
        with suppress(duckdb.Error):
            con.unregister(view)


class Store(ReadsPart, FailuresPart, ImportsPart, ExportPart):
    """A glotbench results store in a DuckDB file.

    Open with :meth:`Store.open` (creates the file unless ``read_only``) and
    use as a context manager::

        with Store.open("results.duckdb") as store:
            store.write_run(record, example_ids, stats)
            frame = store.runs(models=["xlmr"])
    """

    def __init__(
        self,
        connection: duckdb.DuckDBPyConnection,
        path: Path,
        read_only: bool,
        *,
        hold: bool = True,
        lock_timeout: float | None = None,
    ) -> None:
        self._connection: duckdb.DuckDBPyConnection | None = connection
        self.path = path
        self.read_only = read_only
        self.schema_version = SCHEMA_VERSION
        #: False: the file is locked only while in use (see :meth:`open`)
        self.hold = hold
        self.lock_timeout = lock_timeout
        self._held = 0  # depth of `held()` blocks
        self._closed = False

    @property
    def _con(self) -> duckdb.DuckDBPyConnection:
        """The connection; reopened (waiting for the lock) after :meth:`release`."""
        if self._connection is None:
            if self._closed:
                raise StoreError(f"the store {self.path} is closed")
            self._connection = self._connect(self.path, self.read_only, self.lock_timeout)
        return self._connection

    @_con.setter
    def _con(self, connection: duckdb.DuckDBPyConnection) -> None:
        self._connection = connection

    @staticmethod
    def _connect(
        path: Path, read_only: bool, lock_timeout: float | None
    ) -> duckdb.DuckDBPyConnection:
        try:
            return connect_waiting(path, read_only=read_only, timeout=lock_timeout)
        except duckdb.Error as exc:
            raise StoreError(_open_error_message(path, exc)) from None

    def release(self) -> None:
        """Close the connection so other processes can open the file; reopened on next use.

        Does nothing inside a :meth:`held` block. Committed data is on disk
        (DuckDB checkpoints when its last connection to a file closes).
        """
        if self._held or self._connection is None:
            return
        con, self._connection = self._connection, None
        with suppress(duckdb.Error):
            con.close()

    @contextmanager
    def held(self) -> Iterator[Store]:
        """Keep the file open (and locked) for the whole block; then release it unless ``hold``.

        Groups a job's reads and transactions under one lock acquisition.
        """
        _ = self._con  # acquire now (waits for the lock)
        self._held += 1
        try:
            yield self
        finally:
            self._held -= 1
            if not self.hold:
                self.release()

    # ------------------------------------------------------------------
    # opening
    # ------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        read_only: bool = False,
        hold: bool = True,
        lock_timeout: float | None = None,
    ) -> Store:
        """Open (or, unless ``read_only``, create) the store at ``path``.

        While another process holds the file (a writer, or — to write — any
        reader), opening waits up to ``lock_timeout`` seconds (default
        ``$GLOTBENCH_LOCK_TIMEOUT`` or 60; :mod:`glotbench.core.lock`), saying so on
        stderr after a second, then raises a :class:`StoreError` naming the holder.

        ``hold=False`` locks the file only while it is used: every
        :meth:`transaction` outside a :meth:`held` block releases it after its
        commit, :meth:`held` releases it at the end of the block, and the next
        use reopens it. A long-running writer (``glotbench run``, an import)
        opens this way, so readers are locked out only for a transaction.
        """
        p = Path(path)
        if p.exists() and p.is_dir():
            raise StoreError(f"{p} is a directory; --store must name a DuckDB file")
        if read_only and not p.exists():
            raise StoreError(
                f"no store at {p}; import results first (glotbench import ...) or pass --store"
            )
        if not read_only:
            try:
                p.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create the directory of {p}: {exc}") from None
        con = cls._connect(p, read_only, lock_timeout)
        store = cls(con, p, read_only, lock_timeout=lock_timeout)
        try:
            store._initialise()
        except BaseException:
            store.close()
            raise
        store.hold = hold
        if not hold:
            store.release()
        return store

    def _initialise(self) -> None:
        tables = {
            row[0]
            for row in self._con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
            ).fetchall()
        }
        if "meta" not in tables:
            if tables or self.read_only:
                raise StoreError(
                    f"{self.path} is a DuckDB database but not a glotbench store "
                    "(it has no 'meta' table); pass another --store"
                )
            with self.transaction():
                self._con.execute(_DDL)
                self._con.execute(_FAILURES_DDL)
                from glotbench._version import __version__

                now = utc_now().isoformat(timespec="seconds")
                self._con.executemany(
                    "INSERT INTO meta VALUES (?, ?)",
                    [
                        ["schema_version", str(SCHEMA_VERSION)],
                        ["created_at", now],
                        ["created_by", f"glotbench {__version__}"],
                    ],
                )
            return
        row = _first(
            self._con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchall()
        )
        try:
            version = int(row[0]) if row else None
        except ValueError:
            version = None
        if version is None:
            raise StoreError(f"{self.path} has no valid schema_version in its 'meta' table")
        if version > SCHEMA_VERSION:
            from glotbench._version import __version__

            raise StoreError(
                f"{self.path} has schema version {version}, but glotbench {__version__} "
                f"reads versions up to {SCHEMA_VERSION}; upgrade glotbench to open this store"
            )
        missing = [t for t in _TABLES if t not in tables]
        if missing:
            raise StoreError(
                f"{self.path} is missing the table(s) {', '.join(missing)}; it is damaged"
            )
        self.schema_version = version
        if "failures" not in tables and not self.read_only:
            with self.transaction():  # an older store: add the (additive) failures table
                self._con.execute(_FAILURES_DDL)
        if version < SCHEMA_VERSION and not self.read_only:
            self._migrate(version)

    def _migrate(self, version: int) -> None:
        """Bring a store of an older schema version to :data:`SCHEMA_VERSION` (one transaction)."""
        with self.transaction() as con:
            for step in range(version, SCHEMA_VERSION):
                con.execute(_MIGRATIONS[step])
            con.execute(
                "UPDATE meta SET value = ? WHERE key = 'schema_version'", [str(SCHEMA_VERSION)]
            )
        self.schema_version = SCHEMA_VERSION

    def _has_source_positions(self) -> bool:
        """False only for a store of schema version 1 opened read-only (no such column)."""
        return self.schema_version >= 2

    def _has_failures_table(self) -> bool:
        """False only for an older store opened read-only (it has no failures yet)."""
        row = _first(
            self._con.execute(
                "SELECT 1 FROM information_schema.tables "
                "WHERE table_schema = 'main' AND table_name = 'failures'"
            ).fetchall()
        )
        return row is not None

    def close(self) -> None:
        """Close the connection (idempotent); the store cannot be used afterwards."""
        self._closed = True
        con, self._connection = self._connection, None
        if con is not None:
            with suppress(duckdb.Error):
                con.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        mode = "read-only" if self.read_only else "read-write"
        return f"Store({str(self.path)!r}, {mode})"

    @property
    def connection(self) -> duckdb.DuckDBPyConnection:
        """The underlying DuckDB connection (for ad-hoc SQL; do not write through it)."""
        return self._con

    # ------------------------------------------------------------------
    # transactions
    # ------------------------------------------------------------------
    def _require_writable(self) -> None:
        if self.read_only:
            raise StoreError(f"{self.path} is open read-only; open it with read_only=False")

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """``BEGIN ... COMMIT``; rolls back on any exception (including Ctrl-C).

        With ``hold=False`` and outside a :meth:`held` block, the file is
        released after the commit (or rollback).
        """
        self._require_writable()
        with self.held():
            con = self._con
            con.begin()
            try:
                yield con
            except BaseException:
                with suppress(duckdb.Error):
                    con.rollback()
                raise
            try:
                con.commit()
            except duckdb.Error as exc:
                with suppress(duckdb.Error):
                    con.rollback()
                raise StoreError(f"could not commit to {self.path}: {exc}") from None

    @_in_use
    def meta(self) -> dict[str, str]:
        """The ``meta`` key/value pairs."""
        return dict(self._con.execute("SELECT key, value FROM meta ORDER BY key").fetchall())

    def set_meta(self, key: str, value: str) -> None:
        """Set one ``meta`` key (e.g. ``suite:NAME``); ``schema_version`` is not writable here."""
        if key == "schema_version":
            raise StoreError("schema_version is set by the store itself")
        with self.transaction() as con:
            con.execute("DELETE FROM meta WHERE key = ?", [key])
            con.execute("INSERT INTO meta VALUES (?, ?)", [key, value])

    def suites(self) -> dict[str, dict[str, str]]:
        """Suites that ran into this store (``suite:NAME`` meta keys): name → title, description."""
        out: dict[str, dict[str, str]] = {}
        for key, value in self.meta().items():
            if key.startswith(SUITE_META_PREFIX):
                try:
                    info = json.loads(value)
                except ValueError:
                    info = {}
                name = key.removeprefix(SUITE_META_PREFIX)
                out[name] = {
                    "title": str(info.get("title") or ""),
                    "description": str(info.get("description") or ""),
                }
        return out

    # ------------------------------------------------------------------
    # runs
    # ------------------------------------------------------------------
    @_in_use
    def completed_run_ids(self) -> set[str]:
        """Ids of all complete runs (a run is complete iff its ``runs`` row exists)."""
        return {r[0] for r in self._con.execute("SELECT run_id FROM runs").fetchall()}

    @_in_use
    def has_run(self, key: RunKey | str) -> bool:
        """Whether the run (a :class:`RunKey`, :class:`RunRecord` or run id) is complete."""
        run_id = key if isinstance(key, str) else key.run_id
        row = _first(self._con.execute("SELECT 1 FROM runs WHERE run_id = ?", [run_id]).fetchall())
        return row is not None

    @_in_use
    def stored_runs(self, run_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """n_examples, stats_sha256, source and created_at of the stored runs among ``run_ids``."""
        ids = list(run_ids)
        if not ids:
            return {}
        rows = self._con.execute(
            "SELECT run_id, n_examples, stats_sha256, source, created_at FROM runs "
            "WHERE run_id IN (SELECT unnest(?))",
            [ids],
        ).fetchall()
        return {
            r[0]: {"n_examples": r[1], "stats_sha256": r[2], "source": r[3], "created_at": r[4]}
            for r in rows
        }

    def write_run(
        self,
        run: RunRecord,
        example_ids: Sequence[Any] | np.ndarray,
        stats: npt.ArrayLike,
        *,
        replace: bool = False,
        source_positions: npt.ArrayLike | None = None,
    ) -> bool:
        """Store one complete run in one transaction; ``False`` if it was already stored.

        ``stats`` is the (n × k) matrix of per-example statistics, row ``i``
        belonging to ``example_ids[i]``; k must equal ``len(run.stat_names)``.
        Example ids must be unique non-empty strings and statistics finite.
        ``source_positions`` (optional) gives each example's index in its
        source data (e.g. the sentence's index in the test file), unique
        non-negative integers; without it the column is NULL.

        With ``replace`` a stored run with the same key is deleted and the new
        one written in the **same** transaction (``True`` is returned): if
        anything fails in between, the old run is still there.

        Storing the run marks open :meth:`failures` of its (model, dataset,
        seed, config_hash) resolved, in the same transaction.
        """
        return self.write_runs([(run, example_ids, stats, source_positions)], replace=replace) == 1

    def write_runs(
        self,
        runs: Iterable[RunItem],
        *,
        replace: bool = False,
        source_positions: Sequence[npt.ArrayLike | None] | None = None,
    ) -> int:
        """Store several runs (e.g. the metrics of one benchmark job) in **one** transaction.

        ``source_positions``, if given, has one entry (or None) per run, as in
        :meth:`write_run`.

        Every run is validated as in :meth:`write_run` before anything is
        written. Runs already stored are skipped, or with ``replace`` deleted
        and rewritten — in the same transaction, so a failure anywhere leaves
        the store exactly as it was (the old runs intact). Open
        :meth:`failures` of the (model, dataset, seed, config_hash) of the
        written runs are marked resolved in that transaction too. Returns the
        number of runs written (new or replaced).

        The runs are written as one batch (:meth:`_write_batch`): one Arrow
        insert per table, whatever their number.
        """
        prepared = [self._prepare_run(*item) for item in _with_positions(runs, source_positions)]
        _check_unique(prepared, set())
        if not prepared:
            return 0
        with self.transaction() as con:
            done = self._write_batch(con, prepared, replace=replace)
        return len(done)

    def write_run_batches(
        self,
        runs: Iterable[RunItem],
        *,
        replace: bool = False,
        batch_runs: int = BATCH_RUNS,
        batch_rows: int = BATCH_ROWS,
        progress: Callable[[int], None] | None = None,
    ) -> BatchWrite:
        """Store many runs (an import), one transaction per batch of whole runs.

        A run is (record, example ids, statistics) as in :meth:`write_run`,
        optionally with its source positions as a fourth item. ``runs`` is
        consumed lazily: a batch closes when it holds
        ``batch_runs`` runs (the first :data:`FIRST_BATCH_RUNS`, doubling from
        batch to batch up to ``batch_runs``) or ``batch_rows`` example rows, is validated
        (every run as in :meth:`write_run`) and written in one transaction
        with one Arrow insert per table, the already-stored check being one
        anti-join against the batch's run ids. A run therefore never spans
        two transactions: an error, Ctrl-C or ``kill -9`` loses at most the
        batch being written, never part of a run, and repeating the call
        writes what is missing. Batches committed before an invalid run
        (or a run given twice) stay stored. ``progress(done)`` is called after
        every batch with the number of runs handled so far (written or skipped).
        """
        if batch_runs < 1 or batch_rows < 1:
            raise ValueError("batch_runs and batch_rows must be at least 1")
        result = BatchWrite()
        seen: set[str] = set()
        batch: list[_PreparedRun] = []
        rows = 0
        handled = 0
        limit = min(FIRST_BATCH_RUNS, batch_runs)

        def flush() -> None:
            nonlocal batch, rows, handled, limit
            with self.transaction() as con:
                done = self._write_batch(con, batch, replace=replace)
            result.add(done, skipped=len(batch) - len(done))
            handled += len(batch)
            batch, rows, limit = [], 0, min(2 * limit, batch_runs)
            if progress is not None:
                progress(handled)

        for item in runs:
            prepared = self._prepare_run(*item)  # a fourth item: the source positions
            _check_unique([prepared], seen)
            batch.append(prepared)
            rows += prepared.n_examples
            if len(batch) >= limit or rows >= batch_rows:
                flush()
        if batch:
            flush()
        return result

    def _prepare_run(
        self,
        run: RunRecord,
        example_ids: Sequence[Any] | np.ndarray,
        stats: npt.ArrayLike,
        source_positions: npt.ArrayLike | None = None,
    ) -> _PreparedRun:
        """Validate a run and build its rows (nothing is written)."""
        id_list, ids = _id_strings(example_ids)
        n = len(id_list)
        matrix = np.asarray(stats, dtype=np.float64)
        k = len(run.stat_names)
        where = f"run ({run.describe()})"
        if matrix.ndim != 2 or matrix.shape != (n, k):
            raise InputError(
                f"{where}: statistics must be an (n × k) = ({n} × {k}) matrix "
                f"(one row per example id, one column per stat name), got shape {matrix.shape}"
            )
        if n == 0:
            raise InputError(f"{where}: a run needs at least one example")
        if run.n_examples is not None and run.n_examples != n:
            raise InputError(f"{where}: n_examples is {run.n_examples} but {n} examples were given")
        if _has_blank(id_list):
            raise InputError(f"{where}: example ids must not be empty")
        if len(set(id_list)) != n:
            index = pd.Index(id_list)
            dup = index[index.duplicated()][0]
            raise InputError(f"{where}: example id {dup!r} occurs more than once")
        finite = np.isfinite(matrix)
        if not finite.all():
            bad = int(np.flatnonzero(~finite.all(axis=1))[0])
            raise InputError(
                f"{where}: statistics of example {id_list[bad]!r} are not finite: "
                f"{matrix[bad].tolist()}"
            )
        source = (
            pa.nulls(n, type=pa.int64())
            if source_positions is None
            else _source_position_array(source_positions, np.asarray(id_list, dtype=object), where)
        )
        digest = stats_digest(id_list, matrix, tuple(run.stat_names))
        run_id = run.run_id
        row = [
            run_id,
            run.model,
            run.dataset,
            run.task,
            run.language,
            run.seed,
            run.config_hash,
            run.metric,
            json.dumps(run.metric_config, ensure_ascii=False, default=str),
            list(run.stat_names),
            n,
            json.dumps(run.model_metadata, ensure_ascii=False, default=str),
            run.seconds,
            run.examples_per_second,
            run.source,
            run.import_id,
            digest,
            run.created_at,
        ]
        return _PreparedRun(
            run_id=run_id,
            description=run.describe(),
            row=row,
            examples=_example_columns(ids, matrix, source),
        )

    def _write_batch(
        self, con: duckdb.DuckDBPyConnection, runs: Sequence[_PreparedRun], *, replace: bool
    ) -> list[_PreparedRun]:
        """Skip, or (``replace``) delete, the stored runs of a batch, then insert the batch.

        The caller holds the transaction. Which runs are stored already is one
        anti-join of the batch's run ids (a registered Arrow table) against
        ``runs``; with ``replace`` the stored ones are deleted instead. Returns
        the runs written.
        """
        if not runs:
            return []
        keys = pa.table(
            {
                "run_id": pa.array([r.run_id for r in runs], type=pa.string()),
                "ordinal": pa.array(np.arange(len(runs), dtype=np.int64)),
            }
        )
        with _registered(con, "_incoming_keys", keys) as view:
            if replace:
                con.execute(
                    f"DELETE FROM example_stats WHERE run_id IN (SELECT run_id FROM {view})"
                )
                con.execute(f"DELETE FROM runs WHERE run_id IN (SELECT run_id FROM {view})")
                todo = list(runs)
            else:
                new = con.execute(
                    f"SELECT i.ordinal FROM {view} i ANTI JOIN runs r ON r.run_id = i.run_id "
                    "ORDER BY i.ordinal"
                ).fetchall()
                todo = [runs[int(row[0])] for row in new]
        if todo:
            self._insert_batch(con, todo)
        return todo

    def _insert_batch(self, con: duckdb.DuckDBPyConnection, runs: Sequence[_PreparedRun]) -> None:
        """Insert runs' example statistics and ``runs`` rows: one Arrow insert per table.

        The caller holds the transaction. Every column of the examples tables
        is inserted by name, so a new ``example_stats`` column needs only the
        DDL and :func:`_example_columns`. Open failures of the runs' (model,
        dataset, seed, config_hash) are resolved from the same ``runs`` rows.
        """
        examples = _batch_examples(runs)
        names = ", ".join(_sql_ident(c) for c in examples.column_names)
        with _registered(con, "_incoming_stats", examples) as view:
            con.execute(f"INSERT INTO example_stats ({names}) SELECT {names} FROM {view}")
        with _registered(con, "_incoming_runs", _batch_runs(runs)) as view:
            cols = ", ".join(_RUN_COLUMNS)
            con.execute(f"INSERT INTO runs ({cols}) SELECT {cols} FROM {view}")
            self._resolve_failures_of(con, view)

    # ------------------------------------------------------------------
    # scores
    # ------------------------------------------------------------------
    def add_scores(self, frame: pd.DataFrame, import_meta: ImportRecord) -> tuple[int, int]:
        """Add validated scores and their import record in one transaction.

        ``frame`` has the columns of :func:`glotbench.core.validate.validate_scores`
        (model, task, language, dataset, metric, score, seed, replicate, stderr,
        n, metadata as JSON text, position, optionally import_id). Rows whose
        key is stored with the same values are skipped; a stored key with a
        different score, stderr or n raises :class:`ScoreConflictError` and
        nothing is written. Returns (added, skipped).
        """
        with self.transaction():
            added, skipped = self._add_scores(frame, import_meta.import_id)
            record = import_meta.model_copy(
                update={"added": added, "completed_at": import_meta.completed_at or utc_now()}
            )
            self._insert_import(record)
        return added, skipped

    def has_scores(self) -> bool:
        """Whether the scores table holds any row."""
        with self.held():
            return bool(self._con.execute("SELECT count(*) FROM scores").fetchall()[0][0])

    def check_score_batch(self, frame: pd.DataFrame) -> int:
        """Compare a frame of validated scores with the stored ones; write nothing.

        Raises :class:`ScoreConflictError` for the first row (by ``position``)
        whose key is stored with another value; returns how many rows are
        stored with the same values.
        """
        with self.held():
            return self._add_scores(frame, "", write=False)[1]

    def add_score_batch(self, frame: pd.DataFrame, import_id: str, *, check: bool = True) -> int:
        """Add one frame of scores in its own transaction; rows stored alike are skipped.

        For an import that has checked all its frames (:meth:`check_score_batch`)
        and recorded itself (:meth:`start_import`): ``check=False`` when no key
        can be stored (the table was empty). Returns the number of rows added.
        """
        with self.transaction():
            return self._add_scores(frame, import_id, check=check)[0]

    def _add_scores(
        self, frame: pd.DataFrame, import_id: str, *, check: bool = True, write: bool = True
    ) -> tuple[int, int]:
        """Conflict check and insert; the caller holds the transaction.

        ``check=False``: the caller knows no key of ``frame`` is stored (insert
        only); ``write=False``: the check only.
        """
        con = self._con
        incoming = frame.copy()
        if "position" not in incoming:
            incoming["position"] = np.arange(len(incoming), dtype=np.int64)
        if "import_id" not in incoming:
            incoming["import_id"] = import_id
        else:
            incoming["import_id"] = incoming["import_id"].where(
                incoming["import_id"].notna(), import_id
            )
        for col in ("seed", "replicate", "n"):
            incoming[col] = incoming[col].astype("Int64")
        incoming["stderr"] = incoming["stderr"].astype(np.float64)
        for col in ("model", "task", "language", "dataset", "metric", "metadata", "import_id"):
            incoming[col] = incoming[col].astype(object)
        arrow = pa.Table.from_pandas(
            incoming[[*_SCORE_TABLE_COLUMNS, "position"]], preserve_index=False
        )
        view = f"_incoming_scores_{uuid.uuid4().hex[:8]}"
        join = (
            "s.model = i.model AND s.task = i.task AND s.language = i.language "
            "AND s.dataset = i.dataset AND s.metric = i.metric "
            "AND s.seed IS NOT DISTINCT FROM i.seed "
            "AND s.replicate IS NOT DISTINCT FROM i.replicate"
        )
        con.register(view, arrow)
        try:
            if not check:
                con.execute(
                    f"INSERT INTO scores SELECT {', '.join(_SCORE_TABLE_COLUMNS)} FROM {view} "
                    "ORDER BY position"
                )
                return len(incoming), 0
            matches = con.execute(
                f"SELECT i.position, i.score, i.stderr, i.n, s.score, s.stderr, s.n, "
                f"s.import_id, imp.source FROM {view} i JOIN scores s ON {join} "
                "LEFT JOIN imports imp ON imp.import_id = s.import_id ORDER BY i.position"
            ).fetchall()
            for pos, new_score, new_se, new_n, old_score, old_se, old_n, old_imp, src in matches:
                _check_same_score(
                    int(pos),
                    [
                        ("score", new_score, old_score),
                        ("stderr", new_se, old_se),
                        ("n", new_n, old_n),
                    ],
                    old_imp,
                    src,
                )
            if not write:
                return 0, len(matches)
            # the rows without a stored key: all but the matched positions (no second
            # join against the whole scores table)
            con.execute(
                f"INSERT INTO scores SELECT {', '.join('i.' + c for c in _SCORE_TABLE_COLUMNS)} "
                f"FROM {view} i WHERE i.position NOT IN (SELECT unnest(?::BIGINT[])) "
                "ORDER BY i.position",
                [[int(m[0]) for m in matches]],
            )
        finally:
            con.unregister(view)
        return len(incoming) - len(matches), len(matches)

    @_in_use
    def scores(
        self,
        *,
        models: Filter = None,
        tasks: Filter = None,
        languages: Filter = None,
        metrics: Filter = None,
        datasets: Filter = None,
        seeds: Filter = None,
    ) -> pd.DataFrame:
        """Aggregate scores as a tidy DataFrame; ``metadata`` is parsed into dicts."""
        where, params = _where(
            {
                "model": models,
                "task": tasks,
                "language": languages,
                "metric": metrics,
                "dataset": datasets,
                "seed": seeds,
            }
        )
        frame = self._con.sql(
            f"SELECT {', '.join(_SCORE_TABLE_COLUMNS)} FROM scores{where} "
            "ORDER BY model, task, language, dataset, metric, seed NULLS FIRST, "
            "replicate NULLS FIRST",
            params=params,
        ).df()
        frame["metadata"] = [json.loads(v) for v in frame["metadata"]]
        for col in ("seed", "replicate", "n"):
            frame[col] = frame[col].astype("Int64")
        return frame.reset_index(drop=True)

    @_in_use
    def summary(self) -> StoreSummary:
        """Counts and a per (model, task, language) table of what the store holds."""
        con = self._con
        counts_row = _first(
            con.execute(
                "SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM example_stats), "
                "(SELECT count(*) FROM scores), "
                "(SELECT count(*) FROM imports WHERE completed_at IS NOT NULL), "
                "(SELECT count(*) FROM imports WHERE completed_at IS NULL)"
            ).fetchall()
        )
        assert counts_row is not None
        distinct = {}
        for col in ("model", "dataset", "task", "language", "metric"):
            row = _first(
                con.execute(
                    f"SELECT count(DISTINCT {col}) FROM "
                    f"(SELECT {col} FROM runs UNION ALL SELECT {col} FROM scores)"
                ).fetchall()
            )
            distinct[col + "s"] = int(row[0]) if row else 0
        counts = {
            "runs": int(counts_row[0]),
            "examples": int(counts_row[1]),
            "scores": int(counts_row[2]),
            "imports": int(counts_row[3]),
            "incomplete_imports": int(counts_row[4]),
            "failures": self._open_failure_count(),
            **distinct,
        }
        table = con.sql(
            """
            WITH r AS (
                SELECT model, task, language, count(*) AS runs,
                       count(DISTINCT seed) AS seeds, sum(n_examples) AS examples,
                       list(DISTINCT metric) AS run_metrics
                FROM runs GROUP BY model, task, language
            ), s AS (
                SELECT model, task, language, count(*) AS scores,
                       list(DISTINCT metric) AS score_metrics
                FROM scores GROUP BY model, task, language
            )
            SELECT coalesce(r.model, s.model) AS model,
                   coalesce(r.task, s.task) AS task,
                   coalesce(r.language, s.language) AS language,
                   coalesce(r.runs, 0) AS runs,
                   coalesce(r.seeds, 0) AS seeds,
                   coalesce(r.examples, 0)::BIGINT AS examples,
                   coalesce(s.scores, 0) AS scores,
                   list_sort(list_distinct(list_concat(coalesce(r.run_metrics, []),
                                                       coalesce(s.score_metrics, []))))
                       AS metrics
            FROM r FULL OUTER JOIN s
              ON r.model = s.model AND r.task = s.task AND r.language = s.language
            ORDER BY model, task, language
            """
        ).df()
        table["metrics"] = [", ".join(v) for v in table["metrics"]]
        for col in ("runs", "seeds", "examples", "scores"):
            table[col] = table[col].astype(np.int64)
        incomplete = [
            {
                "import_id": r[0],
                "kind": r[1],
                "source": r[2],
                "started_at": r[3].isoformat(timespec="seconds"),
                "runs_written": int(r[4]),
            }
            for r in con.execute(
                "SELECT i.import_id, i.kind, i.source, i.started_at, "
                "(SELECT count(*) FROM runs r WHERE r.import_id = i.import_id) "
                "FROM imports i WHERE completed_at IS NULL ORDER BY started_at"
            ).fetchall()
        ]
        return StoreSummary(
            path=str(self.path),
            schema_version=self.schema_version,
            counts=counts,
            by_model_task_language=table,
            incomplete_imports=incomplete,
        )


def _check_same_score(
    position: int,
    pairs: list[tuple[str, Any, Any]],
    import_id: str | None,
    source: str | None,
) -> None:
    for name, new, old in pairs:
        new_missing = new is None or (isinstance(new, float) and np.isnan(new))
        old_missing = old is None or (isinstance(old, float) and np.isnan(old))
        if new_missing and old_missing:
            continue
        same = (
            not new_missing
            and not old_missing
            and abs(float(new) - float(old)) <= SCORE_RTOL * max(abs(float(new)), abs(float(old)))
        )
        if not same:
            origin = f" by import {import_id} of {source}" if import_id else ""
            old_text = "empty" if old_missing else repr(old)
            new_text = "empty" if new_missing else repr(new)
            raise ScoreConflictError(
                f"this key is already stored with {name} = {old_text}{origin}, but the file "
                f"gives {new_text}; correct the file or import it into another store",
                position=position,
                field=name,
                existing=None if old_missing else old,
                new=None if new_missing else new,
            )


def _open_error_message(path: Path, exc: Exception) -> str:
    text = str(exc)
    lowered = text.lower()
    if "lock" in lowered:
        return (
            f"the store {path} is in use by another process (DuckDB allows one writer at a "
            f"time); wait for it to finish and try again [{text.splitlines()[0]}]"
        )
    if "different configuration" in lowered:
        return (
            f"the store {path} is already open in this process in another mode; "
            "close the other Store first"
        )
    if "not a valid duckdb database" in lowered or "not a duckdb" in lowered or "magic" in lowered:
        return f"{path} is not a DuckDB database; pass a glotbench store with --store"
    if "version" in lowered and "storage" in lowered:
        return f"{path} was written by an incompatible DuckDB version: {text.splitlines()[0]}"
    return f"cannot open the store {path}: {text.splitlines()[0] if text else type(exc).__name__}"
