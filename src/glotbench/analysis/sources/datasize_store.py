"""Inputs of the data-size analysis from the store, in the source's order.

van der Goot et al.'s SEQ and RAND_SEQ strategies take *contiguous stretches
of the test set in its document order* (:mod:`glotbench.analysis.datasize`).
The store keeps a run's examples in the order they were evaluated — for
``glotbench run`` a shuffled test split — so this module orders the examples
by their ``source_position`` (each example's index in its source data,
``docs/store.md``) before the analysis draws subsets.

When the positions are missing (runs imported without a ``source_position``
column, a store of schema version 1, a loader that generates its records)
the first run's stored order is used and a note says that SEQ and RAND_SEQ
are then random samples; the result's ``order`` is ``stored``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from glotbench.errors import InputError
from glotbench.store.stats import StatsMatrix
from glotbench.store.store import Store

FloatArray = npt.NDArray[np.float64]

#: note of a result whose examples could not be put in the source's order
NO_SOURCE_ORDER = (
    "the store holds no source positions for {what}, so SEQ and RAND_SEQ follow the first "
    "run's stored order — for `glotbench run` a shuffled test split — and are random samples, "
    "not contiguous stretches of the source; store each example's source_position "
    "(glotbench run does for file loaders; `glotbench import examples` reads a "
    "source_position column) to draw them in the source's order"
)


@dataclass(frozen=True)
class StoreDataSizeInputs:
    """Statistics of the store's runs, ordered for the data-size analysis.

    ``stats`` is (runs × n × k) with examples ``example_ids`` in ``order``:
    ``source_position`` (sorted by ``source_positions``) or ``stored`` (the
    first run's stored order; ``source_positions`` is None). ``tokens`` are
    the words per example (None: sizes in examples).
    """

    stats: FloatArray
    models: list[str]
    tokens: FloatArray | None
    metric: Any
    example_ids: npt.NDArray[np.object_]
    source_positions: npt.NDArray[np.int64] | None
    order: str
    notes: tuple[str, ...]


def _tokens_column(stat_names: Sequence[str]) -> int | None:
    for wanted in ("tokens", "words"):
        if wanted in stat_names:
            return list(stat_names).index(wanted)
    return None


def stored_test_tokens(store: Store, matrix: StatsMatrix) -> FloatArray | None:
    """Words per example from the first run's ``test_tokens`` metadata, aligned with
    ``matrix.example_ids`` (``glotbench run`` stores it for token tasks); None if absent."""
    meta = store.runs.frame(run_ids=[matrix.run_ids[0]])["model_metadata"]
    counts = meta.iloc[0].get("test_tokens") if len(meta) else None
    if not isinstance(counts, list):
        return None
    ids, _ = store.stats.of_run(matrix.run_ids[0])
    if len(counts) != len(ids):
        return None
    by_id = dict(zip(map(str, ids), counts, strict=True))
    return np.array([float(by_id[str(i)]) for i in matrix.example_ids])


def source_order(
    positions: FloatArray, example_ids: Sequence[Any] | np.ndarray, run_labels: Sequence[str]
) -> tuple[npt.NDArray[np.int64] | None, list[str]]:
    """One source position per example from the runs' (runs × n) positions (NaN: unknown).

    Positions belong to examples, so every run that stores them must agree.
    A run that gives all of them is used; runs without them are named in a
    note. Returns (positions or None, notes); raises :class:`InputError` when
    two runs give one example different positions.
    """
    p = np.asarray(positions, dtype=np.float64)
    known = np.isfinite(p)
    complete = known.all(axis=1)
    if not complete.any():
        what = "these runs" if not known.any() else "every example of any run"
        return None, [NO_SOURCE_ORDER.format(what=what)]
    reference = p[int(np.flatnonzero(complete)[0])]
    clash = known & (p != reference[None, :])
    if clash.any():
        run, example = (int(a[0]) for a in np.nonzero(clash))
        raise InputError(
            f"runs disagree on the source position of example {example_ids[example]!r}: "
            f"{run_labels[run]} gives {int(p[run, example])}, another run "
            f"{int(reference[example])}; the runs were evaluated on different source data"
        )
    notes = []
    if not complete.all():
        missing = [run_labels[int(i)] for i in np.flatnonzero(~complete)]
        notes.append(
            f"source positions from {int(complete.sum())} of {p.shape[0]} runs; "
            f"{len(missing)} run(s) stored none or not all ({', '.join(missing[:3])}"
            + (", …" if len(missing) > 3 else "")
            + ")"
        )
    return reference.astype(np.int64), notes


def datasize_inputs_from_store(
    store: Store,
    dataset: str,
    task: str,
    language: str,
    metric: str,
    *,
    models: Sequence[str] | None = None,
) -> StoreDataSizeInputs:
    """The runs of (dataset, task, language, metric), examples in the source's order.

    Sizes are in tokens when the metric has a ``tokens``/``words`` statistic
    or the runs store ``test_tokens`` metadata (``glotbench run``, token
    tasks). Examples are sorted by ``source_position``
    (``store.stats.source_positions``, checked by :func:`source_order`); a
    note says when they cannot be, and when the positions have gaps (a test
    split sampled from a larger source: a stretch of consecutive test
    examples then skips the other splits' examples).
    """
    matrix = store.stats.matrix(
        dataset, task, language, metric, models=list(models) if models else None
    )
    column = _tokens_column(matrix.stat_names)
    tokens = matrix.stats[0, :, column] if column is not None else stored_test_tokens(store, matrix)
    labels = [
        f"{m} (seed {s})" if s is not None else str(m)
        for m, s in zip(matrix.models, matrix.seeds, strict=True)
    ]
    positions, notes = source_order(
        store.stats.source_positions(matrix.run_ids, matrix.example_ids), matrix.example_ids, labels
    )
    stats, ids = matrix.stats, np.asarray(matrix.example_ids, dtype=object)
    if positions is None:
        return StoreDataSizeInputs(
            stats, list(matrix.models), tokens, matrix.get_metric(), ids, None, "stored",
            tuple(notes),
        )  # fmt: skip
    order = np.argsort(positions, kind="stable")
    positions = positions[order]
    span = int(positions[-1] - positions[0]) + 1
    if span > positions.size:
        notes.append(
            f"the {positions.size} test examples have source positions {int(positions[0])}–"
            f"{int(positions[-1])}: they are a sample of a larger source (e.g. a test split "
            "drawn from a pooled treebank), so SEQ and RAND_SEQ take consecutive test "
            "examples in the source's order, skipping the examples of the other splits"
        )
    return StoreDataSizeInputs(
        stats=stats[:, order],
        models=list(matrix.models),
        tokens=None if tokens is None else np.asarray(tokens, dtype=np.float64)[order],
        metric=matrix.get_metric(),
        example_ids=ids[order],
        source_positions=positions,
        order="source_position",
        notes=tuple(notes),
    )
