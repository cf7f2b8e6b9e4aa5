"""``glotbench build …``: benchmark datasets built from public resources."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from glotbench.cli._lazy import api
from glotbench.cli._options import JsonOption
from glotbench.cli._output import console, print_json, print_notes

build_app = typer.Typer(help="Build benchmark datasets.", no_args_is_help=True)


@build_app.command("scala")
def build_scala_command(
    treebank: Annotated[list[Path], typer.Argument(help="UD CoNLL-U file(s) of one language.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="JSONL file to write.")],
    language: Annotated[str, typer.Option("--language", help="Language code.")] = "und",
    seed: Annotated[int, typer.Option("--seed", help="Seed of corruptions and splits.")] = 4242,
    train: Annotated[int, typer.Option("--train", help="Train size.")] = 1024,
    validation: Annotated[int, typer.Option("--validation", help="Validation size.")] = 256,
    test: Annotated[int, typer.Option("--test", help="Test size.")] = 2048,
    json_output: JsonOption = False,
) -> None:
    """Build a ScaLA linguistic-acceptability dataset from a UD treebank."""
    result = api.build_scala(
        list(treebank),
        out,
        language=language,
        seed=seed,
        splits={"train": train, "validation": validation, "test": test},
    )
    if json_output:
        print_json(result.to_dict())
        return
    print_notes(result.notes)
    sizes = ", ".join(f"{k} {v}" for k, v in result.sizes.items())
    console.print(f"wrote {result.out}: {sizes}; labels {result.labels}", highlight=False)
