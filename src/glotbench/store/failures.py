"""Failures of benchmark jobs in the store: record, list, resolve.

``store.failures`` (:class:`Failures`) and the :class:`FailureList` that
``glotbench failures`` shows (:func:`glotbench.store.failure_list.list_failures`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from glotbench.store.layout import (
    _first,
)
from glotbench.store.schema import (
    utc_now,
)
from glotbench.store.sql import (
    Collaborator,
    Filter,
    _in_use,
    _where,
)

_FAILURE_COLUMNS = (
    "failure_id",
    "model",
    "dataset",
    "task",
    "language",
    "seed",
    "config_hash",
    "iteration",
    "error_type",
    "message",
    "traceback",
    "source",
    "created_at",
    "resolved_at",
)


def _failure_where(filters: dict[str, Filter], *, open_only: bool) -> tuple[str, list[Any]]:
    where, params = _where(filters)
    if open_only:
        where = f"{where} AND resolved_at IS NULL" if where else " WHERE resolved_at IS NULL"
    return where, params


@dataclass
class FailureList:
    """Recorded job failures (:func:`glotbench.api.list_failures`).

    Attributes
    ----------
    store : str
        The store.
    include_resolved : bool
        Whether resolved failures are listed.
    frame : pandas.DataFrame
        One row per failure: ids, job, error type, message, traceback, times.
    resolved_now : int
        Failures marked resolved by this call.
    """

    store: str
    include_resolved: bool
    frame: pd.DataFrame
    resolved_now: int = 0

    def to_frame(self) -> pd.DataFrame:
        return self.frame.copy()

    def to_dict(self) -> dict[str, Any]:
        rows = []
        for rec in self.frame.to_dict("records"):
            out: dict[str, Any] = {}
            for key, value in rec.items():
                if value is None or (not isinstance(value, str) and pd.isna(value)):
                    out[key] = None
                elif isinstance(value, pd.Timestamp):
                    out[key] = value.isoformat()
                elif isinstance(value, np.generic):
                    out[key] = value.item()
                else:
                    out[key] = value
            rows.append(out)
        return {
            "store": self.store,
            "include_resolved": self.include_resolved,
            "count": len(rows),
            "open": int(self.frame["resolved_at"].isna().sum()) if len(self.frame) else 0,
            "resolved_now": self.resolved_now,
            "failures": rows,
        }


class Failures(Collaborator):
    """Failures of benchmark jobs (``store.failures``): recorded by the runner, resolved by a
    later run."""

    def record(
        self,
        *,
        model: str,
        dataset: str,
        task: str,
        language: str,
        seed: int | None,
        config_hash: str,
        error_type: str,
        message: str,
        iteration: int | None = None,
        traceback: str | None = None,
        source: str | None = None,
    ) -> str:
        """Record a failed job (one transaction); returns its ``failure_id``.

        Every attempt that fails gets its own row. The row stays *open*
        (``resolved_at`` NULL) until a run with the same (model, dataset,
        seed, config_hash) is stored — ``store.runs.write`` / ``write_many``
        then set ``resolved_at`` in the transaction that stores it — or until
        :meth:`resolve` is called.
        """
        failure_id = uuid.uuid4().hex[:16]
        values = {
            "failure_id": failure_id,
            "model": model,
            "dataset": dataset,
            "task": task,
            "language": language,
            "seed": None if seed is None else int(seed),
            "config_hash": config_hash or "",
            "iteration": None if iteration is None else int(iteration),
            "error_type": error_type,
            "message": message,
            "traceback": traceback,
            "source": source,
            "created_at": utc_now(),
            "resolved_at": None,
        }
        with self.transaction() as con:
            con.execute(
                f"INSERT INTO failures ({', '.join(_FAILURE_COLUMNS)}) VALUES "
                f"({', '.join('?' for _ in _FAILURE_COLUMNS)})",
                [values[c] for c in _FAILURE_COLUMNS],
            )
        return failure_id

    @_in_use
    def frame(
        self,
        *,
        models: Filter = None,
        datasets: Filter = None,
        tasks: Filter = None,
        languages: Filter = None,
        seeds: Filter = None,
        failure_ids: Filter = None,
        include_resolved: bool = False,
    ) -> pd.DataFrame:
        """Recorded job failures, oldest first, filtered like ``store.runs.frame``.

        Only open failures unless ``include_resolved``. Columns:
        ``failure_id, model, dataset, task, language, seed, config_hash,
        iteration, error_type, message, traceback, source, created_at,
        resolved_at``. An older store opened read-only, which has no
        ``failures`` table yet, gives an empty frame.
        """
        if not self._has_failures_table():
            frame = pd.DataFrame({c: pd.Series(dtype=object) for c in _FAILURE_COLUMNS})
        else:
            where, params = _failure_where(
                {
                    "model": models,
                    "dataset": datasets,
                    "task": tasks,
                    "language": languages,
                    "seed": seeds,
                    "failure_id": failure_ids,
                },
                open_only=not include_resolved,
            )
            frame = self._con.sql(
                f"SELECT {', '.join(_FAILURE_COLUMNS)} FROM failures{where} "
                "ORDER BY created_at, model, dataset, seed NULLS FIRST, failure_id",
                params=params,
            ).df()
        for col in ("seed", "iteration"):
            frame[col] = frame[col].astype("Int64")
        for col in ("created_at", "resolved_at"):
            frame[col] = pd.to_datetime(frame[col])
        return frame.reset_index(drop=True)

    def resolve(
        self,
        *,
        models: Filter = None,
        datasets: Filter = None,
        tasks: Filter = None,
        languages: Filter = None,
        seeds: Filter = None,
        failure_ids: Filter = None,
    ) -> int:
        """Mark the matching open failures resolved (e.g. of a model dropped from the suite).

        Returns how many were marked. Nothing is deleted.
        """
        where, params = _failure_where(
            {
                "model": models,
                "dataset": datasets,
                "task": tasks,
                "language": languages,
                "seed": seeds,
                "failure_id": failure_ids,
            },
            open_only=True,
        )
        with self.transaction() as con:
            row = _first(con.execute(f"SELECT count(*) FROM failures{where}", params).fetchall())
            con.execute(f"UPDATE failures SET resolved_at = ?{where}", [utc_now(), *params])
        return int(row[0]) if row else 0

    def resolve_for_runs(self, con: duckdb.DuckDBPyConnection, runs_view: str) -> None:
        """Resolve open failures of the (model, dataset, seed, config_hash) of ``runs_view``.

        ``runs_view`` names the registered ``runs`` rows being stored; the
        caller holds their transaction. One ``UPDATE ... FROM`` joined to the
        distinct keys.
        """
        con.execute(
            "UPDATE failures SET resolved_at = ? FROM (SELECT DISTINCT model, dataset, seed, "
            f"config_hash FROM {runs_view}) k "
            "WHERE failures.resolved_at IS NULL AND failures.model = k.model "
            "AND failures.dataset = k.dataset AND failures.seed IS NOT DISTINCT FROM k.seed "
            "AND failures.config_hash = k.config_hash",
            [utc_now()],
        )

    def open_count(self) -> int:
        if not self._has_failures_table():
            return 0
        row = _first(
            self._con.execute("SELECT count(*) FROM failures WHERE resolved_at IS NULL").fetchall()
        )
        return int(row[0]) if row else 0
