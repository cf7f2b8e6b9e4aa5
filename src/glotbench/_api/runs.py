"""The runner and reproduction functions of :mod:`glotbench.api`.

Running benchmark suites, reading what they kept, and the papers' reproductions.

Imported into :mod:`glotbench.api`, the public facade; use them from there.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from glotbench.analysis.dataset_scores import scores_by_dataset
from glotbench.analysis.sources.speed_store import store_speed_table
from glotbench.reproduce.base import PaperReproduction, Reproductions, summary_frame
from glotbench.runner import benchmark as _benchmark
from glotbench.store.layout import DEFAULT_STORE_PATH


def reproduce(
    papers: Sequence[str] | None = None,
    *,
    data_dir: str | Path | None = None,
    out: str | Path | None = None,
) -> Reproductions:
    """Recompute the papers' published tables from their published inputs.

    Parameters
    ----------
    papers : sequence of str, optional
        Names of :data:`glotbench.reproduce.PAPER_MODULES` (default: every
        available one).
    data_dir : str or Path, optional
        The folder of the published inputs (default ``$GLOTBENCH_DATA_DIR``,
        else ``../shared/data``); ScandEval's inputs ship with glotbench.
    out : str or Path, optional
        Also write the HTML page there (a folder gets ``index.html``).

    Returns
    -------
    Reproductions
        ``papers``: one :class:`~glotbench.reproduce.base.PaperReproduction`
        per paper, each table's cells with published and recomputed values;
        ``page``: the HTML file written, if any. See ``docs/reproductions.md``.

    Examples
    --------
    >>> from glotbench import api
    >>> result = api.reproduce(["scandeval"], data_dir=".")
    >>> summary = api.reproduction_summary(result.papers)
    >>> print(summary[["paper", "table", "reproduced", "differs"]].to_string(index=False))
        paper   table  reproduced  differs
    scandeval Table 2           1        0
    """
    from glotbench.report.reproduction import write_reproduction_page
    from glotbench.reproduce import reproduce as run_reproductions

    results = run_reproductions(papers, data_dir)
    page = write_reproduction_page(results, out) if out is not None else None
    return Reproductions(papers=results, page=None if page is None else str(page))


def reproduction_summary(papers: Sequence[PaperReproduction]) -> pd.DataFrame:
    """One row per table: counts by status and the largest difference.

    Parameters
    ----------
    papers : sequence of PaperReproduction
        The ``papers`` of :func:`reproduce`'s result.

    Returns
    -------
    pandas.DataFrame
        One row per paper and table: ``paper``, ``table``, counts per status
        (``reproduced``, ``differs``, ...) and the largest absolute difference.

    Examples
    --------
    >>> from glotbench import api
    >>> summary = api.reproduction_summary(api.reproduce(["scandeval"], data_dir=".").papers)
    >>> summary[["paper", "table"]].values.tolist()
    [['scandeval', 'Table 2']]
    """
    return summary_frame(papers)


def run_benchmark(
    suite: str | Path | None,
    *,
    store: str | Path = DEFAULT_STORE_PATH,
    data_dir: str | Path | None = None,
    models: list[str] | None = None,
    languages: list[str] | None = None,
    tasks: list[str] | None = None,
    datasets: list[str] | None = None,
    iterations: int | None = None,
    executor: str = "local",
    force: bool = False,
    num_cpus: int | None = None,
    ray_address: str | None = None,
    on_event: Any = None,
    split_sizes: dict[str, int] | str | None = None,
    train_sizes: list[int] | str | None = None,
    shards: str | Path | None = None,
    merge: bool = True,
    speed_seconds: float | None = None,
    speed: bool = True,
    scores: bool = True,
    model_args: list[str] | None = None,
    device: str | None = None,
    batch_size: int | None = None,
    limit: int | None = None,
    keep_outputs: bool | None = None,
    data: list[str] | None = None,
) -> Any:
    """Run (or resume) a benchmark suite — a built-in name or a YAML file — into ``store``.

    ``models`` are the suite's model names or models named as ``KIND:ID``
    (``hf:path``, ``openai:name``, ``majority:``; options from ``model_args``
    ``["key=value"]``, ``device``, ``batch_size``), which replace the suite's
    models; ``suite=None`` then runs the built-in ``euroeval-hub``. ``limit``
    keeps the first N test examples of every dataset (``docs/runner.md``,
    Models on the command line). ``keep_outputs`` stores every test example's
    prediction or generated text (None: generative models and free-text tasks);
    :func:`kept_examples` reads them. ``data`` (local files, with one task and
    one language) replaces the suite: no YAML at all.

    ``shards`` (a folder all workers can write to): each job's statistics are
    written as a Parquet shard and merged by this process; ``merge=False``
    leaves them for :func:`import_shards` (``docs/runner.md``, Several machines).

    ``split_sizes`` (``{"train": 128, "test": 256}`` or ``"train=128,test=256"``)
    replaces those split sizes of every dataset (a smaller run, e.g. for CI).
    ``train_sizes`` (``[64, 128]`` or ``"64,128"``) runs every model at these training
    sizes (learning curves; :func:`learning_curve`, docs/learning-curves.md).
    ``speed_seconds`` / ``speed`` set or turn off ScandEval's speed benchmark
    (one per model; ``docs/runner.md``, Inference speed).

    Parameters
    ----------
    suite : str or Path or None
        A built-in suite name (:func:`list_suites`), a suite YAML file, or
        None (``models`` on the command line, the built-in ``euroeval-hub``).
    store : str or Path, default ``glotbench.duckdb``
        The store the runs are written into; runs already there are skipped.
    data_dir : str or Path, optional
        The folder the suite's datasets are read from.
    models, languages, tasks, datasets : list of str, optional
        Restrict the suite (``models`` may also name models as ``KIND:ID``).
    iterations : int, optional
        Seeds × bootstrapped test sets per job (default: the suite's).
    executor : str, default ``"local"``
        ``local``, ``processes`` or ``ray``.
    num_cpus : int, optional
        Workers of the ``processes`` and ``ray`` executors.
    ray_address : str, optional
        The Ray cluster to join (default: a local one).
    force : bool, default False
        Run jobs again although the store holds them.
    on_event : callable, optional
        Called with each progress event.
    split_sizes, train_sizes, shards, merge, speed_seconds, speed
        As described above.
    scores : bool, default True
        Compute the ScandEval scores of the run into the summary.
    model_args, device, batch_size, limit, keep_outputs, data
        As described above.

    Returns
    -------
    RunSummary
        A :class:`~glotbench.runner.executors.RunSummary`: ``.completed``,
        ``.failures``, ``.to_dict()``, ``.to_frame()`` (ScandEval scores per
        model, dataset, language and metric), ``.by_dataset`` (a multilingual
        dataset's languages collapsed into their mean and range, see
        :func:`glotbench.analysis.dataset_scores.scores_by_dataset`) and
        ``.speed`` (:func:`speed_summary` of the suite's models).

    Examples
    --------
    A majority-class baseline on a local file of 60 labelled reviews
    (``da.jsonl``, records ``{"text": ..., "label": ...}``), two iterations:

    >>> from glotbench import api
    >>> summary = api.run_benchmark(
    ...     None, data=["da.jsonl"], tasks=["sentiment"], languages=["da"],
    ...     models=["majority:"], iterations=2, speed=False, store="run.duckdb",
    ... )
    >>> summary.completed, summary.failures
    (2, [])
    >>> print(summary.to_frame()[["model", "metric", "score", "n_examples"]].round(3)
    ...       .to_string(index=False))
       model   metric  score  n_examples
    majority f1_macro  0.375          36
    majority      mcc  0.000          36
    """
    summary = _benchmark.run_benchmark(
        suite,
        store=store,
        data_dir=data_dir,
        models=models,
        languages=languages,
        tasks=tasks,
        datasets=datasets,
        iterations=iterations,
        executor=executor,
        force=force,
        num_cpus=num_cpus,
        ray_address=ray_address,
        on_event=on_event,
        split_sizes=split_sizes,
        train_sizes=train_sizes,
        shards=shards,
        merge=merge,
        speed_seconds=speed_seconds,
        speed=speed,
        scores=scores,
        speed_of=store_speed_table,
        model_args=model_args,
        device=device,
        batch_size=batch_size,
        limit=limit,
        keep_outputs=keep_outputs,
        data=data,
    )
    if summary.scores is not None:
        summary.by_dataset = scores_by_dataset(summary.scores)
    return summary


def kept_examples(
    store: str | Path = DEFAULT_STORE_PATH,
    *,
    models: list[str],
    datasets: list[str] | None = None,
    languages: list[str] | None = None,
    seeds: list[int] | None = None,
    disagree: bool = False,
    all_wrong: bool = False,
    limit: int | None = None,
) -> Any:
    """Kept outputs of ``models`` side by side, example by example (``glotbench examples``).

    Parameters
    ----------
    store : str or Path, default ``glotbench.duckdb``
        A store whose runs kept their outputs (``run_benchmark(keep_outputs=True)``).
    models : list of str
        The models to list (two or more with ``disagree``).
    datasets, languages : list of str, optional
        Keep only these test sets.
    seeds : list of int, optional
        Keep only these seeds.
    disagree : bool, default False
        Only examples where the models' outputs differ.
    all_wrong : bool, default False
        Only examples where no model's output matches the reference.
    limit : int, optional
        At most this many rows.

    Returns
    -------
    ExamplesResult
        An :class:`~glotbench.analysis.examples.ExamplesResult`: ``.to_frame()``,
        ``.to_dict()``, ``.samples()`` (lm-eval-style sample records).

    Raises
    ------
    InputError
        No model named, fewer than two with ``disagree``, or no kept outputs.

    Examples
    --------
    >>> from glotbench import api
    >>> _ = api.run_benchmark(None, data=["da.jsonl"], tasks=["sentiment"], languages=["da"],
    ...                       models=["majority:"], iterations=1, speed=False,
    ...                       keep_outputs=True, store="kept.duckdb")
    >>> kept = api.kept_examples("kept.duckdb", models=["majority"], limit=2)
    >>> kept.to_frame()[["reference", "output:majority"]].values.tolist()
    [['negative', 'positive'], ['positive', 'positive']]
    >>> kept.total  # test examples before ``limit``
    36
    """
    from glotbench.analysis.examples import compare_outputs
    from glotbench.store.store import Store

    with Store.open(store, read_only=True) as handle:
        outputs = handle.outputs.read(
            models=models, datasets=datasets, languages=languages, seeds=seeds
        )
    return compare_outputs(outputs, models, disagree=disagree, all_wrong=all_wrong, limit=limit)


def model_kinds() -> list[dict[str, Any]]:
    """The model kinds ``models=['KIND:ID']`` (``glotbench run --model``) and suites accept.

    Returns
    -------
    list of dict
        One dict per kind: ``kind``, ``description``, ``requires`` (modules),
        ``extra`` (the ``pip install 'glotbench[EXTRA]'`` that installs them),
        ``available`` (installed here), ``id_option`` (the option ``ID`` sets)
        and ``generative``.

    Examples
    --------
    >>> from glotbench import api
    >>> kinds = {k["kind"]: k for k in api.model_kinds()}
    >>> kinds["vllm"]["extra"], kinds["majority"]["requires"]
    ('vllm', [])
    """
    from glotbench.runner.models.registry import kinds_table

    return kinds_table()


def dump_suite(path: str | Path, suite: str | Path | None = None, **selection: Any) -> Any:
    """Write the suite YAML of a run as :func:`run_benchmark` would select it.

    ``glotbench run FILE`` (or ``run_benchmark(FILE)``) then runs it again.

    Parameters
    ----------
    path : str or Path
        The YAML file to write.
    suite : str or Path, optional
        As in :func:`run_benchmark`.
    **selection
        :func:`run_benchmark`'s selection keywords (``models``,
        ``model_args``, ``tasks``, ``languages``, ``limit``, ``data``, ...).

    Returns
    -------
    tuple of (Path, list of str)
        The file written and notes on the selection.

    Examples
    --------
    >>> from glotbench import api
    >>> path, notes = api.dump_suite("run.yaml", data=["da.jsonl"], tasks=["sentiment"],
    ...                              languages=["da"], models=["majority:"])
    >>> path.name, "majority" in path.read_text()
    ('run.yaml', True)
    """
    return _benchmark.dump_suite(path, suite, **selection)


def benchmark_scores(
    store: str | Path = DEFAULT_STORE_PATH,
    *,
    models: list[str] | None = None,
    datasets: list[str] | None = None,
    metrics: list[str] | None = None,
) -> pd.DataFrame:
    """ScandEval scores (mean of bootstrapped-test scores over iterations ± 1.96·SD/√N).

    Parameters
    ----------
    store : str or Path, default ``glotbench.duckdb``
        The store the runs are in.
    models, datasets, metrics : list of str, optional
        Keep only these (default: all).

    Returns
    -------
    pandas.DataFrame
        One row per model, dataset, language and metric: ``score`` (the mean
        over iterations), its ``margin`` (1.96·SD/√N) and ``n_examples``.

    See Also
    --------
    run_benchmark : Whose summary holds the same table.

    Examples
    --------
    >>> from glotbench import api
    >>> _ = api.run_benchmark(None, data=["da.jsonl"], tasks=["sentiment"], languages=["da"],
    ...                       models=["majority:"], iterations=2, speed=False,
    ...                       store="scores-run.duckdb")
    >>> table = api.benchmark_scores("scores-run.duckdb", metrics=["mcc"])
    >>> table[["model", "metric", "score"]].values.tolist()
    [['majority', 'mcc', 0.0]]
    """
    return _benchmark.benchmark_scores(store, models=models, datasets=datasets, metrics=metrics)
