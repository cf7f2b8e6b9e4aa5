"""Transfer groups (ScandEval §3.3): F-statistics against scipy, planted groups, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import f_oneway
from typer.testing import CliRunner

from glotbench.analysis.transfer import f_statistics, scores_frame, transfer_groups
from glotbench.cli import app
from glotbench.errors import InputError

LANGS = ["da", "sv", "nb", "is", "fo"]
BLOCK = {"da": 0, "sv": 0, "nb": 0, "is": 1, "fo": 1}


def _planted(seed: int = 0, datasets_per_language: int = 2) -> tuple[np.ndarray, list[str]]:
    """Models transfer within {da, sv, nb} and within {is, fo}: 80 inside, 60 across."""
    rng = np.random.default_rng(seed)
    dataset_langs = [lang for lang in LANGS for _ in range(datasets_per_language)]
    x = np.array(
        [
            [(80.0 if BLOCK[m] == BLOCK[d] else 60.0) + rng.normal(0, 2) for d in dataset_langs]
            for m in LANGS
        ]
    )
    return x, dataset_langs


@pytest.mark.parametrize("k", [2, 3])
def test_f_statistics_match_scipy(k: int) -> None:
    rng = np.random.default_rng(k)
    x = rng.normal(0, 1, (6, 11))
    groups = np.arange(11) % k
    ours = f_statistics(x, groups)
    ref = [f_oneway(*(row[groups == g] for g in range(k))).statistic for row in x]
    np.testing.assert_allclose(ours, ref, rtol=1e-12)


def test_missing_scores_drop_out_of_each_row() -> None:
    rng = np.random.default_rng(5)
    x = rng.normal(0, 1, (2, 8))
    x[0, 3] = np.nan
    groups = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    keep = ~np.isnan(x[0])
    ref = f_oneway(x[0, keep & (groups == 0)], x[0, keep & (groups == 1)]).statistic
    assert f_statistics(x, groups)[0] == pytest.approx(ref)


def test_planted_groups_are_found() -> None:
    x, dataset_langs = _planted()
    result = transfer_groups(scores_frame(x, LANGS, dataset_langs))
    # all groups of 2..4 of 5 languages: 10 + 10 + 5
    assert len(result.groups) == 25
    assert set(result.best) in ({"da", "sv", "nb"}, {"is", "fo"})  # a 2-way split is symmetric
    assert set(result.groups.iloc[:2]["group"]) == {"da,nb,sv", "fo,is"}
    singles = transfer_groups(scores_frame(x, LANGS, dataset_langs), rest="singletons")
    assert set(singles.best) in ({"da", "sv", "nb"}, {"is", "fo"})
    row = result.per_model[result.per_model["group"] == "da,nb,sv"].set_index("model")["f"]
    inside = np.array([BLOCK[d] == 0 for d in dataset_langs])
    for i, model in enumerate(LANGS):
        expected = f_oneway(x[i, inside], x[i, ~inside]).statistic
        assert row[model] == pytest.approx(expected, rel=1e-12)


def test_input_errors(tmp_path: Path) -> None:
    import pandas as pd

    with pytest.raises(InputError, match="model_language"):
        transfer_groups(pd.DataFrame({"language": ["da"], "score": [1.0]}))
    x, dataset_langs = _planted()
    frame = scores_frame(x[:, :4], LANGS, dataset_langs[:4])
    with pytest.raises(InputError, match="at least 3 languages"):
        transfer_groups(frame)


def test_cli_transfer_json(tmp_path: Path) -> None:
    x, dataset_langs = _planted(seed=1)
    path = tmp_path / "scores.csv"
    scores_frame(x, LANGS, dataset_langs).to_csv(path, index=False)
    out = CliRunner().invoke(app, ["analyze", "transfer", "--input", str(path), "--json"])
    assert out.exit_code == 0, out.output
    payload = json.loads(out.stdout)
    assert set(payload["best_group"]) in ({"da", "sv", "nb"}, {"is", "fo"})
    assert len(payload["groups"]) == 25
    out = CliRunner().invoke(app, ["analyze", "transfer", "--input", str(path)])
    assert out.exit_code == 0 and "best group" in out.stdout
