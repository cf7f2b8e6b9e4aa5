"""Sums of many short rows, the same floats as ``np.add.reduce(rows, axis=-1)``, faster.

Resampled means sum millions of short rows (EuroEval's ten iterations per
draw, a task's languages per draw). ``np.add.reduce`` along the last axis calls
its inner loop once per row, ~25 ns of overhead for a row of ten, more than the
additions. Laid out *columns first* (element ``j`` of every row in one
contiguous array), the same sums are a few whole-array additions.

They are the same floats because the additions are made in numpy's order.
Reducing a contiguous row of ``n`` float64 values, numpy starts from the
identity 0.0 and adds the row's pairwise sum (``pairwise_sum`` in numpy's
``loops_utils.h.src``): for ``n < 8`` the values one by one; for
``8 <= n <= 128`` (``PW_BLOCKSIZE``) eight running sums ``r[j]`` over the
elements ``j, j + 8, j + 16, ...`` of the longest multiple of eight, combined
as ``((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))``, then the remaining
elements one by one. Longer rows are split recursively; they are left to
numpy here. ``tests/resample/test_row_sums.py`` holds this to numpy's own sums
(row lengths 1 to 128, values over 16 orders of magnitude, signed zeros, NaN
and infinities).
"""

from __future__ import annotations

import numpy as np

#: the longest row summed here; numpy splits longer rows recursively (PW_BLOCKSIZE)
MAX_ROW = 128


def row_sums_columns_first(columns: np.ndarray) -> np.ndarray:
    """``np.add.reduce(columns.T-like rows, axis=-1)`` from the columns-first layout.

    ``columns`` has shape ``(n, ...)``: ``columns[j]`` is element ``j`` of every
    row. Returns the sums, shape ``columns.shape[1:]``, equal bit for bit to
    numpy's sums of the rows laid out contiguously (``np.moveaxis(columns, 0,
    -1)`` copied to C order), for ``1 <= n <= MAX_ROW``.
    """
    n = columns.shape[0]
    if not 1 <= n <= MAX_ROW:
        raise ValueError(f"rows of 1 to {MAX_ROW} values, not {n}")
    if n < 8:
        total = np.add(0.0, columns[0])  # numpy's short rows: 0.0, then each value
        for j in range(1, n):
            total += columns[j]
    else:
        running = columns[:8].copy()
        body = n - n % 8
        for start in range(8, body, 8):
            running += columns[start : start + 8]
        total = (running[0] + running[1]) + (running[2] + running[3])
        total += (running[4] + running[5]) + (running[6] + running[7])
        for j in range(body, n):
            total += columns[j]
    # the reduction adds the row's sum to its identity, 0.0 (so a -0.0 sum becomes 0.0)
    return np.add(0.0, total)
