"""The results store: one embedded DuckDB file.

Tables (see ``docs/store.md`` for every column):

``meta``           key/value pairs; ``schema_version`` guards the layout
``runs``           one row per complete run (key, metric, statistic names, ...)
``example_stats``  one row per example of a run: (run_id, position, example_id, stats[],
                   source_position)
``scores``         aggregate scores without per-example data
``imports``        one row per imported file (kind, source, sha256, rows, completed_at)
``failures``       one row per failed benchmark job (key, error, traceback, resolved_at)

:class:`Store` is small: it opens, creates and migrates the file, holds the
locks and transactions, the ``meta`` table and the summary. The tables are
reached through its collaborators, one module each, which hold the store and
write inside its transactions:

=====================  ===========================================================
``store.runs``         :class:`~glotbench.store.runs.Runs`: list, check and write runs
``store.stats``        :class:`~glotbench.store.stats.Stats`: examples' statistics, matrices
``store.scores``       :class:`~glotbench.store.scores.Scores`: aggregate scores
``store.imports``      :class:`~glotbench.store.imports.Imports`: imported files
``store.failures``     :class:`~glotbench.store.failures.Failures`: failed jobs
``store.exports``      :class:`~glotbench.store.exports.Exports`: tables to CSV / Parquet
``store.attributes``   :class:`~glotbench.store.attributes.Attributes`: bucket attributes
``store.outputs``      :class:`~glotbench.store.outputs.Outputs`: kept outputs
=====================  ===========================================================

The store offers transactions, not importers: reading, validating and
merging files is :mod:`glotbench.ingest`, which writes through these.
:mod:`~glotbench.store.ddl` has the tables' DDL and the migrations; shared
helpers are in :mod:`~glotbench.store.sql` and :mod:`~glotbench.store.layout`.

Guarantees:

* a run is written in **one transaction** together with all its example
  statistics (``store.runs.write``): a crash or ``SIGKILL`` never leaves a
  half-written run, and a run is *complete* exactly when its ``runs`` row exists;
* many runs are written in transactions of whole runs
  (``store.runs.write_batches``): per batch one Arrow insert per table and
  one anti-join of the incoming run ids against ``runs``, so a run never spans
  two transactions and the guarantee above holds for every batch;
* a repeated run (same key, hence same ``run_id``) is skipped, so a re-run or
  a re-import resumes where it stopped;
* ``replace=True`` (``glotbench run --force``) deletes the stored run and writes
  the new one in the **same** transaction, so a failure in between keeps the old run;
* a job failure is recorded (``store.failures.record``) and marked resolved in
  the transaction that later stores a run with the same (model, dataset, seed,
  config_hash);
* a scores import is one transaction (``store.scores.add``);
* importers decide from the store's content and write under the store's
  writer lock (:meth:`Store.writing`), so two imports never both add a key,
  and an unfinished import is resumed only when its process has died;
* opening waits (up to ``lock_timeout``) for a store another process holds,
  and a ``hold=False`` store locks the file only while it reads or writes, so
  readers in other processes get in between a writer's transactions and see
  only complete runs (:mod:`glotbench.store.lock`, ``docs/store.md``).
"""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from glotbench.errors import StoreError
from glotbench.store.attributes import Attributes
from glotbench.store.ddl import _DDL, _FAILURES_DDL, _MIGRATIONS, _TABLES
from glotbench.store.exports import Exports
from glotbench.store.failures import Failures
from glotbench.store.imports import Imports
from glotbench.store.layout import _first
from glotbench.store.lock import connect as connect_waiting
from glotbench.store.lock import open_error_message
from glotbench.store.outputs import Outputs
from glotbench.store.runs import Runs
from glotbench.store.schema import SCHEMA_VERSION, utc_now
from glotbench.store.scores import Scores
from glotbench.store.sql import _in_use
from glotbench.store.stats import Stats
from glotbench.store.writer_lock import live_owner, writer_lock
from glotbench.store.writes import (
    WRITE_GENERATION,
    bump_write_generation,
    file_identity,
    replaced_message,
)

#: ``meta`` keys ``suite:NAME`` hold the JSON title and description of a suite that ran here
SUITE_META_PREFIX = "suite:"


@dataclass
class StoreSummary:
    """What a store holds (:func:`glotbench.api.show_store`).

    Attributes
    ----------
    path : str
        The store's file.
    schema_version : int
        Its schema version.
    counts : dict of str to int
        Rows per table.
    by_model_task_language : pandas.DataFrame
        One row per model, task and language (``.to_frame()``).
    incomplete_imports : list of dict
        Imports that were interrupted (run them again to complete them).
    """

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


class Store:
    """A glotbench results store in a DuckDB file.

    Open with :meth:`Store.open` (creates the file unless ``read_only``) and
    use as a context manager; the tables are reached through the
    collaborators (see the module docstring)::

        with Store.open("results.duckdb") as store:
            store.runs.write(record, example_ids, stats)
            frame = store.runs.frame(models=["xlmr"])
            matrix = store.stats.matrix("xnli", "xnli", "de", "accuracy")

    Attributes
    ----------
    runs, stats, scores, imports, failures, exports, attributes, outputs
        The collaborators, one per group of tables.
    path : Path
        The DuckDB file.
    read_only : bool
        Opened without write access.
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
        #: device and inode of the file the connection has open (glotbench.store.writes)
        self._identity = file_identity(path)
        self.runs = Runs(self)
        self.stats = Stats(self)
        self.scores = Scores(self)
        self.imports = Imports(self)
        self.failures = Failures(self)
        self.exports = Exports(self)
        self.attributes = Attributes(self)
        self.outputs = Outputs(self)

    @property
    def _con(self) -> duckdb.DuckDBPyConnection:
        """The connection; reopened (waiting for the lock) after :meth:`release`."""
        if self._connection is None:
            if self._closed:
                raise StoreError(f"the store {self.path} is closed")
            if not self.read_only and _missing_or_empty(self.path):
                # removed since it was opened (a failed import that had created it removes
                # it again): create it anew, as `open` does, instead of writing into an
                # empty DuckDB file without tables
                with writer_lock(self.path, timeout=self.lock_timeout):
                    if _missing_or_empty(self.path):
                        _create(self.path)
            if self._connection is None:
                before = file_identity(self.path)
                self._connection = self._connect(self.path, self.read_only, self.lock_timeout)
                after = file_identity(self.path)
                self._identity = after if after == before else None  # None: not known
                if not self.read_only and not _has_meta(self._connection):
                    # the file vanished between the check above and the connection (a
                    # failed import removed the store it had created), and DuckDB made a
                    # new empty one: give it its tables, under the writer lock, as `open` does
                    with writer_lock(self.path, timeout=self.lock_timeout):
                        self._initialise()
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
            raise StoreError(open_error_message(path, exc)) from None

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

    @contextmanager
    def writing(self) -> Iterator[Store]:
        """Hold the store's writer lock for the block: one importing writer at a time.

        An import decides from the store's content (stored keys, new runs, an
        interrupted import to resume) and then writes in several transactions;
        it does both inside this block, so no other import decides or writes
        in between (:mod:`glotbench.store.writer_lock`). Waits up to the lock
        timeout for another process's import, then raises a StoreError naming
        it. Re-entrant. Importers open the store with ``hold=False``, so a
        waiting writer does not hold the DuckDB file the other one needs.
        """
        self._require_writable()
        with writer_lock(self.path, timeout=self.lock_timeout):
            yield self

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
        ``$GLOTBENCH_LOCK_TIMEOUT`` or 60; :mod:`glotbench.store.lock`), saying so on
        stderr after a second, then raises a :class:`StoreError` naming the holder.

        ``hold=False`` locks the file only while it is used: every
        :meth:`transaction` outside a :meth:`held` block releases it after its
        commit, :meth:`held` releases it at the end of the block, and the next
        use reopens it. A long-running writer (``glotbench run``, an import)
        opens this way, so readers are locked out only for a transaction.
        """
        p = Path(path)
        if p.exists() and p.is_dir():
            raise StoreError(f"{p} is a directory; a store is a DuckDB file")
        if read_only and not p.exists():
            raise StoreError(
                f"no store at {p}; import results first (glotbench import ...) or pass store=PATH"
            )
        if not read_only:
            try:
                p.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create the directory of {p}: {exc}") from None
        # a new store is built beside its path and renamed in, under the writer lock
        # (`_create`): a process killed meanwhile leaves no store at all rather than a
        # DuckDB file without tables, and a second process never sees a half-made one
        if not read_only and _missing_or_empty(p):
            with writer_lock(p, timeout=lock_timeout):
                if _missing_or_empty(p):
                    _create(p)
        before = file_identity(p)
        con = cls._connect(p, read_only, lock_timeout)
        store = cls(con, p, read_only, lock_timeout=lock_timeout)
        if store._identity != before:  # replaced while connecting: which one is open?
            store._identity = None
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
                    "(it has no 'meta' table); pass another store=PATH"
                )
            # a file without tables (a creation interrupted by an older glotbench, or a
            # file that vanished and was made anew by DuckDB): give it its tables
            with self.transaction() as con:
                # unless the transaction reopened the store on a file another process
                # created meanwhile (glotbench.store.writes): that one has its tables
                written = not _has_meta(con)
                if written:
                    _write_schema(con)
            if not written:
                self._initialise()  # check the file now open instead
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

        Every commit adds one to the store's write generation (``meta``
        ``write_generation``, :mod:`glotbench.store.writes`): the analysis cache
        keeps no answer computed while a write happened, even one a later
        write undid. A store file removed and created anew by another process
        since the connection opened is not written: outside a :meth:`held`
        block the connection is reopened on the file the path names now;
        inside one (reads from the old file) the transaction is rolled back
        and a :class:`StoreError` says so. With ``hold=False`` and outside a
        :meth:`held` block, the file is released after the commit (or rollback).
        """
        self._require_writable()
        if not self._held and self._connection is not None and not self._same_file():
            self.release()  # the path names another file now: reopen on it
        with self.held():
            con = self._con
            con.begin()
            try:
                yield con
            except BaseException:
                with suppress(duckdb.Error):
                    con.rollback()
                raise
            if not self._same_file():
                with suppress(duckdb.Error):
                    con.rollback()
                raise StoreError(replaced_message(self.path))
            try:
                bump_write_generation(con)
                con.commit()
            except duckdb.Error as exc:
                with suppress(duckdb.Error):
                    con.rollback()
                raise StoreError(f"could not commit to {self.path}: {exc}") from None

    def _same_file(self) -> bool:
        """Whether the path still names the file the connection opened."""
        return self._identity is not None and file_identity(self.path) == self._identity

    @_in_use
    def meta(self) -> dict[str, str]:
        """The ``meta`` key/value pairs."""
        return dict(self._con.execute("SELECT key, value FROM meta ORDER BY key").fetchall())

    def set_meta(self, key: str, value: str) -> None:
        """Set one ``meta`` key (e.g. ``suite:NAME``); ``schema_version`` is not writable here."""
        if key in ("schema_version", WRITE_GENERATION):
            raise StoreError(f"{key} is set by the store itself")
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

    @_in_use
    def summary(self) -> StoreSummary:
        """Counts and a per (model, task, language) table of what the store holds."""
        con = self._con
        counts_row = _first(
            con.execute(
                # example rows of complete runs (a killed chunked write's rows are not counted)
                "SELECT (SELECT count(*) FROM runs), "
                "(SELECT coalesce(sum(n_examples), 0) FROM runs), "
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
            "failures": self.failures.open_count(),
            **distinct,
        }
        table = con.sql(
            """
            WITH r AS (
                SELECT model, task, language, count(*) AS runs,
                       list(DISTINCT seed) FILTER (WHERE seed IS NOT NULL) AS run_seeds,
                       sum(n_examples) AS examples,
                       list(DISTINCT metric) AS run_metrics
                FROM runs GROUP BY model, task, language
            ), s AS (
                SELECT model, task, language, count(*) AS scores,
                       list(DISTINCT seed) FILTER (WHERE seed IS NOT NULL) AS score_seeds,
                       list(DISTINCT metric) AS score_metrics
                FROM scores GROUP BY model, task, language
            )
            SELECT coalesce(r.model, s.model) AS model,
                   coalesce(r.task, s.task) AS task,
                   coalesce(r.language, s.language) AS language,
                   coalesce(r.runs, 0) AS runs,
                   -- seeds of runs and of imported scores (a score's seed column)
                   len(list_distinct(list_concat(coalesce(r.run_seeds, []),
                                                 coalesce(s.score_seeds, [])))) AS seeds,
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
        owner = live_owner(self.path)  # the import being written now, if any
        incomplete = [
            {
                "import_id": r[0],
                "kind": r[1],
                "source": r[2],
                "started_at": r[3].isoformat(timespec="seconds"),
                "runs_written": int(r[4]),
                # None: interrupted (run it again); else the process writing it now
                "running": _running(owner, r[0]),
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


def _has_meta(connection: duckdb.DuckDBPyConnection) -> bool:
    """Whether the connected database has glotbench's ``meta`` table."""
    rows = connection.execute(
        "SELECT count(*) FROM information_schema.tables "
        "WHERE table_schema = 'main' AND table_name = 'meta'"
    ).fetchall()  # every row fetched: DuckDB 2 refuses other work while a result is open
    return bool(rows[0][0])


def _write_schema(connection: duckdb.DuckDBPyConnection) -> None:
    """Create every table of a new store and its ``meta`` rows (inside the caller's transaction)."""
    from glotbench._version import __version__

    connection.execute(_DDL)
    connection.execute(_FAILURES_DDL)
    now = utc_now().isoformat(timespec="seconds")
    connection.executemany(
        "INSERT INTO meta VALUES (?, ?)",
        [
            ["schema_version", str(SCHEMA_VERSION)],
            ["created_at", now],
            ["created_by", f"glotbench {__version__}"],
        ],
    )


_CREATING = ".creating-"


def _create(path: Path) -> None:
    """Create a new, empty store at ``path`` atomically; the caller holds the writer lock.

    The database is built under a temporary name in the same folder, closed (DuckDB
    checkpoints its write-ahead log on close), flushed and renamed over ``path`` with
    :func:`os.replace`, the way SQLite and DuckDB's own docs advise replacing a database
    file. A process killed at any point leaves either no store or a complete empty one;
    the temporary files of earlier killed creations are removed first (only a holder of
    the writer lock makes them, and it is held now). A ``path`` that is a symbolic link
    gets the store at its target; the link is kept.
    """
    if path.is_symlink():  # made where the link points, as DuckDB would; the link stays
        path = Path(os.path.realpath(path))
    for stale in path.parent.glob(f".{glob.escape(path.name)}{_CREATING}*"):
        with suppress(OSError):
            stale.unlink()
    temporary = path.with_name(f".{path.name}{_CREATING}{os.getpid()}")
    try:
        connection = duckdb.connect(str(temporary))
        try:
            connection.execute("BEGIN TRANSACTION")
            _write_schema(connection)
            connection.execute("COMMIT")
            connection.execute("CHECKPOINT")
        finally:
            connection.close()
        with open(temporary, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except duckdb.Error as exc:
        raise StoreError(f"cannot create the store {path}: {exc}") from None
    except OSError as exc:
        raise StoreError(f"cannot create the store {path}: {exc.strerror or exc}") from None
    finally:
        for leftover in (temporary, temporary.with_name(temporary.name + ".wal")):
            with suppress(OSError):
                leftover.unlink()
    with suppress(OSError):  # make the rename durable (not possible on every platform)
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


def _missing_or_empty(path: Path) -> bool:
    """No file at ``path``, or an empty one (being created by DuckDB right now)."""
    try:
        return path.stat().st_size == 0
    except FileNotFoundError:
        return True


def _running(owner: dict[str, Any] | None, import_id: str) -> dict[str, Any] | None:
    """The writer-lock owner (pid, command, since) if it is writing import ``import_id``."""
    if not owner or owner.get("import_id") != import_id:
        return None
    return {k: owner.get(k) for k in ("pid", "command", "locked_at")}
