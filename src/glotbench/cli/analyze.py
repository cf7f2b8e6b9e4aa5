"""``glotbench analyze …``: replication-aware analyses of a store or a scores file.

Variance components, aggregates, pairwise comparisons, ranks, EuroEval's rank
score, inference speed, mixed models and their robustness, evaluation size,
cross-lingual transfer groups and per-bucket scores.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from glotbench.analysis.settings import DEFAULT_PAIRS, DEFAULT_TOP_K, PAIR_MODES, AnalysisSettings
from glotbench.cli._answer_cache import answer_cache
from glotbench.cli._lazy import api
from glotbench.cli._options import (
    DEFAULT_SIZES,
    DEFAULT_STORE,
    DEFAULTS,
    DatasetOption,
    DrawsOption,
    JsonOption,
    LanguageOption,
    LevelOption,
    ListOption,
    MetricChoiceOption,
    ModelsOption,
    ReplicatesOption,
    SeedOption,
    StoreOption,
    TaskOption,
    analysis_settings,
    parse_sizes,
    store_from_environment,
    with_analysis_settings,
)
from glotbench.cli._output import (
    console,
    frame_table,
    print_json,
    print_notes,
    speed_table,
    transfer_table,
)

analyze_app = typer.Typer(
    help="Replication-aware analyses: variance components, aggregates, comparisons, ranks.",
    no_args_is_help=True,
)

InputOption = Annotated[
    Path | None,
    typer.Option(
        "--input",
        "-i",
        help="Tidy scores file (CSV/JSONL/Parquet): model, language, score and optional task, "
        "seed, replicate; or ready SDs (sigma_seed/sigma_boot or sigma_w). Default: the store.",
    ),
]
AnalysisStoreOption = StoreOption  # the store is read when --input is not given
ModelFilter = Annotated[
    list[str] | None, typer.Option("--model", help="Only these models (repeatable).")
]
TaskFilter = Annotated[
    list[str] | None, typer.Option("--task", help="Only these tasks (repeatable).")
]
LanguageFilter = Annotated[
    list[str] | None, typer.Option("--language", help="Only these languages (repeatable).")
]
MetricFilter = Annotated[
    str | None, typer.Option("--metric", help="Metric to analyse (needed when several are stored).")
]
RankMethodOption = Annotated[
    str,
    typer.Option(
        "--rank-method",
        help="EuroEval rank-score method: 2026-05-28 (EuroEval's current method: bootstrap "
        "median of 1 + (best − mean)/pooled SD, with interval) or legacy-2025 (Welch-t-test "
        "gating, SD of the models' means; superseded on 2026-05-28).",
    ),
]
RankBootstrapsOption = Annotated[
    int,
    typer.Option(
        "--rank-bootstraps",
        help="Bootstrap resamples of each model's iteration scores for the EuroEval rank score.",
    ),
]


def _source(
    input: Path | None,
    store: Path | None,
    settings: Any,
    models: list[str] | None,
    tasks: list[str] | None,
    languages: list[str] | None,
) -> Any:
    """The scores the request analyses, read as its ``settings`` say (metric, replicates, seed)."""
    return api.load_replicated(
        input=input,
        store=store if store is not None or input is not None else DEFAULT_STORE,
        metric=settings.metric_choice,
        models=models,
        tasks=tasks,
        languages=languages,
        n_replicates=settings.n_replicates,
        seed=settings.seed,
    )


def _print_with_settings(payload: dict[str, Any], **settings: Any) -> None:
    """Print ``payload`` with the settings the request used, as its JSON ``settings`` object."""
    plain = {
        key: str(value) if isinstance(value, Path) else value for key, value in settings.items()
    }
    payload["settings"] = {**plain, **payload.get("settings", {})}
    print_json(payload)


@analyze_app.command("variance")
@answer_cache("analyze variance")
def analyze_variance_command(
    input: InputOption = None,
    store: AnalysisStoreOption = None,
    model: ModelFilter = None,
    task: TaskFilter = None,
    language: LanguageFilter = None,
    metric: MetricChoiceOption = None,
    replicates: ReplicatesOption = DEFAULTS.n_replicates,
    seed: SeedOption = DEFAULTS.seed,
    json_output: JsonOption = False,
) -> None:
    """Variance components per model: between-language SD σ_b; per language σ_seed, σ_boot, σ_w."""
    settings = analysis_settings(replicates=replicates, seed=seed, metric=metric)
    source = _source(input, store, settings, model, task, language)
    result = api.analyze_variance(source)
    if json_output:
        payload = result.to_dict()
        payload["settings"] = {
            key: value
            for key, value in settings.record().items()
            if key in ("n_replicates", "seed", "metric")
        }
        print_json(payload)
        return
    summary = result.per_model[
        [
            "model",
            "task",
            "n_languages",
            "mean",
            "sigma_b",
            "se_sigma_b",
            "sigma_seed_mean",
            "sigma_boot_mean",
            "sigma_w_mean",
            "sigma_w_min",
            "sigma_w_max",
        ]
    ]
    console.print(
        frame_table(summary, title="Variance components per model and task (means over languages)")
    )
    columns = [
        "model",
        "unit",
        "mean",
        "sigma_seed",
        "sigma_boot",
        "sigma_w",
        "se_sigma_w",
        "n_seeds",
    ]
    console.print(frame_table(result.per_unit[columns], title="Per language"))
    print_notes(result.notes)


@analyze_app.command("aggregate")
@answer_cache("analyze aggregate")
@with_analysis_settings
def analyze_aggregate_command(
    input: InputOption = None,
    store: AnalysisStoreOption = None,
    model: ModelFilter = None,
    task: TaskFilter = None,
    language: LanguageFilter = None,
    settings: AnalysisSettings = DEFAULTS,
    json_output: JsonOption = False,
) -> None:
    """Mean, geometric mean and median over languages with SEs and intervals; language → overall."""
    source = _source(input, store, settings, model, task, language)
    result = api.analyze_aggregate(source, settings)
    if json_output:
        print_json(result.to_dict())
        return
    console.print(frame_table(result.frame, title=f"Aggregates ({result.settings.describe()})"))
    console.print(
        frame_table(
            result.hierarchy,
            title="Hierarchy: task × language → language (mean over tasks) → overall",
        )
    )
    print_notes(result.notes)
    _print_task_comparisons_if_unshared(source, settings)


@analyze_app.command("compare")
@answer_cache("analyze compare")
@with_analysis_settings
def analyze_compare_command(
    input: InputOption = None,
    store: AnalysisStoreOption = None,
    model: ModelFilter = None,
    task: TaskFilter = None,
    language: LanguageFilter = None,
    settings: AnalysisSettings = DEFAULTS,
    per_language: Annotated[
        bool,
        typer.Option(
            "--per-language",
            help="Also give the full per-language table (every pair × language; in --json as "
            "per_language). Without it, per-language results are summarised per language and "
            "per pair.",
        ),
    ] = False,
    pairs_out: Annotated[
        Path | None,
        typer.Option(
            "--pairs-out",
            help="Write the full per-language table (every pair × language) to this file: "
            "Parquet, or CSV if the name ends in .csv.",
        ),
    ] = None,
    pairs: Annotated[
        str,
        typer.Option(
            "--pairs",
            help="Which pairs to compute: 'adjacent' (neighbours in each aggregate's ranking, "
            "every pair of the --top-k best models and each --pair; linear in models) or 'all' "
            "(every pair; implied by --per-language and --pairs-out). A pair's numbers are "
            "the same in both.",
        ),
    ] = DEFAULT_PAIRS,
    top_k: Annotated[
        int,
        typer.Option(
            "--top-k", min=0, help="With --pairs adjacent: every pair of this many best models."
        ),
    ] = DEFAULT_TOP_K,
    pair: Annotated[
        list[str] | None,
        typer.Option(
            "--pair",
            help="A pair to compute in any case, as A,B (model names; repeat the option).",
        ),
    ] = None,
    json_output: JsonOption = False,
) -> None:
    """Pairwise differences, their SD over replications and effect sizes (flag: |effect| ≥ 2).

    Aggregates over languages: mean, geometric mean (a zero gives 0) and median.
    """
    if pairs not in PAIR_MODES:
        raise typer.BadParameter(f"use one of {', '.join(PAIR_MODES)}", param_hint="--pairs")
    requested = [_model_pair(text) for text in pair or ()]
    source = _source(input, store, settings, model, task, language)
    if not json_output and _print_task_comparisons_if_unshared(source, settings, overall_note=True):
        return
    result = api.analyze_compare(
        source,
        settings,
        per_language=per_language,
        pairs_out=pairs_out,
        pairs=pairs,
        top_k=top_k,
        pair=requested,
    )
    if json_output:
        print_json(result.to_dict(frames=True))  # every pair's records, slice by slice
        return
    _print_comparison(result)
    if pairs_out is not None:
        console.print(f"per-language table of every pair written to {pairs_out}")
    print_notes(result.notes)


def _model_pair(text: str) -> tuple[str, str]:
    """``A,B`` → (A, B); a pair of names, each non-empty."""
    names = tuple(part.strip() for part in text.split(","))
    if len(names) != 2 or not all(names):
        raise typer.BadParameter(f"{text!r}: give two model names as A,B", param_hint="--pair")
    return names[0], names[1]


#: up to this many pairs (10 models) the terminal shows every pair; above, what a person reads
FULL_TABLE_PAIRS = 45
#: up to this many pair × language rows the terminal shows the --per-language table
FULL_LANGUAGE_ROWS = 500


def _print_comparison(result: Any) -> None:
    """Every pair for a few models; otherwise a summary per aggregator, the ranking's
    neighbours (rank r vs r + 1) and the per-language summary — the full tables are
    in --json and --pairs-out (drawing 60,000 rows took most of a minute)."""
    from glotbench.analysis.compare import adjacent_pairs, comparison_summary

    aggregates = result.aggregates
    title = f"Pairwise differences A − B ({result.settings.describe()})"
    n_pairs = len(result.pair_summary)
    n_all = result.pairs.get("n_all_pairs", n_pairs)
    if n_all <= FULL_TABLE_PAIRS:
        console.print(frame_table(aggregates, title=title))
    else:
        summary = result.summary if len(result.summary) else comparison_summary(aggregates)
        console.print(frame_table(summary, title=title + ", over every pair"))
        requested = {tuple(p) for p in result.pairs.get("requested", ())}
        if requested:
            asked = aggregates[
                [
                    (a, b) in requested or (b, a) in requested
                    for a, b in zip(aggregates["model_a"], aggregates["model_b"], strict=True)
                ]
            ]
            console.print(frame_table(asked, title="Pairs asked for (--pair)"))
        for aggregator in aggregates["aggregator"].unique()[:1]:
            console.print(
                frame_table(
                    adjacent_pairs(aggregates, str(aggregator)),
                    title=f"Neighbours in the ranking by {aggregator}: rank r − rank r + 1 "
                    f"(flagged: |effect| ≥ 2)",
                )
            )
    per_language = result.per_language
    if per_language is not None and len(per_language) <= FULL_LANGUAGE_ROWS:
        console.print(frame_table(per_language, title="Per language"))
    else:
        console.print(
            frame_table(result.language_summary, title="Per language: flagged pair differences")
        )
    if n_all > FULL_TABLE_PAIRS or per_language is not None:
        shown = (
            f"{n_pairs:,} of {n_all:,} pairs (ranking neighbours and the top "
            f"{result.pairs.get('top_k')} models' pairs; the per-language summary is over "
            "them); every pair: --pairs all --json"
            if n_pairs < n_all
            else f"every pair ({n_all:,} pairs × {aggregates['aggregator'].nunique()} "
            "aggregators): --json"
        )
        console.print(
            f"{shown}; every pair × language: --per-language --json or --pairs-out FILE",
            highlight=False,
        )


def _print_task_comparisons_if_unshared(
    source: Any, settings: AnalysisSettings, *, overall_note: bool = False
) -> bool:
    """Fewer than two models have every task: nothing is compared overall, so show, per
    task, the models that cover it compared (as the report and leaderboard do). Whether
    it did; ``overall_note`` first prints the note on the models left out overall (for
    the doors that cannot compare or rank one model)."""
    from glotbench.analysis.overall import overall_scope

    scope = overall_scope(source)
    if len(scope.models) >= 2 or len(scope.tasks) < 2:
        return False
    comparisons = api.analyze_task_comparisons(source, settings)
    if not comparisons:
        return False
    note = scope.note()
    if overall_note and note:
        print_notes((note,))
    console.print(
        "Fewer than two models have every task: per task, the models that cover it "
        "(analyze tasks --json for all of it)",
        highlight=False,
    )
    _print_task_comparisons(comparisons)
    return True


def _print_task_comparisons(comparisons: dict[str, Any]) -> None:
    """Per task: the pairs in ranking order (mean) and the rank summary."""
    pair_columns = ["model_a", "model_b", "difference", "ci_low", "ci_high", "effect_size"]
    rank_columns = ["model", "mean_rank", "rank_best", "rank_worst"]
    for task, view in comparisons.items():
        if view.comparison is not None:
            pairs = view.comparison.aggregates
            pairs = pairs[[c for c in pair_columns if c in pairs.columns]]
            console.print(frame_table(pairs, title=f"{task}: pairwise differences A − B (mean)"))
        if view.ranks is not None:
            ranks = view.ranks.summary
            ranks = ranks[[c for c in rank_columns if c in ranks.columns]]
            console.print(frame_table(ranks, title=f"{task}: ranks"))


@analyze_app.command("tasks")
@answer_cache("analyze tasks")
@with_analysis_settings
def analyze_tasks_command(
    input: InputOption = None,
    store: AnalysisStoreOption = None,
    model: ModelFilter = None,
    task: TaskFilter = None,
    language: LanguageFilter = None,
    settings: AnalysisSettings = DEFAULTS,
    json_output: JsonOption = False,
) -> None:
    """Per task, pairwise differences and ranks of the models that cover it.

    For stores where models lack whole tasks (the overall view then ranks only
    the models with every task): each task compares every model with a score on it.
    """
    source = _source(input, store, settings, model, task, language)
    comparisons = api.analyze_task_comparisons(source, settings)
    if json_output:
        _print_with_settings(
            {"tasks": api.task_comparisons_dict(comparisons)}, **settings.record(source)
        )
        return
    if not comparisons:
        console.print("no task has two models to compare", highlight=False)
        return
    _print_task_comparisons(comparisons)


@analyze_app.command("ranks")
@answer_cache("analyze ranks")
@with_analysis_settings
def analyze_ranks_command(
    input: InputOption = None,
    store: AnalysisStoreOption = None,
    model: ModelFilter = None,
    task: TaskFilter = None,
    language: LanguageFilter = None,
    settings: AnalysisSettings = DEFAULTS,
    rank_method: RankMethodOption = "2026-05-28",
    rank_bootstraps: RankBootstrapsOption = 1000,
    distribution: Annotated[
        str,
        typer.Option(
            "--distribution",
            help="The rank distribution: 'full' (every rank's share per model), 'window' "
            "(each model's ranks with a non-zero share: first_rank and shares; linear in "
            "models) or 'auto' (full up to 50 models).",
        ),
    ] = "auto",
    json_output: JsonOption = False,
) -> None:
    """Rank distributions (% of draws at each rank), rank intervals and EuroEval rank scores."""
    if distribution not in ("auto", "full", "window"):
        raise typer.BadParameter("use auto, full or window", param_hint="--distribution")
    source = _source(input, store, settings, model, task, language)
    if not json_output and _print_task_comparisons_if_unshared(source, settings, overall_note=True):
        return
    result = api.analyze_ranks(
        source,
        settings,
        rank_method=rank_method,
        rank_bootstraps=rank_bootstraps,
        distribution=distribution,
    )
    if json_output:
        print_json(result.to_dict())
        return
    console.print(frame_table(result.summary, title=f"Ranks ({result.settings.describe()})"))
    if result.windowed():
        windows = result.to_dict()["distribution"]
        frame = _rank_windows_frame(windows)
        console.print(
            frame_table(frame, title="Rank distribution, % of draws at ranks first_rank, …")
        )
    else:
        console.print(frame_table(result.distribution, title="Rank distribution, % of draws"))
    print_notes(result.notes)


def _rank_windows_frame(windows: list[dict[str, Any]]) -> Any:
    """Windowed rank distributions as a table: the shares as one column of numbers."""
    import pandas as pd

    return pd.DataFrame(
        {
            "aggregator": [w["aggregator"] for w in windows],
            "model": [w["model"] for w in windows],
            "first_rank": [w["first_rank"] for w in windows],
            "shares": [" ".join(f"{v:.1f}" for v in w["shares"]) for w in windows],
        }
    )


@analyze_app.command("euroeval-rank")
@answer_cache("analyze euroeval-rank")
def analyze_euroeval_rank_command(
    input: Annotated[
        Path | None,
        typer.Option(
            "--input",
            "-i",
            help="Tidy scores file: model, language, score and optional dataset, task, metric, "
            "seed, replicate (an iteration index). Default: the store.",
        ),
    ] = None,
    store: AnalysisStoreOption = None,
    metric: Annotated[
        list[str] | None,
        typer.Option(
            "--metric",
            help="Default: each task's declared primary metric (EuroEval's: mcc for "
            "classification, micro_f1_no_misc for NER, f1 for reading comprehension). "
            "TASK=METRIC scores one task on another metric (e.g. "
            "--metric named-entity-recognition=micro_f1); a plain METRIC (repeatable) gives "
            "each dataset the first listed one it has.",
        ),
    ] = None,
    model: ModelFilter = None,
    task: TaskFilter = None,
    language: LanguageFilter = None,
    rank_method: RankMethodOption = "2026-05-28",
    bootstraps: Annotated[
        int, typer.Option("--bootstraps", help="Bootstrap resamples of each model's iterations.")
    ] = 1000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the bootstrap.")] = 0,
    confidence_level: LevelOption = DEFAULTS.confidence_level,
    json_output: JsonOption = False,
) -> None:
    """EuroEval's leaderboard rank score (1 = best) per dataset, task, language and overall."""
    result = api.euroeval_rank(
        input=input,
        store=store,
        metrics=metric,
        models=model,
        tasks=task,
        languages=language,
        method=rank_method,
        n_bootstraps=bootstraps,
        seed=seed,
        confidence_level=confidence_level,
    )
    if json_output:
        print_json(result.to_dict())
        return
    settings = result.settings()
    title = f"EuroEval rank score, method {settings['method']}"
    if settings["superseded"]:
        title += " (superseded on 2026-05-28; no interval)"
    else:
        title += (
            f" (median of {settings['n_bootstraps']} bootstrap resamples, seed {seed}; "
            f"low/high: {confidence_level:.0%} interval)"
        )
    console.print(frame_table(result.overall, title=title))
    console.print(frame_table(result.languages, title="Per language"))
    columns = [
        "dataset",
        "metric",
        "model",
        "n_iterations",
        "mean",
        "plug_in",
        "score",
        "low",
        "high",
    ]
    console.print(
        frame_table(result.datasets[columns], title="Per dataset (metric: the one it is scored on)")
    )
    print_notes(result.notes)


@analyze_app.command("speed")
@answer_cache("analyze speed")
def analyze_speed_command(
    store: StoreOption = DEFAULT_STORE,
    model: ModelFilter = None,
    json_output: JsonOption = False,
) -> None:
    """Inference speed per model: ScandEval's GPT-2 tokens per second, mean ± 1.96·SD/√n.

    From 'glotbench run' (its speed benchmark, one per model) or imported EuroEval speed scores.
    """
    result = api.speed_summary(store, models=model)
    if json_output:
        print_json(result.to_dict())
        return
    if not len(result):
        console.print("no speed figures in the store (run a suite, or import EuroEval results)")
        return
    console.print(speed_table(result))


@analyze_app.command("lmm")
@answer_cache("analyze lmm")
def analyze_lmm_command(
    formula: Annotated[
        str,
        typer.Option(
            "--formula",
            "-f",
            help="Model in lme4 syntax, e.g. 'delta ~ language * task + (1 | architecture/model)'.",
        ),
    ],
    input: Annotated[
        Path | None,
        typer.Option("--input", "-i", help="Tidy table (CSV/JSONL/Parquet). Default: the store."),
    ] = None,
    store: AnalysisStoreOption = None,
    emmeans: Annotated[
        list[str] | None,
        typer.Option(
            "--emmeans",
            help="Factor (or combination a:b) for marginal means and pairwise contrasts "
            "(repeatable).",
        ),
    ] = None,
    reml: Annotated[
        bool, typer.Option("--reml/--ml", help="Fit by REML (default) or maximum likelihood.")
    ] = True,
    adjust: Annotated[
        str,
        typer.Option(
            "--adjust", help="Contrast p-value adjustment: tukey, bonferroni, holm, none."
        ),
    ] = "tukey",
    qq_plot: Annotated[
        Path | None,
        typer.Option(
            "--qq-plot",
            help="Simulate DHARMa-style residuals, test them and write their Q-Q plot here.",
        ),
    ] = None,
    residuals: Annotated[
        bool,
        typer.Option(
            "--residuals",
            help="Simulate DHARMa-style residuals and test them without a plot (with --json, "
            "the scaled residuals for `glotbench report --lmm`).",
        ),
    ] = False,
    residuals_by: Annotated[
        list[str] | None,
        typer.Option(
            "--residuals-by",
            help="Factor for DHARMa's per-group residual tests (KS uniformity within each "
            "group, Holm-adjusted; Levene between groups); 'a:b' = cells of two factors "
            "(repeatable; implies --residuals; default: the fixed-effect factors).",
        ),
    ] = None,
    model: ModelFilter = None,
    task: TaskFilter = None,
    language: LanguageFilter = None,
    metric: MetricFilter = None,
    seed: SeedOption = DEFAULTS.seed,
    json_output: JsonOption = False,
) -> None:
    """Linear mixed model: Satterthwaite tests, Type III ANOVA + partial η², EMMs, R²."""
    from glotbench.analysis.sources.scopes import lmm_frames

    tables, scope_notes = lmm_frames(
        input,
        store if store is not None or input is not None else DEFAULT_STORE,
        metric=metric,
        models=model,
        tasks=task,
        languages=language,
    )
    fits = []
    for name, frame, error in tables:  # one per metric when the store holds several
        plot = qq_plot
        if qq_plot is not None and len(tables) > 1:
            plot = qq_plot.with_name(f"{qq_plot.stem}-{name}{qq_plot.suffix}")
        result = api.analyze_mixed_model(
            frame,
            formula,
            emmeans=emmeans or [],
            reml=reml,
            adjust=adjust,
            error=error,
            qq_plot=plot,
            seed=seed,
            residuals=residuals,
            residuals_by=residuals_by,
        )
        fits.append((name, result))
    if json_output:
        payload = (
            fits[0][1].to_dict()
            if len(fits) == 1
            else {
                "scopes": [{"scope": {"metric": n}, "result": r.to_dict()} for n, r in fits],
                "notes": scope_notes,
            }
        )
        _print_with_settings(
            payload,
            formula=formula,
            reml=reml,
            adjust=adjust,
            emmeans=emmeans or [],
            residuals=residuals or qq_plot is not None or bool(residuals_by),
            residuals_by=residuals_by or [],
            metric=metric,
            seed=seed,
        )
        return
    for name, result in fits:
        if len(fits) > 1:
            console.print(f"metric {name}", style="bold", markup=False, highlight=False)
        _print_lmm(result, reml)
    print_notes(scope_notes)


def _print_lmm(result: Any, reml: bool) -> None:
    """The terminal tables of one mixed-model fit (`analyze lmm`)."""
    criterion = "REML" if reml else "ML"
    console.print(
        frame_table(result.fixed_effects, title=f"Fixed effects ({criterion}, Satterthwaite df)")
    )
    console.print(frame_table(result.anova, title="Type III ANOVA (Satterthwaite) + partial η²"))
    for spec, table in result.emmeans.items():
        console.print(frame_table(table, title=f"Estimated marginal means: {spec}"))
        console.print(frame_table(result.contrasts[spec], title=f"Pairwise contrasts: {spec}"))
    console.print(frame_table(result.random_effects, title="Random effects"))
    console.print(
        f"residual variance {result.residual_variance:.6g}; R² marginal "
        f"{result.r2['marginal']:.4g}, conditional {result.r2['conditional']:.4g}",
        highlight=False,
    )
    print_notes(tuple(result.diagnostics["messages"]))
    if result.residual_checks is not None:
        _print_residual_tests(result.residual_checks)
        print_notes(tuple(result.residual_checks["messages"]))
        if result.residual_checks.get("qq_plot"):
            console.print(
                f"Q-Q plot written to {result.residual_checks['qq_plot']}", highlight=False
            )


def _print_residual_tests(checks: dict[str, Any]) -> None:
    """One line per DHARMa test of `analyze lmm --residuals`."""
    lines = [
        f"uniformity (KS) p = {checks['uniformity']['p']:.3g}",
        f"dispersion ratio {checks['dispersion']['ratio']:.3g}, "
        f"p = {checks['dispersion']['p']:.3g}",
        f"outliers {checks['outliers']['count']}, p = {checks['outliers']['p']:.3g}",
    ]
    if checks.get("quantiles"):
        lines.append(f"quantiles vs fixed-effect prediction p = {checks['quantiles']['p']:.3g}")
    for test in checks.get("categorical", []):
        lines.append(
            f"within {test['factor']} groups: min KS p (Holm) = {test['min_p_holm']:.3g} "
            f"over {len(test['groups'])} groups; Levene p = {test['levene']['p']:.3g}"
        )
    console.print("Simulated residuals (DHARMa): " + "; ".join(lines), highlight=False)


@analyze_app.command("datasize")
@answer_cache("analyze datasize")
def analyze_datasize_command(
    store: AnalysisStoreOption = None,
    dataset: DatasetOption = None,
    task: TaskOption = None,
    language: LanguageOption = None,
    metric: Annotated[
        str | None, typer.Option("--metric", help="Metric (store), or las/uas/upos (CoNLL-U).")
    ] = None,
    model: ModelsOption = None,
    gold: Annotated[Path | None, typer.Option("--gold", help="Gold CoNLL-U file.")] = None,
    pred: Annotated[
        list[Path] | None,
        typer.Option(
            "--pred", help="CoNLL-U predictions (repeatable; name-seedN.conllu = seed N)."
        ),
    ] = None,
    simulate_models: Annotated[
        int, typer.Option("--simulate-models", help="Simulated UPOS taggers on --gold.")
    ] = 0,
    simulate_seeds: Annotated[
        int, typer.Option("--simulate-seeds", help="Seeds per simulated tagger.")
    ] = 3,
    sizes: Annotated[
        str, typer.Option("--sizes", help="Comma-separated sizes in tokens; 'all' = full set.")
    ] = DEFAULT_SIZES,
    strategy: Annotated[
        list[str] | None, typer.Option("--strategy", help="SEQ, RAND, RAND_SEQ (repeatable).")
    ] = None,
    draws: Annotated[int, typer.Option("--draws", help="Draws per size and strategy.")] = 100,
    level: Annotated[float, typer.Option("--level", help="τ level for the recommendation.")] = 0.9,
    seed: SeedOption = DEFAULTS.seed,
    no_aso: Annotated[bool, typer.Option("--no-aso", help="Skip the ASO agreement.")] = False,
    aso_draws: Annotated[
        int, typer.Option("--aso-draws", help="Draws per cell with ASO (0 = all).")
    ] = 25,
    aso_iterations: Annotated[
        int, typer.Option("--aso-iterations", help="ASO bootstrap iterations.")
    ] = 200,
    plot: Annotated[
        Path | None, typer.Option("--plot", help="Write the τ curve here (PNG).")
    ] = None,
    json_output: JsonOption = False,
) -> None:
    """How much test data is enough: ranking agreement (weighted τ, ASO) against test-set size."""
    # the settings the analysis uses, passed to it and echoed in the JSON alike
    chosen: dict[str, Any] = {
        "strategies": [s.upper() for s in strategy] if strategy else list(api.STRATEGIES),
        "n_draws": draws,
        "level": level,
        "seed": seed,
        "aso": not no_aso,
        "aso_draws": aso_draws or None,
    }
    result = api.analyze_datasize(
        store=store,
        dataset=dataset,
        task=task,
        language=language,
        metric=metric,
        models=model,
        gold=gold,
        predictions=pred or [],
        simulate_models=simulate_models,
        simulate_seeds=simulate_seeds,
        sizes=parse_sizes(sizes),
        aso_bootstrap_iterations=aso_iterations,
        **chosen,
    )
    several = hasattr(result, "scopes")  # the filters matched several test sets
    parts = list(result) if several else [(None, result)]
    plots = {}
    for scope, one in parts:
        if plot is not None:  # several test sets: one plot each, the scope in its name
            name = plot.name if scope is None else f"{plot.stem}-{scope.slug()}{plot.suffix}"
            plots[scope] = plot.with_name(name)
            one.plot(plots[scope])
    if json_output:
        payload = result.to_dict()
        if not several:
            payload["plot"] = None if plot is None else str(plot)
        else:
            for entry, (scope, _) in zip(payload["scopes"], parts, strict=True):
                entry["plot"] = str(plots[scope]) if scope in plots else None
        _print_with_settings(
            payload, metric=metric, sizes=sizes, aso_iterations=aso_iterations, **chosen
        )
        return
    for scope, one in parts:
        where = "" if scope is None else f"{scope.label()}: "
        console.print(
            frame_table(
                one.table,
                title=f"{where}Weighted τ vs the full set ({one.n_tokens:g} {one.token_unit}, "
                f"{len(one.models)} models × {one.n_seeds} seeds; example order: "
                f"{one.order})",
            )
        )
        console.print(
            frame_table(one.recommendation, title=f"{where}Smallest size with mean τ ≥ {level}")
        )
        print_notes(one.notes)
        if scope in plots:
            console.print(f"plot written to {plots[scope]}", highlight=False)
    if several:
        print_notes(result.notes)


@analyze_app.command("transfer")
@answer_cache("analyze transfer")
def analyze_transfer_command(
    ctx: typer.Context,
    input: Annotated[
        Path | None,
        typer.Option(
            "--input",
            "-i",
            help="Tidy scores (CSV/JSONL/Parquet): model_language, language (or "
            "dataset_language), score [, model, dataset].",
        ),
    ] = None,
    example: Annotated[
        bool,
        typer.Option("--example", help="Use the published ScandEval table (Nielsen 2023, App. A)."),
    ] = False,
    store: StoreOption = None,  # zero-shot transfer runs, e.g. of 'glotbench run scandi-transfer'
    metric: Annotated[
        list[str] | None,
        typer.Option(
            "--metric",
            help="With --store: TASK=METRIC (repeatable); default: each task's primary metric.",
        ),
    ] = None,
    observations: Annotated[
        str,
        typer.Option(
            "--observations",
            help="model: one score per model and language (mean over the language's datasets; "
            "the paper's unit); dataset: one per (model, dataset).",
        ),
    ] = "model",
    min_size: Annotated[
        int, typer.Option("--min-size", help="Smallest group (1 adds single languages).")
    ] = 2,
    top: Annotated[int, typer.Option("--top", help="Groups to print (table only).")] = 20,
    json_output: JsonOption = False,
) -> None:
    """Benchmark language groups by ScandEval's mean F-statistic (Nielsen 2023, §3.3).

    For each group G of dataset languages and each language d in G: one-way ANOVA F
    of the scores on d of the models whose language is in G against all other models;
    a group's score is the mean of its per-language F values. Largest mean F first.
    """
    if observations not in ("model", "dataset"):
        raise typer.BadParameter("use model or dataset", param_hint="--observations")
    if store is not None and (input is not None or example) and store_from_environment(ctx):
        store = None  # --input / --example typed win over $GLOTBENCH_STORE
    if sum([input is not None, example, store is not None]) != 1:
        raise typer.BadParameter(
            "give one of --input FILE, --store PATH or --example", param_hint="--input"
        )
    metrics: dict[str, str] = {}
    for item in metric or []:
        task, sep, name = item.partition("=")
        if not sep or not task or not name:
            raise typer.BadParameter("use TASK=METRIC", param_hint="--metric")
        metrics[task] = name
    result = api.analyze_transfer(
        input,
        example=example,
        store=store,
        metrics=metrics or None,
        observations=observations,
        min_size=min_size,
    )
    if json_output:
        _print_with_settings(
            result.to_dict(), observations=observations, min_size=min_size, metric=metrics
        )
        return
    console.print(
        frame_table(
            transfer_table(result).head(top),
            title=f"Benchmark groups by mean F (observations: {result.observations})",
        )
    )
    console.print(
        f"best group: {', '.join(result.best)} (mean F {result.groups.iloc[0]['mean_f']:.2f})",
        highlight=False,
    )
    print_notes(result.notes)


@analyze_app.command("buckets")
@answer_cache("analyze buckets")
def analyze_buckets_command(
    task: Annotated[
        str | None,
        typer.Option("--task", help="Task of the runs (default: every task that matches)."),
    ] = None,
    language: Annotated[
        str | None,
        typer.Option("--language", help="Language of the runs (default: every one that matches)."),
    ] = None,
    metric: Annotated[
        str | None,
        typer.Option("--metric", help="Metric of the runs (default: each task's primary metric)."),
    ] = None,
    store: StoreOption = DEFAULT_STORE,
    dataset: Annotated[
        str | None,
        typer.Option(
            "--dataset",
            help="Dataset of the runs. Filters left out: one matching dataset is analysed, "
            "several each.",
        ),
    ] = None,
    model: ListOption = None,
    attributes: Annotated[
        Path | None,
        typer.Option(
            "--attributes",
            "-a",
            help="Per-example attributes (CSV/TSV/JSONL/Parquet) with an example_id column; "
            "text columns (text, question, context, answer, entity, …) become lengths. "
            "Default: the built-in attributes `glotbench run` stored (sentence_length, "
            "oov_rate, label, entity_length/label/oov, context/question/answer_length, "
            "question_word).",
        ),
    ] = None,
    attribute: Annotated[
        list[str] | None, typer.Option("--attribute", help="Attribute to bucket (repeatable).")
    ] = None,
    buckets: Annotated[
        int, typer.Option("--buckets", help="Equal-frequency buckets per continuous attribute.")
    ] = 4,
    replicates: Annotated[int, typer.Option("--replicates", help="Bootstrap replicates.")] = 1000,
    seed: Annotated[int, typer.Option("--seed", help="Bootstrap seed.")] = 0,
    json_output: JsonOption = False,
) -> None:
    """Metric per bucket of examples (ExplainaBoard) with bootstrap CIs; pairwise diagnosis."""
    result = api.analyze_buckets(
        store=store,
        attributes=attributes,
        task=task,
        language=language,
        metric=metric,
        dataset=dataset,
        models=model,
        columns=attribute,
        n_buckets=buckets,
        n_resamples=replicates,
        seed=seed,
    )
    if json_output:
        print_json(result.to_dict())
        return
    several = hasattr(result, "scopes")  # the filters matched several test sets
    for scope, one in list(result) if several else [(None, result)]:
        where = (
            f"{scope.metric} per bucket ({scope.dataset}: {scope.task}/{scope.language})"
            if scope is not None
            else "per bucket"
            if metric is None
            else f"{metric} per bucket ({task}/{language})"
        )
        console.print(frame_table(one.buckets, title=where))
        if not one.diagnosis.empty:
            console.print(
                frame_table(one.diagnosis, title="Where A beats B by the most, and B beats A")
            )
        print_notes(one.notes)
    if several:
        print_notes(result.notes)


@analyze_app.command("lmm-robustness")
@answer_cache("analyze lmm-robustness")
def analyze_lmm_robustness_command(
    formula: Annotated[str, typer.Option("--formula", "-f", help="Mixed model in lme4 syntax.")],
    factor: Annotated[str, typer.Option("--factor", help="Fixed factor whose effect to detect.")],
    subject: Annotated[
        str, typer.Option("--subject", help="Repeated-measures unit for RM-ANOVA (e.g. model).")
    ] = "model",
    within: Annotated[
        list[str] | None,
        typer.Option("--within", help="Within-subject factors for RM-ANOVA (repeatable)."),
    ] = None,
    input: InputOption = None,
    store: AnalysisStoreOption = None,
    metric: MetricFilter = None,
    fraction: Annotated[
        list[float] | None,
        typer.Option("--fraction", help="Share of rows to remove (repeatable; default 0.05…0.5)."),
    ] = None,
    repeats: Annotated[int, typer.Option("--repeats", help="Refits per fraction.")] = 20,
    alpha: Annotated[float, typer.Option("--alpha", help="Significance level.")] = 0.05,
    seed: SeedOption = DEFAULTS.seed,
    json_output: JsonOption = False,
) -> None:
    """How often LMM and RM-ANOVA still detect a factor as 5 %…50 % of rows go missing."""
    frame, _ = api.load_lmm_frame(
        input=input,
        store=store if store is not None or input is not None else DEFAULT_STORE,
        metric=metric,
    )
    result = api.analyze_missing_data(
        frame,
        formula,
        factor,
        subject=subject,
        within=within or [factor],
        fractions=fraction,
        n_repeats=repeats,
        alpha=alpha,
        seed=seed,
    )
    if json_output:
        _print_with_settings(
            result.to_dict(),
            formula=formula,
            factor=factor,
            subject=subject,
            within=within or [factor],
            fractions=fraction,
            repeats=repeats,
            alpha=alpha,
            metric=metric,
            seed=seed,
        )
        return
    console.print(
        frame_table(result.to_frame(), title=f"Detection of {factor!r} as rows go missing")
    )


@analyze_app.command("learning-curve")
@answer_cache("analyze learning-curve")
def analyze_learning_curve_command(
    store: AnalysisStoreOption = None,
    model: ModelFilter = None,
    dataset: Annotated[
        list[str] | None, typer.Option("--dataset", help="Only these datasets (repeatable).")
    ] = None,
    task: TaskFilter = None,
    language: LanguageFilter = None,
    metric: Annotated[
        str | None, typer.Option("--metric", help="Metric (default: the task's primary one).")
    ] = None,
    draws: DrawsOption = 2000,
    seed: SeedOption = DEFAULTS.seed,
    alpha: Annotated[
        float, typer.Option("--alpha", help="Level of the paired test against the largest size.")
    ] = 0.05,
    confidence_level: LevelOption = 0.95,
    plot: Annotated[
        Path | None, typer.Option("--plot", help="Write the curves here (PNG).")
    ] = None,
    json_output: JsonOption = False,
) -> None:
    """Learning curves: score vs training size per model and language, with intervals, and
    the size beyond which gains are no longer detectable (runs of --train-sizes)."""
    result = api.learning_curve(
        store if store is not None else DEFAULT_STORE,
        models=model,
        datasets=dataset,
        tasks=task,
        languages=language,
        metric=metric,
        n_draws=draws,
        seed=seed,
        alpha=alpha,
        confidence_level=confidence_level,
    )
    if plot is not None:
        result.plot(plot)
    if json_output:
        payload = result.to_dict()
        payload["plot"] = None if plot is None else str(plot)
        print_json(payload)
        return
    shown = result.table.drop(columns=["task", "metric", "se_seed", "se_boot", "gain_se"])
    console.print(
        frame_table(
            shown,
            title=f"Learning curves ({result.table['metric'].iloc[0]}; "
            f"{result.confidence_level:.0%} intervals; p: paired test against the largest size)",
        )
    )
    console.print(
        frame_table(
            result.saturation,
            title=f"Size beyond which gains are no longer detectable (α = {result.alpha:g})",
        )
    )
    print_notes(result.notes)
    if plot is not None:
        console.print(f"plot written to {plot}", highlight=False)
