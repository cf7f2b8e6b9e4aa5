"""``glotbench analyze …``: replication-aware analyses of a store or a scores file.

Variance components, aggregates, pairwise comparisons, ranks, EuroEval's rank
score, inference speed, mixed models and their robustness, evaluation size,
cross-lingual transfer groups and per-bucket scores.
"""

from __future__ import annotations

from typing import Any

import typer

from glotbench.analysis.settings import DEFAULT_PAIRS, DEFAULT_TOP_K, PAIR_MODES, AnalysisSettings
from glotbench.cli import analyze_studies
from glotbench.cli._analyze_options import (
    AnalysisStoreOption,
    BootstrapsOption,
    DistributionOption,
    EuroevalRankInputOption,
    EuroevalRankSeedOption,
    InputOption,
    LanguageFilter,
    MetricOption,
    ModelFilter,
    PairOption,
    PairsOption,
    PairsOutOption,
    PerLanguageOption,
    RankBootstrapsOption,
    RankMethodOption,
    TaskFilter,
    TopKOption,
    read_source,
)
from glotbench.cli._answer_cache import answer_cache
from glotbench.cli._lazy import api
from glotbench.cli._options import (
    DEFAULT_STORE,
    DEFAULTS,
    JsonOption,
    LevelOption,
    MetricChoiceOption,
    ReplicatesOption,
    SeedOption,
    StoreOption,
    analysis_settings,
    with_analysis_settings,
)
from glotbench.cli._output import (
    console,
    frame_table,
    print_json,
    print_notes,
    print_with_settings,
    speed_table,
)

analyze_app = typer.Typer(
    help="Replication-aware analyses: variance components, aggregates, comparisons, ranks.",
    no_args_is_help=True,
)


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
    source = read_source(input, store, settings, model, task, language)
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
    source = read_source(input, store, settings, model, task, language)
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
    per_language: PerLanguageOption = False,
    pairs_out: PairsOutOption = None,
    pairs: PairsOption = DEFAULT_PAIRS,
    top_k: TopKOption = DEFAULT_TOP_K,
    pair: PairOption = None,
    json_output: JsonOption = False,
) -> None:
    """Pairwise differences, their SD over replications and effect sizes (flag: |effect| ≥ 2).

    Aggregates over languages: mean, geometric mean (a zero gives 0) and median.
    """
    if pairs not in PAIR_MODES:
        raise typer.BadParameter(f"use one of {', '.join(PAIR_MODES)}", param_hint="--pairs")
    requested = [_model_pair(text) for text in pair or ()]
    source = read_source(input, store, settings, model, task, language)
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
    source = read_source(input, store, settings, model, task, language)
    comparisons = api.analyze_task_comparisons(source, settings)
    if json_output:
        print_with_settings(
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
    distribution: DistributionOption = "auto",
    json_output: JsonOption = False,
) -> None:
    """Rank distributions (% of draws at each rank), rank intervals and EuroEval rank scores."""
    if distribution not in ("auto", "full", "window"):
        raise typer.BadParameter("use auto, full or window", param_hint="--distribution")
    source = read_source(input, store, settings, model, task, language)
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
    input: EuroevalRankInputOption = None,
    store: AnalysisStoreOption = None,
    metric: MetricOption = None,
    model: ModelFilter = None,
    task: TaskFilter = None,
    language: LanguageFilter = None,
    rank_method: RankMethodOption = "2026-05-28",
    bootstraps: BootstrapsOption = 1000,
    seed: EuroevalRankSeedOption = 0,
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


# the studies of a benchmark's design, in the order --help lists them
analyze_app.registered_commands.extend(analyze_studies.commands.registered_commands)
