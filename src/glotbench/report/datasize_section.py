"""The report's section on an evaluation-size analysis: τ curves, recommendation, table."""

from __future__ import annotations

import html
from collections.abc import Sequence

import pandas as pd

from glotbench.analysis.datasize import DataSizeResult
from glotbench.report import plots
from glotbench.report.document import figure, html_table, note_list


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
        + figure(
            plots.tau_curves(result.table, result.level, result.token_unit),
            "mean τ against size per strategy; band: 5–95 % of the draws; solid: models, "
            "dashed: runs (each seed a system)",
        )
        + "<h3>Recommendation</h3>"
        + html_table(recommendation)
        + "<h3>Agreement per size</h3>"
        + html_table(table, 3)
        + note_list(result.notes)
    )
