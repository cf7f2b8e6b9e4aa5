"""The demo's main job: run the ``starter`` suite, then analyse it.

:func:`starter_demo` runs (or resumes) the offline language-identification
suite into a store, derives the ScandEval scores from the stored per-example
statistics, and runs the replication-aware analyses on the per-language
accuracies: variance components (σ_b between languages, σ_seed between
iterations, σ_boot of the test set), the mean over languages with a standard
error that includes the choice of languages, pairwise differences with effect
sizes and rank distributions — all from paired draws of the same stored
statistics (non-parametric: each draw takes one iteration and one bootstrap
replicate of the test set per language, and resamples the languages).
"""

from __future__ import annotations

import dataclasses
import importlib.util
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from glotbench.analysis.compare import Aggregates, Comparison, aggregate_scores
from glotbench.analysis.headline import Analysis, AnalysisSettings, analyze
from glotbench.analysis.pair_view import RankedComparisons, ranked_comparisons
from glotbench.analysis.ranks import Ranks
from glotbench.analysis.replicates import ReplicatedScores
from glotbench.analysis.results import records
from glotbench.analysis.settings import DEFAULT_SETTINGS
from glotbench.analysis.sources.inputs import load_replicated
from glotbench.analysis.sources.speed_store import store_speed_table
from glotbench.analysis.variance import VarianceComponents, components, variance_components
from glotbench.errors import GlotbenchError
from glotbench.store.analysis_cache import AnalysisCache, cache_key, store_fingerprint
from glotbench.store.stats import in_configs
from glotbench.store.store import Store

#: the suite the demo runs
STARTER_SUITE = "starter"
#: per-language metric of the starter suite (each language's accuracy = its recall)
STARTER_METRIC = "accuracy"
#: packages the starter suite needs (the ``starter`` extra)
STARTER_PACKAGES: dict[str, str] = {
    "babel": "babel",
    "py3langid": "py3langid",
    "langid": "langid",
    "lingua": "lingua-language-detector",
    "pycld2": "pycld2",
    "langdetect": "langdetect",
}


def missing_starter_packages() -> list[str]:
    """PyPI names of the starter suite's packages that are not installed."""
    return [
        package
        for module, package in STARTER_PACKAGES.items()
        if importlib.util.find_spec(module) is None
    ]


@dataclass(frozen=True)
class StarterDemo:
    """What the demo's starter part produced.

    Attributes
    ----------
    store : Path
        The store the starter suite ran into.
    run : RunSummary
        The run's summary (:func:`glotbench.api.run_benchmark`).
    scores : pandas.DataFrame
        The analysed scores, one row per model and language.
    variance : VarianceComponents
        Variance components per model and language.
    aggregates : Aggregates
        Each model's aggregates with standard errors.
    comparison : Comparison
        Pairwise differences.
    ranks : Ranks
        Rank distributions.
    notes : list of str
        What the reader should know (skipped models, small samples).
    replicated : ReplicatedScores or None
        The replicated scores behind every number.
    settings : AnalysisSettings
        The settings of every number.
    analysis : Analysis or None
        The headline analysis the demo's pages render.
    cache_key : str
        Identifies the run and settings the analysis was cached under.
    """

    store: Path
    run: Any  # RunSummary
    scores: pd.DataFrame
    variance: VarianceComponents
    aggregates: Aggregates
    comparison: Comparison
    ranks: Ranks
    notes: list[str] = field(default_factory=list)
    #: the analysed scores (the leaderboard and report of the demo show these)
    replicated: ReplicatedScores | None = None
    #: the request's settings and headline result, shared by every output
    settings: AnalysisSettings = field(default_factory=AnalysisSettings)
    analysis: Analysis | None = None
    #: the key of this result in the store's analysis cache (store content + request)
    cache_key: str = ""

    def comparisons(self) -> RankedComparisons | None:
        """The comparison and ranks as one result, to hand to the pages (pairs in the
        analysis' ranking order); None without an analysis."""
        if self.analysis is None:
            return None
        return RankedComparisons.of_analysis(self.analysis, self.comparison, self.ranks)

    def summary(self) -> pd.DataFrame:
        """Per model: macro-F1 over all items and mean per-language accuracy ± SE (ScandEval).

        Mean, SE and interval are the headline analysis' (the same numbers as
        the demo's leaderboard and report); ``se_languages`` is σ_b/√L.
        """
        frame = self.scores
        macro = frame[frame["metric"] == "f1_macro"].set_index("model")
        accuracy = frame[frame["metric"] == STARTER_METRIC]
        if self.analysis is not None:
            agg = self.analysis.summary().set_index("model")
        else:
            agg = self.aggregates.frame
            agg = agg[agg["aggregator"] == "mean"].set_index("model")
            agg = agg.rename(columns={"se_resampled": "se"})
        rows = []
        for model in agg.sort_values("score", ascending=False).index:
            per_lang = accuracy[accuracy["model"] == model]
            extra = (
                {
                    "ci_low": float(agg.loc[model, "ci_low"]),
                    "ci_high": float(agg.loc[model, "ci_high"]),
                    "rank_1_share": float(agg.loc[model, "rank_1_share"]),
                }
                if self.analysis is not None
                else {}
            )
            rows.append(
                {
                    "model": model,
                    "mean_accuracy": float(agg.loc[model, "score"]),
                    "se": float(agg.loc[model, "se"]),
                    "se_languages": float(agg.loc[model, "se_languages"]),
                    **extra,
                    "macro_f1": float(macro.loc[model, "score"]) if model in macro.index else None,
                    "languages": int(per_lang["language"].nunique()),
                    "iterations": int(per_lang["iterations"].max()) if len(per_lang) else 0,
                }
            )
        return pd.DataFrame(rows)

    def hardest_languages(self, n: int = 8) -> pd.DataFrame:
        """The ``n`` languages with the lowest mean accuracy over the models (not majority),
        with the best and worst model on each."""
        acc = self.scores[
            (self.scores["metric"] == STARTER_METRIC) & (self.scores["model"] != "majority")
        ]
        if acc.empty:
            return acc
        table = acc.pivot_table(index="language", columns="model", values="score")
        out = table.assign(
            mean=table.mean(axis=1),
            best=table.idxmax(axis=1),
            best_score=table.max(axis=1),
            worst=table.idxmin(axis=1),
            worst_score=table.min(axis=1),
        )[["mean", "best", "best_score", "worst", "worst_score"]]
        return out.sort_values("mean").head(n).reset_index()

    def to_dict(self) -> dict[str, Any]:
        return {
            "store": str(self.store),
            "run": self.run.to_dict(),
            "summary": records(self.summary()),
            "variance": self.variance.to_dict(),
            "aggregates": self.aggregates.to_dict(),
            "comparison": self.comparison.to_dict(),
            "ranks": self.ranks.to_dict(),
            "analysis": self.analysis.to_dict() if self.analysis is not None else None,
            "intervals": self.analysis.interval_text if self.analysis is not None else None,
            "notes": list(self.notes),
        }


#: left out of the demo unless asked for (``glotbench demo --all-models``): langdetect
#: samples 7 trials per text, about 8 ms each, which is 85 of the first run's CPU
#: seconds over 5 iterations — more than every other model together (docs/performance.md)
DEMO_SKIPS = ("langdetect",)


def demo_models() -> list[str]:
    """The starter suite's models that the demo runs by default (all but :data:`DEMO_SKIPS`)."""
    from glotbench.runner.suite import load_suite

    return [m.name for m in load_suite(STARTER_SUITE).models if m.name not in DEMO_SKIPS]


def default_executor() -> str:
    """``processes`` on a machine with more than one CPU, else ``local``."""
    import os

    return "processes" if (os.cpu_count() or 1) > 1 else "local"


def starter_demo(
    store: str | Path,
    *,
    iterations: int | None = None,
    n_draws: int = DEFAULT_SETTINGS.n_draws,
    n_replicates: int = DEFAULT_SETTINGS.n_replicates,
    seed: int = DEFAULT_SETTINGS.seed,
    k: int | None = None,
    on_event: Any = None,
    settings: AnalysisSettings | None = None,
    models: list[str] | None = None,
    languages: list[str] | None = None,
    executor: str | None = None,
    all_models: bool = False,
) -> StarterDemo:
    """Run (or resume) the starter suite into ``store`` and analyse it.

    One :class:`AnalysisSettings` decides every number: aggregates,
    comparisons and rank distributions all come from the same paired
    non-parametric draws, and the demo's leaderboard and report render the
    same :attr:`StarterDemo.analysis`.

    Parameters
    ----------
    store : str or Path
        The store the suite runs into (runs already there are reused).
    iterations : int, optional
        Seeds × bootstrapped test sets per job (default: the suite's).
    n_draws : int, default 10000
        Draws of the analysis.
    n_replicates : int, default 1000
        Bootstrap replicates per run.
    seed : int, default 0
        Seed of the draws and replicates.
    k : int, optional
        Subsample ``k`` languages without replacement (default: resample them
        with replacement).
    on_event : callable, optional
        Called with each progress event of the run.
    settings : AnalysisSettings, optional
        Replaces ``n_draws``, ``n_replicates``, ``seed`` and ``k``.
    models, languages : list of str, optional
        Restrict the suite (a smaller run, e.g. for tests).
    executor : str, optional
        ``local`` or ``processes`` (default: the suite's).
    all_models : bool, default False
        Also run the identifiers whose packages are optional.

    Returns
    -------
    StarterDemo
        The run's summary, the analysed scores and the headline ``analysis``.

    Raises
    ------
    InputError
        A model or language the suite does not have.

    Examples
    --------
    Two identifiers on two languages (building the suite's data takes about
    10 s, so this example is not run as a test):

    >>> from glotbench import api
    >>> result = api.starter_demo(  # doctest: +SKIP
    ...     "starter.duckdb", models=["py3langid", "majority"], languages=["da", "sv"],
    ...     iterations=1, n_draws=200, n_replicates=50, executor="local")
    >>> result.analysis  # doctest: +SKIP
    Analysis(models=2, tasks=1, languages=2, best 'py3langid': 0.6359 (SE 0.2314))
    """
    if settings is None:
        settings = AnalysisSettings(
            n_draws=n_draws,
            seed=seed,
            n_replicates=n_replicates,
            languages="with" if k is None else "without",
            k=k,
        )
    path = Path(store)
    run = _run_starter(path, iterations, on_event, models, languages, executor, all_models)
    configs = run.configs  # the configurations of this installation's runs
    # every number below is a function of the stored runs and the request: computed
    # once per store content (docs/performance.md, Demo), then read from the cache
    cache = AnalysisCache.beside(path)
    key = _starter_key(path, settings, configs, run.notes)
    cached = cache.get(key)
    if isinstance(cached, StarterDemo):
        run.scores = cached.run.scores
        return dataclasses.replace(cached, run=run, store=path)
    if on_event is not None:  # a long step after the jobs: the runner's display names it
        on_event("phase", None, {"description": _analysing(settings)})
    result = dataclasses.replace(_analyse_starter(path, run, configs, settings), cache_key=key)
    cache.put(key, result)
    return result


def _analysing(settings: AnalysisSettings) -> str:
    return (
        f"analysing: {settings.n_replicates} bootstrap replicates per run, "
        f"{settings.n_draws} paired draws"
    )


def _run_starter(
    path: Path,
    iterations: int | None,
    on_event: Any,
    models: list[str] | None,
    languages: list[str] | None,
    executor: str | None,
    all_models: bool,
) -> Any:
    """Run (or resume) the starter suite into ``path``: the demo's models unless
    ``all_models``; its scores are left to the analysis."""
    from glotbench.runner.benchmark import run_benchmark

    missing = missing_starter_packages()
    if missing:
        raise GlotbenchError(
            f"the starter suite needs {', '.join(missing)}: pip install 'glotbench[starter]'"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    if models is None and not all_models:
        models = demo_models()
    return run_benchmark(
        STARTER_SUITE,
        store=path,
        iterations=iterations,
        on_event=on_event,
        models=models,
        languages=languages,
        scores=False,  # computed below once, or taken from the cache
        # the jobs in worker processes when there are cores for them (docs/performance.md, Demo)
        executor=executor if executor is not None else default_executor(),
        speed_of=store_speed_table,
    )


def _starter_key(path: Path, settings: AnalysisSettings, configs: Any, notes: Any) -> str:
    """The analysis cache's key of the demo: the store's content and the request."""
    with Store.open(path, read_only=True) as handle:
        fingerprint = store_fingerprint(handle)
    return cache_key(
        fingerprint,
        {
            "analysis": "starter-demo",
            "settings": settings.to_dict(),
            "configs": configs,
            "run_notes": list(notes),
        },
    )


def _analyse_starter(
    path: Path, run: Any, configs: dict[str, str], settings: AnalysisSettings
) -> StarterDemo:
    """The starter demo's analyses of the store at ``path`` (see :func:`starter_demo`)."""
    from glotbench.runner.benchmark import benchmark_scores

    n_replicates, seed = settings.n_replicates, settings.seed
    scores = benchmark_scores(path)
    run.scores = scores  # ScandEval scores of every stored run, as `glotbench run` shows
    scores = scores[scores["model"].isin(set(configs))]  # the models of this demo
    current = in_configs(scores, configs)
    notes = list(run.notes)
    stale = sorted(set(scores.loc[~current, "model"]))
    if stale:
        notes.append(
            f"{path} also holds runs of another configuration of {', '.join(stale)} (e.g. "
            "from an earlier glotbench or babel version); they stay in the store, and the "
            "analyses here use the current configuration only."
        )
    scores = scores[current].reset_index(drop=True)
    replicated = load_replicated(
        store=path,
        metric=STARTER_METRIC,
        models=sorted(configs),
        n_replicates=n_replicates,
        seed=seed,
        configs=configs,
    )
    if not isinstance(replicated, ReplicatedScores):  # a store with runs gives replicates
        raise GlotbenchError(f"{path} holds no per-example runs of {STARTER_METRIC}")
    table = components(replicated)
    draws = settings.draws(replicated)
    analysis = analyze(replicated, settings)
    ranked = ranked_comparisons(replicated, analysis)
    if ranked.comparison is None or ranked.ranks is None:
        raise GlotbenchError(f"{path}: the starter demo compares two or more models")
    return StarterDemo(
        store=path,
        run=run,
        scores=scores,
        variance=variance_components(table),
        aggregates=aggregate_scores(replicated, draws),
        comparison=ranked.comparison,
        ranks=ranked.ranks,
        notes=notes,
        replicated=replicated,
        settings=settings,
        analysis=analysis,
    )
