"""The public Python API: what the CLI calls.

Everything the command line can do is a function here, returning result
objects with ``.to_frame()`` and ``.to_dict()``. This module is a facade: each
function documents the call and passes it on to the layer that does the work
(``docs/architecture.md``), so the logic lives — and is tested — there:

=========================================  ==========================================
functions                                  work done in
=========================================  ==========================================
store: ``open_store``, ``import_*``,       :mod:`glotbench.core` (``store``, ``ingest``,
``export_store``, ``list_failures``        ``snapshot``, ``failures``), :mod:`glotbench.importers`
``load_replicated``, ``load_lmm_frame``,   :mod:`glotbench.analysis.inputs`
``read_attributes_file``
``analyze_*``, ``euroeval_rank``           :mod:`glotbench.analysis` (``from_inputs``,
                                           ``mixed.study`` and the analysis modules)
``*_files``, ``paired_statistics``,        :mod:`glotbench.analysis.paired_files`,
``significance_test``, ``read_*_file``     :mod:`glotbench.core.line_files`
``leaderboard_source``,                    :mod:`glotbench.report.sources`,
``write_leaderboard_site``, ``write_report``  :mod:`glotbench.report.sites`
``run_benchmark``, ``list_suites``,        :mod:`glotbench.runner.benchmark`,
``build_scala``, ``benchmark_scores``      :mod:`glotbench.runner.build`, ``runner.protocol``
``checklist_*``                            :mod:`glotbench.checklist.commands`
``demo``, ``write_demo_pages``,            :mod:`glotbench.demo_xtreme`,
``starter_demo``                           :mod:`glotbench.demo_starter`
``list_metrics``                           :mod:`glotbench.metrics.catalog`
=========================================  ==========================================
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from glotbench import demo_xtreme as _demo
from glotbench.analysis import from_inputs as _from_inputs
from glotbench.analysis import inputs as _inputs
from glotbench.analysis import paired_files as _paired
from glotbench.analysis.aggregate import Leaderboard
from glotbench.analysis.aso import ASOResult, MultiASOResult, aso, multi_aso
from glotbench.analysis.compare import Aggregates, Comparison, aggregate_scores, compare_models
from glotbench.analysis.datasize import DEFAULT_SIZES, STRATEGIES, DataSizeResult
from glotbench.analysis.draws import DrawSettings
from glotbench.analysis.euroeval_rank import EuroEvalRank
from glotbench.analysis.headline import Analysis, AnalysisSettings
from glotbench.analysis.headline import analyze as analyze_headline
from glotbench.analysis.mixed import study as _study
from glotbench.analysis.mixed.model import LmmResult
from glotbench.analysis.ranks import Ranks, rank_models
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
from glotbench.analysis.speed import store_speed_table
from glotbench.analysis.transfer import TransferGroups
from glotbench.analysis.variance import (
    ComponentTable,
    VarianceComponents,
    components,
    variance_components,
)
from glotbench.checklist import commands as _checklist
from glotbench.checklist.commands import ChecklistExample, ChecklistExpansion
from glotbench.core import (
    ImportResult,
    Store,
    StoreSummary,
    add_scores_frame,
    import_examples_file,
    import_scores_file,
)
from glotbench.core import failures as _failures
from glotbench.core import line_files as _line_files
from glotbench.core.ingest import open_store_for_import
from glotbench.core.layout import DEFAULT_STORE_PATH
from glotbench.core.store import ExportResult, FailureList
from glotbench.demo_starter import StarterDemo, starter_demo
from glotbench.demo_xtreme import Demo
from glotbench.errors import InputError
from glotbench.importers.common import HarnessImportResult
from glotbench.importers.euroeval import import_euroeval as _import_euroeval
from glotbench.importers.lm_eval import import_lm_eval as _import_lm_eval
from glotbench.importers.xtreme import import_xtreme as _import_xtreme
from glotbench.metrics import catalog as _catalog
from glotbench.metrics.base import Metric
from glotbench.report import sites as _sites
from glotbench.report import sources as _sources
from glotbench.report.sites import SiteResult
from glotbench.report.sources import LeaderboardSource
from glotbench.report.table_files import write_table
from glotbench.resample import BootstrapResult, bootstrap, bootstrap_metric
from glotbench.runner import benchmark as _benchmark
from glotbench.runner import build as _build
from glotbench.runner.build import ScalaBuild

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


# --- analysis commands ---------------------------------------------------------


def demo_leaderboard(confidence_level: float = 0.95) -> Leaderboard:
    """Leaderboard of the embedded XTREME-R baselines (published per-language scores)."""
    return _demo.demo_leaderboard(confidence_level)


def demo(
    n_draws: int = 10_000,
    seed: int = 0,
    k: int | None = None,
    *,
    settings: AnalysisSettings | None = None,
) -> Demo:
    """The demo on the embedded XTREME-R baselines.

    The published table has one score per model, task and language (no seeds
    or replicates), so uncertainty comes from the languages (scheme
    languages-only). One :class:`AnalysisSettings` (default: ``n_draws``,
    ``seed``; each task's languages resampled with replacement, or subsampled
    to ``k`` without replacement when ``k`` is given) decides the SEs, the
    pairwise effect sizes and the rank distributions, all from the same draws
    of the models with every task — the numbers the demo's XTREME-R pages show.
    """
    return _demo.demo(n_draws, seed, k, settings=settings)


def write_demo_pages(
    out: str | Path,
    seed: int = 0,
    *,
    starter_store: str | Path | None = None,
    starter: StarterDemo | None = None,
    settings: AnalysisSettings | None = None,
    xtreme: Demo | None = None,
) -> list[Path]:
    """Write the demo's leaderboard folders and HTML reports into ``out``.

    With ``starter`` (the demo's computed :class:`StarterDemo`): its analysed
    scores and its headline analysis go to ``out/leaderboard`` and
    ``out/report.html`` — the very numbers the terminal shows — and the
    XTREME-R baselines to ``out/xtreme-r/``. ``starter_store`` (older form):
    the starter store, read with ``settings``. Without either, the XTREME-R
    pages go to ``out`` itself. ``settings`` (default: the starter's, else
    ``seed`` and 10,000 draws) decide the draws of every page; ``xtreme``: the
    computed XTREME-R :class:`Demo`, whose analysis its pages render.
    """
    return _demo.write_demo_pages(
        out, seed, starter_store=starter_store, starter=starter, settings=settings, xtreme=xtreme
    )


def list_metrics() -> list[dict[str, Any]]:
    """Name, description and statistics layout of every registered metric."""
    return _catalog.list_metrics()


def read_examples_file(path: Path) -> list[Any]:
    """One example per line: JSON values for ``.jsonl``/``.json`` files, else the stripped text.

    A tag sequence in a text file is one line of whitespace-separated tags.
    """
    return _line_files.read_examples_file(path)


def bootstrap_files(
    metric: str,
    predictions: Path,
    references: Path,
    *,
    n_resamples: int = 10_000,
    confidence_level: float = 0.95,
    seed: int = 0,
    method: str = "percentile",
) -> BootstrapResult:
    """Bootstrap a metric over a predictions file against a references file (line-aligned)."""
    return _paired.bootstrap_files(
        metric,
        predictions,
        references,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        seed=seed,
        method=method,
    )


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
    "show_store",
]


def open_store(
    store: str | Path = DEFAULT_STORE_PATH,
    *,
    read_only: bool = False,
    hold: bool = True,
    lock_timeout: float | None = None,
) -> Store:
    """Open (or create, unless ``read_only``) a results store; use it as a context manager.

    Waits up to ``lock_timeout`` s (default ``$GLOTBENCH_LOCK_TIMEOUT`` or 60) for
    a store another process holds; ``hold=False`` locks the file only while it is
    read or written (see ``docs/store.md``, Concurrency).
    """
    return Store.open(store, read_only=read_only, hold=hold, lock_timeout=lock_timeout)


def import_scores(
    path: str | Path,
    *,
    store: str | Path = DEFAULT_STORE_PATH,
    allow_unknown_metrics: bool = False,
    percent: bool = False,
) -> ImportResult:
    """Import a tidy scores file (CSV / JSONL / Parquet), streamed in chunks.

    Every row is validated and compared with the store before anything is
    written; then rows are added in batches (an interrupted import is
    completed by running it again). Re-importing the same file is a no-op
    (``status == "skipped"``); rows
    already stored with the same values are skipped; a stored key with a
    different value raises :class:`~glotbench.errors.InputError` and nothing
    is written. ``percent``: the file gives 0–1 metrics in percent (divided
    by 100 on import; BLEU/chrF are 0–100 anyway).
    """
    with open_store_for_import(store) as s:
        return import_scores_file(
            s, path, allow_unknown_metrics=allow_unknown_metrics, percent=percent
        )


def import_examples(
    path: str | Path,
    *,
    store: str | Path = DEFAULT_STORE_PATH,
    labels: Sequence[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ImportResult:
    """Import a tidy per-example file: validated first, then one transaction per run.

    Runs already complete in the store are skipped, so repeating an
    interrupted import completes it. ``labels`` (e.g. ``["POS", "NEG"]``) fixes
    the label set of label-count metrics (macro-F1, MCC, ...); otherwise it is
    read from the ``tp[LABEL]`` column names.
    """
    with open_store_for_import(store) as s:
        return import_examples_file(s, path, labels=labels, progress=progress)


def import_parquet(path: str | Path, *, store: str | Path = DEFAULT_STORE_PATH) -> ImportResult:
    """Merge a Parquet snapshot written by :func:`export_store` into ``store``."""
    with open_store_for_import(store) as s:
        return s.import_parquet(path)


def add_scores(
    frame: pd.DataFrame,
    *,
    store: str | Path = DEFAULT_STORE_PATH,
    source: str = "<DataFrame>",
    allow_unknown_metrics: bool = False,
) -> ImportResult:
    """Add a DataFrame of scores (the columns of a scores file) in one transaction."""
    with open_store_for_import(store) as s:
        return add_scores_frame(
            s, frame, source=source, allow_unknown_metrics=allow_unknown_metrics
        )


def show_store(store: str | Path = DEFAULT_STORE_PATH) -> StoreSummary:
    """What the store holds: counts and a per (model, task, language) table."""
    with Store.open(store, read_only=True) as s:
        return s.summary()


def export_store(
    out: str | Path,
    *,
    store: str | Path = DEFAULT_STORE_PATH,
    table: str = "all",
    keep_formulas: bool = False,
) -> ExportResult:
    """Export table(s) to CSV or Parquet (see :meth:`Store.export` for the file names).

    CSV text cells that a spreadsheet would run as a formula get a leading
    apostrophe unless ``keep_formulas``.
    """
    with Store.open(store, read_only=True) as s:
        files = s.export(out, table=table, keep_formulas=keep_formulas)
    return ExportResult(store=str(store), table=table, files=[str(f) for f in files])


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

    With ``resolve`` the matching open failures are marked resolved (nothing
    is deleted) and the result lists them.
    """
    return _failures.list_failures(
        store,
        models=models,
        datasets=datasets,
        tasks=tasks,
        languages=languages,
        failure_ids=failure_ids,
        include_resolved=include_resolved,
        resolve=resolve,
    )


# --- replication-aware analyses ----------------------------------------------------


def load_replicated(
    *,
    input: str | Path | None = None,
    store: str | Path | None = None,
    metric: str | Sequence[str] | None = None,
    models: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
    n_replicates: int = 1000,
    seed: int = 0,
    configs: Mapping[str, str] | None = None,
) -> ReplicatedScores | ComponentTable:
    """The replicated scores an analysis works on, from a file or a store.

    * ``input``: a tidy CSV / JSONL / Parquet file — either scores with
      optional ``seed`` and ``replicate`` columns, or ready SDs
      (``sigma_seed``/``sigma_boot`` or ``sigma_w``, one row per model and
      language);
    * ``store``: per-example statistics (bootstrapped here, paired across
      models, ``n_replicates`` per seed) or, when the store holds no such
      runs, its scores table; ``configs`` (model -> config hash) keeps only
      that configuration of the models it names.

    ``metric``: ``"m"`` (every task on ``m``), ``"task=m"`` entries (per task),
    or None: each task on its primary metric (see
    :mod:`glotbench.analysis.selection`).
    """
    return _inputs.load_replicated(
        input=input,
        store=store,
        metric=metric,
        models=models,
        tasks=tasks,
        languages=languages,
        n_replicates=n_replicates,
        seed=seed,
        configs=configs,
    )


def analyze_variance(source: ReplicatedScores | ComponentTable) -> VarianceComponents:
    """Variance components (σ_b, σ_seed, σ_boot, σ_w) per model and language."""
    table = source if isinstance(source, ComponentTable) else components(source)
    return variance_components(table)


def analyze_aggregate(
    source: ReplicatedScores | ComponentTable, settings: DrawSettings
) -> Aggregates:
    """Mean, geometric mean and median over languages with standard errors."""
    return aggregate_scores(source, settings)


def analyze_compare(
    source: ReplicatedScores | ComponentTable,
    settings: DrawSettings,
    confidence_level: float = 0.95,
    per_language: bool = False,
    pairs_out: str | Path | None = None,
) -> Comparison:
    """Pairwise differences with SDs over draws and effect sizes.

    Per-language comparisons are summarised (per language and per pair);
    ``per_language=True`` keeps the full table (one row per pair and language)
    in the result, and ``pairs_out`` writes that table to a Parquet file (CSV
    if the name ends in ``.csv``).
    """
    result = compare_models(
        source,
        settings,
        confidence_level=confidence_level,
        per_language=per_language or pairs_out is not None,
    )
    if pairs_out is not None:
        write_table(result.per_language, pairs_out)
        if not per_language:
            result = replace(result, per_language=None)
    return result


def analyze_ranks(
    source: ReplicatedScores | ComponentTable,
    settings: DrawSettings,
    confidence_level: float = 0.95,
    *,
    rank_method: str = "2026-05-28",
    rank_bootstraps: int = 1000,
) -> Ranks:
    """Rank distributions, rank intervals and EuroEval rank scores with intervals.

    ``rank_method``: EuroEval's current method (``2026-05-28``, default) or the
    superseded ``2025`` one; see ``docs/analysis.md``.
    """
    return rank_models(
        source,
        settings,
        confidence_level=confidence_level,
        rank_method=rank_method,
        rank_bootstraps=rank_bootstraps,
    )


def euroeval_rank(
    *,
    input: str | Path | None = None,
    store: str | Path | None = None,
    metrics: Sequence[str] | None = None,
    models: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
    method: str = "2026-05-28",
    n_bootstraps: int = 1000,
    seed: int = 0,
    confidence_level: float = 0.95,
) -> EuroEvalRank:
    """EuroEval's leaderboard rank score per dataset, task, language and overall.

    Reads iteration scores (rows with a ``replicate`` index; e.g. a store
    holding ``glotbench import euroeval`` results) from a tidy file or the
    store's scores table. ``metrics``: each dataset's primary metric, the first
    listed one it has. ``method``: ``2026-05-28`` (EuroEval's current method,
    bootstrap median and interval) or ``2025`` (superseded Welch-gated method).
    """
    return _from_inputs.euroeval_rank(
        input=input,
        store=store,
        metrics=metrics,
        models=models,
        tasks=tasks,
        languages=languages,
        method=method,
        n_bootstraps=n_bootstraps,
        seed=seed,
        confidence_level=confidence_level,
    )


__all__ += ["euroeval_rank"]


# --- mixed models (issue 5) ---


def load_lmm_frame(
    input: str | Path | None = None,
    store: str | Path | None = None,
    *,
    metric: str | None = None,
    models: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
) -> tuple[pd.DataFrame, Callable[..., InputError]]:
    """A tidy table for a mixed model: a scores file, or the store's run scores or scores table.

    From a store: one score per stored run of ``metric``, computed from its
    per-example statistics (the metric's score of the summed statistics; see
    :func:`glotbench.analysis.run_scores.run_scores_from_store`) — the runner's
    stores hold only these; when no run matches, the store's scores table.
    Returns the frame and an error factory ``(message, position, field)`` that
    locates problems in the file (line / row) when the data came from a file.
    """
    return _inputs.load_lmm_frame(
        input, store, metric=metric, models=models, tasks=tasks, languages=languages
    )


def analyze_mixed_model(
    frame: pd.DataFrame,
    formula: str,
    *,
    emmeans: Sequence[str] = (),
    reml: bool = True,
    adjust: str = "tukey",
    confidence_level: float = 0.95,
    eta2_alternative: str = "greater",
    error: Callable[..., InputError] | None = None,
    qq_plot: str | Path | None = None,
    n_sim: int = 250,
    seed: int = 0,
    residuals: bool = False,
    residuals_by: Sequence[str] | None = None,
) -> LmmResult:
    """Fit a linear mixed model (lme4 formula) and report as lmerTest/emmeans/effectsize do.

    With ``qq_plot`` also simulates DHARMa-style residuals, runs their tests
    (reported under ``residual_checks``) and writes the Q-Q plot there; with
    ``residuals`` simulates and tests them without writing a plot (the scaled
    residuals are in ``residual_checks["residuals"]``, e.g. for ``glotbench report``).
    The tests include DHARMa's quantile test against the fixed-effect prediction
    and its per-group tests (KS uniformity within each group, Levene between
    groups) for each factor of ``residuals_by`` (``a:b`` = the cells of two
    factors; default: the factors of the fixed effects); giving
    ``residuals_by`` implies ``residuals``.
    """
    return _study.analyze_mixed_model(
        frame,
        formula,
        emmeans=emmeans,
        reml=reml,
        adjust=adjust,
        confidence_level=confidence_level,
        eta2_alternative=eta2_alternative,
        error=error,
        qq_plot=qq_plot,
        n_sim=n_sim,
        seed=seed,
        residuals=residuals,
        residuals_by=residuals_by,
    )


# --- design analyses (issue 6) ---
# Significance tests (paired bootstrap, permutation, ASO, McNemar, corrections), the
# evaluation-size analysis and transfer groups. Thin wrappers that read files or the
# store and call glotbench.analysis.{significance,aso,datasize,transfer}.


def read_scores_file(path: str | Path) -> np.ndarray:
    """One number per line (e.g. one score per seed, or one per-example score).

    Trailing blank lines are ignored; a blank line before the last number, a
    line that is not a number, or a file without numbers is an
    :class:`InputError` naming the file and line.
    """
    return _line_files.read_scores_file(path)


def aso_files(
    paths: Sequence[str | Path],
    *,
    confidence_level: float = 0.95,
    num_bootstrap_iterations: int = 1000,
    seed: int | None = 0,
    num_comparisons: int = 1,
    use_bonferroni: bool = True,
) -> ASOResult | MultiASOResult:
    """ASO of two score files (A against B), or ``multi_aso`` of three or more.

    Each file holds one score per line (e.g. one per seed); systems are named
    by the file stems.
    """
    return _paired.aso_files(
        paths,
        confidence_level=confidence_level,
        num_bootstrap_iterations=num_bootstrap_iterations,
        seed=seed,
        num_comparisons=num_comparisons,
        use_bonferroni=use_bonferroni,
    )


def paired_statistics(
    file_a: str | Path,
    file_b: str | Path,
    *,
    references: str | Path | None = None,
    metric: str | None = None,
) -> tuple[np.ndarray, np.ndarray, Metric]:
    """Per-example statistics of two systems from files.

    With ``references``: ``file_a``/``file_b`` are line-aligned predictions,
    scored by ``metric`` (fitted on both systems' predictions, so label sets
    agree). Without: each file holds one per-example score per line and the
    metric is their mean.
    """
    return _paired.paired_statistics(file_a, file_b, references=references, metric=metric)


def store_pair_statistics(
    store: str | Path,
    *,
    dataset: str,
    task: str,
    language: str,
    metric: str,
    models: Sequence[str],
    seed: int | None = None,
) -> tuple[np.ndarray, np.ndarray, Metric]:
    """Per-example statistics of two models' runs from the store (one run each)."""
    return _paired.store_pair_statistics(
        store,
        dataset=dataset,
        task=task,
        language=language,
        metric=metric,
        models=models,
        seed=seed,
    )


def significance_test(
    test: str,
    stats_a: np.ndarray,
    stats_b: np.ndarray,
    metric: Metric,
    *,
    n_resamples: int = 10_000,
    confidence_level: float = 0.95,
    seed: int = 0,
    names: tuple[str, str] = ("A", "B"),
) -> PairedTestResult:
    """Run the paired ``bootstrap`` or ``permutation`` test on per-example statistics."""
    return _paired.significance_test(
        test,
        stats_a,
        stats_b,
        metric,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        seed=seed,
        names=names,
    )


def mcnemar_files(
    file_a: str | Path,
    file_b: str | Path,
    *,
    references: str | Path | None = None,
    exact: bool | None = None,
    correction: bool = True,
) -> McNemarResult:
    """McNemar's test from files: 0/1 outcomes per line, or predictions + references.

    With ``references`` an example is correct when its prediction line equals
    the reference line (after stripping whitespace).
    """
    return _paired.mcnemar_files(
        file_a, file_b, references=references, exact=exact, correction=correction
    )


def analyze_datasize(
    *,
    store: str | Path | None = None,
    dataset: str | None = None,
    task: str | None = None,
    language: str | None = None,
    metric: str | None = None,
    models: Sequence[str] | None = None,
    gold: str | Path | None = None,
    predictions: Sequence[str | Path] = (),
    simulate_models: int = 0,
    simulate_seeds: int = 3,
    sizes: Sequence[int | None] = DEFAULT_SIZES,
    strategies: Sequence[str] = STRATEGIES,
    n_draws: int = 100,
    level: float = 0.9,
    seed: int = 0,
    aso: bool = True,
    aso_draws: int | None = 25,
    aso_bootstrap_iterations: int = 200,
) -> DataSizeResult:
    """Evaluation-size analysis from one of three sources.

    * ``gold`` + ``predictions``: CoNLL-U prediction files (``metric`` las, uas
      or upos; a ``-seedN`` suffix of a file name marks a seed of one model);
    * ``gold`` + ``simulate_models``: simulated UPOS taggers (error rates 2 %
      to 2 % + 1 % × (models − 1), ``simulate_seeds`` seeds each) on the gold file;
    * ``store``: the runs of ``dataset``/``task``/``language``/``metric``
      (sizes in tokens when the metric has a ``tokens`` or ``words`` statistic
      or the runs store ``test_tokens`` metadata, as ``glotbench run`` does for
      token tasks such as NER; else in examples), examples in the order of
      their stored ``source_position`` (else the stored order, with a note:
      :func:`glotbench.analysis.datasize_store.datasize_inputs_from_store`).
    """
    return _from_inputs.analyze_datasize(
        store=store,
        dataset=dataset,
        task=task,
        language=language,
        metric=metric,
        models=models,
        gold=gold,
        predictions=predictions,
        simulate_models=simulate_models,
        simulate_seeds=simulate_seeds,
        sizes=sizes,
        strategies=strategies,
        n_draws=n_draws,
        level=level,
        seed=seed,
        aso=aso,
        aso_draws=aso_draws,
        aso_bootstrap_iterations=aso_bootstrap_iterations,
    )


def analyze_transfer(
    input: str | Path | None = None,
    *,
    example: bool = False,
    store: str | Path | None = None,
    metrics: Mapping[str, str] | None = None,
    observations: str = "model",
    min_size: int = 2,
) -> TransferGroups:
    """Benchmark language groups by ScandEval's mean F-statistic (Nielsen 2023, §3.3).

    ``input``: a tidy CSV / JSONL / Parquet file with ``model_language``,
    ``language`` (or ``dataset_language``), ``score`` and optionally ``model``
    and ``dataset``; ``example=True`` uses the paper's Appendix A table
    (:func:`glotbench.data.scandeval_transfer_scores`); ``store``: the
    zero-shot runs of a store (``glotbench run scandi-transfer``; ``metrics``
    maps a task to its metric, default the task's primary metric; see
    :func:`glotbench.analysis.transfer_store.transfer_scores_from_store`).
    See :func:`glotbench.analysis.transfer.transfer_groups`.
    """
    return _from_inputs.analyze_transfer(
        input,
        example=example,
        store=store,
        metrics=metrics,
        observations=observations,
        min_size=min_size,
    )


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


def read_model_metadata(path: str | Path) -> dict[str, dict[str, Any]]:
    """Model metadata from a CSV/JSONL/Parquet file with a ``model`` column (one row per model)."""
    return _sources.read_model_metadata(path)


def leaderboard_source(
    *,
    store: str | Path | None = None,
    demo: bool = False,
    metric: str | None = None,
    models: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
    metadata_file: str | Path | None = None,
    n_replicates: int = 200,
    seed: int = 0,
) -> LeaderboardSource:
    """Replicated scores and model metadata for the leaderboard / report.

    ``demo``: the embedded XTREME-R baselines. ``store``: its runs (per-example
    statistics, bootstrapped by the engine with ``n_replicates`` paired
    replicates per run, one metric per task) or, if it holds no runs, its
    scores table. ``metadata_file`` adds or overrides model metadata.
    """
    return _sources.leaderboard_source(
        store=store,
        demo=demo,
        metric=metric,
        models=models,
        tasks=tasks,
        languages=languages,
        metadata_file=metadata_file,
        n_replicates=n_replicates,
        seed=seed,
    )


def write_leaderboard_site(
    out: str | Path,
    source: LeaderboardSource,
    *,
    title: str | None = None,
    language_groups: dict[str, Sequence[str]] | None = None,
    n_draws: int = 1000,
    seed: int = 0,
    confidence_level: float = 0.95,
    settings: AnalysisSettings | None = None,
    analysis: Analysis | None = None,
) -> SiteResult:
    """Write the static interactive leaderboard folder ``out`` (``out/index.html``).

    ``settings`` (default: from ``n_draws``, ``seed``, ``confidence_level``)
    decide every view's draws; ``analysis``: the request's computed result
    (:func:`analyze_headline` of ``source.replicated``), shown as is.
    """
    return _sites.write_leaderboard_site(
        out,
        source,
        title=title,
        language_groups=language_groups,
        n_draws=n_draws,
        seed=seed,
        confidence_level=confidence_level,
        settings=settings,
        analysis=analysis,
    )


def parse_language_groups(specs: Sequence[str]) -> dict[str, list[str]]:
    """``NAME=lang,lang`` strings to a dict (the built-in groups are added by the caller)."""
    return _sites.parse_language_groups(specs)


__all__ += [
    "LeaderboardSource",
    "SiteResult",
    "leaderboard_source",
    "parse_language_groups",
    "read_model_metadata",
    "write_leaderboard_site",
]


def read_attributes_file(path: str | Path) -> pd.DataFrame:
    """Per-example attributes (CSV, TSV, JSONL or Parquet with an ``example_id`` column)."""
    return _inputs.read_attributes_file(path)


def analyze_buckets(
    *,
    store: str | Path,
    attributes: str | Path | pd.DataFrame | None = None,
    task: str,
    language: str,
    metric: str,
    dataset: str | None = None,
    models: Sequence[str] | None = None,
    columns: Sequence[str] | None = None,
    n_buckets: int = 4,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> Any:
    """Bucket analysis of stored runs on one dataset (see :mod:`glotbench.analysis.buckets`).

    Without ``attributes`` the built-in attributes the runner stored are used
    (docs/buckets.md); with them, the file's columns are added to (and replace)
    the stored ones of the same name.
    """
    return _from_inputs.analyze_buckets(
        store=store,
        attributes=attributes,
        task=task,
        language=language,
        metric=metric,
        dataset=dataset,
        models=models,
        columns=columns,
        n_buckets=n_buckets,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        seed=seed,
    )


__all__ += ["analyze_buckets", "read_attributes_file"]


def write_report(
    out: str | Path,
    source: LeaderboardSource,
    *,
    title: str | None = None,
    n_draws: int = 1000,
    seed: int = 0,
    max_models: int = 10,
    datasize: Sequence[DataSizeResult | str | Path] = (),
    lmm: Sequence[LmmResult | str | Path] = (),
    settings: AnalysisSettings | None = None,
    analysis: Analysis | None = None,
) -> SiteResult:
    """Write the HTML report (one self-contained file) of a leaderboard source.

    Variance components, the leaderboard's aggregates, pairwise comparisons
    (forest plot) and rank distributions (heatmap) of the ``max_models`` best
    models; draws are non-parametric when the scores are replicated, else
    languages-only with languages resampled with replacement.

    ``datasize`` adds evaluation-size analyses (results of :func:`analyze_datasize`
    or files of ``glotbench analyze datasize --json``: τ-vs-size curves and the
    recommendation); ``lmm`` adds mixed models (results of
    :func:`analyze_mixed_model`, best with ``residuals=True``, or files of
    ``glotbench analyze lmm --residuals --json``: Q-Q plot of the simulated
    residuals, their tests, fixed effects and ANOVA). Files are read first, so
    a bad one fails before anything is computed.

    ``settings`` (default: ``n_draws`` and ``seed``, languages resampled with
    replacement) decide the draws of the aggregates, comparisons and ranks;
    ``analysis``: the request's computed result (:func:`analyze_headline`),
    whose aggregates the report shows as is.
    """
    return _sites.write_report(
        out,
        source,
        title=title,
        n_draws=n_draws,
        seed=seed,
        max_models=max_models,
        datasize=datasize,
        lmm=lmm,
        settings=settings,
        analysis=analysis,
    )


__all__ += ["write_report"]


def analyze_missing_data(
    frame: pd.DataFrame,
    formula: str,
    factor: str,
    *,
    subject: str,
    within: Sequence[str],
    fractions: Sequence[float] | None = None,
    n_repeats: int = 20,
    alpha: float = 0.05,
    seed: int = 0,
) -> Any:
    """Missing-data robustness study (Benito-Santos et al. §5): remove 5 %…50 % of rows at
    random, refit, and report how often the mixed model and repeated-measures ANOVA still
    detect ``factor`` (p < alpha)."""
    return _study.analyze_missing_data(
        frame,
        formula,
        factor,
        subject=subject,
        within=within,
        fractions=fractions,
        n_repeats=n_repeats,
        alpha=alpha,
        seed=seed,
    )


# --- harness importers (issue 8) ---


__all__ += ["HarnessImportResult", "import_euroeval", "import_lm_eval", "import_xtreme"]


def import_lm_eval(
    path: str | Path,
    *,
    store: str | Path = DEFAULT_STORE_PATH,
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
    language ``all``). ``families`` adds task-name prefixes split as
    ``<family>_<language>``; ``task_map`` entries ``TASK=LANG`` or
    ``TASK=NAME:LANG`` name the task and language of one task (and
    ``task_map_file`` many); ``auto_language`` splits names ending in an ISO
    639 code (``scala_da``). Re-importing the same folder is a no-op.
    See ``docs/importers/lm-eval.md``.
    """
    with open_store_for_import(store) as s:
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
    path: str | Path, *, store: str | Path = DEFAULT_STORE_PATH
) -> HarnessImportResult:
    """Import a EuroEval / ScandEval results JSONL file (pre-v17 records and v17+ EEE records).

    Totals become scores on 0–1 with ``stderr`` = EuroEval's 1.96·SE / 1.96;
    every iteration becomes a replicate score. See ``docs/importers/euroeval.md``.
    """
    with open_store_for_import(store) as s:
        return _import_euroeval(s, path)


def import_xtreme(
    predictions: str | Path,
    labels: str | Path,
    *,
    store: str | Path = DEFAULT_STORE_PATH,
    model: str | None = None,
    tasks: Sequence[str] | None = None,
    seed: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> HarnessImportResult:
    """Score an XTREME / XTREME-R predictions folder against a labels folder, per example.

    The result's ``aggregates`` reproduce XTREME's averaging (unweighted over
    languages; QA as the mean of EM and F1). See ``docs/importers/xtreme.md``.
    """
    with open_store_for_import(store) as s:
        return _import_xtreme(
            s, predictions, labels, model=model, tasks=tasks, seed=seed, progress=progress
        )


# --- benchmark runner (issue 4) ---


def run_benchmark(
    suite: str | Path,
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
    shards: str | Path | None = None,
    merge: bool = True,
    speed_seconds: float | None = None,
    speed: bool = True,
    scores: bool = True,
) -> Any:
    """Run (or resume) a benchmark suite — a built-in name or a YAML file — into ``store``.

    ``shards`` (a folder all workers can write to): each job's statistics are
    written as a Parquet shard and merged by this process; ``merge=False``
    leaves them for :func:`import_shards` (``docs/runner.md``, Several machines).

    ``split_sizes`` (``{"train": 128, "test": 256}`` or ``"train=128,test=256"``)
    replaces those split sizes of every dataset (a smaller run, e.g. for CI).
    ``speed_seconds`` / ``speed`` set or turn off ScandEval's speed benchmark
    (one per model; ``docs/runner.md``, Inference speed).

    Returns a :class:`~glotbench.runner.executors.RunSummary` (``.to_dict()``,
    ``.to_frame()`` = ScandEval scores per model, dataset and metric;
    ``.speed`` = :func:`speed_summary` of the suite's models).
    """
    return _benchmark.run_benchmark(
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
        shards=shards,
        merge=merge,
        speed_seconds=speed_seconds,
        speed=speed,
        scores=scores,
        speed_of=store_speed_table,
    )


def speed_summary(
    store: str | Path = DEFAULT_STORE_PATH, *, models: list[str] | None = None
) -> Any:
    """Inference speed per model: ScandEval's GPT-2 tokens per second, mean ± 1.96·SD/√n.

    From the runner's speed benchmark (``glotbench run``) or imported EuroEval
    speed scores. Returns a :class:`~glotbench.analysis.speed.SpeedTable`.
    """
    return store_speed_table(store, models=models)


def import_shards(
    folder: str | Path,
    *,
    store: str | Path = DEFAULT_STORE_PATH,
    progress: Any = None,
) -> Any:
    """Merge the Parquet shards of ``folder`` (one per job) into ``store``; idempotent.

    Returns a :class:`~glotbench.core.shards.ShardMerge`.
    """
    from glotbench.core.shards import merge_shards

    with open_store_for_import(store) as s:
        return merge_shards(s, folder, progress=progress)


def benchmark_scores(
    store: str | Path = DEFAULT_STORE_PATH,
    *,
    models: list[str] | None = None,
    datasets: list[str] | None = None,
    metrics: list[str] | None = None,
) -> pd.DataFrame:
    """ScandEval scores (mean of bootstrapped-test scores over iterations ± 1.96·SD/√N)."""
    return _benchmark.benchmark_scores(store, models=models, datasets=datasets, metrics=metrics)


def list_suites() -> dict[str, str]:
    """Built-in suites: name -> description."""
    return _benchmark.list_suites()


def build_scala(
    treebank: list[str | Path],
    out: str | Path,
    *,
    language: str = "und",
    seed: int = 4242,
    splits: dict[str, int] | None = None,
) -> ScalaBuild:
    """Build a ScaLA dataset from UD CoNLL-U files into a JSONL file with a ``split`` field.

    The file can be used in a suite with ``loader: jsonl`` and ``splits: predefined``.
    """
    return _build.build_scala(treebank, out, language=language, seed=seed, splits=splits)


__all__ += ["benchmark_scores", "build_scala", "list_suites", "run_benchmark", "ScalaBuild"]
__all__ += ["import_shards"]


# --- checklist (issue 7) ---


def checklist_expand(
    templates: Sequence[str | Path] | None = None,
    out: str | Path = "checklist_cases.jsonl",
    *,
    languages: Sequence[str] | None = None,
    tests: Sequence[str] | None = None,
    n: int | None = None,
) -> ChecklistExpansion:
    """Expand template suites (default: the shipped ones) into a cases JSONL file.

    One row per text (``id``, ``case_id``, ``text``, expectation, …); predict
    every ``id`` and score with :func:`checklist_score`.
    """
    return _checklist.checklist_expand(templates, out, languages=languages, tests=tests, n=n)


def checklist_score(
    cases: str | Path | Sequence[Any],
    predictions: Sequence[str | Path] | dict[str, Any] | None = None,
    *,
    models: Sequence[str] | None = None,
    predict: Any = None,
    model: str | None = None,
    store: str | Path | None = None,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> Any:
    """Failure rates per model, test and language with paired bootstrap CIs.

    ``cases`` is a cases file (``checklist_expand``) or a list of
    :class:`~glotbench.checklist.Case`. Predictions come from files keyed by
    text ``id`` (JSONL with ``label``/``probs``, or CSV/TSV; model names from
    ``models`` or the file stems), from a dict model → {id: prediction}, or
    from a callable ``predict(texts) -> labels or probabilities`` (named
    ``model``). With ``store`` every (model, test, language) is written as a
    run (task ``checklist:<test>``, dataset ``checklist:<suite>``, metric
    ``accuracy`` = pass rate over the case ids); re-running skips stored runs.
    Returns a :class:`~glotbench.checklist.ChecklistResult`.
    """
    return _checklist.checklist_score(
        cases,
        predictions,
        models=models,
        predict=predict,
        model=model,
        store=store,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        seed=seed,
    )


def checklist_example() -> ChecklistExample:
    """Summary of the embedded MultiCheckList error rates of XLM-R (Ruder et al. 2021)."""
    return _checklist.checklist_example()


__all__ += [
    "ChecklistExample",
    "ChecklistExpansion",
    "checklist_example",
    "checklist_expand",
    "checklist_score",
]
