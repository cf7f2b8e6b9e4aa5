"""What the analyses read: tidy files or a store, filtered to models, tasks and languages.

:func:`load_replicated` (replicated scores or ready SDs), :func:`load_lmm_frame`
(a tidy table for a mixed model) and :func:`read_attributes_file` (per-example
attributes for buckets). Problems are :class:`~glotbench.errors.InputError`
naming the file, line and field where there is one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from glotbench.analysis.replicates import ReplicatedScores
from glotbench.analysis.selection import MetricChoice, replicates_from_table, select_score_rows
from glotbench.analysis.sources.store_selection import replicates_from_store_selection
from glotbench.analysis.variance import ComponentTable, components_from_summary
from glotbench.errors import InputError
from glotbench.store.layout import DEFAULT_STORE_PATH
from glotbench.store.store import Store

#: columns of a file that holds ready SDs (one row per model and language), not scores
SUMMARY_COLUMNS = ("sigma_seed", "sigma_boot", "sigma_w")


def filter_frame(frame: pd.DataFrame, filters: dict[str, Sequence[str] | None]) -> pd.DataFrame:
    """The rows whose ``column`` is one of the wanted values, for each filter given.

    A filter on a missing column, a wanted value the column does not hold (a
    typo would otherwise drop a model silently), or filters that leave no row,
    are an :class:`InputError` that lists the values there are.
    """
    out = frame
    for column, wanted in filters.items():
        if wanted:
            if column not in out.columns:
                raise InputError(
                    f"cannot filter on {column!r}: the input has no such column", field=column
                )
            _check_names(column, wanted, set(frame[column].astype(str)))
            out = out[out[column].astype(str).isin([str(w) for w in wanted])]
    if out.empty:
        raise _no_rows(filters)
    return out


def _check_names(column: str, wanted: Sequence[str], have: set[str]) -> None:
    """An InputError for wanted names the input does not hold, listing those it has."""
    unknown = sorted({str(w) for w in wanted} - have)
    if unknown:
        raise InputError(
            f"unknown {column} name(s) {', '.join(map(repr, unknown))}; the input has: "
            f"{', '.join(sorted(have))}",
            field=column,
        )


def _no_rows(filters: Mapping[str, Sequence[str] | None]) -> InputError:
    described = ", ".join(f"{k}={list(v)}" for k, v in filters.items() if v)
    return InputError(f"no rows match the filters ({described})")


def _fast_csv(
    path: Path, choice: MetricChoice, filters: dict[str, Sequence[str] | None]
) -> ReplicatedScores | None:
    """A plain scores CSV read column-wise in chunks (:mod:`.csv_replicates`), or None:
    other files and per-task metrics take the per-record path. A problem in a plain
    file is raised with the per-record path's message (file, line, field).

    With filters, the whole file is read and then filtered
    (:func:`filter_replicated`). That file being valid, the per-record path
    (check every record's shape, filter, check the kept records' values) gives
    the same scores; when the whole file is not valid, the per-record path
    reads it (an error in a record the filters drop is not reported there).
    """
    from glotbench.ingest.readers import csv_header, detect_format

    if choice.per_task or not path.is_file():
        return None
    try:
        kind, gz = detect_format(path)
        if kind != "csv":
            return None
        names = csv_header(path, gz)
    except (InputError, UnicodeDecodeError):
        return None
    filtered = {column: wanted for column, wanted in filters.items() if wanted}
    if any(column not in names for column in filtered):
        return None  # the per-record path names the missing column
    from glotbench.analysis.sources.csv_replicates import replicates_from_csv

    if not filtered:
        return replicates_from_csv(path, gz, names)
    try:
        whole = replicates_from_csv(path, gz, names)
    except InputError:
        return None
    return None if whole is None else filter_replicated(whole, filtered)


def filter_replicated(
    scores: ReplicatedScores, filters: Mapping[str, Sequence[str] | None]
) -> ReplicatedScores:
    """:func:`filter_frame` on the rows behind ``scores`` (a whole file's), as scores.

    The same errors (an unknown name lists the names there are; no row left);
    the models and units that keep a score, in their order; seed positions
    trimmed to the most seeds a kept cell has (each cell's seeds are its first
    positions). Filters on ``model``, ``task`` and ``language`` only; ``scores``
    as read from a file (no per-seed point estimates).
    """
    if scores.point is not None:
        raise ValueError("filter_replicated filters scores read from a file, not drawn ones")
    have = {
        "model": list(scores.models),
        "task": [u.task for u in scores.units],
        "language": [u.language for u in scores.units],
    }
    model_ok = np.ones(len(scores.models), dtype=bool)
    unit_ok = np.ones(len(scores.units), dtype=bool)
    for column, wanted in filters.items():
        if not wanted:
            continue
        _check_names(column, wanted, set(have[column]))
        keep = np.isin(np.array(have[column], dtype=object), [str(w) for w in wanted])
        if column == "model":
            model_ok &= keep
        else:
            unit_ok &= keep
    values = scores.values[np.flatnonzero(model_ok)][:, np.flatnonzero(unit_ok)]
    present = ~np.isnan(values).all(axis=(2, 3))  # (models, units) cells with a score
    if not present.any():
        raise _no_rows(filters)
    models = np.flatnonzero(model_ok)[present.any(axis=1)]
    units = np.flatnonzero(unit_ok)[present.any(axis=0)]
    values = scores.values[models][:, units]
    n_seeds = int((~np.isnan(values).all(axis=3)).sum(axis=2).max())
    return dataclasses.replace(
        scores,
        models=tuple(scores.models[m] for m in models),
        units=tuple(scores.units[u] for u in units),
        values=np.ascontiguousarray(values[:, :, :n_seeds]),
    )


def load_replicated(
    *,
    input: str | Path | None = None,
    store: str | Path | None = None,
    metric: str | Sequence[str] | None = None,
    models: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
    n_replicates: int = 1000,
    seed: int = 0,
    configs: Mapping[str, str] | None = None,
) -> ReplicatedScores | ComponentTable:
    """The replicated scores an analysis works on, from a file or a store.

    Give exactly one of ``input`` and ``store``.

    Parameters
    ----------
    input : str or Path, optional
        A tidy CSV / JSONL / Parquet file: either scores with optional
        ``seed`` and ``replicate`` columns, or ready SDs (``sigma_seed`` /
        ``sigma_boot`` or ``sigma_w``, one row per model and language).
    store : str or Path, optional
        A store: its per-example statistics (bootstrapped here, paired across
        models, ``n_replicates`` per seed) or, when it holds no such runs, its
        scores table.
    metric : str or sequence of str, optional
        ``"m"`` (every task on ``m``), ``"task=m"`` entries (per task), or None:
        each task on its primary metric (:mod:`glotbench.analysis.selection`).
    models, tasks, languages : sequence of str, optional
        Keep only these.
    n_replicates : int, default 1000
        Bootstrap replicates per run and seed of a store's statistics.
    seed : int, default 0
        Seed of those replicates.
    configs : mapping of str to str, optional
        Model -> config hash: keep only that configuration of the models it
        names.

    Returns
    -------
    ReplicatedScores or ComponentTable
        Scores per model, task, language, seed and replicate, or ready SDs.

    Raises
    ------
    InputError
        Neither or both of ``input`` and ``store``, a malformed file (the
        message names file, line and field), no scores, or several metrics of
        a task and no ``metric``.

    See Also
    --------
    glotbench.api.analyze_aggregate, glotbench.api.analyze_compare,
    glotbench.api.analyze_ranks, glotbench.api.analyze_variance : What it feeds.

    Examples
    --------
    ``scores.csv``: accuracy of 3 models × 3 languages × 3 seeds (the file of
    :func:`glotbench.api.import_scores`'s example).

    >>> from glotbench import api
    >>> scores = api.load_replicated(input="scores.csv")
    >>> scores.models, scores.values.shape
    (('glot500', 'mbert', 'xlmr'), (3, 3, 3, 1))
    """
    choice = MetricChoice.parse(metric)
    filters = {"model": models, "task": tasks, "language": languages}
    if input is not None:
        return _replicated_from_file(input, choice, filters)
    if store is None:
        raise InputError("no scores given: pass input=FILE (a scores file) or store=PATH")
    with Store.open(store, read_only=True) as handle:
        summary = summary_components_from_store(
            handle, choice, models=models, tasks=tasks, languages=languages
        )
        if summary is not None:
            return summary
        return replicates_from_store_selection(
            handle,
            choice,
            models=models,
            tasks=tasks,
            languages=languages,
            n_replicates=n_replicates,
            seed=seed,
            configs=configs,
        )


def _replicated_from_file(
    input: str | Path, choice: MetricChoice, filters: dict[str, Sequence[str] | None]
) -> ReplicatedScores | ComponentTable:
    """The scores of a tidy file (a plain CSV read fast): its SDs when it has summary columns,
    else its replicates."""
    from glotbench.ingest.readers import read_tidy

    fast = _fast_csv(Path(input), choice, filters)
    if fast is not None:
        return fast
    table = read_tidy(input)
    frame = filter_frame(table.frame, filters)
    if set(SUMMARY_COLUMNS) & set(frame.columns):
        selected, _ = select_score_rows(frame, choice)
        positions = selected.index.to_numpy()

        def error(message: str, position: int | None, field: str | None) -> InputError:
            return table.error(
                message, None if position is None else int(positions[position]), field
            )

        return components_from_summary(selected.reset_index(drop=True), error=error)
    return replicates_from_table(frame, choice, error=table.error)


def summary_components_from_store(
    store: Store,
    choice: MetricChoice,
    *,
    models: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
) -> ComponentTable | None:
    """Ready SDs stored with scores (``glotbench import reuben``), or None when there are none.

    A stored score whose ``metadata`` holds ``sigma_seed``/``sigma_boot`` (or
    ``sigma_w``) and that has no seed or replicate index is one model-language
    cell of a summary file; when every selected score is such a cell, the
    analyses get a :class:`ComponentTable` (as from a summary file with
    :data:`SUMMARY_COLUMNS`), so the parametric scheme draws N(mean, σ_w²) as
    reuben does. Otherwise None: the runs or the scores table are analysed as before.
    """
    scores = store.scores.frame(models=models, tasks=tasks, languages=languages)
    if scores.empty or "metadata" not in scores.columns:
        return None
    marked = np.array(
        [
            isinstance(meta, Mapping) and any(k in meta for k in SUMMARY_COLUMNS)
            for meta in scores["metadata"]
        ],
        dtype=bool,
    )
    if not marked.any():
        return None
    selected, _ = select_score_rows(scores, choice)
    position = selected.index.to_numpy()
    if not (
        marked[position].all()
        and selected["seed"].isna().all()
        and selected["replicate"].isna().all()
    ):
        return None
    frame = selected[["model", "task", "language", "score"]].reset_index(drop=True).copy()
    for column in SUMMARY_COLUMNS:
        values = [meta.get(column, np.nan) for meta in selected["metadata"]]
        if not np.isnan(np.asarray(values, dtype=float)).all():
            frame[column] = np.asarray(values, dtype=float)
    if {"sigma_seed", "sigma_boot"} & set(frame.columns) and "sigma_w" in frame.columns:
        frame = frame.drop(columns=["sigma_w"])
    return components_from_summary(frame)


def load_lmm_frame(
    input: str | Path | None = None,
    store: str | Path | None = None,
    *,
    metric: str | None = None,
    models: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
) -> tuple[pd.DataFrame, Callable[..., InputError]]:
    """A tidy table for a mixed model: a scores file, or the store's run scores or scores table.

    From a store: one score per stored run of ``metric``, computed from its
    per-example statistics (the metric's score of the summed statistics; see
    :func:`glotbench.analysis.sources.run_scores.run_scores_from_store`) — the
    runner's stores hold only these; when no run matches, the store's scores
    table.

    Parameters
    ----------
    input : str or Path, optional
        A tidy scores file (CSV / JSONL / Parquet).
    store : str or Path, optional
        A store (give ``input`` or ``store``).
    metric : str, optional
        The metric (required when the data hold several).
    models, tasks, languages : sequence of str, optional
        Keep only these.

    Returns
    -------
    frame : pandas.DataFrame
        One row per score with ``model``, ``task``, ``language``, ``metric``,
        ``seed`` and ``score``.
    error : callable
        An error factory ``(message, position, field)`` that locates problems
        in the file (line / row) when the data came from a file; pass it to
        :func:`glotbench.api.analyze_mixed_model`.

    Raises
    ------
    InputError
        Neither ``input`` nor ``store``, several metrics and no ``metric``, or
        no scores left.

    Examples
    --------
    >>> from glotbench import api
    >>> frame, error = api.load_lmm_frame(input="scores.csv")
    >>> len(frame), sorted(frame["model"].unique())
    (27, ['glot500', 'mbert', 'xlmr'])
    """
    if input is not None:
        return _lmm_frame_from_file(input, metric, models, tasks, languages)
    return _lmm_frame_from_store(store, metric, models, tasks, languages)


def _lmm_frame_from_file(
    input: str | Path,
    metric: str | None,
    models: Sequence[str] | None,
    tasks: Sequence[str] | None,
    languages: Sequence[str] | None,
) -> tuple[pd.DataFrame, Callable[..., InputError]]:
    """A tidy scores file's rows of the filters, and errors located in the file."""
    from glotbench.ingest.readers import read_tidy

    table = read_tidy(input)
    frame = table.frame
    if models or tasks or languages or metric:
        mask = pd.Series(True, index=frame.index)
        for col, wanted in (
            ("model", models),
            ("task", tasks),
            ("language", languages),
            ("metric", [metric] if metric else None),
        ):
            if wanted and col in frame.columns:
                mask &= frame[col].astype(str).isin([str(w) for w in wanted])
        positions = mask.to_numpy().nonzero()[0]
        frame = frame.iloc[positions].reset_index(drop=True)
        base = table

        def located(message: str, position: int | None = None, field: str | None = None):
            pos = None if position is None else int(positions[position])
            return base.error(message, pos, field)

        return frame, located
    return frame, table.error


def _lmm_frame_from_store(
    store: str | Path | None,
    metric: str | None,
    models: Sequence[str] | None,
    tasks: Sequence[str] | None,
    languages: Sequence[str] | None,
) -> tuple[pd.DataFrame, Callable[..., InputError]]:
    """The store's run scores of ``metric`` (else its scores table), and errors naming it."""
    from glotbench.analysis.sources.run_scores import run_scores_from_store
    from glotbench.ingest.readers import TidyTable

    path = store if store is not None else DEFAULT_STORE_PATH
    with Store.open(path, read_only=True) as handle:
        run_scores = run_scores_from_store(
            handle,
            metric=metric,
            models=list(models) if models else None,
            tasks=list(tasks) if tasks else None,
            languages=list(languages) if languages else None,
        )
        if not run_scores.empty:
            return run_scores, TidyTable.from_frame(run_scores, f"store {path} (runs)").error
        scores = handle.scores.frame(
            models=list(models) if models else None,
            tasks=list(tasks) if tasks else None,
            languages=list(languages) if languages else None,
            metrics=[metric] if metric else None,
        )
    if scores.empty:
        raise InputError(
            f"the store {path} holds no runs or scores matching the filters; run a suite "
            "(glotbench run), import results (glotbench import) or pass input=FILE"
        )
    if metric is None and "metric" in scores.columns and scores["metric"].nunique() > 1:
        raise InputError(
            "the store holds scores of several metrics "
            f"({', '.join(sorted(map(str, scores['metric'].unique())))}); "
            "choose one with metric=METRIC",
            field="metric",
        )
    if "metadata" in scores.columns:
        scores = scores.drop(columns=["metadata"])
    return scores.reset_index(drop=True), TidyTable.from_frame(scores, f"store {path}").error


def read_attributes_file(path: str | Path) -> pd.DataFrame:
    r"""Per-example attributes (CSV, TSV, JSONL or Parquet with an ``example_id`` column).

    Parameters
    ----------
    path : str or Path
        The attributes file: an ``example_id`` column and one column per
        attribute (numbers are bucketed by quantile, text by value).

    Returns
    -------
    pandas.DataFrame
        One row per example: ``example_id`` and the attribute columns.

    Raises
    ------
    InputError
        The file cannot be read or has no ``example_id`` column.

    See Also
    --------
    glotbench.api.analyze_buckets : Scores per bucket of these attributes.

    Examples
    --------
    >>> from pathlib import Path
    >>> from glotbench import api
    >>> _ = Path("attributes.csv").write_text("example_id,length\n0,12\n1,40\n2,7\n")
    >>> api.read_attributes_file("attributes.csv")["length"].tolist()
    [12, 40, 7]
    """
    from glotbench.analysis.buckets import example_attributes

    file = Path(path)
    if not file.is_file():
        raise InputError(f"attributes file {file} not found")
    suffix = file.suffix.lower()
    try:
        if suffix in (".jsonl", ".ndjson"):
            frame = pd.read_json(file, lines=True, dtype=False)
        elif suffix == ".parquet":
            frame = pd.read_parquet(file)
        else:
            frame = pd.read_csv(
                file, sep="\t" if suffix == ".tsv" else ",", dtype={"example_id": str}
            )
    except ValueError as exc:
        raise InputError(f"cannot read the attributes: {exc}", path=str(file)) from None
    try:
        return example_attributes(frame)
    except InputError as exc:
        raise InputError(exc.reason, path=str(file), field=exc.field) from None
