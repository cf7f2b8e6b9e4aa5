"""``glotbench checklist …``: template tests after CheckList / MultiCheckList."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from glotbench.cli._lazy import api
from glotbench.cli._options import DEFAULTS, JsonOption, LevelOption, StoreOption
from glotbench.cli._output import console, frame_table, print_json, print_notes

checklist_app = typer.Typer(
    help="Template tests after CheckList / MultiCheckList (MFT, INV, DIR).", no_args_is_help=True
)


@checklist_app.command("expand")
def checklist_expand_command(
    templates: Annotated[
        list[Path] | None,
        typer.Argument(help="Template suite YAML file(s); default: the shipped suites."),
    ] = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="Cases JSONL file to write.")] = Path(
        "checklist_cases.jsonl"
    ),
    language: Annotated[
        list[str] | None, typer.Option("--language", "-l", help="Language (repeatable).")
    ] = None,
    test: Annotated[list[str] | None, typer.Option("--test", help="Test (repeatable).")] = None,
    n: Annotated[
        int | None,
        typer.Option("--n", min=1, help="Cases per test and language (seeded sample)."),
    ] = None,
    json_output: JsonOption = False,
) -> None:
    """Expand templates into test cases (one JSONL row per text; predict every 'id')."""
    result = api.checklist_expand(templates or None, out, languages=language, tests=test, n=n)
    if json_output:
        print_json(result.to_dict())
        return
    console.print(frame_table(result.counts, title="Test cases"))
    console.print(
        f"wrote {result.n_cases} cases ({result.n_texts} texts) to {result.out}", highlight=False
    )


@checklist_app.command("score")
def checklist_score_command(
    cases: Annotated[Path, typer.Argument(help="Cases JSONL file from 'checklist expand'.")],
    predictions: Annotated[
        list[Path],
        typer.Argument(help="Predictions per model (JSONL id+label/probs, or CSV/TSV)."),
    ],
    model: Annotated[
        list[str] | None,
        typer.Option("--model", "-m", help="Model name per predictions file (default: stem)."),
    ] = None,
    store: StoreOption = None,  # given (or $GLOTBENCH_STORE): the results are stored as runs
    replicates: Annotated[
        int, typer.Option("--replicates", help="Bootstrap replicates.")
    ] = DEFAULTS.n_replicates,
    confidence: LevelOption = DEFAULTS.confidence_level,
    seed: Annotated[int, typer.Option("--seed", help="Bootstrap seed.")] = DEFAULTS.seed,
    json_output: JsonOption = False,
) -> None:
    """Failure rates per model, test and language with paired bootstrap CIs."""
    result = api.checklist_score(
        cases,
        list(predictions),
        models=model,
        store=store,
        n_resamples=replicates,
        confidence_level=confidence,
        seed=seed,
    )
    if json_output:
        print_json(result.to_dict())
        return
    cols = ["model", "test", "type", "language", "n_applicable", "n_failed", "failure_rate"]
    cols += ["ci_low", "ci_high"]
    console.print(frame_table(result.rates[cols], title="Failure rates", digits=3))
    if result.stored:
        console.print(
            f"stored in {result.stored['store']}: {result.stored['runs_written']} runs written, "
            f"{result.stored['runs_skipped']} already stored",
            highlight=False,
        )
    print_notes(result.notes)


@checklist_app.command("example")
def checklist_example_command(json_output: JsonOption = False) -> None:
    """The published MultiCheckList error rates (%) of XLM-R (Ruder et al. 2021)."""
    result = api.checklist_example()
    if json_output:
        print_json(result.to_dict())
        return
    console.print(frame_table(result.wide, title=f"{result.source} (%)"))
    console.print(frame_table(result.by_test, title="Per test, over languages"))
