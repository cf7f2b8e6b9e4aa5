"""The HTML report: one self-contained document (inline CSS and SVG plots, no scripts).

Every text from the data is escaped with :func:`html.escape`; plots are
matplotlib SVG with glyphs drawn as paths. Rendering only: the numbers come
from the analysis results passed in.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
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
from glotbench.store.atomic_files import write_text_atomic

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 70rem; color: #1d232a; }
h1 { font-size: 1.6rem; }
h2 { font-size: 1.25rem; margin-top: 2rem; border-bottom: 1px solid #dde3e8; }
h3 { font-size: 1.02rem; margin: 1.2rem 0 .4rem; }
table { border-collapse: collapse; font-size: .85rem; font-variant-numeric: tabular-nums; }
th, td { padding: .2rem .5rem; border-bottom: 1px solid #eef1f4; text-align: right; }
th:first-child, td:first-child, th.text, td.text { text-align: left; }
th { background: #f5f7f9; } .notes { color: #4a5560; font-size: .9rem; }
figure { margin: 1rem 0; } figcaption { color: #4a5560; font-size: .9rem; }
.scroll { overflow-x: auto; }
.legend { color: #4a5560; font-size: .9rem; display: grid; grid-template-columns: max-content 1fr;
  gap: .2rem .8rem; } .legend dt { font-weight: 600; } .legend dd { margin: 0; }
a.note-mark { color: #1f4e89; font-weight: 600; text-decoration: none; margin-left: .15rem; }
ol.row-notes { list-style: none; padding-left: 1rem; } ol.row-notes > li { margin-bottom: .6rem; }
ol.row-notes table { margin-top: .3rem; } ol.row-notes td { text-align: center; }
li:target { background: #fff6d6; }
"""
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

#: the mark of a cell a row note's table lists as missing / present
MISSING, PRESENT = "✗", "✓"


def _cell(value: Any, digits: int) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


TEXT_TH, TEXT_TD = '<th class="text">', '<td class="text">'


def _is_text(column: pd.Series) -> bool:
    return column.dtype == object or isinstance(column.dtype, pd.StringDtype)


def _marks_html(numbers: Sequence[int]) -> str:
    return "".join(
        f'<sup><a class="note-mark" href="#note-{k}" title="note {k}">{k}</a></sup>'
        for k in numbers
    )


def html_table(
    frame: pd.DataFrame,
    digits: int = 2,
    *,
    marks: Mapping[Any, Sequence[int]] | None = None,
    key: Sequence[str] = ("model",),
) -> str:
    """An escaped HTML table of a frame (NaN as —); text columns left-aligned.

    ``marks`` maps a row's ``key`` value (one column: the value; several: the
    tuple of values) to the numbers of the notes about it, shown after the
    row's ``model`` cell (else its first ``key`` cell) as links to ``#note-N``.
    """
    text = [_is_text(frame[c]) for c in frame.columns]
    columns = list(frame.columns)
    head = "".join(
        (TEXT_TH if t else "<th>") + f"{html.escape(str(c))}</th>"
        for c, t in zip(columns, text, strict=True)
    )
    use_marks = bool(marks) and all(k in columns for k in key)
    # the numbers go after the model's name when the key has one, else after the key's first cell
    at = columns.index("model" if "model" in key else key[0]) if use_marks else -1
    rows = []
    for row in frame.itertuples(index=False):
        found: Sequence[int] = ()
        if use_marks and marks is not None:
            values = tuple(row[columns.index(k)] for k in key)
            found = marks.get(values[0] if len(values) == 1 else values, ())
        cells = []
        for i, (value, is_text) in enumerate(zip(row, text, strict=True)):
            body = html.escape(_cell(value, digits)) + (_marks_html(found) if i == at else "")
            cells.append((TEXT_TD if is_text else "<td>") + f"{body}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    table = f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    return f'<div class="scroll">{table}</div>'


@dataclass(frozen=True)
class RowNote:
    """A note about particular rows: numbered in the notes, its number marked on the rows.

    ``rows`` are the keys of the rows it concerns (a model, or (model, task)),
    ``table`` an optional table shown with it (e.g. model × cell, ✗ = missing).
    """

    text: str
    rows: tuple[Any, ...]
    table: pd.DataFrame | None = None


@dataclass
class Report:
    """Sections of a report, rendered by :meth:`render`.

    ``row_notes`` are numbered (1, 2, …) in the order given; tables built with
    :meth:`marks` show those numbers on the rows each note concerns.
    """

    title: str
    sections: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    row_notes: list[RowNote] = field(default_factory=list)
    #: the settings every number was computed with, in words (the footer)
    settings: str = ""
    #: the footer's pointer to the reproductions page, escaped HTML
    #: (:func:`glotbench.report.reproduction_link.footer_html`; empty: none)
    reproductions: str = ""

    def add(self, heading: str, body: str) -> None:
        self.sections.append((heading, body))

    def marks(self, *notes: RowNote) -> dict[Any, list[int]]:
        """Row key → numbers of ``notes`` (each one of :attr:`row_notes`) that concern it."""
        out: dict[Any, list[int]] = {}
        for note in notes:
            number = self.row_notes.index(note) + 1
            for row in note.rows:
                out.setdefault(row, []).append(number)
        return out

    def render(self) -> str:
        sections = [*self.sections]
        if self.notes or self.row_notes:
            sections.append(("Notes", self._notes()))
        parts = [
            '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
            f"<title>{html.escape(self.title)}</title><style>{STYLE}</style></head><body>",
            f"<h1>{html.escape(self.title)}</h1>",
            "<nav><ul>"
            + "".join(
                f'<li><a href="#s{i}">{html.escape(h)}</a></li>'
                for i, (h, _) in enumerate(sections)
            )
            + "</ul></nav>",
        ]
        for i, (heading, body) in enumerate(sections):
            parts.append(f'<section id="s{i}"><h2>{html.escape(heading)}</h2>{body}</section>')
        computed = f"Computed with {html.escape(self.settings)}. " if self.settings else ""
        parts.append(
            f'<footer><p class="notes" id="settings">{computed}{self.reproductions}'
            "Made with glotbench.</p></footer>"
            "</body></html>"
        )
        return "".join(parts)

    def _notes(self) -> str:
        out = ""
        if self.row_notes:
            items = []
            for k, note in enumerate(self.row_notes, start=1):
                table = html_table(note.table) if note.table is not None else ""
                items.append(
                    f'<li id="note-{k}"><sup>{k}</sup> {html.escape(note.text)}{table}</li>'
                )
            out += '<ol class="notes row-notes">' + "".join(items) + "</ol>"
        if self.notes:
            out += (
                '<ul class="notes">'
                + "".join(f"<li>{html.escape(n)}</li>" for n in self.notes)
                + "</ul>"
            )
        return out


def _figure(svg: str, caption: str) -> str:
    return f"<figure>{svg}<figcaption>{html.escape(caption)}</figcaption></figure>"


def _grid(rows: Mapping[str, Sequence[str]], columns: Sequence[str], first: str) -> pd.DataFrame:
    """A ✗/✓ table: one row per key of ``rows``, ✗ in the columns its value lists."""
    return pd.DataFrame(
        [
            [name, *(MISSING if c in lacks else PRESENT for c in columns)]
            for name, lacks in rows.items()
        ],
        columns=[first, *columns],
    )


def cell_grid(labels: Sequence[str], tasks: Sequence[str]) -> pd.DataFrame:
    """Task–language cells (``task/language`` labels, or languages of one task) as a table.

    One row per task, one column per language, ✓ where the cell is listed.
    """
    cells: dict[str, list[str]] = {}
    for label in labels:
        task = next((t for t in tasks if label.startswith(f"{t}/")), None)
        if task is None:  # one task: labels are languages
            task, language = (tasks[0] if len(tasks) == 1 else ""), label
        else:
            language = label[len(task) + 1 :]
        cells.setdefault(task, []).append(language)
    languages = sorted({lang for langs in cells.values() for lang in langs})
    return pd.DataFrame(
        [
            [task, *(PRESENT if lang in langs else "" for lang in languages)]
            for task, langs in cells.items()
        ],
        columns=["task", *languages],
    )


def _partial_note(board: Leaderboard) -> RowNote | None:
    """Models without every task: no overall score."""
    overall = board.overall
    unscored = overall.loc[overall["score"].isna(), "model"].astype(str).tolist()
    if not unscored:
        return None
    has = board.per_task.groupby("model")["task"].agg(lambda t: set(t.astype(str)))
    lacks = {m: [t for t in board.tasks if t not in has.get(m, set())] for m in unscored}
    return RowNote(
        "no score on every task, so no overall score, SE or rank; only its task rows "
        f"are shown ({MISSING} = the task is missing)",
        tuple(unscored),
        _grid(lacks, board.tasks, "model"),
    )


def _left_out_note(analysis: Analysis | None) -> RowNote | None:
    """Cells left out of the overall view or a task's view because some models lack them."""
    if analysis is None:
        return None
    several = len(analysis.tasks) > 1  # with one task, the overall view is the task's view
    lacks: dict[str, list[str]] = {}
    rows: list[Any] = []
    for model, labels in analysis.overall.missing.items():
        lacks.setdefault(model, []).extend(labels)
        rows.append(model)
    for task, view in analysis.tasks.items() if several else ():
        for model, labels in view.missing.items():
            lacks.setdefault(model, []).extend(f"{task}/{c}" for c in labels)
            rows.append((task, model))
    if not lacks:
        return None
    columns = list(
        dict.fromkeys(
            [
                *analysis.overall.left_out,
                *(
                    f"{task}/{c}"
                    for task, view in (analysis.tasks.items() if several else ())
                    for c in view.left_out
                ),
            ]
        )
    )
    return RowNote(
        f"{len(columns)} task–language cell(s) are not shared by every model, so each "
        "is left out, for every model, of the tables the marked rows are in: the "
        "overall scores, SEs, intervals, comparisons and ranks, and the per-task "
        f"scores of its task ({MISSING} = no score)",
        tuple(dict.fromkeys(rows)),
        _grid({m: list(dict.fromkeys(v)) for m, v in lacks.items()}, columns, "model"),
    )


def _lacking_note(variance: VarianceComponents) -> RowNote | None:
    """Models lacking task–language cells (from the variance components' rows)."""
    present = variance.per_unit
    if not {"model", "task", "unit"} <= set(present.columns):
        return None
    units = list(dict.fromkeys(present["unit"].astype(str)))
    task_of = dict(zip(present["unit"].astype(str), present["task"].astype(str), strict=True))
    have = set(zip(present["model"].astype(str), present["unit"].astype(str), strict=True))
    lacks = {
        m: [u for u in units if (m, u) not in have]
        for m in dict.fromkeys(present["model"].astype(str))
    }
    lacks = {m: v for m, v in lacks.items() if v}
    if not lacks:
        return None
    columns = [u for u in units if any(u in v for v in lacks.values())]
    return RowNote(
        "the marked models lack some task–language cells: their variance components "
        "use their own languages, and comparisons and ranks use the cells every "
        f"compared model has ({MISSING} = no score)",
        tuple(dict.fromkeys((m, task_of[u]) for m, v in lacks.items() for u in v)),
        _grid(lacks, columns, "model"),
    )


def _single_language_note(variance: VarianceComponents) -> RowNote | None:
    """Model–task rows with one language: no σ_b."""
    frame = variance.per_model
    if not {"n_languages", "model", "task"} <= set(frame.columns):
        return None
    one = frame[frame["n_languages"] < 2]
    if one.empty:
        return None
    return RowNote(
        "one language only: no between-language SD σ_b (shown as —)",
        tuple(zip(one["model"].astype(str), one["task"].astype(str), strict=True)),
    )


def _drop_covered(notes: Sequence[str], covered: Sequence[RowNote | None]) -> list[str]:
    """Text notes without those a row note (with its table) says better."""
    left_out, lacking, single = covered
    out = []
    for note in notes:
        if left_out is not None and note.startswith("unbalanced design:") and "left out" in note:
            continue
        if lacking is not None and note.startswith("unbalanced design:") and "no scores" in note:
            continue
        if single is not None and note.endswith(": one language only, so no between-language SD"):
            continue
        out.append(note)
    return out


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
    partial, left_out = _partial_note(board), _left_out_note(analysis)
    lacking, single = _lacking_note(variance), _single_language_note(variance)
    report = Report(
        title,
        notes=_drop_covered(notes, (left_out, lacking, single)),
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
        + _figure(
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
        + _figure(plots.forest_plot(comparison.aggregates), "differences A − B of the mean")
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
        + _figure(
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


def _speed_cell(row: Mapping[str, Any], suffix: str = "") -> str:
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
                "tokens/s": _speed_cell(r),
                "tokens/s (short)": _speed_cell(r, "_short"),
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


def _items(messages: Sequence[str]) -> str:
    if not messages:
        return ""
    return (
        '<ul class="notes">'
        + "".join(f"<li>{html.escape(str(m))}</li>" for m in messages)
        + "</ul>"
    )


def _columns(frame: pd.DataFrame, wanted: Sequence[str]) -> pd.DataFrame:
    present = [c for c in wanted if c in frame.columns]
    return frame[present + [c for c in frame.columns if c not in present]]


def datasize_section(result: DataSizeResult) -> str:
    """τ-vs-size curves per strategy, the recommendation and the per-size table."""
    models = ", ".join(result.models)
    intro = (
        f"<p>Ranking agreement (weighted Kendall τ) of subsets of the test set with the "
        f"full set: {len(result.models)} models ({html.escape(models)}), "
        f"{result.n_seeds or 'unequal numbers of'} seed(s) each, {result.n_examples} examples "
        f"({html.escape(f'{result.n_tokens:g}')} {html.escape(result.token_unit)}), "
        f"{result.n_draws} draws per size and strategy, seed {result.seed}. Recommended: the "
        f"smallest size whose mean τ reaches {html.escape(f'{result.level:g}')} and stays "
        "there.</p>"
    )
    recommendation = result.recommendation.copy()
    if "recommended_size" in recommendation:
        recommendation["recommended_size"] = [
            None if pd.isna(v) else int(v) for v in recommendation["recommended_size"]
        ]
    recommendation = recommendation.rename(
        columns={"recommended_size": f"recommended size ({result.token_unit})"}
    )
    table = _columns(
        result.table,
        ["strategy", "size", "unit", "tokens_mean", "n_draws", "tau_mean", "tau_sd"],
    )
    return (
        intro
        + _figure(
            plots.tau_curves(result.table, result.level, result.token_unit),
            "mean τ against size per strategy; band: 5–95 % of the draws; solid: models, "
            "dashed: runs (each seed a system)",
        )
        + "<h3>Recommendation</h3>"
        + html_table(recommendation)
        + "<h3>Agreement per size</h3>"
        + html_table(table, 3)
        + _items(result.notes)
    )


def _p_values(frame: pd.DataFrame) -> pd.DataFrame:
    """p-value columns as 3 significant digits (a fixed number of decimals shows 0)."""
    out = frame.copy()
    for column in out.columns:
        if column == "p" or str(column).startswith("p_") or str(column).endswith("_p"):
            out[column] = [
                f"{v:.3g}" if isinstance(v, int | float) and math.isfinite(v) else v
                for v in out[column]
            ]
    return out


def _r2(value: object) -> str:
    return _cell(value if isinstance(value, int | float) else None, 3)


def _extra_residual_tests(checks: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows for DHARMa's quantile test and per-group tests, when the JSON has them."""
    rows: list[dict[str, Any]] = []
    quantiles = checks.get("quantiles")
    if isinstance(quantiles, dict):
        rows.append(
            {
                "test": "quantiles vs fixed-effect prediction (quantile regressions)",
                "statistic": None,
                "p": quantiles.get("p"),
            }
        )
    for test in checks.get("categorical") or []:
        if not isinstance(test, dict):
            continue
        groups = test.get("groups") or []
        rows.append(
            {
                "test": f"uniformity within {test.get('factor')} groups (KS, Holm; "
                f"{len(groups)} groups)",
                "statistic": None,
                "p": test.get("min_p_holm"),
            }
        )
        rows.append(
            {
                "test": f"equal spread across {test.get('factor')} groups (Levene)",
                "statistic": (test.get("levene") or {}).get("F"),
                "p": (test.get("levene") or {}).get("p"),
            }
        )
    return rows


def lmm_section(summary: LmmSummary) -> str:
    """Q-Q plot and DHARMa tests, fixed effects, ANOVA, random effects, EMMs."""
    parts = [
        f"<p><code>{html.escape(summary.formula)}</code> fitted by "
        f"{html.escape(summary.criterion)}"
        + (f" to {summary.n_observations} observations" if summary.n_observations else "")
        + f"; R² marginal {html.escape(_r2(summary.r2.get('marginal')))}, conditional "
        f"{html.escape(_r2(summary.r2.get('conditional')))}; residual variance "
        f"{html.escape(_cell(summary.residual_variance, 4))}.</p>"
    ]
    checks = summary.residual_checks
    if checks is not None:
        uniformity = checks.get("uniformity", {})
        dispersion = checks.get("dispersion", {})
        outliers = checks.get("outliers", {})
        tests = pd.DataFrame(
            [
                {
                    "test": "uniformity (Kolmogorov–Smirnov)",
                    "statistic": uniformity.get("ks_statistic"),
                    "p": uniformity.get("p"),
                },
                {
                    "test": "dispersion (observed / simulated SD)",
                    "statistic": dispersion.get("ratio"),
                    "p": dispersion.get("p"),
                },
                {
                    "test": "outliers (outside all simulations; expected rate "
                    f"{_cell(outliers.get('expected_rate'), 4)})",
                    "statistic": f"{outliers.get('count')}",
                    "p": outliers.get("p"),
                },
                *_extra_residual_tests(checks),
            ]
        )
        simulation = f"{checks.get('n_sim')} simulations" + (
            ", conditional on the random effects" if checks.get("conditional") else ""
        )
        if summary.qq is not None:
            parts.append(
                _figure(
                    plots.qq_plot(*summary.qq),
                    f"Q-Q plot of the scaled (DHARMa) residuals against U(0, 1); {simulation}",
                )
            )
        else:
            parts.append(
                '<p class="notes">No Q-Q plot: the residuals are not in the input (write them '
                "with <code>glotbench analyze lmm --residuals --json</code>).</p>"
            )
        parts.append("<h3>Simulated-residual tests</h3>" + html_table(_p_values(tests), 4))
    else:
        parts.append(
            '<p class="notes">No residual checks: simulate them with '
            "<code>glotbench analyze lmm --residuals --json</code>.</p>"
        )
    parts.append(
        "<h3>Fixed effects (Satterthwaite df)</h3>"
        + html_table(_p_values(summary.fixed_effects), 4)
    )
    if not summary.anova.empty:
        parts.append(
            "<h3>Type III ANOVA + partial η²</h3>" + html_table(_p_values(summary.anova), 4)
        )
    if not summary.random_effects.empty:
        parts.append("<h3>Random effects</h3>" + html_table(summary.random_effects, 4))
    for spec, table in summary.emmeans.items():
        parts.append(
            f"<h3>Estimated marginal means: {html.escape(spec)}</h3>" + html_table(table, 4)
        )
        if spec in summary.contrasts:
            parts.append(
                f"<h3>Pairwise contrasts: {html.escape(spec)}</h3>"
                + html_table(_p_values(summary.contrasts[spec]), 4)
            )
    parts.append(_items(summary.messages))
    return "".join(parts)


def write_report(report: Report, out: str | Path) -> Path:
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    # a temporary file renamed onto the target: a killed build keeps the old
    # report, and a symlink at the target is replaced, never followed
    write_text_atomic(path, report.render())
    return path
