"""Options several command groups share (``Annotated`` aliases) and their parsers."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

StoreOption = Annotated[
    Path,
    typer.Option(
        "--store", help="DuckDB results store (created if missing).", envvar="GLOTBENCH_STORE"
    ),
]
DEFAULT_STORE = Path("glotbench.duckdb")
JsonOption = Annotated[bool, typer.Option("--json", help="Print the result as a JSON object.")]
SeedOption = Annotated[int, typer.Option("--seed", help="Seed of all random draws.")]
LevelOption = Annotated[float, typer.Option("--confidence-level", help="Level of intervals.")]
DatasetOption = Annotated[str | None, typer.Option("--dataset", help="Dataset (store).")]
TaskOption = Annotated[str | None, typer.Option("--task", help="Task (store).")]
LanguageOption = Annotated[str | None, typer.Option("--language", help="Language (store).")]
ModelsOption = Annotated[
    list[str] | None, typer.Option("--model", help="Model (repeatable; store).")
]
ListOption = Annotated[list[str] | None, typer.Option(help="Repeatable filter.")]


#: default evaluation sizes of the data-size analyses; spaces let the help wrap at 80 columns
DEFAULT_SIZES = "100, 200, 500, 1000, 2000, 5000, 10000, 20000, all"


def parse_sizes(text: str) -> list[int | None]:
    """``--sizes`` / ``--datasize-sizes``: comma-separated positive sizes, ``all`` = None."""
    sizes: list[int | None] = []
    for part in text.split(","):
        part = part.strip().lower()
        if part == "all":
            sizes.append(None)
            continue
        try:
            value = int(part.replace("_", ""))
        except ValueError:
            raise typer.BadParameter(f"{part!r} is not a size", param_hint="--sizes") from None
        if value <= 0:
            raise typer.BadParameter("sizes must be positive", param_hint="--sizes")
        sizes.append(value)
    return sizes
