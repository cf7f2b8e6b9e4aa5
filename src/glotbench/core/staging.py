"""Validate a tidy file chunk by chunk into a DuckDB staging table.

The streaming counterparts of :func:`glotbench.core.validate.validate_examples`
(:func:`stage_examples`) and :func:`glotbench.core.validate.validate_scores`
(:func:`stage_scores`) for files of any size (``docs/store.md`` → *Streaming
import*). Both share :class:`StagedFile` (the temporary DuckDB file, locating
records for errors, clean-up) and :func:`_open_staging`.

Examples:

1. **validate in chunks** — each chunk of records
   (:func:`glotbench.core.chunked.iter_tidy_chunks`) goes through
   ``validate_examples`` (every per-record check, the metric's statistic
   constraints, duplicate keys and source positions *within* the chunk); its
   rows are appended to a staging table ``(run, row, loc, example_id, stats,
   source_position)`` in a temporary DuckDB file, never in the store.
   A run's rows may be spread over the file (runs may interleave), so each
   run key gets a number on its first record and its rows are collected
   under that number;
2. **checks across chunks** — a run's statistics layout (metric
   configuration) is the same in every chunk, its source positions are given
   for all its records or none (checked as chunks arrive), and, for the runs
   that span more than one chunk, example ids and source positions are unique
   within the run (SQL ``GROUP BY … HAVING count(*) > 1`` on the staging
   table, which DuckDB can spill to disk);
3. **read back run by run** — :meth:`StagedExamples.iter_runs` streams the
   staging table ordered by (run, row) and yields one whole run at a time, in
   the order of the runs' first records, with its rows in file order: the same
   runs, example order and statistics as ``validate_examples``.

Scores: each chunk goes through ``validate_scores`` (every per-record check,
duplicate keys within the chunk); its validated rows (with the file-wide row
number and the record's location) are appended to a staging table; then keys
repeated across chunks are found with SQL (``GROUP BY … HAVING``).
:meth:`StagedScores.iter_frames` reads the rows back in file order, in frames
of a bounded size, for ``Store.add_score_batches``.

Peak memory is one chunk (plus, for examples, the largest run), whatever the
file size. Errors name the file, the line (CSV, JSONL) or row (Parquet) and the
field, as the whole-file validation does.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

import numpy as np
import pandas as pd

from glotbench.core.chunked import CHUNK_ROWS, iter_tidy_chunks
from glotbench.core.readers import SourceKind, TidyTable
from glotbench.core.schema import RunRecord
from glotbench.core.validate import ValidatedRun, validate_examples, validate_scores
from glotbench.errors import InputError

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


@dataclass
class StagedExamples(StagedFile):
    """A validated examples file: its runs in the order of their first records."""

    runs: list[StagedRun] = field(default_factory=list)

    # -- reading runs back ----------------------------------------------------
    def iter_runs(
        self, indices: Sequence[int] | None = None, batch_rows: int = 100_000
    ) -> Iterator[ValidatedRun]:
        """Whole runs (``indices``: only these) in file order, each as a ValidatedRun."""
        wanted = None if indices is None else set(indices)
        if wanted is not None and not wanted:
            return
        query = "SELECT run, row, example_id, stats, source_position FROM staging"
        params: list[Any] = []
        if wanted is not None and len(wanted) < len(self.runs):
            query += " WHERE run IN (SELECT unnest(?))"
            params.append(sorted(wanted))
        query += " ORDER BY run, row"
        reader = self._con.sql(query, params=params or None).to_arrow_reader(batch_rows)
        for index, table in _group_runs(reader):
            info = self.runs[index]
            ids, stats = _ids_and_stats(table, len(info.record.stat_names))
            source = None
            if info.has_source_positions:
                source = table.column("source_position").to_numpy().astype(np.int64)
            yield ValidatedRun(
                record=info.record.model_copy(),
                example_ids=ids,
                stats=stats,
                positions=table.column("row").to_numpy().astype(np.int64),
                source_positions=source,
            )


def _group_runs(reader: Any) -> Iterator[tuple[int, Any]]:
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


def _ids_and_stats(table: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``example_id`` column as an object array and ``stats`` as an (n × k) matrix."""
    ids = np.asarray(table.column("example_id").to_pylist(), dtype=object)
    values = table.column("stats").combine_chunks().flatten().to_numpy(zero_copy_only=False)
    return ids, np.ascontiguousarray(values.reshape(len(ids), k), dtype=np.float64)


def _stats_list(stats: np.ndarray) -> Any:
    """An (n × k) matrix as an Arrow list array of n lists of k doubles."""
    import pyarrow as pa

    n, k = stats.shape
    return pa.ListArray.from_arrays(
        pa.array(np.arange(0, (n + 1) * k, k, dtype=np.int32)),
        pa.array(np.ascontiguousarray(stats, dtype=np.float64).reshape(-1)),
    )


class RunSpool:
    """Validated runs' example ids, statistics and lines, held in files until written.

    For importers that validate a run at a time (:mod:`glotbench.importers`):
    :meth:`add` moves a run's arrays to an Arrow IPC file in a staging folder
    (``.glotbench-staging-<pid>-…``, next to the store) and returns its
    number; :meth:`load` and :meth:`iter_runs` bring them back. An import then
    holds only the runs' records in memory, not their examples. Close it when
    done (or use it as a context manager); a killed process's spool is removed
    by the next import (:func:`remove_stale_staging`).
    """

    def __init__(self, work_dir: str | Path | None = None) -> None:
        self._dir = _new_staging_folder(work_dir)
        self._widths: list[int] = []

    def __len__(self) -> int:
        return len(self._widths)

    def add(self, ids: np.ndarray, stats: np.ndarray, lines: np.ndarray | None = None) -> int:
        """Store one run's arrays (``lines``: each example's line, or None); its number."""
        import pyarrow as pa
        import pyarrow.ipc as ipc

        index = len(self._widths)
        n = len(ids)
        matrix = np.asarray(stats, dtype=np.float64).reshape(n, -1)
        columns = {"example_id": pa.array([str(i) for i in ids], type=pa.string())}
        if lines is not None:
            columns["line"] = pa.array(np.asarray(lines, dtype=np.int64))
        for j in range(matrix.shape[1]):
            columns[f"s{j}"] = pa.array(matrix[:, j])
        table = pa.table(columns)
        with ipc.new_file(self._path(index), table.schema) as writer:
            writer.write_table(table)
        self._widths.append(matrix.shape[1])
        return index

    def connect(self, name: str, ddl: str) -> Any:
        """A DuckDB file ``name`` in the spool's folder with table ``ddl`` (memory-limited,
        spilling to the folder): for checks across a run's chunks; close it when done."""
        import duckdb

        con = duckdb.connect(str(self._dir / f"{name}.duckdb"))
        try:
            con.execute(f"SET memory_limit = '{STAGING_MEMORY}'")
            con.execute(f"SET temp_directory = '{self._dir / (name + '-spill')}'")
            con.execute("SET preserve_insertion_order = false")
            con.execute("SET enable_progress_bar = false")
            con.execute(ddl)
        except BaseException:
            con.close()
            raise
        return con

    def open_run(self, k: int) -> RunSpoolWriter:
        """A writer that appends one run's rows chunk by chunk (k statistics a row).

        The run's number is :attr:`RunSpoolWriter.index`; it is complete once
        the writer is closed. Memory: the chunk being appended.
        """
        import pyarrow as pa
        import pyarrow.ipc as ipc

        index = len(self._widths)
        self._widths.append(k)
        schema = pa.schema(
            [("example_id", pa.string()), *((f"s{j}", pa.float64()) for j in range(k))]
        )
        return RunSpoolWriter(index, k, ipc.new_file(self._path(index), schema), schema)

    def load(self, index: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Run ``index``'s (example ids, (n × k) statistics, lines or None)."""
        import pyarrow.ipc as ipc

        with ipc.open_file(self._path(index)) as reader:
            table = reader.read_all()
        ids = np.asarray(table.column("example_id").to_pylist(), dtype=object)
        k = self._widths[index]
        stats = np.empty((len(ids), k), dtype=np.float64)
        for j in range(k):
            stats[:, j] = table.column(f"s{j}").to_numpy()
        lines = (
            table.column("line").to_numpy().astype(np.int64)
            if "line" in table.column_names
            else None
        )
        return ids, stats, lines

    def iter_chunks(self, index: int, rows: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Run ``index``'s (example ids, (m × k) statistics) in chunks of at most ``rows``.

        The file is memory-mapped and read a record batch at a time, so memory
        holds one chunk; concatenated, the chunks are :meth:`load`'s arrays.
        """
        import pyarrow as pa
        import pyarrow.ipc as ipc

        k = self._widths[index]
        with pa.memory_map(str(self._path(index))) as source:
            reader = ipc.open_file(source)
            for b in range(reader.num_record_batches):
                batch = reader.get_batch(b)
                for start in range(0, batch.num_rows, rows):
                    part = batch.slice(start, rows)
                    ids = np.asarray(part.column(0).to_pylist(), dtype=object)
                    stats = np.empty((part.num_rows, k), dtype=np.float64)
                    for j in range(k):
                        stats[:, j] = part.column(f"s{j}").to_numpy(zero_copy_only=False)
                    yield ids, stats

    def load_ids(self, index: int) -> np.ndarray:
        """Run ``index``'s example ids only."""
        import pyarrow.ipc as ipc

        with ipc.open_file(self._path(index)) as reader:
            table = reader.read_all().select(["example_id"])
        return np.asarray(table.column(0).to_pylist(), dtype=object)

    def iter_runs(
        self, indices: Iterable[int]
    ) -> Iterator[tuple[int, np.ndarray, np.ndarray, np.ndarray | None]]:
        """(index, ids, statistics, lines) of the runs ``indices``, one at a time."""
        for index in indices:
            yield index, *self.load(index)

    def _path(self, index: int) -> Path:
        return self._dir / f"run-{index}.arrow"

    def close(self) -> None:
        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class RunSpoolWriter:
    """Appends a run's (example ids, statistics) to its spool file (:meth:`RunSpool.open_run`)."""

    index: int
    k: int
    _writer: Any = field(repr=False)
    _schema: Any = field(repr=False)
    rows: int = 0

    def append(self, ids: Any, stats: np.ndarray) -> None:
        """Append rows: ``ids`` (an Arrow string array or a sequence of str), (n × k) ``stats``."""
        import pyarrow as pa

        matrix = np.asarray(stats, dtype=np.float64).reshape(len(ids), self.k)
        columns = [ids if isinstance(ids, pa.Array) else pa.array(list(ids), type=pa.string())]
        columns += [pa.array(matrix[:, j]) for j in range(self.k)]
        self._writer.write_batch(pa.RecordBatch.from_arrays(columns, schema=self._schema))
        self.rows += len(ids)

    def close(self) -> None:
        self._writer.close()


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


def stage_examples(
    path: str | Path,
    *,
    labels: Sequence[str] | None = None,
    chunk_rows: int = CHUNK_ROWS,
    work_dir: str | Path | None = None,
) -> StagedExamples:
    """Validate a per-example file in chunks into a staging table (see the module doc).

    ``work_dir``: where the temporary staging database goes (default: the
    system's temporary directory); it is removed by :meth:`StagedExamples.close`
    and when validation fails.
    """
    with _open_staging(
        work_dir,
        "CREATE TABLE staging (run INTEGER, row BIGINT, loc BIGINT, example_id VARCHAR, "
        "stats DOUBLE[], source_position BIGINT)",
    ) as (con, tmp):
        return _stage(con, tmp, Path(path), labels, chunk_rows)


@contextmanager
def _open_staging(work_dir: str | Path | None, ddl: str) -> Iterator[tuple[Any, Path]]:
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


def _new_staging_folder(work_dir: str | Path | None) -> Path:
    """A new ``.glotbench-staging-<pid>-…`` folder in ``work_dir``; stale ones removed first."""
    remove_stale_staging(work_dir)
    return Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-", dir=work_dir))


def _connect_staging(work_dir: str | Path | None, ddl: str) -> tuple[Any, Path]:
    """A new staging folder (stale ones removed first) and its DuckDB file with table ``ddl``."""
    import duckdb

    tmp = _new_staging_folder(work_dir)
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


def _stage(
    con: Any, tmp: Path, path: Path, labels: Sequence[str] | None, chunk_rows: int
) -> StagedExamples:
    import pyarrow as pa

    runs: dict[str, StagedRun] = {}
    order: list[StagedRun] = []
    all_columns: dict[str, None] = {}
    used: set[str] = set()
    rows = 0
    meta: tuple[SourceKind, bool] | None = None
    for chunk_no, chunk in enumerate(iter_tidy_chunks(path, chunk_rows)):
        meta = (chunk.kind, chunk.gz)
        data = validate_examples(chunk, labels=labels)
        for c in chunk.columns:
            all_columns.setdefault(c, None)
        ignored = set(data.ignored_columns)
        used.update(c for c in chunk.columns if c not in ignored)
        parts = []
        for run in data.runs:
            info = _register(runs, order, chunk, run, chunk_no)
            pos = run.positions
            n = pos.size
            stats = _stats_list(run.stats)
            src = (
                pa.array(run.source_positions, type=pa.int64())
                if run.source_positions is not None
                else pa.nulls(n, type=pa.int64())
            )
            parts.append(
                pa.table(
                    {
                        "run": pa.array(np.full(n, info.index, dtype=np.int32)),
                        "row": pa.array(rows + pos),
                        "loc": pa.array(chunk.record_index[pos].astype(np.int64)),
                        "example_id": pa.array(run.example_ids.tolist(), type=pa.string()),
                        "stats": stats,
                        "source_position": src,
                    }
                )
            )
        staged = pa.concat_tables(parts)  # noqa: F841 - read by DuckDB's replacement scan
        con.execute("INSERT INTO staging SELECT * FROM staged")
        del staged, parts, data
        rows += len(chunk)
    assert meta is not None  # iter_tidy_chunks raises for a file without records
    result = StagedExamples(
        path=str(path),
        kind=meta[0],
        gz=meta[1],
        columns=list(all_columns),
        runs=order,
        rows=rows,
        ignored_columns=[c for c in all_columns if c not in used],
        _con=con,
        _dir=tmp,
    )
    _check_across_chunks(result)
    return result


def _register(
    runs: dict[str, StagedRun],
    order: list[StagedRun],
    chunk: TidyTable,
    run: ValidatedRun,
    chunk_no: int,
) -> StagedRun:
    """The run's StagedRun (new on its first chunk); checks its layout across chunks."""
    rec = run.record
    has_source = run.source_positions is not None
    info = runs.get(rec.run_id)
    if info is None:
        info = StagedRun(
            index=len(order),
            record=rec,
            first_loc=int(chunk.record_index[run.first_position]),
            has_source_positions=has_source,
            last_chunk=chunk_no,
        )
        runs[rec.run_id] = info
        order.append(info)
        return info

    def first() -> str:  # where the run's first record is (CSV: a scan; only for errors)
        return TidyTable(
            path=chunk.path,
            kind=chunk.kind,
            frame=pd.DataFrame(),
            columns=chunk.columns,
            record_index=np.asarray([info.first_loc]),
            gz=chunk.gz,
        ).where(0)

    if tuple(rec.stat_names) != tuple(info.record.stat_names) or (
        rec.metric_config != info.record.metric_config
    ):
        raise chunk.error(
            f"the statistics of this run ({rec.describe()}) are {', '.join(rec.stat_names)} "
            f"here but {', '.join(info.record.stat_names)} in its records from {first()} on "
            "(a label-count metric's labels must be the same for all records of a run)",
            run.first_position,
            "metric",
        )
    if has_source != info.has_source_positions:
        if has_source:  # given here, missing in the run's earlier records
            raise chunk.error(
                f"source_position is given here but empty on {first()} for the same run "
                f"({rec.describe()}); give it for every example of a run or for none",
                run.first_position,
                "source_position",
            )
        raise chunk.error(
            f"source_position is empty here but given for other examples of this run "
            f"({rec.describe()}); give it for every example of a run or for none",
            run.first_position,
            "source_position",
        )
    info.record.n_examples = (info.record.n_examples or 0) + (rec.n_examples or 0)
    if info.last_chunk != chunk_no:
        info.chunks += 1
        info.last_chunk = chunk_no
    return info


def _check_across_chunks(staged: StagedExamples) -> None:
    """Example ids and source positions unique within each run that spans chunks."""
    spanning = [r.index for r in staged.runs if r.chunks > 1]
    if not spanning:
        return
    con = staged._con
    for column, what in (("example_id", "example_id"), ("source_position", "source_position")):
        dup = con.execute(
            f"""
            SELECT run, {column}, count(*) - 1 AS extra
            FROM staging WHERE run IN (SELECT unnest(?)) AND {column} IS NOT NULL
            GROUP BY run, {column} HAVING count(*) > 1
            """,
            [spanning],
        ).fetch_df()
        if dup.empty:
            continue
        con.register("dup_keys", dup)
        first = con.execute(
            f"""
            SELECT s.run, s.loc, s.row, s.{column},
                   min(s.loc) OVER (PARTITION BY s.run, s.{column}) AS first_loc,
                   row_number() OVER (PARTITION BY s.run, s.{column} ORDER BY s.row) AS rn
            FROM staging s JOIN dup_keys d ON s.run = d.run AND s.{column} = d.{column}
            QUALIFY rn = 2 ORDER BY s.row LIMIT 1
            """
        ).fetchall()[0]
        con.unregister("dup_keys")
        run_index, loc, value, first_loc = int(first[0]), int(first[1]), first[3], int(first[4])
        info = staged.runs[run_index]
        more = staged.more(int(dup["extra"].sum()) - 1)
        if column == "example_id":
            message = (
                f"duplicate key ({info.record.describe()}, example_id={value!r}): the same key "
                f"is on {staged.where(first_loc)}; each key may appear once per file{more}"
            )
        else:
            message = (
                f"{what} {int(value)} occurs twice in this run ({info.record.describe()}); "
                f"each example has its own position in the source data (also on "
                f"{staged.where(first_loc)}){more}"
            )
        raise staged.error(message, loc, what)


# ---------------------------------------------------------------------------
# scores
# ---------------------------------------------------------------------------

#: key of a score (as in ``validate_scores``); seed and replicate may be NULL
SCORE_KEY = ("model", "task", "language", "dataset", "metric", "seed", "replicate")
_SCORE_VALUES = ("score", "stderr", "n", "metadata", "import_id")


@dataclass
class StagedScores(StagedFile):
    """A validated scores file; its rows in file order via :meth:`iter_frames`."""

    def iter_frames(self, batch_rows: int = 100_000) -> Iterator[pd.DataFrame]:
        """The validated rows in file order, ``batch_rows`` at a time.

        Each frame has ``validate_scores``'s columns; ``position`` is the row's
        number in the whole file (0-based), for :meth:`loc_of`.
        """
        cols = ", ".join([*SCORE_KEY, *_SCORE_VALUES])
        cursor = self._con.cursor()  # its own result: loc_of may query while this one is open
        try:
            reader = cursor.sql(f"SELECT {cols}, row AS position FROM staging ORDER BY row")
            for batch in reader.to_arrow_reader(batch_rows):
                frame = batch.to_pandas()
                for c in ("seed", "replicate", "n"):
                    frame[c] = frame[c].astype("Int64")
                if frame["import_id"].isna().all():
                    frame = frame.drop(columns="import_id")
                yield frame
        finally:
            cursor.close()

    def loc_of(self, row: int) -> int:
        """The location (CSV record, JSONL line, Parquet row) of file row ``row``."""
        found = self._con.execute("SELECT loc FROM staging WHERE row = ?", [row]).fetchall()
        return int(found[0][0])


def stage_scores(
    path: str | Path,
    *,
    allow_unknown_metrics: bool = False,
    keep_import_id: bool = False,
    percent: bool = False,
    chunk_rows: int = CHUNK_ROWS,
    work_dir: str | Path | None = None,
) -> StagedScores:
    """Validate a tidy scores file in chunks into a staging table (see the module doc).

    The options are those of :func:`glotbench.core.validate.validate_scores`;
    ``work_dir`` as in :func:`stage_examples`.
    """
    with _open_staging(
        work_dir,
        "CREATE TABLE staging (model VARCHAR, task VARCHAR, language VARCHAR, "
        "dataset VARCHAR, metric VARCHAR, seed BIGINT, replicate BIGINT, score DOUBLE, "
        "stderr DOUBLE, n BIGINT, metadata VARCHAR, import_id VARCHAR, row BIGINT, loc BIGINT)",
    ) as (con, tmp):
        p = Path(path)
        all_columns: dict[str, None] = {}
        rows = chunks = 0
        meta: tuple[SourceKind, bool] | None = None
        for chunk in iter_tidy_chunks(p, chunk_rows):
            meta = (chunk.kind, chunk.gz)
            data = validate_scores(
                chunk,
                allow_unknown_metrics=allow_unknown_metrics,
                keep_import_id=keep_import_id,
                percent=percent,
            )
            for c in chunk.columns:
                all_columns.setdefault(c, None)
            _append_scores(con, data.frame, rows, chunk.record_index)
            rows += len(chunk)
            chunks += 1
            del data
        assert meta is not None  # iter_tidy_chunks raises for a file without records
        staged = StagedScores(
            path=str(p),
            kind=meta[0],
            gz=meta[1],
            columns=list(all_columns),
            rows=rows,
            ignored_columns=[],
            _con=con,
            _dir=tmp,
        )
        if chunks > 1:
            _check_score_keys(staged)
        return staged


def _append_scores(con: Any, frame: pd.DataFrame, first_row: int, locs: np.ndarray) -> None:
    import pyarrow as pa

    n = len(frame)
    pos = frame["position"].to_numpy(dtype=np.int64)

    def ints(col: str) -> pa.Array:
        values = frame[col].astype("Int64")
        return pa.array(values.to_numpy(dtype=np.int64, na_value=0), mask=values.isna().to_numpy())

    def texts(col: str) -> pa.Array:
        if col not in frame:
            return pa.nulls(n, type=pa.string())
        return pa.array(frame[col].tolist(), type=pa.string())

    staged = pa.table(  # noqa: F841 - read by DuckDB's replacement scan
        {
            **{c: texts(c) for c in ("model", "task", "language", "dataset", "metric")},
            "seed": ints("seed"),
            "replicate": ints("replicate"),
            "score": pa.array(frame["score"].to_numpy(dtype=np.float64)),
            "stderr": pa.array(frame["stderr"].to_numpy(dtype=np.float64), from_pandas=True),
            "n": ints("n"),
            "metadata": texts("metadata"),
            "import_id": texts("import_id"),
            "row": pa.array(first_row + pos),
            "loc": pa.array(locs[pos].astype(np.int64)),
        }
    )
    con.execute("INSERT INTO staging SELECT * FROM staged")


def _check_score_keys(staged: StagedScores) -> None:
    """Each key once per file, across chunks (within a chunk ``validate_scores`` checked it)."""
    con = staged._con
    key = ", ".join(SCORE_KEY)
    dup = con.sql(
        f"SELECT {key}, count(*) - 1 AS extra FROM staging GROUP BY {key} HAVING count(*) > 1"
    ).to_arrow_table()
    if dup.num_rows == 0:
        return
    con.register("dup_keys", dup)
    try:
        join = " AND ".join(f"s.{c} IS NOT DISTINCT FROM d.{c}" for c in SCORE_KEY)
        row = con.execute(
            f"""
            SELECT s.loc, min(s.loc) OVER (PARTITION BY {", ".join("s." + c for c in SCORE_KEY)})
                   AS first_loc,
                   row_number() OVER (PARTITION BY {", ".join("s." + c for c in SCORE_KEY)}
                                      ORDER BY s.row) AS rn,
                   {", ".join("s." + c for c in SCORE_KEY)}, s.row
            FROM staging s JOIN dup_keys d ON {join}
            QUALIFY rn = 2 ORDER BY s.row LIMIT 1
            """
        ).fetchall()[0]
    finally:
        con.unregister("dup_keys")
    loc, first_loc = int(row[0]), int(row[1])
    values = dict(zip(SCORE_KEY, row[3:], strict=False))
    parts = [f"{k}={values[k]!r}" for k in SCORE_KEY[:5]]
    parts += [f"{k}={int(values[k])}" for k in ("seed", "replicate") if values[k] is not None]
    extra = sum(int(e) for e in dup.column("extra").to_pylist()) - 1
    raise staged.error(
        f"duplicate key ({', '.join(parts)}): the same key is on {staged.where(first_loc)}; "
        f"each key may appear once per file{staged.more(extra)}",
        loc,
        None,
    )


def check_staged_scores(store: Any, staged: StagedScores, batch_rows: int = 100_000) -> bool:
    """Compare staged scores with the store, batch by batch; write nothing.

    Raises :class:`ScoreConflictError` (``position``: the file row) for a key
    stored with another value. Returns whether the store held any score (if
    not, :func:`add_staged_scores` needs no lookups).
    """
    if not store.has_scores():
        return False
    for frame in staged.iter_frames(batch_rows):
        store.check_score_batch(frame)
    return True


def add_staged_scores(
    store: Any,
    staged: StagedScores,
    import_id: str,
    *,
    check: bool = True,
    batch_rows: int = 100_000,
) -> int:
    """Add staged scores in batches, one transaction each; rows stored alike are skipped."""
    added = 0
    for frame in staged.iter_frames(batch_rows):
        added += store.add_score_batch(frame, import_id, check=check)
    return added
