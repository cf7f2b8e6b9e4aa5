"""The ``glotbench`` command line: one Typer app, thin.

Each command parses its options, calls a function of :mod:`glotbench.api`
and renders the result with rich (or prints its JSON form with ``--json``).
User errors (:class:`~glotbench.errors.GlotbenchError`) are printed without a
traceback and end the process with a non-zero exit code.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from glotbench.errors import GlotbenchError

app = typer.Typer(
    name="glotbench",
    help="Uncertainty-aware multilingual, multitask NLP evaluation.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
import_app = typer.Typer(help="Import results into a store.", no_args_is_help=True)
app.add_typer(import_app, name="import")

console = Console()
err_console = Console(stderr=True)

StoreOption = Annotated[
    Path,
    typer.Option("--store", help="DuckDB results store (created if missing).", envvar="GLOTBENCH_STORE"),
]
DEFAULT_STORE = Path("glotbench.duckdb")
JsonOption = Annotated[bool, typer.Option("--json", help="Print the result as a JSON object.")]


def print_json(payload: Any) -> None:
    """Print a JSON document on stdout (no rich markup, no wrapping)."""
    sys.stdout.write(json.dumps(payload, indent=2, default=str, allow_nan=False) + "\n")


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    except GlotbenchError as exc:
        err_console.print(f"[bold red]error:[/] {exc}", markup=True, highlight=False)
        raise SystemExit(exc.exit_code) from None


# Commands are defined in the sections below; keep each thin.


# --- analysis commands ---------------------------------------------------------

from glotbench import api  # noqa: E402
from glotbench.report.tables import frame_table, leaderboard_tables  # noqa: E402


@app.command()
def demo(
    json_output: JsonOption = False,
    confidence_level: Annotated[float, typer.Option("--confidence-level", help="Level of the intervals.")] = 0.95,
) -> None:
    """Leaderboard of the XTREME-R baselines (embedded, offline) with standard errors.

    Scores are the published per-language test results; each task score is the
    mean over languages with SE = between-language SD / √L, and the overall
    score is the unweighted mean of the tasks.
    """
    board = api.demo_leaderboard(confidence_level=confidence_level)
    if json_output:
        print_json(board.to_dict())
        return
    for table in leaderboard_tables(board, title="XTREME-R baselines (Ruder et al. 2021): overall test score"):
        console.print(table)


@app.command("metrics")
def metrics_command(json_output: JsonOption = False) -> None:
    """List the metrics in the registry and their sufficient statistics."""
    rows = api.list_metrics()
    if json_output:
        print_json({"metrics": rows})
        return
    import pandas as pd

    frame = pd.DataFrame(rows)
    frame["stats"] = frame["stats"].map(lambda s: s if isinstance(s, str) else ", ".join(s))
    console.print(frame_table(frame, title="Metrics"))


@app.command("bootstrap")
def bootstrap_command(
    predictions: Annotated[Path, typer.Argument(help="Predictions, one example per line (.jsonl: one JSON value per line).")],
    references: Annotated[Path, typer.Argument(help="References, line-aligned with the predictions.")],
    metric: Annotated[str, typer.Option("--metric", "-m", help="Metric name (see 'glotbench metrics').")] = "accuracy",
    n_resamples: Annotated[int, typer.Option("--n-resamples", "-B", help="Number of bootstrap resamples.")] = 10_000,
    confidence_level: Annotated[float, typer.Option("--confidence-level", help="Level of the interval.")] = 0.95,
    method: Annotated[str, typer.Option("--method", help="Interval: percentile or bca.")] = "percentile",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the resampling.")] = 0,
    json_output: JsonOption = False,
) -> None:
    """Score a predictions file with a bootstrap standard error and confidence interval."""
    result = api.bootstrap_files(
        metric, predictions, references,
        n_resamples=n_resamples, confidence_level=confidence_level, seed=seed, method=method,
    )
    if json_output:
        print_json(result.to_dict())
        return
    frame = result.to_frame()[["metric", "score", "standard_error", "ci_low", "ci_high", "n_examples"]]
    console.print(frame_table(frame, title=f"{metric}: bootstrap ({n_resamples} resamples, {method})"))
