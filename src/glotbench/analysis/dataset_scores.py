"""ScandEval scores per model and dataset, a multilingual dataset's languages collapsed.

The runner scores every (model, dataset, language, metric) as ScandEval does
(:func:`glotbench.runner.protocol.scandeval_scores`: the mean over iterations
of bootstrapped-test scores, ``ci_half_width = 1.96 · SD / √N``). A
multilingual dataset (one dataset, several languages of one metric) is run per
language; ``glotbench run`` shows it as one row: the mean of its per-language
scores and their range (minimum, maximum). Means and ranges are over the
languages with a score (NaN skipped, as :meth:`pandas.Series.mean`).
"""

from __future__ import annotations

import pandas as pd

KEYS = ["model", "dataset", "metric"]
COLUMNS = [
    *KEYS,
    "language",
    "n_languages",
    "iterations",
    "score",
    "ci_half_width",
    "score_min",
    "score_max",
]


def scores_by_dataset(scores: pd.DataFrame) -> pd.DataFrame:
    """One row per model, dataset and metric, in the order of ``scores``.

    ``scores`` has one row per (model, dataset, language, metric) with
    ``iterations``, ``score`` and ``ci_half_width``. A dataset scored in one
    language keeps its row (``language``, ``n_languages`` = 1, ``score_min`` =
    ``score_max`` = ``score``). Several languages of one metric give
    ``language`` missing, ``n_languages`` = their number, ``score`` = the mean
    of their scores with ``score_min`` / ``score_max`` the range, ``iterations``
    = the largest number of iterations, and ``ci_half_width`` = NaN (ScandEval's
    half-width is per language).
    """
    rows = []
    for (model, dataset, metric), group in scores.groupby(KEYS, sort=False):
        values = group["score"].astype(float)
        if len(group) == 1:
            row = group.iloc[0]
            score = float(row["score"])
            half = row["ci_half_width"]
            rows.append(
                {
                    "model": model,
                    "dataset": dataset,
                    "metric": metric,
                    "language": row["language"],
                    "n_languages": 1,
                    "iterations": int(row["iterations"]),
                    "score": score,
                    "ci_half_width": float("nan") if pd.isna(half) else float(half),
                    "score_min": score,
                    "score_max": score,
                }
            )
        else:
            rows.append(
                {
                    "model": model,
                    "dataset": dataset,
                    "metric": metric,
                    "language": None,
                    "n_languages": len(group),
                    "iterations": int(group["iterations"].max()),
                    "score": float(values.mean()),
                    "ci_half_width": float("nan"),
                    "score_min": float(values.min()),
                    "score_max": float(values.max()),
                }
            )
    return pd.DataFrame(rows, columns=COLUMNS)
