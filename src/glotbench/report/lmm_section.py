"""The report's section on a mixed model: Q-Q plot, DHARMa residual tests, fixed
effects, ANOVA, random effects and estimated marginal means."""

from __future__ import annotations

import html
import math
from typing import Any

import pandas as pd

from glotbench.report import plots
from glotbench.report.analyses import LmmSummary
from glotbench.report.document import cell_text, figure, html_table, note_list


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
    return cell_text(value if isinstance(value, int | float) else None, 3)


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
        f"{html.escape(cell_text(summary.residual_variance, 4))}.</p>"
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
                    f"{cell_text(outliers.get('expected_rate'), 4)})",
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
                figure(
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
    parts.append(note_list(summary.messages))
    return "".join(parts)
