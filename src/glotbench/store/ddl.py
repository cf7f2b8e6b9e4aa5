"""The store's tables as DDL, and the migrations between schema versions.

:class:`~glotbench.store.store.Store` creates a new file with :data:`_DDL` and
:data:`_FAILURES_DDL`, and runs :data:`_MIGRATIONS` in one transaction when an
older store is opened for writing. Column meanings: ``docs/store.md``.
"""

from __future__ import annotations

_DDL = """
CREATE TABLE meta (
    key VARCHAR PRIMARY KEY,
    value VARCHAR NOT NULL
);
CREATE TABLE runs (
    run_id VARCHAR PRIMARY KEY,
    model VARCHAR NOT NULL,
    dataset VARCHAR NOT NULL,
    task VARCHAR NOT NULL,
    language VARCHAR NOT NULL,
    seed BIGINT,
    config_hash VARCHAR NOT NULL,
    metric VARCHAR NOT NULL,
    metric_config JSON NOT NULL,
    stat_names VARCHAR[] NOT NULL,
    n_examples BIGINT NOT NULL,
    model_metadata JSON NOT NULL,
    seconds DOUBLE,
    examples_per_second DOUBLE,
    source VARCHAR,
    import_id VARCHAR,
    stats_sha256 VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL
);
CREATE TABLE example_stats (
    run_id VARCHAR NOT NULL,
    position INTEGER NOT NULL,
    example_id VARCHAR NOT NULL,
    stats DOUBLE[] NOT NULL,
    source_position BIGINT
);
CREATE TABLE scores (
    model VARCHAR NOT NULL,
    task VARCHAR NOT NULL,
    language VARCHAR NOT NULL,
    dataset VARCHAR NOT NULL,
    metric VARCHAR NOT NULL,
    score DOUBLE NOT NULL,
    seed BIGINT,
    replicate BIGINT,
    stderr DOUBLE,
    n BIGINT,
    metadata JSON NOT NULL,
    import_id VARCHAR
);
CREATE TABLE imports (
    import_id VARCHAR PRIMARY KEY,
    kind VARCHAR NOT NULL,
    source VARCHAR NOT NULL,
    sha256 VARCHAR NOT NULL,
    rows BIGINT NOT NULL,
    added BIGINT,
    started_at TIMESTAMP NOT NULL,
    completed_at TIMESTAMP
);
"""

#: The ``failures`` table (added after schema version 1 was released). It is
#: *additive*: glotbench versions that do not know it ignore it, so the schema
#: version stays 1. New stores get it with the others; an older store gets it
#: the first time it is opened for writing; read paths treat a missing table as
#: empty (an old store opened read-only).
_FAILURES_DDL = """
CREATE TABLE IF NOT EXISTS failures (
    failure_id VARCHAR PRIMARY KEY,
    model VARCHAR NOT NULL,
    dataset VARCHAR NOT NULL,
    task VARCHAR NOT NULL,
    language VARCHAR NOT NULL,
    seed BIGINT,
    config_hash VARCHAR NOT NULL,
    iteration BIGINT,
    error_type VARCHAR NOT NULL,
    message VARCHAR NOT NULL,
    traceback VARCHAR,
    source VARCHAR,
    created_at TIMESTAMP NOT NULL,
    resolved_at TIMESTAMP
);
"""

#: Migrations from schema version ``v`` to ``v + 1``, run in one transaction
#: when an older store is opened for writing (read-only, it is read as it is).
_MIGRATIONS: dict[int, str] = {
    # 1 -> 2: an example's index in its source data (NULL: unknown)
    1: "ALTER TABLE example_stats ADD COLUMN source_position BIGINT",
}

#: Tables every store has (a store without one of them is damaged).
_TABLES = ("meta", "runs", "example_stats", "scores", "imports")
