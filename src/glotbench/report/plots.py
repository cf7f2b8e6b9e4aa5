"""Plots of analysis results as self-contained SVG text (matplotlib, Agg; no files, no network).

Rendering only: every number plotted comes from an analysis result.
"""

from __future__ import annotations

import io
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.ticker import FuncFormatter, NullFormatter  # noqa: E402

#: glyphs as paths, so no text (and no model name) reaches the SVG as markup
plt.rcParams["svg.fonttype"] = "path"
plt.rcParams["svg.hashsalt"] = "glotbench"
#: every label is plain text: a model named ``m$\frac{a$x`` is drawn as typed, never
#: parsed as TeX (mathtext raised ValueError on it, and ``$x$`` would be typeset)
plt.rcParams["text.parse_math"] = False


def _svg(figure: plt.Figure) -> str:
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight")
    plt.close(figure)
    text = buffer.getvalue()
    # drop the XML prolog and DOCTYPE: the SVG is inlined in an HTML document
    text = re.sub(r"^.*?(<svg\b)", r"\1", text, flags=re.S)
    # its metadata (creator, date: not needed, and it keeps the output deterministic)
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)
    # and its comments (matplotlib writes each label's text there, escaped)
    return re.sub(r"<!--.*?-->", "", text, flags=re.S)


def forest_plot(aggregates: pd.DataFrame, threshold: float = 2.0) -> str:
    """Pairwise differences with their intervals (one row per pair), flagged pairs dark."""
    rows = aggregates.reset_index(drop=True)
    height = max(2.0, 0.35 * len(rows) + 1)
    figure, axis = plt.subplots(figsize=(7, height))
    y = np.arange(len(rows))[::-1]
    flagged = rows["flagged"].to_numpy(dtype=bool)
    lows = rows["difference"] - rows["ci_low"]
    highs = rows["ci_high"] - rows["difference"]
    for mask, color in ((flagged, "#1f4e89"), (~flagged, "#9aa4ad")):
        axis.errorbar(
            rows["difference"][mask],
            y[mask],
            xerr=[lows[mask], highs[mask]],
            fmt="o",
            color=color,
            capsize=3,
        )
    axis.axvline(0, color="#b35c00", lw=1)
    axis.set_yticks(
        y, [f"{a} − {b}" for a, b in zip(rows["model_a"], rows["model_b"], strict=True)]
    )
    axis.set_xlabel(f"difference (interval of the draws; dark: |effect| ≥ {threshold:g})")
    return _svg(figure)


def rank_heatmap(distribution: pd.DataFrame) -> str:
    """% of draws at each rank, one row per model."""
    ranks = [c for c in distribution.columns if c.startswith("rank_")]
    matrix = distribution[ranks].to_numpy(dtype=float)
    figure, axis = plt.subplots(figsize=(1.2 + 0.6 * len(ranks), 0.8 + 0.4 * len(distribution)))
    image = axis.imshow(matrix, cmap="Blues", vmin=0, vmax=100, aspect="auto")
    axis.set_xticks(range(len(ranks)), [r.removeprefix("rank_") for r in ranks])
    axis.set_yticks(range(len(distribution)), distribution["model"].astype(str))
    for (i, j), value in np.ndenumerate(matrix):
        if value >= 0.5:
            axis.text(
                j,
                i,
                f"{value:.0f}",
                ha="center",
                va="center",
                color="white" if value > 60 else "black",
                fontsize=8,
            )
    axis.set_xlabel("rank")
    figure.colorbar(image, ax=axis, label="% of draws")
    return _svg(figure)


def legend_below(figure: plt.Figure, axis: plt.Axes, n_columns: int) -> None:
    """The figure's legend in a row under the axes (and their tick labels), never over data."""
    handles, labels = axis.get_legend_handles_labels()
    figure.legend(
        handles,
        labels,
        loc="outside lower center",
        ncol=max(1, min(n_columns, len(labels))),
        fontsize=8,
        frameon=False,
    )


def variance_bars(per_model: pd.DataFrame) -> str:
    """σ_b, mean σ_seed and mean σ_boot per model and task (grouped bars)."""
    return _svg(variance_figure(per_model))


def variance_figure(per_model: pd.DataFrame) -> plt.Figure:
    """The figure of :func:`variance_bars`: grouped bars, the legend below the axes."""
    rows = per_model.reset_index(drop=True)
    parts = [
        ("sigma_b", "σ_b between languages"),
        ("sigma_seed_mean", "σ_seed (mean)"),
        ("sigma_boot_mean", "σ_boot (mean)"),
    ]
    labels = [f"{m} · {t}" for m, t in zip(rows["model"], rows["task"], strict=True)]
    figure, axis = plt.subplots(
        figsize=(7, max(2.0, 0.3 * len(rows) * 1.5 + 1) + 0.4), layout="constrained"
    )
    y = np.arange(len(rows))[::-1]
    for k, (column, label) in enumerate(parts):
        values = (
            rows[column].to_numpy(dtype=float) if column in rows else np.full(len(rows), np.nan)
        )
        axis.barh(y + (1 - k) * 0.27, np.nan_to_num(values), height=0.27, label=label)
    axis.set_yticks(y, labels)
    axis.set_xlabel("standard deviation (score points)")
    legend_below(figure, axis, 3)
    return figure


def tau_curves(table: pd.DataFrame, level: float, token_unit: str = "tokens") -> str:
    """Mean weighted τ (5–95 % band of the draws) against test-set size, one panel per strategy.

    ``table`` is :attr:`glotbench.analysis.datasize.DataSizeResult.table`: solid
    lines for models (mean over seeds), dashed for runs (every seed a system).
    """
    return _svg(tau_figure(table, level, token_unit))


def tau_figure(table: pd.DataFrame, level: float, token_unit: str = "tokens") -> plt.Figure:
    """The figure of :func:`tau_curves`, its legend below the panels."""
    strategies = list(dict.fromkeys(table["strategy"].astype(str)))
    figure, axes = plt.subplots(
        1,
        len(strategies),
        figsize=(3.2 * len(strategies) + 0.8, 3.8),
        sharey=True,
        squeeze=False,
        layout="constrained",
    )
    for axis, strategy in zip(axes[0], strategies, strict=True):
        part = table[table["strategy"].astype(str) == strategy]
        for unit, style, color in (("model", "-", "#1f4e89"), ("seed", "--", "#b35c00")):
            rows = part[part["unit"] == unit].sort_values("tokens_mean")
            if rows.empty:
                continue
            x = rows["tokens_mean"].to_numpy(dtype=float)
            axis.plot(
                x,
                rows["tau_mean"].to_numpy(dtype=float),
                style,
                marker="o",
                markersize=3,
                color=color,
                label="models" if unit == "model" else "runs (seeds)",
            )
            axis.fill_between(
                x,
                rows["tau_q05"].to_numpy(dtype=float),
                rows["tau_q95"].to_numpy(dtype=float),
                alpha=0.15,
                color=color,
            )
        axis.axhline(level, color="grey", linestyle=":", linewidth=1)
        sizes = part["tokens_mean"].to_numpy(dtype=float)
        if (sizes > 0).all() and sizes.max() >= 20 * sizes.min():
            axis.set_xscale("log")
            axis.xaxis.set_minor_formatter(NullFormatter())
            axis.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        axis.set_title(strategy, fontsize=10)
        axis.set_xlabel(f"size ({token_unit})")
        axis.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel(f"weighted τ vs full set (dotted: {level:g})")
    legend_below(figure, axes[0][0], 2)
    return figure


def qq_plot(expected: np.ndarray, observed: np.ndarray) -> str:
    """Q-Q plot of scaled (simulated) residuals against U(0, 1)."""
    figure, axis = plt.subplots(figsize=(4.2, 4.2))
    axis.plot([0, 1], [0, 1], color="#b35c00", linewidth=1)
    axis.scatter(expected, observed, s=8, color="#1d232a")
    axis.set_xlim(0, 1)
    axis.set_ylim(0, 1)
    axis.set_xlabel("expected (uniform)")
    axis.set_ylabel("observed scaled residual")
    return _svg(figure)
