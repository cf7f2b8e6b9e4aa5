"""The leaderboard page's rank data, linear in models (issue 27).

Per model and view the page holds its rank interval, its mean rank, a window of
its rank distribution and its statistical ties. Whole distributions (up to M
shares) and tie lists (up to M − 1 models) made a page quadratic in models: 173 MiB
at 1,000 models. Here each model carries a bounded window of its distribution
(:data:`DIST_WINDOW` ranks, with the share of draws outside it) and its ties as
runs of consecutive positions in the view's score order, a flat list of first and
last positions (a model's tied partners sit around it in score order, so its
runs are few) — the same ties, exactly.
Every number comes from the view's
:class:`~glotbench.analysis.rank_stats.RankStatistics`; this module only lays
them out.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from glotbench.analysis.headline import ViewAnalysis

#: at most this many consecutive ranks of a model's rank distribution are on the page
#: (the window holding the most draws); the share of draws outside is given as two
#: numbers (docs/leaderboard.md, "Page size")
DIST_WINDOW = 40


def dist_windows(counts: np.ndarray, window: int) -> tuple[np.ndarray, np.ndarray]:
    """Per model (row of ``counts``, M × ranks), the first and last rank index of its window.

    The window is the model's nonzero ranks when they span at most ``window``
    ranks; otherwise the ``window`` consecutive ranks holding the most draws (the
    best-ranked such run), trimmed to its first and last nonzero rank.
    """
    nonzero = counts > 0
    n_ranks = counts.shape[1]
    first = np.argmax(nonzero, axis=1)
    last = n_ranks - 1 - np.argmax(nonzero[:, ::-1], axis=1)
    wide = np.flatnonzero(last - first + 1 > window)
    if wide.size:
        cumulative = np.zeros((wide.size, n_ranks + 1), dtype=np.int64)
        np.cumsum(counts[wide], axis=1, out=cumulative[:, 1:])
        start = np.argmax(cumulative[:, window:] - cumulative[:, :-window], axis=1)
        for model, s in zip(wide.tolist(), start.tolist(), strict=True):
            inside = np.flatnonzero(nonzero[model, s : s + window])
            first[model], last[model] = s + inside[0], s + inside[-1]
    return first, last


def tie_runs(ties: np.ndarray, positions: np.ndarray, n_models: int) -> list[list[int]]:
    """Per model, the positions of the models it is tied with, as runs: a flat list
    [first, last, first, last, …] (flat to keep the page small).

    ``ties``: tied pairs (K × 2 model indices); ``positions``: each model's
    position in the view's score order. Exact: a position is in one of the runs
    if and only if its model is tied with this one.
    """
    owner = np.concatenate([ties[:, 0], ties[:, 1]])
    partner = positions[np.concatenate([ties[:, 1], ties[:, 0]])]
    order = np.lexsort((partner, owner))
    owner, partner = owner[order], partner[order]
    starts = np.ones(len(owner), dtype=bool)
    starts[1:] = (owner[1:] != owner[:-1]) | (partner[1:] != partner[:-1] + 1)
    ends = np.ones(len(owner), dtype=bool)
    ends[:-1] = starts[1:]
    out: list[list[int]] = [[] for _ in range(n_models)]
    lows, highs = partner[starts].tolist(), partner[ends].tolist()
    for model, lo, hi in zip(owner[starts].tolist(), lows, highs, strict=True):
        out[model] += (lo, hi)
    return out


def rank_block(view: ViewAnalysis, window: int = DIST_WINDOW) -> dict[str, dict[str, Any]]:
    """Rank summary per model of ``view``: interval, mean rank, distribution window, ties.

    Per model:

    * ``best``/``worst``/``mean``: the rank interval and the mean rank;
    * ``at``: its position in the view's score order (0 = best observed score);
    * ``dist_from`` and ``dist``: the share of draws (%, rounded to 0.1) at each
      rank from ``dist_from`` on, ``None`` where no draw gave that rank; the
      model's every rank when they span at most ``window`` ranks, else the
      ``window`` ranks with the most draws; then ``dist_out``: % of the draws at
      better and at worse ranks than the window;
    * ``ties``: the models it is statistically tied with (the view's
      :attr:`~glotbench.analysis.rank_stats.RankStatistics.ties`), as runs of
      ``at`` positions, flat: [first, last, first, last, …]; ``tie_next``: tied with the next model
      down in score order (None for the last). The page marks ties with the row
      above in any order it sorts the rows.

    A view of M models is about M × (``window`` + 10) numbers.
    """
    stats = view.ranks
    if stats is None:
        return {}
    models = view.models
    mean_rank = stats.mean_rank
    tie_next = view.tie_next()
    counts = stats.counts
    first, last = dist_windows(counts, window)
    positions = np.empty(len(models), dtype=np.int64)
    positions[np.argsort(-view.observed, kind="stable")] = np.arange(len(models))
    tied = tie_runs(stats.ties, positions, len(models))
    # the shares (stats.share: count / R · 100) rounded to 0.1 once per distinct count
    distinct = np.unique(counts[counts > 0]).tolist()
    rounded = {c: round(stats.share(c), 1) for c in distinct}
    below_shares, above_shares = (share.tolist() for share in stats.shares_outside(first, last))
    out: dict[str, dict[str, Any]] = {}
    for m, model in enumerate(models):
        lo, hi = int(first[m]), int(last[m])
        row = counts[m]
        mean = float(mean_rank[m])
        entry: dict[str, Any] = {
            "best": int(stats.best[m]),
            "worst": int(stats.worst[m]),
            "mean": round(mean, 2) if np.isfinite(mean) else None,
            "at": int(positions[m]),
            "dist_from": lo + 1,
            "dist": [rounded[c] if c else None for c in row[lo : hi + 1].tolist()],
            "tie_next": tie_next[model],
            "ties": tied[m],
        }
        below, above = below_shares[m], above_shares[m]
        if below or above:
            entry["dist_out"] = [round(below, 1), round(above, 1)]
        out[model] = entry
    return out
