"""``glotbench reproduce``: the papers' published tables recomputed from their published inputs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from glotbench.cli._lazy import api
from glotbench.cli._options import JsonOption
from glotbench.cli._output import console, frame_table, print_json

commands = typer.Typer()


@commands.command("reproduce")
def reproduce_command(
    papers: Annotated[
        list[str] | None,
        typer.Argument(
            help="Papers to reproduce: saleva, xtreme-r, scandeval, euroeval, mixed-models "
            "(default: all available).",
            show_default=False,
        ),
    ] = None,
    data_dir: Annotated[
        Path | None,
        typer.Option(
            "--data-dir",
            help="Folder of the published inputs (saleva/, …); default $GLOTBENCH_DATA_DIR, "
            "else ../shared/data relative to the working directory.",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Write the HTML page (published vs recomputed, every cell) to this folder "
            "(index.html) or .html file.",
        ),
    ] = None,
    json_output: JsonOption = False,
) -> None:
    """Recompute every published number the papers' inputs allow and compare it with the print.

    Each cell is 'reproduced' (within the printed rounding, or a stated Monte Carlo
    tolerance), 'differs' (with the reason found) or 'not reproducible' (the input it needs
    is missing). See docs/reproductions.md.
    """
    result = api.reproduce(papers or None, data_dir=data_dir, out=out)
    if json_output:
        print_json(result.to_dict())
        return
    for paper in result.papers:
        counts = paper.counts()
        frame = (
            api.reproduction_summary([paper])
            .drop(columns=["paper", "title"])
            .rename(
                columns={"not_reproducible": "not reproducible", "max_abs_difference": "max |diff|"}
            )  # fmt: skip
        )
        console.print(
            frame_table(
                frame,
                title=f"{paper.paper}: {counts['reproduced']} reproduced, {counts['differs']} "
                f"differ, {counts['not_reproducible']} not reproducible",
            )
        )
    if result.page is not None:
        console.print(f"page: {result.page}", highlight=False)
