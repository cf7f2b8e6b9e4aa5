"""Learning curves in the runner: ``protocol.train_sizes`` / ``--train-sizes``."""

from __future__ import annotations

from pathlib import Path

import pytest

from glotbench.errors import InputError
from glotbench.runner.datasets import build_dataset
from glotbench.runner.executors import build_datasets
from glotbench.runner.suite import load_suite, parse_train_sizes

from .conftest import write_sentiment


def curve_suite(folder: Path, sizes: str = "[8, 32, 96]", iterations: int = 2) -> Path:
    write_sentiment(folder / "sent.jsonl", n=400)
    path = folder / "lc.yaml"
    path.write_text(
        f"""
name: lc
protocol: {{iterations: {iterations}, seed: 7, speed_iterations: 0, train_sizes: {sizes}}}
splits: {{train: 60, validation: 10, test: 200}}
datasets:
  - {{name: sent, task: sentiment, language: en, loader: jsonl, paths: [sent.jsonl]}}
models:
  - {{name: lr, kind: tfidf-logreg}}
""",
        encoding="utf-8",
    )
    return path


def test_parse_train_sizes():
    assert parse_train_sizes("128, 64,256") == [64, 128, 256]
    for bad, match in (
        ("64,x", "look like"),
        ("64,64", "distinct"),
        ("0", "positive"),
        ("", "look like"),
    ):
        with pytest.raises(InputError, match=match):
            parse_train_sizes(bad)


def test_one_job_per_size_with_nested_training_sets(tmp_path: Path):
    suite = load_suite(curve_suite(tmp_path))
    jobs, _ = suite.jobs()
    assert [(j.dataset.train_size, j.iteration) for j in jobs] == [
        (k, i) for k in (8, 32, 96) for i in range(2)
    ]
    datasets = build_datasets(suite, jobs)
    by_size = {j.dataset.train_size: datasets[j.dataset_key] for j in jobs}
    ids = {k: [r["id"] for r in d.train] for k, d in by_size.items()}
    assert {k: len(v) for k, v in ids.items()} == {8: 8, 32: 32, 96: 96}
    # the training split grows to the largest size; smaller sizes are its prefixes
    assert ids[8] == ids[32][:8] and ids[32] == ids[96][:32]
    # one test and validation split for every size, distinct content hashes
    assert len({tuple(r["id"] for r in d.test) for d in by_size.values()}) == 1
    assert len({tuple(r["id"] for r in d.validation) for d in by_size.values()}) == 1
    assert len({d.content_hash for d in by_size.values()}) == 3
    # each prefix is (nearly) label-stratified: both labels at size 8
    assert {r["label"] for r in by_size[8].train} == {"pos", "neg"}


def test_nested_subsets_of_splits_from_positions(tmp_path: Path):
    write_sentiment(tmp_path / "sent.jsonl", n=100)
    spec = {
        "name": "sent",
        "task": "sentiment",
        "language": "en",
        "loader": "jsonl",
        "paths": ["sent.jsonl"],
        "splits": {"train": {"first": 60}, "test": {"last": 40}},
    }
    subsets = [
        {r["id"] for r in build_dataset({**spec, "train_size": k}, data_dir=tmp_path).train}
        for k in (10, 30, 60)
    ]
    assert [len(s) for s in subsets] == [10, 30, 60]
    assert subsets[0] < subsets[1] < subsets[2]
    with pytest.raises(Exception, match="larger than the training split"):
        build_dataset({**spec, "train_size": 61}, data_dir=tmp_path)


@pytest.mark.slow
def test_run_stores_each_size_as_its_own_config_and_resumes(tmp_path: Path):
    from glotbench.runner.benchmark import run_benchmark
    from glotbench.store.store import Store

    path = curve_suite(tmp_path, sizes="[8, 96]")
    store = tmp_path / "lc.duckdb"
    first = run_benchmark(path, store=store)
    assert first.completed == 4 and not first.failures
    again = run_benchmark(path, store=store)
    assert again.skipped == 4 and again.runs_written == 0
    with Store.open(store, read_only=True) as s:
        runs = s.runs.frame(metrics=["mcc"])
    sizes = [m["train_size"] for m in runs["model_metadata"]]
    assert sorted(sizes) == [8, 8, 96, 96]
    assert runs.groupby("config_hash").size().tolist() == [2, 2]
    # the command-line option replaces the suite's sizes
    more = run_benchmark(path, store=store, train_sizes=[8, 32, 96])
    assert more.skipped == 4 and more.completed == 2


def test_bad_train_sizes_in_a_suite_name_the_line(tmp_path: Path):
    path = curve_suite(tmp_path, sizes="[8, 0]")
    with pytest.raises(InputError, match="positive") as info:
        load_suite(path)
    assert info.value.line == 3 and info.value.field == "protocol.train_sizes"


@pytest.mark.slow
def test_learning_curves_suite_ci_sized(shared_data: Path, tmp_path: Path):
    """The built-in suite, CI-sized, offline from ../shared/data: taggers improve with data."""
    import json

    from typer.testing import CliRunner

    from glotbench.cli import app

    store = tmp_path / "lc.duckdb"
    runner = CliRunner()
    ran = runner.invoke(
        app,
        [
            "run",
            "learning-curves",
            "--data-dir",
            str(shared_data),
            "--iterations",
            "2",
            "--train-sizes",
            "16,64",
            "--splits",
            "test=128",
            "--dataset",
            "pos-nb",
            "--store",
            str(store),
            "--json",
        ],
    )
    assert ran.exit_code == 0, ran.output
    assert json.loads(ran.stdout)["completed"] == 2 * 2 * 2
    out = runner.invoke(
        app, ["analyze", "learning-curve", "--store", str(store), "--draws", "300", "--json"]
    )
    assert out.exit_code == 0, out.output
    rows = json.loads(out.stdout)["curves"]
    for model in ("tagger-word", "tagger-full"):
        score = {r["train_size"]: r for r in rows if r["model"] == model}
        assert score[64]["score"] > score[16]["score"] and score[16]["n_examples"] == 128
