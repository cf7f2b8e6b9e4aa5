"""XTREME / XTREME-R submission importer (fixture: tests/fixtures/importers/xtreme)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from glotbench.errors import InputError
from glotbench.importers.xtreme import import_xtreme
from glotbench.store import Store

from .conftest import FIXTURES

XT = FIXTURES / "xtreme"


@pytest.fixture
def submission(tmp_path: Path) -> tuple[Path, Path]:
    shutil.copytree(XT, tmp_path / "xtreme")
    return tmp_path / "xtreme" / "predictions", tmp_path / "xtreme" / "labels"


def _score(store: Store, task: str, lang: str, metric: str) -> float:
    return float(store.stats.matrix(task, task, lang, metric).scores()[0])


def test_scores_per_example_match_xtreme_definitions(store: Store) -> None:
    result = import_xtreme(store, XT / "predictions", XT / "labels", model="sub")
    assert result.runs_added == 10 and result.status == "imported"
    # classification: plain accuracy over lines
    for lang in ("de", "en"):
        preds = (XT / "predictions" / "xnli" / f"test-{lang}.tsv").read_text().split()
        gold = (XT / "labels" / "xnli" / f"test-{lang}.tsv").read_text().split()
        expected = sum(p == g for p, g in zip(preds, gold, strict=True)) / len(gold)
        assert _score(store, "xnli", lang, "accuracy") == pytest.approx(expected)
    # tagging: seqeval span F1, as evaluate.py
    seqeval = pytest.importorskip("seqeval.metrics")
    for lang in ("de", "en"):
        read = [
            [
                s.split("\n")
                for s in (XT / kind / "panx" / f"test-{lang}.tsv").read_text().strip().split("\n\n")
            ]
            for kind in ("labels", "predictions")
        ]
        expected = seqeval.f1_score(read[0], read[1])
        assert _score(store, "panx", lang, "ner_f1") == pytest.approx(expected)
    # example ids: question ids for QA, line numbers for classification
    m = store.stats.matrix("xquad", "xquad", "en", "squad_f1")
    assert list(m.example_ids) == [f"en-q{i}" for i in range(7)]


def test_xtreme_averaging(store: Store) -> None:
    result = import_xtreme(store, XT / "predictions", XT / "labels", model="sub")
    agg = {(a["level"], a["name"], a["metric"]): a["score"] for a in result.aggregates}
    em = [_score(store, "xquad", lang, "squad_exact_match") for lang in ("de", "en")]
    f1 = [_score(store, "xquad", lang, "squad_f1") for lang in ("de", "en")]
    # unweighted over languages, QA = mean of EM and F1, on XTREME's 0-100 scale
    assert agg[("task", "xquad", "avg_squad_exact_match")] == pytest.approx(50 * sum(em))
    assert agg[("task", "xquad", "avg_metric")] == pytest.approx(25 * (sum(em) + sum(f1)))
    acc = [_score(store, "xnli", lang, "accuracy") for lang in ("de", "en")]
    assert agg[("task", "xnli", "avg_metric")] == pytest.approx(50 * sum(acc))
    tasks = [v for (lvl, _n, m), v in agg.items() if lvl == "task" and m == "avg_metric"]
    assert agg[("overall", "all_task", "avg_metric")] == pytest.approx(sum(tasks) / len(tasks))


def test_idempotent(store: Store) -> None:
    import_xtreme(store, XT / "predictions", XT / "labels", model="sub")
    again = import_xtreme(store, XT / "predictions", XT / "labels", model="sub")
    assert again.status == "skipped"
    assert len(store.runs.frame()) == 10


def test_unknown_task(store: Store, submission: tuple[Path, Path]) -> None:
    pred, gold = submission
    (pred / "xnli").rename(pred / "xnlii")
    with pytest.raises(InputError) as err:
        import_xtreme(store, pred, gold)
    assert err.value.field == "task" and err.value.path == str(pred / "xnlii")


def test_wrong_number_of_predictions(store: Store, submission: tuple[Path, Path]) -> None:
    pred, gold = submission
    path = pred / "xnli" / "test-de.tsv"
    path.write_text("\n".join(path.read_text().split()[:-2]) + "\n")
    with pytest.raises(InputError) as err:
        import_xtreme(store, pred, gold)
    assert err.value.path == str(path) and err.value.line == 19
    assert store.runs.frame().empty


def test_truncated_json_and_missing_field(store: Store, submission: tuple[Path, Path]) -> None:
    pred, gold = submission
    path = pred / "mewslix" / "test-de.json"
    path.write_text(path.read_text()[:-30])
    with pytest.raises(InputError, match="truncated") as err:
        import_xtreme(store, pred, gold)
    assert err.value.path == str(path) and err.value.line == 1
    shutil.copy(XT / "predictions" / "mewslix" / "test-de.json", path)
    xcopa = pred / "xcopa" / "test-et.jsonl"
    lines = xcopa.read_text().splitlines()
    rec = json.loads(lines[4])
    del rec["label"]
    lines[4] = json.dumps(rec)
    xcopa.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as err:
        import_xtreme(store, pred, gold)
    assert (err.value.path, err.value.line, err.value.field) == (str(xcopa), 5, "label")


def test_missing_labels_and_bucc(store: Store, submission: tuple[Path, Path]) -> None:
    pred, gold = submission
    (gold / "panx" / "test-en.tsv").unlink()
    with pytest.raises(InputError, match="no labels file") as err:
        import_xtreme(store, pred, gold)
    assert err.value.field == "language"
    (pred / "bucc2018").mkdir()
    with pytest.raises(InputError, match="BUCC"):
        import_xtreme(store, pred, gold)


def test_runs_wait_on_disk_and_store_the_same_as_in_memory(tmp_path: Path, store: Store) -> None:
    """With a spool, each (task, language) run leaves memory once scored; the store is the same."""
    from glotbench.importers.xtreme import read_xtreme
    from glotbench.ingest.spool import RunSpool

    in_memory, _ = read_xtreme(XT / "predictions", XT / "labels", model="sub")
    with RunSpool(tmp_path) as spool:
        spooled, _ = read_xtreme(XT / "predictions", XT / "labels", model="sub", spool=spool)
        assert all(run.spool is spool and run.example_ids.size == 0 for run in spooled)
        for kept, spilled in zip(in_memory, spooled, strict=True):
            ids, stats = spilled.arrays()
            assert ids.tolist() == kept.example_ids.tolist()
            np.testing.assert_array_equal(stats, kept.stats)
            np.testing.assert_array_equal(spilled.stat_totals(), kept.stats.sum(axis=0))
    # the import (which spools next to the store) stores exactly what was scored in memory
    import_xtreme(store, XT / "predictions", XT / "labels", model="sub")
    for kept in in_memory:
        r = kept.record
        ids, stats = store.stats.of_run(
            store.runs.frame(
                models=["sub"], tasks=[r.task], languages=[r.language], metrics=[r.metric]
            )["run_id"].iloc[0]
        )
        assert ids.tolist() == kept.example_ids.tolist()
        np.testing.assert_array_equal(stats, kept.stats)
    assert not any(p.name.startswith(".glotbench") for p in Path(store.path).parent.iterdir())
