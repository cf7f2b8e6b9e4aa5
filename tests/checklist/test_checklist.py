"""Template tests (issue 7, item 4): parsing, expansion, MFT/INV/DIR, CIs, storing."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from glotbench import api
from glotbench.checklist import (
    builtin_suites,
    case_statistics,
    expand_suite,
    parse_suite_text,
    predictions_from_callable,
    read_cases,
    score_cases,
    write_cases,
)
from glotbench.errors import InputError
from glotbench.resample import bootstrap

SHARED_CSV = (
    Path(__file__).resolve().parents[2].parent
    / "shared"
    / "data"
    / "multichecklist_xlmr_error_rates.csv"
)

POSITIVE = {"good", "great", "excellent", "wonderful", "lovely"}


def keyword_classifier(texts: list[str]) -> list[str]:
    """Positive iff a positive word occurs: ignores negation."""
    return [
        "positive" if POSITIVE & set(t.lower().strip(".").split()) else "negative" for t in texts
    ]


@pytest.fixture(scope="module")
def suite():
    return builtin_suites()[0]


@pytest.fixture(scope="module")
def english(suite):
    return expand_suite(suite, ["en"])


MINI = """\
suite: mini
labels: [negative, positive]
seed: 3
lexicon:
  da:
    noun:
      - {text: filmen, gender: c}
      - {text: hotellet, gender: n}
    pos:
      agree: gender
      items:
        - {forms: {c: god, n: godt}}
        - fremragende
  de:
    noun:
      - {text: Film, gender: m}
      - {text: Buch, gender: n}
      - {text: Suppe, gender: f}
    art:
      - {forms: {m: der, f: die, n: das}}
    pos: [gut]
tests:
  - name: pos
    type: MFT
    label: positive
    templates:
      da: ["{noun|cap} var {pos~noun}."]
      de: ["{art~noun|cap} {noun} war {pos}."]
"""


def _error(text: str) -> InputError:
    with pytest.raises(InputError) as info:
        parse_suite_text(text, "suite.yaml")
    return info.value


# --- parsing ---------------------------------------------------------------


def test_agreement_variants_are_rendered() -> None:
    cases = expand_suite(parse_suite_text(MINI, "mini.yaml"))
    texts = {c.texts[0] for c in cases}
    assert texts == {
        "Filmen var god.",
        "Filmen var fremragende.",
        "Hotellet var godt.",
        "Hotellet var fremragende.",
        "Der Film war gut.",
        "Das Buch war gut.",
        "Die Suppe war gut.",
    }


def test_shipped_suite_covers_required_languages(suite, english) -> None:
    assert {"da", "sv", "nb", "en"} <= set(suite.languages)
    assert {t.type for t in suite.tests} == {"MFT", "INV", "DIR"}
    da = expand_suite(suite, ["da"], ["simple_positive"], n=1000)
    assert "Hotellet var godt." in {c.texts[0] for c in da}
    assert "Filmen var god." in {c.texts[0] for c in da}
    assert not any("hotellet var god." in c.texts[0].lower() for c in da)


def test_error_unknown_test_type_names_line_and_field() -> None:
    err = _error(MINI.replace("type: MFT", "type: MTF"))
    assert err.path == "suite.yaml"
    assert err.line == MINI.splitlines().index("    type: MFT") + 1
    assert err.field == "tests[0] (pos).type"
    assert "MFT, INV, DIR" in str(err)


def test_error_missing_agreement_form_names_template_line() -> None:
    text = MINI.replace("{forms: {c: god, n: godt}}", "{forms: {c: god}}")
    err = _error(text)
    assert err.line == text.splitlines().index('      da: ["{noun|cap} var {pos~noun}."]') + 1
    assert err.field == "tests[0] (pos).templates.da[0]"
    assert "no form" in str(err) and "hotellet" in str(err)


def test_error_unknown_placeholder_list_and_malformed_placeholder() -> None:
    err = _error(MINI.replace("{pos~noun}.", "{adj~noun}."))
    assert "no fill-in list 'adj'" in str(err) and err.field == "tests[0] (pos).templates.da[0]"
    err = _error(MINI.replace("{pos~noun}.", "{pos~}."))
    assert "malformed placeholder" in str(err)


def test_error_unknown_key_and_yaml_syntax() -> None:
    err = _error(MINI.replace("    label: positive", "    lable: positive"))
    assert err.field == "tests[0].lable"
    assert err.line == MINI.splitlines().index("    label: positive") + 1
    err = _error(MINI.replace("labels: [negative, positive]", "labels: [negative, positive"))
    assert err.line is not None and "YAML" in str(err)
    err = _error(MINI.replace("label: positive", "label: neutral"))
    assert "not one of the suite's labels" in str(err) and err.field == "tests[0] (pos).label"


def test_error_inv_without_perturbation() -> None:
    text = MINI.replace("type: MFT\n    label: positive", "type: INV")
    err = _error(text)
    assert "needs perturbations" in str(err)


# --- expansion -------------------------------------------------------------


def test_expansion_is_deterministic_and_capped(suite) -> None:
    a = expand_suite(suite, ["sv"], n=7)
    b = expand_suite(builtin_suites()[0], ["sv"], n=7)
    assert [(c.case_id, c.texts) for c in a] == [(c.case_id, c.texts) for c in b]
    assert all(sum(c.test == t.name for c in a) == 7 for t in suite.tests)  # every test capped at n
    # a test's cases do not depend on which other tests are expanded
    only = expand_suite(suite, ["sv"], ["name_swap"], n=7)
    assert [c.texts for c in only] == [c.texts for c in a if c.test == "name_swap"]


def test_cases_file_roundtrip_and_errors(tmp_path: Path, english) -> None:
    path = write_cases(english, tmp_path / "cases.jsonl")
    back = read_cases(path)
    assert [(c.case_id, c.texts, c.expectation) for c in back] == [
        (c.case_id, c.texts, c.expectation) for c in english
    ]
    lines = path.read_text(encoding="utf-8").splitlines()
    bad = json.loads(lines[2])
    del bad["text"]
    lines[2] = json.dumps(bad)
    (tmp_path / "bad.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_cases(tmp_path / "bad.jsonl")
    assert (info.value.line, info.value.field) == (3, "text")


# --- semantics -------------------------------------------------------------


def _rates(cases, **models) -> pd.DataFrame:
    preds = {name: predictions_from_callable(cases, fn) for name, fn in models.items()}
    result, _ = score_cases(cases, preds, n_resamples=200)
    return result.rates.set_index(["model", "test", "language"])


def test_mft_negation_failure_known_exactly(english) -> None:
    rates = _rates(english, keyword=keyword_classifier)
    r = rates.loc[("keyword", slice(None), "en"), "failure_rate"].droplevel([0, 2])
    assert r["negated_positive"] == 1.0  # ignores negation: every case fails
    assert r["simple_positive"] == 0.0
    assert r["simple_negative"] == 0.0
    assert r["name_swap"] == 0.0
    assert r["intensifier"] == 0.0


def test_inv_failure_rate_matches_brute_force(english) -> None:
    def biased(texts: list[str]) -> list[str]:
        return [
            "negative" if "Emma" in t else lab
            for t, lab in zip(texts, keyword_classifier(texts), strict=True)
        ]

    rates = _rates(english, biased=biased)
    inv = [c for c in english if c.test == "name_swap"]
    # a case fails iff the name swap changes the prediction somewhere
    expected = np.mean([len(set(biased(list(c.texts)))) > 1 for c in inv])
    assert 0 < expected < 1
    assert rates.loc[("biased", "name_swap", "en"), "failure_rate"] == pytest.approx(expected)


def test_dir_with_probabilities_and_hard_labels(english) -> None:
    def probs(texts: list[str]) -> list[dict[str, float]]:
        out = []
        for t, lab in zip(texts, keyword_classifier(texts), strict=True):
            p = 0.9 if lab == "positive" else 0.1
            if " really " in t:
                p = 0.6 if lab == "positive" else 0.4  # the intensifier weakens confidence
            out.append({"positive": p, "negative": 1 - p})
        return out

    rates = _rates(english, probs=probs, hard=keyword_classifier)
    # every intensifier case has a 'really' variant, which lowers confidence
    assert rates.loc[("probs", "intensifier", "en"), "failure_rate"] == 1.0
    # with hard labels the label never changes, so nothing fails
    assert rates.loc[("hard", "intensifier", "en"), "failure_rate"] == 0.0


def test_dir_not_applicable_cases_are_excluded() -> None:
    text = MINI.replace(
        "type: MFT\n    label: positive",
        "type: DIR\n    expect: {label: positive, direction: increasing}",
    ).replace(
        '"{noun|cap} var {pos~noun}."',
        '["{noun|cap} var {pos~noun}.", "{noun|cap} var meget {pos~noun}."]',
    )
    text = text.replace('      de: ["{art~noun|cap} {noun} war {pos}."]\n', "")
    cases = expand_suite(parse_suite_text(text, "dir.yaml"))

    def pred(texts: list[str]) -> list[str]:  # originals with 'god' negative, others positive
        return ["negative" if " god" in t and "meget" not in t else "positive" for t in texts]

    stats = case_statistics(cases, predictions_from_callable(cases, pred))
    # originals predicted negative cannot lower P(positive): not applicable
    applicable = [c for c in cases if pred([c.texts[0]])[0] == "positive"]
    assert stats[:, 1].sum() == len(applicable) == 2
    assert stats[:, 0].sum() == 0


def test_failure_rate_cis_equal_engine_bootstrap(english) -> None:
    def biased(texts: list[str]) -> list[str]:
        return [
            "negative" if "James" in t or "concert" in t else lab
            for t, lab in zip(texts, keyword_classifier(texts), strict=True)
        ]

    models = {"keyword": keyword_classifier, "biased": biased}
    preds = {name: predictions_from_callable(english, fn) for name, fn in models.items()}
    result, matrices = score_cases(english, preds, n_resamples=500, seed=11)
    idx = [i for i, c in enumerate(english) if c.test == "simple_positive"]
    stats = np.stack([case_statistics(english, preds[m])[idx] for m in models])
    engine = bootstrap(
        stats,
        lambda s: s[..., 0] / s[..., 1],
        n_resamples=500,
        seed=11,
        names=list(models),
    )
    rows = result.rates.set_index(["model", "test", "language"])
    for j, m in enumerate(models):
        row = rows.loc[(m, "simple_positive", "en")]
        assert row["failure_rate"] == pytest.approx(engine.estimates[j])
        assert row["ci_low"] == pytest.approx(engine.low[j])
        assert row["ci_high"] == pytest.approx(engine.high[j])
        assert row["standard_error"] == pytest.approx(engine.standard_errors[j])
    assert rows.loc[("biased", "simple_positive", "en"), "failure_rate"] > 0


# --- storing and API / CLI -------------------------------------------------


def test_store_runs_listed_by_show_and_idempotent(tmp_path: Path, english) -> None:
    store = tmp_path / "s.duckdb"
    cases = tmp_path / "cases.jsonl"
    write_cases(english, cases)
    res = api.checklist_score(cases, predict=keyword_classifier, model="kw", store=store)
    assert res.stored["runs_written"] == 5 and res.stored["runs_skipped"] == 0
    summary = api.show_store(store)
    frame = summary.to_frame()
    assert set(frame["task"]) == {
        "checklist:simple_positive",
        "checklist:simple_negative",
        "checklist:negated_positive",
        "checklist:name_swap",
        "checklist:intensifier",
    }
    assert set(frame["model"]) == {"kw"} and set(frame["language"]) == {"en"}
    again = api.checklist_score(cases, predict=keyword_classifier, model="kw", store=store)
    assert again.stored["runs_written"] == 0 and again.stored["runs_skipped"] == 5
    assert api.show_store(store).counts["runs"] == 5
    # stored score is the pass rate: 1 - failure rate
    from glotbench.store.store import Store

    with Store.open(store, read_only=True) as st:
        runs = st.runs.frame(tasks=["checklist:negated_positive"])
        _, stats = st.stats.of_run(runs["run_id"][0])
    assert stats[:, 0].sum() == 0  # every negation case failed
    with pytest.raises(InputError, match="already stored with different results"):
        api.checklist_score(cases, predict=lambda t: ["positive"] * len(t), model="kw", store=store)


@pytest.mark.slow
def test_cli_expand_score_example(tmp_path: Path, cli) -> None:
    cases = tmp_path / "cases.jsonl"
    res = cli("checklist", "expand", "--language", "da", "--n", "5", "--out", cases, "--json")
    assert res.exit_code == 0, res.stderr
    payload = json.loads(res.stdout)
    assert payload["n_cases"] == 25 and payload["suites"] == ["sentiment"]
    rows = [json.loads(line) for line in cases.read_text(encoding="utf-8").splitlines()]
    preds = tmp_path / "model_a.jsonl"
    preds.write_text(
        "".join(json.dumps({"id": r["id"], "label": "positive"}) + "\n" for r in rows),
        encoding="utf-8",
    )
    store = tmp_path / "s.duckdb"
    res = cli("checklist", "score", cases, preds, "--store", store, "--replicates", "100", "--json")
    assert res.exit_code == 0, res.stderr
    out = json.loads(res.stdout)
    by_test = {r["test"]: r for r in out["failure_rates"]}
    assert by_test["simple_negative"]["failure_rate"] == 1.0
    assert by_test["simple_positive"]["failure_rate"] == 0.0
    assert out["stored"]["runs_written"] == 5
    res = cli("show", "--store", store)
    assert res.exit_code == 0 and "checklist:name_swap" in res.out
    # a predictions file that misses an id is an error naming the id
    preds.write_text("".join(preds.read_text().splitlines(keepends=True)[1:]), encoding="utf-8")
    res = cli("checklist", "score", cases, preds)
    assert res.exit_code != 0 and "no prediction for text" in res.err
    res = cli("checklist", "example", "--json")
    assert res.exit_code == 0
    example = json.loads(res.stdout)
    assert example["models"] == ["XLM-R"] and "Intensifiers" in example["tests"]


def test_embedded_xlmr_table_matches_shared_csv() -> None:
    from glotbench.data import multichecklist_xlmr_error_rates

    embedded = multichecklist_xlmr_error_rates()
    assert list(embedded.columns) == ["model", "language", "test", "error_rate"]
    assert embedded["error_rate"].between(0, 100).all()
    if not SHARED_CSV.exists():
        pytest.skip(f"shared data not found at {SHARED_CSV} (../shared/data is absent)")
    shared = pd.read_csv(SHARED_CSV, dtype={"model": str, "language": str, "test": str})
    pd.testing.assert_frame_equal(embedded, shared)


# The "Avg" row of Table 5 of Ruder et al. 2021 (XTREME-R), typed from the paper.
TABLE5_AVG = {
    "Comparisons": 47.3,
    "Intensifiers": 90.9,
    "Properties": 64.8,
    "Job vs Nationality": 26.7,
    "Animal vs Vehicles": 51.6,
    "Animal vs Vehicles 2": 32.8,
}


def test_embedded_table_reproduces_table5_avg_row() -> None:
    """All 50 languages x 6 tests; per-test means equal Table 5's Avg row within rounding."""
    from glotbench.api import checklist_example

    example = checklist_example()
    table = example.table
    assert table["language"].nunique() == 50 and table["test"].nunique() == 6
    assert len(table) == 300 and not table.duplicated(["language", "test"]).any()
    assert set(table["model"]) == {"XLM-R"}
    means = table.groupby("test")["error_rate"].mean()
    for test, published in TABLE5_AVG.items():
        # the cells and the printed mean are each rounded to one decimal, so the mean of the
        # printed cells may differ from the printed mean by up to 0.05 + 0.05
        assert abs(means[test] - published) <= 0.1 + 1e-9, test
    by_test = example.by_test.set_index("test")
    assert by_test["published_avg"].to_dict() == TABLE5_AVG
    # a few cells typed from Table 5 (en, fi, sw)
    cell = table.set_index(["language", "test"])["error_rate"]
    assert cell["en", "Comparisons"] == 7.0 and cell["en", "Intensifiers"] == 90.4
    assert cell["fi", "Comparisons"] == 10.7 and cell["fi", "Intensifiers"] == 79.8
