"""EuroEval / ScandEval importer: records before v17 (written by the euroeval
package's own BenchmarkResult) and v17+ Every Eval Ever records."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from glotbench.errors import InputError
from glotbench.importers.euroeval import import_euroeval, read_euroeval
from glotbench.store import Store

from .conftest import FIXTURES

EE = FIXTURES / "euroeval"
LEGACY = EE / "euroeval_benchmark_results.jsonl"
SCANDEVAL = EE / "scandeval_benchmark_results.jsonl"
EEE = EE / "euroeval_v17_eee_results.jsonl"


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_legacy_totals_replicates_and_metadata(store: Store) -> None:
    result = import_euroeval(store, LEGACY)
    assert result.status == "imported"
    scores = store.scores.frame()
    recs = _records(LEGACY)
    rec = recs[0]
    lang = "+".join(rec.get("languages") or rec["dataset_languages"])
    mine = scores[(scores["model"] == rec["model"]) & (scores["dataset"] == rec["dataset"])]
    total = mine[mine["replicate"].isna() & (mine["metric"] == "mcc")].iloc[0]
    # 0-100 -> 0-1; the _se field is 1.96 x SE
    assert total["score"] == pytest.approx(rec["results"]["total"]["test_mcc"] / 100)
    assert total["stderr"] == pytest.approx(rec["results"]["total"]["test_mcc_se"] / 1.96 / 100)
    assert total["language"] == lang and total["task"] == rec["task"]
    assert total["n"] == len(rec["results"]["raw"])
    meta = total["metadata"]
    assert meta["num_model_parameters"] == rec["num_model_parameters"]
    assert meta["vocabulary_size"] == rec["vocabulary_size"]
    assert meta["max_sequence_length"] == rec["max_sequence_length"]
    assert meta["generative"] == rec["generative"]
    reps = mine[mine["replicate"].notna() & (mine["metric"] == "mcc")].sort_values("replicate")
    assert list(reps["replicate"]) == list(range(len(rec["results"]["raw"])))
    assert np.allclose(reps["score"], [r["test_mcc"] for r in rec["results"]["raw"]])
    # the replicates' mean is the total, as EuroEval computes it
    assert reps["score"].mean() == pytest.approx(total["score"])
    # the Norwegian dataset keeps both its languages
    assert "nb+no" in set(scores["language"])


def test_scandeval_record_mode_in_model_name(store: Store) -> None:
    import_euroeval(store, SCANDEVAL)
    scores = store.scores.frame()
    assert set(scores["model"]) == {"fresh-decoder/llama-tiny (val)"}  # few-shot test is default
    assert set(scores["language"]) == {"sv"}
    assert scores["replicate"].notna().sum() == 20  # 10 iterations x (mcc, macro_f1)


def test_eee_records(store: Store) -> None:
    result = import_euroeval(store, EEE)
    assert result.status == "imported"
    recs = _records(EEE)
    scores = store.scores.frame()
    rec = recs[1]
    er = next(e for e in rec["evaluation_results"] if e["evaluation_name"] == "test_mcc")
    ci = er["score_details"]["uncertainty"]["confidence_interval"]
    row = scores[(scores["dataset"] == "scala-da") & (scores["metric"] == "mcc")]
    total = row[row["replicate"].isna()].iloc[0]
    assert total["score"] == pytest.approx(er["score_details"]["score"] / 100)
    assert total["stderr"] == pytest.approx((ci["upper"] - ci["lower"]) / 2 / 1.96 / 100)
    raw = json.loads(rec["eval_library"]["additional_details"]["raw_results"])
    reps = row[row["replicate"].notna()].sort_values("replicate")
    assert np.allclose(reps["score"], [r["test_mcc"] for r in raw])
    assert total["metadata"]["num_model_parameters"] == 7_000_000_000
    assert total["metadata"]["generative_type"] == "instruction_tuned"
    assert total["language"] == "da" and total["task"] == "linguistic-acceptability"


def test_same_numbers_from_both_layouts(tmp_path: Path) -> None:
    """A legacy record and its EEE form give the same stored scores."""
    rec = _records(LEGACY)[0]
    raw, total = rec["results"]["raw"], rec["results"]["total"]
    eee = {
        "model_info": {"id": rec["model"], "additional_details": {"generative": "false"}},
        "eval_library": {
            "version": "17.0.0",
            "additional_details": {
                "dataset": rec["dataset"],
                "task": rec["task"],
                "languages": json.dumps(rec.get("languages") or rec["dataset_languages"]),
                "raw_results": json.dumps(raw),
                "validation_split": "false",
            },
        },
        "evaluation_results": [
            {
                "evaluation_name": k,
                "score_details": {
                    "score": v,
                    "uncertainty": {
                        "confidence_interval": {
                            "lower": v - total[f"{k}_se"],
                            "upper": v + total[f"{k}_se"],
                        }
                    },
                },
            }
            for k, v in total.items()
            if not k.endswith("_se") and k != "num_failed_instances"
        ],
    }
    p = tmp_path / "eee.jsonl"
    p.write_text(json.dumps(eee) + "\n")
    key = ["model", "task", "language", "dataset", "metric", "replicate"]
    frames = []
    for path in (LEGACY, p):
        with Store.open(tmp_path / f"{path.stem}.duckdb") as s:
            import_euroeval(s, path)
            f = s.scores.frame()
            frames.append(f[(f["model"] == rec["model"]) & (f["dataset"] == rec["dataset"])])
    a, b = (f.sort_values(key).reset_index(drop=True) for f in frames)
    assert len(a) == len(b) > 0
    assert np.allclose(a["score"], b["score"]) and np.allclose(
        a["stderr"], b["stderr"], equal_nan=True
    )


def test_idempotent_and_nothing_lost(store: Store, tmp_path: Path) -> None:
    import_euroeval(store, LEGACY)
    n = len(store.scores.frame())
    assert import_euroeval(store, LEGACY).status == "skipped"
    copy = tmp_path / "copy.jsonl"
    shutil.copy(LEGACY, copy)
    again = import_euroeval(store, copy)  # same content, other name: skipped as well
    assert again.status == "skipped" and len(store.scores.frame()) == n
    # a changed total for a stored key is an error naming the line; nothing is written
    recs = _records(LEGACY)
    recs[2]["results"]["total"]["test_mcc"] += 1.0
    bad = tmp_path / "changed.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in recs))
    with pytest.raises(InputError) as err:
        import_euroeval(store, bad)
    assert err.value.line == 3 and err.value.field == "results.total.test_mcc"
    assert len(store.scores.frame()) == n


def test_truncated_line_and_missing_fields(tmp_path: Path) -> None:
    text = LEGACY.read_text()
    p = tmp_path / "t.jsonl"
    p.write_text(text[:-25])
    with pytest.raises(InputError, match="truncated") as err:
        read_euroeval(p)
    # EuroEval writes "\n" + record, so the last record is on line count("\n") + 1
    assert err.value.path == str(p) and err.value.line == text.count("\n") + 1
    recs = _records(LEGACY)
    del recs[1]["results"]["total"]
    p.write_text("".join(json.dumps(r) + "\n" for r in recs))
    with pytest.raises(InputError) as err:
        read_euroeval(p)
    assert (err.value.line, err.value.field) == (2, "results.total")
    eee = _records(EEE)
    del eee[0]["eval_library"]["additional_details"]["task"]
    p.write_text("".join(json.dumps(r) + "\n" for r in eee))
    with pytest.raises(InputError) as err:
        read_euroeval(p)
    assert (err.value.line, err.value.field) == (1, "eval_library.additional_details.task")


def test_primary_metric_is_declared_per_task(store: Store) -> None:
    """EuroEval's primary metric (the first of the task's metrics) is recorded on every row."""
    import_euroeval(store, LEGACY)
    import_euroeval(store, EEE)
    scores = store.scores.frame()
    pairs = zip(scores["task"], scores["metadata"], strict=True)
    declared = {(task, meta["primary_metric"]) for task, meta in pairs}
    assert declared == {
        ("sentiment-classification", "mcc"),
        ("named-entity-recognition", "micro_f1_no_misc"),
        ("linguistic-acceptability", "mcc"),
    }
    # the primary metric is the first test_ metric of each record's totals, as EuroEval writes them
    for rec in _records(LEGACY):
        first = next(k for k in rec["results"]["total"] if k.startswith("test_"))
        assert (rec["task"], first[len("test_") :]) in declared
