"""core layer of glotbench: data model, tidy-file validation and the DuckDB store.

See ``docs/store.md`` (tables, guarantees) and ``docs/formats.md`` (tidy files).
"""

from glotbench.core.ingest import (
    ImportResult,
    add_scores_frame,
    import_examples_file,
    import_scores_file,
    open_store_for_import,
)
from glotbench.core.readers import RowInputError, TidyTable, read_tidy
from glotbench.core.schema import (
    SCHEMA_VERSION,
    ImportRecord,
    RunKey,
    RunRecord,
    run_id_for,
    stats_digest,
)
from glotbench.core.store import (
    ScoreConflictError,
    StatsMatrix,
    Store,
    StoreSummary,
)
from glotbench.core.validate import (
    ExamplesData,
    ScoresData,
    ValidatedRun,
    validate_examples,
    validate_scores,
)

__all__ = [
    "SCHEMA_VERSION",
    "ExamplesData",
    "ImportRecord",
    "ImportResult",
    "RowInputError",
    "RunKey",
    "RunRecord",
    "ScoreConflictError",
    "ScoresData",
    "StatsMatrix",
    "Store",
    "StoreSummary",
    "TidyTable",
    "ValidatedRun",
    "add_scores_frame",
    "import_examples_file",
    "import_scores_file",
    "open_store_for_import",
    "read_tidy",
    "run_id_for",
    "stats_digest",
    "validate_examples",
    "validate_scores",
]
