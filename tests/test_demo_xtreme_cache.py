"""The demo's XTREME-R part kept in the store's analysis cache (``glotbench demo``'s second run).

Reference: the same part computed afresh. The cached result must give the
same JSON document, and it must come from the cache (the computation is made
unavailable); other settings must not be answered by it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from glotbench import demo_xtreme
from glotbench.analysis.settings import AnalysisSettings


def _document(result: demo_xtreme.Demo) -> str:
    return json.dumps(result.to_dict(), sort_keys=True, default=str)


def test_the_cached_part_equals_a_fresh_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    store = tmp_path / "starter.duckdb"
    settings = AnalysisSettings(n_draws=200, seed=3)
    fresh = _document(demo_xtreme.demo(settings=settings))
    assert _document(demo_xtreme.demo(settings=settings, cache_store=store)) == fresh
    assert list((tmp_path / "starter.duckdb.cache").glob("*.pkl"))

    def unavailable(settings: AnalysisSettings) -> demo_xtreme.Demo:
        raise AssertionError("computed again")

    monkeypatch.setattr(demo_xtreme, "_xtreme_demo", unavailable)
    assert _document(demo_xtreme.demo(settings=settings, cache_store=store)) == fresh
    with pytest.raises(AssertionError, match="computed again"):
        demo_xtreme.demo(settings=AnalysisSettings(n_draws=200, seed=4), cache_store=store)
