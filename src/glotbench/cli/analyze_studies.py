"""``glotbench analyze lmm``, ``datasize``, ``transfer``, ``buckets``, ``lmm-robustness`` and
``learning-curve``: studies of a benchmark's design (mixed models and their power, the
test-set size, cross-lingual transfer, per-bucket scores, learning curves).

Registered on ``glotbench analyze`` by :mod:`glotbench.cli.analyze`, after its
comparisons and ranks.
"""

from __future__ import annotations

from typing import Any

import typer

from glotbench.cli._analyze_options import (
    AdjustOption,
    AlphaOption,
    AnalysisStoreOption,
    AsoDrawsOption,
    AsoIterationsOption,
    AttributeOption,
    AttributesOption,
    BucketsDatasetOption,
    BucketsLanguageOption,
    BucketsMetricOption,
    BucketsOption,
    BucketsReplicatesOption,
    BucketsSeedOption,
    BucketsTaskOption,
    CurveAlphaOption,
    CurveDatasetOption,
    CurveMetricOption,
    CurvePlotOption,
    DatasizeDrawsOption,
    DatasizeLevelOption,
    DatasizeMetricOption,
    EmmeansOption,
    ExampleOption,
    FactorOption,
    FormulaOption,
    FractionOption,
    GoldOption,
    InputOption,
    LanguageFilter,
    LmmInputOption,
    MetricFilter,
    MinSizeOption,
    ModelFilter,
    NoAsoOption,
    ObservationsOption,
    PlotOption,
    PredOption,
    QqPlotOption,
    RemlOption,
    RepeatsOption,
    ResidualsByOption,
    ResidualsOption,
    RobustnessFormulaOption,
    SimulateModelsOption,
    SimulateSeedsOption,
    SizesOption,
    StrategyOption,
    SubjectOption,
    TaskFilter,
    TopOption,
    TransferInputOption,
    TransferMetricOption,
    WithinOption,
)
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
    ModelsOption,
    SeedOption,
    StoreOption,
    TaskOption,
    parse_sizes,
    store_from_environment,
)
from glotbench.cli._output import (
    console,
    frame_table,
    print_json,
    print_notes,
    print_with_settings,
    transfer_table,
)

commands = typer.Typer()


@commands.command("lmm")
@answer_cache("analyze lmm")
def analyze_lmm_command(
    formula: FormulaOption,
    input: LmmInputOption = None,
    store: AnalysisStoreOption = None,
    emmeans: EmmeansOption = None,
    reml: RemlOption = True,
    adjust: AdjustOption = "tukey",
    qq_plot: QqPlotOption = None,
    residuals: ResidualsOption = False,
    residuals_by: ResidualsByOption = None,
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
        print_with_settings(
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


@commands.command("datasize")
@answer_cache("analyze datasize")
def analyze_datasize_command(
    store: AnalysisStoreOption = None,
    dataset: DatasetOption = None,
    task: TaskOption = None,
    language: LanguageOption = None,
    metric: DatasizeMetricOption = None,
    model: ModelsOption = None,
    gold: GoldOption = None,
    pred: PredOption = None,
    simulate_models: SimulateModelsOption = 0,
    simulate_seeds: SimulateSeedsOption = 3,
    sizes: SizesOption = DEFAULT_SIZES,
    strategy: StrategyOption = None,
    draws: DatasizeDrawsOption = 100,
    level: DatasizeLevelOption = 0.9,
    seed: SeedOption = DEFAULTS.seed,
    no_aso: NoAsoOption = False,
    aso_draws: AsoDrawsOption = 25,
    aso_iterations: AsoIterationsOption = 200,
    plot: PlotOption = None,
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
        print_with_settings(
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


@commands.command("transfer")
@answer_cache("analyze transfer")
def analyze_transfer_command(
    ctx: typer.Context,
    input: TransferInputOption = None,
    example: ExampleOption = False,
    store: StoreOption = None,  # zero-shot transfer runs, e.g. of 'glotbench run scandi-transfer'
    metric: TransferMetricOption = None,
    observations: ObservationsOption = "model",
    min_size: MinSizeOption = 2,
    top: TopOption = 20,
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
        print_with_settings(
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


@commands.command("buckets")
@answer_cache("analyze buckets")
def analyze_buckets_command(
    task: BucketsTaskOption = None,
    language: BucketsLanguageOption = None,
    metric: BucketsMetricOption = None,
    store: StoreOption = DEFAULT_STORE,
    dataset: BucketsDatasetOption = None,
    model: ListOption = None,
    attributes: AttributesOption = None,
    attribute: AttributeOption = None,
    buckets: BucketsOption = 4,
    replicates: BucketsReplicatesOption = 1000,
    seed: BucketsSeedOption = 0,
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


@commands.command("lmm-robustness")
@answer_cache("analyze lmm-robustness")
def analyze_lmm_robustness_command(
    formula: RobustnessFormulaOption,
    factor: FactorOption,
    subject: SubjectOption = "model",
    within: WithinOption = None,
    input: InputOption = None,
    store: AnalysisStoreOption = None,
    metric: MetricFilter = None,
    fraction: FractionOption = None,
    repeats: RepeatsOption = 20,
    alpha: AlphaOption = 0.05,
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
        print_with_settings(
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


@commands.command("learning-curve")
@answer_cache("analyze learning-curve")
def analyze_learning_curve_command(
    store: AnalysisStoreOption = None,
    model: ModelFilter = None,
    dataset: CurveDatasetOption = None,
    task: TaskFilter = None,
    language: LanguageFilter = None,
    metric: CurveMetricOption = None,
    draws: DrawsOption = 2000,
    seed: SeedOption = DEFAULTS.seed,
    alpha: CurveAlphaOption = 0.05,
    confidence_level: LevelOption = 0.95,
    plot: CurvePlotOption = None,
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
