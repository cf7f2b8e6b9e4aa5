"""Parquet shards: one file per benchmark job, written by a worker, merged by one writer.

When several machines run jobs, only one process should write the DuckDB
store (DuckDB allows one writer at a time, and a store on a network file
system must not be opened by two machines). A worker therefore either returns
its statistics to the driver, or writes them as a **shard** into a folder
every machine can reach: one Parquet file per job, holding all its runs.

Format (``SHARD_FORMAT`` 1): one row per (run, example) with the columns
``run_index`` (int32, the run's index in the job), ``position`` (int32),
``example_id`` (string), ``stats`` (list<double>) and ``source_position``
(int64, nullable). The Parquet key-value metadata ``glotbench.shard`` holds
JSON: the format, the job label, the run records (``RunRecord`` fields, one
per run) and the run ids; ``glotbench.shard.extras`` the job's example
attributes and entity-unit statistics (:mod:`glotbench.store.attributes`)
as zstd-compressed JSON.

Atomicity: a shard is written to a hidden temporary file in the same folder
(``.NAME.parquet.<random>.tmp``), flushed to disk (``fsync``) and renamed to
``NAME.parquet`` (``os.replace``, atomic on POSIX file systems within one
folder). A reader lists only ``*.parquet`` files not starting with a dot, so
a half-written shard is never read; a file that is not a readable Parquet
shard (truncated, foreign) is reported and skipped, never merged.

Merging (:func:`merge_shards`) is idempotent and resumable without any
bookkeeping table: a shard whose run ids are all stored is skipped after
reading only its footer; the runs of the others go through
``store.runs.write_batches`` (one transaction per batch of whole runs,
stored runs skipped by one anti-join). A shard's attributes and unit
statistics are written *before* its runs (both are replaced on a re-write),
so the committed runs mark a shard as merged: a merge killed at any point
and run again ends with exactly the store an uninterrupted merge gives.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from glotbench.errors import InputError
from glotbench.store.schema import RunRecord

if TYPE_CHECKING:
    from glotbench.store.store import Store

SHARD_FORMAT = 1
SHARD_METADATA_KEY = b"glotbench.shard"
SHARD_EXTRAS_KEY = b"glotbench.shard.extras"
SHARD_SUFFIX = ".parquet"

#: one run of a job: (record, example ids, statistics, source positions or None)
ShardRun = tuple[RunRecord, Sequence[str], np.ndarray, Sequence[int] | None]


@dataclass
class ShardHeader:
    """What a shard's footer says: its job, run records and run ids (no statistics read)."""

    path: Path
    job: str
    run_ids: list[str]
    records: list[RunRecord]
    attributes: list[dict[str, Any]]
    unit_stats: dict[str, list[tuple[str, str, list[float]]]]


@dataclass
class ShardMerge:
    """What :func:`merge_shards` did."""

    folder: str
    shards: int = 0
    merged: int = 0
    already_merged: int = 0
    runs_written: int = 0
    runs_skipped: int = 0
    examples: int = 0
    batches: int = 0
    seconds: float = 0.0
    temporary: list[str] = field(default_factory=list)
    unreadable: list[dict[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "folder": self.folder,
            "shards": self.shards,
            "merged": self.merged,
            "already_merged": self.already_merged,
            "runs_written": self.runs_written,
            "runs_skipped": self.runs_skipped,
            "examples": self.examples,
            "batches": self.batches,
            "seconds": self.seconds,
            "temporary": list(self.temporary),
            "unreadable": list(self.unreadable),
        }


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


def shard_name(run_ids: Iterable[str], label: str = "") -> str:
    """The file name of a job's shard: a readable prefix and a hash of its run ids.

    The same job always gets the same name, so re-running it replaces its shard.
    """
    digest = hashlib.sha256("\n".join(sorted(run_ids)).encode()).hexdigest()[:20]
    prefix = re.sub(r"[^A-Za-z0-9_.-]+", "-", label).strip("-.")[:60]
    return f"{prefix + '_' if prefix else ''}{digest}{SHARD_SUFFIX}"


def write_shard(
    folder: str | Path,
    runs: Sequence[ShardRun],
    *,
    job: str = "",
    attributes: Sequence[Mapping[str, Any]] = (),
    unit_stats: Mapping[str, Sequence[tuple[str, str, Any]]] | None = None,
) -> Path:
    """Write one job's runs as a shard, atomically (temporary file, fsync, rename).

    Returns the shard's path. Nothing is validated beyond the shapes: the
    merge validates every run as ``store.runs.write`` does.
    """
    if not runs:
        raise InputError("a shard needs at least one run")
    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    run_index: list[np.ndarray] = []
    positions: list[np.ndarray] = []
    ids: list[str] = []
    stats: list[pa.Array] = []
    sources: list[pa.Array] = []
    for i, (record, example_ids, matrix, source) in enumerate(runs):
        m = np.asarray(matrix, dtype=np.float64)
        n = len(example_ids)
        if m.ndim != 2 or m.shape[0] != n:
            raise InputError(
                f"run ({record.describe()}): statistics of shape {m.shape} for {n} example ids"
            )
        run_index.append(np.full(n, i, dtype=np.int32))
        positions.append(np.arange(n, dtype=np.int32))
        ids.extend(str(e) for e in example_ids)
        flat = pa.array(m.reshape(-1))
        stats.append(
            pa.FixedSizeListArray.from_arrays(flat, m.shape[1]).cast(pa.list_(pa.float64()))
        )
        sources.append(
            pa.nulls(n, type=pa.int64())
            if source is None
            else pa.array(np.asarray(source, dtype=np.int64))
        )
    table = pa.table(
        {
            "run_index": pa.array(np.concatenate(run_index)),
            "position": pa.array(np.concatenate(positions)),
            "example_id": pa.array(ids, type=pa.string()),
            "stats": pa.concat_arrays(stats),
            "source_position": pa.concat_arrays(sources),
        }
    )
    records = [r for r, *_ in runs]
    header = {
        "format": SHARD_FORMAT,
        "job": job,
        "run_ids": [r.run_id for r in records],
        "runs": [r.model_dump(mode="json") for r in records],
    }
    extras = {
        "attributes": [dict(a) for a in attributes],
        "unit_stats": {
            run_id: [(str(e), str(u), np.asarray(s, dtype=np.float64).tolist()) for e, u, s in rows]
            for run_id, rows in (unit_stats or {}).items()
        },
    }
    # attributes and unit statistics repeat a lot (one row per example and attribute):
    # zstd-compressed JSON keeps the footer small
    raw = json.dumps(extras, ensure_ascii=False, default=_json_default).encode()
    header["extras_bytes"] = len(raw)
    meta = json.dumps(header, ensure_ascii=False, default=_json_default).encode()
    packed = pa.compress(raw, codec="zstd", asbytes=True)
    table = table.replace_schema_metadata({SHARD_METADATA_KEY: meta, SHARD_EXTRAS_KEY: packed})
    path = target / shard_name([r.run_id for r in records], job)
    tmp = target / f".{path.name}.{uuid.uuid4().hex[:12]}.tmp"
    try:
        with open(tmp, "wb") as handle:
            pq.write_table(table, handle, compression="zstd")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def list_shards(folder: str | Path) -> tuple[list[Path], list[Path]]:
    """(complete shards, temporary files) of a folder, each sorted by name.

    Temporary files (hidden, being written or left by a killed worker) are
    never read.
    """
    base = Path(folder)
    if not base.is_dir():
        raise InputError("the shard folder does not exist", path=str(base))
    shards, temporary = [], []
    for path in sorted(base.iterdir()):
        if path.name.startswith("."):
            if path.name.endswith(".tmp"):
                temporary.append(path)
            continue
        if path.name.endswith(SHARD_SUFFIX) and path.is_file():
            shards.append(path)
    return shards, temporary


def read_header(path: str | Path, *, extras: bool = True) -> ShardHeader:
    """A shard's footer metadata (cheap: the statistics are not read).

    ``extras=False`` skips decoding the attributes and unit statistics (enough
    to know the shard's runs).
    """
    path = Path(path)
    try:
        schema = pq.read_schema(path)
    except (OSError, pa.ArrowException) as exc:
        raise InputError(f"not a readable Parquet shard: {exc}", path=str(path)) from None
    raw = (schema.metadata or {}).get(SHARD_METADATA_KEY)
    if raw is None:
        raise InputError("a Parquet file without glotbench shard metadata", path=str(path))
    try:
        header = json.loads(raw)
        if header.get("format") != SHARD_FORMAT:
            raise InputError(
                f"shard format {header.get('format')!r}; this glotbench reads {SHARD_FORMAT}",
                path=str(path),
            )
        records = [RunRecord(**r) for r in header["runs"]]
        packed = (schema.metadata or {}).get(SHARD_EXTRAS_KEY)
        decoded: dict[str, Any] = (
            json.loads(
                pa.decompress(
                    packed, decompressed_size=header["extras_bytes"], codec="zstd", asbytes=True
                )
            )
            if packed is not None and extras
            else {}
        )
    except InputError:
        raise
    except Exception as exc:  # malformed JSON or records
        raise InputError(f"invalid shard metadata: {exc}", path=str(path)) from None
    return ShardHeader(
        path=path,
        job=str(header.get("job", "")),
        run_ids=[r.run_id for r in records],
        records=records,
        attributes=list(decoded.get("attributes", [])),
        unit_stats={
            k: [(e, u, s) for e, u, s in rows] for k, rows in decoded.get("unit_stats", {}).items()
        },
    )


def read_runs(header: ShardHeader) -> list[ShardRun]:
    """The runs of a shard: (record, example ids, n × k statistics, source positions)."""
    try:
        table = pq.ParquetFile(header.path).read()
    except (OSError, pa.ArrowException) as exc:
        raise InputError(f"not a readable Parquet shard: {exc}", path=str(header.path)) from None
    index = table.column("run_index").to_numpy()
    out: list[ShardRun] = []
    for i, record in enumerate(header.records):
        rows = np.flatnonzero(index == i)
        part = table.take(pa.array(rows))
        part = part.sort_by("position")
        k = len(record.stat_names)
        values = part.column("stats").combine_chunks().flatten().to_numpy(zero_copy_only=False)
        if values.size != part.num_rows * k:
            raise InputError(
                f"run ({record.describe()}): statistics are not {k} values per example",
                path=str(header.path),
            )
        source = part.column("source_position")
        positions = None if source.null_count == len(source) else source.to_numpy().tolist()
        out.append(
            (
                record,
                part.column("example_id").to_pylist(),
                values.reshape(part.num_rows, k),
                positions,
            )
        )
    return out


def _write_extras(store: Store, header: ShardHeader) -> None:
    """A shard's attributes and unit statistics (both replaced when written again)."""
    if header.attributes:
        store.attributes.write(header.records[0].dataset, header.attributes)
    if header.unit_stats:
        store.attributes.write_unit_stats(header.unit_stats)


def merge_shard(store: Store, path: str | Path, *, replace: bool = False) -> int:
    """Merge one shard in one transaction (``store.runs.write_many``); returns runs written.

    Stored runs are skipped, or with ``replace`` deleted and rewritten in that
    same transaction. Decided and written under the store's writer lock
    (:meth:`Store.writing`), between imports, never in the middle of one.
    """
    header = read_header(path)
    with store.writing():
        if not replace and set(header.run_ids) <= set(store.runs.stored(header.run_ids)):
            return 0
        _write_extras(store, header)
        return store.runs.write_many(read_runs(header), replace=replace)


def merge_shards(
    store: Store,
    folder: str | Path,
    *,
    batch_runs: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ShardMerge:
    """Merge every complete shard of ``folder`` into ``store``; idempotent and resumable.

    Shards whose runs are all stored are skipped after reading their footers;
    temporary files are never read; unreadable files are listed in
    ``unreadable`` and skipped. The example attributes of the pending shards
    are written first, once per dataset (rows keyed by (example, unit,
    attribute); the last shard in name order wins, as merging shard by shard
    would give); then their runs with ``store.runs.write_batches`` (one
    transaction per batch of whole runs), each shard's unit statistics just
    before its runs.
    ``progress(done, total)`` is called after every batch with the number of
    runs handled. An invalid run (e.g. non-finite statistics) stops the merge
    with an error naming its shard; the batches committed before stay stored.

    The whole merge — which runs are stored, then the writes — holds the
    store's writer lock (:meth:`Store.writing`), as every import does: an
    import racing it waits, then refuses runs the merge stored with other
    statistics.
    """
    with store.writing():
        return _merge_shards(store, folder, batch_runs=batch_runs, progress=progress)


def _merge_shards(
    store: Store,
    folder: str | Path,
    *,
    batch_runs: int | None,
    progress: Callable[[int, int], None] | None,
) -> ShardMerge:
    start = time.perf_counter()
    shards, temporary = list_shards(folder)
    result = ShardMerge(folder=str(folder), shards=len(shards))
    result.temporary = [p.name for p in temporary]
    stored = store.runs.completed_ids()
    pending: list[ShardHeader] = []
    # the example attributes of all pending shards, per dataset, deduplicated by key
    # (the last shard wins, as writing shard after shard would give): written once,
    # before any run, so the memory is bounded by the datasets, not by the shards
    attributes: dict[str, dict[tuple[str, str, str], dict[str, Any]]] = {}
    for path in shards:
        try:
            header = read_header(path, extras=False)
            if set(header.run_ids) <= stored:
                result.already_merged += 1
                continue
            header = read_header(path)
        except InputError as exc:
            result.unreadable.append({"file": path.name, "error": exc.reason})
            continue
        rows = attributes.setdefault(header.records[0].dataset, {})
        for row in header.attributes:
            rows[(str(row["example_id"]), str(row.get("unit", "")), str(row["attribute"]))] = row
        header.attributes = []
        pending.append(header)
    if attributes:
        for dataset, rows_by_key in attributes.items():
            store.attributes.write(dataset, rows_by_key.values())
        attributes.clear()
    total = sum(len(h.run_ids) for h in pending)
    current: dict[str, Path] = {}

    def runs() -> Iterator[ShardRun]:
        for header in pending:
            current["path"] = header.path
            try:
                items = read_runs(header)
            except InputError as exc:  # the footer was fine but the data is not
                result.unreadable.append({"file": header.path.name, "error": exc.reason})
                continue
            _write_extras(store, header)
            result.merged += 1
            yield from items

    kwargs: dict[str, Any] = {}
    if batch_runs is not None:
        kwargs["batch_runs"] = batch_runs
    try:
        done = store.runs.write_batches(
            runs(),
            progress=(lambda n: progress(n, total)) if progress else None,
            **kwargs,
        )
    except InputError as exc:
        where = current.get("path")
        raise InputError(
            f"{exc.reason}; the shards before it are merged: fix or remove this one and "
            "merge again",
            path=str(where) if where else None,
        ) from None
    result.runs_written = done.written
    result.runs_skipped = done.skipped
    result.examples = done.examples
    result.batches = done.batches
    result.seconds = time.perf_counter() - start
    return result
