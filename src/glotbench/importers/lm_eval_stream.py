"""Large lm-evaluation-harness samples files streamed to the spool, chunk by chunk.

Used by :func:`glotbench.importers.lm_eval.read_lm_eval` for samples files larger
than :data:`glotbench.importers.lm_eval_samples.SAMPLES_BATCH_BYTES`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from glotbench.importers.common import PendingRun, check_runs
from glotbench.importers.lm_eval_results import (
    MEAN_AGGREGATIONS,
    MEAN_METRICS,
    LmEvalRun,
    _aggregations,
    _record_for,
)
from glotbench.importers.lm_eval_samples import _columnar_sql, _filter_codes, _line_count
from glotbench.importers.task_languages import TaskLanguageMap
from glotbench.ingest.spool import RunSpool, RunSpoolWriter
from glotbench.store.schema import RunRecord

#: samples per chunk when a samples file is streamed to the spool (:func:`_stream_samples`)
SAMPLES_CHUNK_ROWS = 131_072


@dataclass
class _StreamedColumn:
    """One (metric, filter) of a streamed samples file: its record and its spooled rows."""

    metric: str
    filt: str
    first_line: int
    record: RunRecord
    #: None when the metric's aggregation is not a mean (only its score is imported)
    writer: RunSpoolWriter | None
    totals: np.ndarray = field(default_factory=lambda: np.zeros(2))
    binary: bool = True


def _stream_samples(
    con: duckdb.DuckDBPyConnection,
    item: tuple[LmEvalRun, str, int | None, str, Path],
    names: list[str],
    spool: RunSpool,
    chunk_rows: int,
    mapping: TaskLanguageMap,
) -> list[_StreamedColumn] | None:
    """A samples file read by DuckDB ``chunk_rows`` samples at a time, each chunk to the spool.

    The checks of :func:`_columns_of`, chunk by chunk: a chunk that fails one,
    or a ``doc_id`` repeated for a filter across chunks (``GROUP BY … HAVING
    count(*) > 1`` on a DuckDB file in the spool), returns None and the file
    goes to the strict reader. Each importable column's rows are checked
    (:func:`check_runs`, with their lines) and appended to its spool file as
    they arrive, with their column sums; memory holds one chunk.
    """
    path = item[4]
    n_lines, ends_with_newline = _line_count(path)
    if not ends_with_newline or n_lines == 0:
        return None
    sql, metrics_json = _columnar_sql(names)
    columns: dict[tuple[str, str], _StreamedColumn] = {}
    ids_con = spool.connect(
        f"ids-{path.stem}-{len(spool)}", "CREATE TABLE ids (f VARCHAR, d VARCHAR)"
    )
    offset = 0
    try:
        try:
            reader = con.sql(sql, params=[[str(path)], metrics_json]).to_arrow_reader(chunk_rows)
            batches = iter(reader)
        except duckdb.Error:
            return None
        while True:
            try:
                batch = next(batches)
            except StopIteration:
                break
            except duckdb.Error:
                return None
            if not _stream_chunk(batch, item, names, columns, ids_con, offset, spool, mapping):
                return None
            offset += batch.num_rows
            del batch
        if offset != n_lines:  # blank lines: rows are not lines
            return None
        repeated = ids_con.execute(
            "SELECT f, d FROM ids GROUP BY f, d HAVING count(*) > 1 LIMIT 1"
        ).fetchall()
        if repeated:  # the strict reader names both lines
            return None
        return list(columns.values())
    finally:
        for col in columns.values():
            if col.writer is not None:
                col.writer.close()
        ids_con.close()


def _stream_chunk(
    batch: Any,
    item: tuple[LmEvalRun, str, int | None, str, Path],
    names: list[str],
    columns: dict[tuple[str, str], _StreamedColumn],
    ids_con: duckdb.DuckDBPyConnection,
    offset: int,
    spool: RunSpool,
    mapping: TaskLanguageMap,
) -> bool:
    """One chunk of :func:`_stream_samples` checked and appended to its columns' spool files
    (False: a check failed, the file goes to the strict reader)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    run, task, path = item[0], item[3], item[4]
    aggregations = _aggregations(run.data, task)
    table = pa.Table.from_batches([batch])
    doc_ids = table.column("doc_id")
    checks = ["id_ok", "filter_ok", "same_metrics", *(f"ok{i}" for i in range(len(names)))]
    if (
        not all(pc.all(table.column(c)).as_py() for c in checks)
        or pc.any(pc.equal(doc_ids, "")).as_py()
    ):
        return False
    filt, encoded = _filter_codes(table)
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    ids_con.register("chunk_ids", pa.table({"f": filt, "d": doc_ids}))
    ids_con.execute("INSERT INTO ids SELECT f, d FROM chunk_ids")
    ids_con.unregister("chunk_ids")
    for code, filt_name in enumerate(encoded.dictionary.to_pylist()):
        rows = np.flatnonzero(codes == code)
        if rows.size == 0:
            continue
        chunk_ids = doc_ids.combine_chunks().take(pa.array(rows))
        for i, name in enumerate(names):
            values = table.column(f"v{i}").to_numpy(zero_copy_only=False)[rows]
            if not np.isfinite(values).all():
                return False
            key = (name, str(filt_name))
            col = columns.get(key)
            if col is None:
                col = columns[key] = _new_streamed_column(
                    item,
                    name,
                    str(filt_name),
                    offset + int(rows[0]) + 1,
                    spool,
                    aggregations.get(name) in MEAN_AGGREGATIONS,
                    mapping,
                )
            if col.writer is None:
                continue
            col.binary = col.binary and bool(np.isin(values, (0.0, 1.0)).all())
            if name not in MEAN_METRICS and not col.binary:
                continue  # not importable (noted by the caller): nothing to check
            stats = np.column_stack([values, np.ones_like(values)])
            check_runs(
                [
                    PendingRun(
                        record=col.record,
                        example_ids=np.asarray(chunk_ids.to_pylist(), dtype=object),
                        stats=stats,
                        path=str(path),
                        line=col.first_line,
                        field="doc_id",
                        lines=offset + rows + 1,
                    )
                ]
            )
            col.writer.append(chunk_ids, stats)
            col.totals = col.totals + stats.sum(axis=0)
    return True


def _new_streamed_column(
    item: tuple[LmEvalRun, str, int | None, str, Path],
    metric: str,
    filt: str,
    first_line: int,
    spool: RunSpool,
    importable: bool,
    mapping: TaskLanguageMap,
) -> _StreamedColumn:
    """A streamed column's record (names checked) and, if its aggregation is a mean, its writer."""
    record = _record_for(item, metric, filt, "accuracy", {}, ("value", "count"), mapping)
    writer = spool.open_run(2) if importable else None
    return _StreamedColumn(metric, filt, first_line, record, writer)


def _streamed_run(
    item: tuple[LmEvalRun, str, int | None, str, Path],
    col: _StreamedColumn,
    spool: RunSpool,
    notes: list[str],
) -> tuple[PendingRun, tuple[PendingRun, str, str, str]] | None:
    """A streamed column as a spilled run (None: not importable, noted as by
    :func:`_run_of_column`)."""
    run, task, sample_path = item[0], item[3], item[4]
    aggregation = _aggregations(run.data, task).get(col.metric)
    if col.writer is None or (col.metric not in MEAN_METRICS and not col.binary):
        notes.append(
            f"{sample_path.name}: metric {col.metric!r} (aggregation "
            f"{aggregation!r}) has no per-example statistics in glotbench; "
            "only its aggregate score was imported"
        )
        return None
    pending = PendingRun(
        record=col.record,
        example_ids=np.empty(0, dtype=object),
        stats=np.empty((0, 2), dtype=np.float64),
        path=str(sample_path),
        line=col.first_line,
        field="doc_id",
        spool=spool,
        spool_index=col.writer.index,
        n_examples=col.writer.rows,
        totals=col.totals,
    )
    return pending, (pending, run.results_path.name, task, f"{col.metric},{col.filt}")
