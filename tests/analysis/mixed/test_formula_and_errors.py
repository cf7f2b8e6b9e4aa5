"""Formula parsing (R's term algebra, lme4's random terms) and clear errors for degenerate input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from glotbench.analysis.mixed import lmm, parse_formula
from glotbench.analysis.mixed.design import model_frame, model_matrix
from glotbench.errors import InputError


def labels(text: str) -> list[str]:
    return parse_formula(text).term_labels


def test_term_algebra_follows_r() -> None:
    assert labels("y ~ a * b * c") == ["a", "b", "c", "a:b", "a:c", "b:c", "a:b:c"]
    assert labels("y ~ task * language") == ["task", "language", "task:language"]
    assert labels("y ~ (a + b + c)^2 - a:b") == ["a", "b", "c", "a:c", "b:c"]
    assert labels("y ~ a / b") == ["a", "a:b"]
    assert labels("y ~ b:a + a") == ["a", "b:a"]
    assert parse_formula("y ~ 0 + a").intercept is False
    assert parse_formula("y ~ a - 1").intercept is False
    assert parse_formula("y ~ a").intercept is True


def test_random_terms_follow_lme4() -> None:
    f = parse_formula("delta ~ language * task * mode + (1 | architecture/model)")
    assert [r.group_name for r in f.random_terms] == ["architecture", "model:architecture"]
    f = parse_formula("y ~ x + (1 | model) + (1 | language)")
    assert [r.group_name for r in f.random_terms] == ["model", "language"]
    f = parse_formula("y ~ x + (1 + x | g)")
    assert f.random_terms[0].effects == (("x",),) and f.random_terms[0].intercept
    f = parse_formula("y ~ x + (x || g)")
    assert [(r.effects, r.intercept) for r in f.random_terms] == [((), True), ((("x",),), False)]
    assert parse_formula("y ~ x + (0 + x | g)").random_terms[0].intercept is False


@pytest.mark.parametrize(
    "bad",
    ["y x", "~ a", "y ~ ", "y ~ a +", "y ~ log(x) + (1|g)", "y ~ a | g", "y ~ (a + b", "y ~ 2"],
)
def test_bad_formulas_are_clear_errors(bad: str) -> None:
    with pytest.raises(InputError, match="formula"):
        parse_formula(bad)


def test_contr_sum_columns_are_named_as_r() -> None:
    data = pd.DataFrame(
        {"y": np.arange(12.0), "a": list("xyz") * 4, "b": ["p"] * 6 + ["q"] * 6, "x": 1.0}
    )
    f = parse_formula("y ~ a * b + a:x + (1 | b)")
    mf = model_frame(data, f)
    design = model_matrix(f.fixed_terms, f.intercept, mf)
    assert design.columns == [
        "(Intercept)",
        "a1",
        "a2",
        "b1",
        "a1:b1",
        "a2:b1",
        "ax:x",
        "ay:x",
        "az:x",
    ]
    # contr.sum: the last level is -1 in every column
    z_rows = design.matrix[np.array(mf.data["a"]) == "z"]
    assert np.all(z_rows[:, 1:3] == -1)


def _design(rng: np.random.Generator) -> pd.DataFrame:
    rows = []
    for m in range(8):
        u = rng.normal(0, 0.1)
        for lang in ("en", "es", "sw"):
            for task in ("a", "b"):
                rows.append(
                    {
                        "model": f"m{m}",
                        "language": lang,
                        "task": task,
                        "score": 0.5 + u + rng.normal(0, 0.05),
                    }
                )
    return pd.DataFrame(rows)


def test_factor_with_one_level() -> None:
    data = _design(np.random.default_rng(0))
    data["task"] = "a"
    with pytest.raises(InputError, match="only one level"):
        lmm("score ~ language + task + (1 | model)", data)


def test_grouping_factor_with_one_group() -> None:
    data = _design(np.random.default_rng(0))
    data["model"] = "only"
    with pytest.raises(InputError, match="only one group"):
        lmm("score ~ language + (1 | model)", data)


def test_perfect_collinearity_names_the_columns() -> None:
    data = _design(np.random.default_rng(0))
    data["copy"] = data["language"]
    with pytest.raises(InputError, match="collinear"):
        lmm("score ~ language + copy + (1 | model)", data)


def test_empty_interaction_cells_are_named() -> None:
    data = _design(np.random.default_rng(0))
    data = data[~((data.language == "sw") & (data.task == "b"))]
    with pytest.raises(InputError, match="empty cell.*sw/b"):
        lmm("score ~ language * task + (1 | model)", data)


def test_non_numeric_response_names_the_line(tmp_path) -> None:
    from glotbench.ingest.readers import read_tidy

    data = _design(np.random.default_rng(0))
    data["score"] = data["score"].astype(str)
    data.loc[5, "score"] = "high"
    path = tmp_path / "scores.csv"
    data.to_csv(path, index=False)
    table = read_tidy(path)
    with pytest.raises(InputError) as err:
        lmm("score ~ language + (1 | model)", table.frame, error=table.error)
    assert err.value.line == 7 and err.value.field == "score"
    assert "numeric" in str(err.value)


def test_missing_column_and_no_random_term() -> None:
    data = _design(np.random.default_rng(0))
    with pytest.raises(InputError, match="does not have"):
        lmm("score ~ seed + (1 | model)", data)
    with pytest.raises(InputError, match="no random-effect term"):
        lmm("score ~ language", data)


def test_missing_values_are_dropped_as_r_does() -> None:
    data = _design(np.random.default_rng(1))
    data.loc[[0, 3], "score"] = np.nan
    data.loc[7, "language"] = ""
    model = lmm("score ~ language + (1 | model)", data)
    assert model.fit.n == len(data) - 3
    assert model.diagnostics()["n_dropped_missing"] == 3


@pytest.mark.filterwarnings("ignore::statsmodels.tools.sm_exceptions.ConvergenceWarning")
def test_ml_and_reml_differ_and_match_statsmodels() -> None:
    import statsmodels.formula.api as smf

    data = _design(np.random.default_rng(2))
    for reml in (True, False):
        ours = lmm("score ~ language + (1 | model)", data, reml=reml)
        theirs = smf.mixedlm("score ~ C(language, Sum)", data, groups="model").fit(reml=reml)
        np.testing.assert_allclose(ours.fit.beta, theirs.fe_params.to_numpy(), rtol=1e-5)
        np.testing.assert_allclose(ours.fit.sigma**2, theirs.scale, rtol=1e-4)
