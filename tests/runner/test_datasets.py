from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from glotbench.runner.datasets import build_dataset, load_conllu, load_table, uniform_splits
from glotbench.runner.errors import DatasetError

from .conftest import write_sentiment

CONLLU = """# sent_id = a1
# text = Kari bor i Oslo.
1\tKari\tKari\tPROPN\t_\t_\t2\tnsubj\t_\tname=B-PER
2\tbor\tbo\tVERB\t_\t_\t0\troot\t_\tname=O
3\ti\ti\tADP\t_\t_\t4\tcase\t_\tname=O
4\tOslo\tOslo\tPROPN\t_\t_\t2\tobl\t_\tSpaceAfter=No|name=B-GPE_LOC
5\t.\t$.\tPUNCT\t_\t_\t2\tpunct\t_\tname=O

"""


def test_uniform_splits_sizes_stratified_deterministic():
    records = [{"id": str(i), "label": "a" if i % 4 else "b"} for i in range(1000)]
    parts, notes = uniform_splits(
        records, sizes={"train": 400, "validation": 100, "test": 200}, seed=1, stratify="label"
    )
    assert notes == []
    assert {k: len(v) for k, v in parts.items()} == {"train": 400, "validation": 100, "test": 200}
    assert Counter(r["label"] for r in parts["test"]) == {"a": 150, "b": 50}
    assert Counter(r["label"] for r in parts["train"]) == {"a": 300, "b": 100}
    ids = [r["id"] for p in parts.values() for r in p]
    assert len(set(ids)) == len(ids)
    again, _ = uniform_splits(
        records, sizes={"train": 400, "validation": 100, "test": 200}, seed=1, stratify="label"
    )
    assert again == parts
    other, _ = uniform_splits(
        records, sizes={"train": 400, "validation": 100, "test": 200}, seed=2, stratify="label"
    )
    assert other != parts


def test_uniform_splits_scale_down_with_note():
    records = [{"id": str(i), "label": i % 2} for i in range(100)]
    parts, notes = uniform_splits(records, seed=0, stratify="label")
    assert notes and "scaled" in notes[0]
    assert len(parts["test"]) == int(2048 * 100 / 3328)


def test_conllu_ner_from_misc(tmp_path: Path):
    f = tmp_path / "x.conllu"
    f.write_text(CONLLU, encoding="utf-8")
    [rec] = load_conllu(f, ner=True)
    assert rec["id"] == "x#a1"
    assert rec["ner"] == ["B-PER", "O", "O", "B-GPE_LOC", "O"]
    assert rec["heads"] == [2, 0, 4, 2, 2]
    assert rec["space_after"][3] is False
    bad = tmp_path / "bad.conllu"
    bad.write_text(CONLLU.replace("name=O", "_", 1), encoding="utf-8")
    with pytest.raises(DatasetError, match="name="):
        load_conllu(bad, ner=True)


@pytest.mark.slow
def test_norne_ner_dataset(shared_data: Path):
    ds = build_dataset(
        {
            "name": "norne-nb",
            "task": "ner",
            "language": "nb",
            "loader": "conllu",
            "paths": ["norne/no_bokmaal-norne-*.conllu"],
        },
        data_dir=shared_data,
    )
    assert ds.sizes() == {"train": 1024, "validation": 256, "test": 2048}
    assert "B-PER" in ds.labels and "I-ORG" in ds.labels
    assert len(ds.content_hash) == 64


def test_jsonl_csv_and_field_mapping(tmp_path: Path):
    (tmp_path / "a.csv").write_text("sentence,y\nhej,pos\nnej,neg\n", encoding="utf-8")
    recs = load_table("a.csv", base=tmp_path, fields={"text": "sentence", "label": "y"})
    assert recs == [
        {"text": "hej", "label": "pos", "id": "a#1"},
        {"text": "nej", "label": "neg", "id": "a#2"},
    ]
    (tmp_path / "b.jsonl").write_text(
        '{"id": 1, "text": "x", "label": "a"}\nnot json\n', encoding="utf-8"
    )
    with pytest.raises(DatasetError, match="line 2"):
        load_table(tmp_path / "b.jsonl")


def test_content_hash_names_the_data(tmp_path: Path):
    write_sentiment(tmp_path / "s.jsonl")
    spec = {
        "name": "s",
        "task": "sentiment",
        "language": "en",
        "loader": "jsonl",
        "paths": ["s.jsonl"],
        "splits": {"train": 60, "validation": 10, "test": 40},
    }
    a = build_dataset(spec, data_dir=tmp_path)
    b = build_dataset(spec, data_dir=tmp_path)
    c = build_dataset({**spec, "split_seed": 1}, data_dir=tmp_path)
    assert a.content_hash == b.content_hash != c.content_hash


def test_label_missing_from_train_and_empty_test(tmp_path: Path):
    rows = [{"id": str(i), "text": f"t{i}", "label": "a"} for i in range(20)]
    rows += [{"id": "r", "text": "rare", "label": "b", "split": "test"}]
    for r in rows[:-1]:
        r["split"] = "train"
    rows[0]["split"] = "test"
    (tmp_path / "d.jsonl").write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    spec = {
        "name": "d",
        "task": "sentiment",
        "language": "en",
        "loader": "jsonl",
        "paths": ["d.jsonl"],
        "splits": "predefined",
    }
    with pytest.raises(DatasetError, match="'b'.*never occur in train"):
        build_dataset(spec, data_dir=tmp_path)
    for r in rows:
        r["split"] = "train"
    (tmp_path / "d.jsonl").write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    with pytest.raises(DatasetError, match="test split is empty"):
        build_dataset(spec, data_dir=tmp_path)


def test_hf_local_folder(tmp_path: Path):
    datasets = pytest.importorskip("datasets", reason="the 'datasets' package is not installed")
    dd = datasets.DatasetDict(
        {
            "train": datasets.Dataset.from_dict({"sentence": ["a b", "c d"], "label": [0, 1]}),
            "test": datasets.Dataset.from_dict({"sentence": ["e f"], "label": [1]}),
        }
    )
    dd.save_to_disk(str(tmp_path / "hfds"))
    ds = build_dataset(
        {
            "name": "h",
            "task": "classification",
            "language": "en",
            "loader": "hf",
            "hf": "hfds",
            "fields": {"text": "sentence"},
            "splits": {"train": 2, "validation": 0, "test": 1},
            "check_labels": False,
        },
        data_dir=tmp_path,
    )
    assert ds.sizes() == {"train": 2, "validation": 0, "test": 1}
    assert {r["text"] for r in ds.train + ds.test} == {"a b", "c d", "e f"}
