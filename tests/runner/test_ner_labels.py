"""ScandEval's NER definitions (issue 22.7): NorNE's tags mapped to PER/LOC/ORG/MISC as
EuroEval's create_norne.py converts them, so micro-F1 without MISC is ScandEval's."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import yaml
from seqeval.metrics import f1_score

from glotbench.metrics import get_metric
from glotbench.metrics.ner_labels import scandeval_tag, scandeval_tags
from glotbench.runner.datasets import build_dataset
from glotbench.runner.errors import DatasetError

SENTENCES = [
    ["B-PER", "I-PER", "O", "B-GPE_LOC", "O"],
    ["B-PROD", "I-PROD", "O", "B-GPE_ORG", "B-EVT"],
    ["B-DRV", "O", "B-ORG", "I-ORG", "B-MISC"],
]


def _conllu(path: Path, sentences: list[list[str]]) -> None:
    lines = []
    for s, tags in enumerate(sentences):
        lines.append(f"# sent_id = {s}")
        for i, tag in enumerate(tags, 1):
            lines.append(f"{i}\tw{s}{i}\tw\tNOUN\t_\t_\t0\troot\t_\tname={tag}")
        lines.append("")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_the_map_follows_euroeval() -> None:
    # EuroEval's create_norne.py: GPE_LOC->LOC, GPE_ORG->ORG, PROD/DRV/EVT->MISC
    assert scandeval_tags(SENTENCES[0]) == ["B-PER", "I-PER", "O", "B-LOC", "O"]
    assert scandeval_tags(SENTENCES[1]) == ["B-MISC", "I-MISC", "O", "B-ORG", "B-MISC"]
    assert scandeval_tags(SENTENCES[2]) == ["B-MISC", "O", "B-ORG", "I-ORG", "B-MISC"]
    assert scandeval_tag("B-PERSON") == "B-PER" and scandeval_tag("I-GPE") == "I-LOC"
    assert scandeval_tag("B-DATE") == "B-MISC" and scandeval_tag("O") == "O"


def test_a_dataset_option_maps_the_tags_and_no_misc_differs(tmp_path: Path) -> None:
    _conllu(tmp_path / "n.conllu", SENTENCES * 40)
    spec = {
        "name": "n",
        "task": "ner",
        "language": "nb",
        "loader": "conllu",
        "paths": ["n.conllu"],
        "splits": {"train": 40, "validation": 20, "test": 60},
    }
    raw = build_dataset(spec, data_dir=tmp_path)
    mapped = build_dataset({**spec, "options": {"ner_labels": "scandeval"}}, data_dir=tmp_path)
    assert any("GPE_LOC" in t for t in raw.labels)
    types = {t[2:] for t in mapped.labels if t != "O"}
    assert types == {"PER", "LOC", "ORG", "MISC"}
    # a tagger that finds PER/LOC/ORG but misses every MISC entity
    gold = [list(r["tags"]) for r in mapped.test]
    pred = [[t if not t.endswith("MISC") else "O" for t in tags] for tags in gold]
    stats = {name: get_metric(name).stats(pred, gold).sum(axis=0) for name in
             ("ner_f1", "ner_f1_no_misc")}  # fmt: skip
    f1 = float(get_metric("ner_f1").score(stats["ner_f1"]))
    no_misc = float(get_metric("ner_f1_no_misc").score(stats["ner_f1_no_misc"]))
    assert f1 == pytest.approx(f1_score(gold, pred), rel=1e-12) and f1 < 1
    # without MISC every remaining entity is found: ScandEval's micro_f1_no_misc is 1
    drop = [[t if not t.endswith("MISC") else "O" for t in tags] for tags in gold]
    assert no_misc == pytest.approx(f1_score(drop, pred), rel=1e-12) == 1.0
    with pytest.raises(DatasetError, match="ner_labels"):
        build_dataset({**spec, "options": {"ner_labels": "conll"}}, data_dir=tmp_path)


def test_the_scandeval_suites_map_norne() -> None:
    import glotbench.suites

    for suite in ("scandi", "scandi-transfer"):
        text = (Path(glotbench.suites.__file__).parent / f"{suite}.yaml").read_text()
        datasets = yaml.safe_load(text)["datasets"]
        norne = [d for d in datasets if str(d["name"]).startswith("norne")]
        assert norne and all(d["options"]["ner_labels"] == "scandeval" for d in norne), suite


@pytest.mark.slow
def test_norne_gets_misc_entities(shared_data: Path) -> None:
    files = sorted((shared_data / "norne").glob("no_bokmaal-norne-*.conllu"))
    spec = {
        "name": "norne-nb",
        "task": "ner",
        "language": "nb",
        "loader": "conllu",
        "paths": ["norne/no_bokmaal-norne-*.conllu"],
        "options": {"ner_labels": "scandeval"},
    }
    ds = build_dataset(spec, data_dir=shared_data)
    assert {t[2:] for t in ds.labels if t != "O"} == {"PER", "LOC", "ORG", "MISC"}
    # entity types read straight from the files per sentence, mapped by hand (EuroEval's
    # conversion), equal the dataset's for every sentence it holds
    by_hand = {"GPE_LOC": "LOC", "GPE_ORG": "ORG", "PROD": "MISC", "DRV": "MISC", "EVT": "MISC"}
    raw: dict[str, list[str]] = {}
    for path in files:
        for block in path.read_text(encoding="utf-8").split("\n\n"):
            sent = re.search(r"# sent_id =\s*(\S+)", block)
            if sent:
                kinds = re.findall(r"name=B-([A-Z_]+)", block)
                raw[f"{path.stem}#{sent.group(1)}"] = kinds
    records = [*ds.train, *ds.validation, *ds.test]
    assert all(str(r["id"]) in raw for r in records)
    got = Counter(t[2:] for r in records for t in r["tags"] if t.startswith("B-"))
    expected = Counter(by_hand.get(k, k) for r in records for k in raw[str(r["id"])])
    original = Counter(k for r in records for k in raw[str(r["id"])])
    assert got == expected
    assert original["PROD"] + original["EVT"] + original["DRV"] > 0
    assert got["MISC"] > original["MISC"] and got["LOC"] > original["LOC"]
    # ner_f1_no_misc now differs from ner_f1 for a tagger that errs on MISC entities
    gold = [list(r["tags"]) for r in ds.test]
    rng = np.random.default_rng(0)
    pred = [[("O" if t.endswith("MISC") and rng.random() < 0.5 else t) for t in g] for g in gold]
    f1 = float(get_metric("ner_f1").score(get_metric("ner_f1").stats(pred, gold).sum(axis=0)))
    nm = get_metric("ner_f1_no_misc")
    assert float(nm.score(nm.stats(pred, gold).sum(axis=0))) != pytest.approx(f1)
