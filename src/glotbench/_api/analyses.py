"""The analysis functions of :mod:`glotbench.api`.

Variance components, aggregates, comparisons, ranks, speed and learning curves of a
store or a scores file.

Imported into :mod:`glotbench.api`, the public facade; use them from there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from glotbench.analysis.compare import Aggregates, Comparison, aggregate_scores, compare_models
from glotbench.analysis.draws import DrawSettings
from glotbench.analysis.headline import AnalysisSettings
from glotbench.analysis.headline import analyze as analyze_headline
from glotbench.analysis.ranks import DISTRIBUTION_FORMATS, Ranks, rank_models
from glotbench.analysis.replicates import ReplicatedScores
from glotbench.analysis.settings import DEFAULT_PAIRS, DEFAULT_TOP_K
from glotbench.analysis.sources.speed_store import store_speed_table
from glotbench.analysis.variance import (
    ComponentTable,
    VarianceComponents,
    components,
    variance_components,
)
from glotbench.errors import InputError
from glotbench.report.table_files import write_table
from glotbench.store import Store
from glotbench.store.layout import DEFAULT_STORE_PATH


def analyze_variance(source: ReplicatedScores | ComponentTable) -> VarianceComponents:
    """Variance components (σ_b, σ_seed, σ_boot, σ_w) per model and language.

    σ_b is the SD of a model's language means within a task, σ_seed and
    σ_boot the SDs over seeds and bootstrap replicates, σ_w the total
    replication SD (Sälevä, Ataman & Lignos 2025; ``docs/analysis.md``).

    Parameters
    ----------
    source : ReplicatedScores or ComponentTable
        Scores with replications, as :func:`load_replicated` returns them.

    Returns
    -------
    VarianceComponents
        ``per_unit`` (one row per model, task and language), ``per_model``
        (one row per model and task) and ``notes``.

    Examples
    --------
    >>> from glotbench import api
    >>> result = api.analyze_variance(api.load_replicated(input="scores.csv"))
    >>> table = result.per_model[["model", "sigma_b", "sigma_w_mean"]]
    >>> print(table.round(3).to_string(index=False))
      model  sigma_b  sigma_w_mean
    glot500    0.040         0.006
      mbert    0.046         0.009
       xlmr    0.034         0.004
    """
    table = source if isinstance(source, ComponentTable) else components(source)
    return variance_components(table)


def _draw_settings(
    source: ReplicatedScores | ComponentTable, settings: AnalysisSettings | DrawSettings | None
) -> tuple[DrawSettings, AnalysisSettings | None]:
    """The draw settings of ``settings`` for ``source`` (None: the defaults), and the request's."""
    if isinstance(settings, DrawSettings):
        return settings, None
    settings = settings or AnalysisSettings()
    return settings.draws(source), settings


def analyze_aggregate(
    source: ReplicatedScores | ComponentTable,
    settings: AnalysisSettings | DrawSettings | None = None,
) -> Aggregates:
    """Mean, geometric mean and median over languages with standard errors.

    Parameters
    ----------
    source : ReplicatedScores or ComponentTable
        Scores with replications, as :func:`load_replicated` returns them.
    settings : AnalysisSettings or DrawSettings, optional
        The request's :class:`AnalysisSettings` (default: its defaults, those
        of every command and page) or ready :class:`DrawSettings`.

    Returns
    -------
    Aggregates
        ``frame``: one row per model and aggregator with the score, its
        resampled and closed-form standard errors and interval; ``hierarchy``
        and ``notes``.

    Examples
    --------
    >>> from glotbench import api
    >>> result = api.analyze_aggregate(api.load_replicated(input="scores.csv"))
    >>> result
    Aggregates(models=3, languages=3, best 'glot500': mean 0.712 (SE 0.01916), notes=1)
    >>> means = result.frame.query("aggregator == 'mean'")
    >>> print(means[["model", "score", "se_resampled"]].round(3).to_string(index=False))
      model  score  se_resampled
    glot500  0.712         0.019
      mbert  0.631         0.022
       xlmr  0.695         0.016
    """
    draws, request = _draw_settings(source, settings)
    level = _level(None, request)
    result = aggregate_scores(source, draws, confidence_level=level)
    return result if request is None else replace(result, recorded=request.record(source))


def analyze_compare(
    source: ReplicatedScores | ComponentTable,
    settings: AnalysisSettings | DrawSettings | None = None,
    confidence_level: float | None = None,
    per_language: bool = False,
    pairs_out: str | Path | None = None,
    pairs: str = DEFAULT_PAIRS,
    top_k: int = DEFAULT_TOP_K,
    pair: Sequence[tuple[str, str]] = (),
) -> Comparison:
    """Pairwise differences with SDs over draws and effect sizes.

    Parameters
    ----------
    source : ReplicatedScores or ComponentTable
        Scores with replications, as :func:`load_replicated` returns them.
    settings : AnalysisSettings or DrawSettings, optional
        As in :func:`analyze_aggregate`.
    confidence_level : float, optional
        Level of the pairs' percentile intervals (default: the settings').
    per_language : bool, default False
        Keep the full per-language table (one row per pair and language) in
        the result; otherwise per-language comparisons are summarised (per
        language and per pair).
    pairs_out : str or Path, optional
        Write the per-language table to this Parquet file (CSV if the name
        ends in ``.csv``). It holds every pair (implies ``pairs="all"``).
    pairs : {"adjacent", "all"}, default "adjacent"
        ``"adjacent"``: the neighbours in each aggregate's ranking, every pair
        of its ``top_k`` best models and the pairs in ``pair`` — time and
        memory linear in models; ``"all"``: every one of the M(M − 1)/2 pairs.
        A pair's numbers are the same in both modes, float for float;
        ``Comparison.summary`` counts flagged pairs over every pair in both.
        ``per_language=True`` implies ``"all"``.
    top_k : int, default 10
        In ``"adjacent"`` mode, every pair of this many best models (by each
        aggregate) is computed; 0 for none.
    pair : sequence of (str, str), optional
        Pairs of model names to compute in any case (``("xlmr", "mbert")``).

    Returns
    -------
    Comparison
        ``aggregates``: one row per aggregator and pair (difference, SD,
        effect size, interval, share of draws in which ``model_a`` is
        better); ``language_summary``, ``pair_summary``, ``per_language``.

    Examples
    --------
    >>> from glotbench import api
    >>> result = api.analyze_compare(api.load_replicated(input="scores.csv"))
    >>> means = result.aggregates.query("aggregator == 'mean'")
    >>> print(means[["model_a", "model_b", "difference", "ci_low", "ci_high"]].round(3)
    ...       .to_string(index=False))
    model_a model_b  difference  ci_low  ci_high
    glot500   mbert       0.081   0.069    0.100
    glot500    xlmr       0.017   0.007    0.029
      mbert    xlmr      -0.064  -0.081   -0.047
    """
    draws, request = _draw_settings(source, settings)
    level = _level(confidence_level, request)
    result = compare_models(
        source,
        draws,
        confidence_level=level,
        per_language=per_language or pairs_out is not None,
        pairs=pairs,
        top_k=top_k,
        requested=tuple((str(a), str(b)) for a, b in pair),
    )
    if request is not None:
        result = replace(result, recorded=request.record(source) | {"confidence_level": level})
    if pairs_out is not None:
        write_table(result.per_language, pairs_out)
        if not per_language:
            result = replace(result, per_language=None)
    return result


def analyze_task_comparisons(
    source: ReplicatedScores,
    settings: AnalysisSettings | None = None,
    *,
    max_models: int | None = None,
) -> dict[str, Any]:
    """Per task, pairwise comparisons and rank distributions of the models that cover it.

    When models lack whole tasks, the overall view ranks only the models with
    every task (and compares nothing when fewer than two have them all); each
    task still ranks every model with a score on it. This compares those
    models on that task's cells alone, with the request's draws and aggregator
    ``mean`` — what the report and leaderboard show per task
    (:func:`glotbench.analysis.pair_view.task_comparisons`).

    Parameters
    ----------
    source : ReplicatedScores
        Scores with replications, as :func:`load_replicated` returns them.
    settings : AnalysisSettings, optional
        The request's settings (default: the defaults of every command).
    max_models : int, optional
        Compare the best ``max_models`` of each task only.

    Returns
    -------
    dict
        Task -> :class:`~glotbench.analysis.pair_view.RankedComparisons`
        (``models`` best first, ``comparison``, ``ranks``); tasks with fewer
        than two models are absent. :func:`task_comparisons_dict` gives it as JSON.

    Examples
    --------
    >>> from glotbench import api
    >>> scores = api.load_replicated(input="scores.csv")
    >>> comparisons = api.analyze_task_comparisons(scores, api.AnalysisSettings(n_draws=200))
    >>> comparisons["sentiment"].models
    ('glot500', 'xlmr', 'mbert')
    """
    from glotbench.analysis.pair_view import task_comparisons

    analysis = analyze_headline(source, settings or AnalysisSettings())
    return task_comparisons(source, analysis, max_models=max_models)


def task_comparisons_dict(comparisons: dict[str, Any]) -> dict[str, Any]:
    """:func:`analyze_task_comparisons`' result as plain data (the ``--json`` output).

    Parameters
    ----------
    comparisons : dict
        What :func:`analyze_task_comparisons` returns.

    Returns
    -------
    dict
        Task -> ``models``, ``comparison``, ``ranks``, ``confidence_level`` and
        ``left_out``, JSON-safe.

    Examples
    --------
    >>> from glotbench import api
    >>> scores = api.load_replicated(input="scores.csv")
    >>> plain = api.task_comparisons_dict(
    ...     api.analyze_task_comparisons(scores, api.AnalysisSettings(n_draws=200)))
    >>> sorted(plain["sentiment"])
    ['comparison', 'confidence_level', 'left_out', 'models', 'ranks']
    """
    return {
        task: {
            "models": list(view.models),
            "left_out": list(view.left_out),
            "confidence_level": view.confidence_level,
            "comparison": None if view.comparison is None else view.comparison.to_dict(),
            "ranks": None if view.ranks is None else view.ranks.to_dict(),
        }
        for task, view in comparisons.items()
    }


def _level(confidence_level: float | None, request: AnalysisSettings | None) -> float:
    if confidence_level is not None:
        return confidence_level
    return (request or AnalysisSettings()).confidence_level


def analyze_ranks(
    source: ReplicatedScores | ComponentTable,
    settings: AnalysisSettings | DrawSettings | None = None,
    confidence_level: float | None = None,
    *,
    rank_method: str = "2026-05-28",
    rank_bootstraps: int = 1000,
    distribution: str = "auto",
) -> Ranks:
    """Rank distributions, rank intervals and EuroEval rank scores with intervals.

    Parameters
    ----------
    source : ReplicatedScores or ComponentTable
        Scores with replications, as :func:`load_replicated` returns them.
    settings, confidence_level
        As in :func:`analyze_compare`.
    rank_method : str, default ``"2026-05-28"``
        EuroEval's current rank-score method or the superseded ``"2025"`` one
        (``docs/analysis.md``).
    rank_bootstraps : int, default 1000
        Bootstrap draws of the EuroEval rank score's interval.
    distribution : {"auto", "full", "window"}, default "auto"
        How the JSON form (``to_dict``) gives the rank distribution: ``"full"``
        every rank's share per model (M × M numbers), ``"window"`` each model's
        ranks with a non-zero share (``first_rank``, ``shares``; linear in models
        when rank intervals are narrow), ``"auto"`` full up to 50 models.
        ``Ranks.distribution`` (the DataFrame) is the full table in any case.

    Returns
    -------
    Ranks
        ``summary``: one row per aggregator and model (mean and modal rank,
        rank interval, EuroEval rank score and interval); ``distribution``:
        the probability of each rank.

    Examples
    --------
    >>> from glotbench import api
    >>> result = api.analyze_ranks(api.load_replicated(input="scores.csv"))
    >>> means = result.summary.query("aggregator == 'mean'")
    >>> print(means[["model", "mean_rank", "rank_best", "rank_worst"]].to_string(index=False))
      model  mean_rank  rank_best  rank_worst
    glot500        1.0          1           1
      mbert        3.0          3           3
       xlmr        2.0          2           2
    """
    if distribution not in DISTRIBUTION_FORMATS:
        raise InputError(
            f"distribution must be one of {', '.join(DISTRIBUTION_FORMATS)}, not {distribution!r}",
            field="distribution",
        )
    draws, request = _draw_settings(source, settings)
    level = _level(confidence_level, request)
    result = rank_models(
        source,
        draws,
        confidence_level=level,
        rank_method=rank_method,
        rank_bootstraps=rank_bootstraps,
    )
    result = replace(result, distribution_format=distribution)
    if request is not None:
        result = replace(result, recorded=request.record(source) | {"confidence_level": level})
    return result


def speed_summary(
    store: str | Path = DEFAULT_STORE_PATH, *, models: list[str] | None = None
) -> Any:
    """Inference speed per model: ScandEval's GPT-2 tokens per second, mean ± 1.96·SD/√n.

    From the runner's speed benchmark (``run_benchmark(speed=True)``) or
    imported EuroEval speed scores.

    Parameters
    ----------
    store : str or Path, default ``glotbench.duckdb``
        The store.
    models : list of str, optional
        Keep only these models.

    Returns
    -------
    SpeedTable
        A :class:`~glotbench.analysis.speed.SpeedTable`: ``.to_frame()`` has
        one row per model; ``notes`` say why a model has no speed.

    Examples
    --------
    >>> from glotbench import api
    >>> _ = api.import_scores("scores.csv", store="speed.duckdb")
    >>> api.speed_summary("speed.duckdb").to_frame().empty
    True
    """
    return store_speed_table(store, models=models)


def learning_curve(
    store: str | Path = DEFAULT_STORE_PATH,
    *,
    models: list[str] | None = None,
    datasets: list[str] | None = None,
    tasks: list[str] | None = None,
    languages: list[str] | None = None,
    metric: str | None = None,
    n_draws: int = 2000,
    seed: int = 0,
    alpha: float = 0.05,
    confidence_level: float = 0.95,
) -> Any:
    r"""Learning curves (ScandEval Appendix B) from the store.

    Score vs training size per model and test set, with intervals, and the
    size beyond which gains are no longer detectable. From runs of
    ``protocol.train_sizes`` / ``run_benchmark(train_sizes=...)``; see
    :mod:`glotbench.analysis.learning_curve` and ``docs/learning-curves.md``.

    Parameters
    ----------
    store : str or Path, default ``glotbench.duckdb``
        The store holding runs at several training sizes.
    models, datasets, tasks, languages : list of str, optional
        Keep only these.
    metric : str, optional
        The metric (required when the runs hold several).
    n_draws : int, default 2000
        Bootstrap draws of each point's interval.
    seed : int, default 0
        Seed of the draws.
    alpha : float, default 0.05
        Level of the test of a gain between neighbouring sizes.
    confidence_level : float, default 0.95
        Level of the intervals.

    Returns
    -------
    LearningCurves
        A :class:`~glotbench.analysis.learning_curve.LearningCurves`:
        ``.table`` (one row per model, test set and size), ``.saturation``,
        ``.to_dict()``, ``.plot(path)``.

    Raises
    ------
    InputError
        No runs at more than one training size, or several metrics and no
        ``metric``.

    Examples
    --------
    A data file with a training split of 40 and a test split of 60 reviews,
    and a majority-class baseline trained on 10 and 40 of them:

    >>> import json
    >>> from pathlib import Path
    >>> from glotbench import api
    >>> records = [{"text": f"review {i}", "label": "positive" if i % 3 else "negative",
    ...             "split": "train" if i < 40 else "test"} for i in range(100)]
    >>> _ = Path("curve.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    >>> _ = api.run_benchmark(None, data=["curve.jsonl"], tasks=["sentiment"], languages=["da"],
    ...                       models=["majority:"], iterations=2, speed=False,
    ...                       train_sizes=[10, 40], store="curve.duckdb")
    >>> curves = api.learning_curve("curve.duckdb", metric="mcc", n_draws=200)
    >>> curves.table[["train_size", "score"]].values.tolist()  # a majority class: MCC 0
    [[10.0, 0.0], [40.0, 0.0]]
    """
    from glotbench.analysis.sources.learning_curve_store import learning_curves_from_store

    with Store.open(store, read_only=True) as handle:
        return learning_curves_from_store(
            handle,
            models=models,
            datasets=datasets,
            tasks=tasks,
            languages=languages,
            metric=metric,
            n_draws=n_draws,
            seed=seed,
            alpha=alpha,
            confidence_level=confidence_level,
        )
