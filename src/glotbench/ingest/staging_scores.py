"""Validate a tidy scores file chunk by chunk into a staging table.

Each chunk goes through ``validate_scores`` (every per-record check,
duplicate keys within the chunk); its validated rows (with the file-wide row
number and the record's location) are appended to a staging table; then keys
repeated across chunks are found with SQL (``GROUP BY … HAVING``).
:meth:`StagedScores.iter_frames` reads the rows back in file order, in frames
of a bounded size, for ``store.scores.add_batch``.

The staging file and its clean-up are :mod:`glotbench.ingest.staging`'s.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from glotbench.ingest.chunked import CHUNK_ROWS, iter_tidy_chunks
from glotbench.ingest.readers import SourceKind
from glotbench.ingest.score_validation import validate_scores
from glotbench.ingest.staging import StagedFile, open_staging

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

    The options are those of :func:`glotbench.ingest.score_validation.validate_scores`;
    ``work_dir`` as in :func:`glotbench.ingest.staging_examples.stage_examples`.
    """
    with open_staging(
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
    if not store.scores.has_any():
        return False
    for frame in staged.iter_frames(batch_rows):
        store.scores.check_batch(frame)
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
        added += store.scores.add_batch(frame, import_id, check=check)
    return added
