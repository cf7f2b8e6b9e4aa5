"""Analyses that read their inputs from files or a store, then call the analysis modules.

EuroEval rank scores, the evaluation-size analysis, transfer groups and
buckets; each function reads (:mod:`glotbench.analysis.sources.inputs`,
``*_store`` modules) and computes in one place, for :mod:`glotbench.api`.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from glotbench.analysis.datasize import (
    DEFAULT_SIZES,
    STRATEGIES,
    DataSizeResult,
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
    """EuroEval's leaderboard rank score per dataset, task, language and overall.

    Reads iteration scores (rows with a ``replicate`` index; e.g. a store
    holding ``glotbench import euroeval`` results) from a tidy file or the
    store's scores table. ``metrics``: each dataset's primary metric, the first
    listed one it has. ``method``: ``2026-05-28`` (EuroEval's current method,
    bootstrap median and interval) or ``2025`` (superseded Welch-gated method).
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
    """Evaluation-size analysis from one of three sources.

    * ``gold`` + ``predictions``: CoNLL-U prediction files (``metric`` las, uas
      or upos; a ``-seedN`` suffix of a file name marks a seed of one model);
    * ``gold`` + ``simulate_models``: simulated UPOS taggers (error rates 2 %
      to 2 % + 1 % × (models − 1), ``simulate_seeds`` seeds each) on the gold file;
    * ``store``: the runs matching ``dataset``/``task``/``language``/``metric``
      (any of them may be omitted: one matching test set is analysed, several
      each, as a :class:`~glotbench.analysis.sources.scopes.ScopedResults`; see
      :mod:`glotbench.analysis.sources.scopes`); sizes in tokens when the metric has
      a ``tokens`` or ``words`` statistic or the runs store ``test_tokens``
      metadata, as ``glotbench run`` does for
      token tasks such as NER; else in examples), examples in the order of
      their stored ``source_position`` (else the stored order, with a note:
      :func:`glotbench.analysis.sources.datasize_store.datasize_inputs_from_store`).
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
    tokens = None
    order, notes = "file", tuple[str, ...]()
    if gold is not None and simulate_models:
        rates = [0.02 + 0.01 * i for i in range(simulate_models)]
        stats, labels, tokens, bound = simulate_tagger_statistics(
            gold, rates, simulate_seeds, seed=seed
        )
    elif gold is not None:
        if not predictions:
            raise InputError("give --pred files (or --simulate-models) with --gold")
        stats, labels, tokens, bound = conllu_statistics(gold, predictions, metric or "las")
    elif store is not None:
        from glotbench.analysis.sources.scopes import scoped, store_scopes

        with Store.open(store, read_only=True) as handle:
            scopes, scope_notes = store_scopes(
                handle, dataset=dataset, task=task, language=language, metric=metric,
                models=models,
            )  # fmt: skip
            loaded = {
                scope: datasize_inputs_from_store(
                    handle,
                    scope.dataset,
                    scope.task,
                    scope.language,
                    scope.metric,
                    models=models,
                )  # fmt: skip
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
    else:
        raise InputError("give --store (with --dataset/--task/--language/--metric) or --gold")
    return analyse(stats, bound, models=labels, tokens=tokens, order=order, notes=notes)


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

    ``input``: a tidy CSV / JSONL / Parquet file with ``model_language``,
    ``language`` (or ``dataset_language``), ``score`` and optionally ``model``
    and ``dataset``; ``example=True`` uses the paper's Appendix A table
    (:func:`glotbench.data.scandeval_transfer_scores`); ``store``: the
    zero-shot runs of a store (``glotbench run scandi-transfer``; ``metrics``
    maps a task to its metric, default the task's primary metric; see
    :func:`glotbench.analysis.sources.transfer_store.transfer_scores_from_store`).
    See :func:`glotbench.analysis.transfer.transfer_groups`.
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

    ``dataset``, ``task``, ``language`` and ``metric`` filter the store's test
    sets; any may be omitted: one matching test set is analysed, several each
    (a :class:`~glotbench.analysis.sources.scopes.ScopedResults`;
    :mod:`glotbench.analysis.sources.scopes`). Without ``attributes`` the built-in
    attributes the runner stored are used (docs/buckets.md); with them, the
    file's columns are added to (and replace) the stored ones of the same name.
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
                "elsewhere, or written by an older glotbench); pass --attributes FILE",
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
