"""Cross-lingual protocols in suites (issue 16.1): zero-shot, translate-train, translate-train-all.

A synthetic suite whose languages label the same words oppositely makes the
training data of every run visible in its score: a model trained on language
``a`` is perfect on ``a`` and always wrong on ``b``. References: the splits
the loader builds (which training records a derived dataset holds), the
stored metadata, and ``scipy.stats.f_oneway`` for the transfer analysis of a
CI-sized ``scandi-transfer`` run on the shared UD data.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from glotbench import api
from glotbench.errors import InputError
from glotbench.metrics import get_metric
from glotbench.runner.executors import build_datasets
from glotbench.runner.suite import load_suite
from glotbench.store import Store

WORDS = ["alpha", "beta", "gamma", "delta", "omega", "sigma"]


def _write_language(path: Path, flip: bool, n: int = 60) -> None:
    """Texts of one word; label pos iff the word is in the first half (flipped in 'b')."""
    rows = []
    for i in range(n):
        word = WORDS[i % len(WORDS)]
        positive = (WORDS.index(word) < 3) != flip
        rows.append({"id": f"{path.stem}{i}", "text": word, "label": "pos" if positive else "neg"})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _suite(folder: Path, protocol: str, sources: str = "") -> Path:
    _write_language(folder / "a.jsonl", flip=False)
    _write_language(folder / "b.jsonl", flip=True)
    _write_language(folder / "c.jsonl", flip=False)
    path = folder / f"{protocol}.yaml"
    path.write_text(
        f"""
name: toy-transfer
protocol: {{iterations: 2, seed: 3, bootstrap_train: false, speed_iterations: 0}}
transfer: {{protocol: {protocol}{sources}}}
splits: {{train: 30, validation: 6, test: 24}}
datasets:
  - {{name: sent-a, task: sentiment, language: a, loader: jsonl, paths: [a.jsonl]}}
  - {{name: sent-b, task: sentiment, language: b, loader: jsonl, paths: [b.jsonl]}}
  - {{name: sent-c, task: sentiment, language: c, loader: jsonl, paths: [c.jsonl]}}
models:
  - {{name: lr, kind: tfidf-logreg}}
""",
        encoding="utf-8",
    )
    return path


def _accuracy(store: Path) -> dict[tuple[str, str], float]:
    """(model, target language) -> accuracy recomputed from the stored statistics."""
    out = {}
    with Store.open(store, read_only=True) as handle:
        runs = handle.runs.frame(metrics=["mcc"])
        for row in runs.itertuples(index=False):
            _, s = handle.stats.of_run(row.run_id)
            score = get_metric("mcc", **row.metric_config).score(s.sum(axis=0))
            out[(row.model, row.language)] = float(score)
    return out


@pytest.mark.slow
def test_zero_shot_trains_on_the_source_language(tmp_path: Path):
    suite = _suite(tmp_path, "zero-shot", ", sources: [a, b]")
    jobs, _ = load_suite(suite).jobs()
    assert {(j.model.name, j.dataset.name, j.train_from) for j in jobs if j.iteration == 0} == {
        (f"lr@{s}", f"sent-{t}", (f"sent-{s}",)) for s in "ab" for t in "abc"
    }
    datasets = build_datasets(load_suite(suite), jobs)
    derived = datasets["sent-b<-sent-a"]
    assert [r["id"] for r in derived.train] == [r["id"] for r in datasets["sent-a"].train]
    assert [r["id"] for r in derived.test] == [r["id"] for r in datasets["sent-b"].test]

    store = tmp_path / "z.duckdb"
    summary = api.run_benchmark(suite, store=store)
    assert summary.completed == len(jobs)
    score = _accuracy(store)
    # a and c share the labelling rule, b flips it: MCC +1 within, -1 across
    assert score[("lr@a", "a")] == pytest.approx(1.0)
    assert score[("lr@a", "c")] == pytest.approx(1.0)
    assert score[("lr@a", "b")] == pytest.approx(-1.0)
    assert score[("lr@b", "b")] == pytest.approx(1.0)
    with Store.open(store, read_only=True) as handle:
        runs = handle.runs.frame()
    for row in runs.itertuples(index=False):
        meta = row.model_metadata
        source = row.model.split("@")[1]
        assert meta["transfer_protocol"] == "zero-shot"
        assert meta["source_languages"] == [source] and meta["target_language"] == row.language
        assert meta["trained_on"] == [f"sent-{source}"] and meta["base_model"] == "lr"
    # resuming runs nothing; an in-language run of the same model does not collide
    again = api.run_benchmark(suite, store=store)
    assert again.completed == 0 and again.skipped == len(jobs)


@pytest.mark.slow
def test_translate_train_uses_the_target_training_data(tmp_path: Path):
    suite = _suite(tmp_path, "translate-train")
    jobs, _ = load_suite(suite).jobs()
    assert {j.model.name for j in jobs} == {"lr@translate-train"}
    assert all(j.train_from == (j.dataset.name,) for j in jobs)
    store = tmp_path / "t.duckdb"
    api.run_benchmark(suite, store=store)
    assert list(_accuracy(store).values()) == pytest.approx([1.0, 1.0, 1.0])
    with Store.open(store, read_only=True) as handle:
        meta = handle.runs.frame()["model_metadata"]
    assert all(m["source_languages"] == [m["target_language"]] for m in meta)


@pytest.mark.slow
def test_translate_train_all_pools_every_language(tmp_path: Path):
    suite = _suite(tmp_path, "translate-train-all")
    jobs, _ = load_suite(suite).jobs()
    datasets = build_datasets(load_suite(suite), jobs)
    pooled = datasets[jobs[0].dataset_key]
    assert len(pooled.train) == sum(len(datasets[f"sent-{x}"].train) for x in "abc")
    assert len({r["id"] for r in pooled.train}) == len(pooled.train)  # ids kept unique
    store = tmp_path / "all.duckdb"
    api.run_benchmark(suite, store=store)
    with Store.open(store, read_only=True) as handle:
        runs = handle.runs.frame()
    assert set(runs["model"]) == {"lr@all"}
    assert all(m["source_languages"] == ["a", "b", "c"] for m in runs["model_metadata"])
    # the store's transfer analysis needs one source language per model
    with pytest.raises(InputError, match="no zero-shot transfer runs"):
        api.analyze_transfer(store=store)


def test_unknown_source_language(tmp_path: Path):
    suite = _suite(tmp_path, "zero-shot", ", sources: [a, x]")
    with pytest.raises(InputError, match="'x' have no dataset") as info:
        load_suite(suite)
    assert info.value.field == "transfer.sources" and str(suite) in str(info.value)
    with pytest.raises(InputError, match="'zero-shot', 'translate-train'") as info:
        load_suite(_suite(tmp_path, "zero-shots"))
    assert info.value.field == "transfer.protocol" and info.value.line == 4


@pytest.mark.slow
def test_scandi_transfer_end_to_end(tmp_path: Path, shared_data: Path):
    store = tmp_path / "scandi-transfer.duckdb"
    summary = api.run_benchmark(
        "scandi-transfer",
        store=store,
        data_dir=shared_data,
        iterations=2,
        split_sizes={"train": 120, "validation": 20, "test": 120},
    )
    assert not summary.failures
    with Store.open(store, read_only=True) as handle:
        runs = handle.runs.frame()
    sources = {m["source_languages"][0] for m in runs["model_metadata"]}
    assert sources == {"da", "nb", "sv", "en", "fo"}
    assert set(runs["language"]) == {"da", "nb", "sv", "en", "fo"}

    result = api.analyze_transfer(store=store)
    # reference: the per-language F from scipy on scores recomputed here from the statistics
    primary = {"linguistic_acceptability": "mcc", "pos": "token_accuracy", "ner": "ner_f1"}
    cells: dict[tuple[str, str], list[float]] = {}
    with Store.open(store, read_only=True) as handle:
        for row in runs.itertuples(index=False):
            if row.metric != primary[row.task]:
                continue
            _, s = handle.stats.of_run(row.run_id)
            score = float(get_metric(row.metric, **row.metric_config).score(s.sum(axis=0)))
            key = (row.model_metadata["source_languages"][0], row.dataset, row.language)
            cells.setdefault(key, []).append(score)
    means = {k: float(np.mean(v)) for k, v in cells.items()}
    group = result.best
    for language, f_value in result.f_by_language(group).items():
        per_model: dict[str, list[float]] = {}
        for (source, _dataset, target), value in means.items():
            if target == language:
                per_model.setdefault(source, []).append(value)
        model_means = {m: float(np.mean(v)) for m, v in per_model.items()}
        inside = [v for m, v in model_means.items() if m in group]
        outside = [v for m, v in model_means.items() if m not in group]
        assert f_value == pytest.approx(stats.f_oneway(inside, outside).statistic, rel=1e-9)
    payload = result.to_dict()
    assert payload["scores"] and payload["best_group"] == list(group)
