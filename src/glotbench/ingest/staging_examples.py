"""Validate a per-example tidy file chunk by chunk into a staging table.

1. **validate in chunks** — each chunk of records
   (:func:`glotbench.ingest.chunked.iter_tidy_chunks`) goes through
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

The staging file and its clean-up are :mod:`glotbench.ingest.staging`'s.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from glotbench.ingest.chunked import CHUNK_ROWS, iter_tidy_chunks
from glotbench.ingest.example_validation import ValidatedRun, validate_examples
from glotbench.ingest.readers import SourceKind, TidyTable
from glotbench.ingest.staging import (
    StagedFile,
    StagedRun,
    group_runs,
    ids_and_stats,
    open_staging,
    stats_list,
)


@dataclass
class StagedExamples(StagedFile):
    """A validated examples file: its runs in the order of their first records."""

    runs: list[StagedRun] = field(default_factory=list)

    # -- reading runs back ----------------------------------------------------
    def iter_runs(
        self, indices: Sequence[int] | None = None, batch_rows: int = 100_000
    ) -> Iterator[ValidatedRun]:
        """Whole runs (``indices``: only these) in file order, each as a ValidatedRun."""
        wanted = list(range(len(self.runs))) if indices is None else sorted(set(indices))
        if not wanted:
            return
        for block in _run_blocks(wanted, self.runs, READ_ROWS):
            # runs are numbered in the order of their first records, so a block of
            # consecutive numbers sits in few row groups: each query reads and sorts a
            # block (DuckDB's sort of a whole 50M-row staging table within the staging
            # memory limit failed: "Out of Memory Error")
            query = (
                "SELECT run, row, example_id, stats, source_position FROM staging "
                "WHERE run BETWEEN ? AND ?"
            )
            params: list[Any] = [block[0], block[-1]]
            if len(block) < block[-1] - block[0] + 1:
                query += " AND run IN (SELECT unnest(?))"
                params.append(block)
            query += " ORDER BY run, row"
            reader = self._con.sql(query, params=params).to_arrow_reader(batch_rows)
            yield from self._runs_of(reader)

    def _runs_of(self, reader: Any) -> Iterator[ValidatedRun]:
        """The ValidatedRuns of a reader of staging rows ordered by (run, row)."""
        for index, table in group_runs(reader):
            info = self.runs[index]
            ids, stats = ids_and_stats(table, len(info.record.stat_names))
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


#: staging rows read back (and sorted) per query: whole runs, at least one
READ_ROWS = 250_000


def _run_blocks(
    wanted: Sequence[int], runs: Sequence[StagedRun], limit: int
) -> Iterator[list[int]]:
    """``wanted`` (sorted run numbers) in blocks of whole runs of at most ``limit`` rows."""
    block: list[int] = []
    rows = 0
    for index in wanted:
        size = int(runs[index].record.n_examples or 0)
        if block and rows + size > limit:
            yield block
            block, rows = [], 0
        block.append(index)
        rows += size
    if block:
        yield block


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
    with open_staging(
        work_dir,
        "CREATE TABLE staging (run INTEGER, row BIGINT, loc BIGINT, example_id VARCHAR, "
        "stats DOUBLE[], source_position BIGINT)",
    ) as (con, tmp):
        return _stage(con, tmp, Path(path), labels, chunk_rows)


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
            stats = stats_list(run.stats)
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
