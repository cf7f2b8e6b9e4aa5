"""Template tests after CheckList / MultiCheckList (``glotbench checklist``).

See ``docs/checklist.md``: the YAML template format (placeholders, per-language
fill-in lists, agreement variants), test types MFT / INV / DIR, failure rates
with paired bootstrap CIs, and storing results as runs.
"""

from glotbench.checklist.cases import read_cases, write_cases
from glotbench.checklist.engine import expand_suite, expand_test
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
from glotbench.checklist.parse import load_suite, parse_suite_text
from glotbench.checklist.spec import TEST_TYPES, Case, TemplateSuite
from glotbench.checklist.suites import builtin_suites, builtin_template_files

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
