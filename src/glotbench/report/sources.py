"""What the leaderboard and the report are built from: replicated scores, metadata, provenance.

:func:`leaderboard_source` reads the embedded XTREME-R baselines or a store
(its runs bootstrapped per example, else its scores table) into a
:class:`LeaderboardSource`; the renderers (:mod:`glotbench.report.sites`)
take it as it is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from glotbench.analysis.replicates import ReplicatedScores, replicates_from_frame
from glotbench.analysis.settings import DEFAULT_SETTINGS, AnalysisSettings
from glotbench.analysis.sources.inputs import filter_frame
from glotbench.analysis.sources.store_selection import (
    replicates_from_store_selection,
    with_task_aliases,
)
from glotbench.data import XTREME_R_CAVEATS, xtreme_r_baselines
from glotbench.errors import InputError
from glotbench.store.store import Store


def store_metadata(store: str | Path, models: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Model metadata recorded with the runs of ``models`` in ``store``."""
    metadata: dict[str, dict[str, Any]] = {}
    with Store.open(store, read_only=True) as handle:
        runs = handle.runs.frame(models=list(models))
        for model, values in zip(runs["model"], runs["model_metadata"], strict=True):
            merge_metadata(metadata, str(model), values)
    return metadata


@dataclass(frozen=True)
class LeaderboardSource:
    """What the leaderboard and the report are built from: scores, metadata and provenance.

    Attributes
    ----------
    replicated : ReplicatedScores
        The scores every view is computed from.
    metadata : dict of str to dict
        Model -> metadata fields (size, licence, ...).
    title : str
        The page's default title.
    notes : tuple of str
        How the scores were selected.
    speed : SpeedTable or None
        Inference speed of the models, when the store has it.
    """

    replicated: ReplicatedScores
    metadata: dict[str, dict[str, Any]]
    title: str
    notes: tuple[str, ...]
    #: inference speed per model (ScandEval's benchmark), when the store has it
    speed: Any = None


#: per-run bookkeeping the runner stores in ``model_metadata``: not a property
#: of the model, so not a leaderboard column or filter
RUN_BOOKKEEPING = frozenset(
    {
        "kind", "options", "iteration", "trains", "bootstrap_train", "train_examples",
        "dataset_sha256", "dataset_sizes", "fit_seconds", "predict_seconds", "speed",
        "test_tokens", "deterministic", "predictions_of_iteration", "factory_seed", "target",
        "sampling_seed", "sample_agreement", "unparsed_rate", "oom_events",
        "primary_metric", "source_metric", "target_language", "trained_on",
    }
)  # fmt: skip


def merge_metadata(target: dict[str, dict[str, Any]], model: str, values: Any) -> None:
    """Model metadata from a run: scalar values, without the runner's per-run bookkeeping."""
    if isinstance(values, dict):
        for key, value in values.items():
            if str(key) in RUN_BOOKKEEPING or isinstance(value, dict | list):
                continue
            target.setdefault(model, {}).setdefault(str(key), value)


def read_model_metadata(path: str | Path) -> dict[str, dict[str, Any]]:
    r"""Model metadata from a CSV/JSONL/Parquet file with a ``model`` column (one row per model).

    Parameters
    ----------
    path : str or Path
        The file; every column but ``model`` is a metadata field.

    Returns
    -------
    dict of str to dict
        Model -> {field: value}; empty cells are left out.

    Raises
    ------
    InputError
        No ``model`` column, or a model given twice (the message names file
        and line).

    Examples
    --------
    >>> from pathlib import Path
    >>> from glotbench import api
    >>> _ = Path("models.csv").write_text("model,params\nxlmr,270M\nmbert,178M\n")
    >>> api.read_model_metadata("models.csv")
    {'xlmr': {'params': '270M'}, 'mbert': {'params': '178M'}}
    """
    from glotbench.ingest.readers import read_tidy

    frame = read_tidy(path).frame
    if "model" not in frame.columns:
        raise InputError("the metadata file needs a 'model' column", path=str(path), field="model")
    out: dict[str, dict[str, Any]] = {}
    for row in frame.to_dict(orient="records"):
        model = str(row.pop("model"))
        out[model] = {k: (None if pd.isna(v) else v) for k, v in row.items()}
    return out


def leaderboard_source(
    *,
    store: str | Path | None = None,
    demo: bool = False,
    metric: str | Sequence[str] | None = None,
    models: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
    metadata_file: str | Path | None = None,
    n_replicates: int = DEFAULT_SETTINGS.n_replicates,
    seed: int = DEFAULT_SETTINGS.seed,
    settings: AnalysisSettings | None = None,
) -> LeaderboardSource:
    """Replicated scores and model metadata for the leaderboard / report.

    Parameters
    ----------
    store : str or Path, optional
        A store: its runs (per-example statistics, bootstrapped with
        ``n_replicates`` paired replicates per run, one metric per task) or,
        if it holds no runs, its scores table.
    demo : bool, default False
        The embedded XTREME-R baselines instead of a store.
    metric : str or sequence of str, optional
        ``METRIC`` and/or ``TASK=METRIC`` (None: each task's declared primary
        metric, else an error listing the choices;
        :func:`~glotbench.analysis.selection.choose_metrics`).
    models, languages : sequence of str, optional
        Keep only these.
    tasks : sequence of str, optional
        Keep only these; every name of a task matches
        (:mod:`glotbench.metrics.task_names`: ``panx`` finds ``wikiann-ner``).
    metadata_file : str or Path, optional
        Adds or overrides model metadata (:func:`read_model_metadata`).
    n_replicates : int, default 1000
        Bootstrap replicates per run.
    seed : int, default 0
        Seed of the replicates.
    settings : AnalysisSettings, optional
        The request's settings; when given they set ``metric``,
        ``n_replicates`` and ``seed``, as the analyses read them.

    Returns
    -------
    LeaderboardSource
        ``replicated`` scores, model ``metadata``, ``title``, ``notes`` and
        ``speed``.

    Raises
    ------
    InputError
        Neither ``store`` nor ``demo`` given, or a metric choice that is
        ambiguous.
    StoreError
        No store at ``store``.

    See Also
    --------
    write_leaderboard_site, write_report : What it feeds.

    Examples
    --------
    >>> from glotbench import api
    >>> source = api.leaderboard_source(demo=True)
    >>> len(source.replicated.models), source.title
    (6, 'XTREME-R baselines (Ruder et al. 2021)')
    """
    if settings is not None:
        metric, n_replicates, seed = settings.metric_choice, settings.n_replicates, settings.seed
    if demo:
        source = _demo_source({"model": models, "task": tasks, "language": languages})
    elif store is not None:
        source = _store_source(store, metric, models, tasks, languages, n_replicates, seed)
    else:
        raise InputError("no source given: pass store=PATH or demo=True")
    if metadata_file is not None:
        for model, values in read_model_metadata(metadata_file).items():
            source.metadata.setdefault(model, {}).update(values)
    return source


def _demo_source(filters: dict[str, Sequence[str] | None]) -> LeaderboardSource:
    """The embedded XTREME-R baselines (rows kept by ``filters``) with their metadata."""
    from glotbench.report.leaderboard import XTREME_R_METADATA

    frame = filter_frame(xtreme_r_baselines(), filters).reset_index(drop=True)
    notes = [
        "published per-language test scores: one score per model and language, so intervals "
        "and ranks reflect the choice of languages only",
        *XTREME_R_CAVEATS,
    ]
    return LeaderboardSource(
        replicates_from_frame(frame),
        {k: dict(v) for k, v in XTREME_R_METADATA.items()},
        "XTREME-R baselines (Ruder et al. 2021)",
        tuple(notes),
        None,
    )


def _store_source(
    store: str | Path,
    metric: str | Sequence[str] | None,
    models: Sequence[str] | None,
    tasks: Sequence[str] | None,
    languages: Sequence[str] | None,
    n_replicates: int,
    seed: int,
) -> LeaderboardSource:
    """A store's selected runs (bootstrapped) or scores, their models' metadata, its title,
    the selection's notes and the store's inference speed."""
    from glotbench.analysis.sources.speed_store import speed_table
    from glotbench.report.titles import store_title

    metadata: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    # the store's names of each task (--task panx finds wikiann-ner, and back)
    stored_tasks = with_task_aliases(tasks)
    with Store.open(store, read_only=True) as handle:
        title = store_title(
            handle,
            f"glotbench leaderboard: {Path(store).name}",
            models=models,
            tasks=stored_tasks,
            languages=languages,
        )
        if handle.runs.frame(models=models, tasks=stored_tasks, languages=languages).empty and (
            handle.scores.frame(models=models, tasks=stored_tasks, languages=languages).empty
        ):
            raise InputError(f"the store {store} holds no runs or scores to show")
        selected = replicates_from_store_selection(
            handle,
            metric,
            models=models,
            tasks=tasks,
            languages=languages,
            n_replicates=n_replicates,
            seed=seed,
        )
        # selection notes go with the leaderboard's notes, not into every view's notes
        notes += selected.notes
        replicated = dataclasses.replace(selected, notes=())
        kept = sorted({str(t) for t, _ in selected.task_metrics}) or None
        for model in selected.no_uncertainty:  # marked on the page, not silently exact
            metadata.setdefault(model, {})["uncertainty"] = (
                "none known (a published score without SE or replicates)"
            )
        if selected.source == "examples":
            runs = handle.runs.frame(models=models, tasks=stored_tasks, languages=languages)
            for model, values in zip(runs["model"], runs["model_metadata"], strict=True):
                merge_metadata(metadata, str(model), values)
            notes.append(
                f"per-example statistics bootstrapped with {n_replicates} paired replicates per run"
            )
        else:
            scores = handle.scores.frame(
                models=models, tasks=with_task_aliases(kept), languages=languages
            )
            for model, values in zip(scores["model"], scores["metadata"], strict=True):
                merge_metadata(metadata, str(model), values)
        speed = speed_table(handle, models=models) or None
    return LeaderboardSource(replicated, metadata, title, tuple(notes), speed)
