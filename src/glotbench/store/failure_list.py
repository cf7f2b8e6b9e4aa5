"""Listing and resolving the recorded failures of benchmark jobs (``glotbench failures``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from glotbench.errors import StoreError
from glotbench.store.failures import FailureList
from glotbench.store.layout import DEFAULT_STORE_PATH
from glotbench.store.store import Store


def list_failures(
    store: str | Path = DEFAULT_STORE_PATH,
    *,
    models: Sequence[str] | None = None,
    datasets: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
    failure_ids: Sequence[str] | None = None,
    include_resolved: bool = False,
    resolve: bool = False,
) -> FailureList:
    """Recorded failures of benchmark jobs (open ones unless ``include_resolved``).

    Parameters
    ----------
    store : str or Path, default ``glotbench.duckdb``
        The store.
    models, datasets, tasks, languages : sequence of str, optional
        Keep only these.
    failure_ids : sequence of str, optional
        Keep only these failures.
    include_resolved : bool, default False
        Also list failures already resolved.
    resolve : bool, default False
        Mark the matching open failures resolved (nothing is deleted); the
        result lists them.

    Returns
    -------
    FailureList
        ``frame``: one row per failure (job, error type, message, traceback,
        times); ``resolved_now``.

    Raises
    ------
    StoreError
        No store at ``store``.

    Examples
    --------
    >>> from glotbench import api
    >>> _ = api.import_scores("scores.csv", store="failures.duckdb")
    >>> api.list_failures("failures.duckdb").frame.empty
    True
    """
    filters: dict[str, Any] = {
        "models": models or None,
        "datasets": datasets or None,
        "tasks": tasks or None,
        "languages": languages or None,
        "failure_ids": failure_ids or None,
    }
    if not resolve:
        with Store.open(store, read_only=True) as s:
            frame = s.failures.frame(**filters, include_resolved=include_resolved)
        return FailureList(store=str(store), include_resolved=include_resolved, frame=frame)
    if not Path(store).exists():
        raise StoreError(f"no store at {store}; pass store=PATH")
    with Store.open(store) as s:
        ids = s.failures.frame(**filters)["failure_id"].tolist()
        count = s.failures.resolve(failure_ids=ids) if ids else 0
        frame = s.failures.frame(failure_ids=ids, include_resolved=True)
    return FailureList(store=str(store), include_resolved=True, frame=frame, resolved_now=count)
