"""The store layer of glotbench: the results database (one DuckDB file).

The data model (run keys, run and import records), the tables and their
migrations, the locks, and :class:`Store` with its collaborators. The store
offers transactions and queries; the way in (readers, validation, staging,
snapshots: :mod:`glotbench.ingest`) sits above it and writes through it.
See ``docs/store.md`` (tables, guarantees) and ``docs/architecture.md``.

The names below are imported on first use (PEP 562): importing a light module
of the package (:mod:`glotbench.store.analysis_cache`, :mod:`glotbench.store.lock`)
does not load pandas, which :mod:`glotbench.store.store` needs (the command
line answers a cached question without it; docs/cli-performance.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from glotbench.store.results import ImportResult, ScoreConflictError
    from glotbench.store.schema import (
        SCHEMA_VERSION,
        ImportRecord,
        RunKey,
        RunRecord,
        run_id_for,
        stats_digest,
    )
    from glotbench.store.stats import StatsMatrix
    from glotbench.store.store import Store, StoreSummary

_LAZY = {
    "ImportResult": "glotbench.store.results",
    "ScoreConflictError": "glotbench.store.results",
    "SCHEMA_VERSION": "glotbench.store.schema",
    "ImportRecord": "glotbench.store.schema",
    "RunKey": "glotbench.store.schema",
    "RunRecord": "glotbench.store.schema",
    "run_id_for": "glotbench.store.schema",
    "stats_digest": "glotbench.store.schema",
    "StatsMatrix": "glotbench.store.stats",
    "Store": "glotbench.store.store",
    "StoreSummary": "glotbench.store.store",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'glotbench.store' has no attribute {name!r}")


__all__ = [
    "SCHEMA_VERSION",
    "ImportRecord",
    "ImportResult",
    "RunKey",
    "RunRecord",
    "ScoreConflictError",
    "StatsMatrix",
    "Store",
    "StoreSummary",
    "run_id_for",
    "stats_digest",
]
