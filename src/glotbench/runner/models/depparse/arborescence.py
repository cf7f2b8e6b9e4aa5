"""Exact maximum spanning arborescence with a single root (Chu–Liu/Edmonds).

Scores are an ``(n + 1) × (n + 1)`` matrix ``S`` with ``S[h, d]`` the score of
the arc from head ``h`` to dependent ``d``; node 0 is the artificial root and
words are 1..n. :func:`max_arborescence` returns ``heads`` (length ``n + 1``,
``heads[0] = -1``) of the highest-scoring dependency tree: every word has one
head, there is no cycle, and **exactly one** word hangs from the root.

Algorithm: Chu & Liu (1965) / Edmonds (1967) as described by McDonald et al.
(2005, "Non-projective dependency parsing using spanning tree algorithms",
HLT/EMNLP, Fig. 3): pick the best incoming arc of every word; if these arcs
form a cycle, contract it into one node whose incoming arc scores are
``S[h, d] − S[head(d), d]`` (the gain of breaking the cycle at ``d``),
solve the contracted graph recursively and expand.

Single root: every arc from the root is lowered by a constant ``M`` larger
than the spread of all tree scores. A tree with ``r`` root arcs then scores
its own score minus ``r · M``, so the maximum has the fewest root arcs —
one, as a single-root tree always exists — and among single-root trees
(all lowered by the same ``M``) the highest own score. This reduction is
exact (see Zmigrod, Vieira & Cotterell 2020, "Please Mind the Root", EMNLP,
§2, for the constraint and faster alternatives).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def _find_cycle(heads: np.ndarray) -> list[int] | None:
    """A cycle of the head graph (nodes in order), or None; node 0 is the root."""
    n = len(heads)
    state = np.zeros(n, dtype=np.int8)  # 0 unseen, 1 on current path, 2 done
    state[0] = 2
    for start in range(1, n):
        if state[start]:
            continue
        path = []
        node = start
        while state[node] == 0:
            state[node] = 1
            path.append(node)
            node = int(heads[node])
        if state[node] == 1:  # closed a cycle on this path
            cycle = path[path.index(node) :]
            for p in path:
                state[p] = 2
            return cycle
        for p in path:
            state[p] = 2
    return None


def _cle(scores: np.ndarray) -> np.ndarray:
    """Heads of a maximum spanning arborescence rooted at 0 (any number of root arcs).

    ``scores`` must have ``-inf`` on the diagonal and in column 0.
    """
    n = scores.shape[0]
    heads = np.argmax(scores, axis=0)
    heads[0] = -1
    cycle = _find_cycle(heads)
    if cycle is None:
        return heads
    in_cycle = np.zeros(n, dtype=bool)
    in_cycle[cycle] = True
    outside = np.flatnonzero(~in_cycle)  # includes the root (index 0 of outside)
    cyc = np.asarray(cycle)
    m = len(outside)
    # contracted graph: nodes 0..m-1 are the outside nodes, node m is the cycle
    sub = np.full((m + 1, m + 1), -np.inf)
    sub[:m, :m] = scores[outside][:, outside]
    # arcs into the cycle: best gain over the cycle's nodes
    gain = scores[outside][:, cyc] - scores[heads[cyc], cyc][None, :]
    enter = np.argmax(gain, axis=1)  # which cycle node each outside head would enter
    sub[:m, m] = gain[np.arange(m), enter]
    # arcs out of the cycle: best cycle node as head
    out_scores = scores[cyc][:, outside]
    leave = np.argmax(out_scores, axis=0)
    sub[m, :m] = out_scores[leave, np.arange(m)]
    sub[m, 0] = -np.inf
    np.fill_diagonal(sub, -np.inf)
    sub_heads = _cle(sub)
    result = np.empty(n, dtype=np.int64)
    result[0] = -1
    result[cyc] = heads[cyc]
    for j in range(1, m):
        h = int(sub_heads[j])
        result[outside[j]] = cyc[leave[j]] if h == m else outside[h]
    h = int(sub_heads[m])
    result[cyc[enter[h]]] = outside[h]
    return result


def max_arborescence(scores: npt.ArrayLike) -> np.ndarray:
    """Heads of the best single-root dependency tree under arc ``scores``.

    Parameters
    ----------
    scores : array of shape (n + 1, n + 1)
        ``scores[h, d]``: score of the arc h → d (node 0 is the root; the
        diagonal and column 0 are ignored). Entries may be ``-inf`` (arc not
        allowed) as long as some single-root tree has a finite score.

    Returns
    -------
    heads : int array of length n + 1
        ``heads[d]`` is the head of word ``d``; ``heads[0] = -1``.
    """
    s = np.array(scores, dtype=np.float64)
    if s.ndim != 2 or s.shape[0] != s.shape[1] or s.shape[0] < 1:
        raise ValueError(f"scores must be a square (n + 1) × (n + 1) matrix, got {s.shape}")
    n = s.shape[0]
    if n == 1:
        return np.array([-1], dtype=np.int64)
    if np.isnan(s).any() or np.isposinf(s).any():
        raise ValueError("scores must not contain NaN or +inf")
    np.fill_diagonal(s, -np.inf)
    s[:, 0] = -np.inf
    finite = s[np.isfinite(s)]
    spread = float(finite.max() - finite.min()) if finite.size else 0.0
    penalty = (n + 1) * (spread + 1.0)
    s[0, 1:] -= penalty
    heads = _cle(s)
    return heads.astype(np.int64)


def tree_score(scores: npt.ArrayLike, heads: npt.ArrayLike) -> float:
    """Sum of ``scores[heads[d], d]`` over the words d = 1..n."""
    s = np.asarray(scores, dtype=np.float64)
    h = np.asarray(heads)
    d = np.arange(1, len(h))
    return float(s[h[1:], d].sum())


def is_single_root_tree(heads: npt.ArrayLike) -> bool:
    """Whether ``heads`` (``heads[0]`` ignored) is a tree over 0..n with one root arc."""
    h = np.asarray(heads, dtype=np.int64)
    n = len(h) - 1
    if n == 0:
        return True
    if ((h[1:] < 0) | (h[1:] > n)).any() or (h[1:] == np.arange(1, n + 1)).any():
        return False
    if int((h[1:] == 0).sum()) != 1:
        return False
    full = h.copy()
    full[0] = 0
    return _find_cycle(full) is None
