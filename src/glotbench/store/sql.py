"""Helpers shared by the parts of :class:`~glotbench.store.store.Store`.

SQL filters and quoting, the :func:`_in_use` decorator of reads, and
:class:`StorePart`, the base of the part classes (``store_reads``,
``store_writes``, ``store_scores``, ``store_failures``, ``store_imports``,
``store_export``) that declares what they use of the store, so that the parts
need not import the store module.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import duckdb

from glotbench.store.schema import (
    ImportRecord,
    normalise_metric_name,
)

Filter = str | int | Sequence[str] | Sequence[int] | None


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
    def wrapper(self: StorePart, *args: Any, **kwargs: Any) -> Any:
        with self.held():
            return method(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


class StorePart:
    """Base of the parts of :class:`~glotbench.store.store.Store` (its method groups).

    Declares, for type checkers only, what the parts use of the store; the
    store itself defines them (connection, locking, transactions).
    """

    if TYPE_CHECKING:
        path: Path
        read_only: bool

        @property
        def _con(self) -> duckdb.DuckDBPyConnection: ...

        def held(self) -> AbstractContextManager[Any]: ...

        def transaction(self) -> AbstractContextManager[duckdb.DuckDBPyConnection]: ...

        def _require_writable(self) -> None: ...

        def _has_source_positions(self) -> bool: ...

        def _has_failures_table(self) -> bool: ...

        def _resolve_failures_of(self, con: duckdb.DuckDBPyConnection, runs_view: str) -> None: ...

        def _insert_import(self, record: ImportRecord) -> None: ...

        def _source_position_sql(self, alias: str) -> str: ...
