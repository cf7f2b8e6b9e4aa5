"""Significance tests and bootstrap intervals of systems given as files or stored runs.

Reads line-aligned prediction / reference / score files
(:mod:`glotbench.ingest.line_files`) or two stored runs, and calls
:mod:`glotbench.resample`, :mod:`glotbench.analysis.aso` and
:mod:`glotbench.analysis.significance`.
"""

from __future__ import annotations

from collections.abc import Sequence, Sized
from pathlib import Path

import numpy as np

from glotbench.analysis.aso import ASOResult, MultiASOResult, aso, multi_aso
from glotbench.analysis.significance import (
    McNemarResult,
    PairedTestResult,
    mcnemar_test,
    paired_bootstrap_test,
    permutation_test,
)
from glotbench.errors import InputError
from glotbench.ingest.line_files import read_examples_file, read_scores_file
from glotbench.metrics import get_metric
from glotbench.metrics.base import MeanMetric, Metric
from glotbench.resample import BootstrapResult, bootstrap_metric
from glotbench.store.store import Store


def bootstrap_files(
    metric: str,
    predictions: Path,
    references: Path,
    *,
    n_resamples: int = 10_000,
    confidence_level: float = 0.95,
    seed: int = 0,
    method: str = "percentile",
) -> BootstrapResult:
    r"""Bootstrap a metric over a predictions file against a references file (line-aligned).

    Parameters
    ----------
    metric : str
        A registry name (:func:`glotbench.api.list_metrics`).
    predictions, references : Path
        Files of one example per line (:func:`read_examples_file`).
    n_resamples : int, default 10000
        Bootstrap replicates.
    confidence_level : float, default 0.95
        Level of the interval.
    seed : int, default 0
        Seed of the weights.
    method : {"percentile", "bca"}, default ``"percentile"``
        Interval method.

    Returns
    -------
    BootstrapResult
        As :func:`glotbench.api.bootstrap` returns it.

    Raises
    ------
    InputError
        The files differ in line count, or a line the metric cannot score
        (the message names file and line).

    Examples
    --------
    >>> from pathlib import Path
    >>> from glotbench import api
    >>> _ = Path("pred.txt").write_text("pos\nneg\npos\npos\nneg\npos\n")
    >>> _ = Path("gold.txt").write_text("pos\nneg\nneg\npos\nneg\npos\n")
    >>> result = api.bootstrap_files("accuracy", Path("pred.txt"), Path("gold.txt"),
    ...                              n_resamples=1000)
    >>> round(result.score, 3), result.confidence_interval.low
    (0.833, 0.5)
    """
    bound = get_metric(metric)
    preds = [
        bound.parse_line(x) if isinstance(x, str) else x for x in read_examples_file(predictions)
    ]
    refs = [
        bound.parse_line(x) if isinstance(x, str) else x for x in read_examples_file(references)
    ]
    if len(preds) != len(refs):
        raise InputError(
            f"{len(preds)} predictions in {predictions} but {len(refs)} references in "
            f"{references}; the files must have one example per line, in the same order"
        )
    return bootstrap_metric(
        bound,
        preds,
        refs,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        seed=seed,
        method=method,  # type: ignore[arg-type]
    )


def aso_files(
    paths: Sequence[str | Path],
    *,
    confidence_level: float = 0.95,
    num_bootstrap_iterations: int = 1000,
    seed: int | None = 0,
    num_comparisons: int = 1,
    use_bonferroni: bool = True,
) -> ASOResult | MultiASOResult:
    r"""ASO of two score files (A against B), or ``multi_aso`` of three or more.

    Each file holds one score per line (e.g. one per seed); systems are named
    by the file stems.

    Parameters
    ----------
    paths : sequence of str or Path
        Two or more score files (:func:`read_scores_file`).
    confidence_level : float, default 0.95
        Level of the test.
    num_bootstrap_iterations : int, default 1000
        Bootstrap iterations of σ̂.
    seed : int or None, default 0
        Seed of the bootstrap.
    num_comparisons : int, default 1
        Bonferroni correction of a two-file comparison.
    use_bonferroni : bool, default True
        Correct three or more files for their m(m − 1)/2 comparisons.

    Returns
    -------
    ASOResult or MultiASOResult
        ``eps_min`` of A against B, or of every ordered pair.

    Raises
    ------
    InputError
        Fewer than two files, or a line that is not a number.

    Examples
    --------
    >>> from pathlib import Path
    >>> from glotbench import api
    >>> _ = Path("seeds_a.txt").write_text("0.71\n0.73\n0.70\n0.72\n0.74\n")
    >>> _ = Path("seeds_b.txt").write_text("0.66\n0.69\n0.65\n0.68\n0.67\n")
    >>> api.aso_files(["seeds_a.txt", "seeds_b.txt"]).eps_min  # A almost surely better
    0.0
    """
    if len(paths) < 2:
        raise InputError("give at least two score files (A and B)")
    samples = [read_scores_file(p) for p in paths]
    if len(paths) == 2:
        return aso(
            samples[0],
            samples[1],
            confidence_level=confidence_level,
            num_bootstrap_iterations=num_bootstrap_iterations,
            seed=seed,
            num_comparisons=num_comparisons,
        )
    return multi_aso(
        samples,
        confidence_level=confidence_level,
        use_bonferroni=use_bonferroni,
        num_bootstrap_iterations=num_bootstrap_iterations,
        seed=seed,
        names=[Path(p).stem for p in paths],
    )


def _same_length(a: Sized, b: Sized, path_a: Path, path_b: Path) -> None:
    if len(a) != len(b):
        raise InputError(
            f"{len(a)} lines in {path_a} but {len(b)} in {path_b}; the files must have one "
            "example per line, in the same order",
            path=str(path_b),
        )


def paired_statistics(
    file_a: str | Path,
    file_b: str | Path,
    *,
    references: str | Path | None = None,
    metric: str | None = None,
) -> tuple[np.ndarray, np.ndarray, Metric]:
    r"""Per-example statistics of two systems from files.

    Parameters
    ----------
    file_a, file_b : str or Path
        With ``references``: line-aligned predictions, scored by ``metric``
        (fitted on both systems' predictions, so label sets agree). Without:
        one per-example score per line, and the metric is their mean.
    references : str or Path, optional
        The references, one per line.
    metric : str, optional
        The metric (required with ``references``).

    Returns
    -------
    stats_a, stats_b : numpy.ndarray
        (n × k) statistics of A and B.
    metric : Metric
        The fitted metric that scores them.

    Raises
    ------
    InputError
        Files of different lengths, ``references`` without ``metric``, or a
        metric that is not a mean of per-example values without ``references``.

    See Also
    --------
    significance_test : Test the two systems' statistics.

    Examples
    --------
    >>> from pathlib import Path
    >>> from glotbench import api
    >>> _ = Path("pred.txt").write_text("pos\nneg\npos\npos\nneg\npos\n")
    >>> _ = Path("pred_b.txt").write_text("pos\npos\npos\npos\nneg\nneg\n")
    >>> _ = Path("gold.txt").write_text("pos\nneg\nneg\npos\nneg\npos\n")
    >>> a, b, metric = api.paired_statistics("pred.txt", "pred_b.txt",
    ...                                      references="gold.txt", metric="accuracy")
    >>> a.shape, float(metric.score(a.sum(axis=0))), float(metric.score(b.sum(axis=0)))
    ((6, 2), 0.8333333333333334, 0.5)
    """
    path_a, path_b = Path(file_a), Path(file_b)
    if references is None:
        if metric is not None and not get_metric(metric).is_mean:
            raise InputError(
                f"{metric} is not a mean of per-example values; pass references=FILE "
                "with prediction files to test it"
            )
        a, b = read_scores_file(path_a), read_scores_file(path_b)
        _same_length(a, b, path_a, path_b)
        mean = get_metric(metric or "accuracy")
        return MeanMetric.stats_from_values(a), MeanMetric.stats_from_values(b), mean
    if metric is None:
        raise InputError("scoring prediction files against references needs metric=METRIC")
    bound = get_metric(metric)
    parse = [
        [bound.parse_line(x) if isinstance(x, str) else x for x in read_examples_file(Path(p))]
        for p in (path_a, path_b, Path(references))
    ]
    preds_a, preds_b, refs = parse
    _same_length(preds_a, refs, path_a, Path(references))
    _same_length(preds_b, refs, path_b, Path(references))
    if not refs:
        raise InputError("the references file is empty", path=str(references))
    fitted = bound.fit(list(preds_a) + list(preds_b), list(refs) + list(refs))
    return fitted.stats(preds_a, refs), fitted.stats(preds_b, refs), fitted


def store_pair_statistics(
    store: str | Path,
    *,
    dataset: str,
    task: str,
    language: str,
    metric: str,
    models: Sequence[str],
    seed: int | None = None,
) -> tuple[np.ndarray, np.ndarray, Metric]:
    r"""Per-example statistics of two models' runs from the store (one run each).

    Parameters
    ----------
    store : str or Path
        The store.
    dataset, task, language, metric : str
        The test set and metric.
    models : sequence of str
        Exactly two models (A and B).
    seed : int, optional
        The runs' seed (required when a model has several runs).

    Returns
    -------
    stats_a, stats_b : numpy.ndarray
        (n × k) statistics of A and B on the examples both have.
    metric : Metric
        The metric, fitted to the runs' label set.

    Raises
    ------
    InputError
        Not two models, no run of a model, or several runs and no ``seed``.

    Examples
    --------
    A majority-class baseline and a TF-IDF naive Bayes model, trained on 40
    reviews and tested on 60:

    >>> import json
    >>> from pathlib import Path
    >>> from glotbench import api
    >>> records = [{"text": ("good " if i % 3 else "bad ") + f"review {i}",
    ...             "label": "positive" if i % 3 else "negative",
    ...             "split": "train" if i < 40 else "test"} for i in range(100)]
    >>> _ = Path("pair.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    >>> _ = api.run_benchmark(None, data=["pair.jsonl"], tasks=["sentiment"], languages=["da"],
    ...                       models=["majority:", "tfidf-nb:"], iterations=1, speed=False,
    ...                       store="pair.duckdb")
    >>> a, b, metric = api.store_pair_statistics(
    ...     "pair.duckdb", dataset="pair", task="sentiment", language="da", metric="f1_macro",
    ...     models=["tfidf-nb", "majority"])
    >>> a.shape, float(metric.score(a.sum(axis=0))), round(float(metric.score(b.sum(axis=0))), 3)
    ((60, 6), 1.0, 0.4)
    """
    if len(models) != 2:
        raise InputError("name exactly two models (A and B)")
    with Store.open(store, read_only=True) as handle:
        matrix = handle.stats.matrix(
            dataset,
            task,
            language,
            metric,
            models=list(models),
            seeds=None if seed is None else [seed],
        )
    if len(matrix.run_ids) != 2:
        raise InputError(
            f"{len(matrix.run_ids)} runs match (models {list(models)}); choose one run per "
            "model with seed=N",
            field="seed",
        )
    return matrix.stats[0], matrix.stats[1], matrix.get_metric()


def significance_test(
    test: str,
    stats_a: np.ndarray,
    stats_b: np.ndarray,
    metric: Metric,
    *,
    n_resamples: int = 10_000,
    confidence_level: float = 0.95,
    seed: int = 0,
    names: tuple[str, str] = ("A", "B"),
) -> PairedTestResult:
    """Run the paired ``bootstrap`` or ``permutation`` test on per-example statistics.

    Parameters
    ----------
    test : {"bootstrap", "permutation"}
        :func:`paired_bootstrap_test` or :func:`permutation_test`.
    stats_a, stats_b : numpy.ndarray
        (n × k) statistics of the same examples.
    metric : Metric
        The metric that scores them.
    n_resamples : int, default 10000
        Replicates.
    confidence_level : float, default 0.95
        Level of the bootstrap's interval.
    seed : int, default 0
        Seed of the replicates.
    names : tuple of str, default ("A", "B")
        The systems' names.

    Returns
    -------
    PairedTestResult
        ``difference``, ``p_value`` and (bootstrap) ``ci_low``/``ci_high``.

    Raises
    ------
    InputError
        An unknown ``test``.

    Examples
    --------
    >>> from glotbench import api
    >>> from glotbench.metrics import get_metric
    >>> a = [[1, 1], [1, 1], [0, 1], [1, 1], [1, 1], [0, 1]]
    >>> b = [[1, 1], [0, 1], [0, 1], [1, 1], [0, 1], [0, 1]]
    >>> result = api.significance_test("permutation", a, b, get_metric("accuracy"),
    ...                                n_resamples=1000)
    >>> round(result.difference, 3), round(result.p_value, 2)
    (0.333, 0.48)
    """
    if test == "bootstrap":
        return paired_bootstrap_test(
            stats_a,
            stats_b,
            metric,
            n_resamples=n_resamples,
            confidence_level=confidence_level,
            seed=seed,
            names=names,
        )
    if test == "permutation":
        return permutation_test(
            stats_a, stats_b, metric, n_resamples=n_resamples, seed=seed, names=names
        )
    raise InputError(f"unknown test {test!r}; use bootstrap or permutation")


def mcnemar_files(
    file_a: str | Path,
    file_b: str | Path,
    *,
    references: str | Path | None = None,
    exact: bool | None = None,
    correction: bool = True,
) -> McNemarResult:
    r"""McNemar's test from files: 0/1 outcomes per line, or predictions + references.

    With ``references`` an example is correct when its prediction line equals
    the reference line (after stripping whitespace).

    Parameters
    ----------
    file_a, file_b : str or Path
        0/1 outcomes per line, or predictions (with ``references``).
    references : str or Path, optional
        The reference line of every example.
    exact : bool, optional
        Binomial test (True), χ² (False), or exact when b + c < 25 (None).
    correction : bool, default True
        Edwards' continuity correction of the χ² statistic.

    Returns
    -------
    McNemarResult
        ``statistic``, ``p_value`` and the four cell counts.

    Raises
    ------
    InputError
        The files differ in line count, or an outcome that is not 0 or 1.

    Examples
    --------
    >>> from pathlib import Path
    >>> from glotbench import api
    >>> _ = Path("pred.txt").write_text("pos\nneg\npos\npos\nneg\npos\n")
    >>> _ = Path("pred_b.txt").write_text("pos\npos\npos\npos\nneg\nneg\n")
    >>> _ = Path("gold.txt").write_text("pos\nneg\nneg\npos\nneg\npos\n")
    >>> result = api.mcnemar_files("pred.txt", "pred_b.txt", references="gold.txt")
    >>> result.only_a_correct, result.only_b_correct, result.p_value
    (2, 0, 0.5)
    """
    path_a, path_b = Path(file_a), Path(file_b)
    if references is None:
        a, b = read_scores_file(path_a), read_scores_file(path_b)
        _same_length(a, b, path_a, path_b)
        for path, values in ((path_a, a), (path_b, b)):
            bad = np.flatnonzero(~np.isin(values, (0.0, 1.0)))
            if bad.size:
                raise InputError(
                    f"{values[bad[0]]:g} is not 0 or 1; McNemar's test needs binary outcomes",
                    path=str(path),
                    line=int(bad[0]) + 1,
                )
    else:
        refs = [
            x.strip() if isinstance(x, str) else x for x in read_examples_file(Path(references))
        ]
        preds = [
            [x.strip() if isinstance(x, str) else x for x in read_examples_file(p)]
            for p in (path_a, path_b)
        ]
        _same_length(preds[0], refs, path_a, Path(references))
        _same_length(preds[1], refs, path_b, Path(references))
        a = np.array([p == r for p, r in zip(preds[0], refs, strict=True)], dtype=float)
        b = np.array([p == r for p, r in zip(preds[1], refs, strict=True)], dtype=float)
    return mcnemar_test(a, b, exact=exact, correction=correction, names=(path_a.stem, path_b.stem))
