"""Shared helpers for the store / import tests."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from glotbench.core import Store

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


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def err(self) -> str:
        """stderr with whitespace normalised (rich wraps long lines)."""
        return " ".join(self.stderr.split())

    @property
    def out(self) -> str:
        return " ".join(self.stdout.split())


@pytest.fixture
def cli(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Callable[..., CliResult]:
    """Run the real entry point (``glotbench.cli.main``) in-process."""
    import glotbench.cli as cli_module

    monkeypatch.setattr(cli_module.console, "width", 1000)
    monkeypatch.setattr(cli_module.err_console, "width", 1000)

    def run(*args: object) -> CliResult:
        capsys.readouterr()
        monkeypatch.setattr(sys, "argv", ["glotbench", *map(str, args)])
        try:
            cli_module.main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


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
