"""The public Python API: what the CLI calls.

Everything the command line can do is a function here, returning result
objects with ``.to_frame()`` and ``.to_dict()``. This module is a facade: most
of its names are the functions of the layer that does the work, imported here
unchanged (``docs/architecture.md``), so the logic and its documentation live —
and are tested — there; the few functions defined here open the store or
combine two layers for one command:

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

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from glotbench.analysis.aggregate import Leaderboard
from glotbench.analysis.aso import ASOResult, MultiASOResult, aso, multi_aso
from glotbench.analysis.compare import Aggregates, Comparison, aggregate_scores, compare_models
from glotbench.analysis.dataset_scores import scores_by_dataset
from glotbench.analysis.datasize import DEFAULT_SIZES, STRATEGIES, DataSizeResult
from glotbench.analysis.draws import DrawSettings
from glotbench.analysis.euroeval_rank import EuroEvalRank
from glotbench.analysis.headline import Analysis, AnalysisSettings
from glotbench.analysis.headline import analyze as analyze_headline
from glotbench.analysis.mixed.model import LmmResult
from glotbench.analysis.mixed.study import analyze_missing_data, analyze_mixed_model
from glotbench.analysis.planning.plan import Plan, PlanSettings, plan_design
from glotbench.analysis.planning.power import Components, Design
from glotbench.analysis.ranks import DISTRIBUTION_FORMATS, Ranks, rank_models
from glotbench.analysis.replicates import ReplicatedScores
from glotbench.analysis.settings import DEFAULT_PAIRS, DEFAULT_TOP_K
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
from glotbench.analysis.sources.speed_store import store_speed_table
from glotbench.analysis.transfer import TransferGroups
from glotbench.analysis.variance import (
    ComponentTable,
    VarianceComponents,
    components,
    variance_components,
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
from glotbench.importers.euroeval import import_euroeval as _import_euroeval
from glotbench.importers.lm_eval import import_lm_eval as _import_lm_eval
from glotbench.importers.reuben import import_reuben as _import_reuben
from glotbench.importers.xtreme import import_xtreme as _import_xtreme
from glotbench.ingest import (
    ImportResult,
    add_scores_frame,
    import_examples_file,
    import_scores_file,
)
from glotbench.ingest.line_files import read_examples_file, read_scores_file
from glotbench.ingest.snapshot import import_snapshot
from glotbench.ingest.tidy import open_store_for_import
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
from glotbench.report.table_files import write_table
from glotbench.reproduce.base import PaperReproduction, Reproductions, summary_frame
from glotbench.resample import BootstrapResult, bootstrap, bootstrap_metric
from glotbench.runner import benchmark as _benchmark
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


def open_store(
    store: str | Path = DEFAULT_STORE_PATH,
    *,
    read_only: bool = False,
    hold: bool = True,
    lock_timeout: float | None = None,
) -> Store:
    """Open (or create, unless ``read_only``) a results store; use it as a context manager.

    Parameters
    ----------
    store : str or Path, default ``glotbench.duckdb``
        The store's DuckDB file.
    read_only : bool, default False
        Open for reading only (the file must exist; nothing is migrated).
    hold : bool, default True
        Hold the lock while the store is open; ``False`` locks the file only
        while it is read or written (``docs/store.md``, Concurrency).
    lock_timeout : float, optional
        Seconds to wait for a store another process holds (default:
        :func:`set_lock_timeout`'s, else ``$GLOTBENCH_LOCK_TIMEOUT``, else 60;
        every function here that opens a store takes ``lock_timeout`` too).

    Returns
    -------
    Store
        The open store; ``with`` closes it and releases the lock.

    Raises
    ------
    StoreError
        The file is not a glotbench store, was written by a newer version, or
        stays locked past ``lock_timeout``.

    Examples
    --------
    >>> from glotbench import api
    >>> with api.open_store("empty.duckdb") as store:
    ...     store.summary().counts["scores"]
    0
    """
    return Store.open(store, read_only=read_only, hold=hold, lock_timeout=lock_timeout)


def import_scores(
    path: str | Path,
    *,
    store: str | Path = DEFAULT_STORE_PATH,
    lock_timeout: float | None = None,
    allow_unknown_metrics: bool = False,
    percent: bool = False,
) -> ImportResult:
    """Import a tidy scores file (CSV / JSONL / Parquet), streamed in chunks.

    Every row is validated and compared with the store before anything is
    written; then rows are added in batches (an interrupted import is
    completed by running it again). Re-importing the same file is a no-op
    (``status == "skipped"``); rows already stored with the same values are
    skipped.

    Parameters
    ----------
    path : str or Path
        The scores file: one row per score with the columns ``model``,
        ``task``, ``language``, ``metric``, ``score`` and optionally
        ``dataset``, ``seed``, ``replicate``, ``stderr`` (``docs/formats.md``).
    store : str or Path, default ``glotbench.duckdb``
        The store to import into (created if absent).
    lock_timeout : float, optional
        As in :func:`open_store`.
    allow_unknown_metrics : bool, default False
        Store scores of metrics glotbench does not know (no range check).
    percent : bool, default False
        The file gives 0–1 metrics in percent (divided by 100 on import;
        BLEU/chrF are 0–100 anyway).

    Returns
    -------
    ImportResult
        ``status`` (``imported`` or ``skipped``), ``scores_added``,
        ``scores_skipped``, ``ignored_columns`` and a ``message``.

    Raises
    ------
    InputError
        A malformed row (the message names file, line and field), or a key
        stored with a different value; nothing is written then.

    Examples
    --------
    ``scores.csv`` holds 27 accuracy scores: 3 models × 3 languages × 3 seeds.

    >>> from glotbench import api
    >>> result = api.import_scores("scores.csv", store="results.duckdb")
    >>> result.status, result.scores_added
    ('imported', 27)
    >>> api.import_scores("scores.csv", store="results.duckdb").status  # the same file again
    'skipped'
    """
    with open_store_for_import(store, lock_timeout=lock_timeout) as s:
        return import_scores_file(
            s, path, allow_unknown_metrics=allow_unknown_metrics, percent=percent
        )


def import_examples(
    path: str | Path,
    *,
    store: str | Path = DEFAULT_STORE_PATH,
    lock_timeout: float | None = None,
    labels: Sequence[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ImportResult:
    r"""Import a tidy per-example file: validated first, then one transaction per run.

    Runs already complete in the store are skipped, so repeating an
    interrupted import completes it.

    Parameters
    ----------
    path : str or Path
        The per-example file (CSV / JSONL / Parquet): one row per example with
        ``model``, ``task``, ``language``, ``metric``, an ``example_id`` and the
        metric's statistics or a per-example ``score`` (``docs/formats.md``).
    store : str or Path, default ``glotbench.duckdb``
        The store to import into (created if absent).
    lock_timeout : float, optional
        As in :func:`open_store`.
    labels : sequence of str, optional
        The label set of label-count metrics (macro-F1, MCC, ...), e.g.
        ``["POS", "NEG"]``; otherwise read from the ``tp[LABEL]`` column names.
    progress : callable, optional
        Called with (runs done, runs in all) after each run.

    Returns
    -------
    ImportResult
        ``status``, ``runs_added``, ``runs_skipped`` and a ``message``.

    Raises
    ------
    InputError
        A malformed row or statistics that break the metric's constraints (the
        message names file, line and field); nothing is written then.

    See Also
    --------
    import_scores : One score per row instead of per-example statistics.

    Examples
    --------
    Per-example accuracy of one model on six examples (``score`` is 1 when the
    example is right):

    >>> from pathlib import Path
    >>> from glotbench import api
    >>> rows = ["model,task,language,metric,seed,example_id,score"]
    >>> rows += [f"xlmr,sentiment,da,accuracy,0,{i},{i % 3 > 0:d}" for i in range(6)]
    >>> _ = Path("examples.csv").write_text("\n".join(rows) + "\n")
    >>> result = api.import_examples("examples.csv", store="examples.duckdb")
    >>> result.status, result.runs_added
    ('imported', 1)
    """
    with open_store_for_import(store, lock_timeout=lock_timeout) as s:
        return import_examples_file(s, path, labels=labels, progress=progress)


def import_parquet(
    path: str | Path,
    *,
    store: str | Path = DEFAULT_STORE_PATH,
    lock_timeout: float | None = None,
) -> ImportResult:
    """Merge a Parquet snapshot written by :func:`export_store` into ``store``.

    Rows the store already holds are skipped, so merging the same snapshot
    twice adds nothing.

    Parameters
    ----------
    path : str or Path
        The snapshot folder (``export_store(out, table="all")`` with a folder
        ``out`` writes one Parquet file per table).
    store : str or Path, default ``glotbench.duckdb``
        The store to merge into (created if absent).
    lock_timeout : float, optional
        As in :func:`open_store`.

    Returns
    -------
    ImportResult
        ``status``, the rows added and skipped, and a ``message``.

    Raises
    ------
    InputError
        The folder is not a glotbench snapshot, or a key is stored with a
        different value.

    See Also
    --------
    export_store : Write the snapshot.

    Examples
    --------
    >>> from glotbench import api
    >>> _ = api.import_scores("scores.csv", store="a.duckdb")
    >>> _ = api.export_store("snapshot", store="a.duckdb", table="all")
    >>> api.import_parquet("snapshot", store="b.duckdb").scores_added
    27
    """
    with open_store_for_import(store, lock_timeout=lock_timeout) as s:
        return import_snapshot(s, Path(path))


def add_scores(
    frame: pd.DataFrame,
    *,
    store: str | Path = DEFAULT_STORE_PATH,
    lock_timeout: float | None = None,
    source: str = "<DataFrame>",
    allow_unknown_metrics: bool = False,
) -> ImportResult:
    """Add a DataFrame of scores (the columns of a scores file) in one transaction.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per score with the columns of a scores file (``model``,
        ``task``, ``language``, ``metric``, ``score``, optionally ``seed``,
        ``replicate``, ``dataset``, ``stderr``; ``docs/formats.md``).
    store : str or Path, default ``glotbench.duckdb``
        The store to add to (created if absent).
    lock_timeout : float, optional
        As in :func:`open_store`.
    source : str, default ``"<DataFrame>"``
        The name error messages and the import record give the frame.
    allow_unknown_metrics : bool, default False
        Store scores of metrics glotbench does not know (no range check).

    Returns
    -------
    ImportResult
        As :func:`import_scores` returns it.

    Raises
    ------
    InputError
        A malformed row (the message names ``source``, row and column).

    Examples
    --------
    >>> import pandas as pd
    >>> from glotbench import api
    >>> frame = pd.DataFrame({"model": ["xlmr", "mbert"], "task": "sentiment",
    ...                       "language": "da", "metric": "accuracy", "score": [0.71, 0.66]})
    >>> api.add_scores(frame, store="frame.duckdb").scores_added
    2
    """
    with open_store_for_import(store, lock_timeout=lock_timeout) as s:
        return add_scores_frame(
            s, frame, source=source, allow_unknown_metrics=allow_unknown_metrics
        )


def show_store(
    store: str | Path = DEFAULT_STORE_PATH, *, lock_timeout: float | None = None
) -> StoreSummary:
    """What the store holds: counts and a per (model, task, language) table.

    Parameters
    ----------
    store : str or Path, default ``glotbench.duckdb``
        The store (opened read-only; it must exist).
    lock_timeout : float, optional
        As in :func:`open_store`.

    Returns
    -------
    StoreSummary
        ``counts`` (rows per table) and ``by_model_task_language`` (one row
        per model, task and language; also ``.to_frame()``).

    Raises
    ------
    StoreError
        No store at ``store``, or it is not a glotbench store.

    Examples
    --------
    >>> from glotbench import api
    >>> _ = api.import_scores("scores.csv", store="show.duckdb")
    >>> summary = api.show_store("show.duckdb")
    >>> summary.counts["scores"], len(summary.by_model_task_language)
    (27, 9)
    """
    with Store.open(store, read_only=True, lock_timeout=lock_timeout) as s:
        return s.summary()


def store_content_digest(
    store: str | Path = DEFAULT_STORE_PATH, *, lock_timeout: float | None = None
) -> str:
    """SHA-256 of everything the store holds: the key of its analysis cache.

    Any write — a run written, replaced or deleted, scores imported, a
    failure, metadata, attributes, kept outputs — changes it; reading does
    not. The command line keeps each ``analyze`` answer under it
    (``docs/analysis-cache.md``); a script can key its own results the same
    way. Computed in DuckDB, one scan per table
    (:func:`glotbench.store.analysis_cache.content_digest`).

    Parameters
    ----------
    store : str or Path, default ``glotbench.duckdb``
        The store (opened read-only; it must exist).
    lock_timeout : float, optional
        As in :func:`open_store`.

    Returns
    -------
    str
        64 hexadecimal digits.

    Raises
    ------
    StoreError
        No store at ``store``, or it is not a glotbench store.

    Examples
    --------
    >>> from glotbench import api
    >>> _ = api.import_scores("scores.csv", store="digest.duckdb")
    >>> before = api.store_content_digest("digest.duckdb")
    >>> before == api.store_content_digest("digest.duckdb")
    True
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"model": ["m"], "task": "t", "language": "de",
    ...                       "metric": "accuracy", "score": [0.5]})
    >>> _ = api.add_scores(frame, store="digest.duckdb")
    >>> api.store_content_digest("digest.duckdb") == before
    False
    """
    from glotbench.store.analysis_cache import store_fingerprint

    with Store.open(store, read_only=True, lock_timeout=lock_timeout) as s:
        return store_fingerprint(s)


def export_store(
    out: str | Path,
    *,
    store: str | Path = DEFAULT_STORE_PATH,
    lock_timeout: float | None = None,
    table: str = "all",
    keep_formulas: bool = False,
) -> ExportResult:
    """Export table(s) to CSV or Parquet (see ``store.exports.write`` for the file names).

    Parameters
    ----------
    out : str or Path
        A file (``.csv`` or ``.parquet``) for one table, or a folder that gets
        one file per table.
    store : str or Path, default ``glotbench.duckdb``
        The store (opened read-only).
    lock_timeout : float, optional
        As in :func:`open_store`.
    table : str, default ``"all"``
        ``scores``, ``runs``, ``examples`` (and the store's other tables), or
        ``all``.
    keep_formulas : bool, default False
        Keep CSV text cells that a spreadsheet would run as a formula as they
        are; otherwise they get a leading apostrophe.

    Returns
    -------
    ExportResult
        ``store``, ``table`` and the ``files`` written.

    Raises
    ------
    StoreError
        No store at ``store``.

    See Also
    --------
    import_parquet : Merge an exported folder into another store.

    Examples
    --------
    >>> import pandas as pd
    >>> from glotbench import api
    >>> _ = api.import_scores("scores.csv", store="export.duckdb")
    >>> result = api.export_store("scores-out.csv", store="export.duckdb", table="scores")
    >>> len(pd.read_csv(result.files[0]))
    27
    """
    with Store.open(store, read_only=True, lock_timeout=lock_timeout) as s:
        files = s.exports.write(out, table=table, keep_formulas=keep_formulas)
    return ExportResult(store=str(store), table=table, files=[str(f) for f in files])


# --- replication-aware analyses ----------------------------------------------------


def analyze_variance(source: ReplicatedScores | ComponentTable) -> VarianceComponents:
    """Variance components (σ_b, σ_seed, σ_boot, σ_w) per model and language.

    σ_b is the SD of a model's language means within a task, σ_seed and
    σ_boot the SDs over seeds and bootstrap replicates, σ_w the total
    replication SD (Sälevä, Ataman & Lignos 2025; ``docs/analysis.md``).

    Parameters
    ----------
    source : ReplicatedScores or ComponentTable
        Scores with replications, as :func:`load_replicated` returns them.

    Returns
    -------
    VarianceComponents
        ``per_unit`` (one row per model, task and language), ``per_model``
        (one row per model and task) and ``notes``.

    Examples
    --------
    >>> from glotbench import api
    >>> result = api.analyze_variance(api.load_replicated(input="scores.csv"))
    >>> table = result.per_model[["model", "sigma_b", "sigma_w_mean"]]
    >>> print(table.round(3).to_string(index=False))
      model  sigma_b  sigma_w_mean
    glot500    0.040         0.006
      mbert    0.046         0.009
       xlmr    0.034         0.004
    """
    table = source if isinstance(source, ComponentTable) else components(source)
    return variance_components(table)


def _draw_settings(
    source: ReplicatedScores | ComponentTable, settings: AnalysisSettings | DrawSettings | None
) -> tuple[DrawSettings, AnalysisSettings | None]:
    """The draw settings of ``settings`` for ``source`` (None: the defaults), and the request's."""
    if isinstance(settings, DrawSettings):
        return settings, None
    settings = settings or AnalysisSettings()
    return settings.draws(source), settings


def analyze_aggregate(
    source: ReplicatedScores | ComponentTable,
    settings: AnalysisSettings | DrawSettings | None = None,
) -> Aggregates:
    """Mean, geometric mean and median over languages with standard errors.

    Parameters
    ----------
    source : ReplicatedScores or ComponentTable
        Scores with replications, as :func:`load_replicated` returns them.
    settings : AnalysisSettings or DrawSettings, optional
        The request's :class:`AnalysisSettings` (default: its defaults, those
        of every command and page) or ready :class:`DrawSettings`.

    Returns
    -------
    Aggregates
        ``frame``: one row per model and aggregator with the score, its
        resampled and closed-form standard errors and interval; ``hierarchy``
        and ``notes``.

    Examples
    --------
    >>> from glotbench import api
    >>> result = api.analyze_aggregate(api.load_replicated(input="scores.csv"))
    >>> result
    Aggregates(models=3, languages=3, best 'glot500': mean 0.712 (SE 0.01916), notes=1)
    >>> means = result.frame.query("aggregator == 'mean'")
    >>> print(means[["model", "score", "se_resampled"]].round(3).to_string(index=False))
      model  score  se_resampled
    glot500  0.712         0.019
      mbert  0.631         0.022
       xlmr  0.695         0.016
    """
    draws, request = _draw_settings(source, settings)
    level = _level(None, request)
    result = aggregate_scores(source, draws, confidence_level=level)
    return result if request is None else replace(result, recorded=request.record(source))


def analyze_compare(
    source: ReplicatedScores | ComponentTable,
    settings: AnalysisSettings | DrawSettings | None = None,
    confidence_level: float | None = None,
    per_language: bool = False,
    pairs_out: str | Path | None = None,
    pairs: str = DEFAULT_PAIRS,
    top_k: int = DEFAULT_TOP_K,
    pair: Sequence[tuple[str, str]] = (),
) -> Comparison:
    """Pairwise differences with SDs over draws and effect sizes.

    Parameters
    ----------
    source : ReplicatedScores or ComponentTable
        Scores with replications, as :func:`load_replicated` returns them.
    settings : AnalysisSettings or DrawSettings, optional
        As in :func:`analyze_aggregate`.
    confidence_level : float, optional
        Level of the pairs' percentile intervals (default: the settings').
    per_language : bool, default False
        Keep the full per-language table (one row per pair and language) in
        the result; otherwise per-language comparisons are summarised (per
        language and per pair).
    pairs_out : str or Path, optional
        Write the per-language table to this Parquet file (CSV if the name
        ends in ``.csv``). It holds every pair (implies ``pairs="all"``).
    pairs : {"adjacent", "all"}, default "adjacent"
        ``"adjacent"``: the neighbours in each aggregate's ranking, every pair
        of its ``top_k`` best models and the pairs in ``pair`` — time and
        memory linear in models; ``"all"``: every one of the M(M − 1)/2 pairs.
        A pair's numbers are the same in both modes, float for float;
        ``Comparison.summary`` counts flagged pairs over every pair in both.
        ``per_language=True`` implies ``"all"``.
    top_k : int, default 10
        In ``"adjacent"`` mode, every pair of this many best models (by each
        aggregate) is computed; 0 for none.
    pair : sequence of (str, str), optional
        Pairs of model names to compute in any case (``("xlmr", "mbert")``).

    Returns
    -------
    Comparison
        ``aggregates``: one row per aggregator and pair (difference, SD,
        effect size, interval, share of draws in which ``model_a`` is
        better); ``language_summary``, ``pair_summary``, ``per_language``.

    Examples
    --------
    >>> from glotbench import api
    >>> result = api.analyze_compare(api.load_replicated(input="scores.csv"))
    >>> means = result.aggregates.query("aggregator == 'mean'")
    >>> print(means[["model_a", "model_b", "difference", "ci_low", "ci_high"]].round(3)
    ...       .to_string(index=False))
    model_a model_b  difference  ci_low  ci_high
    glot500   mbert       0.081   0.069    0.100
    glot500    xlmr       0.017   0.007    0.029
      mbert    xlmr      -0.064  -0.081   -0.047
    """
    draws, request = _draw_settings(source, settings)
    level = _level(confidence_level, request)
    result = compare_models(
        source,
        draws,
        confidence_level=level,
        per_language=per_language or pairs_out is not None,
        pairs=pairs,
        top_k=top_k,
        requested=tuple((str(a), str(b)) for a, b in pair),
    )
    if request is not None:
        result = replace(result, recorded=request.record(source) | {"confidence_level": level})
    if pairs_out is not None:
        write_table(result.per_language, pairs_out)
        if not per_language:
            result = replace(result, per_language=None)
    return result


def analyze_task_comparisons(
    source: ReplicatedScores,
    settings: AnalysisSettings | None = None,
    *,
    max_models: int | None = None,
) -> dict[str, Any]:
    """Per task, pairwise comparisons and rank distributions of the models that cover it.

    When models lack whole tasks, the overall view ranks only the models with
    every task (and compares nothing when fewer than two have them all); each
    task still ranks every model with a score on it. This compares those
    models on that task's cells alone, with the request's draws and aggregator
    ``mean`` — what the report and leaderboard show per task
    (:func:`glotbench.analysis.pair_view.task_comparisons`).

    Parameters
    ----------
    source : ReplicatedScores
        Scores with replications, as :func:`load_replicated` returns them.
    settings : AnalysisSettings, optional
        The request's settings (default: the defaults of every command).
    max_models : int, optional
        Compare the best ``max_models`` of each task only.

    Returns
    -------
    dict
        Task -> :class:`~glotbench.analysis.pair_view.RankedComparisons`
        (``models`` best first, ``comparison``, ``ranks``); tasks with fewer
        than two models are absent. :func:`task_comparisons_dict` gives it as JSON.

    Examples
    --------
    >>> from glotbench import api
    >>> scores = api.load_replicated(input="scores.csv")
    >>> comparisons = api.analyze_task_comparisons(scores, api.AnalysisSettings(n_draws=200))
    >>> comparisons["sentiment"].models
    ('glot500', 'xlmr', 'mbert')
    """
    from glotbench.analysis.pair_view import task_comparisons

    analysis = analyze_headline(source, settings or AnalysisSettings())
    return task_comparisons(source, analysis, max_models=max_models)


def task_comparisons_dict(comparisons: dict[str, Any]) -> dict[str, Any]:
    """:func:`analyze_task_comparisons`' result as plain data (the ``--json`` output).

    Parameters
    ----------
    comparisons : dict
        What :func:`analyze_task_comparisons` returns.

    Returns
    -------
    dict
        Task -> ``models``, ``comparison``, ``ranks``, ``confidence_level`` and
        ``left_out``, JSON-safe.

    Examples
    --------
    >>> from glotbench import api
    >>> scores = api.load_replicated(input="scores.csv")
    >>> plain = api.task_comparisons_dict(
    ...     api.analyze_task_comparisons(scores, api.AnalysisSettings(n_draws=200)))
    >>> sorted(plain["sentiment"])
    ['comparison', 'confidence_level', 'left_out', 'models', 'ranks']
    """
    return {
        task: {
            "models": list(view.models),
            "left_out": list(view.left_out),
            "confidence_level": view.confidence_level,
            "comparison": None if view.comparison is None else view.comparison.to_dict(),
            "ranks": None if view.ranks is None else view.ranks.to_dict(),
        }
        for task, view in comparisons.items()
    }


def _level(confidence_level: float | None, request: AnalysisSettings | None) -> float:
    if confidence_level is not None:
        return confidence_level
    return (request or AnalysisSettings()).confidence_level


def analyze_ranks(
    source: ReplicatedScores | ComponentTable,
    settings: AnalysisSettings | DrawSettings | None = None,
    confidence_level: float | None = None,
    *,
    rank_method: str = "2026-05-28",
    rank_bootstraps: int = 1000,
    distribution: str = "auto",
) -> Ranks:
    """Rank distributions, rank intervals and EuroEval rank scores with intervals.

    Parameters
    ----------
    source : ReplicatedScores or ComponentTable
        Scores with replications, as :func:`load_replicated` returns them.
    settings, confidence_level
        As in :func:`analyze_compare`.
    rank_method : str, default ``"2026-05-28"``
        EuroEval's current rank-score method or the superseded ``"2025"`` one
        (``docs/analysis.md``).
    rank_bootstraps : int, default 1000
        Bootstrap draws of the EuroEval rank score's interval.
    distribution : {"auto", "full", "window"}, default "auto"
        How the JSON form (``to_dict``) gives the rank distribution: ``"full"``
        every rank's share per model (M × M numbers), ``"window"`` each model's
        ranks with a non-zero share (``first_rank``, ``shares``; linear in models
        when rank intervals are narrow), ``"auto"`` full up to 50 models.
        ``Ranks.distribution`` (the DataFrame) is the full table in any case.

    Returns
    -------
    Ranks
        ``summary``: one row per aggregator and model (mean and modal rank,
        rank interval, EuroEval rank score and interval); ``distribution``:
        the probability of each rank.

    Examples
    --------
    >>> from glotbench import api
    >>> result = api.analyze_ranks(api.load_replicated(input="scores.csv"))
    >>> means = result.summary.query("aggregator == 'mean'")
    >>> print(means[["model", "mean_rank", "rank_best", "rank_worst"]].to_string(index=False))
      model  mean_rank  rank_best  rank_worst
    glot500        1.0          1           1
      mbert        3.0          3           3
       xlmr        2.0          2           2
    """
    if distribution not in DISTRIBUTION_FORMATS:
        raise InputError(
            f"distribution must be one of {', '.join(DISTRIBUTION_FORMATS)}, not {distribution!r}",
            field="distribution",
        )
    draws, request = _draw_settings(source, settings)
    level = _level(confidence_level, request)
    result = rank_models(
        source,
        draws,
        confidence_level=level,
        rank_method=rank_method,
        rank_bootstraps=rank_bootstraps,
    )
    result = replace(result, distribution_format=distribution)
    if request is not None:
        result = replace(result, recorded=request.record(source) | {"confidence_level": level})
    return result


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


def import_lm_eval(
    path: str | Path,
    *,
    store: str | Path = DEFAULT_STORE_PATH,
    lock_timeout: float | None = None,
    model: str | None = None,
    families: Sequence[str] | None = None,
    task_map: Sequence[str] | None = None,
    default_language: str | None = None,
    tasks: Sequence[str] | None = None,
    seed_from: str = "config",
    samples: bool = True,
    progress: Callable[[int, int], None] | None = None,
    task_map_file: str | Path | None = None,
    auto_language: bool = True,
) -> HarnessImportResult:
    """Import an lm-evaluation-harness output folder (results JSON + logged samples).

    Samples become runs with per-example statistics keyed by ``doc_id``; the
    results JSON becomes aggregate scores with their stderr (group rows with
    language ``all``). Re-importing the same folder is a no-op. See
    ``docs/importers/lm-eval.md``.

    Parameters
    ----------
    path : str or Path
        The ``--output_path`` folder of ``lm_eval`` (or one model's folder in
        it, or one ``results_<timestamp>.json``).
    store : str or Path, default ``glotbench.duckdb``
        The store to import into (created if absent).
    lock_timeout : float, optional
        As in :func:`open_store`.
    model : str, optional
        The model's name (default: from the results' ``model_args``).
    families : sequence of str, optional
        Task-name prefixes split as ``<family>_<language>``.
    task_map : sequence of str, optional
        ``TASK=LANG`` or ``TASK=NAME:LANG`` entries naming the task and
        language of one lm-eval task.
    default_language : str, optional
        The language of tasks whose name gives none.
    tasks : sequence of str, optional
        Import only these lm-eval tasks.
    seed_from : str, default ``"config"``
        Where a run's seed comes from: the results' config (``config``) or the
        file's order (``order``).
    samples : bool, default True
        Import the logged samples as per-example runs (else only the results'
        aggregate scores).
    progress : callable, optional
        Called with (files done, files in all).
    task_map_file : str or Path, optional
        A file of many ``task_map`` entries.
    auto_language : bool, default True
        Split task names ending in an ISO 639 code (``scala_da``).

    Returns
    -------
    HarnessImportResult
        The runs and scores added and skipped, the tasks and languages read,
        and notes (``.to_dict()``).

    Raises
    ------
    InputError
        No results file in ``path``, or a malformed record (the message names
        file, line and field); nothing is written then.

    Examples
    --------
    A results file of one task, without logged samples:

    >>> import json
    >>> from pathlib import Path
    >>> from glotbench import api
    >>> results = {"results": {"xnli_de": {"alias": "xnli_de", "acc,none": 0.41,
    ...                                    "acc_stderr,none": 0.011}},
    ...            "config": {"model": "hf", "model_args": "pretrained=gpt2"}}
    >>> Path("lm_eval_out/gpt2").mkdir(parents=True)
    >>> path = Path("lm_eval_out/gpt2/results_2026-01-01T00-00-00.json")
    >>> _ = path.write_text(json.dumps(results))
    >>> result = api.import_lm_eval("lm_eval_out", store="lm_eval.duckdb", samples=False)
    >>> result.scores_added
    1
    """
    with open_store_for_import(store, lock_timeout=lock_timeout) as s:
        return _import_lm_eval(
            s,
            path,
            model=model,
            families=families,
            task_map=task_map,
            default_language=default_language,
            tasks=tasks,
            seed_from=seed_from,  # type: ignore[arg-type]
            samples=samples,
            progress=progress,
            task_map_file=task_map_file,
            auto_language=auto_language,
        )


def import_euroeval(
    path: str | Path, *, store: str | Path = DEFAULT_STORE_PATH, lock_timeout: float | None = None
) -> HarnessImportResult:
    r"""Import a EuroEval / ScandEval results JSONL file (pre-v17 records and v17+ EEE records).

    Totals become scores on 0–1 with ``stderr`` = EuroEval's 1.96·SE / 1.96;
    every iteration becomes a replicate score. See
    ``docs/importers/euroeval.md``.

    Parameters
    ----------
    path : str or Path
        EuroEval's ``euroeval_benchmark_results.jsonl`` (one record per model
        and dataset).
    store : str or Path, default ``glotbench.duckdb``
        The store to import into (created if absent).
    lock_timeout : float, optional
        As in :func:`open_store`.

    Returns
    -------
    HarnessImportResult
        The scores added and skipped, the datasets and languages read, and
        notes (``.to_dict()``).

    Raises
    ------
    InputError
        A malformed record (the message names file, line and field); nothing
        is written then.

    See Also
    --------
    euroeval_rank : EuroEval's rank score of the imported iterations.

    Examples
    --------
    One record: a model's MCC and macro-F1 on SweReC over three iterations.

    >>> import json
    >>> from pathlib import Path
    >>> from glotbench import api
    >>> record = {"dataset": "swerec", "task": "sentiment-classification",
    ...           "dataset_languages": ["sv"], "model": "tiny-llama",
    ...           "results": {"raw": {"test": [{"mcc": m, "macro_f1": f} for m, f in
    ...                                        [(0.33, 0.47), (0.29, 0.52), (0.30, 0.50)]]},
    ...                       "total": {"test_mcc": 30.7, "test_mcc_se": 2.3,
    ...                                 "test_macro_f1": 49.7, "test_macro_f1_se": 2.9}},
    ...           "generative": True, "few_shot": True, "validation_split": False}
    >>> _ = Path("euroeval.jsonl").write_text(json.dumps(record) + "\n")
    >>> result = api.import_euroeval("euroeval.jsonl", store="euroeval.duckdb")
    >>> result.scores_added  # 2 totals and 3 iterations of each metric
    8
    """
    with open_store_for_import(store, lock_timeout=lock_timeout) as s:
        return _import_euroeval(s, path)


def import_reuben(
    path: str | Path,
    *,
    config: str | Path | None = None,
    store: str | Path = DEFAULT_STORE_PATH,
    lock_timeout: float | None = None,
    task: str = "reuben",
    metrics: Sequence[str] | None = None,
    percent: bool = False,
    allow_unknown_metrics: bool = False,
) -> HarnessImportResult:
    r"""Import a reuben summary or replication file with the columns its YAML config declares.

    Summary rows become scores with ``stderr`` = σ_w and σ_seed / σ_boot in
    their metadata, read back by :func:`load_replicated` as ready SDs
    (parametric scheme); replication rows become scores with ``seed`` and
    ``replicate``. See ``docs/importers/reuben.md``.

    Parameters
    ----------
    path : str or Path
        The reuben data file (CSV / TSV / JSONL).
    config : str or Path, optional
        reuben's YAML config naming the columns (default: reuben's defaults).
    store : str or Path, default ``glotbench.duckdb``
        The store to import into (created if absent).
    lock_timeout : float, optional
        As in :func:`open_store`.
    task : str, default ``"reuben"``
        glotbench's task for the file; reuben's task column becomes the
        language (the unit analyses average over).
    metrics : sequence of str, optional
        ``COLUMN=NAME`` entries mapping a score column to a glotbench metric,
        or ``COLUMN=NAME:LO:HI`` declaring the scale of a metric glotbench does
        not compute.
    percent : bool, default False
        The file gives 0–1 metrics in percent (divided by 100).
    allow_unknown_metrics : bool, default False
        Store columns that name no glotbench metric (finiteness checked only).

    Returns
    -------
    HarnessImportResult
        The scores added and skipped, and notes (``.to_dict()``).

    Raises
    ------
    InputError
        A missing declared column, a score outside its metric's scale, an
        unknown config key (the message names file, line and field).

    Examples
    --------
    A summary file with σ_seed and σ_boot per model and language:

    >>> from pathlib import Path
    >>> from glotbench import api
    >>> _ = Path("reuben.yaml").write_text(
    ...     "score_col: Mean\nseed_sd_col: SeedSD\nboot_sd_col: BootSD\n")
    >>> _ = Path("reuben.csv").write_text(
    ...     "Model,Task,Mean,SeedSD,BootSD\nxlmr,de,0.71,0.01,0.02\nxlmr,fr,0.74,0.01,0.02\n")
    >>> result = api.import_reuben("reuben.csv", config="reuben.yaml", task="xquad",
    ...                            metrics=["Mean=squad_f1"], store="reuben.duckdb")
    >>> result.scores_added
    2
    """
    with open_store_for_import(store, lock_timeout=lock_timeout) as s:
        return _import_reuben(
            s,
            path,
            config=config,
            task=task,
            metrics=metrics,
            percent=percent,
            allow_unknown_metrics=allow_unknown_metrics,
        )


def import_xtreme(
    predictions: str | Path,
    labels: str | Path,
    *,
    store: str | Path = DEFAULT_STORE_PATH,
    lock_timeout: float | None = None,
    model: str | None = None,
    tasks: Sequence[str] | None = None,
    seed: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> HarnessImportResult:
    r"""Score an XTREME / XTREME-R predictions folder against a labels folder, per example.

    The result's ``aggregates`` reproduce XTREME's averaging (unweighted over
    languages; QA as the mean of EM and F1). See ``docs/importers/xtreme.md``.

    Parameters
    ----------
    predictions : str or Path
        The predictions folder (``<task>/test-<lang>.tsv``, ...).
    labels : str or Path
        The labels folder, laid out as ``predictions``.
    store : str or Path, default ``glotbench.duckdb``
        The store to import into (created if absent).
    lock_timeout : float, optional
        As in :func:`open_store`.
    model : str, optional
        The model's name (default: the predictions folder's name).
    tasks : sequence of str, optional
        Import only these XTREME tasks.
    seed : int, optional
        The seed of the runs.
    progress : callable, optional
        Called with (files done, files in all).

    Returns
    -------
    HarnessImportResult
        The runs added and skipped, ``aggregates`` (XTREME's per-task means)
        and notes.

    Raises
    ------
    InputError
        A prediction file whose line count differs from its labels', or a
        malformed line (the message names file and line).

    Examples
    --------
    XNLI predictions of one model for German, three examples:

    >>> from pathlib import Path
    >>> from glotbench import api
    >>> for folder, labels in (("preds", "entailment\nneutral\nneutral\n"),
    ...                        ("gold", "entailment\nneutral\ncontradiction\n")):
    ...     Path(folder, "xnli").mkdir(parents=True)
    ...     _ = Path(folder, "xnli", "test-de.tsv").write_text(labels)
    >>> result = api.import_xtreme("preds", "gold", model="xlmr", store="xtreme.duckdb")
    >>> result.runs_added
    1
    """
    with open_store_for_import(store, lock_timeout=lock_timeout) as s:
        return _import_xtreme(
            s, predictions, labels, model=model, tasks=tasks, seed=seed, progress=progress
        )


# --- reproductions (issue 23) ---


__all__ += ["Reproductions", "reproduce", "reproduction_summary"]


def reproduce(
    papers: Sequence[str] | None = None,
    *,
    data_dir: str | Path | None = None,
    out: str | Path | None = None,
) -> Reproductions:
    """Recompute the papers' published tables from their published inputs.

    Parameters
    ----------
    papers : sequence of str, optional
        Names of :data:`glotbench.reproduce.PAPER_MODULES` (default: every
        available one).
    data_dir : str or Path, optional
        The folder of the published inputs (default ``$GLOTBENCH_DATA_DIR``,
        else ``../shared/data``); ScandEval's inputs ship with glotbench.
    out : str or Path, optional
        Also write the HTML page there (a folder gets ``index.html``).

    Returns
    -------
    Reproductions
        ``papers``: one :class:`~glotbench.reproduce.base.PaperReproduction`
        per paper, each table's cells with published and recomputed values;
        ``page``: the HTML file written, if any. See ``docs/reproductions.md``.

    Examples
    --------
    >>> from glotbench import api
    >>> result = api.reproduce(["scandeval"], data_dir=".")
    >>> summary = api.reproduction_summary(result.papers)
    >>> print(summary[["paper", "table", "reproduced", "differs"]].to_string(index=False))
        paper   table  reproduced  differs
    scandeval Table 2           1        0
    """
    from glotbench.report.reproduction import write_reproduction_page
    from glotbench.reproduce import reproduce as run_reproductions

    results = run_reproductions(papers, data_dir)
    page = write_reproduction_page(results, out) if out is not None else None
    return Reproductions(papers=results, page=None if page is None else str(page))


def reproduction_summary(papers: Sequence[PaperReproduction]) -> pd.DataFrame:
    """One row per table: counts by status and the largest difference.

    Parameters
    ----------
    papers : sequence of PaperReproduction
        The ``papers`` of :func:`reproduce`'s result.

    Returns
    -------
    pandas.DataFrame
        One row per paper and table: ``paper``, ``table``, counts per status
        (``reproduced``, ``differs``, ...) and the largest absolute difference.

    Examples
    --------
    >>> from glotbench import api
    >>> summary = api.reproduction_summary(api.reproduce(["scandeval"], data_dir=".").papers)
    >>> summary[["paper", "table"]].values.tolist()
    [['scandeval', 'Table 2']]
    """
    return summary_frame(papers)


# --- benchmark runner (issue 4) ---


def run_benchmark(
    suite: str | Path | None,
    *,
    store: str | Path = DEFAULT_STORE_PATH,
    data_dir: str | Path | None = None,
    models: list[str] | None = None,
    languages: list[str] | None = None,
    tasks: list[str] | None = None,
    datasets: list[str] | None = None,
    iterations: int | None = None,
    executor: str = "local",
    force: bool = False,
    num_cpus: int | None = None,
    ray_address: str | None = None,
    on_event: Any = None,
    split_sizes: dict[str, int] | str | None = None,
    train_sizes: list[int] | str | None = None,
    shards: str | Path | None = None,
    merge: bool = True,
    speed_seconds: float | None = None,
    speed: bool = True,
    scores: bool = True,
    model_args: list[str] | None = None,
    device: str | None = None,
    batch_size: int | None = None,
    limit: int | None = None,
    keep_outputs: bool | None = None,
    data: list[str] | None = None,
) -> Any:
    """Run (or resume) a benchmark suite — a built-in name or a YAML file — into ``store``.

    ``models`` are the suite's model names or models named as ``KIND:ID``
    (``hf:path``, ``openai:name``, ``majority:``; options from ``model_args``
    ``["key=value"]``, ``device``, ``batch_size``), which replace the suite's
    models; ``suite=None`` then runs the built-in ``euroeval-hub``. ``limit``
    keeps the first N test examples of every dataset (``docs/runner.md``,
    Models on the command line). ``keep_outputs`` stores every test example's
    prediction or generated text (None: generative models and free-text tasks);
    :func:`kept_examples` reads them. ``data`` (local files, with one task and
    one language) replaces the suite: no YAML at all.

    ``shards`` (a folder all workers can write to): each job's statistics are
    written as a Parquet shard and merged by this process; ``merge=False``
    leaves them for :func:`import_shards` (``docs/runner.md``, Several machines).

    ``split_sizes`` (``{"train": 128, "test": 256}`` or ``"train=128,test=256"``)
    replaces those split sizes of every dataset (a smaller run, e.g. for CI).
    ``train_sizes`` (``[64, 128]`` or ``"64,128"``) runs every model at these training
    sizes (learning curves; :func:`learning_curve`, docs/learning-curves.md).
    ``speed_seconds`` / ``speed`` set or turn off ScandEval's speed benchmark
    (one per model; ``docs/runner.md``, Inference speed).

    Parameters
    ----------
    suite : str or Path or None
        A built-in suite name (:func:`list_suites`), a suite YAML file, or
        None (``models`` on the command line, the built-in ``euroeval-hub``).
    store : str or Path, default ``glotbench.duckdb``
        The store the runs are written into; runs already there are skipped.
    data_dir : str or Path, optional
        The folder the suite's datasets are read from.
    models, languages, tasks, datasets : list of str, optional
        Restrict the suite (``models`` may also name models as ``KIND:ID``).
    iterations : int, optional
        Seeds × bootstrapped test sets per job (default: the suite's).
    executor : str, default ``"local"``
        ``local``, ``processes`` or ``ray``.
    num_cpus : int, optional
        Workers of the ``processes`` and ``ray`` executors.
    ray_address : str, optional
        The Ray cluster to join (default: a local one).
    force : bool, default False
        Run jobs again although the store holds them.
    on_event : callable, optional
        Called with each progress event.
    split_sizes, train_sizes, shards, merge, speed_seconds, speed
        As described above.
    scores : bool, default True
        Compute the ScandEval scores of the run into the summary.
    model_args, device, batch_size, limit, keep_outputs, data
        As described above.

    Returns
    -------
    RunSummary
        A :class:`~glotbench.runner.executors.RunSummary`: ``.completed``,
        ``.failures``, ``.to_dict()``, ``.to_frame()`` (ScandEval scores per
        model, dataset, language and metric), ``.by_dataset`` (a multilingual
        dataset's languages collapsed into their mean and range, see
        :func:`glotbench.analysis.dataset_scores.scores_by_dataset`) and
        ``.speed`` (:func:`speed_summary` of the suite's models).

    Examples
    --------
    A majority-class baseline on a local file of 60 labelled reviews
    (``da.jsonl``, records ``{"text": ..., "label": ...}``), two iterations:

    >>> from glotbench import api
    >>> summary = api.run_benchmark(
    ...     None, data=["da.jsonl"], tasks=["sentiment"], languages=["da"],
    ...     models=["majority:"], iterations=2, speed=False, store="run.duckdb",
    ... )
    >>> summary.completed, summary.failures
    (2, [])
    >>> print(summary.to_frame()[["model", "metric", "score", "n_examples"]].round(3)
    ...       .to_string(index=False))
       model   metric  score  n_examples
    majority f1_macro  0.375          36
    majority      mcc  0.000          36
    """
    summary = _benchmark.run_benchmark(
        suite,
        store=store,
        data_dir=data_dir,
        models=models,
        languages=languages,
        tasks=tasks,
        datasets=datasets,
        iterations=iterations,
        executor=executor,
        force=force,
        num_cpus=num_cpus,
        ray_address=ray_address,
        on_event=on_event,
        split_sizes=split_sizes,
        train_sizes=train_sizes,
        shards=shards,
        merge=merge,
        speed_seconds=speed_seconds,
        speed=speed,
        scores=scores,
        speed_of=store_speed_table,
        model_args=model_args,
        device=device,
        batch_size=batch_size,
        limit=limit,
        keep_outputs=keep_outputs,
        data=data,
    )
    if summary.scores is not None:
        summary.by_dataset = scores_by_dataset(summary.scores)
    return summary


def kept_examples(
    store: str | Path = DEFAULT_STORE_PATH,
    *,
    models: list[str],
    datasets: list[str] | None = None,
    languages: list[str] | None = None,
    seeds: list[int] | None = None,
    disagree: bool = False,
    all_wrong: bool = False,
    limit: int | None = None,
) -> Any:
    """Kept outputs of ``models`` side by side, example by example (``glotbench examples``).

    Parameters
    ----------
    store : str or Path, default ``glotbench.duckdb``
        A store whose runs kept their outputs (``run_benchmark(keep_outputs=True)``).
    models : list of str
        The models to list (two or more with ``disagree``).
    datasets, languages : list of str, optional
        Keep only these test sets.
    seeds : list of int, optional
        Keep only these seeds.
    disagree : bool, default False
        Only examples where the models' outputs differ.
    all_wrong : bool, default False
        Only examples where no model's output matches the reference.
    limit : int, optional
        At most this many rows.

    Returns
    -------
    ExamplesResult
        An :class:`~glotbench.analysis.examples.ExamplesResult`: ``.to_frame()``,
        ``.to_dict()``, ``.samples()`` (lm-eval-style sample records).

    Raises
    ------
    InputError
        No model named, fewer than two with ``disagree``, or no kept outputs.

    Examples
    --------
    >>> from glotbench import api
    >>> _ = api.run_benchmark(None, data=["da.jsonl"], tasks=["sentiment"], languages=["da"],
    ...                       models=["majority:"], iterations=1, speed=False,
    ...                       keep_outputs=True, store="kept.duckdb")
    >>> kept = api.kept_examples("kept.duckdb", models=["majority"], limit=2)
    >>> kept.to_frame()[["reference", "output:majority"]].values.tolist()
    [['negative', 'positive'], ['positive', 'positive']]
    >>> kept.total  # test examples before ``limit``
    36
    """
    from glotbench.analysis.examples import compare_outputs
    from glotbench.store.store import Store

    with Store.open(store, read_only=True) as handle:
        outputs = handle.outputs.read(
            models=models, datasets=datasets, languages=languages, seeds=seeds
        )
    return compare_outputs(outputs, models, disagree=disagree, all_wrong=all_wrong, limit=limit)


def model_kinds() -> list[dict[str, Any]]:
    """The model kinds ``models=['KIND:ID']`` (``glotbench run --model``) and suites accept.

    Returns
    -------
    list of dict
        One dict per kind: ``kind``, ``description``, ``requires`` (modules),
        ``extra`` (the ``pip install 'glotbench[EXTRA]'`` that installs them),
        ``available`` (installed here), ``id_option`` (the option ``ID`` sets)
        and ``generative``.

    Examples
    --------
    >>> from glotbench import api
    >>> kinds = {k["kind"]: k for k in api.model_kinds()}
    >>> kinds["vllm"]["extra"], kinds["majority"]["requires"]
    ('vllm', [])
    """
    from glotbench.runner.models.registry import kinds_table

    return kinds_table()


def dump_suite(path: str | Path, suite: str | Path | None = None, **selection: Any) -> Any:
    """Write the suite YAML of a run as :func:`run_benchmark` would select it.

    ``glotbench run FILE`` (or ``run_benchmark(FILE)``) then runs it again.

    Parameters
    ----------
    path : str or Path
        The YAML file to write.
    suite : str or Path, optional
        As in :func:`run_benchmark`.
    **selection
        :func:`run_benchmark`'s selection keywords (``models``,
        ``model_args``, ``tasks``, ``languages``, ``limit``, ``data``, ...).

    Returns
    -------
    tuple of (Path, list of str)
        The file written and notes on the selection.

    Examples
    --------
    >>> from glotbench import api
    >>> path, notes = api.dump_suite("run.yaml", data=["da.jsonl"], tasks=["sentiment"],
    ...                              languages=["da"], models=["majority:"])
    >>> path.name, "majority" in path.read_text()
    ('run.yaml', True)
    """
    return _benchmark.dump_suite(path, suite, **selection)


def speed_summary(
    store: str | Path = DEFAULT_STORE_PATH, *, models: list[str] | None = None
) -> Any:
    """Inference speed per model: ScandEval's GPT-2 tokens per second, mean ± 1.96·SD/√n.

    From the runner's speed benchmark (``run_benchmark(speed=True)``) or
    imported EuroEval speed scores.

    Parameters
    ----------
    store : str or Path, default ``glotbench.duckdb``
        The store.
    models : list of str, optional
        Keep only these models.

    Returns
    -------
    SpeedTable
        A :class:`~glotbench.analysis.speed.SpeedTable`: ``.to_frame()`` has
        one row per model; ``notes`` say why a model has no speed.

    Examples
    --------
    >>> from glotbench import api
    >>> _ = api.import_scores("scores.csv", store="speed.duckdb")
    >>> api.speed_summary("speed.duckdb").to_frame().empty
    True
    """
    return store_speed_table(store, models=models)


def learning_curve(
    store: str | Path = DEFAULT_STORE_PATH,
    *,
    models: list[str] | None = None,
    datasets: list[str] | None = None,
    tasks: list[str] | None = None,
    languages: list[str] | None = None,
    metric: str | None = None,
    n_draws: int = 2000,
    seed: int = 0,
    alpha: float = 0.05,
    confidence_level: float = 0.95,
) -> Any:
    r"""Learning curves (ScandEval Appendix B) from the store.

    Score vs training size per model and test set, with intervals, and the
    size beyond which gains are no longer detectable. From runs of
    ``protocol.train_sizes`` / ``run_benchmark(train_sizes=...)``; see
    :mod:`glotbench.analysis.learning_curve` and ``docs/learning-curves.md``.

    Parameters
    ----------
    store : str or Path, default ``glotbench.duckdb``
        The store holding runs at several training sizes.
    models, datasets, tasks, languages : list of str, optional
        Keep only these.
    metric : str, optional
        The metric (required when the runs hold several).
    n_draws : int, default 2000
        Bootstrap draws of each point's interval.
    seed : int, default 0
        Seed of the draws.
    alpha : float, default 0.05
        Level of the test of a gain between neighbouring sizes.
    confidence_level : float, default 0.95
        Level of the intervals.

    Returns
    -------
    LearningCurves
        A :class:`~glotbench.analysis.learning_curve.LearningCurves`:
        ``.table`` (one row per model, test set and size), ``.saturation``,
        ``.to_dict()``, ``.plot(path)``.

    Raises
    ------
    InputError
        No runs at more than one training size, or several metrics and no
        ``metric``.

    Examples
    --------
    A data file with a training split of 40 and a test split of 60 reviews,
    and a majority-class baseline trained on 10 and 40 of them:

    >>> import json
    >>> from pathlib import Path
    >>> from glotbench import api
    >>> records = [{"text": f"review {i}", "label": "positive" if i % 3 else "negative",
    ...             "split": "train" if i < 40 else "test"} for i in range(100)]
    >>> _ = Path("curve.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    >>> _ = api.run_benchmark(None, data=["curve.jsonl"], tasks=["sentiment"], languages=["da"],
    ...                       models=["majority:"], iterations=2, speed=False,
    ...                       train_sizes=[10, 40], store="curve.duckdb")
    >>> curves = api.learning_curve("curve.duckdb", metric="mcc", n_draws=200)
    >>> curves.table[["train_size", "score"]].values.tolist()  # a majority class: MCC 0
    [[10.0, 0.0], [40.0, 0.0]]
    """
    from glotbench.analysis.sources.learning_curve_store import learning_curves_from_store

    with Store.open(store, read_only=True) as handle:
        return learning_curves_from_store(
            handle,
            models=models,
            datasets=datasets,
            tasks=tasks,
            languages=languages,
            metric=metric,
            n_draws=n_draws,
            seed=seed,
            alpha=alpha,
            confidence_level=confidence_level,
        )


def import_shards(
    folder: str | Path,
    *,
    store: str | Path = DEFAULT_STORE_PATH,
    lock_timeout: float | None = None,
    progress: Any = None,
) -> Any:
    """Merge the Parquet shards of ``folder`` (one per job) into ``store``; idempotent.

    Parameters
    ----------
    folder : str or Path
        The shard folder a run with ``shards=folder, merge=False`` wrote.
    store : str or Path, default ``glotbench.duckdb``
        The store to merge into (created if absent).
    lock_timeout : float, optional
        As in :func:`open_store`.
    progress : callable, optional
        Called with (shards done, shards in all).

    Returns
    -------
    ShardMerge
        A :class:`~glotbench.ingest.shards.ShardMerge`: the runs merged and
        skipped (already in the store).

    See Also
    --------
    run_benchmark : Writes the shards (``shards``, ``merge``).

    Examples
    --------
    >>> from glotbench import api
    >>> _ = api.run_benchmark(None, data=["da.jsonl"], tasks=["sentiment"], languages=["da"],
    ...                       models=["majority:"], iterations=2, speed=False,
    ...                       store="worker.duckdb", shards="shards", merge=False)
    >>> merge = api.import_shards("shards", store="merged.duckdb")
    >>> merge.merged, api.import_shards("shards", store="merged.duckdb").merged
    (2, 0)
    """
    from glotbench.ingest.shards import merge_shards

    with open_store_for_import(store, lock_timeout=lock_timeout) as s:
        return merge_shards(s, folder, progress=progress)


def benchmark_scores(
    store: str | Path = DEFAULT_STORE_PATH,
    *,
    models: list[str] | None = None,
    datasets: list[str] | None = None,
    metrics: list[str] | None = None,
) -> pd.DataFrame:
    """ScandEval scores (mean of bootstrapped-test scores over iterations ± 1.96·SD/√N).

    Parameters
    ----------
    store : str or Path, default ``glotbench.duckdb``
        The store the runs are in.
    models, datasets, metrics : list of str, optional
        Keep only these (default: all).

    Returns
    -------
    pandas.DataFrame
        One row per model, dataset, language and metric: ``score`` (the mean
        over iterations), its ``margin`` (1.96·SD/√N) and ``n_examples``.

    See Also
    --------
    run_benchmark : Whose summary holds the same table.

    Examples
    --------
    >>> from glotbench import api
    >>> _ = api.run_benchmark(None, data=["da.jsonl"], tasks=["sentiment"], languages=["da"],
    ...                       models=["majority:"], iterations=2, speed=False,
    ...                       store="scores-run.duckdb")
    >>> table = api.benchmark_scores("scores-run.duckdb", metrics=["mcc"])
    >>> table[["model", "metric", "score"]].values.tolist()
    [['majority', 'mcc', 0.0]]
    """
    return _benchmark.benchmark_scores(store, models=models, datasets=datasets, metrics=metrics)


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
