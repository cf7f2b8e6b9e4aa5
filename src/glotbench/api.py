"""The public Python API: what the CLI calls.

Everything the command line can do is a function here, returning result
objects with ``.to_frame()`` and ``.to_dict()``.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from glotbench.analysis.aggregate import Leaderboard, leaderboard
from glotbench.analysis.compare import Aggregates, Comparison, aggregate_scores, compare_models
from glotbench.analysis.draws import DrawSettings
from glotbench.analysis.ranks import Ranks, rank_models
from glotbench.analysis.replicates import (
    ReplicatedScores,
    replicates_from_frame,
    replicates_from_store,
)
from glotbench.analysis.results import records
from glotbench.analysis.variance import (
    ComponentTable,
    VarianceComponents,
    components,
    components_from_summary,
    variance_components,
)
from glotbench.data import xtreme_r_baselines
from glotbench.errors import InputError
from glotbench.metrics import get_metric, metric_names
from glotbench.resample import BootstrapResult, bootstrap, bootstrap_metric

__all__ = [
    "bootstrap",
    "bootstrap_metric",
    "bootstrap_files",
    "demo_leaderboard",
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

    def between_language_sd(self) -> pd.DataFrame:
        """σ_b per model and task: the SD (ddof = 1) of the per-language scores."""
        return self.leaderboard.per_task[["model", "task", "between_language_sd", "n_languages"]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "leaderboard": self.leaderboard.to_dict(),
            "between_language_sd": records(self.between_language_sd()),
            "comparison": self.comparison.to_dict(),
            "ranks": self.ranks.to_dict(),
        }


def demo(n_draws: int = 10_000, seed: int = 0, k: int = 5) -> Demo:
    """The demo on the embedded XTREME-R baselines.

    The published table has one score per model, task and language (no seeds
    or replicates), so uncertainty comes from the languages: pairwise effect
    sizes of the overall average (mean of task means) resample each task's
    languages with replacement; rank distributions subsample k languages per
    task without replacement. Both use the tasks every model was evaluated on.
    """
    scores = xtreme_r_baselines()
    board = leaderboard(scores)
    replicated = replicates_from_frame(scores)
    comparison = compare_models(
        replicated,
        DrawSettings(scheme="languages-only", n_draws=n_draws, seed=seed, languages="with"),
        aggregators=("mean",),
    )
    ranks = rank_models(
        replicated,
        DrawSettings(scheme="languages-only", n_draws=n_draws, seed=seed, languages="without", k=k),
        aggregators=("mean",),
    )
    return Demo(board, comparison, ranks)


def list_metrics() -> list[dict[str, Any]]:
    """Name, description and statistics layout of every registered metric."""
    out = []
    for name in metric_names():
        metric = get_metric(name)
        try:
            stat_names: list[str] | str = list(metric.stat_names())
        except ValueError:  # label-dependent layout
            stat_names = "per-label counts (tp[label], pred[label], true[label])"
        out.append(
            {
                "name": name,
                "description": metric.description,
                "stats": stat_names,
                "mean_type": metric.is_mean,
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

from collections.abc import Callable, Sequence  # noqa: E402

from glotbench.core import (  # noqa: E402
    ImportResult,
    Store,
    StoreSummary,
    add_scores_frame,
    import_examples_file,
    import_scores_file,
)
from glotbench.core.ingest import open_store_for_import  # noqa: E402
from glotbench.core.store import ExportResult  # noqa: E402

#: Store used when none is given: ``glotbench.duckdb`` in the working directory.
DEFAULT_STORE_PATH = Path("glotbench.duckdb")

__all__ += [
    "DEFAULT_STORE_PATH",
    "ExportResult",
    "ImportResult",
    "Store",
    "StoreSummary",
    "add_scores",
    "export_store",
    "import_examples",
    "import_parquet",
    "import_scores",
    "open_store",
    "show_store",
]


def open_store(store: str | Path = DEFAULT_STORE_PATH, *, read_only: bool = False) -> Store:
    """Open (or create, unless ``read_only``) a results store; use it as a context manager."""
    return Store.open(store, read_only=read_only)


def import_scores(
    path: str | Path,
    *,
    store: str | Path = DEFAULT_STORE_PATH,
    allow_unknown_metrics: bool = False,
) -> ImportResult:
    """Import a tidy scores file (CSV / JSONL / Parquet) in one transaction.

    Re-importing the same file is a no-op (``status == "skipped"``); rows
    already stored with the same values are skipped; a stored key with a
    different value raises :class:`~glotbench.errors.InputError` and nothing
    is written.
    """
    with open_store_for_import(store) as s:
        return import_scores_file(s, path, allow_unknown_metrics=allow_unknown_metrics)


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
    out: str | Path, *, store: str | Path = DEFAULT_STORE_PATH, table: str = "all"
) -> ExportResult:
    """Export table(s) to CSV or Parquet (see :meth:`Store.export` for the file names)."""
    with Store.open(store, read_only=True) as s:
        files = s.export(out, table=table)
    return ExportResult(store=str(store), table=table, files=[str(f) for f in files])


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


def _single_metric(frame: pd.DataFrame) -> str | None:
    if "metric" not in frame.columns:
        return None
    metrics = sorted(frame["metric"].astype(str).unique())
    if len(metrics) > 1:
        raise InputError(
            f"the input holds several metrics ({', '.join(metrics)}); choose one with --metric",
            field="metric",
        )
    return metrics[0]


def load_replicated(
    *,
    input: str | Path | None = None,
    store: str | Path | None = None,
    metric: str | None = None,
    models: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
    n_replicates: int = 1000,
    seed: int = 0,
) -> ReplicatedScores | ComponentTable:
    """The replicated scores an analysis works on, from a file or a store.

    * ``input``: a tidy CSV / JSONL / Parquet file — either scores with
      optional ``seed`` and ``replicate`` columns, or ready SDs
      (``sigma_seed``/``sigma_boot`` or ``sigma_w``, one row per model and
      language);
    * ``store``: per-example statistics of ``metric`` (bootstrapped here, paired
      across models, ``n_replicates`` per seed) or, when the store holds no
      such runs, its scores table.
    """
    filters = {
        "model": models,
        "task": tasks,
        "language": languages,
        "metric": [metric] if metric else None,
    }
    if input is not None:
        from glotbench.core.readers import read_tidy

        table = read_tidy(input)
        frame = _filter_frame(table.frame, filters)
        positions = frame.index.to_numpy()

        def error(message: str, position: int | None, field: str | None) -> InputError:
            return table.error(
                message, None if position is None else int(positions[position]), field
            )

        frame = frame.reset_index(drop=True)
        chosen = _single_metric(frame)
        if SUMMARY_COLUMNS[0] in frame.columns or set(SUMMARY_COLUMNS) & set(frame.columns):
            return components_from_summary(frame, error=error)
        return replicates_from_frame(frame, metric=chosen, error=error)
    if store is None:
        raise InputError("give --input FILE or --store PATH")
    with open_store(store, read_only=True) as handle:
        runs = handle.runs(
            models=models, tasks=tasks, languages=languages, metrics=[metric] if metric else None
        )
        if not runs.empty:
            run_metrics = sorted(runs["metric"].unique())
            if metric is None and len(run_metrics) > 1:
                raise InputError(
                    f"the store holds runs of several metrics ({', '.join(run_metrics)}); "
                    "choose one with --metric",
                    field="metric",
                )
            return replicates_from_store(
                handle,
                metric or run_metrics[0],
                models=models,
                tasks=tasks,
                languages=languages,
                n_replicates=n_replicates,
                seed=seed,
            )
        scores = handle.scores()
    frame = _filter_frame(scores, filters).reset_index(drop=True)
    return replicates_from_frame(frame, metric=_single_metric(frame))


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
) -> Comparison:
    """Pairwise differences with SDs over draws and effect sizes."""
    return compare_models(source, settings, confidence_level=confidence_level)


def analyze_ranks(
    source: ReplicatedScores | ComponentTable,
    settings: DrawSettings,
    confidence_level: float = 0.95,
) -> Ranks:
    """Rank distributions, rank intervals and EuroEval rank scores."""
    return rank_models(source, settings, confidence_level=confidence_level)
