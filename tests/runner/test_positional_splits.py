"""CoNLL-U (and table) splits from file names and from position ranges (van der Goot et al.)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from glotbench.errors import InputError
from glotbench.runner.datasets import build_dataset
from glotbench.runner.errors import DatasetError
from glotbench.runner.suite import load_suite


def write_conllu(path: Path, first: int, n: int) -> Path:
    """``n`` two-word sentences with sent_ids first..first+n-1 (document order)."""
    blocks = []
    for i in range(first, first + n):
        blocks.append(
            f"# sent_id = s{i}\n# text = w{i} ran\n"
            f"1\tw{i}\tw{i}\tNOUN\t_\t_\t2\tnsubj\t_\t_\n"
            "2\tran\trun\tVERB\t_\t_\t0\troot\t_\t_\n"
        )
    path.write_text("\n".join(blocks) + "\n", encoding="utf-8")
    return path


def numbers(records: list[dict]) -> list[int]:
    return [int(str(r["id"]).split("#s")[1]) for r in records]


def spec(tmp_path: Path, splits, paths=("tb-*.conllu",)) -> dict:
    return {
        "name": "tb",
        "task": "parsing",
        "language": "xx",
        "loader": "conllu",
        "paths": list(paths),
        "splits": splits,
    }


def test_splits_from_file_names(tmp_path: Path):
    write_conllu(tmp_path / "tb-train.conllu", 0, 5)
    write_conllu(tmp_path / "tb-dev.conllu", 5, 3)
    write_conllu(tmp_path / "tb-test.conllu", 8, 4)
    ds = build_dataset(spec(tmp_path, "files"), data_dir=tmp_path)
    assert numbers(ds.train) == [0, 1, 2, 3, 4]
    assert numbers(ds.validation) == [5, 6, 7]
    assert numbers(ds.test) == [8, 9, 10, 11]  # document order, not shuffled
    # source positions follow the files in sorted order (dev, test, train)
    assert [ds.source_positions[str(r["id"])] for r in ds.test] == [3, 4, 5, 6]


def test_file_name_without_a_split_is_refused(tmp_path: Path):
    write_conllu(tmp_path / "tb-other.conllu", 0, 2)
    with pytest.raises(DatasetError, match="-train, -dev or -test"):
        build_dataset(spec(tmp_path, "files"), data_dir=tmp_path)


def test_head_and_tail_of_one_treebank(tmp_path: Path):
    write_conllu(tmp_path / "tb-all.conllu", 0, 10)
    ds = build_dataset(
        spec(tmp_path, {"train": {"first": 0.8}, "test": {"last": 0.2}}), data_dir=tmp_path
    )
    assert numbers(ds.train) == list(range(8))
    assert numbers(ds.test) == [8, 9]
    # counts instead of shares, and a size that keeps a contiguous stretch of the range
    ds = build_dataset(
        spec(tmp_path, {"train": {"first": 3}, "test": {"last": 6, "size": 4}}), data_dir=tmp_path
    )
    assert numbers(ds.train) == [0, 1, 2]
    assert numbers(ds.test) == [4, 5, 6, 7]


def test_ranges_by_file_pattern(tmp_path: Path):
    write_conllu(tmp_path / "tb-dev.conllu", 0, 6)
    write_conllu(tmp_path / "tb-test.conllu", 6, 5)
    splits = {"train": {"file": "*-dev.conllu", "first": 4}, "test": {"file": "*-test.conllu"}}
    ds = build_dataset(spec(tmp_path, splits), data_dir=tmp_path)
    assert numbers(ds.train) == [0, 1, 2, 3]
    assert numbers(ds.test) == [6, 7, 8, 9, 10]


def test_overlapping_ranges_are_refused(tmp_path: Path):
    write_conllu(tmp_path / "tb-all.conllu", 0, 10)
    with pytest.raises(DatasetError, match="overlap"):
        build_dataset(
            spec(tmp_path, {"train": {"first": 0.8}, "test": {"last": 0.5}}), data_dir=tmp_path
        )


def test_ranges_of_a_jsonl_file(tmp_path: Path):
    rows = [{"id": f"r{i}", "text": f"t {i}", "label": "ab"[i % 2]} for i in range(10)]
    (tmp_path / "d.jsonl").write_text("\n".join(map(json.dumps, rows)) + "\n", encoding="utf-8")
    ds = build_dataset(
        {
            "name": "d",
            "task": "sentiment",
            "language": "xx",
            "loader": "jsonl",
            "paths": ["d.jsonl"],
            "splits": {"train": {"first": 6}, "test": {"last": 4}},
        },
        data_dir=tmp_path,
    )
    assert [r["id"] for r in ds.test] == ["r6", "r7", "r8", "r9"]


def test_suite_checks_ranges_with_file_and_line(tmp_path: Path):
    path = tmp_path / "s.yaml"
    path.write_text(
        "name: s\ndatasets:\n  - name: d\n    task: parsing\n    language: xx\n"
        "    loader: conllu\n    paths: [a.conllu]\n"
        "    splits: {train: {first: 0.8, last: 0.2}, test: {last: 0.2}}\n"
        "models:\n  - {name: m, kind: parse-baseline}\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError, match="not both") as info:
        load_suite(path)
    assert info.value.path == str(path) and info.value.line == 8


def test_splits_option_sizes_the_ranges(tmp_path: Path):
    (tmp_path / "ud").mkdir()
    suite = load_suite("datasize-parsers", data_dir=tmp_path)
    small = suite.select(split_sizes={"train": 64, "test": 128})
    for d in small.datasets:
        assert d.splits["train"]["size"] == 64 and d.splits["test"]["size"] == 128
    assert small.datasets[0].key() != suite.datasets[0].key()


@pytest.mark.slow
def test_datasize_parsers_on_the_shared_ud_data(shared_data: Path):
    suite = load_suite("datasize-parsers", data_dir=shared_data).select(
        datasets=["ud-en"], split_sizes={"train": 16, "test": 32}
    )
    ds = build_dataset(suite.datasets[0], data_dir=shared_data)
    # train: the head of the dev file; test: a contiguous stretch at the start of the test file
    assert all(str(r["id"]).startswith("en_ewt-ud-dev#") for r in ds.train)
    assert all(str(r["id"]).startswith("en_ewt-ud-test#") for r in ds.test)
    positions = [ds.source_positions[str(r["id"])] for r in ds.test]
    assert positions == list(range(positions[0], positions[0] + 32))
