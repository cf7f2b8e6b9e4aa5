"""The HTML report: one self-contained document (inline CSS and SVG plots, no scripts).

Every text from the data is escaped with :func:`html.escape`; plots are
matplotlib SVG with glyphs drawn as paths. Rendering only: the numbers come
from the analysis results passed in.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from glotbench.analysis.aggregate import Leaderboard
from glotbench.analysis.compare import Comparison
from glotbench.analysis.ranks import Ranks
from glotbench.analysis.variance import VarianceComponents
from glotbench.report import plots

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 70rem; color: #1d232a; }
h1 { font-size: 1.6rem; }
h2 { font-size: 1.25rem; margin-top: 2rem; border-bottom: 1px solid #dde3e8; }
table { border-collapse: collapse; font-size: .85rem; font-variant-numeric: tabular-nums; }
th, td { padding: .2rem .5rem; border-bottom: 1px solid #eef1f4; text-align: right; }
th:first-child, td:first-child { text-align: left; }
th { background: #f5f7f9; } .notes { color: #4a5560; font-size: .9rem; }
figure { margin: 1rem 0; } figcaption { color: #4a5560; font-size: .9rem; }
.scroll { overflow-x: auto; }
"""
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def _cell(value: Any, digits: int) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def html_table(frame: pd.DataFrame, digits: int = 2) -> str:
    """An escaped HTML table of a frame (NaN as —)."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(_cell(v, digits))}</td>" for v in row) + "</tr>"
        for row in frame.itertuples(index=False)
    )
    table = f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    return f'<div class="scroll">{table}</div>'


@dataclass
class Report:
    """Sections of a report, rendered by :meth:`render`."""

    title: str
    sections: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, heading: str, body: str) -> None:
        self.sections.append((heading, body))

    def render(self) -> str:
        parts = [
            '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
            f"<title>{html.escape(self.title)}</title><style>{STYLE}</style></head><body>",
            f"<h1>{html.escape(self.title)}</h1>",
            "<nav><ul>"
            + "".join(
                f'<li><a href="#s{i}">{html.escape(h)}</a></li>'
                for i, (h, _) in enumerate(self.sections)
            )
            + "</ul></nav>",
        ]
        for i, (heading, body) in enumerate(self.sections):
            parts.append(f'<section id="s{i}"><h2>{html.escape(heading)}</h2>{body}</section>')
        if self.notes:
            parts.append(
                '<h2>Notes</h2><ul class="notes">'
                + "".join(f"<li>{html.escape(n)}</li>" for n in self.notes)
                + "</ul>"
            )
        parts.append('<p class="notes">Made with glotbench.</p></body></html>')
        return "".join(parts)


def _figure(svg: str, caption: str) -> str:
    return f"<figure>{svg}<figcaption>{html.escape(caption)}</figcaption></figure>"


def build_report(
    title: str,
    board: Leaderboard,
    variance: VarianceComponents,
    comparison: Comparison | None,
    ranks: Ranks | None,
    notes: Sequence[str] = (),
) -> Report:
    """A report of the leaderboard, variance components, comparisons and ranks."""
    report = Report(title, notes=list(notes))
    level = round(board.confidence_level * 100)
    overall = board.overall.rename(
        columns={
            "standard_error": "SE",
            "ci_low": f"{level}% CI low",
            "ci_high": f"{level}% CI high",
        }
    )
    report.add(
        "Aggregates",
        "<p>Overall = unweighted mean of task means; SE = √(Σ SE_t²)/T with "
        "SE_t = between-language SD/√L (languages as a sample).</p>"
        + html_table(overall)
        + html_table(
            board.per_task.rename(columns={"standard_error": "SE"})[
                ["task", "model", "score", "SE", "ci_low", "ci_high", "n_languages"]
            ]
        ),
    )
    report.add(
        "Variance components",
        _figure(
            plots.variance_bars(variance.per_model), "σ_b, σ_seed and σ_boot per model and task"
        )
        + html_table(
            variance.per_model[
                [
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
            ],
            3,
        ),
    )
    if comparison is not None and not comparison.aggregates.empty:
        report.add(
            "Pairwise comparisons",
            f"<p>{html.escape(comparison.settings.describe())}; languages: "
            f"{html.escape(', '.join(comparison.languages))}.</p>"
            + _figure(plots.forest_plot(comparison.aggregates), "differences A − B of the mean")
            + html_table(comparison.aggregates.drop(columns=["aggregator"]), 3),
        )
    if ranks is not None and not ranks.distribution.empty:
        report.add(
            "Rank distributions",
            f"<p>{html.escape(ranks.settings.describe())}.</p>"
            + _figure(
                plots.rank_heatmap(ranks.distribution.drop(columns=["aggregator"])),
                "% of draws at each rank",
            )
            + html_table(ranks.summary.drop(columns=["aggregator"]), 2),
        )
    return report


def write_report(report: Report, out: str | Path) -> Path:
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(report.render(), encoding="utf-8")
    return path
