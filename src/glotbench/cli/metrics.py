"""``glotbench metrics`` and ``glotbench bootstrap``: the metric registry, one file scored."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from glotbench.cli._lazy import api
from glotbench.cli._options import DEFAULTS, JsonOption
from glotbench.cli._output import console, frame_table, print_json

commands = typer.Typer()


@commands.command("metrics")
def metrics_command(json_output: JsonOption = False) -> None:
    """List the metrics in the registry and their sufficient statistics."""
    rows = api.list_metrics()
    if json_output:
        print_json({"metrics": rows})
        return
    import pandas as pd

    frame = pd.DataFrame(rows)
    frame["stats"] = frame["stats"].map(lambda s: s if isinstance(s, str) else ", ".join(s))
    frame["score_range"] = frame["score_range"].map(lambda r: f"{r[0]:g}–{r[1]:g}")
    frame = frame.drop(columns=["constraints"])  # in --json; too long for the table
    console.print(frame_table(frame, title="Metrics"))


@commands.command("bootstrap")
def bootstrap_command(
    predictions: Annotated[
        Path,
        typer.Argument(help="Predictions, one example per line (.jsonl: one JSON value per line)."),
    ],
    references: Annotated[
        Path, typer.Argument(help="References, line-aligned with the predictions.")
    ],
    metric: Annotated[
        str, typer.Option("--metric", "-m", help="Metric name (see 'glotbench metrics').")
    ] = "accuracy",
    n_resamples: Annotated[
        int, typer.Option("--n-resamples", "-B", help="Number of bootstrap resamples.")
    ] = 10_000,
    confidence_level: Annotated[
        float, typer.Option("--confidence-level", help="Level of the interval.")
    ] = DEFAULTS.confidence_level,
    method: Annotated[
        str, typer.Option("--method", help="Interval: percentile or bca.")
    ] = "percentile",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the resampling.")] = DEFAULTS.seed,
    json_output: JsonOption = False,
) -> None:
    """Score a predictions file with a bootstrap standard error and confidence interval."""
    result = api.bootstrap_files(
        metric,
        predictions,
        references,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        seed=seed,
        method=method,
    )
    if json_output:
        print_json(result.to_dict())
        return
    frame = result.to_frame()[
        ["metric", "score", "standard_error", "ci_low", "ci_high", "n_examples"]
    ]
    console.print(
        frame_table(frame, title=f"{metric}: bootstrap ({n_resamples} resamples, {method})")
    )
