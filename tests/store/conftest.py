"""Shared helpers for the store / import tests."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from glotbench.store import Store

TABLES = ("meta", "runs", "example_stats", "scores", "imports")


def store_contents(path: Path) -> dict[str, list[str]] | None:
    """Every table's rows (as sorted reprs), or None if there is no store file."""
    if not Path(path).exists():
        return None
    with Store.open(path, read_only=True) as store:
        return {
            t: sorted(repr(r) for r in store.connection.execute(f"SELECT * FROM {t}").fetchall())
            for t in TABLES
        }


def examples_frame(
    models: Sequence[str] = ("a", "b"),
    seeds: Sequence[int] = (0,),
    languages: Sequence[str] = ("en",),
    n: int = 12,
    task: str = "xnli",
    metric: str = "accuracy",
    seed: int = 0,
) -> pd.DataFrame:
    """A tidy per-example frame of a mean metric with a 'score' column."""
    rng = np.random.default_rng(seed)
    rows = []
    for model in models:
        for s in seeds:
            for lang in languages:
                for i in range(n):
                    rows.append(
                        {
                            "model": model,
                            "task": task,
                            "language": lang,
                            "seed": s,
                            "example_id": f"{lang}-{i}",
                            "metric": metric,
                            "score": float(rng.integers(0, 2)),
                        }
                    )
    return pd.DataFrame(rows)


def label_frame(
    models: Sequence[str] = ("a", "b"), labels: Sequence[str] = ("NEG", "POS"), n: int = 10
) -> pd.DataFrame:
    """A tidy per-example frame of f1_macro statistics (tp/pred/true per label)."""
    rng = np.random.default_rng(1)
    rows = []
    for model in models:
        for i in range(n):
            ref = labels[int(rng.integers(0, len(labels)))]
            pred = labels[int(rng.integers(0, len(labels)))]
            row: dict[str, object] = {
                "model": model,
                "task": "sentiment",
                "language": "de",
                "seed": 0,
                "example_id": f"s{i}",
                "metric": "f1_macro",
            }
            for lab in labels:
                row[f"tp[{lab}]"] = int(ref == lab and pred == lab)
            for lab in labels:
                row[f"pred[{lab}]"] = int(pred == lab)
            for lab in labels:
                row[f"true[{lab}]"] = int(ref == lab)
            rows.append(row)
    return pd.DataFrame(rows)


SCORES_CSV = """model,task,language,metric,score,seed,stderr,params
mBERT,xnli,en,accuracy,0.817,,0.01,110M
mBERT,xnli,de,accuracy,0.711,,,110M
XLM-R,xnli,en,accuracy,0.889,1,,270M
XLM-R,xnli,en,accuracy,0.885,2,,270M
"""


@pytest.fixture(scope="session")
def _populated_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from glotbench import api

    root = tmp_path_factory.mktemp("template")
    path = root / "populated.duckdb"
    scores = root / "seed_scores.csv"
    scores.write_text(SCORES_CSV)
    examples = root / "seed_examples.csv"
    examples_frame(models=("m1",), n=5).to_csv(examples, index=False)
    api.import_scores(scores, store=path)
    api.import_examples(examples, store=path)
    assert not (root / "populated.duckdb.wal").exists()
    return path


@pytest.fixture
def populated_store(tmp_path: Path, _populated_template: Path) -> Path:
    """A store holding some scores and some runs (a copy per test)."""
    path = tmp_path / "populated.duckdb"
    shutil.copyfile(_populated_template, path)
    return path
