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
from glotbench.demo_xtreme import WrittenPages, XtremeAhead, demo, write_demo_pages
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


@pytest.mark.slow
def test_xtreme_pages_written_ahead_are_the_pages_written_after(tmp_path: Path) -> None:
    """The demo writes the XTREME-R part in a thread while the starter's jobs run
    (``XtremeAhead``): the same numbers and the same bytes as written afterwards."""
    ahead = XtremeAhead(SETTINGS, tmp_path / "ahead" / "xtreme-r")
    ahead.start()
    result, pages = ahead.result(SETTINGS)
    assert pages is not None and [p.name for p in pages.paths] == ["index.html", "report.html"]
    after = write_demo_pages(tmp_path / "after", xtreme=demo(settings=SETTINGS), settings=SETTINGS)
    assert [p.read_bytes() for p in pages.paths] == [p.read_bytes() for p in after]
    assert result.to_dict() == demo(settings=SETTINGS).to_dict()


def test_xtreme_ahead_hands_over_only_what_the_caller_asks_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import glotbench.demo_xtreme as demo_xtreme

    computed: list[AnalysisSettings] = []

    def fake_demo(*, settings: AnalysisSettings, cache_store: Any = None) -> str:
        computed.append(settings)
        return f"demo of {settings.n_draws}"

    def fake_pages(folder: Path, settings: AnalysisSettings, xtreme: Any) -> list[Path]:
        folder.mkdir(parents=True, exist_ok=True)
        page = folder / "report.html"
        page.write_text(str(xtreme), encoding="utf-8")
        return [page]

    monkeypatch.setattr(demo_xtreme, "demo", fake_demo)
    monkeypatch.setattr(demo_xtreme, "_write_xtreme_pages", fake_pages)
    folder = tmp_path / "xtreme-r"
    # not started (a second run: every job stored): computed by the caller, nothing written
    assert XtremeAhead(SETTINGS, folder).result(SETTINGS) == ("demo of 300", None)
    assert not folder.exists()
    ahead = XtremeAhead(SETTINGS, folder)
    ahead.start()
    ahead.start()  # once
    result, pages = ahead.result(SETTINGS)
    assert result == "demo of 300" and pages is not None and pages.fits(folder, SETTINGS)
    assert len(computed) == 2
    # pages of other settings or another folder are not handed over
    other = AnalysisSettings(n_draws=400)
    assert not pages.fits(folder, other) and not pages.fits(tmp_path / "elsewhere", SETTINGS)
    assert ahead.result(other) == ("demo of 400", None)
    # an error in the thread is raised in the caller's
    monkeypatch.setattr(
        demo_xtreme,
        "demo",
        lambda *, settings, cache_store: (_ for _ in ()).throw(ValueError("boom")),
    )
    failing = XtremeAhead(SETTINGS)
    failing.start()
    with pytest.raises(ValueError, match="boom"):
        failing.result(SETTINGS)


def test_demo_pages_skip_the_xtreme_pages_written_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import glotbench.demo_xtreme as demo_xtreme

    folder = tmp_path / "out"
    page = folder / "report.html"
    page.parent.mkdir(parents=True)
    page.write_text("ahead", encoding="utf-8")
    written = WrittenPages(folder, SETTINGS, (page,))

    def never(*args: Any, **kwargs: Any) -> list[Path]:
        raise AssertionError("the pages written ahead were written again")

    monkeypatch.setattr(demo_xtreme, "_write_xtreme_pages", never)
    assert write_demo_pages(folder, settings=SETTINGS, xtreme_pages=written) == [page]
    assert page.read_text(encoding="utf-8") == "ahead"
