"""The store layer of glotbench: the results database (one DuckDB file).

The data model (run keys, run and import records), the tables and their
migrations, the locks, and :class:`Store` with its collaborators. The store
offers transactions and queries; the way in (readers, validation, staging,
snapshots: :mod:`glotbench.ingest`) sits above it and writes through it.
See ``docs/store.md`` (tables, guarantees) and ``docs/architecture.md``.
"""

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
