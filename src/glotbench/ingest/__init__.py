"""The way in: reading, validating and importing result files into a store.

Readers of tidy files (CSV, JSONL, Parquet) and line files, the limits every
reader enforces, validation (by concern), staging of large files, worker
shards and Parquet snapshots. This layer sits above :mod:`glotbench.store`
and writes through its transactions; the store never imports it.
See ``docs/formats.md`` (tidy files) and ``docs/architecture.md``.
"""

from glotbench.ingest.example_validation import ExamplesData, ValidatedRun, validate_examples
from glotbench.ingest.readers import RowInputError, TidyTable, read_tidy
from glotbench.ingest.score_validation import ScoresData, validate_scores
from glotbench.ingest.tidy import (
    ImportResult,
    add_scores_frame,
    import_examples_file,
    import_scores_file,
    open_store_for_import,
)

__all__ = [
    "ExamplesData",
    "ImportResult",
    "RowInputError",
    "ScoresData",
    "TidyTable",
    "ValidatedRun",
    "add_scores_frame",
    "import_examples_file",
    "import_scores_file",
    "open_store_for_import",
    "read_tidy",
    "validate_examples",
    "validate_scores",
]
