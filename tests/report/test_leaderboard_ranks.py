"""The page's rank data is linear in models and says what the full rank statistics say."""

from __future__ import annotations

import numpy as np

from glotbench.analysis.headline import AnalysisSettings, analyze_view
from glotbench.analysis.replicates import ReplicatedScores, Unit
from glotbench.report.leaderboard_ranks import dist_windows, rank_block, tie_runs


def _view(n_models: int = 60, seed: int = 0):
    """Closely spaced models (wide, overlapping rank distributions), one task, 4 languages."""
    rng = np.random.default_rng(seed)
    true = np.linspace(0.6, 0.7, n_models)[:, None, None, None]
    values = (
        true + rng.normal(0, 0.01, (n_models, 4, 1, 1)) + rng.normal(0, 0.01, (n_models, 4, 1, 30))
    )
    models = tuple(f"m{i:03d}" for i in range(n_models))
    source = ReplicatedScores(
        models, tuple(Unit("t", lang) for lang in ("de", "fr", "sw", "yo")), values, "replicates"
    )
    return analyze_view(source, AnalysisSettings(n_draws=400, seed=1))


def test_windows_hold_most_draws_and_the_rest_is_counted_outside() -> None:
    view = _view()
    stats = view.ranks
    assert stats is not None
    block = rank_block(view, window=8)
    truncated = 0
    for m, model in enumerate(view.models):
        entry, counts = block[model], stats.counts[m]
        start = entry["dist_from"] - 1
        shown = counts[start : start + len(entry["dist"])]
        # each share is the count's percentage rounded to 0.1; None exactly where no draw
        for share, count in zip(entry["dist"], shown.tolist(), strict=True):
            assert (share is None) == (count == 0)
            if count:
                assert share == round(count / stats.n_draws * 100, 1)
        assert len(entry["dist"]) <= 8 and entry["dist"][0] is not None
        # the window is the 8 consecutive ranks with the most draws (brute force)
        best = max(counts[s : s + 8].sum() for s in range(len(counts) - 7))
        assert shown.sum() == best or "dist_out" not in entry
        below, above = counts[:start].sum(), counts[start + len(entry["dist"]) :].sum()
        if below or above:
            truncated += 1
            assert entry["dist_out"] == [
                round(below / stats.n_draws * 100, 1),
                round(above / stats.n_draws * 100, 1),
            ]
        else:
            assert "dist_out" not in entry
    assert truncated > 10  # the design spreads ranks wider than the window


def test_a_window_as_wide_as_the_support_is_the_whole_distribution() -> None:
    counts = np.array([[0, 3, 0, 5, 2, 0], [6, 4, 0, 0, 0, 0], [0, 0, 0, 0, 0, 10]])
    first, last = dist_windows(counts, window=4)
    assert first.tolist() == [1, 0, 5] and last.tolist() == [4, 1, 5]
    first, last = dist_windows(counts, window=2)
    assert first.tolist() == [3, 0, 5] and last.tolist() == [4, 1, 5]  # ranks 4–5 hold 7 of 10


def test_tie_runs_list_exactly_the_tied_models() -> None:
    view = _view(seed=3)
    stats = view.ranks
    assert stats is not None
    block = rank_block(view)
    at = {model: block[model]["at"] for model in view.models}
    tied = view.tied_with()
    runs_total = 0
    for model in view.models:
        flat = block[model]["ties"]
        runs = list(zip(flat[::2], flat[1::2], strict=True))
        runs_total += len(runs)
        listed = {p for lo, hi in runs for p in range(lo, hi + 1)}
        assert listed == {at[other] for other in tied[model]}
    # positions are the score order; runs are few (here ~22 tied models, ~3 runs each)
    order = view.order()
    assert [at[m] for m in order] == list(range(len(order)))
    assert runs_total * 5 < sum(len(t) for t in tied.values())


def test_tie_runs_split_at_gaps() -> None:
    ties = np.array([[0, 1], [0, 2], [0, 4], [1, 2]])
    positions = np.array([0, 1, 2, 3, 4])
    assert tie_runs(ties, positions, 5) == [[1, 2, 4, 4], [0, 0, 2, 2], [0, 1], [], [0, 0]]
