"""Metric-aware validation on import (issue 14, item 2): one test per nonsense
input that used to be stored silently. Each must fail with a GlotbenchError
naming the file, the line and the field, and leave the store unchanged."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from glotbench.errors import InputError
from glotbench.importers.euroeval import import_euroeval
from glotbench.importers.lm_eval import import_lm_eval, rounding_tolerance
from glotbench.ingest.tidy import import_examples_file, import_scores_file
from glotbench.metrics import get_metric
from glotbench.store import Store

from ..store.conftest import TABLES
from .conftest import FIXTURES

LEGACY = FIXTURES / "euroeval" / "euroeval_benchmark_results.jsonl"
EX_HEADER = "model,task,language,seed,example_id,metric"
SC_HEADER = "model,task,language,metric,score"


def store_contents(store: Store) -> dict[str, list[str]]:
    """Every table's rows of an open store (sorted reprs)."""
    con = store.connection
    return {
        t: sorted(repr(r) for r in con.execute(f"SELECT * FROM {t}").fetchall()) for t in TABLES
    }


def _fails(store: Store, call, path: Path, line: int | None, field: str | None, words: str):
    before = store_contents(store)
    with pytest.raises(InputError) as err:
        call()
    assert err.value.path is not None and Path(err.value.path).name == path.name, err.value
    assert err.value.line == line, err.value
    assert err.value.field == field, err.value
    assert words in str(err.value), err.value
    assert store_contents(store) == before
    return err.value


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


# -- tidy examples -------------------------------------------------------------


def test_accuracy_value_above_its_count(store: Store, tmp_path: Path) -> None:
    p = _write(
        tmp_path,
        "e.csv",
        f"{EX_HEADER},value,count\nm,t,de,1,a,accuracy,1,1\nm,t,de,1,b,accuracy,5,1\n",
    )
    _fails(store, lambda: import_examples_file(store, p), p, 3, "value", "value = 5 with count = 1")


def test_negative_count(store: Store, tmp_path: Path) -> None:
    p = _write(
        tmp_path,
        "e.csv",
        f"{EX_HEADER},correct,words\nm,t,de,1,a,las,3,4\nm,t,de,1,b,las,0,-2\n",
    )
    _fails(store, lambda: import_examples_file(store, p), p, 3, "words", "non-negative integer")


def test_ner_correct_above_predicted(store: Store, tmp_path: Path) -> None:
    p = _write(
        tmp_path,
        "e.jsonl",
        "\n".join(
            json.dumps(
                {
                    "model": "m",
                    "task": "ner",
                    "language": "de",
                    "seed": 1,
                    "example_id": i,
                    "metric": "ner_f1",
                    "correct": c,
                    "predicted": p_,
                    "gold": g,
                }
            )
            for i, (c, p_, g) in enumerate([(1, 2, 2), (3, 1, 4)])
        )
        + "\n",
    )
    err = _fails(
        store, lambda: import_examples_file(store, p), p, 2, "correct", "correct = 3 exceeds"
    )
    assert "predicted = 1" in str(err)


def test_per_example_accuracy_score_of_7(store: Store, tmp_path: Path) -> None:
    p = _write(
        tmp_path, "e.csv", f"{EX_HEADER},score\nm,t,de,1,a,accuracy,1\nm,t,de,1,b,accuracy,7\n"
    )
    _fails(store, lambda: import_examples_file(store, p), p, 3, "score", "lies in [0, 1]")


# -- tidy scores ---------------------------------------------------------------


@pytest.mark.parametrize("value", ["57.3", "-3"])
def test_aggregate_accuracy_outside_0_1(store: Store, tmp_path: Path, value: str) -> None:
    p = _write(tmp_path, "s.csv", f"{SC_HEADER}\nm,t,de,accuracy,0.5\nm,t,fr,accuracy,{value}\n")
    err = _fails(store, lambda: import_scores_file(store, p), p, 3, "score", "outside the range")
    assert ("divide them by 100" in str(err)) == (value == "57.3")


def test_bleu_is_on_0_100_and_mcc_on_minus_1_1(store: Store, tmp_path: Path) -> None:
    p = _write(tmp_path, "s.csv", f"{SC_HEADER}\nm,t,de,bleu,31.5\nm,t,fr,mcc,-0.4\n")
    assert import_scores_file(store, p).rows == 2
    q = _write(tmp_path, "t.csv", f"{SC_HEADER}\nm,u,de,mcc,-1.5\n")
    _fails(store, lambda: import_scores_file(store, q), q, 2, "score", "[-1, 1]")


def test_ragged_first_data_row(store: Store, tmp_path: Path) -> None:
    longer = _write(tmp_path, "a.csv", f"{SC_HEADER}\nm,t,de,accuracy,0.5,x\nm,u,de,accuracy,0.6\n")
    _fails(store, lambda: import_scores_file(store, longer), longer, 2, None, "6 fields")
    shorter = _write(tmp_path, "b.csv", f"{SC_HEADER}\nm,t,de,0.5\nm,u,de,accuracy,0.6\n")
    _fails(store, lambda: import_scores_file(store, shorter), shorter, 2, None, "4 fields")


def test_duplicate_json_keys_in_tidy_jsonl(store: Store, tmp_path: Path) -> None:
    line = '{"model": "m", "task": "t", "language": "de", "metric": "accuracy", "score": 0.5'
    p = _write(tmp_path, "s.jsonl", f'{line}}}\n{line}, "score": 0.9}}\n')
    _fails(store, lambda: import_scores_file(store, p), p, 2, "score", "appears twice")


def test_nul_byte_in_a_name(store: Store, tmp_path: Path) -> None:
    p = _write(tmp_path, "s.csv", f"{SC_HEADER}\nm,t,de,accuracy,0.5\nm\x00x,t,de,accuracy,0.6\n")
    _fails(store, lambda: import_scores_file(store, p), p, 3, "model", "control character")


# -- EuroEval ------------------------------------------------------------------


def _euroeval(tmp_path: Path, edit) -> Path:
    lines = LEGACY.read_text().splitlines()
    rec = json.loads(lines[1])
    edit(rec)
    lines[1] = json.dumps(rec)
    p = tmp_path / "euroeval_benchmark_results.jsonl"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_euroeval_total_of_5000(store: Store, tmp_path: Path) -> None:
    def edit(rec):
        rec["results"]["total"]["test_micro_f1_no_misc"] = 5000.0

    p = _euroeval(tmp_path, edit)
    _fails(
        store,
        lambda: import_euroeval(store, p),
        p,
        2,
        "results.total.test_micro_f1_no_misc",
        "score 50 is outside the range [0, 1]",
    )


def test_euroeval_empty_language(store: Store, tmp_path: Path) -> None:
    def edit(rec):
        rec["languages"] = []
        rec.pop("dataset_languages", None)

    p = _euroeval(tmp_path, edit)
    _fails(store, lambda: import_euroeval(store, p), p, 2, "languages", "no language")


def test_euroeval_nan_total_is_noted_not_dropped_silently(store: Store, tmp_path: Path) -> None:
    def edit(rec):
        rec["results"]["total"]["test_micro_f1"] = float("nan")

    p = _euroeval(tmp_path, edit)
    result = import_euroeval(store, p)
    notes = " ".join(result.notes)
    assert "1 NaN score(s) not stored" in notes and "line 2" in notes
    assert "results.total.test_micro_f1" in notes
    totals = store.scores.frame()
    assert not totals["score"].isna().any()


def test_euroeval_duplicate_key(store: Store, tmp_path: Path) -> None:
    lines = LEGACY.read_text().splitlines()
    assert lines[0] == ""  # the fixture starts with a blank line: the first record is on line 2
    lines[1] = lines[1][:-1] + ', "model": "other"}'
    p = tmp_path / "euroeval_benchmark_results.jsonl"
    p.write_text("\n".join(lines) + "\n")
    _fails(store, lambda: import_euroeval(store, p), p, 2, "model", "appears twice")


# -- lm-eval -------------------------------------------------------------------


def _lm_samples(folder: Path, task: str) -> Path:
    return sorted((folder / "tiny-gpt2").glob(f"samples_{task}_*.jsonl"))[0]


def _edit_samples(path: Path, values: dict[int, float]) -> None:
    lines = path.read_text().splitlines()
    for i, v in values.items():
        rec = json.loads(lines[i])
        rec["acc"] = v
        lines[i] = json.dumps(rec)
    path.write_text("\n".join(lines) + "\n")


def test_lm_eval_acc_samples_outside_0_1(store: Store, lm_eval_copy: Path) -> None:
    path = _lm_samples(lm_eval_copy, "xnli_de")
    _edit_samples(path, {2: 7.5, 5: -1.0})
    err = _fails(store, lambda: import_lm_eval(store, lm_eval_copy), path, 3, "acc", "7.5")
    assert "1 more example" in str(err) and "xnli_de" in str(err)


def test_lm_eval_samples_disagree_with_results(store: Store, lm_eval_copy: Path) -> None:
    path = _lm_samples(lm_eval_copy, "xnli_fr")
    rec = json.loads(path.read_text().splitlines()[0])
    _edit_samples(path, {0: 1.0 - rec["acc"]})
    err = _fails(
        store, lambda: import_lm_eval(store, lm_eval_copy), path, None, "doc_id", "disagree"
    )
    assert "task 'xnli_fr'" in str(err)


def test_lm_eval_nan_result_is_noted(store: Store, lm_eval_copy: Path) -> None:
    results = sorted((lm_eval_copy / "tiny-gpt2").glob("results_*.json"))[0]
    data = json.loads(results.read_text())
    data["results"]["tinyboolq"]["acc_norm,none"] = float("nan")
    results.write_text(json.dumps(data))  # Python writes NaN, as lm-eval does
    result = import_lm_eval(store, lm_eval_copy)
    notes = " ".join(result.notes)
    assert "1 NaN score(s) not stored" in notes and "results.tinyboolq.acc_norm,none" in notes


def test_lm_eval_duplicate_key_in_results(store: Store, lm_eval_copy: Path) -> None:
    results = sorted((lm_eval_copy / "tiny-gpt2").glob("results_*.json"))[0]
    text = results.read_text()
    text = text.replace('"model_name":', '"model_name": "x", "model_name":', 1)
    assert text.count('"model_name"') == 2
    results.write_text(text)
    before = store_contents(store)
    with pytest.raises(InputError, match="appears twice") as err:
        import_lm_eval(store, lm_eval_copy)
    assert err.value.field == "model_name" and err.value.line is not None
    assert store_contents(store) == before


# -- the declarations themselves -----------------------------------------------


def test_rounding_tolerance() -> None:
    assert rounding_tolerance(0.5833, 1.0) == pytest.approx(5e-5, rel=1e-3)
    assert rounding_tolerance(0.5833333333333334, 1.0) == pytest.approx(1e-6)
    assert rounding_tolerance(1.0569622451404816, 100.0) == pytest.approx(1e-4)


def test_real_statistics_satisfy_the_declared_constraints() -> None:
    # statistics computed by the metrics themselves always pass their own checks
    cases = {
        "accuracy": (["a", "b", "a"], ["a", "a", "a"]),
        "ner_f1": (
            [["B-PER", "I-PER", "O"], ["O", "B-LOC"]],
            [["B-PER", "O", "O"], ["O", "B-LOC"]],
        ),
        "las": ([[(0, "root"), (1, "obj")]], [[(0, "root"), (1, "nsubj")]]),
        "bleu": (["the cat sat on the mat", "a b"], ["the cat sat on a mat", "a c"]),
        "chrf++": (["the cat sat on the mat", "a b"], ["the cat sat on a mat", "a c"]),
        "f1_binary": ([1, 0, 1], [1, 1, 0]),
        "squad_f1": (["the cat", "x"], [["a cat"], ["y"]]),
    }
    for name, (pred, ref) in cases.items():
        metric = get_metric(name)
        assert metric.check_stats(metric.stats(pred, ref)) == [], name
    mcc = get_metric("mcc").fit(["a", "b", "c"], ["a", "a", "c"])
    assert mcc.check_stats(mcc.stats(["a", "b", "c"], ["a", "a", "c"])) == []
    # and a tampered row breaks them: tp of a class above its gold count
    S = mcc.stats(["a", "b", "c"], ["a", "a", "c"])
    S[1, 0] = 2.0
    problems = mcc.check_stats(S)
    assert {p.column for p in problems} == {"tp[a]"} and all(p.first == 1 for p in problems)
    assert math.isclose(get_metric("mcc").score_range[0], -1.0)
    assert np.all([get_metric(n).score_range == (0.0, 100.0) for n in ("bleu", "chrf")])


def test_metrics_listing_shows_ranges_and_constraints() -> None:
    from glotbench import api

    rows = {m["name"]: m for m in api.list_metrics()}
    assert rows["accuracy"]["score_range"] == [0.0, 1.0]
    assert rows["bleu"]["score_range"] == [0.0, 100.0]
    assert rows["mcc"]["score_range"] == [-1.0, 1.0]
    assert "correct ≤ predicted" in rows["ner_f1"]["constraints"]
    assert "correct_4 ≤ total_4" in rows["bleu"]["constraints"]


def test_percent_scores_are_declared_and_stored_on_the_metric_scale(
    store: Store, tmp_path: Path
) -> None:
    p = _write(
        tmp_path,
        "s.csv",
        "model,task,language,metric,score,stderr\n"
        "m,xnli,de,accuracy,81.7,1.2\nm,mt,de,bleu,31.5,\nm,sa,da,mcc,-12.5,\n",
    )
    _fails(store, lambda: import_scores_file(store, p), p, 2, "score", "percent=True")
    result = import_scores_file(store, p, percent=True)
    assert result.scores_added == 3
    got = store.scores.frame().set_index("metric")
    assert got.loc["accuracy", "score"] == pytest.approx(0.817)
    assert got.loc["accuracy", "stderr"] == pytest.approx(0.012)
    assert got.loc["bleu", "score"] == pytest.approx(31.5)  # BLEU is 0-100 in the store
    assert got.loc["mcc", "score"] == pytest.approx(-0.125)


@pytest.mark.slow
def test_cli_import_scores_percent(tmp_path: Path, cli) -> None:
    p = _write(tmp_path, "s.csv", f"{SC_HEADER}\nm,xnli,de,accuracy,81.7\n")
    store_path = tmp_path / "s.duckdb"
    bad = cli("import", "scores", str(p), "--store", str(store_path), "--json")
    assert bad.exit_code == 2 and "outside the range" in bad.stdout
    ok = cli("import", "scores", str(p), "--store", str(store_path), "--percent", "--json")
    assert ok.exit_code == 0, ok.stdout
    assert json.loads(ok.stdout)["scores_added"] == 1


def test_nul_byte_in_a_harness_model_name(store: Store, tmp_path: Path) -> None:
    def edit(rec):
        rec["model"] = "fresh\x00encoder"

    p = _euroeval(tmp_path, edit)
    err = _fails(store, lambda: import_euroeval(store, p), p, 2, "model", "control character")
    assert "'fresh\\x00encoder'" in str(err)
