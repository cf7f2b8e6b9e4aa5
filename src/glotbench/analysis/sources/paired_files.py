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
    """Bootstrap a metric over a predictions file against a references file (line-aligned)."""
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
    """ASO of two score files (A against B), or ``multi_aso`` of three or more.

    Each file holds one score per line (e.g. one per seed); systems are named
    by the file stems.
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
    """Per-example statistics of two systems from files.

    With ``references``: ``file_a``/``file_b`` are line-aligned predictions,
    scored by ``metric`` (fitted on both systems' predictions, so label sets
    agree). Without: each file holds one per-example score per line and the
    metric is their mean.
    """
    path_a, path_b = Path(file_a), Path(file_b)
    if references is None:
        if metric is not None and not get_metric(metric).is_mean:
            raise InputError(
                f"{metric} is not a mean of per-example values; give --references with "
                "prediction files to test it"
            )
        a, b = read_scores_file(path_a), read_scores_file(path_b)
        _same_length(a, b, path_a, path_b)
        mean = get_metric(metric or "accuracy")
        return MeanMetric.stats_from_values(a), MeanMetric.stats_from_values(b), mean
    if metric is None:
        raise InputError("give --metric to score prediction files against --references")
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
    """Per-example statistics of two models' runs from the store (one run each)."""
    if len(models) != 2:
        raise InputError("give exactly two --model options (A and B)")
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
            "model with --run-seed"
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
    """Run the paired ``bootstrap`` or ``permutation`` test on per-example statistics."""
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
    """McNemar's test from files: 0/1 outcomes per line, or predictions + references.

    With ``references`` an example is correct when its prediction line equals
    the reference line (after stripping whitespace).
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
