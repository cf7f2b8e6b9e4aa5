"""Run keys, run ids and content digests."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from pydantic import ValidationError

from glotbench.store import RunKey, RunRecord, run_id_for, stats_digest


def test_run_id_follows_the_documented_recipe() -> None:
    key = ["xlmr", "xnli", "xnli", "de", 3, "", "accuracy"]
    text = json.dumps(key, separators=(",", ":"), ensure_ascii=False)
    expected = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    assert run_id_for("xlmr", "xnli", "xnli", "de", 3, "", "accuracy") == expected


def test_run_id_is_stable_across_versions() -> None:
    # a changed recipe would orphan every stored run: this value must never change
    assert run_id_for("m", "d", "t", "en", None, "", "accuracy") == "5204a618ba573499"


def test_every_key_field_changes_the_id() -> None:
    base = dict(
        model="m", dataset="d", task="t", language="en", seed=1, config_hash="", metric="acc"
    )
    ids = {RunKey(**base).run_id}
    for field, value in [
        ("model", "m2"),
        ("dataset", "d2"),
        ("task", "t2"),
        ("language", "de"),
        ("seed", 2),
        ("config_hash", "abc"),
        ("metric", "f1"),
    ]:
        ids.add(RunKey(**{**base, field: value}).run_id)
    assert len(ids) == 8
    assert RunKey(**{**base, "seed": None}).run_id not in ids


def test_key_defaults_dataset_to_task_and_normalises_metric() -> None:
    key = RunKey(model="m", task="xnli", language="en", seed=0, metric=" Accuracy ")
    assert key.dataset == "xnli"
    assert key.metric == "accuracy"
    assert key.config_hash == ""
    assert key.run_id == run_id_for("m", "xnli", "xnli", "en", 0, "", "accuracy")


def test_key_rejects_empty_strings() -> None:
    with pytest.raises(ValidationError):
        RunKey(model=" ", task="t", language="en", metric="accuracy")


def test_record_key_matches_record() -> None:
    rec = RunRecord(
        model="m",
        task="t",
        language="en",
        seed=None,
        metric="accuracy",
        stat_names=("value", "count"),
    )
    assert rec.key.run_id == rec.run_id
    assert rec.created_at is not None


def test_stats_digest_depends_on_ids_order_values_and_names() -> None:
    stats = np.array([[1.0, 1.0], [0.0, 1.0]])
    base = stats_digest(["a", "b"], stats, ("value", "count"))
    assert base == stats_digest(
        np.array(["a", "b"], dtype=object), stats.copy(), ("value", "count")
    )
    assert base != stats_digest(["b", "a"], stats, ("value", "count"))
    assert base != stats_digest(["a", "b"], stats[::-1], ("value", "count"))
    assert base != stats_digest(["a", "b"], stats, ("v", "count"))
