"""The Arrow tables a run write inserts, and the checks on the way there.

A run's ``runs`` row (:func:`run_row`), its ``example_stats`` columns
(:func:`example_columns`: positions, ids, statistics as lists and source
positions, validated by :func:`source_position_array`), a batch's tables
(:func:`runs_table`, :func:`examples_table`) and what a batched write did
(:class:`BatchWrite`). :mod:`glotbench.store.runs` inserts them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa

from glotbench.errors import InputError
from glotbench.store.layout import _RUN_COLUMNS
from glotbench.store.schema import RunRecord

_EXAMPLE_COLUMNS = ("run_id", "position", "example_id", "stats", "source_position")

#: Arrow types of the ``runs`` columns as :meth:`Runs._prepare_run` builds them
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


def _list_array(stats: npt.NDArray[np.float64]) -> pa.ListArray:
    n, k = stats.shape
    offsets = pa.array(np.arange(0, n * k + 1, k, dtype=np.int32))
    return pa.ListArray.from_arrays(offsets, pa.array(stats.reshape(-1), type=pa.float64()))


def source_position_array(positions: npt.ArrayLike | None, ids: np.ndarray, where: str) -> pa.Array:
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


def run_row(run: RunRecord, n: int, digest: str) -> list[Any]:
    """A run's ``runs`` columns in :data:`_RUN_COLUMNS` order (``n`` examples, ``digest``)."""
    return [
        run.run_id,
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


@dataclass
class PreparedRun:
    """A validated run, ready to insert (:meth:`Runs._prepare_run`).

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
    """What :meth:`Runs.write_batches` wrote."""

    run_ids: list[str] = field(default_factory=list)
    examples: int = 0
    skipped: int = 0
    batches: int = 0

    @property
    def written(self) -> int:
        return len(self.run_ids)

    def add(self, runs: Sequence[PreparedRun], *, skipped: int) -> None:
        self.run_ids.extend(r.run_id for r in runs)
        self.examples += sum(r.n_examples for r in runs)
        self.skipped += skipped
        self.batches += 1


def id_strings(example_ids: Sequence[Any] | np.ndarray) -> tuple[list[str], pa.Array]:
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


def has_blank(ids: list[str]) -> bool:
    """Whether an id is empty or whitespace only (``not id.strip()``), looping in C."""
    return not all(map(str.strip, ids))


def example_columns(
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


def with_positions(
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


def examples_table(runs: Sequence[PreparedRun]) -> pa.Table:
    """The ``example_stats`` rows of a batch of runs, in run order, as one Arrow table."""
    body = pa.concat_tables([r.examples for r in runs]).combine_chunks()  # one chunk: fast scan
    owner = np.repeat(np.arange(len(runs), dtype=np.int32), [r.n_examples for r in runs])
    run_ids = pa.DictionaryArray.from_arrays(
        pa.array(owner), pa.array([r.run_id for r in runs], type=pa.string())
    )  # DuckDB stores it as VARCHAR; no string per row is built in Python
    return body.add_column(0, "run_id", run_ids)


def runs_table(runs: Sequence[PreparedRun]) -> pa.Table:
    """The ``runs`` rows of a batch as one Arrow table (columns in table order)."""
    columns = list(zip(*(r.row for r in runs), strict=True))
    return pa.table(
        {
            name: pa.array(values, type=_RUN_ARROW_TYPES.get(name, pa.string()))
            for name, values in zip(_RUN_COLUMNS, columns, strict=True)
        }
    )


def check_unique(runs: Sequence[PreparedRun], seen: set[str]) -> None:
    """Refuse a run given twice (within ``runs`` or already in ``seen``); extends ``seen``."""
    for item in runs:
        if item.run_id in seen:
            raise InputError(f"run ({item.description}) is given more than once")
        seen.add(item.run_id)
