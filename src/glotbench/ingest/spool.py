"""Validated runs held in Arrow files until they are written (:class:`RunSpool`).

For the importers that validate one run at a time; the spool's folder is a
staging folder (:mod:`glotbench.ingest.staging`), removed when closed or, after
a crash, by the next import.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

import numpy as np

from glotbench.ingest.staging import STAGING_MEMORY, new_staging_folder


class RunSpool:
    """Validated runs' example ids, statistics and lines, held in files until written.

    For importers that validate a run at a time (:mod:`glotbench.importers`):
    :meth:`add` moves a run's arrays to an Arrow IPC file in a staging folder
    (``.glotbench-staging-<pid>-…``, next to the store) and returns its
    number; :meth:`load` and :meth:`iter_runs` bring them back. An import then
    holds only the runs' records in memory, not their examples. Close it when
    done (or use it as a context manager); a killed process's spool is removed
    by the next import (:func:`glotbench.ingest.staging.remove_stale_staging`).
    """

    def __init__(self, work_dir: str | Path | None = None) -> None:
        self._dir = new_staging_folder(work_dir)
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

        The file is read a record batch at a time (plain reads, not a memory
        map, whose touched pages would stay resident until the file is closed:
        memory would grow with the run), so memory holds one batch;
        concatenated, the chunks are :meth:`load`'s arrays.
        """
        import pyarrow as pa
        import pyarrow.ipc as ipc

        k = self._widths[index]
        with pa.OSFile(str(self._path(index))) as source:
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
