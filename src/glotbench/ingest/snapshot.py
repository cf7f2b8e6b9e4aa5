"""Merge a Parquet snapshot of a store (``glotbench export``) into a store.

A snapshot is a directory holding ``runs.parquet``, ``examples.parquet``,
``scores.parquet``, ``imports.parquet`` and ``meta.parquet`` (any subset, but
runs and examples together), or files ``STEM_runs.parquet`` ... next to a
name ``STEM.parquet``.

Everything is checked before anything is written: the snapshot's schema
version, every run's id against its key, example counts, statistic lengths
and finiteness, every run's ``stats_sha256`` recomputed from its example rows
(streamed, two passes; :func:`_check_digests`), scores as in a scores import,
and conflicts with what the store already holds. Then the snapshot's
``imports`` rows and this import's record are written in one transaction,
scores in batches and runs in transactions of whole runs; repeating an
interrupted import completes it.

Memory does not grow with the snapshot: the examples table is checked by
DuckDB queries over the Parquet file (memory-limited, spilling to a temporary
folder next to the store), the scores table is validated in chunks through a
staging table (:func:`glotbench.ingest.staging_scores.stage_scores`) and added in
batches, and runs are copied file-to-store by DuckDB in groups of whole runs.
Only the runs table (one row per run) is read whole.
"""

from __future__ import annotations

import functools
import hashlib
import json
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from glotbench.errors import InputError, StoreError
from glotbench.ingest.chunked import CHUNK_ROWS
from glotbench.ingest.readers import RowInputError, file_sha256
from glotbench.ingest.staging import STAGING_MEMORY, staging_dir
from glotbench.ingest.staging_scores import (
    StagedScores,
    add_staged_scores,
    check_staged_scores,
    stage_scores,
)
from glotbench.store.layout import (
    _IMPORT_COLUMNS,
    _RUN_COLUMNS,
    EXPORT_TABLES,
    _first,
    new_import_id,
    run_id_of_row,
)
from glotbench.store.results import ImportResult, ScoreConflictError
from glotbench.store.schema import (
    RUN_KEY_COLUMNS,
    SCHEMA_VERSION,
    ImportRecord,
    StatsDigest,
)
from glotbench.store.sql import drop_partial_runs

if TYPE_CHECKING:
    from glotbench.store.store import Store

#: examples per write transaction when merging runs
_CHUNK_EXAMPLES = 500_000


def snapshot_files(path: Path) -> dict[str, Path]:
    """The snapshot's table files that exist, by table name."""
    if path.is_dir():
        candidates = {t: path / f"{t}.parquet" for t in EXPORT_TABLES}
    else:
        name = path.name
        if not name.lower().endswith(".parquet"):
            raise InputError(
                "expected a snapshot directory or a name ending in .parquet whose siblings "
                "STEM_runs.parquet, STEM_examples.parquet, ... exist "
                "(glotbench export writes them)",
                path=str(path),
            )
        stem = name[: -len(".parquet")]
        candidates = {t: path.with_name(f"{stem}_{t}.parquet") for t in EXPORT_TABLES}
    found = {t: p for t, p in candidates.items() if p.is_file()}
    if not found:
        expected = ", ".join(str(p) for p in candidates.values())
        raise InputError(f"no snapshot files found; expected some of: {expected}", path=str(path))
    if ("runs" in found) != ("examples" in found):
        have, lack = ("runs", "examples") if "runs" in found else ("examples", "runs")
        raise InputError(
            f"the snapshot has {found[have].name} but not {candidates[lack].name}; "
            "runs and their example statistics travel together",
            path=str(path),
        )
    return found


def _parquet_columns(path: Path) -> list[str]:
    try:
        return list(pq.read_schema(path).names)
    except Exception as exc:  # noqa: BLE001 - any read failure is a bad input file
        raise InputError(f"not a readable Parquet file: {exc}", path=str(path)) from None


def _require(path: Path, columns: list[str], required: tuple[str, ...]) -> None:
    for col in required:
        if col not in columns:
            raise InputError(
                f"missing column {col!r}; is this a glotbench snapshot?", path=str(path), field=col
            )


def _check_meta(path: Path) -> None:
    _require(path, _parquet_columns(path), ("key", "value"))
    meta = dict(pq.read_table(path).to_pydict().items())
    pairs = dict(zip(meta["key"], meta["value"], strict=True))
    version = pairs.get("schema_version")
    try:
        v = int(version) if version is not None else None
    except ValueError:
        v = None
    if v is None:
        raise InputError("no valid schema_version in the snapshot's meta table", path=str(path))
    if v > SCHEMA_VERSION:
        raise StoreError(
            f"the snapshot {path} has schema version {v}, newer than this glotbench reads "
            f"({SCHEMA_VERSION}); upgrade glotbench"
        )


def _validate_runs(
    runs_path: Path, examples_path: Path, work_dir: Path | None = None
) -> pd.DataFrame:
    """The snapshot's runs, checked: their columns, keys, ids and JSON fields, and each run's
    example statistics (count, ids, positions, vector lengths, finiteness, source positions)."""
    _require(runs_path, _parquet_columns(runs_path), _RUN_COLUMNS)
    _require(
        examples_path,
        _parquet_columns(examples_path),
        ("run_id", "position", "example_id", "stats"),
    )
    runs = pq.read_table(runs_path, columns=list(_RUN_COLUMNS)).to_pandas()
    err = functools.partial(_row_error, str(runs_path))
    _check_run_rows(runs, err)
    has_source = "source_position" in _parquet_columns(examples_path)
    checks = _example_checks(runs_path, examples_path, work_dir, has_source)
    _check_examples_of_runs(runs, checks, examples_path, has_source, err)
    return runs


def _row_error(where: str, msg: str, i: int, fld: str | None) -> RowInputError:
    """The error about row ``i`` (0-based) of the runs file ``where``."""
    return RowInputError(msg, path=where, row=i + 1, field=fld)


def _check_run_rows(runs: pd.DataFrame, err: Callable[[str, int, str | None], Exception]) -> None:
    """Every run's key fields are given, its run id is unique and matches its key, and its
    metric configuration and model metadata are JSON objects."""
    for col in ("run_id", "model", "dataset", "task", "language", "metric", "stats_sha256"):
        bad = runs[col].isna() | (runs[col].astype(str).str.strip() == "")
        if bad.any():
            raise err(f"{col} is empty", int(np.flatnonzero(bad.to_numpy())[0]), col)
    dup = runs["run_id"].duplicated()
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        raise err(f"run id {runs['run_id'].iloc[i]!r} occurs twice", i, "run_id")
    for i, row in enumerate(runs[list(RUN_KEY_COLUMNS) + ["run_id"]].to_dict("records")):
        row["config_hash"] = row["config_hash"] if isinstance(row["config_hash"], str) else ""
        if run_id_of_row(row) != row["run_id"]:
            raise err(
                f"run id {row['run_id']!r} does not match the run's key (expected "
                f"{run_id_of_row(row)!r}); the snapshot was edited or is damaged",
                i,
                "run_id",
            )
    for col in ("metric_config", "model_metadata"):
        for i, text in enumerate(runs[col]):
            try:
                ok = isinstance(json.loads(text), dict)
            except (TypeError, json.JSONDecodeError):
                ok = False
            if not ok:
                raise err(f"{col} must be a JSON object, got {text!r}", i, col)


def _example_checks(
    runs_path: Path, examples_path: Path, work_dir: Path | None, has_source: bool
) -> pd.DataFrame:
    """Per run: counts, distinct ids and positions, position range, vector lengths,
    finiteness, empty ids (and source-position counts), from one query over the examples
    file in bounded memory; example statistics of a run not in the runs file are an error."""
    source_checks = (
        ", count(source_position) AS n_src, count(DISTINCT source_position) AS n_src_distinct, "
        "coalesce(min(source_position), 0) AS src_min"
        if has_source
        else ""
    )
    spill = Path(tempfile.mkdtemp(prefix=".glotbench-spill-", dir=work_dir))
    con = duckdb.connect()
    try:
        # a bounded memory, spilling to disk: the checks' aggregates grow with the examples
        con.execute(f"SET memory_limit = '{STAGING_MEMORY}'")
        con.execute(f"SET temp_directory = '{spill}'")
        con.execute("SET preserve_insertion_order = false")
        orphan = _first(
            con.execute(
                "SELECT run_id FROM read_parquet(?) "
                "EXCEPT SELECT run_id FROM read_parquet(?) LIMIT 1",
                [str(examples_path), str(runs_path)],
            ).fetchall()
        )
        if orphan:
            raise InputError(
                f"example statistics of run {orphan[0]!r}, which is not in {runs_path.name}",
                path=str(examples_path),
                field="run_id",
            )
        checks = con.sql(
            f"""
            SELECT run_id, count(*) AS n, count(DISTINCT example_id) AS n_ids,
                   count(DISTINCT position) AS n_pos, min(position) AS pmin,
                   max(position) AS pmax, min(len(stats)) AS kmin, max(len(stats)) AS kmax,
                   bool_and(coalesce(list_bool_and(list_transform(stats, lambda x: isfinite(x))),
                                     false)) AS finite,
                   bool_or(example_id IS NULL OR trim(example_id) = '') AS empty_id
                   {source_checks}
            FROM read_parquet(?) GROUP BY run_id
            """,
            params=[str(examples_path)],
        ).df()
    except duckdb.Error as exc:
        raise InputError(f"cannot read the snapshot: {exc}", path=str(examples_path)) from None
    finally:
        con.close()
        shutil.rmtree(spill, ignore_errors=True)
    return checks


def _check_examples_of_runs(
    runs: pd.DataFrame,
    checks: pd.DataFrame,
    examples_path: Path,
    has_source: bool,
    err: Callable[[str, int, str | None], Exception],
) -> None:
    """Each run's example statistics agree with its record (:func:`_example_checks`)."""
    checks = checks.set_index("run_id")
    for i, row in enumerate(runs.to_dict("records")):
        rid = row["run_id"]
        n = int(row["n_examples"])
        k = len(row["stat_names"])
        if rid not in checks.index:
            raise err(f"run {rid} has no example statistics in {examples_path.name}", i, "run_id")
        c = checks.loc[rid]
        problem = None
        if int(c["n"]) != n:
            problem = f"n_examples is {n} but {examples_path.name} holds {int(c['n'])} examples"
        elif int(c["n_ids"]) != n:
            problem = "its example ids are not unique"
        elif int(c["n_pos"]) != n or int(c["pmin"]) != 0 or int(c["pmax"]) != n - 1:
            problem = "its example positions are not 0 .. n_examples-1"
        elif int(c["kmin"]) != k or int(c["kmax"]) != k:
            problem = f"its statistics vectors do not all have {k} values (one per stat name)"
        elif not bool(c["finite"]):
            problem = "some of its statistics are missing or not finite"
        elif bool(c["empty_id"]):
            problem = "some of its example ids are empty"
        elif has_source and int(c["n_src"]) not in (0, n):
            problem = "source_position is given for some of its examples but not all"
        elif has_source and (
            int(c["n_src_distinct"]) != int(c["n_src"]) or float(c["src_min"]) < 0
        ):
            problem = "its source positions are not unique integers ≥ 0"
        if problem:
            raise err(f"run {rid}: {problem}", i, "n_examples")


#: example rows per record batch read when the runs' digests are recomputed
_DIGEST_BATCH_ROWS = 65_536


def _segments(column: pa.ChunkedArray | pa.Array) -> list[tuple[str, int, int]]:
    """(run id, start, stop) of the stretches of equal run ids in a batch's column."""
    if pa.types.is_dictionary(column.type) or column.type != pa.string():
        column = column.cast(pa.string())
    encoded = pc.run_end_encode(column)
    ends = encoded.run_ends.to_numpy().tolist()
    starts = [0, *ends[:-1]]
    return list(zip(encoded.values.to_pylist(), starts, ends, strict=True))


def _feed_ids(examples_path: Path, digests: dict[str, StatsDigest]) -> bool:
    """Feed every run's example ids to its digest, file order; False if out of position order.

    A run's rows may be spread over the file, but each run's positions must
    come in order 0, 1, ... (as ``glotbench export`` writes them); otherwise
    nothing can be concluded and False is returned.
    """
    expected: dict[str, int] = {}
    columns = ["run_id", "position", "example_id"]
    batches = pq.ParquetFile(examples_path).iter_batches(_DIGEST_BATCH_ROWS, columns=columns)
    for batch in batches:
        positions = batch.column(1).to_numpy(zero_copy_only=False)
        ids = batch.column(2)
        if ids.type != pa.string():
            ids = ids.cast(pa.string())
        for run_id, a, b in _segments(batch.column(0)):
            first = expected.get(run_id, 0)
            if not np.array_equal(positions[a:b], np.arange(first, first + b - a)):
                return False
            expected[run_id] = first + b - a
            one_list = pa.ListArray.from_arrays(pa.array([0, b - a], pa.int32()), ids[a:b])
            joined = pc.binary_join(one_list, "\x1f")[0]
            digests[run_id].update_joined_ids(joined.as_buffer().to_pybytes(), b - a)
    return True


def _feed_stats(examples_path: Path, digests: dict[str, StatsDigest]) -> None:
    """Feed every run's statistics to its digest, in file order (after :func:`_feed_ids`)."""
    columns = ["run_id", "stats"]
    for batch in pq.ParquetFile(examples_path).iter_batches(_DIGEST_BATCH_ROWS, columns=columns):
        stats = batch.column(1)
        for run_id, a, b in _segments(batch.column(0)):
            values = stats[a:b].flatten().to_numpy(zero_copy_only=False)
            digests[run_id].update_stats(np.asarray(values, dtype=np.float64))


def _recomputed_digests(
    runs: pd.DataFrame, examples_path: Path, work_dir: Path | None
) -> dict[str, str]:
    """Each run's ``stats_sha256`` recomputed from the examples file (two streamed passes).

    The digest hashes all of a run's ids before its statistics
    (:class:`~glotbench.store.schema.StatsDigest`), so the file is read twice —
    ids, then statistics — a record batch at a time, with one running hash a
    run. A file whose runs' positions are not in order is first copied sorted
    by (run, position) into a temporary file (DuckDB, memory-limited, spilling).
    """

    def fresh() -> dict[str, StatsDigest]:
        return {
            rid: StatsDigest(tuple(names))
            for rid, names in zip(runs["run_id"], runs["stat_names"], strict=True)
        }

    digests = fresh()
    if _feed_ids(examples_path, digests):
        _feed_stats(examples_path, digests)
        return {rid: d.hexdigest() for rid, d in digests.items()}
    spill = Path(tempfile.mkdtemp(prefix=".glotbench-spill-", dir=work_dir))
    try:
        ordered = spill / "examples-sorted.parquet"
        con = duckdb.connect()
        try:
            con.execute(f"SET memory_limit = '{STAGING_MEMORY}'")
            con.execute(f"SET temp_directory = '{spill / 'tmp'}'")
            con.execute(
                "COPY (SELECT run_id, position, example_id, stats FROM read_parquet(?) "
                f"ORDER BY run_id, position) TO '{ordered}' (FORMAT parquet)",
                [str(examples_path)],
            )
        finally:
            con.close()
        digests = fresh()
        if not _feed_ids(ordered, digests):  # pragma: no cover - sorted by construction
            raise InputError(
                "cannot order the example rows by run and position", path=str(examples_path)
            )
        _feed_stats(ordered, digests)
        return {rid: d.hexdigest() for rid, d in digests.items()}
    finally:
        shutil.rmtree(spill, ignore_errors=True)


def _check_digests(
    runs: pd.DataFrame, runs_path: Path, examples_path: Path, work_dir: Path | None
) -> None:
    """Refuse a run whose ``stats_sha256`` is not that of its rows in the examples file.

    The digest is what a store compares to decide that a run it holds is the
    same run (skipped) or a different one (refused): trusting an edited or
    damaged value would skip a run that differs, or store rows under a digest
    that does not describe them.
    """
    if runs.empty:
        return
    actual = _recomputed_digests(runs, examples_path, work_dir)
    for i, (rid, declared) in enumerate(zip(runs["run_id"], runs["stats_sha256"], strict=True)):
        if actual[rid] != declared:
            raise RowInputError(
                f"run {rid}: stats_sha256 is {declared!r} in {runs_path.name}, but its "
                f"example statistics in {examples_path.name} hash to {actual[rid]!r}; the "
                "snapshot was edited or is damaged (export it again from its store)",
                path=str(runs_path),
                row=i + 1,
                field="stats_sha256",
            )


@dataclass
class _Snapshot:
    """A snapshot being imported: its files, digest and what validation found."""

    path: Path
    files: dict[str, Path]
    sha: str
    started: float  # time.perf_counter() at the start of the import
    runs: pd.DataFrame = field(default_factory=pd.DataFrame)  # validated runs rows
    imports_path: Path | None = None
    scores: StagedScores | None = None  # validated scores, staged

    @property
    def rows(self) -> int:
        """Runs plus score rows: the ``rows`` of the import record."""
        return len(self.runs) + (self.scores.rows if self.scores is not None else 0)


def import_snapshot(store: Store, path: Path, *, chunk_rows: int = CHUNK_ROWS) -> ImportResult:
    """Merge the snapshot at ``path`` into ``store`` (see the module docstring).

    ``chunk_rows``: scores validated per chunk
    (:func:`glotbench.ingest.staging_scores.stage_scores`).
    """
    t0 = time.perf_counter()
    files = snapshot_files(path)
    h = hashlib.sha256()
    for table in sorted(files):
        h.update(f"{table}:{file_sha256(files[table])};".encode())
    snap = _Snapshot(path=path, files=files, sha=h.hexdigest(), started=t0)
    done = store.imports.find(snap.sha, "parquet", completed=True)
    if done is not None:
        return _already_imported(store, snap, done)

    # ---- validate everything -------------------------------------------
    work_dir = staging_dir(store.path)
    if "meta" in files:
        _check_meta(files["meta"])
    if "runs" in files:
        snap.runs = _validate_runs(files["runs"], files["examples"], work_dir)
        if not snap.runs.empty:  # the digests are recomputed, not trusted
            _check_digests(snap.runs, files["runs"], files["examples"], work_dir)
    snap.imports_path = files.get("imports")
    if snap.imports_path is not None:
        cols = _parquet_columns(snap.imports_path)
        _require(snap.imports_path, cols, _IMPORT_COLUMNS)
    try:
        if "scores" in files and pq.read_metadata(files["scores"]).num_rows:
            snap.scores = stage_scores(
                files["scores"],
                allow_unknown_metrics=True,
                keep_import_id=True,
                chunk_rows=chunk_rows,
                work_dir=work_dir,
            )
        # decide from the store's content and write under the writer lock: one writer
        with store.writing():
            return _write_snapshot(store, snap)
    finally:
        if snap.scores is not None:
            snap.scores.close()


def _already_imported(store: Store, snap: _Snapshot, done: ImportRecord) -> ImportResult:
    return ImportResult(
        kind="parquet",
        source=str(snap.path),
        store=str(store.path),
        status="skipped",
        sha256=snap.sha,
        import_id=done.import_id,
        message=f"this snapshot was already imported (import {done.import_id}); nothing to do",
        seconds=time.perf_counter() - snap.started,
    )


def _write_snapshot(store: Store, snap: _Snapshot) -> ImportResult:
    """Compare the validated snapshot with the store and write it (under ``store.writing``)."""
    done = store.imports.find(snap.sha, "parquet", completed=True)  # by another process meanwhile
    if done is not None:
        return _already_imported(store, snap, done)
    files, runs = snap.files, snap.runs
    has_source = "runs" in files and "source_position" in _parquet_columns(files["examples"])
    import_id, partial, new_run_ids, skipped_runs, scores_added, scores_skipped = (
        _check_and_write_scores(store, snap)
    )
    if new_run_ids:
        sizes = dict(zip(runs["run_id"], runs["n_examples"], strict=True))
        chunk: list[str] = []
        count = 0
        for rid in new_run_ids:
            chunk.append(rid)
            count += int(sizes[rid])
            if count >= _CHUNK_EXAMPLES:
                _insert_runs(store, files["runs"], files["examples"], chunk, has_source=has_source)
                chunk, count = [], 0
        if chunk:
            _insert_runs(store, files["runs"], files["examples"], chunk, has_source=has_source)
    store.imports.complete(import_id, len(new_run_ids) + scores_added)
    parts = [f"added {len(new_run_ids)} run(s) and {scores_added} score(s)"]
    if skipped_runs or scores_skipped:
        parts.append(f"skipped {skipped_runs} run(s) and {scores_skipped} score(s) already stored")
    return ImportResult(
        kind="parquet",
        source=str(snap.path),
        store=str(store.path),
        status="resumed" if partial else "imported",
        sha256=snap.sha,
        import_id=import_id,
        rows=snap.rows,
        runs_added=len(new_run_ids),
        runs_skipped=skipped_runs,
        scores_added=scores_added,
        scores_skipped=scores_skipped,
        message="; ".join(parts),
        seconds=time.perf_counter() - snap.started,
    )


def _check_and_write_scores(
    store: Store, snap: _Snapshot
) -> tuple[str, ImportRecord | None, list[str], int, int, int]:
    """Compare runs with the store; write imports, scores and the import record (one transaction).

    Returns (import id, the interrupted import resumed or None, run ids to
    write, runs skipped, scores added, scores skipped).
    """
    runs, scores = snap.runs, snap.scores
    new_run_ids: list[str] = []
    skipped_runs = 0
    if not runs.empty:
        stored = store.runs.stored(runs["run_id"])
        for i, row in enumerate(runs.to_dict("records")):
            existing = stored.get(row["run_id"])
            if existing is None:
                new_run_ids.append(row["run_id"])
            elif existing["stats_sha256"] != row["stats_sha256"]:
                raise RowInputError(
                    f"run {row['run_id']} is already stored with different statistics "
                    f"(from {existing['source']}); import into another store",
                    path=str(snap.files["runs"]),
                    row=i + 1,
                    field="stats_sha256",
                )
            else:
                skipped_runs += 1
    check = False
    if scores is not None:
        try:
            check = check_staged_scores(store, scores)  # writes nothing
        except ScoreConflictError as exc:
            raise scores.error(exc.reason, scores.loc_of(exc.position), exc.field) from None
    partial = store.imports.find(snap.sha, "parquet", completed=False)
    import_id = partial.import_id if partial else new_import_id()
    scores_added = scores_skipped = 0
    try:
        with store.transaction() as con:
            if snap.imports_path is not None:
                con.execute(
                    f"INSERT INTO imports ({', '.join(_IMPORT_COLUMNS)}) "
                    f"SELECT {', '.join(_IMPORT_COLUMNS)} FROM read_parquet(?) "
                    "WHERE import_id NOT IN (SELECT import_id FROM imports)",
                    [str(snap.imports_path)],
                )
            if partial is None:
                store.imports.insert(
                    ImportRecord(
                        import_id=import_id,
                        kind="parquet",
                        source=str(snap.path.resolve()),
                        sha256=snap.sha,
                        rows=snap.rows,
                    )
                )
        if scores is not None:  # in batches, one transaction each (checked above)
            scores_added = add_staged_scores(store, scores, import_id, check=check)
            scores_skipped = scores.rows - scores_added
    except ScoreConflictError as exc:  # a concurrent writer stored a conflicting value
        assert scores is not None
        raise scores.error(exc.reason, scores.loc_of(exc.position), exc.field) from None
    return import_id, partial, new_run_ids, skipped_runs, scores_added, scores_skipped


def _insert_runs(
    store: Store, runs_path: Path, examples_path: Path, run_ids: list[str], *, has_source: bool
) -> None:
    """Insert the runs ``run_ids`` of a snapshot and their examples in one transaction."""
    cols = ", ".join(_RUN_COLUMNS)
    casts = ", ".join(
        f"{c}::JSON AS {c}" if c in ("metric_config", "model_metadata") else c for c in _RUN_COLUMNS
    )
    with store.transaction() as con:
        drop_partial_runs(con, run_ids)  # rows of a killed chunked write of these runs
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
