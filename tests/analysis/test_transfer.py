"""Transfer groups (ScandEval §3.3) against scipy's one-way ANOVA and the paper's finding.

Every reference number comes from ``scipy.stats.f_oneway`` applied in the test
itself to the clusters the paper defines (for benchmark language d in group G:
the models' scores on d, models of G against all other models), averaged over
d in G with numpy — never from glotbench.
"""

from __future__ import annotations

import json
import warnings
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import f_oneway
from typer.testing import CliRunner

from glotbench.analysis.transfer import one_way_f, transfer_groups
from glotbench.api import analyze_transfer
from glotbench.cli import app
from glotbench.data import scandeval_transfer_scores
from glotbench.errors import InputError

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
SCANDEVAL_CSV = SHARED / "scandeval_transfer_scores.csv"
BENCHMARK = ["da", "no", "sv", "is", "fo"]


def _scipy_f(inside: np.ndarray, outside: np.ndarray) -> float:
    """scipy's F, NaN where scipy cannot compute one (an empty cluster)."""
    if inside.size == 0 or outside.size == 0:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(f_oneway(inside, outside).statistic)


def _reference_ranking(
    frame: pd.DataFrame, benchmark: list[str], min_size: int = 2
) -> list[tuple[tuple[str, ...], float, dict[str, float]]]:
    """Independent ScandEval §3.3: for each G and d in G, f_oneway(models in G, others)."""
    rows = []
    for size in range(min_size, len(benchmark) + 1):
        for group in combinations(sorted(benchmark), size):
            per_language = {}
            for d in group:
                on_d = frame[frame["dataset_language"] == d]
                inside = on_d["model_language"].isin(group).to_numpy()
                x = on_d["score"].to_numpy(dtype=float)
                per_language[d] = _scipy_f(x[inside], x[~inside])
            defined = [v for v in per_language.values() if not np.isnan(v)]
            mean = float(np.mean(defined)) if defined else float("nan")
            rows.append((group, mean, per_language))
    # largest mean F first; undefined last; ties: smaller group, then name
    return sorted(
        rows,
        key=lambda r: (np.isnan(r[1]), -np.nan_to_num(r[1], nan=0.0), len(r[0]), ",".join(r[0])),
    )


@pytest.fixture(scope="module")
def appendix_a() -> pd.DataFrame:
    if not SCANDEVAL_CSV.exists():
        pytest.skip(f"shared data not found at {SCANDEVAL_CSV} (the ScandEval Appendix A table)")
    return pd.read_csv(SCANDEVAL_CSV, dtype={"dataset_language": str, "model_language": str})


# --- the F-statistic -------------------------------------------------------------


@pytest.mark.parametrize("sizes", [(3, 7), (1, 9), (2, 2), (5, 1), (4, 4, 3)])
def test_one_way_f_matches_scipy(sizes: tuple[int, ...]) -> None:
    rng = np.random.default_rng(sum(sizes))
    clusters = [rng.normal(i, 1.0, n) for i, n in enumerate(sizes)]
    assert one_way_f(*clusters) == pytest.approx(f_oneway(*clusters).statistic, rel=1e-12)


def test_one_way_f_edge_cases_match_scipy() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # zero within variance, distinct means: +inf (scipy: inf)
        assert one_way_f([1.0, 1.0], [2.0, 2.0]) == f_oneway([1.0, 1.0], [2.0, 2.0]).statistic
        assert np.isinf(one_way_f([0.1 * 3] * 3, [0.3] * 2 + [0.30000000000000004], [7.0]))
        # every value equal: NaN (scipy: nan)
        assert np.isnan(one_way_f([3.0, 3.0], [3.0]))
        assert np.isnan(f_oneway([3.0, 3.0], [3.0, 3.0]).statistic)
        # no within degrees of freedom (N = K): NaN (scipy: nan)
        assert np.isnan(one_way_f([1.0], [2.0]))
        assert np.isnan(f_oneway([1.0], [2.0]).statistic)
    # an empty cluster leaves a single cluster: undefined
    assert np.isnan(one_way_f([], [1.0, 2.0, 3.0]))


# --- the paper's table -----------------------------------------------------------


def test_embedded_example_is_the_published_table(appendix_a: pd.DataFrame) -> None:
    embedded = scandeval_transfer_scores()
    pd.testing.assert_frame_equal(embedded, appendix_a)
    assert len(embedded) == 50
    assert embedded.groupby("model_language").size().eq(5).all()


def test_scandeval_appendix_a_mainland_scandinavian_is_best(appendix_a: pd.DataFrame) -> None:
    """Nielsen 2023 §3.3: {da, no, sv} is the best benchmark group; full ranking vs scipy."""
    result = transfer_groups(appendix_a)
    assert set(result.best) == {"da", "no", "sv"}
    assert result.benchmark_languages == ("da", "fo", "is", "no", "sv")
    assert result.control_languages == ("ar", "de", "en", "fi", "nl", "ru")

    reference = _reference_ranking(appendix_a, BENCHMARK)
    assert len(result.groups) == len(reference) == 26  # 2^5 − 1 − 5 singletons
    assert list(result.groups["group"]) == [",".join(g) for g, _, _ in reference]
    np.testing.assert_allclose(
        result.groups["mean_f"].to_numpy(), [m for _, m, _ in reference], rtol=1e-12
    )
    for group, _, per_language in reference:
        ours = result.f_by_language(group)
        assert ours.keys() == per_language.keys()
        np.testing.assert_allclose(list(ours.values()), list(per_language.values()), rtol=1e-12)
    # the per-language F values of the winner, from scipy directly
    best = result.best_f
    for d in ("da", "no", "sv"):
        on_d = appendix_a[appendix_a["dataset_language"] == d]
        inside = on_d["model_language"].isin(["da", "no", "sv"])
        expected = f_oneway(on_d.loc[inside, "score"], on_d.loc[~inside, "score"]).statistic
        assert best[d] == pytest.approx(expected, rel=1e-12)
    assert result.groups.iloc[0]["mean_f"] == pytest.approx(33.337, abs=5e-4)
    # Insular Scandinavian {fo, is} is the best group without a mainland language
    insular = result.groups[~result.groups["group"].str.contains("da|no|sv")]
    assert insular.iloc[0]["group"] == "fo,is"


def test_scandeval_singletons_and_faroese(appendix_a: pd.DataFrame) -> None:
    """With min_size=1, {is} alone outscores {da, no, sv} — why the paper's groups have ≥ 2."""
    result = transfer_groups(appendix_a, min_size=1)
    reference = _reference_ranking(appendix_a, BENCHMARK, min_size=1)
    assert list(result.groups["group"]) == [",".join(g) for g, _, _ in reference]
    assert result.best == ("is",)
    assert list(result.groups["group"][:2]) == ["is", "da,no,sv"]
    # {fo}: there is no Faroese model, so the inside cluster is empty and F undefined
    fo = result.groups.set_index("group").loc["fo"]
    assert np.isnan(fo["mean_f"]) and fo["n_f"] == 0
    assert result.groups.iloc[-1]["group"] == "fo"
    assert any("undefined" in note for note in result.notes)
    # {da, fo} on fo: one Danish model against nine others (a one-member cluster)
    on_fo = appendix_a[appendix_a["dataset_language"] == "fo"]
    inside = on_fo["model_language"] == "da"
    expected = f_oneway(on_fo.loc[inside, "score"], on_fo.loc[~inside, "score"]).statistic
    assert result.f_by_language("da,fo")["fo"] == pytest.approx(expected, rel=1e-12)


# --- several datasets per language, repeats, missing scores -----------------------


def _planted(seed: int = 0, datasets_per_language: int = 3) -> pd.DataFrame:
    """Models transfer within {da, sv, nb}; the is model is weak; dataset difficulty varies."""
    rng = np.random.default_rng(seed)
    models = {"da": "da", "sv": "sv", "nb": "nb", "is": "is", "en": "en", "de": "de"}
    mainland = {"da", "sv", "nb"}
    rows = []
    for d in ["da", "sv", "nb", "is", "fo"]:
        for j in range(datasets_per_language):
            difficulty = rng.normal(0.0, 15.0)
            for model, lang in models.items():
                if lang == d:
                    level = 85.0 if lang in mainland else 58.0
                elif lang in mainland and d in mainland:
                    level = 75.0
                else:
                    level = 50.0
                rows.append(
                    {
                        "model": f"{model}-bert",
                        "model_language": lang,
                        "dataset": f"{d}-{j}",
                        "language": d,
                        "score": level + difficulty + rng.normal(0, 2.0),
                    }
                )
    return pd.DataFrame(rows)


def test_observations_model_averages_datasets_then_matches_scipy() -> None:
    frame = _planted()
    result = transfer_groups(frame)
    means = frame.groupby(["model", "model_language", "language"], as_index=False)["score"].mean()
    reference = _reference_ranking(
        means.rename(columns={"language": "dataset_language"}), ["da", "sv", "nb", "is", "fo"]
    )
    assert list(result.groups["group"]) == [",".join(g) for g, _, _ in reference]
    np.testing.assert_allclose(result.groups["mean_f"], [m for _, m, _ in reference], rtol=1e-12)
    assert set(result.best) == {"da", "nb", "sv"}
    assert result.per_language["n_inside"].max() + result.per_language["n_outside"].min() == 6


def test_observations_dataset_uses_each_model_dataset_score() -> None:
    frame = _planted()
    result = transfer_groups(frame, observations="dataset")
    reference = _reference_ranking(
        frame.rename(columns={"language": "dataset_language"}), ["da", "sv", "nb", "is", "fo"]
    )
    assert list(result.groups["group"]) == [",".join(g) for g, _, _ in reference]
    np.testing.assert_allclose(result.groups["mean_f"], [m for _, m, _ in reference], rtol=1e-12)
    row = result.per_language.set_index(["group", "language"]).loc[("da,nb,sv", "da")]
    assert (row["n_inside"], row["n_outside"]) == (9, 9)
    # dataset difficulty inflates the within variance, so per-dataset F is smaller
    by_model = transfer_groups(frame).groups.set_index("group")["mean_f"]
    assert result.groups.set_index("group")["mean_f"]["da,nb,sv"] < by_model["da,nb,sv"]


def test_repeated_rows_are_averaged_and_missing_scores_drop_out() -> None:
    frame = _planted(seed=3, datasets_per_language=1)
    seeds = pd.concat([frame.assign(score=frame["score"] + s) for s in (-1.0, 1.0)])
    once = transfer_groups(frame).groups
    twice = transfer_groups(seeds).groups
    pd.testing.assert_frame_equal(once, twice)

    gap = frame[~((frame["model"] == "de-bert") & (frame["language"] == "is"))]
    result = transfer_groups(gap)
    on_is = gap[gap["language"] == "is"]
    inside = on_is["model_language"].isin(["fo", "is"])
    expected = f_oneway(on_is.loc[inside, "score"], on_is.loc[~inside, "score"]).statistic
    assert result.f_by_language("fo,is")["is"] == pytest.approx(expected, rel=1e-12)
    assert any("not every model" in note for note in result.notes)


def test_zero_within_variance_gives_inf_and_sorts_first() -> None:
    rows = [
        {
            "model_language": m,
            "language": d,
            "score": 90.0 if m in ("a", "b") and d in ("a", "b") else 10.0,
        }
        for m in ("a", "b", "c", "x")
        for d in ("a", "b", "c")
    ]
    result = transfer_groups(pd.DataFrame(rows))
    assert result.best == ("a", "b")
    assert np.isinf(result.groups.iloc[0]["mean_f"])
    assert any("F = inf" in note for note in result.notes)
    payload = result.to_dict()
    assert payload["best_mean_f"] is None  # JSON has no infinity; the note says why


# --- errors, API, CLI ------------------------------------------------------------


def test_input_errors_name_file_line_and_field(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="model_language"):
        transfer_groups(pd.DataFrame({"language": ["da"], "score": [1.0]}))
    clash = _planted(datasets_per_language=1)
    clash.loc[4, "model_language"] = "xx"
    path = tmp_path / "scores.csv"
    clash.to_csv(path, index=False)
    with pytest.raises(
        InputError, match=r"line 12.*listed under two languages: 'en' here and 'xx' at line 6"
    ) as info:
        analyze_transfer(path)
    assert info.value.field == "model_language"
    bad = _planted(datasets_per_language=1).astype({"score": object})
    bad.loc[2, "score"] = "n/a"
    bad.to_csv(path, index=False)
    with pytest.raises(InputError, match=r"line 4.*score is not a finite number"):
        analyze_transfer(path)
    one_language = _planted(datasets_per_language=1).assign(model_language="da")
    with pytest.raises(InputError, match="at least two languages"):
        transfer_groups(one_language.drop(columns="model"))
    with pytest.raises(InputError, match="one of an input file, a store or example"):
        analyze_transfer()
    with pytest.raises(InputError, match="min_size is 6"):
        transfer_groups(_planted(datasets_per_language=1), min_size=6)
    many = pd.DataFrame(
        [{"model_language": m, "language": f"l{d}", "score": 1.0} for m in "ab" for d in range(13)]
    )
    with pytest.raises(InputError, match="at most 12 dataset languages"):
        transfer_groups(many)


def test_api_example_is_the_papers_table() -> None:
    result = analyze_transfer(example=True)
    assert result.best == ("da", "no", "sv")
    assert result.best_f["no"] == pytest.approx(58.5709, abs=1e-4)


def test_cli_transfer_example_json_has_per_language_f() -> None:
    out = CliRunner().invoke(app, ["analyze", "transfer", "--example", "--json"])
    assert out.exit_code == 0, out.output
    payload = json.loads(out.stdout)
    assert payload["best_group"] == ["da", "no", "sv"]
    assert set(payload["best_f_by_language"]) == {"da", "no", "sv"}
    first = payload["groups"][0]
    assert first["group"] == "da,no,sv" and first["languages"] == ["da", "no", "sv"]
    assert first["f_by_language"]["no"] == pytest.approx(58.5709, abs=1e-4)
    assert np.mean(list(first["f_by_language"].values())) == pytest.approx(first["mean_f"])
    assert len(payload["groups"]) == 26 and payload["control_languages"][0] == "ar"


def test_cli_transfer_file_table_and_help(tmp_path: Path) -> None:
    path = tmp_path / "scores.csv"
    _planted(seed=1).to_csv(path, index=False)
    runner = CliRunner()
    out = runner.invoke(app, ["analyze", "transfer", "--input", str(path), "--top", "3"])
    assert out.exit_code == 0, out.output
    assert "best group: da, nb, sv" in out.stdout
    out = runner.invoke(
        app, ["analyze", "transfer", "-i", str(path), "--observations", "dataset", "--json"]
    )
    assert out.exit_code == 0 and json.loads(out.stdout)["observations"] == "dataset"
    out = runner.invoke(app, ["analyze", "transfer", "--help"])
    assert out.exit_code == 0 and "--observations" in out.stdout and "--min-size" in out.stdout
    out = runner.invoke(app, ["analyze", "transfer"])
    assert out.exit_code != 0
    out = runner.invoke(app, ["analyze", "transfer", "--example", "--observations", "x"])
    assert out.exit_code != 0
