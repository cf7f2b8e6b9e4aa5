"""Shared data types and checks of the harness importers (lm-eval, EuroEval, XTREME, ...).

Every importer turns its input into two things and hands them to
:func:`glotbench.importers.writer.write_import`:

* :class:`PendingRun` — one run (model, dataset, task, language, seed,
  config_hash, metric) with its per-example statistics matrix and where it came
  from (file and line, for error messages);
* a tidy scores frame (the columns of
  :func:`glotbench.ingest.score_validation.validate_scores`) for aggregate scores.

This module holds those types, their checks (names, score ranges, example
ids) and the :class:`HarnessImportResult`; reading JSON input is in
:mod:`glotbench.importers.json_files`, the (task, language) split of task names
in :mod:`glotbench.importers.task_languages`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from glotbench.errors import InputError, UnknownMetricError
from glotbench.ingest.score_validation import metric_score_range, score_range_message
from glotbench.ingest.spool import RunSpool
from glotbench.store.names import check_name
from glotbench.store.schema import RunRecord

Progress = Callable[[int, int], None]


@dataclass
class PendingRun:
    """A validated run, not yet written: record, example ids, (n × k) statistics."""

    record: RunRecord
    example_ids: np.ndarray
    stats: np.ndarray
    path: str
    line: int | None = None
    field: str | None = None
    #: line of each example (row of ``stats``) in ``path``, when known
    lines: np.ndarray | None = None
    #: where the arrays went after :meth:`spill` (``example_ids``/``stats`` are then empty)
    spool: RunSpool | None = None
    spool_index: int = -1
    #: number of examples (kept after :meth:`spill`)
    n_examples: int = -1
    #: column sums of ``stats`` (kept after :meth:`spill`)
    totals: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.n_examples < 0:
            self.n_examples = len(self.example_ids)

    def spill(self, spool: RunSpool) -> None:
        """Move the run's ids, statistics and lines to ``spool``; keep only the record.

        The run must be checked (:func:`check_runs`) before: errors that name
        an example's line need the lines, which are not kept.
        """
        if self.spool is not None:
            return
        stats = np.asarray(self.stats, dtype=np.float64)
        self.totals = stats.sum(axis=0)
        self.spool_index = spool.add(self.example_ids, stats, None)
        self.spool = spool
        self.example_ids = np.empty(0, dtype=object)
        self.stats = np.empty((0, stats.shape[1]), dtype=np.float64)
        self.lines = None

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(example ids, statistics), read back from the spool if spilled."""
        if self.spool is None:
            return self.example_ids, self.stats
        ids, stats, _ = self.spool.load(self.spool_index)
        return ids, stats

    def ids(self) -> np.ndarray:
        """The example ids, read back from the spool if spilled."""
        return self.example_ids if self.spool is None else self.spool.load_ids(self.spool_index)

    def stat_totals(self) -> np.ndarray:
        """Column sums of the statistics (what a metric's score is computed from)."""
        if self.totals is not None:
            return self.totals
        return np.asarray(self.stats, dtype=np.float64).sum(axis=0)

    def error(
        self, message: str, *, field: str | None = None, row: int | None = None
    ) -> InputError:
        line = self.line
        if row is not None and self.lines is not None and row < len(self.lines):
            line = int(self.lines[row])
        return InputError(message, path=self.path, line=line, field=field or self.field)


SCORE_FRAME_COLUMNS = (
    "model",
    "task",
    "language",
    "dataset",
    "metric",
    "score",
    "seed",
    "replicate",
    "stderr",
    "n",
    "metadata",
)


@dataclass
class ScoreRow:
    """One aggregate score and where it came from."""

    model: str
    task: str
    language: str
    dataset: str
    metric: str
    score: float
    seed: int | None = None
    replicate: int | None = None
    stderr: float | None = None
    n: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    path: str = ""
    line: int | None = None
    field: str | None = None


def scores_frame(rows: Sequence[ScoreRow]) -> pd.DataFrame:
    """The frame ``store.scores.add`` takes (validate_scores's columns)."""
    frame = pd.DataFrame(
        {
            "model": pd.Series([r.model for r in rows], dtype=object),
            "task": pd.Series([r.task for r in rows], dtype=object),
            "language": pd.Series([r.language for r in rows], dtype=object),
            "dataset": pd.Series([r.dataset for r in rows], dtype=object),
            "metric": pd.Series([r.metric.strip().lower() for r in rows], dtype=object),
            "score": np.asarray([r.score for r in rows], dtype=np.float64),
            "seed": pd.array([r.seed for r in rows], dtype="Int64"),
            "replicate": pd.array([r.replicate for r in rows], dtype="Int64"),
            "stderr": np.asarray(
                [np.nan if r.stderr is None else r.stderr for r in rows], dtype=np.float64
            ),
            "n": pd.array([r.n for r in rows], dtype="Int64"),
            "metadata": pd.Series(
                [
                    json.dumps(r.metadata, ensure_ascii=False, default=str, allow_nan=False)
                    for r in rows
                ],
                dtype=object,
            ),
        }
    )
    frame["position"] = np.arange(len(frame), dtype=np.int64)
    return frame


def check_score_rows(rows: Sequence[ScoreRow]) -> None:
    """Finite scores, non-negative stderr, unique keys; errors name file/line/field."""
    seen: dict[tuple[Any, ...], ScoreRow] = {}
    for r in rows:
        if not isinstance(r.score, int | float) or not math.isfinite(r.score):
            raise InputError(
                f"the score must be a finite number, got {r.score!r}",
                path=r.path,
                line=r.line,
                field=r.field,
            )
        if r.stderr is not None and (not math.isfinite(r.stderr) or r.stderr < 0):
            raise InputError(
                f"the standard error must be a finite non-negative number, got {r.stderr!r}",
                path=r.path,
                line=r.line,
                field=r.field,
            )
        key = (r.model, r.task, r.language, r.dataset, r.metric.lower(), r.seed, r.replicate)
        other = seen.get(key)
        if other is not None and (other.score != r.score or other.stderr != r.stderr):
            raise InputError(
                f"a second, different score for model={r.model!r}, task={r.task!r}, "
                f"language={r.language!r}, metric={r.metric!r}, seed={r.seed} (the first is in "
                f"{other.path}" + (f", line {other.line}" if other.line else "") + "); give each "
                "run its own seed",
                path=r.path,
                line=r.line,
                field=r.field,
            )
        seen[key] = r


def _check_name(value: Any, what: str, *, path: str, line: int | None, field: str | None) -> str:
    """``value`` as a stored name (:func:`glotbench.store.names.check_name`)."""
    if what == "language" and (value is None or (isinstance(value, str) and not value.strip())):
        raise InputError(
            "the language is empty; every result needs a language (the record names no language)",
            path=path,
            line=line,
            field=field,
        )
    return check_name(value, what, path=path, line=line, field=field)


def _json_finite(value: Any) -> bool:
    """False when ``value`` holds a NaN or infinite float (which JSON cannot encode)."""
    try:
        json.dumps(value, default=str, allow_nan=False)
    except ValueError:
        return False
    return True


def check_score_ranges(rows: Sequence[ScoreRow]) -> None:
    """Names are printable and non-empty; scores of known metrics lie in their declared range."""
    ranges: dict[str, tuple[float, float] | None] = {}
    for r in rows:
        for what in ("model", "task", "language", "dataset", "metric"):
            name = _check_name(getattr(r, what), what, path=r.path, line=r.line, field=what)
            setattr(r, what, name)  # stored NFC-normalised, as run keys are
        try:
            json.dumps(r.metadata, ensure_ascii=False, default=str, allow_nan=False)
        except ValueError:
            bad = sorted(k for k, v in r.metadata.items() if not _json_finite(v))
            raise InputError(
                f"the metadata value(s) {', '.join(bad) or '?'} are not finite numbers "
                "(NaN or infinity); give a number or leave them out",
                path=r.path,
                line=r.line,
                field=bad[0] if bad else r.field,
            ) from None
        name = r.metric.strip().lower()
        if name not in ranges:
            ranges[name] = metric_score_range(name)
        bounds = ranges[name]
        if bounds is None or not isinstance(r.score, int | float) or not math.isfinite(r.score):
            continue
        lo, hi = bounds
        if not lo <= r.score <= hi:
            raise InputError(
                score_range_message(name, float(r.score), lo, hi),
                path=r.path,
                line=r.line,
                field=r.field,
            )


def split_nan_scores(rows: Sequence[ScoreRow]) -> tuple[list[ScoreRow], list[str]]:
    """Rows with a NaN score are not stored; the notes say how many and where."""
    kept: list[ScoreRow] = []
    nan: list[ScoreRow] = []
    for r in rows:
        if isinstance(r.score, float) and math.isnan(r.score):
            nan.append(r)
        else:
            kept.append(r)
    if not nan:
        return kept, []
    places = [
        f"{Path(r.path).name}" + (f" line {r.line}" if r.line else "") + f" {r.field or r.metric}"
        for r in nan
    ]
    shown = "; ".join(places[:5]) + (f"; and {len(places) - 5} more" if len(places) > 5 else "")
    note = f"{len(nan)} NaN score(s) not stored (the source reports no value): {shown}"
    return kept, [note]


def check_runs(runs: Sequence[PendingRun]) -> None:
    """Names are printable; statistics satisfy the metric's declared constraints.

    Spilled runs (:meth:`PendingRun.spill`) are skipped: check them before spilling.
    """
    from glotbench.metrics import get_metric

    for run in runs:
        if run.spool is not None:  # checked before it was spilled
            continue
        r = run.record
        for what in ("model", "task", "language", "dataset", "metric"):
            _check_name(getattr(r, what), what, path=run.path, line=run.line, field=what)
        try:
            metric = get_metric(r.metric, **(r.metric_config or {}))
        except (UnknownMetricError, TypeError, ValueError):
            continue
        stats = np.asarray(run.stats, dtype=np.float64)
        if stats.ndim != 2 or stats.shape[1] != len(r.stat_names):
            raise run.error(
                f"{r.metric}: expected {len(r.stat_names)} statistics per example, got shape "
                f"{stats.shape}"
            )
        problems = metric.check_stats(stats)
        if not problems:
            continue
        first = min(problems, key=lambda p: p.first)
        row = first.first
        more = first.count - 1
        ids = run.example_ids
        example = f" (example {ids[row]!r})" if row < len(ids) else ""
        raise run.error(
            f"invalid {r.metric} statistics for task {r.task!r}, language {r.language!r}"
            f"{example}: {first.message(stats[row])}"
            + (f" ({more} more example(s) have the same problem)" if more else ""),
            row=row,
            field=str(r.model_metadata.get("lm_eval_metric", first.column)).split(",")[0],
        )


def dedupe_score_rows(rows: Sequence[ScoreRow]) -> list[ScoreRow]:
    """Drop exact repeats (same key and values) after :func:`check_score_rows`."""
    out: dict[tuple[Any, ...], ScoreRow] = {}
    for r in rows:
        key = (r.model, r.task, r.language, r.dataset, r.metric.lower(), r.seed, r.replicate)
        out.setdefault(key, r)
    return list(out.values())


@dataclass
class HarnessImportResult:
    """What a harness import did (``.to_dict()`` is the JSON the CLI prints).

    Attributes
    ----------
    kind : str
        The harness (``euroeval``, ``lm-eval``, ``reuben``, ``xtreme``).
    source : str
        The file or folder imported.
    store : str
        The store written.
    status : {"imported", "resumed", "skipped"}
        ``resumed``: an interrupted import of the same input was completed;
        ``skipped``: this exact input was imported before.
    sha256 : str
        The input's content hash.
    import_id : str or None
        The import's id in the store.
    files : int
        Files read.
    runs_added, runs_skipped : int
        Per-example runs written and already stored.
    examples_added : int
        Per-example rows written.
    scores_added, scores_skipped : int
        Scores written and already stored.
    models, tasks, languages : list of str
        What the input held.
    notes : list of str
        What the reader should know (tasks mapped, rows left out).
    aggregates : list of dict
        The harness's own aggregates, recomputed (e.g. XTREME's averages).
    message : str
        One line saying what happened.
    seconds : float
        Time taken.
    """

    kind: str
    source: str
    store: str
    status: Literal["imported", "resumed", "skipped"]
    sha256: str
    import_id: str | None = None
    files: int = 0
    runs_added: int = 0
    runs_skipped: int = 0
    examples_added: int = 0
    scores_added: int = 0
    scores_skipped: int = 0
    models: list[str] = field(default_factory=list)
    tasks: list[str] = field(default_factory=list)
    languages: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    aggregates: list[dict[str, Any]] = field(default_factory=list)
    message: str = ""
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_frame(self) -> pd.DataFrame:
        d = self.to_dict()
        for key in ("models", "tasks", "languages", "notes"):
            d[key] = ", ".join(map(str, d[key]))
        d.pop("aggregates")
        return pd.DataFrame([d])
