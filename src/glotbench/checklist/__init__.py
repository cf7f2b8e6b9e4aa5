"""Template tests after CheckList / MultiCheckList (``glotbench checklist``).

See ``docs/checklist.md``: the YAML template format (placeholders, per-language
fill-in lists, agreement variants), test types MFT / INV / DIR, failure rates
with paired bootstrap CIs, and storing results as runs.
"""

from glotbench.checklist.evaluate import (
    STORED_METRIC,
    ChecklistResult,
    Prediction,
    case_outcome,
    case_statistics,
    failure_rate_score,
    predictions_from_callable,
    read_predictions,
    score_cases,
    store_results,
)
from glotbench.checklist.templates import (
    TEST_TYPES,
    Case,
    TemplateSuite,
    builtin_suites,
    builtin_template_files,
    expand_suite,
    expand_test,
    load_suite,
    parse_suite_text,
    read_cases,
    write_cases,
)

__all__ = [
    "STORED_METRIC",
    "TEST_TYPES",
    "Case",
    "ChecklistResult",
    "Prediction",
    "TemplateSuite",
    "builtin_suites",
    "builtin_template_files",
    "case_outcome",
    "case_statistics",
    "expand_suite",
    "expand_test",
    "failure_rate_score",
    "load_suite",
    "parse_suite_text",
    "predictions_from_callable",
    "read_cases",
    "read_predictions",
    "score_cases",
    "store_results",
    "write_cases",
]
