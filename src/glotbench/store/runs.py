"""The runs in the store: listing them and writing new ones.

``store.runs`` (:class:`Runs`) lists the complete runs (:meth:`Runs.frame`),
tells which are stored, and writes runs — one transaction per run or per
batch of whole runs — with the Arrow tables it inserts. A run is written
with all its example statistics in one transaction; a batch holds whole runs
only; a run already stored (same ``run_id``) is skipped, so a re-run resumes.
The examples' statistics are read through ``store.stats``
(:mod:`glotbench.store.stats`). A run too large for one transaction's memory
is written in several (:meth:`Runs.write_chunks`), its ``runs`` row last: a
run is complete exactly when its ``runs`` row exists, whichever way it was
written. The Arrow tables are built by :mod:`glotbench.store.run_tables`.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any

import duckdb
import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa

from glotbench.errors import InputError, StoreError
from glotbench.store.layout import (
    _RUN_COLUMNS,
    _first,
)
from glotbench.store.run_tables import (
    BatchWrite,
    PreparedRun,
    check_unique,
    example_columns,
    examples_table,
    has_blank,
    id_strings,
    run_row,
    runs_table,
    source_position_array,
    with_positions,
)
from glotbench.store.schema import (
    RunKey,
    RunRecord,
    StatsDigest,
    stats_digest,
)
from glotbench.store.sql import (
    PARTIAL_RUN_PREFIX,
    Collaborator,
    Filter,
    _in_use,
    _sql_ident,
    _where,
    drop_partial_runs,
)

#: A run to write: (record, example ids, n × k statistics[, source positions])
RunItem = (
    tuple[RunRecord, Sequence[Any] | np.ndarray, npt.ArrayLike]
    | tuple[RunRecord, Sequence[Any] | np.ndarray, npt.ArrayLike, npt.ArrayLike | None]
)

#: runs in the first transaction of :meth:`Runs.write_batches`; each next
#: batch doubles, up to ``batch_runs``, so the first runs are committed (and
#: reported) at once and large imports still pay few commits
FIRST_BATCH_RUNS = 16
#: most runs per transaction of :meth:`Runs.write_batches` (by default)
BATCH_RUNS = 2_000
#: example rows per transaction of :meth:`Runs.write_batches`; bounds the
#: memory of one batch's Arrow tables (about 50 bytes a row with k = 2)
BATCH_ROWS = 2_000_000
#: example rows per transaction of :meth:`Store.write_run_chunks` (a run larger
#: than this is committed in several transactions, its ``runs`` row last); DuckDB
#: holds a transaction's rows in memory until the commit (~50-140 bytes a row)
COMMIT_ROWS = 131_072
#: DuckDB's memory limit while :meth:`Store.write_run_chunks` writes a run: without
#: one, the store's buffers and the final repeated-id check (an aggregate over the
#: run's ids) grow with the run; with it they spill to ``<store>.tmp``
CHUNKED_WRITE_MEMORY = "64MB"


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


@contextmanager
def _memory_limited(con: duckdb.DuckDBPyConnection, limit: str) -> Iterator[None]:
    """DuckDB's ``memory_limit`` set to ``limit`` for the block, then restored."""
    row = con.execute("SELECT current_setting('memory_limit')").fetchone()
    con.execute(f"SET memory_limit = '{limit}'")
    try:
        yield
    finally:
        if row is not None:
            with suppress(duckdb.Error):
                con.execute(f"SET memory_limit = '{row[0]}'")


def _insert_chunk(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    where: str,
    k: int,
    ids: Sequence[Any] | np.ndarray | pa.Array,
    stats: npt.ArrayLike,
    position: int,
    digest: StatsDigest,
) -> int:
    """Check one chunk of a run and insert its rows from ``position`` on; its row count."""
    id_list, arr = id_strings(ids)
    m = len(id_list)
    matrix = np.asarray(stats, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape != (m, k):
        raise InputError(
            f"{where}: statistics must be an (n × k) = ({m} × {k}) matrix per chunk "
            f"(one row per example id, one column per stat name), got shape {matrix.shape}"
        )
    _require_finite(matrix, id_list, where)
    digest.update_stats(matrix)
    table = example_columns(arr, matrix, pa.nulls(m, type=pa.int64()))
    table = table.set_column(
        0, "position", pa.array(np.arange(position, position + m, dtype=np.int32))
    )
    owner = pa.DictionaryArray.from_arrays(
        pa.array(np.zeros(m, dtype=np.int32)), pa.array([run_id], type=pa.string())
    )
    table = table.add_column(0, "run_id", owner)
    names = ", ".join(_sql_ident(c) for c in table.column_names)
    with _registered(con, "_incoming_stats", table) as view:
        con.execute(f"INSERT INTO example_stats ({names}) SELECT {names} FROM {view}")
    return m


class Runs(Collaborator):
    """Complete runs (``store.runs``): listing them, which are stored, writing new ones."""

    @_in_use
    def frame(
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
    def completed_ids(self) -> set[str]:
        """Ids of all complete runs (a run is complete iff its ``runs`` row exists)."""
        return {r[0] for r in self._con.execute("SELECT run_id FROM runs").fetchall()}

    @_in_use
    def has(self, key: RunKey | str) -> bool:
        """Whether the run (a :class:`RunKey`, :class:`RunRecord` or run id) is complete."""
        run_id = key if isinstance(key, str) else key.run_id
        row = _first(self._con.execute("SELECT 1 FROM runs WHERE run_id = ?", [run_id]).fetchall())
        return row is not None

    @_in_use
    def stored(self, run_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
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

    def write(
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

        Storing the run marks open failures of its (model, dataset,
        seed, config_hash) resolved, in the same transaction.
        """
        return self.write_many([(run, example_ids, stats, source_positions)], replace=replace) == 1

    def write_many(
        self,
        runs: Iterable[RunItem],
        *,
        replace: bool = False,
        source_positions: Sequence[npt.ArrayLike | None] | None = None,
    ) -> int:
        """Store several runs (e.g. the metrics of one benchmark job) in **one** transaction.

        ``source_positions``, if given, has one entry (or None) per run, as in
        :meth:`write`.

        Every run is validated as in :meth:`write` before anything is
        written. Runs already stored are skipped, or with ``replace`` deleted
        and rewritten — in the same transaction, so a failure anywhere leaves
        the store exactly as it was (the old runs intact). Open
        failures of the (model, dataset, seed, config_hash) of the
        written runs are marked resolved in that transaction too. Returns the
        number of runs written (new or replaced).

        The runs are written as one batch (:meth:`_write_batch`): one Arrow
        insert per table, whatever their number.
        """
        prepared = [self._prepare_run(*item) for item in with_positions(runs, source_positions)]
        check_unique(prepared, set())
        if not prepared:
            return 0
        with self.transaction() as con:
            done = self._write_batch(con, prepared, replace=replace)
        return len(done)

    def write_batches(
        self,
        runs: Iterable[RunItem],
        *,
        replace: bool = False,
        batch_runs: int = BATCH_RUNS,
        batch_rows: int = BATCH_ROWS,
        progress: Callable[[int], None] | None = None,
    ) -> BatchWrite:
        """Store many runs (an import), one transaction per batch of whole runs.

        A run is (record, example ids, statistics) as in :meth:`write`,
        optionally with its source positions as a fourth item. ``runs`` is
        consumed lazily: a batch closes when it holds
        ``batch_runs`` runs (the first :data:`FIRST_BATCH_RUNS`, doubling from
        batch to batch up to ``batch_runs``) or ``batch_rows`` example rows, is validated
        (every run as in :meth:`write`) and written in one transaction
        with one Arrow insert per table, the already-stored check being one
        anti-join against the batch's run ids. A run therefore never spans
        two transactions: an error, Ctrl-C or ``kill -9`` loses at most the
        batch being written, never part of a run, and repeating the call
        writes what is missing. Batches committed before an invalid run
        (or a run given twice) stay stored. ``progress(done)`` is called after
        every batch with the number of runs handled so far (written or skipped).
        """
        if batch_runs < 1 or batch_rows < 1:
            raise InputError("batch_runs and batch_rows must be at least 1")
        result = BatchWrite()
        seen: set[str] = set()
        batch: list[PreparedRun] = []
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
            check_unique([prepared], seen)
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
    ) -> PreparedRun:
        """Validate a run and build its rows (nothing is written)."""
        id_list, ids = id_strings(example_ids)
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
        if has_blank(id_list):
            raise InputError(f"{where}: example ids must not be empty")
        if len(set(id_list)) != n:
            index = pd.Index(id_list)
            dup = index[index.duplicated()][0]
            raise InputError(f"{where}: example id {dup!r} occurs more than once")
        _require_finite(matrix, id_list, where)
        source = (
            pa.nulls(n, type=pa.int64())
            if source_positions is None
            else source_position_array(source_positions, np.asarray(id_list, dtype=object), where)
        )
        digest = stats_digest(id_list, matrix, tuple(run.stat_names))
        run_id = run.run_id
        return PreparedRun(
            run_id=run_id,
            description=run.describe(),
            row=run_row(run, n, digest),
            examples=example_columns(ids, matrix, source),
        )

    def write_chunks(
        self,
        run: RunRecord,
        chunks: Callable[[], Iterable[tuple[Sequence[Any] | np.ndarray | pa.Array, npt.ArrayLike]]],
        *,
        commit_rows: int | None = None,
    ) -> bool:
        """Store one run given chunk by chunk, committing about every ``commit_rows`` rows.

        ``chunks()`` returns a fresh iterator of (example ids, (m × k)
        statistics) chunks in run order; it is called twice — once for the
        ids (the statistics digest, :class:`~glotbench.store.schema.StatsDigest`,
        hashes every id before any statistic), once to insert — so memory
        holds one chunk, whatever the run's size. ``False``: already stored.

        The example rows are committed in transactions of about ``commit_rows``
        rows (default :data:`COMMIT_ROWS`; DuckDB keeps a transaction's rows in
        memory until it commits), and the ``runs`` row — the mark of a complete
        run — last, with the final rows. The first transaction records the run
        in ``meta`` (:data:`PARTIAL_RUN_PREFIX`): rows of a run without a
        ``runs`` row are invisible to every reader, and the next write of the
        run (this method again, a batch, a snapshot merge) deletes them first
        (:func:`drop_partial_runs`), so a killed write leaves nothing behind
        that a re-run could double. The writer lock and the file are held for
        the whole run, so no other writer gets in between.

        The checks of :meth:`write` apply (non-empty ids, finite statistics,
        the right shape, ``n_examples``); repeated ids are found by DuckDB
        (``GROUP BY … HAVING count(*) > 1``) before the ``runs`` row is
        written; on any error the rows written so far are deleted. The stored
        rows and ``stats_sha256`` are those of :meth:`write` with the chunks
        concatenated. Source positions are not taken (the column is NULL).
        """
        commit_rows = COMMIT_ROWS if commit_rows is None else commit_rows
        if commit_rows < 1:
            raise InputError("commit_rows must be at least 1")
        where = f"run ({run.describe()})"
        digest = StatsDigest(tuple(run.stat_names))
        for ids, _stats in chunks():
            id_list, _ = id_strings(ids)
            if has_blank(id_list):
                raise InputError(f"{where}: example ids must not be empty")
            digest.update_ids(id_list)
        n = digest.n_ids
        if n == 0:
            raise InputError(f"{where}: a run needs at least one example")
        if run.n_examples is not None and run.n_examples != n:
            raise InputError(f"{where}: n_examples is {run.n_examples} but {n} examples were given")
        run_id = run.run_id
        with self._store.writing(), self.held(), _memory_limited(self._con, CHUNKED_WRITE_MEMORY):
            with self.transaction() as con:
                if con.execute("SELECT 1 FROM runs WHERE run_id = ?", [run_id]).fetchall():
                    return False
                drop_partial_runs(con, [run_id])  # rows of a killed write of this run
                con.execute(
                    "INSERT INTO meta (key, value) VALUES (?, ?)",
                    [PARTIAL_RUN_PREFIX + run_id, json.dumps({"pid": os.getpid()})],
                )
            try:
                self._insert_chunks(run, iter(chunks()), digest, n, commit_rows)
            except BaseException:
                with suppress(duckdb.Error, StoreError), self.transaction() as con:
                    drop_partial_runs(con, [run_id])
                raise
        return True

    def _insert_chunks(
        self,
        run: RunRecord,
        chunks: Iterator[tuple[Sequence[Any] | np.ndarray | pa.Array, npt.ArrayLike]],
        digest: StatsDigest,
        n: int,
        commit_rows: int,
    ) -> None:
        """Insert a run's chunks, ``commit_rows`` rows a transaction, the ``runs`` row last."""
        run_id, where, k = run.run_id, f"run ({run.describe()})", len(run.stat_names)
        position = 0
        item = next(chunks, None)
        while True:
            with self.transaction() as con:
                in_transaction = 0
                while item is not None and in_transaction < commit_rows:
                    ids, stats = item
                    m = _insert_chunk(con, run_id, where, k, ids, stats, position, digest)
                    position, in_transaction = position + m, in_transaction + m
                    item = next(chunks, None)
                if item is None:  # the last rows: check the run, then mark it complete
                    if position != n:
                        raise InputError(f"{where}: {position} examples given, {n} when first read")
                    self._complete_chunked_run(con, run, n, digest.hexdigest(), where)
            # write the committed rows to the file now: a checkpoint's memory grows with
            # what it writes (the one when the file is released would hold the whole run)
            with suppress(duckdb.Error):
                self._con.execute("CHECKPOINT")
            if item is None:
                return

    def _complete_chunked_run(
        self, con: duckdb.DuckDBPyConnection, run: RunRecord, n: int, digest: str, where: str
    ) -> None:
        """The ``runs`` row of a run whose rows are inserted (the caller's transaction)."""
        run_id = run.run_id
        repeated = con.execute(
            "SELECT example_id FROM example_stats WHERE run_id = ? "
            "GROUP BY example_id HAVING count(*) > 1 LIMIT 1",
            [run_id],
        ).fetchall()
        if repeated:
            raise InputError(f"{where}: example id {repeated[0][0]!r} occurs more than once")
        prepared = PreparedRun(
            run_id=run_id,
            description=run.describe(),
            row=run_row(run, n, digest),
            examples=pa.table({}),
        )
        with _registered(con, "_incoming_runs", runs_table([prepared])) as view:
            cols = ", ".join(_RUN_COLUMNS)
            con.execute(f"INSERT INTO runs ({cols}) SELECT {cols} FROM {view}")
            self._store.failures.resolve_for_runs(con, view)
        con.execute("DELETE FROM meta WHERE key = ?", [PARTIAL_RUN_PREFIX + run_id])

    def _write_batch(
        self, con: duckdb.DuckDBPyConnection, runs: Sequence[PreparedRun], *, replace: bool
    ) -> list[PreparedRun]:
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
            drop_partial_runs(con, [r.run_id for r in todo])  # rows of a killed chunked write
            self._insert_batch(con, todo)
        return todo

    def _insert_batch(self, con: duckdb.DuckDBPyConnection, runs: Sequence[PreparedRun]) -> None:
        """Insert runs' example statistics and ``runs`` rows: one Arrow insert per table.

        The caller holds the transaction. Every column of the examples tables
        is inserted by name, so a new ``example_stats`` column needs only the
        DDL and :func:`example_columns`. Open failures of the runs' (model,
        dataset, seed, config_hash) are resolved from the same ``runs`` rows.
        """
        examples = examples_table(runs)
        names = ", ".join(_sql_ident(c) for c in examples.column_names)
        with _registered(con, "_incoming_stats", examples) as view:
            con.execute(f"INSERT INTO example_stats ({names}) SELECT {names} FROM {view}")
        with _registered(con, "_incoming_runs", runs_table(runs)) as view:
            cols = ", ".join(_RUN_COLUMNS)
            con.execute(f"INSERT INTO runs ({cols}) SELECT {cols} FROM {view}")
            self._store.failures.resolve_for_runs(con, view)


def _require_finite(matrix: np.ndarray, id_list: Sequence[str], where: str) -> None:
    """Refuse statistics with a NaN or infinity, naming the first such example."""
    finite = np.isfinite(matrix)
    if not finite.all():
        bad = int(np.flatnonzero(~finite.all(axis=1))[0])
        raise InputError(
            f"{where}: statistics of example {id_list[bad]!r} are not finite: "
            f"{matrix[bad].tolist()}"
        )
