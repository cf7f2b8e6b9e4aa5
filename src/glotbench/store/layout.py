"""The store's table layout: export tables, column orders, ids of imports and runs.

Shared by :mod:`glotbench.store.store` and the code that reads and writes its
tables in bulk (:mod:`glotbench.ingest.snapshot`), so that neither has to import
the other for it. See ``docs/store.md`` for every column.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pandas as pd

from glotbench.store.schema import run_id_for

#: Store used when none is given: ``glotbench.duckdb`` in the working directory.
DEFAULT_STORE_PATH = Path("glotbench.duckdb")

EXPORT_TABLES: tuple[str, ...] = ("runs", "examples", "scores", "imports", "meta")


_RUN_COLUMNS = (
    "run_id",
    "model",
    "dataset",
    "task",
    "language",
    "seed",
    "config_hash",
    "metric",
    "metric_config",
    "stat_names",
    "n_examples",
    "model_metadata",
    "seconds",
    "examples_per_second",
    "source",
    "import_id",
    "stats_sha256",
    "created_at",
)


_IMPORT_COLUMNS = (
    "import_id",
    "kind",
    "source",
    "sha256",
    "rows",
    "added",
    "started_at",
    "completed_at",
)


def new_import_id() -> str:
    """A fresh, random import id."""
    return uuid.uuid4().hex[:16]


def _first(rows: list[Any]) -> Any:
    """First row of a fully fetched result, or None (DuckDB needs results fetched to the end)."""
    return rows[0] if rows else None


def run_id_of_row(row: dict[str, Any]) -> str:
    """Recompute the run id from a row holding the run-key columns."""
    seed = row.get("seed")
    seed_val = None if seed is None or pd.isna(seed) else int(seed)
    return run_id_for(
        str(row["model"]),
        str(row["dataset"]),
        str(row["task"]),
        str(row["language"]),
        seed_val,
        str(row["config_hash"] or ""),
        str(row["metric"]),
    )
