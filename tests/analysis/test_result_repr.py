"""Result objects show a short repr (as scipy's), not every row of their frames.

The issue measured 1,891 characters for 3 models × 5 languages; the repr now
names the sizes and the headline numbers, and the headline is the one in the
tables (the best aggregate, the top rank).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from glotbench import api

MODELS = {"m1": 0.60, "m2": 0.70, "m3": 0.75}
LANGUAGES = {"da": 0.0, "sv": 0.02, "fi": -0.04, "nb": 0.01, "is": -0.06}


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> object:
    folder: Path = tmp_path_factory.mktemp("repr")
    rows = ["model,task,language,metric,seed,score"]
    for (i, (m, base)), (j, (lang, off)), seed in itertools.product(
        enumerate(MODELS.items()), enumerate(LANGUAGES.items()), range(3)
    ):
        noise = 0.01 * (((seed + 1) * (i + 2) * (j + 3)) % 5 - 2) / 2
        rows.append(f"{m},sentiment,{lang},accuracy,{seed},{base + off + noise:.4f}")
    (folder / "scores.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    api.import_scores(folder / "scores.csv", store=folder / "s.duckdb")
    return api.load_replicated(store=folder / "s.duckdb")


def test_reprs_are_short_and_name_sizes_and_headline(source: object) -> None:
    variance = api.analyze_variance(source)  # type: ignore[arg-type]
    aggregates = api.analyze_aggregate(source)  # type: ignore[arg-type]
    comparison = api.analyze_compare(source)  # type: ignore[arg-type]
    ranks = api.analyze_ranks(source)  # type: ignore[arg-type]
    for result in (variance, aggregates, comparison, ranks):
        text = repr(result)
        assert len(text) <= 160, text
        assert text.startswith(type(result).__name__ + "(")
    assert "models=3, units=15" in repr(variance)
    assert "models=3, languages=5" in repr(aggregates)
    assert "pairs=3, languages=5" in repr(comparison)
    assert "models=3, aggregators=3" in repr(ranks)
    # the headline is the table's: the best mean and the top-ranked model
    means = aggregates.frame[aggregates.frame["aggregator"] == "mean"]
    best = means.loc[means["score"].idxmax()]
    assert best["model"] == "m3"
    assert f"best 'm3': mean {best['score']:.4g}" in repr(aggregates)
    assert "top 'm3' by mean" in repr(ranks)


def test_headline_analysis_and_leaderboard_reprs(source: object) -> None:
    analysis = api.analyze_headline(source)  # type: ignore[arg-type]
    summary = analysis.summary().set_index("model")
    best = summary["score"].idxmax()
    assert best == "m3"
    expected = f"best 'm3': {summary.loc[best, 'score']:.4g} (SE {summary.loc[best, 'se']:.4g})"
    for result in (analysis, analysis.overall, analysis.leaderboard()):
        text = repr(result)
        assert len(text) <= 160, text
        assert expected in text, text
    assert repr(analysis).startswith("Analysis(models=3, tasks=1, languages=5, ")
