"""Simple mistakes in `analyze compare` are clear errors, with JSON under --json (issue 25.5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from glotbench.analysis.sources.inputs import filter_frame
from glotbench.errors import InputError


@pytest.fixture
def scores(tmp_path: Path) -> Path:
    path = tmp_path / "scores.csv"
    path.write_text(
        "model,task,language,metric,score\n"
        "modelA,t,da,acc,0.5\nmodelA,t,sv,acc,0.6\n"
        "modelB,t,da,acc,0.4\nmodelB,t,sv,acc,0.7\n",
        encoding="utf-8",
    )
    return path


def test_one_model_left_is_an_error_not_a_crash(scores: Path, cli):
    result = cli("analyze", "compare", "--input", scores, "--model", "modelA", "--json")
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert error["type"] == "InputError"
    assert "needs at least two" in error["message"] and "'modelA'" in error["message"]


def test_an_unknown_model_name_is_refused_with_the_names_there_are(scores: Path, cli):
    result = cli("analyze", "compare", "--input", scores, "--model", "modelA", "--model", "modelX")
    assert result.exit_code == 2
    assert "unknown model name(s) 'modelX'" in result.err
    assert "modelA, modelB" in result.err


def test_filter_frame_lists_the_values_of_the_filtered_column():
    import pandas as pd

    frame = pd.DataFrame({"model": ["a", "b"], "language": ["da", "sv"]})
    assert list(filter_frame(frame, {"model": ["a"], "language": None})["model"]) == ["a"]
    with pytest.raises(InputError) as info:
        filter_frame(frame, {"language": ["da", "xx"]})
    assert info.value.field == "language" and "'xx'" in str(info.value)
    assert "da, sv" in str(info.value)
