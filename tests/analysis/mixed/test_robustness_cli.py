"""The missing-data robustness study through the CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from ...conftest import CliResult


def _balanced(path: Path) -> Path:
    rng = np.random.default_rng(3)
    rows = []
    for m in range(6):
        model_effect = rng.normal(0, 2)
        for language, shift in (("en", 0.0), ("de", -1.0), ("sw", -6.0)):
            for task in ("ner", "nli"):
                rows.append((f"m{m}", language, task, 60 + model_effect + shift + rng.normal(0, 1)))
    pd.DataFrame(rows, columns=["model", "language", "task", "score"]).to_csv(path, index=False)
    return path


def test_lmm_keeps_detecting_a_strong_effect_as_rows_go_missing(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    data = _balanced(tmp_path / "scores.csv")
    result = cli(
        "analyze",
        "lmm-robustness",
        "--formula",
        "score ~ language + task + (1 | model)",
        "--factor",
        "language",
        "--within",
        "language",
        "--within",
        "task",
        "--input",
        data,
        "--fraction",
        "0.1",
        "--fraction",
        "0.3",
        "--repeats",
        "3",
        "--json",
    )
    assert result.exit_code == 0, result.err
    payload = json.loads(result.stdout)
    assert payload["factor"] == "language"
    rows = {row["fraction_removed"]: row for row in payload["rows"]}
    assert set(rows) == {0.1, 0.3}
    # a 6-point language effect with noise 1 is found by every LMM refit
    assert all(row["lmm_detected"] == 1.0 for row in rows.values())
    # RM-ANOVA drops every model with a missing cell: with 30 % of rows gone it rarely fits
    assert rows[0.3]["rm_anova_detected"] <= rows[0.3]["lmm_detected"]


def test_non_numeric_response_is_a_clear_error(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    data = _balanced(tmp_path / "scores.csv")
    frame = pd.read_csv(data).astype({"score": object})
    frame.loc[4, "score"] = "n/a"
    frame.to_csv(data, index=False)
    result = cli(
        "analyze",
        "lmm-robustness",
        "--formula",
        "score ~ language + (1 | model)",
        "--factor",
        "language",
        "--input",
        data,
        "--repeats",
        "2",
        "--fraction",
        "0.1",
    )
    assert result.exit_code == 2
    assert "score" in result.err and "Traceback" not in result.err
