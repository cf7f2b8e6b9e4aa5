"""The analysis cache (issue 13.4): keyed by the store's content and the request.

References: the uncached computation (a hit must return exactly its numbers),
and the store itself (a new or replaced run must change the key).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from glotbench import api
from glotbench.store import Store
from glotbench.store.analysis_cache import AnalysisCache, cache_key, store_fingerprint
from glotbench.store.schema import RunRecord


def _record(model: str, seed: int) -> RunRecord:
    return RunRecord(
        model=model,
        dataset="d",
        task="t",
        language="en",
        seed=seed,
        metric="accuracy",
        stat_names=("value", "count"),
        source="test",
    )


def _write(store: Store, model: str, seed: int, correct: list[int]) -> None:
    stats = np.column_stack([correct, np.ones(len(correct))]).astype(np.float64)
    store.runs.write(_record(model, seed), [f"e{i}" for i in range(len(correct))], stats)


def test_fingerprint_follows_the_runs(tmp_path: Path):
    path = tmp_path / "s.duckdb"
    with Store.open(path) as store:
        _write(store, "a", 1, [1, 0, 1])
        first = store_fingerprint(store)
        assert store_fingerprint(store) == first  # reading changes nothing
        _write(store, "a", 2, [1, 1, 1])
        second = store_fingerprint(store)
    assert second != first
    assert cache_key(first, {"draws": 10}) != cache_key(second, {"draws": 10})
    assert cache_key(first, {"draws": 10}) != cache_key(first, {"draws": 20})


def test_cache_round_trip_and_bad_entries(tmp_path: Path):
    cache = AnalysisCache.beside(tmp_path / "s.duckdb")
    assert cache.folder == tmp_path / "s.duckdb.cache"
    assert cache.get("k") is None
    cache.put("k", {"mean": 0.5})
    assert cache.get("k") == {"mean": 0.5}
    # an entry copied under another key, a truncated file, a foreign file: ignored
    (cache.folder / "other.pkl").write_bytes((cache.folder / "k.pkl").read_bytes())
    assert cache.get("other") is None
    data = (cache.folder / "k.pkl").read_bytes()
    (cache.folder / "k.pkl").write_bytes(data[: len(data) // 2])
    assert cache.get("k") is None
    (cache.folder / "k.pkl").write_bytes(b"not a cache file")
    assert cache.get("k") is None
    assert not [p for p in os.listdir(cache.folder) if p.endswith(".tmp")]


def test_unwritable_cache_is_not_an_error(tmp_path: Path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    AnalysisCache(blocker / "sub").put("k", 1)  # the folder cannot be made: nothing happens


@pytest.mark.slow
def test_demo_second_run_reads_the_cache(tmp_path: Path):
    pytest.importorskip("lingua")
    pytest.importorskip("py3langid")
    store = tmp_path / "starter.duckdb"
    kwargs = dict(models=["char-nb", "majority"], languages=["da", "sv", "nb"], iterations=2)
    first = api.starter_demo(store, n_draws=200, **kwargs)
    assert first.cache_key
    second = api.starter_demo(store, n_draws=200, **kwargs)
    assert second.cache_key == first.cache_key
    assert second.to_dict()["aggregates"] == first.to_dict()["aggregates"]
    assert second.run.completed == 0
    # other settings: another key, computed afresh
    third = api.starter_demo(store, n_draws=300, **kwargs)
    assert third.cache_key != first.cache_key
    # new runs in the store (a third iteration): another key
    fourth = api.starter_demo(store, n_draws=200, **{**kwargs, "iterations": 3})
    assert fourth.run.completed > 0 and fourth.cache_key != first.cache_key

    # the pages are written once per analysis
    out = tmp_path / "pages"
    pages = api.write_demo_pages(out, starter=first, settings=first.settings)
    stamps = {p: p.stat().st_mtime_ns for p in pages}
    again = api.write_demo_pages(out, starter=second, settings=second.settings)
    assert again == pages and {p: p.stat().st_mtime_ns for p in again} == stamps
