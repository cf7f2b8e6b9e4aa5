"""The public Python API: what the CLI calls.

Everything the command line can do is a function here, returning result
objects with ``.to_frame()`` and ``.to_dict()``. This module is a facade: most
of its names are the functions of the layer that does the work, imported here
unchanged (``docs/architecture.md``), so the logic and its documentation live —
and are tested — there; the functions the facade defines itself (they open the
store or combine two layers for one command) live by subject in ``glotbench._api``
(``stores``, ``analyses``, ``harnesses``, ``runs``) and are imported here:

=========================================  ==========================================
functions                                  work done in
=========================================  ==========================================
store: ``open_store``, ``import_*``,       :mod:`glotbench.store`, :mod:`glotbench.ingest`
``export_store``, ``list_failures``        (``tidy``, ``snapshot``), :mod:`glotbench.importers`
``load_replicated``, ``load_lmm_frame``,   :mod:`glotbench.analysis.sources.inputs`
``read_attributes_file``
``analyze_*``, ``euroeval_rank``           :mod:`glotbench.analysis` (``from_inputs``,
                                           ``mixed.study`` and the analysis modules)
``*_files``, ``paired_statistics``,        :mod:`glotbench.analysis.sources.paired_files`,
``significance_test``, ``read_*_file``     :mod:`glotbench.ingest.line_files`
``leaderboard_source``,                    :mod:`glotbench.report.sources`,
``write_leaderboard_site``, ``write_report``  :mod:`glotbench.report.sites`
``run_benchmark``, ``list_suites``,        :mod:`glotbench.runner.benchmark`,
``build_scala``, ``benchmark_scores``      :mod:`glotbench.runner.build`, ``runner.protocol``
``checklist_*``                            :mod:`glotbench.checklist.commands`
``demo``, ``write_demo_pages``,            :mod:`glotbench.demo_xtreme`,
``XtremeAhead``, ``starter_demo``          :mod:`glotbench.demo_starter`
``list_metrics``                           :mod:`glotbench.metrics.catalog`
=========================================  ==========================================
"""

from __future__ import annotations

from glotbench._api.analyses import (
    analyze_aggregate,
    analyze_compare,
    analyze_ranks,
    analyze_task_comparisons,
    analyze_variance,
    learning_curve,
    speed_summary,
    task_comparisons_dict,
)
from glotbench._api.harnesses import (
    import_euroeval,
    import_lm_eval,
    import_reuben,
    import_xtreme,
)
from glotbench._api.runs import (
    benchmark_scores,
    dump_suite,
    kept_examples,
    model_kinds,
    reproduce,
    reproduction_summary,
    run_benchmark,
)
from glotbench._api.stores import (
    add_scores,
    export_store,
    import_examples,
    import_parquet,
    import_scores,
    import_shards,
    open_store,
    show_store,
    store_content_digest,
)
from glotbench.analysis.aggregate import Leaderboard
from glotbench.analysis.aso import ASOResult, MultiASOResult, aso, multi_aso
from glotbench.analysis.compare import Aggregates, Comparison
from glotbench.analysis.datasize import DEFAULT_SIZES, STRATEGIES, DataSizeResult
from glotbench.analysis.euroeval_rank import EuroEvalRank
from glotbench.analysis.headline import Analysis, AnalysisSettings
from glotbench.analysis.headline import analyze as analyze_headline
from glotbench.analysis.mixed.model import LmmResult
from glotbench.analysis.mixed.study import analyze_missing_data, analyze_mixed_model
from glotbench.analysis.planning.plan import Plan, PlanSettings, plan_design
from glotbench.analysis.planning.power import Components, Design
from glotbench.analysis.ranks import Ranks
from glotbench.analysis.replicates import ReplicatedScores
from glotbench.analysis.significance import (
    AdjustedPValues,
    McNemarResult,
    PairedTestResult,
    adjust_p_values,
    mcnemar_test,
    paired_bootstrap_test,
    permutation_test,
)
from glotbench.analysis.sources.from_inputs import (
    analyze_buckets,
    analyze_datasize,
    analyze_transfer,
    euroeval_rank,
)
from glotbench.analysis.sources.inputs import load_lmm_frame, load_replicated, read_attributes_file
from glotbench.analysis.sources.paired_files import (
    aso_files,
    bootstrap_files,
    mcnemar_files,
    paired_statistics,
    significance_test,
    store_pair_statistics,
)
from glotbench.analysis.sources.plan_inputs import plan_from_inputs as plan
from glotbench.analysis.transfer import TransferGroups
from glotbench.analysis.variance import (
    VarianceComponents,
)
from glotbench.checklist.commands import (
    ChecklistExample,
    ChecklistExpansion,
    checklist_example,
    checklist_expand,
    checklist_score,
)
from glotbench.demo_starter import StarterDemo, starter_demo
from glotbench.demo_xtreme import (
    Demo,
    XtremeAhead,
    demo,
    demo_leaderboard,
    write_demo_pages,
)
from glotbench.errors import InputError
from glotbench.importers.common import HarnessImportResult
from glotbench.ingest import (
    ImportResult,
)
from glotbench.ingest.line_files import read_examples_file, read_scores_file
from glotbench.metrics.base import Metric
from glotbench.metrics.catalog import list_metrics
from glotbench.report.planning_plot import write_power_curve
from glotbench.report.sites import (
    SiteResult,
    parse_language_groups,
    write_leaderboard_site,
    write_report,
)
from glotbench.report.sources import LeaderboardSource, leaderboard_source, read_model_metadata
from glotbench.reproduce.base import Reproductions
from glotbench.resample import BootstrapResult, bootstrap, bootstrap_metric
from glotbench.runner.benchmark import list_suites
from glotbench.runner.build import ScalaBuild, build_scala
from glotbench.store import Store, StoreSummary
from glotbench.store.exports import ExportResult
from glotbench.store.failure_list import list_failures
from glotbench.store.failures import FailureList
from glotbench.store.layout import DEFAULT_STORE_PATH
from glotbench.store.lock import set_lock_timeout

__all__ = [
    "Analysis",
    "AnalysisSettings",
    "analyze_headline",
    "bootstrap",
    "bootstrap_metric",
    "bootstrap_files",
    "demo_leaderboard",
    "starter_demo",
    "StarterDemo",
    "list_metrics",
    "read_examples_file",
]


# names the facade passes on from the layers, and the types its functions return
__all__ += [
    "BootstrapResult",
    "DEFAULT_SIZES",
    "Demo",
    "EuroEvalRank",
    "InputError",
    "Leaderboard",
    "LmmResult",
    "Metric",
    "STRATEGIES",
    "analyze_missing_data",
    "analyze_mixed_model",
    "demo",
    "load_lmm_frame",
    "load_replicated",
    "write_demo_pages",
    "XtremeAhead",
]

# --- analysis commands ---------------------------------------------------------


# --- store commands ---------------------------------------------------------------


__all__ += [
    "DEFAULT_STORE_PATH",
    "ExportResult",
    "FailureList",
    "ImportResult",
    "Store",
    "StoreSummary",
    "add_scores",
    "export_store",
    "list_failures",
    "import_examples",
    "import_parquet",
    "import_scores",
    "open_store",
    "set_lock_timeout",
    "show_store",
    "store_content_digest",
]


# --- replication-aware analyses ----------------------------------------------------


__all__ += ["analyze_aggregate", "analyze_compare", "analyze_ranks", "analyze_variance"]
# the types they take and return
__all__ += ["Aggregates", "Comparison", "Ranks", "ReplicatedScores", "VarianceComponents"]
__all__ += ["euroeval_rank"]


# --- mixed models (issue 5) ---


# --- design analyses (issue 6) ---
# Significance tests (paired bootstrap, permutation, ASO, McNemar, corrections), the
# evaluation-size analysis and transfer groups. Thin wrappers that read files or the
# store and call glotbench.analysis.{significance,aso,datasize,transfer}.


__all__ += [
    "ASOResult",
    "AdjustedPValues",
    "DataSizeResult",
    "McNemarResult",
    "MultiASOResult",
    "PairedTestResult",
    "TransferGroups",
    "adjust_p_values",
    "analyze_datasize",
    "analyze_transfer",
    "aso",
    "aso_files",
    "mcnemar_files",
    "mcnemar_test",
    "multi_aso",
    "paired_bootstrap_test",
    "paired_statistics",
    "permutation_test",
    "read_scores_file",
    "significance_test",
    "store_pair_statistics",
]


# --- leaderboard, report, buckets (issue 7) ---


__all__ += [
    "LeaderboardSource",
    "SiteResult",
    "leaderboard_source",
    "parse_language_groups",
    "read_model_metadata",
    "write_leaderboard_site",
]


__all__ += ["analyze_buckets", "read_attributes_file"]


__all__ += ["write_report"]


# --- planning: power and minimum detectable differences (issue 26) ---


__all__ += [
    "Components",
    "Design",
    "Plan",
    "PlanSettings",
    "plan",
    "plan_design",
    "write_power_curve",
]


# --- harness importers (issue 8) ---


__all__ += [
    "HarnessImportResult",
    "import_euroeval",
    "import_lm_eval",
    "import_reuben",
    "import_xtreme",
]


# --- reproductions (issue 23) ---


__all__ += ["Reproductions", "reproduce", "reproduction_summary"]


# --- benchmark runner (issue 4) ---


__all__ += ["benchmark_scores", "build_scala", "list_suites", "run_benchmark", "ScalaBuild"]
__all__ += ["import_shards"]
__all__ += ["dump_suite", "kept_examples", "learning_curve", "model_kinds", "speed_summary"]
__all__ += ["analyze_task_comparisons", "task_comparisons_dict"]


# --- checklist (issue 7) ---


__all__ += [
    "ChecklistExample",
    "ChecklistExpansion",
    "checklist_example",
    "checklist_expand",
    "checklist_score",
]
