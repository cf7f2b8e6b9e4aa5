"""What ``analyze compare`` prints for many models (summary, ranking neighbours), and its
JSON encoder: checked against the full table written out pair by pair and json.dumps."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from glotbench.analysis.compare import adjacent_pairs, compare_models, comparison_summary
from glotbench.analysis.draws import DrawSettings
from glotbench.analysis.replicates import ReplicatedScores, Unit
from glotbench.cli._output import INDENT_LIMIT, encode_json

from ..conftest import CliResult

Cli = Callable[..., CliResult]
N_MODELS, LANGUAGES, N_REPLICATES = 14, ("de", "en", "fr", "sw", "yo"), 20


def _scores(seed: int = 3) -> ReplicatedScores:
    rng = np.random.default_rng(seed)
    skill = rng.normal(0.7, 0.03, N_MODELS)
    skill[5] = skill[4]  # a tie of observed means is ordered by name
    values = skill[:, None, None, None] + rng.normal(0, 0.03, (1, len(LANGUAGES), 1, 1))
    values = values + rng.normal(0, 0.02, (N_MODELS, len(LANGUAGES), 1, N_REPLICATES))
    values[5] = values[4]
    models = tuple(f"m{m:02d}" for m in range(N_MODELS))
    units = tuple(Unit("t", lang) for lang in LANGUAGES)
    return ReplicatedScores(models, units, values, "replicates", "accuracy")


@pytest.fixture(scope="module")
def comparison():  # type: ignore[no-untyped-def]
    return compare_models(_scores(), DrawSettings(n_draws=300), per_language=False, pairs="all")


def test_adjacent_pairs_follow_the_ranking_and_equal_the_stored_rows(comparison) -> None:  # type: ignore[no-untyped-def]
    table = comparison.aggregates
    for aggregator in ("mean", "median"):
        rows = table[table["aggregator"] == aggregator]
        score = dict(zip(rows["model_a"], rows["score_a"], strict=True))
        score.update(zip(rows["model_b"], rows["score_b"], strict=True))
        order = sorted(score, key=lambda m: (-score[m], m))
        got = adjacent_pairs(table, aggregator)
        assert list(got["rank"]) == list(range(1, N_MODELS))
        assert list(zip(got["model_a"], got["model_b"], strict=True)) == list(
            zip(order[:-1], order[1:], strict=True)
        )
        for r in got.itertuples():
            forward = rows[(rows["model_a"] == r.model_a) & (rows["model_b"] == r.model_b)]
            backward = rows[(rows["model_a"] == r.model_b) & (rows["model_b"] == r.model_a)]
            stored, sign = (forward, 1.0) if len(forward) else (backward, -1.0)
            (s,) = stored.itertuples()
            assert r.difference == sign * s.difference and r.sd == s.sd
            assert r.effect_size == sign * s.effect_size and r.flagged == s.flagged
            low, high = (s.ci_low, s.ci_high) if sign > 0 else (-s.ci_high, -s.ci_low)
            assert (r.ci_low, r.ci_high) == (low, high)
            assert r.score_a >= r.score_b
    tie = adjacent_pairs(table, "mean")
    assert ("m04", "m05") in set(zip(tie["model_a"], tie["model_b"], strict=True))


def test_comparison_summary_counts_flagged_pairs(comparison) -> None:  # type: ignore[no-untyped-def]
    summary = comparison_summary(comparison.aggregates).set_index("aggregator")
    for aggregator, rows in comparison.aggregates.groupby("aggregator"):
        assert summary.loc[aggregator, "n_pairs"] == N_MODELS * (N_MODELS - 1) // 2
        assert summary.loc[aggregator, "n_flagged"] == (rows["effect_size"].abs() >= 2).sum()
        adjacent = adjacent_pairs(comparison.aggregates, str(aggregator))
        assert summary.loc[aggregator, "n_adjacent_flagged"] == adjacent["flagged"].sum()


def test_terminal_shows_neighbours_not_every_pair(cli: Cli, tmp_path: Path) -> None:
    source = _scores()
    rows = [
        (model, unit.language, r, source.values[m, u, 0, r])
        for m, model in enumerate(source.models)
        for u, unit in enumerate(source.units)
        for r in range(N_REPLICATES)
    ]
    path = tmp_path / "scores.csv"
    pd.DataFrame(rows, columns=["model", "language", "replicate", "score"]).to_csv(
        path, index=False
    )
    result = cli("analyze", "compare", "--input", path, "--draws", "300")
    assert result.exit_code == 0, result.stderr
    assert "Neighbours in the ranking by mean" in result.out
    assert "of 91 pairs" in result.out and "every pair: --pairs all --json" in result.out
    payload = json.loads(
        cli(
            "analyze", "compare", "--input", path, "--draws", "300", "--pairs", "all", "--json"
        ).stdout
    )
    assert len(payload["aggregates"]) == 3 * 91  # every pair in --json
    assert payload["pairs"]["mode"] == "all"
    summary = pd.DataFrame(payload["summary"])
    assert list(summary["n_pairs"]) == [91, 91, 91]
    neighbours = adjacent_pairs(pd.DataFrame(payload["aggregates"]), "mean")
    pair_lines = [line.split() for line in result.stdout.splitlines() if line.count("│ m") >= 2]
    shown = {(cells[3], cells[5]) for cells in pair_lines}  # │ rank │ model_a │ model_b │
    assert shown == set(zip(neighbours["model_a"], neighbours["model_b"], strict=True))


def test_encode_json_equals_the_standard_encoder() -> None:
    payload = {
        "settings": {"n_draws": np.int64(500), "level": np.float64(0.95), "path": Path("/x")},
        "rows": [{"a": 0.1 + 0.2, "b": 1e-17, "flag": np.bool_(True), "name": "Yorùbá"}] * 3,
        "tuple": (1, 2.5),
        "missing": None,
    }
    plain = json.loads(
        json.dumps(payload, default=lambda v: v.item() if hasattr(v, "item") else str(v))
    )
    small = encode_json(payload)
    assert json.loads(small) == plain and small.endswith(b"\n") and b"\n  " in small  # indented
    big = {"rows": [{"x": i + 0.5, "name": f"model-{i}"} for i in range(INDENT_LIMIT // 20)]}
    data = encode_json(big)
    assert data.count(b"\n") == 1 and json.loads(data) == big  # compact: one line
    assert json.loads(encode_json({"nan": float("nan"), "huge": 10**30})) == {
        "nan": None,
        "huge": 10**30,
    }


def test_large_tables_are_streamed_as_the_same_records(
    capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch, comparison
) -> None:  # type: ignore[no-untyped-def]
    import glotbench.cli._output as output

    output.print_json(comparison.to_dict())  # lists of records, indented
    expected = capsysbinary.readouterr().out
    monkeypatch.setattr(output, "STREAM_ROWS", 10)  # every table in slices of 10 rows
    output.print_json(comparison.to_dict(frames=True))
    streamed = capsysbinary.readouterr().out
    assert streamed.count(b"\n") == 1 and expected.count(b"\n") > 1000  # compact vs indented
    assert json.loads(streamed) == json.loads(expected)
