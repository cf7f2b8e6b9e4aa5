"""The results store: one embedded DuckDB file.

Tables (see ``docs/store.md`` for every column):

``meta``           key/value pairs; ``schema_version`` guards the layout
``runs``           one row per complete run (key, metric, statistic names, ...)
``example_stats``  one row per example of a run: (run_id, position, example_id, stats[],
                   source_position)
``scores``         aggregate scores without per-example data
``imports``        one row per imported file (kind, source, sha256, rows, completed_at)
``failures``       one row per failed benchmark job (key, error, traceback, resolved_at)

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

import functools
import json
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import duckdb
import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from glotbench.core.lock import connect as connect_waiting
from glotbench.core.schema import (
    SCHEMA_VERSION,
    SCORE_COLUMNS,
    ImportRecord,
    RunKey,
    RunRecord,
    normalise_metric_name,
    run_id_for,
    stats_digest,
    utc_now,
)
from glotbench.errors import InputError, StoreError

if TYPE_CHECKING:
    from glotbench.core.ingest import ImportResult

Filter = str | int | Sequence[str] | Sequence[int] | None
#: A run to write: (record, example ids, n × k statistics[, source positions])
RunItem = (
    tuple[RunRecord, Sequence[Any] | np.ndarray, npt.ArrayLike]
    | tuple[RunRecord, Sequence[Any] | np.ndarray, npt.ArrayLike, npt.ArrayLike | None]
)
ExportTable = Literal["runs", "examples", "scores", "imports", "meta", "all"]
EXPORT_TABLES: tuple[str, ...] = ("runs", "examples", "scores", "imports", "meta")

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

_FAILURE_COLUMNS = (
    "failure_id",
    "model",
    "dataset",
    "task",
    "language",
    "seed",
    "config_hash",
    "iteration",
    "error_type",
    "message",
    "traceback",
    "source",
    "created_at",
    "resolved_at",
)

_RUN_COLUMNS = (
    "run_id",
    "model",
    "dataset",
    "task",
    "language",
    "seed",
    "config_hash",
    "metric",
    "metric_config",
    "stat_names",
    "n_examples",
    "model_metadata",
    "seconds",
    "examples_per_second",
    "source",
    "import_id",
    "stats_sha256",
    "created_at",
)
_SCORE_TABLE_COLUMNS = SCORE_COLUMNS
_IMPORT_COLUMNS = (
    "import_id",
    "kind",
    "source",
    "sha256",
    "rows",
    "added",
    "started_at",
    "completed_at",
)
#: Text that a spreadsheet evaluates when a CSV cell begins with it, and the
#: apostrophe that marks a neutralised cell (see ``Store.export``).
_FORMULA_START = "^[=+@\t\r'-]"

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


def new_import_id() -> str:
    """A fresh, random import id."""
    return uuid.uuid4().hex[:16]


def _as_list(values: Filter) -> list[Any] | None:
    if values is None:
        return None
    if isinstance(values, str | int):
        return [values]
    return list(values)


def _where(filters: dict[str, Filter], alias: str = "") -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    prefix = f"{alias}." if alias else ""
    for column, values in filters.items():
        items = _as_list(values)
        if items is None:
            continue
        if column == "metric":
            items = [normalise_metric_name(str(v)) for v in items]
        clauses.append(f"list_contains(?, {prefix}{column})")
        params.append(items)
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", params


def _failure_where(filters: dict[str, Filter], *, open_only: bool) -> tuple[str, list[Any]]:
    where, params = _where(filters)
    if open_only:
        where = f"{where} AND resolved_at IS NULL" if where else " WHERE resolved_at IS NULL"
    return where, params


def _first(rows: list[Any]) -> Any:
    """First row of a fully fetched result, or None (DuckDB needs results fetched to the end)."""
    return rows[0] if rows else None


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _sql_ident(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


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


def _stats_from_list(column: pa.ChunkedArray | pa.Array, n: int, k: int) -> np.ndarray:
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    values = np.asarray(arr.flatten(), dtype=np.float64)
    if values.size != n * k:
        raise StoreError(
            f"the store is inconsistent: expected {n} × {k} statistics, found {values.size} values"
        )
    return values.reshape(n, k)


class ScoreConflictError(InputError):
    """A score whose key is stored with a different value.

    ``position`` is the record's index in the incoming frame; the importer turns
    it into the file's line number.
    """

    def __init__(
        self,
        message: str,
        *,
        position: int,
        field: str,
        existing: Any,
        new: Any,
    ) -> None:
        super().__init__(message, line=position + 1, field=field)
        self.position = position
        self.existing = existing
        self.new = new


@dataclass
class StatsMatrix:
    """Per-example statistics of several runs, aligned by example_id.

    ``stats[i, j, :]`` are the statistics of example ``example_ids[j]`` in run
    ``run_ids[i]`` (model ``models[i]``, seed ``seeds[i]``).
    """

    dataset: str
    task: str
    language: str
    metric: str
    metric_config: dict[str, Any]
    stat_names: tuple[str, ...]
    run_ids: list[str]
    models: list[str]
    seeds: list[int | None]
    config_hashes: list[str]
    example_ids: np.ndarray
    stats: np.ndarray  # (m, n, k)

    def get_metric(self) -> Any:
        """The metric, configured as stored (``get_metric(metric, **metric_config)``)."""
        from glotbench.metrics import get_metric

        return get_metric(self.metric, **self.metric_config)

    def scores(self) -> np.ndarray:
        """Score of each run on the whole test set: ``score(stats.sum(axis=1))``."""
        return np.asarray(self.get_metric().score(self.stats.sum(axis=1)), dtype=np.float64)

    def to_frame(self) -> pd.DataFrame:
        """One row per run: run_id, model, seed, config_hash, n_examples, score."""
        return pd.DataFrame(
            {
                "run_id": self.run_ids,
                "model": self.models,
                "seed": pd.array(self.seeds, dtype="Int64"),
                "config_hash": self.config_hashes,
                "n_examples": len(self.example_ids),
                "score": self.scores(),
            }
        )


@dataclass
class ExportResult:
    """Files written by an export."""

    store: str
    table: str
    files: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"store": self.store, "table": self.table, "files": list(self.files)}

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame({"table": self.table, "file": self.files})


def in_configs(runs: pd.DataFrame, configs: Mapping[str, str]) -> pd.Series:
    """Rows (runs or scores) of the configuration ``configs`` names for their model.

    ``configs`` maps model -> config hash; models it does not name keep every
    configuration.
    """
    wanted = runs["model"].map(dict(configs)).fillna(runs["config_hash"])
    return runs["config_hash"] == wanted


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


@dataclass
class FailureList:
    """Recorded job failures (``glotbench failures``)."""

    store: str
    include_resolved: bool
    frame: pd.DataFrame
    resolved_now: int = 0

    def to_frame(self) -> pd.DataFrame:
        return self.frame.copy()

    def to_dict(self) -> dict[str, Any]:
        rows = []
        for rec in self.frame.to_dict("records"):
            out: dict[str, Any] = {}
            for key, value in rec.items():
                if value is None or (not isinstance(value, str) and pd.isna(value)):
                    out[key] = None
                elif isinstance(value, pd.Timestamp):
                    out[key] = value.isoformat()
                elif isinstance(value, np.generic):
                    out[key] = value.item()
                else:
                    out[key] = value
            rows.append(out)
        return {
            "store": self.store,
            "include_resolved": self.include_resolved,
            "count": len(rows),
            "open": int(self.frame["resolved_at"].isna().sum()) if len(self.frame) else 0,
            "resolved_now": self.resolved_now,
            "failures": rows,
        }


_Method = TypeVar("_Method", bound=Callable[..., Any])


def _in_use(method: _Method) -> _Method:
    """Run a read of :class:`Store` inside :meth:`Store.held`.

    For a ``hold=False`` store the file is opened for the read and released
    after it (the result is fully fetched), so a writer between transactions
    never keeps other processes out while it parses or computes.
    """

    @functools.wraps(method)
    def wrapper(self: Store, *args: Any, **kwargs: Any) -> Any:
        with self.held():
            return method(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


class Store:
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
                from glotbench import __version__

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
            from glotbench import __version__

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

    @_in_use
    def runs(
        self,
        *,
        models: Filter = None,
        datasets: Filter = None,
        tasks: Filter = None,
        languages: Filter = None,
        metrics: Filter = None,
        seeds: Filter = None,
        run_ids: Filter = None,
    ) -> pd.DataFrame:
        """Complete runs as a tidy DataFrame (one row per run), filtered by lists of values.

        JSON columns (``metric_config``, ``model_metadata``) are parsed into
        dicts and ``stat_names`` is a tuple.
        """
        where, params = _where(
            {
                "model": models,
                "dataset": datasets,
                "task": tasks,
                "language": languages,
                "metric": metrics,
                "seed": seeds,
                "run_id": run_ids,
            }
        )
        frame = self._con.sql(
            f"SELECT {', '.join(_RUN_COLUMNS)} FROM runs{where} "
            "ORDER BY model, dataset, task, language, metric, seed NULLS FIRST, config_hash",
            params=params,
        ).df()
        for col in ("metric_config", "model_metadata"):
            frame[col] = [json.loads(v) for v in frame[col]]
        frame["stat_names"] = [tuple(v) for v in frame["stat_names"]]
        frame["seed"] = frame["seed"].astype("Int64")
        return frame.reset_index(drop=True)

    @_in_use
    def run_stats(self, run_id: str) -> tuple[np.ndarray, np.ndarray]:
        """(example_ids, stats) of one run, in stored order; stats is (n × k)."""
        row = _first(
            self._con.execute(
                "SELECT n_examples, len(stat_names) FROM runs WHERE run_id = ?", [run_id]
            ).fetchall()
        )
        if row is None:
            raise StoreError(f"no run with id {run_id!r} in {self.path}")
        table = self._con.sql(
            "SELECT example_id, stats FROM example_stats WHERE run_id = ? ORDER BY position",
            params=[run_id],
        ).to_arrow_table()
        if table.num_rows != row[0]:
            raise StoreError(
                f"the store is inconsistent: run {run_id} has {table.num_rows} example rows "
                f"but n_examples = {row[0]}"
            )
        ids = table.column("example_id").to_numpy(zero_copy_only=False).astype(object)
        return ids, _stats_from_list(table.column("stats"), row[0], row[1])

    @_in_use
    def source_positions(
        self, run_ids: Sequence[str], example_ids: Sequence[Any] | np.ndarray
    ) -> np.ndarray:
        """Source position of each example of each run: (runs × examples), NaN where unknown.

        Row ``i`` belongs to ``run_ids[i]``, column ``j`` to ``example_ids[j]``
        (e.g. a :class:`StatsMatrix`'s run ids and example ids). NaN: the run
        stored no source position for it, the run lacks the example, or the
        store predates the column (schema version 1, opened read-only).
        """
        ids = pd.Index([str(e) for e in example_ids])
        out = np.full((len(run_ids), ids.size), np.nan)
        if not self._has_source_positions() or not len(run_ids):
            return out
        frame = self._con.sql(
            "SELECT run_id, example_id, source_position FROM example_stats "
            "WHERE run_id IN (SELECT unnest(?)) AND source_position IS NOT NULL",
            params=[list(run_ids)],
        ).df()
        row_of = {rid: i for i, rid in enumerate(run_ids)}
        rows = frame["run_id"].map(row_of).to_numpy(dtype=np.int64)
        cols = ids.get_indexer(pd.Index(frame["example_id"].astype(str)))
        keep = cols >= 0
        out[rows[keep], cols[keep]] = frame["source_position"].to_numpy(np.float64)[keep]
        return out

    @_in_use
    def example_stats(
        self,
        run_ids: Filter = None,
        *,
        models: Filter = None,
        datasets: Filter = None,
        tasks: Filter = None,
        languages: Filter = None,
        metrics: Filter = None,
        seeds: Filter = None,
    ) -> pd.DataFrame:
        """Per-example statistics, tidy: one row per (run, example).

        Columns: run_id, model, dataset, task, language, seed, config_hash,
        metric, position, example_id, stats (a float array per row),
        source_position (nullable integer).
        For analysis prefer :meth:`stats_matrix`, which aligns runs by example id.
        """
        where, params = _where(
            {
                "run_id": run_ids,
                "model": models,
                "dataset": datasets,
                "task": tasks,
                "language": languages,
                "metric": metrics,
                "seed": seeds,
            },
            alias="r",
        )
        frame = self._con.sql(
            "SELECT e.run_id, r.model, r.dataset, r.task, r.language, r.seed, r.config_hash, "
            f"r.metric, e.position, e.example_id, e.stats, {self._source_position_sql('e')} "
            f"FROM example_stats e JOIN runs r USING (run_id){where} "
            "ORDER BY r.model, r.dataset, r.task, r.language, r.metric, r.seed NULLS FIRST, "
            "r.config_hash, e.position",
            params=params,
        ).df()
        frame["seed"] = frame["seed"].astype("Int64")
        frame["stats"] = [np.asarray(v, dtype=np.float64) for v in frame["stats"]]
        frame["source_position"] = frame["source_position"].astype("Int64")
        return frame

    def _source_position_sql(self, alias: str) -> str:
        """``alias.source_position``, or a typed NULL in a version-1 store opened read-only."""
        if self._has_source_positions():
            return f"{alias}.source_position"
        return "NULL::BIGINT AS source_position"

    @_in_use
    def stats_matrix(
        self,
        dataset: str,
        task: str,
        language: str,
        metric: str,
        *,
        models: Sequence[str] | None = None,
        seeds: Sequence[int] | None = None,
        config_hash: str | None = None,
        configs: Mapping[str, str] | None = None,
    ) -> StatsMatrix:
        """Statistics of all matching runs as one (m × n × k) array aligned by example_id.

        Runs are ordered by ``models`` (as given, else alphabetically), then
        seed and config hash; examples follow the first run's order. Raises
        :class:`StoreError` when no run matches, when a requested model has no
        run, when the runs' statistic layouts differ, or when they do not
        cover the same example ids. ``configs`` (model -> config hash) keeps only
        that configuration of the models it names.
        """
        metric = normalise_metric_name(metric)
        runs = self.runs(
            models=models,
            datasets=[dataset],
            tasks=[task],
            languages=[language],
            metrics=[metric],
            seeds=seeds,
        )
        if config_hash is not None:
            runs = runs[runs["config_hash"] == config_hash]
        if configs is not None:
            runs = runs[in_configs(runs, configs)]
        what = f"dataset={dataset!r}, task={task!r}, language={language!r}, metric={metric!r}"
        if runs.empty:
            raise StoreError(
                f"no runs for {what} in {self.path}; 'glotbench show' lists what the store holds"
            )
        if models is not None:
            absent = [m for m in models if m not in set(runs["model"])]
            if absent:
                raise StoreError(f"no runs of model(s) {', '.join(map(repr, absent))} for {what}")
            order = {m: i for i, m in enumerate(models)}
            runs = runs.assign(_order=runs["model"].map(order)).sort_values(
                ["_order", "seed", "config_hash"], na_position="first", kind="stable"
            )
        runs = runs.reset_index(drop=True)
        layouts = runs["stat_names"].drop_duplicates().tolist()
        if len(layouts) > 1:
            raise StoreError(
                f"runs for {what} have different statistics "
                f"({' vs '.join(map(str, layouts[:2]))}); "
                "re-import them with the same label set (--labels) so they can be compared"
            )
        metric_configs = {json.dumps(c, sort_keys=True) for c in runs["metric_config"]}
        if len(metric_configs) > 1:
            raise StoreError(
                f"runs for {what} were scored with different metric configurations "
                f"({', '.join(sorted(metric_configs))})"
            )
        stat_names = tuple(layouts[0])
        run_ids = runs["run_id"].tolist()
        table = self._con.sql(
            "SELECT run_id, position, example_id, stats FROM example_stats "
            "WHERE run_id IN (SELECT unnest(?))",
            params=[run_ids],
        ).to_arrow_table()
        # order by (run in run_ids order, position) in numpy: cheaper than an SQL sort
        # of the stats lists, and a no-op for rows already stored run by run
        run_pos = pc.index_in(table.column("run_id"), value_set=pa.array(run_ids)).to_numpy()
        position = table.column("position").to_numpy().astype(np.int64)
        sort_key = run_pos.astype(np.int64) * (int(position.max(initial=0)) + 1) + position
        if (np.diff(sort_key) < 0).any():
            table = table.take(pa.array(np.argsort(sort_key, kind="stable")))
        sizes = np.bincount(run_pos, minlength=len(run_ids))
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        all_ids = table.column("example_id").to_numpy(zero_copy_only=False).astype(object)
        k = len(stat_names)
        flat = _stats_from_list(table.column("stats"), table.num_rows, k)
        reference_ids: np.ndarray | None = None
        reference_index: pd.Index | None = None
        blocks: list[np.ndarray] = []
        for i in range(len(run_ids)):
            lo = int(starts[i])
            hi = lo + int(sizes[i])
            ids = all_ids[lo:hi]
            block = flat[lo:hi]
            if reference_index is None:
                reference_ids = ids
                reference_index = pd.Index(ids)
                blocks.append(block)
                continue
            if ids.size == reference_index.size and np.array_equal(ids, reference_index):
                blocks.append(block)  # same examples in the same order: nothing to align
                continue
            idx = reference_index.get_indexer(pd.Index(ids))
            if ids.size != reference_index.size or (idx < 0).any():
                missing = reference_index.difference(pd.Index(ids))
                extra = pd.Index(ids).difference(reference_index)
                first = runs.iloc[0]
                this = runs.iloc[i]
                raise StoreError(
                    f"runs for {what} cover different examples: model {this['model']!r} "
                    f"(seed {this['seed']}) lacks {len(missing)} example id(s) that model "
                    f"{first['model']!r} (seed {first['seed']}) has"
                    + (f", e.g. {list(missing[:3])}" if len(missing) else "")
                    + f", and has {len(extra)} it lacks"
                    + (f", e.g. {list(extra[:3])}" if len(extra) else "")
                    + "; paired analyses need the same test examples for every model"
                )
            aligned = np.empty_like(block)
            aligned[idx] = block
            blocks.append(aligned)
        assert reference_ids is not None
        return StatsMatrix(
            dataset=dataset,
            task=task,
            language=language,
            metric=metric,
            metric_config=runs["metric_config"].iloc[0],
            stat_names=stat_names,
            run_ids=run_ids,
            models=runs["model"].tolist(),
            seeds=[None if pd.isna(s) else int(s) for s in runs["seed"]],
            config_hashes=runs["config_hash"].tolist(),
            example_ids=reference_ids,
            stats=np.stack(blocks),
        )

    # ------------------------------------------------------------------
    # failures of benchmark jobs
    # ------------------------------------------------------------------
    def record_failure(
        self,
        *,
        model: str,
        dataset: str,
        task: str,
        language: str,
        seed: int | None,
        config_hash: str,
        error_type: str,
        message: str,
        iteration: int | None = None,
        traceback: str | None = None,
        source: str | None = None,
    ) -> str:
        """Record a failed job (one transaction); returns its ``failure_id``.

        Every attempt that fails gets its own row. The row stays *open*
        (``resolved_at`` NULL) until a run with the same (model, dataset,
        seed, config_hash) is stored — :meth:`write_run` / :meth:`write_runs`
        then set ``resolved_at`` in the transaction that stores it — or until
        :meth:`resolve_failures` is called.
        """
        failure_id = uuid.uuid4().hex[:16]
        values = {
            "failure_id": failure_id,
            "model": model,
            "dataset": dataset,
            "task": task,
            "language": language,
            "seed": None if seed is None else int(seed),
            "config_hash": config_hash or "",
            "iteration": None if iteration is None else int(iteration),
            "error_type": error_type,
            "message": message,
            "traceback": traceback,
            "source": source,
            "created_at": utc_now(),
            "resolved_at": None,
        }
        with self.transaction() as con:
            con.execute(
                f"INSERT INTO failures ({', '.join(_FAILURE_COLUMNS)}) VALUES "
                f"({', '.join('?' for _ in _FAILURE_COLUMNS)})",
                [values[c] for c in _FAILURE_COLUMNS],
            )
        return failure_id

    @_in_use
    def failures(
        self,
        *,
        models: Filter = None,
        datasets: Filter = None,
        tasks: Filter = None,
        languages: Filter = None,
        seeds: Filter = None,
        failure_ids: Filter = None,
        include_resolved: bool = False,
    ) -> pd.DataFrame:
        """Recorded job failures, oldest first, filtered like :meth:`runs`.

        Only open failures unless ``include_resolved``. Columns:
        ``failure_id, model, dataset, task, language, seed, config_hash,
        iteration, error_type, message, traceback, source, created_at,
        resolved_at``. An older store opened read-only, which has no
        ``failures`` table yet, gives an empty frame.
        """
        if not self._has_failures_table():
            frame = pd.DataFrame({c: pd.Series(dtype=object) for c in _FAILURE_COLUMNS})
        else:
            where, params = _failure_where(
                {
                    "model": models,
                    "dataset": datasets,
                    "task": tasks,
                    "language": languages,
                    "seed": seeds,
                    "failure_id": failure_ids,
                },
                open_only=not include_resolved,
            )
            frame = self._con.sql(
                f"SELECT {', '.join(_FAILURE_COLUMNS)} FROM failures{where} "
                "ORDER BY created_at, model, dataset, seed NULLS FIRST, failure_id",
                params=params,
            ).df()
        for col in ("seed", "iteration"):
            frame[col] = frame[col].astype("Int64")
        for col in ("created_at", "resolved_at"):
            frame[col] = pd.to_datetime(frame[col])
        return frame.reset_index(drop=True)

    def resolve_failures(
        self,
        *,
        models: Filter = None,
        datasets: Filter = None,
        tasks: Filter = None,
        languages: Filter = None,
        seeds: Filter = None,
        failure_ids: Filter = None,
    ) -> int:
        """Mark the matching open failures resolved (e.g. of a model dropped from the suite).

        Returns how many were marked. Nothing is deleted.
        """
        where, params = _failure_where(
            {
                "model": models,
                "dataset": datasets,
                "task": tasks,
                "language": languages,
                "seed": seeds,
                "failure_id": failure_ids,
            },
            open_only=True,
        )
        with self.transaction() as con:
            row = _first(con.execute(f"SELECT count(*) FROM failures{where}", params).fetchall())
            con.execute(f"UPDATE failures SET resolved_at = ?{where}", [utc_now(), *params])
        return int(row[0]) if row else 0

    def _resolve_failures_of(self, con: duckdb.DuckDBPyConnection, runs_view: str) -> None:
        """Resolve open failures of the (model, dataset, seed, config_hash) of ``runs_view``.

        ``runs_view`` names the registered ``runs`` rows being stored; the
        caller holds their transaction. One ``UPDATE ... FROM`` joined to the
        distinct keys.
        """
        con.execute(
            "UPDATE failures SET resolved_at = ? FROM (SELECT DISTINCT model, dataset, seed, "
            f"config_hash FROM {runs_view}) k "
            "WHERE failures.resolved_at IS NULL AND failures.model = k.model "
            "AND failures.dataset = k.dataset AND failures.seed IS NOT DISTINCT FROM k.seed "
            "AND failures.config_hash = k.config_hash",
            [utc_now()],
        )

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

    # ------------------------------------------------------------------
    # imports
    # ------------------------------------------------------------------
    def _insert_import(self, record: ImportRecord) -> None:
        self._con.execute(
            f"INSERT INTO imports ({', '.join(_IMPORT_COLUMNS)}) VALUES "
            f"({', '.join('?' for _ in _IMPORT_COLUMNS)})",
            [getattr(record, c) for c in _IMPORT_COLUMNS],
        )

    def start_import(self, record: ImportRecord) -> None:
        """Record an import that is about to write runs (``completed_at`` stays NULL)."""
        with self.transaction():
            self._insert_import(record)

    def complete_import(self, import_id: str, added: int) -> None:
        """Mark an import complete with the number of items it added."""
        with self.transaction() as con:
            con.execute(
                "UPDATE imports SET completed_at = ?, added = ? WHERE import_id = ?",
                [utc_now(), added, import_id],
            )

    @_in_use
    def find_import(
        self, sha256: str, kind: str, *, completed: bool | None = None
    ) -> ImportRecord | None:
        """The latest import of a file with this content hash and kind."""
        cond = ""
        if completed is True:
            cond = " AND completed_at IS NOT NULL"
        elif completed is False:
            cond = " AND completed_at IS NULL"
        row = _first(
            self._con.execute(
                f"SELECT {', '.join(_IMPORT_COLUMNS)} FROM imports "
                f"WHERE sha256 = ? AND kind = ?{cond} "
                "ORDER BY started_at DESC LIMIT 1",
                [sha256, kind],
            ).fetchall()
        )
        return ImportRecord(**dict(zip(_IMPORT_COLUMNS, row, strict=True))) if row else None

    @_in_use
    def imports(self) -> pd.DataFrame:
        """All imports, oldest first."""
        return self._con.sql(
            f"SELECT {', '.join(_IMPORT_COLUMNS)} FROM imports ORDER BY started_at, import_id"
        ).df()

    @_in_use
    def count_runs_of_import(self, import_id: str) -> int:
        row = _first(
            self._con.execute(
                "SELECT count(*) FROM runs WHERE import_id = ?", [import_id]
            ).fetchall()
        )
        return int(row[0]) if row else 0

    # ------------------------------------------------------------------
    # summary
    # ------------------------------------------------------------------
    def _open_failure_count(self) -> int:
        if not self._has_failures_table():
            return 0
        row = _first(
            self._con.execute("SELECT count(*) FROM failures WHERE resolved_at IS NULL").fetchall()
        )
        return int(row[0]) if row else 0

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

    # ------------------------------------------------------------------
    # export / import of whole tables
    # ------------------------------------------------------------------
    def _export_query(self, table: str, fmt: str) -> str:
        if table == "runs":
            if fmt == "csv":
                return (
                    "SELECT * REPLACE (to_json(stat_names)::VARCHAR AS stat_names) "
                    "FROM runs ORDER BY run_id"
                )
            return "SELECT * FROM runs ORDER BY run_id"
        if table == "examples":
            keys = "r.model, r.dataset, r.task, r.language, r.seed, r.config_hash, r.metric"
            if fmt != "csv":
                return (
                    f"SELECT e.run_id, {keys}, e.position, e.example_id, e.stats, "
                    f"{self._source_position_sql('e')} "
                    "FROM example_stats e JOIN runs r USING (run_id) ORDER BY e.run_id, e.position"
                )
            layouts = [
                list(row[0])
                for row in self._con.execute(
                    "SELECT DISTINCT stat_names FROM runs ORDER BY stat_names"
                ).fetchall()
            ]
            if not layouts:
                return (
                    "SELECT NULL::VARCHAR AS run_id, NULL::VARCHAR AS model, "
                    "NULL::VARCHAR AS dataset, NULL::VARCHAR AS task, NULL::VARCHAR AS language, "
                    "NULL::BIGINT AS seed, NULL::VARCHAR AS config_hash, NULL::VARCHAR AS metric, "
                    "NULL::VARCHAR AS example_id WHERE false"
                )
            parts = []
            for names in layouts:
                stat_cols = ", ".join(
                    f"e.stats[{i + 1}] AS {_sql_ident(name)}" for i, name in enumerate(names)
                )
                literal = "[" + ", ".join(_sql_string(n) for n in names) + "]::VARCHAR[]"
                parts.append(
                    f"SELECT e.run_id, {keys}, e.position, e.example_id, "
                    f"{self._source_position_sql('e')}, {stat_cols} "
                    "FROM example_stats e JOIN runs r USING (run_id) "
                    f"WHERE r.stat_names = {literal}"
                )
            union = " UNION ALL BY NAME ".join(f"({p})" for p in parts)
            return (
                f"SELECT * EXCLUDE (position) FROM ({union}) "
                "ORDER BY model, dataset, task, language, metric, seed NULLS FIRST, "
                "config_hash, position"
            )
        if table == "scores":
            return (
                "SELECT * FROM scores ORDER BY model, task, language, dataset, metric, "
                "seed NULLS FIRST, replicate NULLS FIRST"
            )
        if table == "imports":
            return "SELECT * FROM imports ORDER BY started_at, import_id"
        if table == "meta":
            return "SELECT * FROM meta ORDER BY key"
        raise InputError(
            f"unknown table {table!r}; choose one of {', '.join(EXPORT_TABLES)} or all",
            field="table",
        )

    def _neutralised_csv_query(self, query: str) -> str:
        """Wrap ``query`` so that no text cell starts a spreadsheet formula.

        A cell that begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
        return is evaluated as a formula by spreadsheet programs (CSV
        injection, OWASP "CSV Injection"). Such text cells, and text cells that
        begin with an apostrophe (so the change can be undone unambiguously),
        get a leading apostrophe; numeric columns are untouched.
        """
        columns = self._con.execute(f"DESCRIBE ({query})").fetchall()
        text = [name for name, kind, *_ in columns if str(kind).upper() == "VARCHAR"]
        if not text:
            return query
        pattern = _sql_string(_FORMULA_START)
        replaced = ", ".join(
            f"CASE WHEN regexp_matches({_sql_ident(n)}, {pattern}) "
            f"THEN {_sql_string(chr(39))} || {_sql_ident(n)} ELSE {_sql_ident(n)} END "
            f"AS {_sql_ident(n)}"
            for n in text
        )
        return f"SELECT * REPLACE ({replaced}) FROM ({query})"

    @_in_use
    def export(
        self, out: str | Path, table: str = "all", *, keep_formulas: bool = False
    ) -> list[Path]:
        """Write table(s) to CSV or Parquet; returns the files written.

        * ``out`` ending in ``.csv``, ``.csv.gz`` or ``.parquet`` and one table:
          that file;
        * such a name and ``table="all"``: one file per table next to it,
          ``STEM_runs.EXT``, ``STEM_examples.EXT``, ``STEM_scores.EXT``,
          ``STEM_imports.EXT`` and ``STEM_meta.EXT``;
        * any other name (no such suffix, or an existing directory): a
          directory of Parquet files ``runs.parquet``, ``examples.parquet``, ...
          — a snapshot of the whole store that :meth:`import_parquet` reads back.

        In CSV, examples are *wide* (one column per statistic name, the format
        ``glotbench import examples`` reads); in Parquet they keep the stats list.

        In CSV, text cells that a spreadsheet would evaluate as a formula (they
        begin with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return) and
        text cells that begin with an apostrophe get a leading apostrophe,
        unless ``keep_formulas`` is true. Parquet is written as stored.
        """
        out = Path(out)
        if table != "all" and table not in EXPORT_TABLES:
            raise InputError(
                f"unknown table {table!r}; choose one of {', '.join(EXPORT_TABLES)} or all",
                field="table",
            )
        tables = list(EXPORT_TABLES) if table == "all" else [table]
        name = out.name.lower()
        suffix = next((s for s in (".csv.gz", ".csv", ".parquet") if name.endswith(s)), None)
        targets: list[tuple[str, Path, str]] = []
        if suffix is None or out.is_dir():
            try:
                out.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise InputError(f"cannot create the directory: {exc}", path=str(out)) from None
            targets = [(t, out / f"{t}.parquet", "parquet") for t in tables]
        else:
            fmt = "parquet" if suffix == ".parquet" else "csv"
            stem = out.name[: len(out.name) - len(suffix)]
            if not out.parent.exists():
                raise InputError("the directory to write into does not exist", path=str(out.parent))
            if len(tables) == 1:
                targets = [(tables[0], out, fmt)]
            else:
                targets = [(t, out.with_name(f"{stem}_{t}{suffix}"), fmt) for t in tables]
        for tbl, path, fmt in targets:
            query = self._export_query(tbl, fmt)
            if fmt == "csv" and not keep_formulas:
                query = self._neutralised_csv_query(query)
            if fmt == "parquet":
                options = "FORMAT parquet, COMPRESSION zstd"
            else:
                options = "FORMAT csv, HEADER true"
                if path.name.lower().endswith(".gz"):
                    options += ", COMPRESSION gzip"
            try:
                self._con.execute(f"COPY ({query}) TO {_sql_string(str(path))} ({options})")
            except duckdb.Error as exc:
                raise StoreError(f"could not write {path}: {exc}") from None
        return [p for _, p, _ in targets]

    def import_parquet(self, path: str | Path) -> ImportResult:
        """Merge a Parquet snapshot (written by :meth:`export`) into this store.

        ``path`` is a snapshot directory (``runs.parquet``, ``examples.parquet``,
        ``scores.parquet``, ``imports.parquet``, ``meta.parquet``, any subset)
        or a name ``STEM.parquet`` whose siblings ``STEM_runs.parquet`` ... exist.
        Everything is validated before anything is written. Imports and scores
        are added in one transaction; runs in transactions of whole runs, so an
        interrupted import resumes when repeated. Runs and scores already
        stored with the same content are skipped; different content is an error.
        """
        from glotbench.core.snapshot import import_snapshot

        return import_snapshot(self, Path(path))

    # internal helpers used by the snapshot importer
    def _insert_runs_from_parquet(
        self, runs_path: Path, examples_path: Path, run_ids: list[str], *, has_source: bool
    ) -> None:
        cols = ", ".join(_RUN_COLUMNS)
        casts = ", ".join(
            f"{c}::JSON AS {c}" if c in ("metric_config", "model_metadata") else c
            for c in _RUN_COLUMNS
        )
        with self.transaction() as con:
            con.execute(
                f"INSERT INTO runs ({cols}) SELECT {casts} FROM read_parquet(?) "
                "WHERE run_id IN (SELECT unnest(?))",
                [str(runs_path), run_ids],
            )
            source = "source_position::BIGINT" if has_source else "NULL::BIGINT"
            con.execute(
                "INSERT INTO example_stats (run_id, position, example_id, stats, source_position) "
                "SELECT run_id, position::INTEGER, example_id, stats::DOUBLE[], "
                f"{source} FROM read_parquet(?) WHERE run_id IN (SELECT unnest(?)) "
                "ORDER BY run_id, position",
                [str(examples_path), run_ids],
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


def run_id_of_row(row: dict[str, Any]) -> str:
    """Recompute the run id from a row holding the run-key columns."""
    seed = row.get("seed")
    seed_val = None if seed is None or pd.isna(seed) else int(seed)
    return run_id_for(
        str(row["model"]),
        str(row["dataset"]),
        str(row["task"]),
        str(row["language"]),
        seed_val,
        str(row["config_hash"] or ""),
        str(row["metric"]),
    )
