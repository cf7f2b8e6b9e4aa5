"""Analyses that read their inputs from files or a store, then call the analysis modules.

EuroEval rank scores, the evaluation-size analysis, transfer groups and
buckets; each function reads (:mod:`glotbench.analysis.sources.inputs`,
``*_store`` modules) and computes in one place, for :mod:`glotbench.api`.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from glotbench.analysis.datasize import (
    DEFAULT_SIZES,
    STRATEGIES,
    DataSizeResult,
    FloatArray,
    conllu_statistics,
    datasize_analysis,
    simulate_tagger_statistics,
)
from glotbench.analysis.euroeval_iterations import iterations_from_frame
from glotbench.analysis.euroeval_rank import EuroEvalRank
from glotbench.analysis.euroeval_rank import euroeval_rank as euroeval_rank_scores
from glotbench.analysis.sources.datasize_store import datasize_inputs_from_store
from glotbench.analysis.sources.inputs import filter_frame, read_attributes_file
from glotbench.analysis.sources.scopes import ScopedResults
from glotbench.analysis.transfer import TransferGroups, transfer_groups
from glotbench.errors import InputError
from glotbench.metrics.base import Metric
from glotbench.store.layout import DEFAULT_STORE_PATH
from glotbench.store.store import Store


def euroeval_rank(
    *,
    input: str | Path | None = None,
    store: str | Path | None = None,
    metrics: Sequence[str] | None = None,
    models: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
    method: str = "2026-05-28",
    n_bootstraps: int = 1000,
    seed: int = 0,
    confidence_level: float = 0.95,
) -> EuroEvalRank:
    r"""EuroEval's leaderboard rank score per dataset, task, language and overall.

    Reads iteration scores (rows with a ``replicate`` index; e.g. a store
    holding :func:`glotbench.api.import_euroeval` results) from a tidy file or
    the store's scores table. Lower is better: the best model of a dataset
    scores 1.

    Parameters
    ----------
    input : str or Path, optional
        A tidy scores file with ``dataset`` and ``replicate`` columns.
    store : str or Path, optional
        A store (give ``input`` or ``store``).
    metrics : sequence of str, optional
        Each dataset's primary metric: the first listed one it has (default:
        the metric EuroEval ranks its task on).
    models, tasks, languages : sequence of str, optional
        Keep only these.
    method : str, default ``"2026-05-28"``
        EuroEval's current method (bootstrap median and interval) or the
        superseded Welch-gated ``"2025"`` one.
    n_bootstraps : int, default 1000
        Bootstrap draws of the intervals.
    seed : int, default 0
        Seed of the draws.
    confidence_level : float, default 0.95
        Level of the intervals.

    Returns
    -------
    EuroEvalRank
        ``datasets``, ``tasks``, ``languages`` and ``overall`` (one row per
        model with ``score``, ``low``, ``high``).

    Raises
    ------
    InputError
        Neither ``input`` nor ``store``, no iteration scores, or a metric a
        dataset does not have.

    See Also
    --------
    glotbench.api.analyze_ranks : Rank distributions from replicated scores.

    Examples
    --------
    Two models, two datasets, three iterations each:

    >>> from pathlib import Path
    >>> from glotbench import api
    >>> rows = ["model,dataset,task,language,metric,replicate,score"]
    >>> for model, base in (("xlmr", 0.70), ("mbert", 0.62)):
    ...     for dataset, language in (("swerec", "sv"), ("angry-tweets", "da")):
    ...         rows += [f"{model},{dataset},sentiment-classification,{language},mcc,{r},"
    ...                  f"{base + 0.01 * r}" for r in range(3)]
    >>> _ = Path("iterations.csv").write_text("\n".join(rows) + "\n")
    >>> rank = api.euroeval_rank(input="iterations.csv", n_bootstraps=200)
    >>> print(rank.overall[["model", "score"]].round(2).to_string(index=False))
    model  score
    mbert   2.96
     xlmr   1.00
    """
    filters = {"model": models, "task": tasks, "language": languages}
    if input is not None:
        from glotbench.ingest.readers import read_tidy

        frame = read_tidy(input).frame
    else:
        with Store.open(store if store is not None else DEFAULT_STORE_PATH, read_only=True) as h:
            frame = h.scores.frame()
        if frame.empty:
            raise InputError("the store holds no scores; import EuroEval results first")
    frame = filter_frame(frame, filters).reset_index(drop=True)
    table = iterations_from_frame(frame, metrics)
    return euroeval_rank_scores(table, method, n_bootstraps, seed, confidence_level)


def analyze_datasize(
    *,
    store: str | Path | None = None,
    dataset: str | None = None,
    task: str | None = None,
    language: str | None = None,
    metric: str | None = None,
    models: Sequence[str] | None = None,
    gold: str | Path | None = None,
    predictions: Sequence[str | Path] = (),
    simulate_models: int = 0,
    simulate_seeds: int = 3,
    sizes: Sequence[int | None] = DEFAULT_SIZES,
    strategies: Sequence[str] = STRATEGIES,
    n_draws: int = 100,
    level: float = 0.9,
    seed: int = 0,
    aso: bool = True,
    aso_draws: int | None = 25,
    aso_bootstrap_iterations: int = 200,
) -> DataSizeResult | ScopedResults:
    r"""Evaluation-size analysis from one of three sources.

    How well do rankings on subsets of the test set agree (Kendall's τ) with
    the full-set ranking, per size and sampling strategy, and which size is
    enough (``docs/datasize.md``).

    Parameters
    ----------
    store : str or Path, optional
        The runs matching ``dataset``/``task``/``language``/``metric`` (any of
        them may be omitted: one matching test set is analysed, several each,
        as a :class:`~glotbench.analysis.sources.scopes.ScopedResults`). Sizes are in
        tokens when the metric has a ``tokens`` or ``words`` statistic or the
        runs store ``test_tokens`` metadata, else in examples; examples in the
        order of their stored ``source_position`` (else the stored order, with
        a note).
    dataset, task, language, metric : str, optional
        Select the store's test set(s); with ``gold``, ``metric`` is ``las``,
        ``uas`` or ``upos``.
    models : sequence of str, optional
        Keep only these models.
    gold : str or Path, optional
        A CoNLL-U gold file, with ``predictions`` or ``simulate_models``.
    predictions : sequence of str or Path, default ()
        CoNLL-U prediction files of ``gold`` (a ``-seedN`` suffix of a file
        name marks a seed of one model).
    simulate_models : int, default 0
        Simulated UPOS taggers on ``gold`` (error rates 2 % to
        2 % + 1 % × (models − 1)).
    simulate_seeds : int, default 3
        Seeds of each simulated tagger.
    sizes : sequence of int or None, default ``DEFAULT_SIZES``
        Subset sizes (None: the full set).
    strategies : sequence of str, default ``STRATEGIES``
        ``SEQ`` (leading stretch), ``RAND`` (random examples), ``RAND_SEQ``
        (a random contiguous stretch).
    n_draws : int, default 100
        Subsets per size and strategy.
    level : float, default 0.9
        The τ a recommended size must reach in 95 % of draws.
    seed : int, default 0
        Seed of the subsets.
    aso : bool, default True
        Also run ASO between models per size.
    aso_draws : int or None, default 25
        Subsets per size for ASO (None: all).
    aso_bootstrap_iterations : int, default 200
        ASO's bootstrap iterations.

    Returns
    -------
    DataSizeResult or ScopedResults
        ``curves`` (τ per strategy and size), ``recommendation`` (the smallest
        size that suffices per strategy), notes; one per test set when several
        match.

    Raises
    ------
    InputError
        No source or two, no matching runs, or fewer than two models.

    Examples
    --------
    Three simulated taggers, two seeds each, on 40 sentences of six words:

    >>> from pathlib import Path
    >>> from glotbench import api
    >>> words = [("the", "DET"), ("cat", "NOUN"), ("sat", "VERB"), ("on", "ADP"),
    ...          ("a", "DET"), ("mat", "NOUN")]
    >>> sentence = "\n".join(
    ...     f"{i}\t{w}\t{w}\t{t}\t_\t_\t{i - 1}\t{'dep' if i > 1 else 'root'}\t_\t_"
    ...     for i, (w, t) in enumerate(words, 1))
    >>> _ = Path("gold.conllu").write_text("\n\n".join([sentence] * 40) + "\n\n")
    >>> result = api.analyze_datasize(gold="gold.conllu", simulate_models=3, simulate_seeds=2,
    ...                               sizes=[60, 120, None], n_draws=20, aso=False)
    >>> result.models, result.n_tokens
    (('tagger00', 'tagger01', 'tagger02'), 240.0)
    >>> print(result.recommendation.query("unit == 'model'").to_string(index=False))
    strategy  unit recommended_size  full_set_needed
         SEQ model             None             True
        RAND model              120            False
    RAND_SEQ model             None             True
    """
    analyse = functools.partial(  # the analysis' settings, whatever the source
        datasize_analysis,
        sizes=sizes,
        strategies=strategies,
        n_draws=n_draws,
        level=level,
        seed=seed,
        aso=aso,
        aso_draws=aso_draws,
        aso_bootstrap_iterations=aso_bootstrap_iterations,
    )
    if gold is not None:
        stats, labels, tokens, bound = _gold_statistics(
            gold, predictions, metric, simulate_models, simulate_seeds, seed
        )
        return analyse(stats, bound, models=labels, tokens=tokens, order="file", notes=())
    if store is not None:
        return _datasize_from_store(
            analyse, store, dataset=dataset, task=task, language=language, metric=metric,
            models=models,
        )  # fmt: skip
    raise InputError(
        "no source given: pass store=PATH (dataset, task, language and metric select its "
        "test sets) or gold=FILE"
    )


def _gold_statistics(
    gold: str | Path,
    predictions: Sequence[str | Path],
    metric: str | None,
    simulate_models: int,
    simulate_seeds: int,
    seed: int,
) -> tuple[FloatArray, list[str], FloatArray, Metric]:
    """Per-example statistics of simulated taggers (``simulate_models``) or of CoNLL-U
    ``predictions`` on ``gold``: (statistics, model labels, tokens, bound metric)."""
    if simulate_models:
        rates = [0.02 + 0.01 * i for i in range(simulate_models)]
        return simulate_tagger_statistics(gold, rates, simulate_seeds, seed=seed)
    if not predictions:
        raise InputError("gold needs prediction files (predictions=FILES) or simulate_models=N")
    return conllu_statistics(gold, predictions, metric or "las")


def _datasize_from_store(
    analyse: Callable[..., DataSizeResult],
    store: str | Path,
    *,
    dataset: str | None,
    task: str | None,
    language: str | None,
    metric: str | None,
    models: Sequence[str] | None,
) -> DataSizeResult | ScopedResults:
    """``analyse`` each test set of ``store`` that the selection matches (one: its result)."""
    from glotbench.analysis.sources.scopes import scoped, store_scopes

    with Store.open(store, read_only=True) as handle:
        scopes, scope_notes = store_scopes(
            handle, dataset=dataset, task=task, language=language, metric=metric, models=models
        )
        loaded = {
            scope: datasize_inputs_from_store(
                handle, scope.dataset, scope.task, scope.language, scope.metric, models=models
            )
            for scope in scopes
        }

    def one(scope: Any) -> DataSizeResult:
        inputs = loaded[scope]
        return analyse(
            inputs.stats,
            inputs.metric,
            models=inputs.models,
            tokens=inputs.tokens,
            order=inputs.order,
            notes=inputs.notes,
        )

    return scoped(scopes, scope_notes, one)  # type: ignore[no-any-return]


def analyze_transfer(
    input: str | Path | None = None,
    *,
    example: bool = False,
    store: str | Path | None = None,
    metrics: Mapping[str, str] | None = None,
    observations: str = "model",
    min_size: int = 2,
) -> TransferGroups:
    """Benchmark language groups by ScandEval's mean F-statistic (Nielsen 2023, §3.3).

    Languages whose models transfer to each other's test sets form a group
    worth benchmarking together; see
    :func:`glotbench.analysis.transfer.transfer_groups` and ``docs/transfer.md``.

    Parameters
    ----------
    input : str or Path, optional
        A tidy CSV / JSONL / Parquet file with ``model_language``, ``language``
        (or ``dataset_language``), ``score`` and optionally ``model`` and
        ``dataset``.
    example : bool, default False
        Use the paper's Appendix A table
        (:func:`glotbench.data.scandeval_transfer_scores`).
    store : str or Path, optional
        The zero-shot runs of a store (the ``scandi-transfer`` suite; see
        :func:`glotbench.analysis.sources.transfer_store.transfer_scores_from_store`).
    metrics : mapping of str to str, optional
        Task -> metric of the store's runs (default: the task's primary metric).
    observations : str, default ``"model"``
        What the F-test's observations are: ``model`` or ``dataset``.
    min_size : int, default 2
        The smallest group.

    Returns
    -------
    TransferGroups
        ``groups`` (one row per candidate group with its mean F-statistic,
        best first), ``best`` and notes.

    Raises
    ------
    InputError
        No source or two, or a file without the required columns.

    Examples
    --------
    >>> from glotbench import api
    >>> groups = api.analyze_transfer(example=True)
    >>> groups.groups["group"].head(3).tolist()
    ['da,no,sv', 'da,fo,no,sv', 'fo,is']
    """
    from glotbench.analysis.sources.transfer_store import transfer_scores_from_store
    from glotbench.data import scandeval_transfer_scores
    from glotbench.ingest.readers import TidyTable, read_tidy

    if sum([example, input is not None, store is not None]) != 1:
        raise InputError("give one of an input file, a store or example=True (the ScandEval table)")
    if store is not None:
        with Store.open(store, read_only=True) as handle:
            scores = transfer_scores_from_store(handle, metrics=metrics)
        result = transfer_groups(
            TidyTable.from_frame(scores.frame, f"store {store}"),
            observations=observations,  # type: ignore[arg-type]
            min_size=min_size,
        )
        return dataclasses.replace(
            result, notes=(*scores.notes, *result.notes), scores=scores.frame
        )
    table = (
        TidyTable.from_frame(scandeval_transfer_scores(), "ScandEval Appendix A")
        if example
        else read_tidy(input)  # type: ignore[arg-type]
    )
    return transfer_groups(
        table,
        observations=observations,  # type: ignore[arg-type]
        min_size=min_size,
    )


def analyze_buckets(
    *,
    store: str | Path,
    attributes: str | Path | pd.DataFrame | None = None,
    task: str | None = None,
    language: str | None = None,
    metric: str | None = None,
    dataset: str | None = None,
    models: Sequence[str] | None = None,
    columns: Sequence[str] | None = None,
    n_buckets: int = 4,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> Any:
    """Bucket analysis of stored runs on one dataset (see :mod:`glotbench.analysis.buckets`).

    Scores per bucket of an example attribute (sentence length, OOV rate,
    label, or the columns of ``attributes``), with bootstrap intervals.

    Parameters
    ----------
    store : str or Path
        The store whose runs are analysed.
    attributes : str or Path or pandas.DataFrame, optional
        Per-example attributes (:func:`glotbench.api.read_attributes_file`);
        their columns are added to (and replace) the stored attributes of the
        same name. Without them, the attributes the runner stored.
    task, language, metric, dataset : str, optional
        Filter the store's test sets; any may be omitted: one matching test
        set is analysed, several each (a
        :class:`~glotbench.analysis.sources.scopes.ScopedResults`).
    models : sequence of str, optional
        Keep only these models.
    columns : sequence of str, optional
        Analyse only these attributes.
    n_buckets : int, default 4
        Quantile buckets of a numeric attribute.
    n_resamples : int, default 1000
        Bootstrap draws per bucket.
    confidence_level : float, default 0.95
        Level of the intervals.
    seed : int, default 0
        Seed of the draws.

    Returns
    -------
    BucketAnalysis or ScopedResults
        ``.to_frame()``: one row per attribute, bucket and model with
        ``n_examples``, ``score``, ``ci_low``, ``ci_high``.

    Raises
    ------
    InputError
        No matching runs, or an attributes file without ``example_id``.

    Examples
    --------
    >>> from glotbench import api
    >>> _ = api.run_benchmark(None, data=["da.jsonl"], tasks=["sentiment"], languages=["da"],
    ...                       models=["majority:"], iterations=1, speed=False,
    ...                       store="buckets.duckdb")
    >>> result = api.analyze_buckets(store="buckets.duckdb", metric="f1_macro", n_resamples=200)
    >>> print(result.to_frame()[["attribute", "bucket", "n_examples"]].to_string(index=False))
          attribute   bucket  n_examples
              label positive          24
              label negative          12
           oov_rate      0.5          36
    sentence_length        2          36
    """
    from glotbench.analysis.sources.scopes import scoped, store_scopes

    if attributes is None:
        table = None
    elif isinstance(attributes, pd.DataFrame):
        table = attributes
    else:
        table = read_attributes_file(attributes)
    with Store.open(store, read_only=True) as handle:
        scopes, notes = store_scopes(
            handle, dataset=dataset, task=task, language=language, metric=metric, models=models
        )
        results = {
            scope: _buckets_of(
                handle,
                scope,
                table,
                models,
                columns,
                n_buckets,
                n_resamples,
                confidence_level,
                seed,
            )  # fmt: skip
            for scope in scopes
        }
    return scoped(scopes, notes, results.__getitem__)


def _buckets_of(
    handle: Store,
    scope: Any,
    table: pd.DataFrame | None,
    models: Sequence[str] | None,
    columns: Sequence[str] | None,
    n_buckets: int,
    n_resamples: int,
    confidence_level: float,
    seed: int,
) -> Any:
    """The bucket analysis of one stored test set (:func:`analyze_buckets`)."""
    from glotbench.analysis.buckets import analyze_buckets as bucket_analysis

    dataset = scope.dataset
    matrix = handle.stats.matrix(dataset, scope.task, scope.language, scope.metric, models=models)
    stored, unit_table = handle.attributes.read(dataset)
    unit_stats = handle.attributes.unit_stats(matrix.run_ids)
    if table is None:
        if stored.empty and unit_table.empty:
            raise InputError(
                f"the store has no attributes for dataset {dataset!r} (runs imported from "
                "elsewhere, or written by an older glotbench); pass attributes=FILE",
                field="attributes",
            )
        table = stored
    elif not stored.empty:
        table = stored.drop(columns=[c for c in table.columns if c in stored]).join(
            table, how="outer"
        )
    bound = matrix.get_metric()
    has_units = not unit_table.empty and not unit_stats.empty
    return bucket_analysis(
        matrix.stats,
        bound,
        table,
        unit_attributes=unit_table if has_units else None,
        unit_stats=unit_stats if has_units else None,
        run_ids=list(matrix.run_ids),
        systems=list(dict.fromkeys(matrix.models)),
        system_of_run=matrix.models,
        example_ids=list(matrix.example_ids),
        columns=columns,
        n_buckets=n_buckets,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        seed=seed,
    )
