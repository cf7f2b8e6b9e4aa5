"""Small helpers of :mod:`glotbench.analysis.replicates`."""

from __future__ import annotations

import pytest

from glotbench.analysis.replicates import model_rows


def test_model_rows_are_the_list_positions_and_refuse_an_unknown_name() -> None:
    models = ("c", "a", "b")
    assert model_rows(models, ["b", "c", "b"]) == [models.index("b"), 0, 2]
    with pytest.raises(ValueError, match="'z' is not among the models"):
        model_rows(models, ["a", "z"])
