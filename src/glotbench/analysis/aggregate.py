"""Aggregate scores over languages and tasks with standard errors.

Languages are treated as a sample from the population of languages a
benchmark stands for, so an average over L languages has standard error

    SE = s_between / sqrt(L),

where s_between is the sample SD (ddof = 1) of the per-language scores — the
between-language standard deviation σ_b of Sälevä, Ataman & Lignos (their
eq. for the SD of the mean of language scores). The observed per-language
scores already contain their own measurement noise, so this SE includes it.

A benchmark's overall score is the unweighted mean of its task scores
(XTREME-R: "we average the per-task scores"), with

    SE_overall = sqrt(Σ_t SE_t²) / T,

treating the tasks' language samples as independent. Overall scores are only
reported for models that have every task of the selection, as XTREME-R's
leaderboard does; partial coverage is shown, not silently averaged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from glotbench.analysis.overall import lacking_tasks
from glotbench.analysis.results import best_row, number, records, summary_repr
from glotbench.errors import InputError
from glotbench.resample.intervals import mean_standard_error

REQUIRED_COLUMNS = ("model", "task", "language", "score")


def _check_columns(scores: pd.DataFrame) -> None:
    missing = [c for c in REQUIRED_COLUMNS if c not in scores.columns]
    if missing:
        raise InputError(f"scores table lacks column(s) {', '.join(missing)}", field=missing[0])


def t_interval(mean: float, se: float, df: int, confidence_level: float) -> tuple[float, float]:
    """Student-t interval mean ± t_{df, 1−α/2} · SE (NaN where undefined)."""
    from scipy.special import stdtrit

    if not np.isfinite(se) or df < 1:
        return float("nan"), float("nan")
    half = float(stdtrit(df, 0.5 + confidence_level / 2)) * se
    return mean - half, mean + half


def language_aggregates(
    scores: pd.DataFrame, by: tuple[str, ...] = ("model", "task"), confidence_level: float = 0.95
) -> pd.DataFrame:
    """Mean over languages per group, with between-language SD, SE and t-interval.

    Scores are first averaged within each language (over seeds or replicates
    if present), so every language counts once.
    """
    _check_columns(scores)
    per_language = scores.groupby([*by, "language"], as_index=False, sort=True)["score"].mean()
    per_language = per_language.dropna(subset=list(by))  # as groupby(by) drops them
    rows: list[dict[str, Any]] = []
    # the rows are sorted by ``by``: each group is one contiguous slice (the same arrays,
    # in the same order, as iterating groupby(by), without a frame per group)
    scores_all = per_language["score"].to_numpy(dtype=np.float64)
    key_columns = [per_language[column].tolist() for column in by]
    all_keys = list(zip(*key_columns, strict=True))
    starts = [i for i in range(len(all_keys)) if i == 0 or all_keys[i] != all_keys[i - 1]]
    for start, end in zip(starts, [*starts[1:], len(all_keys)], strict=True):
        values = scores_all[start:end]
        mean, se = float(values.mean()), float(mean_standard_error(values))
        low, high = t_interval(mean, se, values.size - 1, confidence_level)
        keys = all_keys[start]
        rows.append(
            {
                **dict(zip(by, keys, strict=True)),
                "score": mean,
                "between_language_sd": float(values.std(ddof=1))
                if values.size > 1
                else float("nan"),
                "standard_error": se,
                "ci_low": low,
                "ci_high": high,
                "n_languages": int(values.size),
            }
        )
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class Leaderboard:
    """Per-task and overall scores of each model, with standard errors.

    Attributes
    ----------
    per_task : pandas.DataFrame
        One row per model and task: score, SE over languages, interval.
    overall : pandas.DataFrame
        One row per model: the mean of its task scores with SE and interval.
    tasks : tuple of str
        The tasks, in column order.
    confidence_level : float
        Level of the intervals.
    """

    per_task: pd.DataFrame
    overall: pd.DataFrame
    tasks: tuple[str, ...]
    confidence_level: float

    def __repr__(self) -> str:
        top = best_row(self.overall, "score")
        headline = (
            ""
            if top is None
            else (
                f"best {top['model']!r}: {number(top['score'])} "
                f"(SE {number(top['standard_error'])})"
            )
        )
        sizes = {"models": int(self.overall["model"].nunique()), "tasks": len(self.tasks)}
        return summary_repr(self, sizes, headline)

    def to_frame(self) -> pd.DataFrame:
        """Tidy: one row per model and task, plus task ``"overall"``."""
        overall = self.overall.assign(task="overall", between_language_sd=np.nan)
        return pd.concat(
            [self.per_task, overall[self.per_task.columns.intersection(overall.columns)]],
            ignore_index=True,
        )

    def to_dict(self) -> dict[str, Any]:
        """The leaderboard's settings and rows as a JSON-safe dict."""
        return {
            "tasks": list(self.tasks),
            "confidence_level": self.confidence_level,
            "overall": records(self.overall),
            "per_task": records(self.per_task),
        }


def leaderboard(scores: pd.DataFrame, confidence_level: float = 0.95) -> Leaderboard:
    """Leaderboard of models: language averages per task and their unweighted overall mean.

    ``scores`` is a tidy table with columns model, task, language, score (more
    columns are ignored; several metrics per task should be filtered first).
    Models are ordered by overall score, then by number of tasks covered.
    """
    from scipy.special import ndtri

    _check_columns(scores)
    if scores.empty:
        raise InputError("no scores to rank; check the store or the filters")
    per_task = language_aggregates(scores, ("model", "task"), confidence_level)
    tasks = tuple(sorted(per_task["task"].unique()))
    rows: list[dict[str, Any]] = []
    has: dict[Any, set[str]] = {}
    for model, task in zip(per_task["model"].tolist(), per_task["task"].astype(str), strict=True):
        has.setdefault(model, set()).add(task)
    # models without a whole task: no overall score (glotbench.analysis.overall's rule)
    lacking = lacking_tasks(has, [str(m) for m in has], [str(t) for t in tasks])
    # per_task is sorted by model: each model's rows are one contiguous slice, in the
    # order groupby(sort=False) visits them
    models = per_task["model"].tolist()
    starts = [i for i in range(len(models)) if i == 0 or models[i] != models[i - 1]]
    score_column, se_column = per_task["score"], per_task["standard_error"].to_numpy(np.float64)
    languages = per_task["n_languages"].to_numpy()
    for start, end in zip(starts, [*starts[1:], len(models)], strict=True):
        model = models[start]
        complete = str(model) not in lacking
        se_parts = se_column[start:end]
        mean = float(score_column.iloc[start:end].mean()) if complete else float("nan")
        se = float(np.sqrt(np.sum(se_parts**2)) / len(tasks)) if complete else float("nan")
        z = float(ndtri(0.5 + confidence_level / 2))
        rows.append(
            {
                "model": model,
                "score": mean,
                "standard_error": se,
                "ci_low": mean - z * se,
                "ci_high": mean + z * se,
                "n_tasks": end - start,
                "n_languages": int(languages[start:end].sum()),
            }
        )
    overall = pd.DataFrame(rows).sort_values(
        ["score", "n_tasks"], ascending=[False, False], na_position="last"
    )
    return Leaderboard(
        per_task=per_task.sort_values(["task", "score"], ascending=[True, False]).reset_index(
            drop=True
        ),
        overall=overall.reset_index(drop=True),
        tasks=tasks,
        confidence_level=confidence_level,
    )
