"""ScandEval's speed benchmark (issue 16 item 5): documents, token counts, throughput, outputs.

References: EuroEval's document construction (``base · 10(i+1)`` and
``base · round(1.25(i+1))``), GPT-2's pre-tokenisation of known strings, a
simulated model whose cost per call is known (so the tokens per second are
known exactly), and numpy's mean / SD for ScandEval's interval.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from glotbench import api
from glotbench.resample.scandeval import mean_and_half_width
from glotbench.runner.protocol import Protocol
from glotbench.runner.speed import (
    BASE_DOCUMENT,
    SpeedSettings,
    benchmark_speed,
    gpt2_token_count,
    speed_documents,
)
from glotbench.store import Store

from ..conftest import CliResult
from .conftest import write_suite


def test_documents_follow_euroeval():
    for i in range(10):
        long_doc, short_doc = speed_documents(i)
        assert long_doc == BASE_DOCUMENT * (10 * (i + 1))
        assert short_doc == BASE_DOCUMENT * round(1.25 * (i + 1))
    # Python's round: 1.25·2 = 2.5 -> 2 and 1.25·6 = 7.5 -> 8, as in EuroEval
    assert speed_documents(1)[1].count("Document") == 2
    assert speed_documents(5)[1].count("Document") == 8


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        # GPT-2 pre-tokenisation: a leading space joins the word, punctuation is split off,
        # contractions are their own pieces, trailing spaces are one piece
        ("Hello world", 2),
        ("I'm here.", 4),
        ("costs 10 kr", 3),
        ("a  b", 3),  # 'a', ' ', ' b'
        ("end ", 2),
        (BASE_DOCUMENT, 8),
    ],
)
def test_gpt2_pre_tokenisation(text: str, pieces: int):
    assert gpt2_token_count(text) == pieces


def test_document_token_counts():
    # 7 tokens per copy of the base document, plus its final space
    for i in range(10):
        long_doc, short_doc = speed_documents(i)
        assert gpt2_token_count(long_doc) == 7 * 10 * (i + 1) + 1
        assert gpt2_token_count(short_doc) == 7 * round(1.25 * (i + 1)) + 1


class FakeClock:
    """A clock that a simulated model advances by a known cost per call."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_tokens_per_second_of_a_model_with_known_cost():
    clock = FakeClock()
    per_token, overhead = 1e-4, 2e-3

    def predict(doc: str) -> None:
        clock.now += overhead + per_token * gpt2_token_count(doc)

    settings = SpeedSettings(iterations=4, seconds=0.05, warmup_seconds=0.01)
    result = benchmark_speed(predict, settings, clock=clock)
    for i in range(4):
        n_long = 7 * 10 * (i + 1) + 1
        n_short = 7 * round(1.25 * (i + 1)) + 1
        assert result.document_tokens[i] == n_long
        assert result.tokens_per_second[i] == pytest.approx(
            n_long / (overhead + per_token * n_long)
        )
        assert result.tokens_per_second_short[i] == pytest.approx(
            n_short / (overhead + per_token * n_short)
        )
    # longer documents amortise the per-call overhead: throughput grows with length
    assert np.all(np.diff(result.tokens_per_second) > 0)


def test_at_least_one_call_and_settings_checked():
    calls: list[str] = []
    result = benchmark_speed(calls.append, SpeedSettings(1, 0.0, 0.0))
    assert len(calls) == 2 and len(result.tokens_per_second) == 1
    with pytest.raises(ValueError):
        SpeedSettings(iterations=0)


def test_protocol_settings_and_legacy_name():
    assert Protocol().speed_settings() == SpeedSettings(10, 3.0, 1.0)  # ScandEval's
    assert Protocol(speed_repeats=0).speed_settings() is None
    assert Protocol(speed_repeats=4).speed_iterations == 4


def test_scandeval_interval():
    values = [910.0, 950.0, 1000.0, 1080.0]
    mean, half = mean_and_half_width(values)
    assert mean == pytest.approx(np.mean(values))
    assert half == pytest.approx(1.96 * np.std(values, ddof=1) / 2)
    mean, half = mean_and_half_width([5.0])
    assert mean == 5.0 and np.isnan(half)
    from glotbench.analysis.speed import SpeedTable, speed_row

    (row,) = SpeedTable(rows=[speed_row("m", [5.0], [], "run")]).rows
    assert row["tokens_per_second"] == 5.0 and row["ci_half_width"] is None


@pytest.mark.slow
def test_run_measures_each_model_once_and_every_output_shows_it(
    tmp_path: Path, cli: Callable[..., CliResult]
):
    suite = write_suite(tmp_path, iterations=2)
    store = tmp_path / "s.duckdb"
    summary = api.run_benchmark(suite, store=store, models=["lr", "tagger"])
    with Store.open(store, read_only=True) as handle:
        runs = handle.runs.frame()
    measured = runs[[m.get("speed") is not None for m in runs["model_metadata"]]]
    # one job per model: iteration 0 of the model's first dataset (all its metrics' runs)
    assert set(measured["model"]) == {"lr", "tagger"}
    assert set(measured["seed"]) == {7}
    assert set(measured.groupby("model")["dataset"].unique().map(tuple)) == {("sent",), ("ner",)}
    speed = measured.iloc[0]["model_metadata"]["speed"]
    assert len(speed["tokens_per_second"]) == 2 and speed["method"] == "scandeval"
    mean, half = mean_and_half_width(speed["tokens_per_second"])

    # the run's summary, `analyze speed --json`, and the leaderboard show the same numbers
    row = summary.speed.of(measured.iloc[0]["model"])
    assert row["tokens_per_second"] == pytest.approx(mean) and row["ci_half_width"] == half
    shown = json.loads(cli("analyze", "speed", "--store", store, "--json").stdout)
    by_model = {r["model"]: r for r in shown["models"]}
    assert by_model[row["model"]]["tokens_per_second"] == row["tokens_per_second"]
    run_json = summary.to_dict()["speed"]["models"]
    assert {r["model"]: r["tokens_per_second"] for r in run_json} == {
        m: r["tokens_per_second"] for m, r in by_model.items()
    }
    source = api.leaderboard_source(store=store)
    site = api.write_leaderboard_site(tmp_path / "site", source)
    page = site.path.read_text(encoding="utf-8")
    assert '"speed"' in page
    payload = _payload(page)
    assert payload["speed"][row["model"]][0] == pytest.approx(row["tokens_per_second"])

    # resuming measures nothing again; --no-speed runs none
    again = api.run_benchmark(suite, store=store, models=["lr", "tagger"])
    assert again.completed == 0 and again.speed.of("lr") == summary.speed.of("lr")
    text = cli("run", suite, "--store", tmp_path / "t.duckdb", "--model", "nb", "--no-speed")
    assert text.exit_code == 0 and "tokens per second" not in text.out
    shown = cli(
        "run", suite, "--store", tmp_path / "u.duckdb", "--model", "nb", "--speed-seconds", "0.001"
    )
    assert "GPT-2 tokens per second" in shown.out


def _payload(page: str) -> dict[str, Any]:
    start = page.index('id="glotbench-data">') + len('id="glotbench-data">')
    return json.loads(page[start : page.index("</script>", start)])


def test_imported_euroeval_speed(tmp_path: Path):
    raw = [{"test_speed": 900.0 + 10 * i, "test_speed_short": 200.0 + i} for i in range(3)]
    record = {
        "dataset": "speed",
        "task": "speed",
        "languages": ["da", "sv"],
        "model": "org/model-a",
        "results": {"raw": raw, "total": {"test_speed": 910.0, "num_failed_instances": 0.0}},
        "num_model_parameters": 1000,
        "max_sequence_length": 512,
        "vocabulary_size": 100,
        "merge": False,
        "generative": False,
        "generative_type": None,
        "few_shot": None,
        "validation_split": False,
    }
    path = tmp_path / "euroeval_benchmark_results.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    store = tmp_path / "e.duckdb"
    api.import_euroeval(path, store=store)
    row = api.speed_summary(store).of("org/model-a")
    assert row["source"] == "import" and row["iterations"] == 3
    assert row["tokens_per_second"] == pytest.approx(910.0)
    assert row["ci_half_width"] == pytest.approx(
        1.96 * np.std([900, 910, 920], ddof=1) / np.sqrt(3)
    )
    assert row["tokens_per_second_short"] == pytest.approx(201.0)


def test_trivial_models_are_shown_as_such():
    """A call costing 1 µs whatever the document (a majority baseline) is no per-token work:
    flagged trivial and shown as such, not as hundreds of millions of tokens per second."""
    from glotbench.analysis.speed import TRIVIAL_TOKENS_PER_SECOND, SpeedTable, speed_row
    from glotbench.cli._output import console, speed_table

    rows = []
    for model, per_call in (("majority", 1e-6), ("tagger", 1e-3)):
        clock = FakeClock()

        def predict(doc: str, cost: float = per_call, clock: FakeClock = clock) -> None:
            clock.now += cost

        result = benchmark_speed(predict, SpeedSettings(iterations=3, seconds=0.01), clock=clock)
        rows.append(
            speed_row(model, result.tokens_per_second, result.tokens_per_second_short, "run")
        )
    # 71 … 211 tokens in 1 µs: 7.1e7 … 2.1e8 tokens/s, mean 1.4e8; in 1 ms: 1.4e5
    assert rows[0]["tokens_per_second"] == pytest.approx((71 + 141 + 211) / 3 / 1e-6)
    assert rows[0]["trivial"] and rows[0]["tokens_per_second"] > TRIVIAL_TOKENS_PER_SECOND
    assert not rows[1]["trivial"]
    with console.capture() as captured:
        console.print(speed_table(SpeedTable(rows=rows)))
    text = captured.get()
    assert "trivial" in text and "141,000" in text and "141,000,000" not in text
    # the leaderboard's speed column gets the flag (rendered "trivial" by the page)
    from glotbench.report.leaderboard import _speed_payload

    payload = _speed_payload(SpeedTable(rows=rows), ["majority", "tagger"])
    assert payload["majority"][4] is True and payload["tagger"][4] is False
