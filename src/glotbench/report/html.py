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
from glotbench.analysis.datasize import DataSizeResult
from glotbench.analysis.ranks import Ranks
from glotbench.analysis.variance import VarianceComponents
from glotbench.report import plots
from glotbench.report.analyses import LmmSummary

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
    intervals: str,
    variance: VarianceComponents,
    comparison: Comparison | None,
    ranks: Ranks | None,
    notes: Sequence[str] = (),
    *,
    datasize: Sequence[DataSizeResult] = (),
    lmm: Sequence[LmmSummary] = (),
) -> Report:
    """A report of the leaderboard, variance components, comparisons and ranks.

    ``board`` holds the request's computed aggregates
    (:meth:`glotbench.analysis.headline.Analysis.leaderboard`); ``intervals``
    says in words what their SEs and intervals contain.

    ``datasize`` and ``lmm`` add a section per evaluation-size analysis (τ
    curves, recommendation) and per mixed model (Q-Q plot, residual tests,
    fixed effects, ANOVA).
    """
    report = Report(title, notes=list(notes))
    level = round(board.confidence_level * 100)
    overall = board.overall.rename(
        columns={
            "standard_error": "SE",
            "ci_low": f"{level}% CI low",
            "ci_high": f"{level}% CI high",
        }
    )
    per_task = board.per_task.rename(
        columns={
            "standard_error": "SE",
            "se_languages": "SE (languages only)",
            "ci_low": f"{level}% CI low",
            "ci_high": f"{level}% CI high",
        }
    )
    overall = overall.rename(columns={"se_languages": "SE (languages only)"})
    report.add(
        "Aggregates",
        "<p>Overall = unweighted mean of task means. "
        + html.escape(intervals[:1].upper() + intervals[1:])
        + ". SE (languages only) = between-language SD/√L (√(Σ SE_t²)/T over tasks): it "
        "leaves out seed and test-set variance.</p>"
        + html_table(overall, 3)
        + html_table(
            per_task[
                [
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
            ],
            3,
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
            + html_table(ranks.summary.drop(columns=["aggregator"]), 2)
            + "<h3>% of draws at each rank</h3>"
            + html_table(ranks.distribution.drop(columns=["aggregator"]), 1),
        )
    for result in datasize:
        heading = "Test-set size" + (f": {result.metric}" if result.metric else "")
        report.add(heading, datasize_section(result))
    for summary in lmm:
        report.add(f"Mixed model: {summary.formula}", lmm_section(summary))
    return report


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
    path.write_text(report.render(), encoding="utf-8")
    return path
