"""The demo's pages render the comparisons and ranks the demo computed: nothing twice.

Counted by wrapping the two functions that compute them where the analysis
layer calls them (``analysis/pair_view.py``); the pages written from the
demo's results must equal pages that computed everything themselves.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import glotbench.analysis.pair_view as pair_view
from glotbench.analysis.headline import AnalysisSettings
from glotbench.demo_xtreme import demo, write_demo_pages
from glotbench.report.sites import write_leaderboard_site, write_report
from glotbench.report.sources import leaderboard_source

SETTINGS = AnalysisSettings(n_draws=300)


def _count(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    calls = {"compare_models": 0, "rank_models": 0}
    for name in calls:
        original = getattr(pair_view, name)

        def counted(*args: Any, _name: str = name, _original: Any = original, **kw: Any) -> Any:
            calls[_name] += 1
            return _original(*args, **kw)

        monkeypatch.setattr(pair_view, name, counted)
    return calls


@pytest.mark.slow
def test_demo_pages_reuse_the_demos_comparisons_and_ranks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = demo(settings=SETTINGS)
    # pairs in ranking order: every difference is the better model minus the worse
    ranked = result.comparisons()
    assert ranked is not None and ranked.models == tuple(result.analysis.overall.order())
    first = result.comparison.aggregates.iloc[0]
    assert first["model_a"] == ranked.models[0] and first["difference"] > 0
    calls = _count(monkeypatch)
    written = write_demo_pages(tmp_path / "reused", xtreme=result, settings=SETTINGS)
    # models lack whole tasks (translate-train, mT5-XXL), so the report compares per task the
    # models that cover it (one comparison and one rank table per such task; the demo does not
    # compute these) — and nothing the demo computed is computed again
    per_task = sum(len(view.order()) >= 2 for view in result.analysis.tasks.values())
    assert per_task > 0
    assert calls == {"compare_models": per_task, "rank_models": per_task}
    # the same pages when the report and the leaderboard compute everything themselves
    source = leaderboard_source(demo=True, seed=SETTINGS.seed)
    site = write_leaderboard_site(tmp_path / "fresh" / "leaderboard", source, settings=SETTINGS)
    report = write_report(tmp_path / "fresh" / "report.html", source, settings=SETTINGS)
    # page pairs; report pairs + ranks; the per-task comparisons once more
    assert calls == {"compare_models": 2 * per_task + 2, "rank_models": 2 * per_task + 1}
    reused = {p.name: p.read_bytes() for p in written}
    assert reused["index.html"] == site.path.read_bytes()
    assert reused["report.html"] == report.path.read_bytes()
