"""Scores per model and dataset: a multilingual dataset's languages collapse to mean and range."""

from __future__ import annotations

import math

import pandas as pd

from glotbench.analysis.dataset_scores import COLUMNS, scores_by_dataset


def _scores() -> pd.DataFrame:
    return pd.DataFrame(
        [
            # model m on a one-language dataset, with a half-width
            ("m", "angry-tweets", "da", "mcc", 10, 0.40, 0.02),
            # model m on a multilingual dataset: three languages
            ("m", "scala", "da", "mcc", 10, 0.20, 0.03),
            ("m", "scala", "sv", "mcc", 8, 0.50, 0.01),
            ("m", "scala", "nb", "mcc", 10, 0.35, 0.04),
            # one iteration: no half-width
            ("n", "angry-tweets", "da", "mcc", 1, 0.10, float("nan")),
        ],
        columns=["model", "dataset", "language", "metric", "iterations", "score", "ci_half_width"],
    )


def test_one_language_keeps_its_row_and_several_collapse_to_mean_and_range() -> None:
    out = scores_by_dataset(_scores())
    assert list(out.columns) == COLUMNS
    assert list(zip(out["model"], out["dataset"], strict=True)) == [
        ("m", "angry-tweets"),
        ("m", "scala"),
        ("n", "angry-tweets"),
    ]
    single = out.iloc[0]
    assert single["language"] == "da" and single["n_languages"] == 1
    assert single["score"] == 0.40 and single["ci_half_width"] == 0.02
    assert single["score_min"] == single["score_max"] == 0.40
    multi = out.iloc[1]
    # closed form: (0.20 + 0.50 + 0.35) / 3 = 0.35, range 0.20 … 0.50
    assert pd.isna(multi["language"]) and multi["n_languages"] == 3
    assert math.isclose(multi["score"], 0.35, rel_tol=1e-12)
    assert multi["score_min"] == 0.20 and multi["score_max"] == 0.50
    assert multi["iterations"] == 10 and math.isnan(multi["ci_half_width"])
    assert math.isnan(out.iloc[2]["ci_half_width"]) and out.iloc[2]["iterations"] == 1


def test_no_scores_give_an_empty_frame_with_the_columns() -> None:
    empty = pd.DataFrame(
        columns=["model", "dataset", "language", "metric", "iterations", "score", "ci_half_width"]
    )
    out = scores_by_dataset(empty)
    assert out.empty and list(out.columns) == COLUMNS
