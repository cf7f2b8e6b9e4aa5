"""The HTML report: one self-contained document (inline CSS and SVG plots, no scripts).

Every text from the data is escaped with :func:`html.escape`; plots are
matplotlib SVG with glyphs drawn as paths. Rendering only: the numbers come
from the analysis results passed in. This module builds the report's sections
on the leaderboard, variance components, comparisons, ranks and speed; the
document (:mod:`~glotbench.report.document`), the row notes
(:mod:`~glotbench.report.row_notes`) and the evaluation-size and mixed-model
sections (:mod:`~glotbench.report.datasize_section`,
:mod:`~glotbench.report.lmm_section`) live next to it.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from glotbench.analysis.aggregate import Leaderboard
from glotbench.analysis.compare import Comparison
from glotbench.analysis.datasize import DataSizeResult
from glotbench.analysis.headline import Analysis
from glotbench.analysis.pair_view import RankedComparisons
from glotbench.analysis.planning.detectable import ALPHA, POWER, detectable_differences, mdd_factor
from glotbench.analysis.ranks import Ranks
from glotbench.analysis.speed import TRIVIAL_TOKENS_PER_SECOND, SpeedTable
from glotbench.analysis.variance import VarianceComponents
from glotbench.report import plots
from glotbench.report.analyses import LmmSummary
from glotbench.report.datasize_section import datasize_section
from glotbench.report.document import Report, RowNote, figure, html_table, write_report
from glotbench.report.lmm_section import lmm_section
from glotbench.report.row_notes import (
    cell_grid,
    drop_covered,
    lacking_note,
    left_out_note,
    partial_note,
    single_language_note,
)

__all__ = [
    "RANK_LEGEND",
    "TRIVIAL_SPEED",
    "Report",
    "RowNote",
    "build_report",
    "cell_grid",
    "datasize_section",
    "html_table",
    "lmm_section",
    "write_report",
]


RANK_LEGEND = (
    '<dl class="legend">'
    "<dt>mean_rank, modal_rank</dt><dd>the mean and the most frequent rank over the draws.</dd>"
    "<dt>rank_best, rank_worst</dt><dd>the {level}% rank interval (Chatbot Arena's, Chiang et "
    "al. 2024): rank_best = 1 + the number of models significantly better, rank_worst = the "
    "number of ranked models − the number of models significantly worse; <i>significantly</i>: "
    "the {level}% percentile interval of the paired draws of the two models' difference excludes "
    "0.</dd>"
    "<dt>euroeval_rank_*</dt><dd>EuroEval's rank score (1 = best) with its bootstrap interval "
    "(low, high).</dd>"
    "</dl>"
)


def build_report(
    title: str,
    board: Leaderboard,
    intervals: str,
    variance: VarianceComponents,
    comparison: Comparison | None,
    ranks: Ranks | None,
    notes: Sequence[str] = (),
    *,
    datasize: Sequence[DataSizeResult] = (),
    lmm: Sequence[LmmSummary] = (),
    analysis: Analysis | None = None,
    settings_text: str = "",
    task_views: Mapping[str, RankedComparisons] | None = None,
    speed: SpeedTable | None = None,
) -> Report:
    """A report of the leaderboard, variance components, comparisons and ranks.

    ``task_views``: each task's comparisons of the models that cover it
    (:func:`~glotbench.analysis.pair_view.task_comparisons`), shown when models
    lack whole tasks; an overall comparison or rank section that cannot be
    shown is replaced by one that says why (issue 25 item 6). ``speed``: the
    store's inference speed (:func:`glotbench.analysis.sources.speed_store.speed_table`),
    trivial models shown as such.

    ``settings_text``: the request's settings in words
    (:meth:`glotbench.analysis.settings.AnalysisSettings.describe`), the footer.

    ``board`` holds the request's computed aggregates
    (:meth:`glotbench.analysis.headline.Analysis.leaderboard`); ``intervals``
    says in words what their SEs and intervals contain; ``analysis`` (that
    result) names the cells left out for models that lack them, shown as a
    numbered note with a table and marked on those models' rows.

    ``datasize`` and ``lmm`` add a section per evaluation-size analysis (τ
    curves, recommendation) and per mixed model (Q-Q plot, residual tests,
    fixed effects, ANOVA).
    """
    partial, left_out = partial_note(board), left_out_note(analysis)
    lacking, single = lacking_note(variance), single_language_note(variance)
    report = Report(
        title,
        notes=drop_covered(notes, (left_out, lacking, single)),
        row_notes=[n for n in (partial, left_out, lacking, single) if n is not None],
        settings=settings_text,
    )
    overall_marks = report.marks(*(n for n in (partial, left_out) if n is not None))
    level = f"{board.confidence_level * 100:g}"
    report.add(
        "Aggregates",
        _aggregates_section(
            board,
            intervals,
            level,
            overall_marks,
            report.marks(left_out) if left_out is not None else None,
        ),
    )
    report.add(
        "Variance components",
        _variance_section(variance, report.marks(*(n for n in (lacking, single) if n is not None))),
    )
    if comparison is not None and not comparison.aggregates.empty:
        report.add("Pairwise comparisons", _comparisons_section(comparison, board, level))
    if ranks is not None and not ranks.distribution.empty:
        report.add("Rank distributions", _ranks_section(ranks, level, overall_marks))
    if comparison is None or comparison.aggregates.empty:
        report.add("Pairwise comparisons", _omitted_overall(board, analysis, "comparisons"))
    if ranks is None or ranks.distribution.empty:
        report.add("Rank distributions", _omitted_overall(board, analysis, "ranks"))
    for task, view in (task_views or {}).items():
        _add_task_comparison(report, task, view, level)
    if speed is not None and len(speed):
        report.add("Inference speed", _speed_section(speed))
    for result in datasize:
        heading = "Test-set size" + (f": {result.metric}" if result.metric else "")
        report.add(heading, datasize_section(result))
    for summary in lmm:
        report.add(f"Mixed model: {summary.formula}", lmm_section(summary))
    return report


def _aggregates_section(
    board: Leaderboard,
    intervals: str,
    level: str,
    overall_marks: dict[Any, list[int]] | None,
    task_marks: dict[Any, list[int]] | None,
) -> str:
    """The overall and per-task aggregates with their SEs and intervals, and what the
    intervals contain (``intervals``, in words)."""
    said = html.escape(intervals[:1].upper() + intervals[1:])
    names = {
        "standard_error": "SE",
        "ci_low": f"{level}% CI low",
        "ci_high": f"{level}% CI high",
        "se_languages": "SE (languages only)",
    }
    overall = board.overall.rename(columns=names)
    per_task = board.per_task.rename(columns=names)
    per_task_columns = [
        c
        for c in (
            "task",
            "model",
            "score",
            "SE",
            f"{level}% CI low",
            f"{level}% CI high",
            "SE (languages only)",
            "n_languages",
        )
        if c in per_task
    ]
    return (
        f"<p><b>What the intervals contain.</b> {said}. SE (languages only) = "
        "between-language SD/√L (√(Σ SE_t²)/T over tasks): it leaves out seed and test-set "
        "variance.</p>"
        "<h3>Overall: unweighted mean of task means</h3>"
        + html_table(overall, 3, marks=overall_marks)
        + "<h3>Per task: mean over languages</h3>"
        + html_table(per_task[per_task_columns], 3, marks=task_marks, key=("task", "model"))
    )


def _variance_section(variance: VarianceComponents, marks: dict[Any, list[int]] | None) -> str:
    """The variance components per model and task, as bars and a table."""
    variance_columns = [
        c
        for c in (
            "model",
            "task",
            "n_languages",
            "mean",
            "sigma_b",
            "se_sigma_b",
            "sigma_seed_mean",
            "sigma_boot_mean",
            "sigma_w_mean",
        )
        if c in variance.per_model
    ]
    return (
        "<p>Standard deviations of a score: σ_b between languages (with its SE), and the "
        "means over languages of σ_seed between seeds, σ_boot between test-set bootstrap "
        "replicates and σ_w within a language (seeds and replicates together).</p>"
        + figure(
            plots.variance_bars(variance.per_model), "σ_b, σ_seed and σ_boot per model and task"
        )
        + "<h3>Per model and task</h3>"
        + html_table(variance.per_model[variance_columns], 3, marks=marks, key=("model", "task"))
    )


def _comparisons_section(comparison: Comparison, board: Leaderboard, level: str) -> str:
    """The overall pairwise comparisons: forest plot, differences with their detectability,
    and the grid of task–language cells compared."""
    return (
        f"<p>{html.escape(comparison.settings.describe())}. ci_low–ci_high: the {level}% "
        "percentile interval of the difference A − B over the same paired draws as the "
        "aggregates, so it contains the same sources of variation; sd: the SD of the "
        "difference over the draws; effect_size = difference / sd, flagged at "
        f"|effect| ≥ 2; share_a_better: the share of draws with A ahead; mdd: the "
        f"minimum detectable difference, the smallest true difference this design detects "
        f"with {POWER:.0%} power at two-sided α = {ALPHA:g} ({mdd_factor():.2f} × sd; "
        "docs/planning.md), and detectable: |difference| ≥ mdd.</p>"
        + figure(plots.forest_plot(comparison.aggregates), "differences A − B of the mean")
        + "<h3>Differences A − B</h3>"
        + html_table(detectable_differences(comparison.aggregates).drop(columns=["aggregator"]), 3)
        + f"<h3>Task–language cells compared ({len(comparison.languages)})</h3>"
        + html_table(cell_grid(comparison.languages, board.tasks), key=())
    )


def _ranks_section(ranks: Ranks, level: str, marks: dict[Any, list[int]] | None) -> str:
    """The overall rank distributions: heat map, rank summary with its legend, and the
    share of draws at each rank."""
    return (
        f"<p>{html.escape(ranks.settings.describe())}: the same paired draws as the "
        "aggregates, so ranks vary with the same sources.</p>"
        + figure(
            plots.rank_heatmap(ranks.distribution.drop(columns=["aggregator"])),
            "% of draws at each rank",
        )
        + "<h3>Rank summary</h3>"
        + html_table(ranks.summary.drop(columns=["aggregator"]), 2, marks=marks)
        + RANK_LEGEND.format(level=level)
        + "<h3>% of draws at each rank</h3>"
        + html_table(ranks.distribution.drop(columns=["aggregator"]), 1)
    )


#: how a trivial model's speed reads (glotbench.analysis.speed.TRIVIAL_TOKENS_PER_SECOND)
TRIVIAL_SPEED = "trivial (no per-token work)"


def _omitted_overall(board: Leaderboard, analysis: Analysis | None, what: str) -> str:
    """Why the overall view has no ``what`` (comparisons or ranks) to show."""
    models = (
        list(analysis.overall.models)
        if analysis is not None
        else [str(m) for m in board.overall["model"]]
    )
    views = analysis.tasks if analysis is not None else {}
    others = dict.fromkeys(m for v in views.values() for m in v.models if m not in models)
    left = {m: [t for t, v in views.items() if m not in v.models] for m in others}
    shown = ", ".join(models) if models else "none"
    why = (
        f"<p>No overall {what}: fewer than two models have a score on every task "
        f"(overall view: {html.escape(shown)})."
    )
    if left:
        lacking = "; ".join(f"{m} lacks {', '.join(t)}" for m, t in left.items())
        why += f" Left out of the overall view: {html.escape(lacking)}."
    if analysis is not None and len(analysis.tasks) > 1:
        why += f" The {what} per task below compare, on each task, the models that cover it."
    return why + "</p>"


def _add_task_comparison(report: Report, task: str, view: RankedComparisons, level: str) -> None:
    """The comparison and ranks of the models covering ``task``, on its cells alone."""
    body = (
        f"<p>The {len(view.models)} models with a score on {html.escape(task)} "
        f"({html.escape(', '.join(view.models))}), compared on this task's cells alone "
        f"with the overall view's draws; ci_low–ci_high: the {level}% percentile interval "
        "of A − B; sd: its SD over the draws; effect_size = difference / sd, flagged at "
        "|effect| ≥ 2; mdd: the minimum detectable difference (docs/planning.md).</p>"
    )
    if view.comparison is not None and not view.comparison.aggregates.empty:
        body += "<h3>Differences A − B</h3>" + html_table(
            detectable_differences(view.comparison.aggregates).drop(columns=["aggregator"]),
            3,
        )
    if view.ranks is not None and not view.ranks.summary.empty:
        body += "<h3>Rank summary</h3>" + html_table(
            view.ranks.summary.drop(columns=["aggregator"]), 2
        )
    report.add(f"Comparisons on {task}", body)


def _speedcell_text(row: Mapping[str, Any], suffix: str = "") -> str:
    if row.get("trivial"):
        return TRIVIAL_SPEED
    mean, half = row[f"tokens_per_second{suffix}"], row[f"ci_half_width{suffix}"]
    if mean is None or mean != mean:
        return "–"
    return f"{mean:,.0f}" + (f" ± {half:,.0f}" if half is not None and half == half else "")


def _speed_section(speed: SpeedTable) -> str:
    """ScandEval's speed table: GPT-2 tokens/s, mean ± 1.96·SD/√n; trivial models flagged."""
    rows = pd.DataFrame(
        [
            {
                "model": r["model"],
                "tokens/s": _speedcell_text(r),
                "tokens/s (short)": _speedcell_text(r, "_short"),
                "iterations": r["iterations"],
            }
            for r in speed.rows
        ]
    )
    return (
        "<p>GPT-2 tokens per second (ScandEval's speed benchmark): mean ± 1.96·SD/√n over "
        "documents of ~100 … 1,000 tokens; short: ~12 … 125. "
        f"{TRIVIAL_SPEED}: above {TRIVIAL_TOKENS_PER_SECOND:.0e} tokens/s the model does no "
        "per-token work (a majority baseline) and the figure times call overhead.</p>"
        + html_table(rows, 0)
    )
