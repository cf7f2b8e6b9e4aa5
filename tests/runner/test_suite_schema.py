"""Suites are checked when read: numbers coerced where unambiguous, every other mistake
refused by file, line and key (issue 25 item 5)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from glotbench.errors import InputError
from glotbench.ingest.yaml_files import key_lines, load_yaml
from glotbench.runner.models.options import check_options
from glotbench.runner.suite import builtin_suites, load_suite

HEAD = """\
name: checked
protocol: {iterations: 2, speed_iterations: 0}
datasets:
  - name: sent
    task: sentiment
    language: en
    loader: jsonl
    paths: [sent.jsonl]
    splits: predefined
models:
  - name: enc
    kind: hf-encoder
    options:
      path: some/model
"""


def write(folder: Path, text: str) -> Path:
    path = folder / "suite.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_exponent_numbers_are_floats_as_yaml_1_2_reads_them(tmp_path: Path) -> None:
    # the docs' own spelling: PyYAML (YAML 1.1) would read 2e-5 as the text "2e-5"
    suite = load_suite(write(tmp_path, HEAD + "      learning_rate: 2e-5\n"))
    assert suite.models[0].options["learning_rate"] == pytest.approx(2e-5)
    assert isinstance(suite.models[0].options["learning_rate"], float)
    assert load_yaml("[1E+3, -2e-5, .5e1, 1_000, '2e-5', v1e5, 1.5]") == [
        1000.0, -2e-5, 5.0, 1000, "2e-5", "v1e5", 1.5,
    ]  # fmt: skip


def test_numbers_written_as_text_are_read_as_numbers_where_wanted(tmp_path: Path) -> None:
    text = HEAD + '      learning_rate: "2e-5"\n      max_epochs: "3"\n      device: cpu\n'
    options = load_suite(write(tmp_path, text)).models[0].options
    assert options == {
        "path": "some/model",
        "learning_rate": 2e-5,
        "max_epochs": 3,
        "device": "cpu",
    }
    # values already of the right type are kept exactly as written (config hashes unchanged)
    given = {"path": "p", "word_ngrams": [1, 2], "C": 1}
    assert check_options("tfidf-logreg", {"word_ngrams": [1, 2], "C": 1}) == {
        k: v for k, v in given.items() if k != "path"
    }


@pytest.mark.parametrize(
    ("extra", "line", "field", "message"),
    [
        ("      max_epochs: three\n", 15, "models[0].options.max_epochs", "must be int"),
        (
            "      epochs: 3\n",
            15,
            "models[0].options.epochs",
            "option 'epochs'.*max_epochs",
        ),
        ("  - {name: b, kind: gpt}\n", 15, "models[1].kind", "unknown model kind 'gpt'"),
        ("seeds: 3\n", 15, "seeds", "unknown key 'seeds'"),
        ("splits: {train: -5}\n", 15, "splits", "non-negative"),
    ],
)
def test_mistakes_name_file_line_and_key(
    tmp_path: Path, extra: str, line: int, field: str, message: str
) -> None:
    path = write(tmp_path, HEAD + extra)
    with pytest.raises(InputError, match=message) as info:
        load_suite(path)
    assert (info.value.path, info.value.line, info.value.field) == (str(path), line, field)


@pytest.mark.parametrize(
    ("old", "new", "line", "field", "message"),
    [
        ("iterations: 2", "iterations: 0", 2, "protocol.iterations", "greater than or equal to 1"),
        ("iterations: 2", "iterations: many", 2, "protocol.iterations", "valid integer"),
        ("    language: en\n", "    language: en\n    colour: red\n", 7, "datasets[0].colour",
         "unknown key 'colour'"),
        ("    splits: predefined", "    splits: {test: -1}", 9, "datasets[0].splits",
         "non-negative"),
        ("    splits: predefined", "    splits: random", 9, "datasets[0].splits", "'predefined'"),
        ("    task: sentiment", "    task: sentimental", 5, "datasets[0].task", "sentimental"),
    ],
)  # fmt: skip
def test_schema_errors_point_at_the_key(
    tmp_path: Path, old: str, new: str, line: int, field: str, message: str
) -> None:
    path = write(tmp_path, HEAD.replace(old, new))
    with pytest.raises(InputError, match=message) as info:
        load_suite(path)
    assert (info.value.line, info.value.field) == (line, field)


def test_the_cli_reports_it_as_json(tmp_path: Path, cli: Callable[..., Any]) -> None:
    path = write(tmp_path, HEAD + "      max_epochs: three\n")
    out = cli("run", path, "--store", tmp_path / "s.duckdb", "--json")
    error = json.loads(out.stdout)["error"]
    assert out.exit_code == 2 and error["line"] == 15
    assert error["field"] == "models[0].options.max_epochs" and error["path"] == str(path)
    assert not (tmp_path / "s.duckdb").exists()


def test_key_lines_and_builtin_suites_pass() -> None:
    lines = key_lines("a:\n  - x: 1\n    y: [2, 3]\nb: 4\n")
    assert lines[("a", 0, "y")] == 3 and lines[("b",)] == 4 and lines[("a", 0)] == 2
    for name in builtin_suites():
        suite = load_suite(name, data_dir=Path(__file__).parent)  # paths are not opened
        assert suite.name == name
