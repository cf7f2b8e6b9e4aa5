"""Helpers shared by the collaborators of :class:`~glotbench.store.store.Store`.

SQL filters and quoting, the :func:`_in_use` decorator of reads, and
:class:`Collaborator`, the base of the store's collaborators (``store.runs``,
``store.stats``, ``store.scores``, ``store.imports``, ``store.failures``,
``store.exports``, ``store.attributes``, ``store.outputs``): each holds its
store and reaches the connection, the lock and transactions through it.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import duckdb

from glotbench.errors import StoreError
from glotbench.store.schema import normalise_metric_name

if TYPE_CHECKING:
    from glotbench.store.store import Store

Filter = str | int | Sequence[str] | Sequence[int] | None

#: ``meta`` key prefix of a run whose chunked write (``Store.write_run_chunks``)
#: has begun and not completed: its example rows may be in the store, its
#: ``runs`` row is not
PARTIAL_RUN_PREFIX = "partial_run:"


def drop_partial_runs(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str]) -> list[str]:
    """Delete the rows of interrupted chunked writes among ``run_ids``; the runs cleaned.

    A run recorded in ``meta`` under :data:`PARTIAL_RUN_PREFIX` and without a
    ``runs`` row was being written by :meth:`~glotbench.store.runs.Runs.write_chunks`
    when its process died: its example rows are orphans. Called in the
    transaction that writes those runs again, before their rows are inserted.
    One indexed look-up in ``meta`` when nothing is pending.
    """
    if not run_ids:
        return []
    keys = [PARTIAL_RUN_PREFIX + r for r in run_ids]
    found = con.execute("SELECT key FROM meta WHERE key IN (SELECT unnest(?))", [keys]).fetchall()
    if not found:
        return []
    marked = [row[0] for row in found]
    ids = [key[len(PARTIAL_RUN_PREFIX) :] for key in marked]
    con.execute(
        "DELETE FROM example_stats WHERE run_id IN (SELECT unnest(?)) "
        "AND run_id NOT IN (SELECT run_id FROM runs)",
        [ids],
    )
    con.execute("DELETE FROM meta WHERE key IN (SELECT unnest(?))", [marked])
    return ids


def _as_list(values: Filter) -> list[Any] | None:
    if values is None:
        return None
    if isinstance(values, str | int):
        return [values]
    return list(values)


def _where(filters: dict[str, Filter], alias: str = "") -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    prefix = f"{alias}." if alias else ""
    for column, values in filters.items():
        items = _as_list(values)
        if items is None:
            continue
        if column == "metric":
            items = [normalise_metric_name(str(v)) for v in items]
        clauses.append(f"list_contains(?, {prefix}{column})")
        params.append(items)
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", params


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _sql_ident(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


_Method = TypeVar("_Method", bound=Callable[..., Any])


def _in_use(method: _Method) -> _Method:
    """Run a read of :class:`Store` inside :meth:`Store.held`.

    For a ``hold=False`` store the file is opened for the read and released
    after it (the result is fully fetched), so a writer between transactions
    never keeps other processes out while it parses or computes.
    """

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        with self.held():
            return method(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


class Collaborator:
    """Base of the store's collaborators: one group of tables, reached through its store.

    The store owns the connection, the locks and the transactions; a
    collaborator reads inside :meth:`held` (the :func:`_in_use` decorator) and
    writes inside :meth:`transaction`, both the store's.
    """

    def __init__(self, store: Store) -> None:
        # a weak reference: no cycle, so a store nobody holds is freed (and its DuckDB
        # file released) at once, as before it had collaborators
        self._store_ref = weakref.ref(store)

    @property
    def _store(self) -> Store:
        store = self._store_ref()
        if store is None:
            raise StoreError("the store of this collaborator is gone; keep the Store open")
        return store

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {self._store_ref()!r}>"

    @property
    def path(self) -> Path:
        """The store's file."""
        return self._store.path

    @property
    def _con(self) -> duckdb.DuckDBPyConnection:
        return self._store._con

    def held(self) -> AbstractContextManager[Store]:
        """The store's :meth:`~glotbench.store.store.Store.held`."""
        return self._store.held()

    def transaction(self) -> AbstractContextManager[duckdb.DuckDBPyConnection]:
        """The store's :meth:`~glotbench.store.store.Store.transaction`."""
        return self._store.transaction()

    def _has_source_positions(self) -> bool:
        return self._store._has_source_positions()

    def _has_failures_table(self) -> bool:
        return self._store._has_failures_table()
