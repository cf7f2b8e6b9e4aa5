"""The harness importers of :mod:`glotbench.api`.

The results of lm-evaluation-harness, EuroEval, reuben and XTREME, into a store.

Imported into :mod:`glotbench.api`, the public facade; use them from there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from glotbench.importers.common import HarnessImportResult
from glotbench.importers.euroeval import import_euroeval as _import_euroeval
from glotbench.importers.lm_eval import import_lm_eval as _import_lm_eval
from glotbench.importers.reuben import import_reuben as _import_reuben
from glotbench.importers.xtreme import import_xtreme as _import_xtreme
from glotbench.ingest.tidy import open_store_for_import
from glotbench.store.layout import DEFAULT_STORE_PATH


def import_lm_eval(
    path: str | Path,
    *,
    store: str | Path = DEFAULT_STORE_PATH,
    lock_timeout: float | None = None,
    model: str | None = None,
    families: Sequence[str] | None = None,
    task_map: Sequence[str] | None = None,
    default_language: str | None = None,
    tasks: Sequence[str] | None = None,
    seed_from: str = "config",
    samples: bool = True,
    progress: Callable[[int, int], None] | None = None,
    task_map_file: str | Path | None = None,
    auto_language: bool = True,
) -> HarnessImportResult:
    """Import an lm-evaluation-harness output folder (results JSON + logged samples).

    Samples become runs with per-example statistics keyed by ``doc_id``; the
    results JSON becomes aggregate scores with their stderr (group rows with
    language ``all``). Re-importing the same folder is a no-op. See
    ``docs/importers/lm-eval.md``.

    Parameters
    ----------
    path : str or Path
        The ``--output_path`` folder of ``lm_eval`` (or one model's folder in
        it, or one ``results_<timestamp>.json``).
    store : str or Path, default ``glotbench.duckdb``
        The store to import into (created if absent).
    lock_timeout : float, optional
        As in :func:`open_store`.
    model : str, optional
        The model's name (default: from the results' ``model_args``).
    families : sequence of str, optional
        Task-name prefixes split as ``<family>_<language>``.
    task_map : sequence of str, optional
        ``TASK=LANG`` or ``TASK=NAME:LANG`` entries naming the task and
        language of one lm-eval task.
    default_language : str, optional
        The language of tasks whose name gives none.
    tasks : sequence of str, optional
        Import only these lm-eval tasks.
    seed_from : str, default ``"config"``
        Where a run's seed comes from: the results' config (``config``) or the
        file's order (``order``).
    samples : bool, default True
        Import the logged samples as per-example runs (else only the results'
        aggregate scores).
    progress : callable, optional
        Called with (files done, files in all).
    task_map_file : str or Path, optional
        A file of many ``task_map`` entries.
    auto_language : bool, default True
        Split task names ending in an ISO 639 code (``scala_da``).

    Returns
    -------
    HarnessImportResult
        The runs and scores added and skipped, the tasks and languages read,
        and notes (``.to_dict()``).

    Raises
    ------
    InputError
        No results file in ``path``, or a malformed record (the message names
        file, line and field); nothing is written then.

    Examples
    --------
    A results file of one task, without logged samples:

    >>> import json
    >>> from pathlib import Path
    >>> from glotbench import api
    >>> results = {"results": {"xnli_de": {"alias": "xnli_de", "acc,none": 0.41,
    ...                                    "acc_stderr,none": 0.011}},
    ...            "config": {"model": "hf", "model_args": "pretrained=gpt2"}}
    >>> Path("lm_eval_out/gpt2").mkdir(parents=True)
    >>> path = Path("lm_eval_out/gpt2/results_2026-01-01T00-00-00.json")
    >>> _ = path.write_text(json.dumps(results))
    >>> result = api.import_lm_eval("lm_eval_out", store="lm_eval.duckdb", samples=False)
    >>> result.scores_added
    1
    """
    with open_store_for_import(store, lock_timeout=lock_timeout) as s:
        return _import_lm_eval(
            s,
            path,
            model=model,
            families=families,
            task_map=task_map,
            default_language=default_language,
            tasks=tasks,
            seed_from=seed_from,  # type: ignore[arg-type]
            samples=samples,
            progress=progress,
            task_map_file=task_map_file,
            auto_language=auto_language,
        )


def import_euroeval(
    path: str | Path, *, store: str | Path = DEFAULT_STORE_PATH, lock_timeout: float | None = None
) -> HarnessImportResult:
    r"""Import a EuroEval / ScandEval results JSONL file (pre-v17 records and v17+ EEE records).

    Totals become scores on 0–1 with ``stderr`` = EuroEval's 1.96·SE / 1.96;
    every iteration becomes a replicate score. See
    ``docs/importers/euroeval.md``.

    Parameters
    ----------
    path : str or Path
        EuroEval's ``euroeval_benchmark_results.jsonl`` (one record per model
        and dataset).
    store : str or Path, default ``glotbench.duckdb``
        The store to import into (created if absent).
    lock_timeout : float, optional
        As in :func:`open_store`.

    Returns
    -------
    HarnessImportResult
        The scores added and skipped, the datasets and languages read, and
        notes (``.to_dict()``).

    Raises
    ------
    InputError
        A malformed record (the message names file, line and field); nothing
        is written then.

    See Also
    --------
    euroeval_rank : EuroEval's rank score of the imported iterations.

    Examples
    --------
    One record: a model's MCC and macro-F1 on SweReC over three iterations.

    >>> import json
    >>> from pathlib import Path
    >>> from glotbench import api
    >>> record = {"dataset": "swerec", "task": "sentiment-classification",
    ...           "dataset_languages": ["sv"], "model": "tiny-llama",
    ...           "results": {"raw": {"test": [{"mcc": m, "macro_f1": f} for m, f in
    ...                                        [(0.33, 0.47), (0.29, 0.52), (0.30, 0.50)]]},
    ...                       "total": {"test_mcc": 30.7, "test_mcc_se": 2.3,
    ...                                 "test_macro_f1": 49.7, "test_macro_f1_se": 2.9}},
    ...           "generative": True, "few_shot": True, "validation_split": False}
    >>> _ = Path("euroeval.jsonl").write_text(json.dumps(record) + "\n")
    >>> result = api.import_euroeval("euroeval.jsonl", store="euroeval.duckdb")
    >>> result.scores_added  # 2 totals and 3 iterations of each metric
    8
    """
    with open_store_for_import(store, lock_timeout=lock_timeout) as s:
        return _import_euroeval(s, path)


def import_reuben(
    path: str | Path,
    *,
    config: str | Path | None = None,
    store: str | Path = DEFAULT_STORE_PATH,
    lock_timeout: float | None = None,
    task: str = "reuben",
    metrics: Sequence[str] | None = None,
    percent: bool = False,
    allow_unknown_metrics: bool = False,
) -> HarnessImportResult:
    r"""Import a reuben summary or replication file with the columns its YAML config declares.

    Summary rows become scores with ``stderr`` = σ_w and σ_seed / σ_boot in
    their metadata, read back by :func:`load_replicated` as ready SDs
    (parametric scheme); replication rows become scores with ``seed`` and
    ``replicate``. See ``docs/importers/reuben.md``.

    Parameters
    ----------
    path : str or Path
        The reuben data file (CSV / TSV / JSONL).
    config : str or Path, optional
        reuben's YAML config naming the columns (default: reuben's defaults).
    store : str or Path, default ``glotbench.duckdb``
        The store to import into (created if absent).
    lock_timeout : float, optional
        As in :func:`open_store`.
    task : str, default ``"reuben"``
        glotbench's task for the file; reuben's task column becomes the
        language (the unit analyses average over).
    metrics : sequence of str, optional
        ``COLUMN=NAME`` entries mapping a score column to a glotbench metric,
        or ``COLUMN=NAME:LO:HI`` declaring the scale of a metric glotbench does
        not compute.
    percent : bool, default False
        The file gives 0–1 metrics in percent (divided by 100).
    allow_unknown_metrics : bool, default False
        Store columns that name no glotbench metric (finiteness checked only).

    Returns
    -------
    HarnessImportResult
        The scores added and skipped, and notes (``.to_dict()``).

    Raises
    ------
    InputError
        A missing declared column, a score outside its metric's scale, an
        unknown config key (the message names file, line and field).

    Examples
    --------
    A summary file with σ_seed and σ_boot per model and language:

    >>> from pathlib import Path
    >>> from glotbench import api
    >>> _ = Path("reuben.yaml").write_text(
    ...     "score_col: Mean\nseed_sd_col: SeedSD\nboot_sd_col: BootSD\n")
    >>> _ = Path("reuben.csv").write_text(
    ...     "Model,Task,Mean,SeedSD,BootSD\nxlmr,de,0.71,0.01,0.02\nxlmr,fr,0.74,0.01,0.02\n")
    >>> result = api.import_reuben("reuben.csv", config="reuben.yaml", task="xquad",
    ...                            metrics=["Mean=squad_f1"], store="reuben.duckdb")
    >>> result.scores_added
    2
    """
    with open_store_for_import(store, lock_timeout=lock_timeout) as s:
        return _import_reuben(
            s,
            path,
            config=config,
            task=task,
            metrics=metrics,
            percent=percent,
            allow_unknown_metrics=allow_unknown_metrics,
        )


def import_xtreme(
    predictions: str | Path,
    labels: str | Path,
    *,
    store: str | Path = DEFAULT_STORE_PATH,
    lock_timeout: float | None = None,
    model: str | None = None,
    tasks: Sequence[str] | None = None,
    seed: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> HarnessImportResult:
    r"""Score an XTREME / XTREME-R predictions folder against a labels folder, per example.

    The result's ``aggregates`` reproduce XTREME's averaging (unweighted over
    languages; QA as the mean of EM and F1). See ``docs/importers/xtreme.md``.

    Parameters
    ----------
    predictions : str or Path
        The predictions folder (``<task>/test-<lang>.tsv``, ...).
    labels : str or Path
        The labels folder, laid out as ``predictions``.
    store : str or Path, default ``glotbench.duckdb``
        The store to import into (created if absent).
    lock_timeout : float, optional
        As in :func:`open_store`.
    model : str, optional
        The model's name (default: the predictions folder's name).
    tasks : sequence of str, optional
        Import only these XTREME tasks.
    seed : int, optional
        The seed of the runs.
    progress : callable, optional
        Called with (files done, files in all).

    Returns
    -------
    HarnessImportResult
        The runs added and skipped, ``aggregates`` (XTREME's per-task means)
        and notes.

    Raises
    ------
    InputError
        A prediction file whose line count differs from its labels', or a
        malformed line (the message names file and line).

    Examples
    --------
    XNLI predictions of one model for German, three examples:

    >>> from pathlib import Path
    >>> from glotbench import api
    >>> for folder, labels in (("preds", "entailment\nneutral\nneutral\n"),
    ...                        ("gold", "entailment\nneutral\ncontradiction\n")):
    ...     Path(folder, "xnli").mkdir(parents=True)
    ...     _ = Path(folder, "xnli", "test-de.tsv").write_text(labels)
    >>> result = api.import_xtreme("preds", "gold", model="xlmr", store="xtreme.duckdb")
    >>> result.runs_added
    1
    """
    with open_store_for_import(store, lock_timeout=lock_timeout) as s:
        return _import_xtreme(
            s, predictions, labels, model=model, tasks=tasks, seed=seed, progress=progress
        )
