"""Read a tidy file in chunks of records, each a :class:`TidyTable`.

The chunks of :func:`iter_tidy_chunks` locate their records in the *whole*
file: ``record_index`` holds the CSV record number, the JSONL line or the
0-based Parquet row, so ``chunk.error(message, position, field)`` names the
same line (or row) as the whole-file reader :func:`read_tidy` would. Memory
is bounded by the chunk size, not the file size:

* CSV: pandas' C parser with ``chunksize`` (values read as text, as in
  :func:`read_tidy`); the record lengths are checked first in one streaming
  pass of the :mod:`csv` module (pandas pads short records silently);
* JSONL: line by line; a chunk's columns are all keys seen so far in the file;
* Parquet: ``ParquetFile.iter_batches``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd

from glotbench.errors import InputError
from glotbench.ingest.readers import (
    TidyTable,
    _check_record_lengths,
    _check_utf8,
    _csv_shape_error,
    check_csv_frame,
    csv_chunk_table,
    csv_header,
    csv_read_options,
    detect_format,
    iter_jsonl_records,
    jsonl_table,
    parquet_table,
)

#: records per chunk (a chunk and its validation take roughly 50 MB for a typical examples file)
CHUNK_ROWS = 50_000


def iter_tidy_chunks(path: str | Path, chunk_rows: int = CHUNK_ROWS) -> Iterator[TidyTable]:
    """Yield the records of a tidy CSV / JSONL / Parquet file in chunks of ``chunk_rows``.

    Raises InputError (naming the file, and the line where known) for an
    unreadable file and for a file without data records.
    """
    if chunk_rows < 1:
        raise InputError("chunk_rows must be at least 1")
    p = Path(path)
    kind, gz = detect_format(p)
    if not p.exists():
        raise InputError("file not found", path=str(p))
    if not p.is_file():
        raise InputError("not a file", path=str(p))
    if kind == "csv":
        chunks = _csv_chunks(p, gz, chunk_rows)
    elif kind == "jsonl":
        chunks = _jsonl_chunks(p, gz, chunk_rows)
    else:
        chunks = _parquet_chunks(p, chunk_rows)
    empty = True
    for chunk in chunks:
        if len(chunk):
            empty = False
            yield chunk
    if empty:
        raise InputError("the file holds no data records", path=str(p))


def _csv_chunks(path: Path, gz: bool, chunk_rows: int) -> Iterator[TidyTable]:
    names = csv_header(path, gz)
    _check_record_lengths(path, gz, len(names), names)
    first = 1
    try:
        reader = pd.read_csv(path, **csv_read_options(gz, names), chunksize=chunk_rows)
        with reader:
            for frame in reader:
                check_csv_frame(path, gz, frame, names)
                n = len(frame)
                yield csv_chunk_table(path, gz, frame, names, first_record=first)
                first += n
    except UnicodeDecodeError:
        _check_utf8(path, gz)
        raise
    except pd.errors.ParserError as exc:
        raise _csv_shape_error(path, gz, len(names), str(exc)) from None
    except (OSError, EOFError) as exc:
        raise InputError(f"cannot read the file: {exc}", path=str(path)) from None


def _jsonl_chunks(path: Path, gz: bool, chunk_rows: int) -> Iterator[TidyTable]:
    columns: dict[str, None] = {}
    records: list[dict[str, object]] = []
    lines: list[int] = []
    for lineno, value in iter_jsonl_records(path, gz):
        records.append(value)
        lines.append(lineno)
        if len(records) >= chunk_rows:
            yield jsonl_table(path, gz, records, lines, columns)
            records, lines = [], []
    if records:
        yield jsonl_table(path, gz, records, lines, columns)


def _parquet_chunks(path: Path, chunk_rows: int) -> Iterator[TidyTable]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
        batches = pf.iter_batches(batch_size=chunk_rows)
        first = 0
        for batch in batches:
            yield parquet_table(path, batch, first_row=first)
            first += batch.num_rows
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(f"not a readable Parquet file: {exc}", path=str(path)) from None
