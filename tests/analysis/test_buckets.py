"""Buckets: scores equal recomputation on the bucket's examples; CIs come from the engine."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import matthews_corrcoef
from typer.testing import CliRunner

from glotbench import api
from glotbench.analysis.buckets import (
    analyze_buckets,
    bucket_masks,
    bucket_replicates,
    example_attributes,
    lexical_overlap,
)
from glotbench.cli import app
from glotbench.metrics import get_metric
from glotbench.resample.weights import BLOCK, make_support, weight_block
from glotbench.store import RunRecord, Store


def _data(n: int = 300, seed: int = 0) -> tuple[pd.DataFrame, dict[str, list[str]], list[str]]:
    rng = np.random.default_rng(seed)
    words = ["a", "b", "c", "d", "e", "f"]
    texts = [" ".join(rng.choice(words, size=int(rng.integers(1, 30)))) for _ in range(n)]
    gold = list(rng.choice(["POS", "NEG", "NEU"], size=n))
    preds = {}
    for name, skill in (("good", 0.8), ("weak", 0.55)):
        lengths = np.array([len(t.split()) for t in texts])
        p_right = np.where(lengths > 15, skill - 0.2, skill)  # both worse on long texts
        right = rng.random(n) < p_right
        preds[name] = [
            g if r else str(rng.choice(["POS", "NEG", "NEU"]))
            for g, r in zip(gold, right, strict=True)
        ]
    attrs = pd.DataFrame(
        {
            "example_id": [f"e{i}" for i in range(n)],
            "text": texts,
            "label": gold,
            "domain": rng.choice(["news", "web"], size=n),
        }
    )
    return attrs, preds, gold


def test_attributes_lengths_overlap_and_user_columns() -> None:
    frame = pd.DataFrame(
        {
            "example_id": [1, 2],
            "question": ["who is it", "where"],
            "context": ["it is me", "x"],
            "genre": ["a", "b"],
        }
    )
    attrs = example_attributes(frame)
    assert list(attrs.index) == ["1", "2"]
    assert attrs["question_length"].tolist() == [3, 1]
    assert attrs["context_length"].tolist() == [3, 1]
    assert attrs["lexical_overlap"].tolist() == pytest.approx([2 / 3, 0.0])
    assert attrs["genre"].tolist() == ["a", "b"]
    assert lexical_overlap("", "x") == 0.0


def test_equal_frequency_and_discrete_buckets() -> None:
    values = pd.Series(np.arange(100, dtype=float))
    labels, masks, kind = bucket_masks(values, n_buckets=4)
    assert kind == "continuous" and masks.sum(axis=1).tolist() == [25, 25, 25, 25]
    assert labels[0] == "0–24"
    assert (masks.sum(axis=0) == 1).all()
    labels, masks, kind = bucket_masks(pd.Series(["x", "y", "x", None]))
    assert kind == "discrete" and labels == ["x", "y"] and masks.sum(axis=1).tolist() == [2, 1]


@pytest.mark.parametrize("metric_name", ["accuracy", "mcc"])
def test_bucket_scores_equal_recomputation_on_the_bucket(metric_name: str) -> None:
    attrs_frame, preds, gold = _data()
    attrs = example_attributes(attrs_frame)
    metric = get_metric(metric_name).fit(preds["good"] + preds["weak"], gold + gold)
    stats = np.stack([metric.stats(preds[m], gold) for m in ("good", "weak")])
    result = analyze_buckets(
        stats,
        metric,
        attrs,
        systems=["good", "weak"],
        columns=["text_length", "label", "domain"],
        n_resamples=200,
    )
    assert set(result.buckets["attribute"]) == {"text_length", "label", "domain"}
    for attribute in ("text_length", "label", "domain"):
        labels, masks, _ = bucket_masks(attrs[attribute].reset_index(drop=True))
        for label, mask in zip(labels, masks, strict=True):
            idx = np.flatnonzero(mask)
            for name in ("good", "weak"):
                p = [preds[name][i] for i in idx]
                g = [gold[i] for i in idx]
                direct = (
                    np.mean(np.array(p) == np.array(g))
                    if metric_name == "accuracy"
                    else matthews_corrcoef(g, p)
                )
                table = result.buckets
                row = table[
                    (table["attribute"] == attribute)
                    & (table["bucket"] == label)
                    & (table["system"] == name)
                ]
                assert row["score"].item() == pytest.approx(direct, abs=1e-12)
                assert row["n_examples"].item() == idx.size
                assert row["ci_low"].item() <= row["score"].item() <= row["ci_high"].item()


def test_bucket_intervals_are_the_engines_weight_rows_times_the_mask() -> None:
    attrs_frame, preds, gold = _data(n=120, seed=1)
    metric = get_metric("accuracy")
    stats = np.stack([metric.stats(preds[m], gold) for m in ("good", "weak")])
    masks = np.stack([np.arange(120) < 50, np.arange(120) >= 50]).astype(float)
    reps = bucket_replicates(stats, metric, masks, n_resamples=BLOCK, seed=7, compress=False)
    # rebuild W from the engine's own block: every system and bucket shares it
    support = make_support(stats.transpose(1, 0, 2).reshape(120, -1), False)
    weights = weight_block("multinomial", 7, 0, support, BLOCK)
    for b in range(2):
        for s in range(2):
            summed = (weights * masks[b]) @ stats[s]
            expected = summed[:, 0] / summed[:, 1]
            np.testing.assert_allclose(reps[:, b, s], expected)


def test_pairwise_diagnosis_finds_where_each_system_wins() -> None:
    n = 400
    rng = np.random.default_rng(5)
    group = np.where(np.arange(n) < n // 2, "g1", "g2")
    a_right = np.where(group == "g1", rng.random(n) < 0.9, rng.random(n) < 0.5)
    b_right = np.where(group == "g1", rng.random(n) < 0.5, rng.random(n) < 0.9)
    stats = np.stack(
        [np.column_stack([a_right, np.ones(n)]), np.column_stack([b_right, np.ones(n)])]
    ).astype(float)
    attrs = pd.DataFrame({"group": group}, index=[str(i) for i in range(n)])
    result = analyze_buckets(
        stats, get_metric("accuracy"), attrs, systems=["A", "B"], n_resamples=500
    )
    row = result.diagnosis.iloc[0]
    assert row["a_best_bucket"] == "g1" and row["a_best_significant"]
    assert row["b_best_bucket"] == "g2" and row["b_best_significant"]
    pair = result.pairwise.set_index("bucket")
    assert pair.loc["g1", "ci_low"] > 0 > pair.loc["g2", "ci_high"]
    json.dumps(result.to_dict(), allow_nan=False)


def test_seeds_of_a_system_are_averaged() -> None:
    n = 50
    stats = np.stack(
        [np.column_stack([np.arange(n) % k == 0, np.ones(n)]) for k in (2, 3, 5)]
    ).astype(float)
    attrs = pd.DataFrame({"label": ["x"] * n}, index=[str(i) for i in range(n)])
    result = analyze_buckets(
        stats,
        get_metric("accuracy"),
        attrs,
        systems=["s", "t"],
        system_of_run=["s", "s", "t"],
        n_resamples=50,
    )
    scores = result.buckets.set_index("system")["score"]
    assert scores["s"] == pytest.approx((25 / 50 + 17 / 50) / 2)
    assert scores["t"] == pytest.approx(10 / 50)


def test_cli_and_api_from_a_store(tmp_path: Path) -> None:
    attrs_frame, preds, gold = _data(n=80, seed=2)
    metric = get_metric("accuracy")
    store_path = tmp_path / "s.duckdb"
    with Store.open(store_path) as store:
        for name in ("good", "weak"):
            record = RunRecord(
                model=name,
                task="sent",
                language="da",
                seed=0,
                metric="accuracy",
                stat_names=("value", "count"),
            )
            ids = list(attrs_frame["example_id"])[::-1]  # stored in another order
            store.runs.write(record, ids, metric.stats(preds[name], gold)[::-1])
    attrs_path = tmp_path / "attrs.csv"
    attrs_frame.to_csv(attrs_path, index=False)
    result = api.analyze_buckets(
        store=store_path,
        attributes=attrs_path,
        task="sent",
        language="da",
        metric="accuracy",
        n_resamples=100,
    )
    label_rows = result.buckets.query("attribute == 'label' and system == 'good'")
    for _, row in label_rows.iterrows():
        idx = [i for i, g in enumerate(gold) if g == row["bucket"]]
        direct = np.mean([preds["good"][i] == gold[i] for i in idx])
        assert row["score"] == pytest.approx(direct)
    out = CliRunner().invoke(
        app,
        [
            "analyze",
            "buckets",
            "--store",
            str(store_path),
            "--attributes",
            str(attrs_path),
            "--task",
            "sent",
            "--language",
            "da",
            "--metric",
            "accuracy",
            "--attribute",
            "text_length",
            "--replicates",
            "100",
            "--json",
        ],
    )
    assert out.exit_code == 0, out.output
    payload = json.loads(out.output)
    assert {r["attribute"] for r in payload["buckets"]} == {"text_length"}
    assert payload["diagnosis"][0]["system_a"] == "good"
    bad = CliRunner().invoke(
        app,
        [
            "analyze",
            "buckets",
            "--store",
            str(store_path),
            "--attributes",
            str(attrs_path),
            "--task",
            "sent",
            "--language",
            "da",
            "--metric",
            "accuracy",
            "--attribute",
            "nope",
        ],
    )
    assert bad.exit_code != 0
