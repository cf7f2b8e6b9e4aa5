"""Fixtures of the runner tests: the shared UD/NorNE data and a tiny suite."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED_DATA = ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not (SHARED_DATA / "ud").is_dir():
        pytest.skip(f"the shared UD/NorNE data is not at {SHARED_DATA} (../shared/data)")
    return SHARED_DATA


WORDS = {
    "pos": "good great lovely fine happy nice superb wonderful".split(),
    "neg": "bad awful poor sad horrible nasty terrible dreadful".split(),
}


def write_sentiment(path: Path, n: int = 120, seed: int = 0) -> Path:
    """A small two-class JSONL dataset (deterministic)."""
    rng = np.random.default_rng(seed)
    with path.open("w", encoding="utf-8") as handle:
        for i in range(n):
            label = "pos" if i % 2 else "neg"
            words = list(rng.choice(WORDS[label], 3)) + list(
                rng.choice(WORDS["pos" if label == "neg" else "neg"], 1)
            )
            handle.write(
                json.dumps({"id": f"s{i}", "text": " ".join(words), "label": label}) + "\n"
            )
    return path


def write_tagging(path: Path, n: int = 60) -> Path:
    rows = []
    for i in range(n):
        toks = ["the", "cat", "sees", "Oslo"] if i % 2 else ["a", "dog", "likes", "Bergen", "now"]
        tags = ["O", "O", "O", "B-LOC"] + ([] if i % 2 else ["O"])
        rows.append({"id": f"t{i}", "tokens": toks, "tags": tags})
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def write_suite(folder: Path, *, iterations: int = 2, extra_models: str = "") -> Path:
    write_sentiment(folder / "sent.jsonl")
    write_tagging(folder / "ner.jsonl")
    suite = folder / "suite.yaml"
    suite.write_text(
        f"""
name: tiny
protocol: {{iterations: {iterations}, seed: 7,
  speed_iterations: 2, speed_seconds: 0.01, speed_warmup_seconds: 0.01}}
splits: {{train: 60, validation: 10, test: 40}}
datasets:
  - {{name: sent, task: sentiment, language: en, loader: jsonl, paths: [sent.jsonl]}}
  - {{name: ner, task: ner, language: en, loader: jsonl, paths: [ner.jsonl],
      splits: {{train: 30, validation: 5, test: 20}}}}
models:
  - {{name: lr, kind: tfidf-logreg}}
  - {{name: nb, kind: tfidf-nb}}
  - {{name: majority, kind: majority}}
  - {{name: tagger, kind: tagger}}
{extra_models}""",
        encoding="utf-8",
    )
    return suite


def store_digests(path: Path) -> dict[str, str]:
    from glotbench.store import Store

    with Store.open(path, read_only=True) as store:
        return dict(store.connection.execute("SELECT run_id, stats_sha256 FROM runs").fetchall())
