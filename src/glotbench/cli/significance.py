"""``glotbench significance …``: paired tests of two systems, ASO, McNemar, corrections."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from glotbench.cli._lazy import api
from glotbench.cli._options import (
    DEFAULTS,
    DatasetOption,
    JsonOption,
    LanguageOption,
    LevelOption,
    ModelsOption,
    SeedOption,
    StoreOption,
    TaskOption,
    store_from_environment,
)
from glotbench.cli._output import console, frame_table, print_json
from glotbench.errors import InputError

significance_app = typer.Typer(
    help="Significance tests: paired bootstrap, permutation, ASO, McNemar, corrections.",
    no_args_is_help=True,
)

PairFiles = Annotated[
    list[Path] | None,
    typer.Argument(
        help="A and B: per-example scores (one number per line) or, with --references, "
        "line-aligned predictions. Omit when reading the store."
    ),
]
ReferencesOption = Annotated[
    Path | None,
    typer.Option("--references", "-r", help="References file: the inputs are predictions."),
]
SigMetricOption = Annotated[
    str | None,
    typer.Option("--metric", help="Metric (registry name); needed with --references or --store."),
]
SigStoreOption = StoreOption  # per-example statistics read from the store
ResamplesOption = Annotated[int, typer.Option("--resamples", help="Number of resamples.")]


def _fields_table(payload: dict[str, Any], title: str) -> Any:
    """A one-row result as a two-column (field, value) table."""
    import pandas as pd

    rows = [
        {"field": key, "value": value if isinstance(value, str) else json.dumps(value)}
        for key, value in payload.items()
    ]
    return frame_table(pd.DataFrame(rows), title=title)


def _pair_source(
    ctx: typer.Context,
    files: list[Path] | None,
    references: Path | None,
    metric: str | None,
    store: Path | None,
    dataset: str | None,
    task: str | None,
    language: str | None,
    models: list[str] | None,
    run_seed: int | None,
) -> tuple[Any, Any, Any, tuple[str, str]]:
    if store is not None and files and store_from_environment(ctx):
        store = None  # files typed win over $GLOTBENCH_STORE
    if store is not None:
        if files:
            raise typer.BadParameter("give either files or --store, not both")
        if None in (dataset, task, language, metric):
            raise typer.BadParameter("--store needs --dataset, --task, --language and --metric")
        try:
            stats_a, stats_b, bound = api.store_pair_statistics(
                store,
                dataset=dataset,
                task=task,
                language=language,
                metric=metric,  # type: ignore[arg-type]
                models=models or [],
                seed=run_seed,
            )
        except InputError as exc:  # the runs' seed is --run-seed here (--seed seeds the test)
            if exc.field != "seed":
                raise
            raise InputError(exc.reason.replace("seed=N", "--run-seed N")) from None
        return stats_a, stats_b, bound, (str(models[0]), str(models[1]))  # type: ignore[index]
    if not files or len(files) != 2:
        raise typer.BadParameter("give two files, A and B (or --store)")
    stats_a, stats_b, bound = api.paired_statistics(
        files[0], files[1], references=references, metric=metric
    )
    return stats_a, stats_b, bound, (files[0].stem, files[1].stem)


def _paired_command(
    ctx: typer.Context,
    test: str,
    files: list[Path] | None,
    references: Path | None,
    metric: str | None,
    store: Path | None,
    dataset: str | None,
    task: str | None,
    language: str | None,
    models: list[str] | None,
    run_seed: int | None,
    resamples: int,
    seed: int,
    confidence_level: float,
    json_output: bool,
) -> None:
    stats_a, stats_b, bound, names = _pair_source(
        ctx, files, references, metric, store, dataset, task, language, models, run_seed
    )
    result = api.significance_test(
        test,
        stats_a,
        stats_b,
        bound,
        n_resamples=resamples,
        confidence_level=confidence_level,
        seed=seed,
        names=names,
    )
    if json_output:
        print_json(result.to_dict())
        return
    payload = result.to_dict()
    if test == "permutation":
        for key in ("confidence_interval", "confidence_level"):
            payload.pop(key)
    title = "Paired bootstrap test" if test == "bootstrap" else "Paired permutation test"
    console.print(_fields_table(payload, f"{title}: {names[0]} − {names[1]}"))


RunSeedOption = Annotated[
    int | None, typer.Option("--run-seed", help="Seed of the runs to compare (store).")
]


@significance_app.command("bootstrap")
def significance_bootstrap_command(
    ctx: typer.Context,
    files: PairFiles = None,
    references: ReferencesOption = None,
    metric: SigMetricOption = None,
    store: SigStoreOption = None,
    dataset: DatasetOption = None,
    task: TaskOption = None,
    language: LanguageOption = None,
    model: ModelsOption = None,
    run_seed: RunSeedOption = None,
    resamples: ResamplesOption = 10_000,
    seed: SeedOption = DEFAULTS.seed,
    confidence_level: LevelOption = DEFAULTS.confidence_level,
    json_output: JsonOption = False,
) -> None:
    """Paired bootstrap test of score(A) − score(B): two-sided p-value (+1) and CI."""
    _paired_command(
        ctx,
        "bootstrap",
        files,
        references,
        metric,
        store,
        dataset,
        task,
        language,
        model,
        run_seed,
        resamples,
        seed,
        confidence_level,
        json_output,
    )


@significance_app.command("permutation")
def significance_permutation_command(
    ctx: typer.Context,
    files: PairFiles = None,
    references: ReferencesOption = None,
    metric: SigMetricOption = None,
    store: SigStoreOption = None,
    dataset: DatasetOption = None,
    task: TaskOption = None,
    language: LanguageOption = None,
    model: ModelsOption = None,
    run_seed: RunSeedOption = None,
    resamples: ResamplesOption = 10_000,
    seed: SeedOption = DEFAULTS.seed,
    json_output: JsonOption = False,
) -> None:
    """Paired approximate randomisation test of score(A) − score(B) (two-sided, +1)."""
    _paired_command(
        ctx,
        "permutation",
        files,
        references,
        metric,
        store,
        dataset,
        task,
        language,
        model,
        run_seed,
        resamples,
        seed,
        0.95,
        json_output,
    )


@significance_app.command("aso")
def significance_aso_command(
    files: Annotated[
        list[Path], typer.Argument(help="Score files, one score per line (e.g. per seed).")
    ],
    confidence_level: LevelOption = DEFAULTS.confidence_level,
    iterations: Annotated[
        int, typer.Option("--iterations", help="Bootstrap iterations (deepsig default 1000).")
    ] = 1000,
    seed: Annotated[
        int,
        typer.Option(
            "--seed", help="Seed of the bootstrap (deepsig draws a random one; glotbench uses 0)."
        ),
    ] = 0,
    num_comparisons: Annotated[
        int, typer.Option("--num-comparisons", help="Bonferroni correction (two files).")
    ] = 1,
    no_bonferroni: Annotated[
        bool, typer.Option("--no-bonferroni", help="No correction (three or more files).")
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """Almost Stochastic Order: ε_min of A over B (two files), or all pairs (three or more)."""
    result = api.aso_files(
        files,
        confidence_level=confidence_level,
        num_bootstrap_iterations=iterations,
        seed=seed,
        num_comparisons=num_comparisons,
        use_bonferroni=not no_bonferroni,
    )
    if json_output:
        print_json(result.to_dict())
        return
    if isinstance(result, api.ASOResult):
        console.print(_fields_table(result.to_dict(), f"ASO: {files[0].stem} vs {files[1].stem}"))
        verdict = "is" if result.a_better else "is not"
        console.print(
            f"{files[0].stem} {verdict} almost stochastically better than {files[1].stem} "
            f"(ε_min = {result.eps_min:.4f}, threshold {result.threshold})",
            highlight=False,
        )
        return
    console.print(
        frame_table(
            result.to_frame().reset_index(names="A \\ B"),
            title=f"ε_min of row over column (level {result.corrected_confidence_level:.4g})",
        )
    )


@significance_app.command("mcnemar")
def significance_mcnemar_command(
    files: Annotated[
        list[Path],
        typer.Argument(help="A and B: 0/1 outcomes per line, or predictions with --references."),
    ],
    references: ReferencesOption = None,
    exact: Annotated[
        bool | None,
        typer.Option(
            "--exact/--asymptotic", help="Exact binomial or χ² (default: exact if b+c<25)."
        ),
    ] = None,
    no_correction: Annotated[
        bool, typer.Option("--no-correction", help="χ² without continuity correction.")
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """McNemar's test of paired binary outcomes."""
    if len(files) != 2:
        raise typer.BadParameter("give two files, A and B")
    result = api.mcnemar_files(
        files[0], files[1], references=references, exact=exact, correction=not no_correction
    )
    if json_output:
        print_json(result.to_dict())
        return
    console.print(_fields_table(result.to_dict(), "McNemar's test"))


@significance_app.command("adjust")
def significance_adjust_command(
    p_values: Annotated[list[float], typer.Argument(help="p-values to adjust.")],
    method: Annotated[
        str, typer.Option("--method", help="bonferroni, holm or fdr_bh (Benjamini-Hochberg).")
    ] = "holm",
    alpha: Annotated[float, typer.Option("--alpha", help="Family-wise level / FDR.")] = 0.05,
    json_output: JsonOption = False,
) -> None:
    """Adjust p-values for multiple comparisons (Bonferroni, Holm, Benjamini-Hochberg)."""
    result = api.adjust_p_values(p_values, method=method, alpha=alpha)
    if json_output:
        print_json(result.to_dict())
        return
    console.print(frame_table(result.to_frame(), title=f"{result.method} adjustment"))
