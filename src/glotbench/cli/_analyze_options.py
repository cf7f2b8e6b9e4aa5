"""The options of the ``glotbench analyze …`` commands, named so that each command's
signature lists them one a line (options several command groups share are in
:mod:`glotbench.cli._options`; the inputs and filters of every analysis in
:mod:`glotbench.cli.analyze`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from glotbench.cli._lazy import api
from glotbench.cli._options import DEFAULT_STORE, StoreOption

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


def read_source(
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


PerLanguageOption = Annotated[
    bool,
    typer.Option(
        "--per-language",
        help="Also give the full per-language table (every pair × language; in --json as "
        "per_language). Without it, per-language results are summarised per language and "
        "per pair.",
    ),
]

PairsOutOption = Annotated[
    Path | None,
    typer.Option(
        "--pairs-out",
        help="Write the full per-language table (every pair × language) to this file: "
        "Parquet, or CSV if the name ends in .csv.",
    ),
]

PairsOption = Annotated[
    str,
    typer.Option(
        "--pairs",
        help="Which pairs to compute: 'adjacent' (neighbours in each aggregate's ranking, "
        "every pair of the --top-k best models and each --pair; linear in models) or 'all' "
        "(every pair; implied by --per-language and --pairs-out). A pair's numbers are "
        "the same in both.",
    ),
]

TopKOption = Annotated[
    int,
    typer.Option(
        "--top-k", min=0, help="With --pairs adjacent: every pair of this many best models."
    ),
]

PairOption = Annotated[
    list[str] | None,
    typer.Option(
        "--pair",
        help="A pair to compute in any case, as A,B (model names; repeat the option).",
    ),
]

DistributionOption = Annotated[
    str,
    typer.Option(
        "--distribution",
        help="The rank distribution: 'full' (every rank's share per model), 'window' "
        "(each model's ranks with a non-zero share: first_rank and shares; linear in "
        "models) or 'auto' (full up to 50 models).",
    ),
]

EuroevalRankInputOption = Annotated[
    Path | None,
    typer.Option(
        "--input",
        "-i",
        help="Tidy scores file: model, language, score and optional dataset, task, metric, "
        "seed, replicate (an iteration index). Default: the store.",
    ),
]

MetricOption = Annotated[
    list[str] | None,
    typer.Option(
        "--metric",
        help="Default: each task's declared primary metric (EuroEval's: mcc for "
        "classification, micro_f1_no_misc for NER, f1 for reading comprehension). "
        "TASK=METRIC scores one task on another metric (e.g. "
        "--metric named-entity-recognition=micro_f1); a plain METRIC (repeatable) gives "
        "each dataset the first listed one it has.",
    ),
]

BootstrapsOption = Annotated[
    int, typer.Option("--bootstraps", help="Bootstrap resamples of each model's iterations.")
]

EuroevalRankSeedOption = Annotated[int, typer.Option("--seed", help="Seed of the bootstrap.")]

FormulaOption = Annotated[
    str,
    typer.Option(
        "--formula",
        "-f",
        help="Model in lme4 syntax, e.g. 'delta ~ language * task + (1 | architecture/model)'.",
    ),
]

LmmInputOption = Annotated[
    Path | None,
    typer.Option("--input", "-i", help="Tidy table (CSV/JSONL/Parquet). Default: the store."),
]

EmmeansOption = Annotated[
    list[str] | None,
    typer.Option(
        "--emmeans",
        help="Factor (or combination a:b) for marginal means and pairwise contrasts (repeatable).",
    ),
]

RemlOption = Annotated[
    bool, typer.Option("--reml/--ml", help="Fit by REML (default) or maximum likelihood.")
]

AdjustOption = Annotated[
    str,
    typer.Option("--adjust", help="Contrast p-value adjustment: tukey, bonferroni, holm, none."),
]

QqPlotOption = Annotated[
    Path | None,
    typer.Option(
        "--qq-plot",
        help="Simulate DHARMa-style residuals, test them and write their Q-Q plot here.",
    ),
]

ResidualsOption = Annotated[
    bool,
    typer.Option(
        "--residuals",
        help="Simulate DHARMa-style residuals and test them without a plot (with --json, "
        "the scaled residuals for `glotbench report --lmm`).",
    ),
]

ResidualsByOption = Annotated[
    list[str] | None,
    typer.Option(
        "--residuals-by",
        help="Factor for DHARMa's per-group residual tests (KS uniformity within each "
        "group, Holm-adjusted; Levene between groups); 'a:b' = cells of two factors "
        "(repeatable; implies --residuals; default: the fixed-effect factors).",
    ),
]

DatasizeMetricOption = Annotated[
    str | None, typer.Option("--metric", help="Metric (store), or las/uas/upos (CoNLL-U).")
]

GoldOption = Annotated[Path | None, typer.Option("--gold", help="Gold CoNLL-U file.")]

PredOption = Annotated[
    list[Path] | None,
    typer.Option("--pred", help="CoNLL-U predictions (repeatable; name-seedN.conllu = seed N)."),
]

SimulateModelsOption = Annotated[
    int, typer.Option("--simulate-models", help="Simulated UPOS taggers on --gold.")
]

SimulateSeedsOption = Annotated[
    int, typer.Option("--simulate-seeds", help="Seeds per simulated tagger.")
]

SizesOption = Annotated[
    str, typer.Option("--sizes", help="Comma-separated sizes in tokens; 'all' = full set.")
]

StrategyOption = Annotated[
    list[str] | None, typer.Option("--strategy", help="SEQ, RAND, RAND_SEQ (repeatable).")
]

DatasizeDrawsOption = Annotated[int, typer.Option("--draws", help="Draws per size and strategy.")]

DatasizeLevelOption = Annotated[
    float, typer.Option("--level", help="τ level for the recommendation.")
]

NoAsoOption = Annotated[bool, typer.Option("--no-aso", help="Skip the ASO agreement.")]

AsoDrawsOption = Annotated[
    int, typer.Option("--aso-draws", help="Draws per cell with ASO (0 = all).")
]

AsoIterationsOption = Annotated[
    int, typer.Option("--aso-iterations", help="ASO bootstrap iterations.")
]

PlotOption = Annotated[Path | None, typer.Option("--plot", help="Write the τ curve here (PNG).")]

TransferInputOption = Annotated[
    Path | None,
    typer.Option(
        "--input",
        "-i",
        help="Tidy scores (CSV/JSONL/Parquet): model_language, language (or "
        "dataset_language), score [, model, dataset].",
    ),
]

ExampleOption = Annotated[
    bool,
    typer.Option("--example", help="Use the published ScandEval table (Nielsen 2023, App. A)."),
]

TransferMetricOption = Annotated[
    list[str] | None,
    typer.Option(
        "--metric",
        help="With --store: TASK=METRIC (repeatable); default: each task's primary metric.",
    ),
]

ObservationsOption = Annotated[
    str,
    typer.Option(
        "--observations",
        help="model: one score per model and language (mean over the language's datasets; "
        "the paper's unit); dataset: one per (model, dataset).",
    ),
]

MinSizeOption = Annotated[
    int, typer.Option("--min-size", help="Smallest group (1 adds single languages).")
]

TopOption = Annotated[int, typer.Option("--top", help="Groups to print (table only).")]

BucketsTaskOption = Annotated[
    str | None,
    typer.Option("--task", help="Task of the runs (default: every task that matches)."),
]

BucketsLanguageOption = Annotated[
    str | None,
    typer.Option("--language", help="Language of the runs (default: every one that matches)."),
]

BucketsMetricOption = Annotated[
    str | None,
    typer.Option("--metric", help="Metric of the runs (default: each task's primary metric)."),
]

BucketsDatasetOption = Annotated[
    str | None,
    typer.Option(
        "--dataset",
        help="Dataset of the runs. Filters left out: one matching dataset is analysed, "
        "several each.",
    ),
]

AttributesOption = Annotated[
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
]

AttributeOption = Annotated[
    list[str] | None, typer.Option("--attribute", help="Attribute to bucket (repeatable).")
]

BucketsOption = Annotated[
    int, typer.Option("--buckets", help="Equal-frequency buckets per continuous attribute.")
]

BucketsReplicatesOption = Annotated[int, typer.Option("--replicates", help="Bootstrap replicates.")]

BucketsSeedOption = Annotated[int, typer.Option("--seed", help="Bootstrap seed.")]

RobustnessFormulaOption = Annotated[
    str, typer.Option("--formula", "-f", help="Mixed model in lme4 syntax.")
]

FactorOption = Annotated[str, typer.Option("--factor", help="Fixed factor whose effect to detect.")]

SubjectOption = Annotated[
    str, typer.Option("--subject", help="Repeated-measures unit for RM-ANOVA (e.g. model).")
]

WithinOption = Annotated[
    list[str] | None,
    typer.Option("--within", help="Within-subject factors for RM-ANOVA (repeatable)."),
]

FractionOption = Annotated[
    list[float] | None,
    typer.Option("--fraction", help="Share of rows to remove (repeatable; default 0.05…0.5)."),
]

RepeatsOption = Annotated[int, typer.Option("--repeats", help="Refits per fraction.")]

AlphaOption = Annotated[float, typer.Option("--alpha", help="Significance level.")]

CurveDatasetOption = Annotated[
    list[str] | None, typer.Option("--dataset", help="Only these datasets (repeatable).")
]

CurveMetricOption = Annotated[
    str | None, typer.Option("--metric", help="Metric (default: the task's primary one).")
]

CurveAlphaOption = Annotated[
    float, typer.Option("--alpha", help="Level of the paired test against the largest size.")
]

CurvePlotOption = Annotated[
    Path | None, typer.Option("--plot", help="Write the curves here (PNG).")
]
