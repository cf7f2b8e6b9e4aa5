"""Two guards of every write transaction (:meth:`glotbench.store.store.Store.transaction`).

**The write generation.** Every committed write transaction adds one to the
``meta`` value :data:`WRITE_GENERATION` in the same transaction. The answer
cache reads it with the store's content digest before and after an analysis
(:func:`glotbench.store.analysis_cache.store_file_state`) and keeps no answer
computed while any write happened, even when a later write restored the rows
exactly (a row added and deleted again): the analysis may have read the rows
in between (docs/analysis-cache.md). The content digest leaves the counter
out, so a write that changes nothing (a re-run that finds every job done)
does not make the next question miss the cache.

**The file's identity.** A process keeps its DuckDB connection open between
uses (``hold=True``, or inside ``held()``); meanwhile another process may have
removed the store (an import that created it and failed removes it again) and
created a new one at the same path (``os.replace`` of a temporary file). The
old connection then reads and writes a file no longer reachable by its name:
a commit there is lost. :func:`file_identity` (device and inode of the path)
is taken when the connection opens and compared before each transaction
(outside ``held()``: the connection is reopened on the new file) and before
its commit (the transaction is rolled back and a StoreError says so).
"""

from __future__ import annotations

import os
from pathlib import Path

import duckdb

#: ``meta`` key counting the committed write transactions of a store
WRITE_GENERATION = "write_generation"


def bump_write_generation(connection: duckdb.DuckDBPyConnection) -> None:
    """Add one to :data:`WRITE_GENERATION` (1 when absent), inside the caller's transaction."""
    rows = connection.execute(
        "UPDATE meta SET value = CAST(coalesce(TRY_CAST(value AS UBIGINT), 0) + 1 AS VARCHAR) "
        "WHERE key = ? RETURNING value",
        [WRITE_GENERATION],
    ).fetchall()
    if not rows:
        connection.execute("INSERT INTO meta VALUES (?, '1')", [WRITE_GENERATION])


def file_identity(path: Path) -> tuple[int, int] | None:
    """Device and inode of the file ``path`` names now (links followed), None if none."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


def replaced_message(path: Path) -> str:
    """The StoreError text of a commit refused because ``path`` names another file now."""
    return (
        f"the store {path} was removed or replaced by another process while this one had it "
        "open; nothing was written to it. Open the store again and repeat the write"
    )
