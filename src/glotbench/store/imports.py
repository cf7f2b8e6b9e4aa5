"""Import tracking in the store: the ``imports`` table (one row per imported file).

A file is imported once (by SHA-256); an interrupted import is completed by
repeating it. An import records its id in the store's writer lock file while
it writes (:func:`glotbench.store.writer_lock.note_import`), so an unfinished
``imports`` row is known to be in progress or interrupted. ``store.imports``
is an :class:`Imports`.
"""

from __future__ import annotations

import pandas as pd

from glotbench.store.layout import (
    _IMPORT_COLUMNS,
    _first,
)
from glotbench.store.schema import (
    ImportRecord,
    utc_now,
)
from glotbench.store.sql import (
    Collaborator,
    _in_use,
)
from glotbench.store.writer_lock import note_import


class Imports(Collaborator):
    """The ``imports`` table (``store.imports``): which files were imported, and whether
    completely."""

    def insert(self, record: ImportRecord) -> None:
        """Insert an import's row; the caller holds the transaction."""
        note_import(self.path, record.import_id)  # `show` tells it from an interrupted one
        self._con.execute(
            f"INSERT INTO imports ({', '.join(_IMPORT_COLUMNS)}) VALUES "
            f"({', '.join('?' for _ in _IMPORT_COLUMNS)})",
            [getattr(record, c) for c in _IMPORT_COLUMNS],
        )

    def start(self, record: ImportRecord) -> None:
        """Record an import that is about to write runs (``completed_at`` stays NULL)."""
        with self.transaction():
            self.insert(record)

    def complete(self, import_id: str, added: int) -> None:
        """Mark an import complete with the number of items it added."""
        with self.transaction() as con:
            con.execute(
                "UPDATE imports SET completed_at = ?, added = ? WHERE import_id = ?",
                [utc_now(), added, import_id],
            )

    @_in_use
    def find(self, sha256: str, kind: str, *, completed: bool | None = None) -> ImportRecord | None:
        """The latest import of a file with this content hash and kind."""
        cond = ""
        if completed is True:
            cond = " AND completed_at IS NOT NULL"
        elif completed is False:
            cond = " AND completed_at IS NULL"
        row = _first(
            self._con.execute(
                f"SELECT {', '.join(_IMPORT_COLUMNS)} FROM imports "
                f"WHERE sha256 = ? AND kind = ?{cond} "
                "ORDER BY started_at DESC LIMIT 1",
                [sha256, kind],
            ).fetchall()
        )
        return ImportRecord(**dict(zip(_IMPORT_COLUMNS, row, strict=True))) if row else None

    @_in_use
    def frame(self) -> pd.DataFrame:
        """All imports, oldest first."""
        return self._con.sql(
            f"SELECT {', '.join(_IMPORT_COLUMNS)} FROM imports ORDER BY started_at, import_id"
        ).df()

    @_in_use
    def count_runs(self, import_id: str) -> int:
        """How many stored runs import ``import_id`` wrote."""
        row = _first(
            self._con.execute(
                "SELECT count(*) FROM runs WHERE import_id = ?", [import_id]
            ).fetchall()
        )
        return int(row[0]) if row else 0
