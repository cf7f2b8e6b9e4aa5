"""What ``glotbench checklist`` does: expand template suites, score predictions, the example.

:func:`checklist_expand` writes test cases, :func:`checklist_score` computes
failure rates with paired bootstrap intervals (and stores them as runs), and
:func:`checklist_example` summarises the embedded MultiCheckList error rates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from glotbench.checklist.cases import read_cases, write_cases
from glotbench.checklist.engine import expand_suite
from glotbench.checklist.evaluate import (
    Prediction,
    as_prediction,
    predictions_from_callable,
    read_predictions,
    score_cases,
    store_results,
)
from glotbench.checklist.parse import load_suite
from glotbench.checklist.suites import builtin_template_files
from glotbench.errors import InputError
from glotbench.store.store import Store


@dataclass(frozen=True)
class ChecklistExpansion:
    """Cases written by :func:`checklist_expand`.

    Attributes
    ----------
    out : str
        The cases file.
    suites : tuple of str
        The suites expanded.
    n_cases : int
        Test cases written.
    n_texts : int
        Texts to predict (a case may have several).
    counts : pandas.DataFrame
        Cases and texts per suite, test and language.
    """

    out: str
    suites: tuple[str, ...]
    n_cases: int
    n_texts: int
    counts: pd.DataFrame  # suite, test, type, language, n_cases, n_texts

    def to_frame(self) -> pd.DataFrame:
        return self.counts

    def to_dict(self) -> dict[str, Any]:
        return {
            "out": self.out,
            "suites": list(self.suites),
            "n_cases": self.n_cases,
            "n_texts": self.n_texts,
            "tests": self.counts.to_dict(orient="records"),
        }


def checklist_expand(
    templates: Sequence[str | Path] | None = None,
    out: str | Path = "checklist_cases.jsonl",
    *,
    languages: Sequence[str] | None = None,
    tests: Sequence[str] | None = None,
    n: int | None = None,
) -> ChecklistExpansion:
    """Expand template suites (default: the shipped ones) into a cases JSONL file.

    One row per text (``id``, ``case_id``, ``text``, expectation, …); predict
    every ``id`` and score with :func:`checklist_score`.

    Parameters
    ----------
    templates : sequence of str or Path, optional
        Template suite YAML files or names of shipped suites (default: every
        shipped suite).
    out : str or Path, default ``"checklist_cases.jsonl"``
        The cases file to write.
    languages : sequence of str, optional
        Expand only these languages.
    tests : sequence of str, optional
        Expand only these tests.
    n : int, optional
        At most ``n`` cases per test and language (a seeded sample).

    Returns
    -------
    ChecklistExpansion
        ``out``, the ``suites``, ``n_cases``, ``n_texts`` and ``counts`` per
        test and language.

    Raises
    ------
    InputError
        A malformed template file (the message names the entry), or a language
        or test no suite has.

    Examples
    --------
    >>> from glotbench import api
    >>> expansion = api.checklist_expand(out="cases.jsonl", languages=["en"], n=2)
    >>> expansion.suites, expansion.n_cases
    (('sentiment',), 10)
    """
    paths = list(templates) if templates else builtin_template_files()
    suites = [load_suite(p) for p in paths]
    cases = []
    for suite in suites:
        langs = [lang for lang in languages if lang in suite.languages] if languages else None
        cases.extend(expand_suite(suite, langs, tests, n))
    if not cases:
        known = sorted({lang for s in suites for lang in s.languages})
        raise InputError(
            f"no test cases for languages {list(languages or [])}; the templates cover "
            f"{', '.join(known)}"
        )
    target = write_cases(cases, out)
    counts = (
        pd.DataFrame(
            [
                {
                    "suite": c.suite,
                    "test": c.test,
                    "type": c.type,
                    "language": c.language,
                    "n_texts": len(c.texts),
                }
                for c in cases
            ]
        )
        .groupby(["suite", "test", "type", "language"], sort=False)
        .agg(n_cases=("n_texts", "size"), n_texts=("n_texts", "sum"))
        .reset_index()
    )
    counts[["n_cases", "n_texts"]] = counts[["n_cases", "n_texts"]].astype(int)
    return ChecklistExpansion(
        str(target),
        tuple(s.name for s in suites),
        len(cases),
        int(counts["n_texts"].sum()),
        counts,
    )


def checklist_score(
    cases: str | Path | Sequence[Any],
    predictions: Sequence[str | Path] | dict[str, Any] | None = None,
    *,
    models: Sequence[str] | None = None,
    predict: Any = None,
    model: str | None = None,
    store: str | Path | None = None,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> Any:
    """Failure rates per model, test and language with paired bootstrap CIs.

    Parameters
    ----------
    cases : str or Path or sequence of Case
        A cases file (:func:`checklist_expand`) or a list of
        :class:`~glotbench.checklist.Case`.
    predictions : sequence of str or Path, or dict, optional
        Files keyed by text ``id`` (JSONL with ``label``/``probs``, or
        CSV/TSV; model names from ``models`` or the file stems), or a dict
        model -> {id: prediction}.
    models : sequence of str, optional
        The models' names for the prediction files.
    predict : callable, optional
        ``predict(texts) -> labels or probabilities``, instead of
        ``predictions``.
    model : str, optional
        The name of ``predict``'s model.
    store : str or Path, optional
        Also write every (model, test, language) as a run (task
        ``checklist:<test>``, dataset ``checklist:<suite>``, metric
        ``accuracy`` = pass rate over the cases).
    n_resamples : int, default 1000
        Bootstrap draws of each interval (cases resampled, paired across
        models).
    confidence_level : float, default 0.95
        Level of the intervals.
    seed : int, default 0
        Seed of the draws.

    Returns
    -------
    ChecklistResult
        ``rates`` (``.to_frame()``): one row per model, test and language with
        ``failure_rate``, ``standard_error``, ``ci_low``, ``ci_high``; and the
        per-case ``outcomes``.

    Raises
    ------
    InputError
        No predictions, a prediction for an unknown ``id``, a missing one, or
        as many names as files not given.

    Examples
    --------
    A model that always answers ``positive``:

    >>> from glotbench import api
    >>> _ = api.checklist_expand(out="cases.jsonl", languages=["en"], n=2)
    >>> result = api.checklist_score("cases.jsonl", predict=lambda texts: ["positive"] * len(texts),
    ...                              model="always-positive", n_resamples=200)
    >>> print(result.to_frame()[["test", "failure_rate"]].head(3).to_string(index=False))
                test  failure_rate
     simple_positive           0.0
     simple_negative           1.0
    negated_positive           1.0
    """
    case_list = read_cases(cases) if isinstance(cases, (str, Path)) else list(cases)
    labels = case_list[0].labels if case_list else ()
    by_model = _predictions_by_model(case_list, labels, predictions, models, predict, model)
    result, matrices = score_cases(
        case_list, by_model, n_resamples=n_resamples, confidence_level=confidence_level, seed=seed
    )
    if store is not None:
        source = str(cases) if isinstance(cases, (str, Path)) else None
        with Store.open(store) as st:
            stored = store_results(st, matrices, list(by_model), source=source)
        result = replace(result, stored={**stored, "store": str(store)})
    return result


def _predictions_by_model(
    case_list: list[Any],
    labels: Sequence[str],
    predictions: Sequence[str | Path] | dict[str, Any] | None,
    models: Sequence[str] | None,
    predict: Any,
    model: str | None,
) -> dict[str, dict[str, Prediction]]:
    """Each model's predictions by case id: of ``predict`` (named ``model``), of a mapping
    model -> {id: prediction}, or of prediction files (named ``models``, else by file)."""
    by_model: dict[str, dict[str, Prediction]] = {}
    if predict is not None:
        by_model[str(model or getattr(predict, "__name__", "model"))] = predictions_from_callable(
            case_list, predict
        )
    if isinstance(predictions, dict):
        for name, preds in predictions.items():
            by_model[str(name)] = {
                str(k): as_prediction(v, labels, f"model {name!r}, id {k!r}")
                for k, v in preds.items()
            }
    elif predictions:
        names = list(models) if models else [Path(p).stem for p in predictions]
        if len(names) != len(predictions):
            raise InputError(
                f"{len(names)} model names for {len(predictions)} prediction files; "
                "give one name per file"
            )
        for name, path in zip(names, predictions, strict=True):
            if name in by_model:
                raise InputError(f"model name {name!r} given twice; give each file its own name")
            by_model[name] = read_predictions(path, labels)
    return by_model


@dataclass(frozen=True)
class ChecklistExample:
    """The published MultiCheckList error rates of XLM-R (embedded example table).

    Attributes
    ----------
    table : pandas.DataFrame
        One row per language and test: ``error_rate`` in percent.
    by_test : pandas.DataFrame
        One row per test: mean, min and max over languages beside the
        published average.
    wide : pandas.DataFrame
        Languages × tests.
    source : str
        The citation.
    """

    table: pd.DataFrame  # model, language, test, error_rate
    by_test: pd.DataFrame  # test, mean, published_avg, min, max, n_languages
    wide: pd.DataFrame  # language × test
    source: str

    def to_frame(self) -> pd.DataFrame:
        return self.table

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "unit": "error rate, percent of failed test cases",
            "models": sorted(self.table["model"].unique().tolist()),
            "languages": sorted(self.table["language"].unique().tolist()),
            "tests": list(self.by_test["test"]),
            "by_test": self.by_test.to_dict(orient="records"),
            "rows": self.table.to_dict(orient="records"),
        }


def checklist_example() -> ChecklistExample:
    """Summary of the embedded MultiCheckList error rates of XLM-R (Ruder et al. 2021).

    Returns
    -------
    ChecklistExample
        ``table`` (one row per language and test), ``by_test`` (mean, min and
        max over the 50 languages beside the published average) and ``wide``.

    Examples
    --------
    >>> from glotbench import api
    >>> example = api.checklist_example()
    >>> print(example.by_test[["test", "mean", "published_avg"]].head(2).to_string(index=False))
            test  mean  published_avg
     Comparisons 47.29           47.3
    Intensifiers 90.95           90.9
    """
    from glotbench.data import MULTICHECKLIST_TABLE5_AVG, multichecklist_xlmr_error_rates

    table = multichecklist_xlmr_error_rates()
    tests = list(dict.fromkeys(table["test"]))
    by_test = (
        table.groupby("test", sort=False)["error_rate"]
        .agg(mean="mean", min="min", max="max", n_languages="size")
        .reindex(tests)
        .reset_index()
    )
    by_test["mean"] = by_test["mean"].round(2)
    by_test.insert(2, "published_avg", by_test["test"].map(MULTICHECKLIST_TABLE5_AVG))
    wide = table.pivot(index="language", columns="test", values="error_rate")[tests].reset_index()
    wide.columns.name = None
    return ChecklistExample(
        table=table,
        by_test=by_test,
        wide=wide,
        source=(
            "Ruder et al. 2021, XTREME-R (EMNLP), Table 5: MultiCheckList error rates of "
            "XLM-R Large; published_avg is the table's Avg row"
        ),
    )
