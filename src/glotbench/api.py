"""The public Python API: what the CLI calls.

Everything the command line can do is a function here, returning result
objects with ``.to_frame()`` and ``.to_dict()``.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from glotbench.analysis.aggregate import Leaderboard, leaderboard
from glotbench.analysis.compare import Aggregates, Comparison, aggregate_scores, compare_models
from glotbench.analysis.draws import DrawSettings
from glotbench.analysis.euroeval_rank import EuroEvalRank, iterations_from_frame
from glotbench.analysis.euroeval_rank import euroeval_rank as euroeval_rank_scores
from glotbench.analysis.headline import Analysis, AnalysisSettings
from glotbench.analysis.headline import analyze as analyze_headline
from glotbench.analysis.ranks import Ranks, rank_models
from glotbench.analysis.replicates import (
    ReplicatedScores,
    replicates_from_frame,
)
from glotbench.analysis.results import records
from glotbench.analysis.selection import (
    MetricChoice,
    replicates_from_store_selection,
    replicates_from_table,
    select_score_rows,
)
from glotbench.analysis.variance import (
    ComponentTable,
    VarianceComponents,
    components,
    components_from_summary,
    variance_components,
)
from glotbench.core.analysis_cache import cache_key
from glotbench.data import XTREME_R_CAVEATS, xtreme_r_baselines
from glotbench.demo_starter import STARTER_METRIC, StarterDemo, starter_demo
from glotbench.errors import InputError, StoreError
from glotbench.metrics import get_metric, metric_names
from glotbench.metrics.constraints import describe_constraints
from glotbench.report.table_files import write_table
from glotbench.resample import BootstrapResult, bootstrap, bootstrap_metric

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
    return leaderboard(xtreme_r_baselines(), confidence_level=confidence_level)


@dataclass(frozen=True)
class Demo:
    """What ``glotbench demo`` shows: leaderboard, between-language SDs, comparisons, ranks."""

    leaderboard: Leaderboard
    comparison: Comparison
    ranks: Ranks
    notes: tuple[str, ...] = XTREME_R_CAVEATS
    #: the request's headline analysis (its pages render the same numbers)
    analysis: Analysis | None = None

    def between_language_sd(self) -> pd.DataFrame:
        """σ_b per model and task: the SD (ddof = 1) of the per-language scores."""
        return self.leaderboard.per_task[["model", "task", "between_language_sd", "n_languages"]]

    def to_dict(self) -> dict[str, Any]:
        out = {
            "leaderboard": self.leaderboard.to_dict(),
            "between_language_sd": records(self.between_language_sd()),
            "comparison": self.comparison.to_dict(),
            "ranks": self.ranks.to_dict(),
            "notes": list(self.notes),
        }
        if self.analysis is not None:
            out["analysis"] = self.analysis.to_dict()
        return out


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
    if settings is None:
        settings = AnalysisSettings(
            n_draws=n_draws, seed=seed, languages="with" if k is None else "without", k=k
        )
    scores = xtreme_r_baselines()
    analytic = leaderboard(scores, confidence_level=settings.confidence_level)
    replicated = replicates_from_frame(scores)
    analysis = analyze_headline(replicated, settings)
    complete = replicated.select_models(list(analysis.overall.models))
    draws = settings.draws(replicated)
    level = settings.confidence_level
    comparison = compare_models(complete, draws, aggregators=("mean",), confidence_level=level)
    ranks = rank_models(complete, draws, aggregators=("mean",), confidence_level=level)
    return Demo(analysis.leaderboard(analytic), comparison, ranks, analysis=analysis)


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
    if settings is None:
        settings = starter.settings if starter is not None else AnalysisSettings(seed=seed)
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    # the pages are a function of the analysis (keyed by the store's content, see
    # starter_demo) and the settings: unchanged pages are not written again
    pages_key = None
    if starter_store is None and (starter is None or starter.cache_key):
        pages_key = cache_key(
            starter.cache_key if starter is not None else "",
            {"pages": "demo", "settings": settings.to_dict(), "folder": str(folder.resolve())},
        )
        kept = _unchanged_pages(folder, pages_key)
        if kept is not None:
            return kept
    written = _write_demo_pages(folder, settings, starter, starter_store, xtreme)
    if pages_key is not None:
        _stamp_pages(folder, pages_key, written)
    return written


#: the file in a demo's output folder naming the analysis its pages show
_PAGES_STAMP = ".glotbench-pages.json"


def _unchanged_pages(folder: Path, key: str) -> list[Path] | None:
    """The pages written for ``key`` when they are all still there, else None."""
    try:
        stamp = json.loads((folder / _PAGES_STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(stamp, dict) or stamp.get("key") != key:
        return None
    paths = [folder / str(p) for p in stamp.get("pages") or []]
    return paths if paths and all(p.exists() for p in paths) else None


def _stamp_pages(folder: Path, key: str, written: Sequence[Path]) -> None:
    try:
        pages = [str(Path(p).resolve().relative_to(folder.resolve())) for p in written]
        (folder / _PAGES_STAMP).write_text(
            json.dumps({"key": key, "pages": pages}), encoding="utf-8"
        )
    except (OSError, ValueError):
        pass  # without a stamp the pages are only written again next time


def _write_demo_pages(
    folder: Path,
    settings: AnalysisSettings,
    starter: StarterDemo | None,
    starter_store: str | Path | None,
    xtreme: Demo | None,
) -> list[Path]:
    written: list[Path] = []
    xtreme_folder = folder
    title = "glotbench starter: language identification over 39 languages"
    if starter is not None and starter.replicated is not None:
        n_languages = len({u.language for u in starter.replicated.units})
        title = f"glotbench starter: language identification over {n_languages} languages"
        metadata = _store_metadata(starter.store, starter.replicated.models)
        source = LeaderboardSource(
            starter.replicated,
            metadata,
            title,
            (
                f"per-example statistics bootstrapped with {settings.n_replicates} paired "
                "replicates per run",
            ),
        )
        analysis = starter.analysis
        if analysis is None or analysis.settings != settings:
            analysis = analyze_headline(starter.replicated, settings)
        site = write_leaderboard_site(
            folder / "leaderboard", source, settings=settings, analysis=analysis
        )
        report = write_report(folder / "report.html", source, settings=settings, analysis=analysis)
        written += [site.path, report.path]
        xtreme_folder = folder / "xtreme-r"
    elif starter_store is not None:
        source = leaderboard_source(
            store=starter_store,
            metric=STARTER_METRIC,
            seed=settings.seed,
            n_replicates=settings.n_replicates,
        )
        analysis = analyze_headline(source.replicated, settings)
        site = write_leaderboard_site(
            folder / "leaderboard", source, title=title, settings=settings, analysis=analysis
        )
        report = write_report(
            folder / "report.html", source, title=title, settings=settings, analysis=analysis
        )
        written += [site.path, report.path]
        xtreme_folder = folder / "xtreme-r"
    source = leaderboard_source(demo=True, seed=settings.seed)
    analysis = (
        xtreme.analysis
        if xtreme is not None
        and xtreme.analysis is not None
        and xtreme.analysis.settings == settings
        else analyze_headline(source.replicated, settings)
    )
    site = write_leaderboard_site(
        xtreme_folder / "leaderboard", source, settings=settings, analysis=analysis
    )
    report = write_report(
        xtreme_folder / "report.html", source, settings=settings, analysis=analysis
    )
    return [*written, site.path, report.path]


def _store_metadata(store: str | Path, models: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Model metadata recorded with the runs of ``models`` in ``store``."""
    metadata: dict[str, dict[str, Any]] = {}
    with open_store(store, read_only=True) as handle:
        runs = handle.runs(models=list(models))
        for model, values in zip(runs["model"], runs["model_metadata"], strict=True):
            _merge_metadata(metadata, str(model), values)
    return metadata


def list_metrics() -> list[dict[str, Any]]:
    """Name, description and statistics layout of every registered metric."""
    out = []
    for name in metric_names():
        metric = get_metric(name)
        try:
            stat_names: list[str] | str = list(metric.stat_names())
            rules = describe_constraints(metric.constraints())
        except ValueError:  # label-dependent layout
            stat_names = "per-label counts (tp[label], pred[label], true[label])"
            rules = describe_constraints(get_metric(name, labels=["label"]).constraints())
        out.append(
            {
                "name": name,
                "description": metric.description,
                "stats": stat_names,
                "mean_type": metric.is_mean,
                "score_range": list(metric.score_range),
                "constraints": rules,
            }
        )
    return out


def read_examples_file(path: Path) -> list[Any]:
    """One example per line: JSON values for ``.jsonl``/``.json`` files, else the stripped text.

    A tag sequence in a text file is one line of whitespace-separated tags.
    """
    opener = gzip.open if path.suffix == ".gz" else open
    suffixes = path.suffixes
    is_json = ".jsonl" in suffixes or ".json" in suffixes
    items: list[Any] = []
    try:
        with opener(path, "rt", encoding="utf-8") as fh:
            for line_number, line in enumerate(fh, start=1):
                text = line.rstrip("\n")
                if not is_json:
                    items.append(text)
                    continue
                if not text.strip():
                    continue
                try:
                    items.append(json.loads(text))
                except json.JSONDecodeError as exc:
                    raise InputError(
                        f"invalid JSON ({exc.msg})", path=str(path), line=line_number
                    ) from None
    except FileNotFoundError:
        raise InputError("file not found", path=str(path)) from None
    return items


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
    bound = get_metric(metric)
    preds = [
        bound.parse_line(x) if isinstance(x, str) else x for x in read_examples_file(predictions)
    ]
    refs = [
        bound.parse_line(x) if isinstance(x, str) else x for x in read_examples_file(references)
    ]
    if len(preds) != len(refs):
        raise InputError(
            f"{len(preds)} predictions in {predictions} but {len(refs)} references in "
            f"{references}; the files must have one example per line, in the same order"
        )
    return bootstrap_metric(
        bound,
        preds,
        refs,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        seed=seed,
        method=method,  # type: ignore[arg-type]
    )


# --- store commands ---------------------------------------------------------------

from collections.abc import Callable, Mapping, Sequence  # noqa: E402

from glotbench.core import (  # noqa: E402
    ImportResult,
    Store,
    StoreSummary,
    add_scores_frame,
    import_examples_file,
    import_scores_file,
)
from glotbench.core.ingest import open_store_for_import  # noqa: E402
from glotbench.core.store import ExportResult, FailureList  # noqa: E402

#: Store used when none is given: ``glotbench.duckdb`` in the working directory.
DEFAULT_STORE_PATH = Path("glotbench.duckdb")

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
    filters: dict[str, Any] = {
        "models": models or None,
        "datasets": datasets or None,
        "tasks": tasks or None,
        "languages": languages or None,
        "failure_ids": failure_ids or None,
    }
    if not resolve:
        with Store.open(store, read_only=True) as s:
            frame = s.failures(**filters, include_resolved=include_resolved)
        return FailureList(store=str(store), include_resolved=include_resolved, frame=frame)
    if not Path(store).exists():
        raise StoreError(f"no store at {store}; pass --store")
    with Store.open(store) as s:
        ids = s.failures(**filters)["failure_id"].tolist()
        count = s.resolve_failures(failure_ids=ids) if ids else 0
        frame = s.failures(failure_ids=ids, include_resolved=True)
    return FailureList(store=str(store), include_resolved=True, frame=frame, resolved_now=count)


# --- replication-aware analyses ----------------------------------------------------

SUMMARY_COLUMNS = ("sigma_seed", "sigma_boot", "sigma_w")


def _filter_frame(frame: pd.DataFrame, filters: dict[str, Sequence[str] | None]) -> pd.DataFrame:
    out = frame
    for column, wanted in filters.items():
        if wanted:
            if column not in out.columns:
                raise InputError(
                    f"cannot filter on {column!r}: the input has no such column", field=column
                )
            out = out[out[column].astype(str).isin([str(w) for w in wanted])]
    if out.empty:
        described = ", ".join(f"{k}={list(v)}" for k, v in filters.items() if v)
        raise InputError(f"no rows match the filters ({described})")
    return out


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
    choice = MetricChoice.parse(metric)
    filters = {"model": models, "task": tasks, "language": languages}
    if input is not None:
        from glotbench.core.readers import read_tidy

        table = read_tidy(input)
        frame = _filter_frame(table.frame, filters)
        if set(SUMMARY_COLUMNS) & set(frame.columns):
            selected, _ = select_score_rows(frame, choice)
            positions = selected.index.to_numpy()

            def error(message: str, position: int | None, field: str | None) -> InputError:
                return table.error(
                    message, None if position is None else int(positions[position]), field
                )

            return components_from_summary(selected.reset_index(drop=True), error=error)
        return replicates_from_table(frame, choice, error=table.error)
    if store is None:
        raise InputError("give --input FILE or --store PATH")
    with open_store(store, read_only=True) as handle:
        return replicates_from_store_selection(
            handle,
            choice,
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
    filters = {"model": models, "task": tasks, "language": languages}
    if input is not None:
        from glotbench.core.readers import read_tidy

        frame = read_tidy(input).frame
    else:
        with open_store(store if store is not None else DEFAULT_STORE_PATH, read_only=True) as h:
            frame = h.scores()
        if frame.empty:
            raise InputError("the store holds no scores; import EuroEval results first")
    frame = _filter_frame(frame, filters).reset_index(drop=True)
    table = iterations_from_frame(frame, metrics)
    return euroeval_rank_scores(table, method, n_bootstraps, seed, confidence_level)


__all__ += ["euroeval_rank"]


# --- mixed models (issue 5) ---

from glotbench.analysis.mixed.model import LmmResult  # noqa: E402


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
    from glotbench.core.readers import TidyTable, read_tidy

    if input is not None:
        table = read_tidy(input)
        frame = table.frame
        if models or tasks or languages or metric:
            mask = pd.Series(True, index=frame.index)
            for col, wanted in (
                ("model", models),
                ("task", tasks),
                ("language", languages),
                ("metric", [metric] if metric else None),
            ):
                if wanted and col in frame.columns:
                    mask &= frame[col].astype(str).isin([str(w) for w in wanted])
            positions = mask.to_numpy().nonzero()[0]
            frame = frame.iloc[positions].reset_index(drop=True)
            base = table

            def located(message: str, position: int | None = None, field: str | None = None):
                pos = None if position is None else int(positions[position])
                return base.error(message, pos, field)

            return frame, located
        return frame, table.error
    from glotbench.analysis.run_scores import run_scores_from_store

    path = store if store is not None else DEFAULT_STORE_PATH
    with open_store(path, read_only=True) as handle:
        run_scores = run_scores_from_store(
            handle,
            metric=metric,
            models=list(models) if models else None,
            tasks=list(tasks) if tasks else None,
            languages=list(languages) if languages else None,
        )
        if not run_scores.empty:
            return run_scores, TidyTable.from_frame(run_scores, f"store {path} (runs)").error
        scores = handle.scores(
            models=list(models) if models else None,
            tasks=list(tasks) if tasks else None,
            languages=list(languages) if languages else None,
            metrics=[metric] if metric else None,
        )
    if scores.empty:
        raise InputError(
            f"the store {path} holds no runs or scores matching the filters; run a suite "
            "(glotbench run), import results (glotbench import) or give --input FILE"
        )
    if metric is None and "metric" in scores.columns and scores["metric"].nunique() > 1:
        raise InputError(
            "the store holds scores of several metrics "
            f"({', '.join(sorted(map(str, scores['metric'].unique())))}); choose one with --metric",
            field="metric",
        )
    if "metadata" in scores.columns:
        scores = scores.drop(columns=["metadata"])
    return scores.reset_index(drop=True), TidyTable.from_frame(scores, f"store {path}").error


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
    from glotbench.analysis.mixed.dharma import simulate_residuals
    from glotbench.analysis.mixed.model import analyze_lmm

    result = analyze_lmm(
        frame,
        formula,
        emmeans_specs=list(emmeans),
        reml=reml,
        adjust=adjust,
        ci=confidence_level,
        alternative=eta2_alternative,
        error=error,
    )
    if qq_plot is not None or residuals or residuals_by:
        sims = simulate_residuals(
            result.model,
            n_sim=n_sim,
            seed=seed,
            by=list(residuals_by) if residuals_by else None,
            data=frame,
        )
        if qq_plot is not None:
            sims.qq_plot(qq_plot)
        result.residual_checks = {
            **sims.to_dict(),
            "qq_plot": None if qq_plot is None else str(qq_plot),
        }
    return result


# --- design analyses (issue 6) ---
# Significance tests (paired bootstrap, permutation, ASO, McNemar, corrections), the
# evaluation-size analysis and transfer groups. Thin wrappers that read files or the
# store and call glotbench.analysis.{significance,aso,datasize,transfer}.

import numpy as _np  # noqa: E402

from glotbench.analysis.aso import ASOResult, MultiASOResult, aso, multi_aso  # noqa: E402
from glotbench.analysis.datasize import (  # noqa: E402
    DEFAULT_SIZES,
    STRATEGIES,
    DataSizeResult,
    conllu_statistics,
    datasize_analysis,
    simulate_tagger_statistics,
)
from glotbench.analysis.datasize_store import datasize_inputs_from_store  # noqa: E402
from glotbench.analysis.significance import (  # noqa: E402
    AdjustedPValues,
    McNemarResult,
    PairedTestResult,
    adjust_p_values,
    mcnemar_test,
    paired_bootstrap_test,
    permutation_test,
)
from glotbench.analysis.transfer import TransferGroups, transfer_groups  # noqa: E402
from glotbench.metrics.base import MeanMetric as _MeanMetric  # noqa: E402
from glotbench.metrics.base import Metric as _Metric  # noqa: E402


def read_scores_file(path: str | Path) -> _np.ndarray:
    """One number per line (e.g. one score per seed, or one per-example score).

    Trailing blank lines are ignored; a blank line before the last number, a
    line that is not a number, or a file without numbers is an
    :class:`InputError` naming the file and line.
    """
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise InputError("file not found", path=str(p)) from None
    except UnicodeDecodeError:
        raise InputError("not a UTF-8 text file", path=str(p)) from None
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        raise InputError("the file holds no scores; give one number per line", path=str(p))
    values = []
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text:
            raise InputError("empty line; give one number per line", path=str(p), line=number)
        try:
            value = float(text)
        except ValueError:
            raise InputError(
                f"{text[:40]!r} is not a number; give one number per line", path=str(p), line=number
            ) from None
        if not _np.isfinite(value):
            raise InputError(f"{text!r} is not a finite number", path=str(p), line=number)
        values.append(value)
    return _np.asarray(values, dtype=_np.float64)


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
    if len(paths) < 2:
        raise InputError("give at least two score files (A and B)")
    samples = [read_scores_file(p) for p in paths]
    if len(paths) == 2:
        return aso(
            samples[0],
            samples[1],
            confidence_level=confidence_level,
            num_bootstrap_iterations=num_bootstrap_iterations,
            seed=seed,
            num_comparisons=num_comparisons,
        )
    return multi_aso(
        samples,
        confidence_level=confidence_level,
        use_bonferroni=use_bonferroni,
        num_bootstrap_iterations=num_bootstrap_iterations,
        seed=seed,
        names=[Path(p).stem for p in paths],
    )


def _same_length(a: Sequence[Any], b: Sequence[Any], path_a: Path, path_b: Path) -> None:
    if len(a) != len(b):
        raise InputError(
            f"{len(a)} lines in {path_a} but {len(b)} in {path_b}; the files must have one "
            "example per line, in the same order",
            path=str(path_b),
        )


def paired_statistics(
    file_a: str | Path,
    file_b: str | Path,
    *,
    references: str | Path | None = None,
    metric: str | None = None,
) -> tuple[_np.ndarray, _np.ndarray, _Metric]:
    """Per-example statistics of two systems from files.

    With ``references``: ``file_a``/``file_b`` are line-aligned predictions,
    scored by ``metric`` (fitted on both systems' predictions, so label sets
    agree). Without: each file holds one per-example score per line and the
    metric is their mean.
    """
    path_a, path_b = Path(file_a), Path(file_b)
    if references is None:
        if metric is not None and not get_metric(metric).is_mean:
            raise InputError(
                f"{metric} is not a mean of per-example values; give --references with "
                "prediction files to test it"
            )
        a, b = read_scores_file(path_a), read_scores_file(path_b)
        _same_length(a, b, path_a, path_b)
        mean = get_metric(metric or "accuracy")
        return _MeanMetric.stats_from_values(a), _MeanMetric.stats_from_values(b), mean
    if metric is None:
        raise InputError("give --metric to score prediction files against --references")
    bound = get_metric(metric)
    parse = [
        [bound.parse_line(x) if isinstance(x, str) else x for x in read_examples_file(Path(p))]
        for p in (path_a, path_b, Path(references))
    ]
    preds_a, preds_b, refs = parse
    _same_length(preds_a, refs, path_a, Path(references))
    _same_length(preds_b, refs, path_b, Path(references))
    if not refs:
        raise InputError("the references file is empty", path=str(references))
    fitted = bound.fit(list(preds_a) + list(preds_b), list(refs) + list(refs))
    return fitted.stats(preds_a, refs), fitted.stats(preds_b, refs), fitted


def store_pair_statistics(
    store: str | Path,
    *,
    dataset: str,
    task: str,
    language: str,
    metric: str,
    models: Sequence[str],
    seed: int | None = None,
) -> tuple[_np.ndarray, _np.ndarray, _Metric]:
    """Per-example statistics of two models' runs from the store (one run each)."""
    if len(models) != 2:
        raise InputError("give exactly two --model options (A and B)")
    with open_store(store, read_only=True) as handle:
        matrix = handle.stats_matrix(
            dataset,
            task,
            language,
            metric,
            models=list(models),
            seeds=None if seed is None else [seed],
        )
    if len(matrix.run_ids) != 2:
        raise InputError(
            f"{len(matrix.run_ids)} runs match (models {list(models)}); choose one run per "
            "model with --run-seed"
        )
    return matrix.stats[0], matrix.stats[1], matrix.get_metric()


def significance_test(
    test: str,
    stats_a: _np.ndarray,
    stats_b: _np.ndarray,
    metric: _Metric,
    *,
    n_resamples: int = 10_000,
    confidence_level: float = 0.95,
    seed: int = 0,
    names: tuple[str, str] = ("A", "B"),
) -> PairedTestResult:
    """Run the paired ``bootstrap`` or ``permutation`` test on per-example statistics."""
    if test == "bootstrap":
        return paired_bootstrap_test(
            stats_a,
            stats_b,
            metric,
            n_resamples=n_resamples,
            confidence_level=confidence_level,
            seed=seed,
            names=names,
        )
    if test == "permutation":
        return permutation_test(
            stats_a, stats_b, metric, n_resamples=n_resamples, seed=seed, names=names
        )
    raise InputError(f"unknown test {test!r}; use bootstrap or permutation")


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
    path_a, path_b = Path(file_a), Path(file_b)
    if references is None:
        a, b = read_scores_file(path_a), read_scores_file(path_b)
        _same_length(a, b, path_a, path_b)
        for path, values in ((path_a, a), (path_b, b)):
            bad = _np.flatnonzero(~_np.isin(values, (0.0, 1.0)))
            if bad.size:
                raise InputError(
                    f"{values[bad[0]]:g} is not 0 or 1; McNemar's test needs binary outcomes",
                    path=str(path),
                    line=int(bad[0]) + 1,
                )
    else:
        refs = [
            x.strip() if isinstance(x, str) else x for x in read_examples_file(Path(references))
        ]
        preds = [
            [x.strip() if isinstance(x, str) else x for x in read_examples_file(p)]
            for p in (path_a, path_b)
        ]
        _same_length(preds[0], refs, path_a, Path(references))
        _same_length(preds[1], refs, path_b, Path(references))
        a = _np.array([p == r for p, r in zip(preds[0], refs, strict=True)], dtype=float)
        b = _np.array([p == r for p, r in zip(preds[1], refs, strict=True)], dtype=float)
    return mcnemar_test(a, b, exact=exact, correction=correction, names=(path_a.stem, path_b.stem))


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
    tokens = None
    order, notes = "file", tuple[str, ...]()
    if gold is not None and simulate_models:
        rates = [0.02 + 0.01 * i for i in range(simulate_models)]
        stats, labels, tokens, bound = simulate_tagger_statistics(
            gold, rates, simulate_seeds, seed=seed
        )
    elif gold is not None:
        if not predictions:
            raise InputError("give --pred files (or --simulate-models) with --gold")
        stats, labels, tokens, bound = conllu_statistics(gold, predictions, metric or "las")
    elif store is not None:
        missing = [
            name
            for name, value in (
                ("--dataset", dataset),
                ("--task", task),
                ("--language", language),
                ("--metric", metric),
            )
            if value is None
        ]
        if missing:
            raise InputError(f"reading the store needs {', '.join(missing)}")
        with open_store(store, read_only=True) as handle:
            inputs = datasize_inputs_from_store(
                handle,
                dataset,  # type: ignore[arg-type]
                task,  # type: ignore[arg-type]
                language,  # type: ignore[arg-type]
                metric,  # type: ignore[arg-type]
                models=models,
            )
        stats, labels, bound = inputs.stats, inputs.models, inputs.metric
        tokens, order, notes = inputs.tokens, inputs.order, inputs.notes
    else:
        raise InputError("give --store (with --dataset/--task/--language/--metric) or --gold")
    return datasize_analysis(
        stats,
        bound,
        models=labels,
        tokens=tokens,
        sizes=sizes,
        strategies=strategies,
        n_draws=n_draws,
        level=level,
        seed=seed,
        aso=aso,
        aso_draws=aso_draws,
        aso_bootstrap_iterations=aso_bootstrap_iterations,
        order=order,
        notes=notes,
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
    from glotbench.analysis.transfer_store import transfer_scores_from_store
    from glotbench.core.readers import TidyTable, read_tidy
    from glotbench.data import scandeval_transfer_scores

    if sum([example, input is not None, store is not None]) != 1:
        raise InputError("give one of an input file, a store or example=True (the ScandEval table)")
    if store is not None:
        with open_store(store, read_only=True) as handle:
            scores = transfer_scores_from_store(handle, metrics=metrics)
        result = transfer_groups(
            TidyTable.from_frame(scores.frame, f"store {store}"),
            observations=observations,  # type: ignore[arg-type]
            min_size=min_size,
        )
        return dataclasses.replace(
            result, notes=(*scores.notes, *result.notes), scores=scores.frame
        )
    table = (
        TidyTable.from_frame(scandeval_transfer_scores(), "ScandEval Appendix A")
        if example
        else read_tidy(input)  # type: ignore[arg-type]
    )
    return transfer_groups(
        table,
        observations=observations,  # type: ignore[arg-type]
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


@dataclass(frozen=True)
class LeaderboardSource:
    """What the leaderboard and the report are built from: scores, metadata and provenance."""

    replicated: ReplicatedScores
    metadata: dict[str, dict[str, Any]]
    title: str
    notes: tuple[str, ...]
    #: inference speed per model (ScandEval's benchmark), when the store has it
    speed: Any = None


#: per-run bookkeeping the runner stores in ``model_metadata``: not a property
#: of the model, so not a leaderboard column or filter
RUN_BOOKKEEPING = frozenset(
    {
        "kind", "options", "iteration", "trains", "bootstrap_train", "train_examples",
        "dataset_sha256", "dataset_sizes", "fit_seconds", "predict_seconds", "speed",
        "test_tokens", "deterministic", "predictions_of_iteration", "factory_seed", "target",
        "sampling_seed", "sample_agreement", "unparsed_rate", "oom_events",
        "primary_metric", "source_metric", "target_language", "trained_on",
    }
)  # fmt: skip


def _merge_metadata(target: dict[str, dict[str, Any]], model: str, values: Any) -> None:
    """Model metadata from a run: scalar values, without the runner's per-run bookkeeping."""
    if isinstance(values, dict):
        for key, value in values.items():
            if str(key) in RUN_BOOKKEEPING or isinstance(value, dict | list):
                continue
            target.setdefault(model, {}).setdefault(str(key), value)


def read_model_metadata(path: str | Path) -> dict[str, dict[str, Any]]:
    """Model metadata from a CSV/JSONL/Parquet file with a ``model`` column (one row per model)."""
    from glotbench.core.readers import read_tidy

    frame = read_tidy(path).frame
    if "model" not in frame.columns:
        raise InputError("the metadata file needs a 'model' column", path=str(path), field="model")
    out: dict[str, dict[str, Any]] = {}
    for row in frame.to_dict(orient="records"):
        model = str(row.pop("model"))
        out[model] = {k: (None if pd.isna(v) else v) for k, v in row.items()}
    return out


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
    from glotbench.analysis.speed import speed_table
    from glotbench.report.leaderboard import XTREME_R_METADATA

    filters = {"model": models, "task": tasks, "language": languages}
    speed = None
    metadata: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    if demo:
        frame = _filter_frame(xtreme_r_baselines(), filters).reset_index(drop=True)
        replicated = replicates_from_frame(frame)
        metadata = {k: dict(v) for k, v in XTREME_R_METADATA.items()}
        title = "XTREME-R baselines (Ruder et al. 2021)"
        notes.append(
            "published per-language test scores: one score per model and language, so intervals "
            "and ranks reflect the choice of languages only"
        )
        notes += XTREME_R_CAVEATS
    elif store is not None:
        title = f"glotbench leaderboard: {Path(store).name}"
        with open_store(store, read_only=True) as handle:
            if handle.runs(models=models, tasks=tasks, languages=languages).empty and (
                handle.scores(models=models, tasks=tasks, languages=languages).empty
            ):
                raise InputError(f"the store {store} holds no runs or scores to show")
            selected = replicates_from_store_selection(
                handle,
                metric,
                models=models,
                tasks=tasks,
                languages=languages,
                n_replicates=n_replicates,
                seed=seed,
                ambiguous="most_results",
            )
            # selection notes go with the leaderboard's notes, not into every view's notes
            notes += selected.notes
            replicated = dataclasses.replace(selected, notes=())
            kept = sorted({str(t) for t, _ in selected.task_metrics}) or None
            if selected.source == "examples":
                runs = handle.runs(models=models, tasks=tasks, languages=languages)
                for model, values in zip(runs["model"], runs["model_metadata"], strict=True):
                    _merge_metadata(metadata, str(model), values)
                notes.append(
                    f"per-example statistics bootstrapped with {n_replicates} paired replicates "
                    "per run"
                )
            else:
                scores = handle.scores(models=models, tasks=kept, languages=languages)
                for model, values in zip(scores["model"], scores["metadata"], strict=True):
                    _merge_metadata(metadata, str(model), values)
            speed = speed_table(handle, models=models) or None
    else:
        raise InputError("give --store PATH or --demo")
    if metadata_file is not None:
        for model, values in read_model_metadata(metadata_file).items():
            metadata.setdefault(model, {}).update(values)
    return LeaderboardSource(replicated, metadata, title, tuple(notes), speed)


@dataclass(frozen=True)
class SiteResult:
    """Where a leaderboard or report was written, and what it holds."""

    path: Path
    kind: str
    models: tuple[str, ...]
    views: tuple[str, ...]
    notes: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "path": str(self.path),
            "models": list(self.models),
            "views": list(self.views),
            "notes": list(self.notes),
        }


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
    from glotbench.report.leaderboard import build_leaderboard, write_leaderboard

    data = build_leaderboard(
        source.replicated,
        title=title or source.title,
        metadata=source.metadata,
        language_groups=language_groups,
        notes=source.notes,
        n_draws=n_draws,
        seed=seed,
        confidence_level=confidence_level,
        settings=settings,
        analysis=analysis,
        speed=source.speed,
    )
    path = write_leaderboard(data, out)
    return SiteResult(
        path, "leaderboard", source.replicated.models, tuple(data.payload["views"]), source.notes
    )


def parse_language_groups(specs: Sequence[str]) -> dict[str, list[str]]:
    """``NAME=lang,lang`` strings to a dict (the built-in groups are added by the caller)."""
    groups: dict[str, list[str]] = {}
    for spec in specs:
        name, sep, langs = spec.partition("=")
        members = [x.strip() for x in langs.split(",") if x.strip()]
        if not sep or not name.strip() or not members:
            raise InputError(
                f"language group {spec!r} is not NAME=lang,lang (e.g. 'Nordic=da,sv,nb')",
                field="group",
            )
        groups[name.strip()] = members
    return groups


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
    from glotbench.analysis.buckets import example_attributes

    file = Path(path)
    if not file.is_file():
        raise InputError(f"attributes file {file} not found")
    suffix = file.suffix.lower()
    try:
        if suffix in (".jsonl", ".ndjson"):
            frame = pd.read_json(file, lines=True, dtype=False)
        elif suffix == ".parquet":
            frame = pd.read_parquet(file)
        else:
            frame = pd.read_csv(
                file, sep="\t" if suffix == ".tsv" else ",", dtype={"example_id": str}
            )
    except ValueError as exc:
        raise InputError(f"cannot read the attributes: {exc}", path=str(file)) from None
    try:
        return example_attributes(frame)
    except InputError as exc:
        raise InputError(exc.reason, path=str(file), field=exc.field) from None


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
    from glotbench.analysis.buckets import analyze_buckets as bucket_analysis
    from glotbench.core.attribute_store import read_attributes, read_unit_stats

    if attributes is None:
        table = None
    elif isinstance(attributes, pd.DataFrame):
        table = attributes
    else:
        table = read_attributes_file(attributes)
    with open_store(store, read_only=True) as handle:
        if dataset is None:
            runs = handle.runs(tasks=[task], languages=[language], metrics=[metric], models=models)
            datasets = sorted(runs["dataset"].unique())
            if len(datasets) > 1:
                raise InputError(
                    f"{task}/{language} has several datasets ({', '.join(datasets)}); "
                    "choose one with --dataset",
                    field="dataset",
                )
            dataset = datasets[0] if datasets else task
        matrix = handle.stats_matrix(dataset, task, language, metric, models=models)
        stored, unit_table = read_attributes(handle, dataset)
        unit_stats = read_unit_stats(handle, matrix.run_ids)
    if table is None:
        if stored.empty and unit_table.empty:
            raise InputError(
                f"the store has no attributes for dataset {dataset!r} (runs imported from "
                "elsewhere, or written by an older glotbench); pass --attributes FILE",
                field="attributes",
            )
        table = stored
    elif not stored.empty:
        table = stored.drop(columns=[c for c in table.columns if c in stored]).join(
            table, how="outer"
        )
    bound = matrix.get_metric()
    has_units = not unit_table.empty and not unit_stats.empty
    return bucket_analysis(
        matrix.stats,
        bound,
        table,
        unit_attributes=unit_table if has_units else None,
        unit_stats=unit_stats if has_units else None,
        run_ids=list(matrix.run_ids),
        systems=list(dict.fromkeys(matrix.models)),
        system_of_run=matrix.models,
        example_ids=list(matrix.example_ids),
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
    from glotbench.report.analyses import lmm_summary, read_datasize, read_lmm
    from glotbench.report.html import build_report
    from glotbench.report.html import write_report as write_html

    datasize_results = [
        item if isinstance(item, DataSizeResult) else read_datasize(item) for item in datasize
    ]
    lmm_summaries = [
        lmm_summary(item) if isinstance(item, LmmResult) else read_lmm(item) for item in lmm
    ]
    replicated = source.replicated
    notes = list(source.notes)
    if settings is None:
        settings = (
            analysis.settings
            if analysis is not None
            else AnalysisSettings(n_draws=n_draws, seed=seed)
        )
    if analysis is None:
        analysis = analyze_headline(replicated, settings)
    elif analysis.settings != settings:
        raise InputError("the analysis was computed with other settings than the report's")
    board = analysis.leaderboard(
        leaderboard(replicated.to_frame(), confidence_level=settings.confidence_level)
    )
    variance = variance_components(components(replicated))
    notes += list(variance.notes)
    complete = set(analysis.overall.models)
    ranked = [m for m in board.overall["model"] if m in complete]
    if len(ranked) > max_models:
        notes.append(f"comparisons and ranks show the {max_models} best of {len(ranked)} models")
        ranked = ranked[:max_models]
    draw_settings = settings.draws(replicated)
    comparison = ranks = None
    if len(ranked) > 1:
        subset = replicated.select_models(ranked)
        comparison = compare_models(subset, draw_settings, aggregators=("mean",))
        ranks = rank_models(
            subset, draw_settings, aggregators=("mean",), confidence_level=settings.confidence_level
        )
        notes += [n for n in comparison.notes if n not in notes]
    report = build_report(
        title or source.title,
        board,
        analysis.interval_text,
        variance,
        comparison,
        ranks,
        notes,
        datasize=datasize_results,
        lmm=lmm_summaries,
    )
    path = write_html(report, out)
    return SiteResult(
        path, "report", replicated.models, tuple(h for h, _ in report.sections), tuple(notes)
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
    from glotbench.analysis.mixed.robustness import DEFAULT_FRACTIONS, missing_data_study

    response = formula.split("~", 1)[0].strip()
    if response not in frame.columns:
        raise InputError(f"the response {response!r} is not a column of the data", field=response)
    data = frame.copy()
    data[response] = pd.to_numeric(data[response], errors="coerce")
    if data[response].isna().any():
        row = int(_np.flatnonzero(data[response].isna().to_numpy())[0]) + 1
        raise InputError(f"row {row}: the response is missing or not a number", field=response)
    return missing_data_study(
        data,
        formula,
        factor,
        subject=subject,
        within=list(within),
        fractions=tuple(fractions) if fractions else DEFAULT_FRACTIONS,
        n_repeats=n_repeats,
        alpha=alpha,
        seed=seed,
    )


# --- harness importers (issue 8) ---

from glotbench.importers.common import HarnessImportResult  # noqa: E402
from glotbench.importers.euroeval import import_euroeval as _import_euroeval  # noqa: E402
from glotbench.importers.lm_eval import import_lm_eval as _import_lm_eval  # noqa: E402
from glotbench.importers.xtreme import import_xtreme as _import_xtreme  # noqa: E402

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
    from glotbench.analysis.speed import speed_table
    from glotbench.runner.executors import run_suite
    from glotbench.runner.suite import load_suite, parse_split_sizes

    if isinstance(split_sizes, str):
        split_sizes = parse_split_sizes(split_sizes)
    selected = load_suite(suite, data_dir=data_dir).select(
        models=models,
        languages=languages,
        tasks=tasks,
        datasets=datasets,
        iterations=iterations,
        split_sizes=split_sizes,
        speed_seconds=speed_seconds,
        speed=speed,
    )
    summary = run_suite(
        selected,
        store=store,
        executor=executor,
        force=force,
        on_event=on_event,
        num_cpus=num_cpus,
        ray_address=ray_address,
        shards=shards,
        merge=merge,
        scores=scores,
    )
    with open_store(store, read_only=True) as handle:
        summary.speed = speed_table(handle, models=[m.name for m in selected.models])
    return summary


def speed_summary(
    store: str | Path = DEFAULT_STORE_PATH, *, models: list[str] | None = None
) -> Any:
    """Inference speed per model: ScandEval's GPT-2 tokens per second, mean ± 1.96·SD/√n.

    From the runner's speed benchmark (``glotbench run``) or imported EuroEval
    speed scores. Returns a :class:`~glotbench.analysis.speed.SpeedTable`.
    """
    from glotbench.analysis.speed import speed_table

    with open_store(store, read_only=True) as handle:
        return speed_table(handle, models=models)


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
    from glotbench.runner.protocol import scandeval_scores

    with open_store(store, read_only=True) as handle:
        return scandeval_scores(handle, models=models, datasets=datasets, metrics=metrics)


def list_suites() -> dict[str, str]:
    """Built-in suites: name -> description."""
    import yaml

    from glotbench.runner.suite import builtin_suites

    out = {}
    for name, path in sorted(builtin_suites().items()):
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        out[name] = str(raw.get("description", ""))
    return out


@dataclass(frozen=True)
class ScalaBuild:
    """Result of ``glotbench build scala``."""

    out: str
    sizes: dict[str, int]
    labels: dict[str, int]
    content_sha256: str
    notes: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "out": self.out,
            "sizes": self.sizes,
            "labels": self.labels,
            "content_sha256": self.content_sha256,
            "notes": self.notes,
        }

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([{"split": k, "examples": v} for k, v in self.sizes.items()])


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
    from collections import Counter

    from glotbench.runner.datasets import build_dataset

    ds = build_dataset(
        {
            "name": Path(out).stem,
            "task": "linguistic_acceptability",
            "language": language,
            "loader": "scala",
            "paths": [str(p) for p in treebank],
            "splits": splits,
            "split_seed": seed,
        }
    )
    target = Path(out)
    with target.open("w", encoding="utf-8") as handle:
        for split in ("train", "validation", "test"):
            for rec in ds.split(split):
                handle.write(json.dumps({**rec, "split": split}, ensure_ascii=False) + "\n")
    labels = Counter(r["label"] for s in ("train", "validation", "test") for r in ds.split(s))
    return ScalaBuild(
        str(target), ds.sizes(), dict(sorted(labels.items())), ds.content_hash, ds.notes
    )


__all__ += ["benchmark_scores", "build_scala", "list_suites", "run_benchmark", "ScalaBuild"]
__all__ += ["import_shards"]


# --- checklist (issue 7) ---


@dataclass(frozen=True)
class ChecklistExpansion:
    """Cases written by :func:`checklist_expand`."""

    out: str
    suites: tuple[str, ...]
    n_cases: int
    n_texts: int
    counts: pd.DataFrame  # suite, test, type, language, n_cases, n_texts

    def to_frame(self) -> pd.DataFrame:
        return self.counts

    def to_dict(self) -> dict[str, Any]:
        return {
            "out": self.out,
            "suites": list(self.suites),
            "n_cases": self.n_cases,
            "n_texts": self.n_texts,
            "tests": self.counts.to_dict(orient="records"),
        }


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
    from glotbench.checklist import builtin_template_files, expand_suite, load_suite, write_cases

    paths = list(templates) if templates else builtin_template_files()
    suites = [load_suite(p) for p in paths]
    cases = []
    for suite in suites:
        langs = [lang for lang in languages if lang in suite.languages] if languages else None
        cases.extend(expand_suite(suite, langs, tests, n))
    if not cases:
        known = sorted({lang for s in suites for lang in s.languages})
        raise InputError(
            f"no test cases for languages {list(languages or [])}; the templates cover "
            f"{', '.join(known)}"
        )
    target = write_cases(cases, out)
    counts = (
        pd.DataFrame(
            [
                {
                    "suite": c.suite,
                    "test": c.test,
                    "type": c.type,
                    "language": c.language,
                    "n_texts": len(c.texts),
                }
                for c in cases
            ]
        )
        .groupby(["suite", "test", "type", "language"], sort=False)
        .agg(n_cases=("n_texts", "size"), n_texts=("n_texts", "sum"))
        .reset_index()
    )
    counts[["n_cases", "n_texts"]] = counts[["n_cases", "n_texts"]].astype(int)
    return ChecklistExpansion(
        str(target),
        tuple(s.name for s in suites),
        len(cases),
        int(counts["n_texts"].sum()),
        counts,
    )


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
    from dataclasses import replace

    from glotbench.checklist import (
        Prediction,
        predictions_from_callable,
        read_cases,
        read_predictions,
        score_cases,
        store_results,
    )
    from glotbench.core.store import Store

    case_list = read_cases(cases) if isinstance(cases, (str, Path)) else list(cases)
    labels = case_list[0].labels if case_list else ()
    by_model: dict[str, dict[str, Prediction]] = {}
    if predict is not None:
        by_model[model or getattr(predict, "__name__", "model")] = predictions_from_callable(
            case_list, predict
        )
    if isinstance(predictions, dict):
        from glotbench.checklist.evaluate import as_prediction

        for name, preds in predictions.items():
            by_model[str(name)] = {
                str(k): as_prediction(v, labels, f"model {name!r}, id {k!r}")
                for k, v in preds.items()
            }
    elif predictions:
        names = list(models) if models else [Path(p).stem for p in predictions]
        if len(names) != len(predictions):
            raise InputError(
                f"{len(names)} --model names for {len(predictions)} prediction files; "
                "give one name per file"
            )
        for name, path in zip(names, predictions, strict=True):
            if name in by_model:
                raise InputError(f"model name {name!r} given twice; name each file with --model")
            by_model[name] = read_predictions(path, labels)
    result, matrices = score_cases(
        case_list, by_model, n_resamples=n_resamples, confidence_level=confidence_level, seed=seed
    )
    if store is not None:
        source = str(cases) if isinstance(cases, (str, Path)) else None
        with Store.open(store) as st:
            stored = store_results(st, matrices, list(by_model), source=source)
        result = replace(result, stored={**stored, "store": str(store)})
    return result


@dataclass(frozen=True)
class ChecklistExample:
    """The published MultiCheckList error rates of XLM-R (embedded example table)."""

    table: pd.DataFrame  # model, language, test, error_rate
    by_test: pd.DataFrame  # test, mean, published_avg, min, max, n_languages
    wide: pd.DataFrame  # language × test
    source: str

    def to_frame(self) -> pd.DataFrame:
        return self.table

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "unit": "error rate, percent of failed test cases",
            "models": sorted(self.table["model"].unique().tolist()),
            "languages": sorted(self.table["language"].unique().tolist()),
            "tests": list(self.by_test["test"]),
            "by_test": self.by_test.to_dict(orient="records"),
            "rows": self.table.to_dict(orient="records"),
        }


def checklist_example() -> ChecklistExample:
    """Summary of the embedded MultiCheckList error rates of XLM-R (Ruder et al. 2021)."""
    from glotbench.data import MULTICHECKLIST_TABLE5_AVG, multichecklist_xlmr_error_rates

    table = multichecklist_xlmr_error_rates()
    tests = list(dict.fromkeys(table["test"]))
    by_test = (
        table.groupby("test", sort=False)["error_rate"]
        .agg(mean="mean", min="min", max="max", n_languages="size")
        .reindex(tests)
        .reset_index()
    )
    by_test["mean"] = by_test["mean"].round(2)
    by_test.insert(2, "published_avg", by_test["test"].map(MULTICHECKLIST_TABLE5_AVG))
    wide = table.pivot(index="language", columns="test", values="error_rate")[tests].reset_index()
    wide.columns.name = None
    return ChecklistExample(
        table=table,
        by_test=by_test,
        wide=wide,
        source=(
            "Ruder et al. 2021, XTREME-R (EMNLP), Table 5: MultiCheckList error rates of "
            "XLM-R Large; published_avg is the table's Avg row"
        ),
    )


__all__ += [
    "ChecklistExample",
    "ChecklistExpansion",
    "checklist_example",
    "checklist_expand",
    "checklist_score",
]
