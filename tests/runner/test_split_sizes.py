"""`glotbench run --splits` / `run_benchmark(split_sizes=...)`: smaller uniform splits."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from glotbench.cli import app
from glotbench.errors import InputError
from glotbench.runner.suite import load_suite, parse_split_sizes


def test_parse_split_sizes():
    assert parse_split_sizes("train=64, test=128") == {"train": 64, "test": 128}
    assert parse_split_sizes("validation=0") == {"validation": 0}
    for bad, match in (
        ("train:64", "look like"),
        ("dev=3", "unknown split"),
        ("train=-1", "non-negative"),
        ("test=x", "look like"),
        (",", "at least one"),
    ):
        with pytest.raises(InputError, match=match):
            parse_split_sizes(bad)


def test_select_overrides_the_sizes_of_every_dataset(tmp_path: Path):
    (tmp_path / "ud").mkdir()
    suite = load_suite("datasize-taggers", data_dir=tmp_path)  # uniform splits
    small = suite.select(split_sizes={"train": 64, "test": 128})
    for d in small.datasets:
        assert d.splits == {"train": 64, "validation": 0, "test": 128}
    # the original is unchanged, and the dataset keys differ (no resuming into full runs)
    assert suite.datasets[0].splits == {"train": 1024, "validation": 0, "test": 2048}
    assert small.datasets[0].key() != suite.datasets[0].key()


def test_predefined_splits_cannot_be_resized(tmp_path: Path):
    path = tmp_path / "s.yaml"
    path.write_text(
        "name: s\ndatasets:\n  - {name: d, task: sentiment, language: da, paths: [x.jsonl], "
        "splits: predefined}\nmodels:\n  - {name: m, kind: majority}\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError, match="predefined"):
        load_suite(path).select(split_sizes={"test": 10})


def test_cli_run_rejects_bad_splits(tmp_path: Path):
    result = CliRunner().invoke(
        app,
        [
            "run",
            "datasize-parsers",
            "--data-dir",
            str(tmp_path),
            "--splits",
            "train=x",
            "--store",
            str(tmp_path / "s.duckdb"),
            "--json",
        ],
    )
    assert result.exit_code != 0
    assert isinstance(result.exception, InputError)
    assert "train=128,test=256" in str(result.exception)
