"""Data model of the results store: run keys, run records, import records.

A **run** is one evaluation of one model on one dataset (task, language) with
one seed, configuration and metric. Its key is

    (model, dataset, task, language, seed, config_hash, metric)

and its ``run_id`` is a stable hash of that key (:func:`run_id_for`), so the
same evaluation gets the same id in every store, on every machine: a re-run or
a re-import can tell that a run is already complete and skip it.

Conventions (see ``docs/store.md``):

* ``dataset`` defaults to ``task`` when a result does not name one;
* ``seed`` may be null (a deterministic model); ``config_hash`` defaults to
  ``""`` (the default configuration);
* metric names are stored as given, stripped and lower-cased (``"f1"`` stays
  ``"f1"``: in a published table it may be span-F1, not the registry's
  macro-F1 alias); ``metric_config`` holds the keyword arguments that rebuild
  the metric with ``get_metric(metric, **metric_config)``.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

import numpy as np
import numpy.typing as npt
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    model_validator,
)

from glotbench.store.names import name_problem, normalise_name

#: Version of the store layout written by this glotbench. A store with a
#: larger version is refused (it was written by a newer glotbench); an older
#: one is migrated when it is opened for writing (``docs/store.md``).
#: 2: ``example_stats.source_position`` (an example's index in its source data).
SCHEMA_VERSION = 2

#: Number of hexadecimal digits of the SHA-256 kept in a run id.
RUN_ID_HEX_DIGITS = 16


def _stored_name(text: str) -> str:
    """A run-key name as stored: NFC, and no control or invisible character (store/names.py)."""
    text = normalise_name(text)
    problem = name_problem(text)
    if problem is not None:
        raise ValueError(problem)
    return text


NonEmptyStr = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1), AfterValidator(_stored_name)
]

#: Columns of the run key, in key order.
RUN_KEY_COLUMNS: tuple[str, ...] = (
    "model",
    "dataset",
    "task",
    "language",
    "seed",
    "config_hash",
    "metric",
)

#: Columns of the key of an aggregate score.
SCORE_KEY_COLUMNS: tuple[str, ...] = (
    "model",
    "task",
    "language",
    "dataset",
    "metric",
    "seed",
    "replicate",
)

#: Columns of the ``scores`` table, in table order.
SCORE_COLUMNS: tuple[str, ...] = (
    *SCORE_KEY_COLUMNS[:5],
    "score",
    "seed",
    "replicate",
    "stderr",
    "n",
    "metadata",
    "import_id",
)

ImportKind = Literal["scores", "examples", "parquet", "api"]


def utc_now() -> datetime:
    """The current time in UTC as a naive ``datetime`` (the store's convention)."""
    return datetime.now(UTC).replace(tzinfo=None)


def normalise_metric_name(name: str) -> str:
    """Metric name as stored: stripped and lower-cased."""
    return name.strip().lower()


def run_id_for(
    model: str,
    dataset: str,
    task: str,
    language: str,
    seed: int | None,
    config_hash: str,
    metric: str,
) -> str:
    """Stable id of a run key.

    The first :data:`RUN_ID_HEX_DIGITS` hex digits of the SHA-256 of the UTF-8
    JSON array ``[model, dataset, task, language, seed, config_hash, metric]``
    written without spaces (``json.dumps(key, separators=(",", ":"),
    ensure_ascii=False)``); ``seed`` is a JSON integer or ``null``.
    """
    key = [model, dataset, task, language, None if seed is None else int(seed), config_hash, metric]
    text = json.dumps(key, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:RUN_ID_HEX_DIGITS]


class RunKey(BaseModel):
    """What identifies a run; :attr:`run_id` is its stable hash."""

    model_config = ConfigDict(frozen=True, protected_namespaces=())

    model: NonEmptyStr
    dataset: NonEmptyStr
    task: NonEmptyStr
    language: NonEmptyStr
    seed: int | None = None
    config_hash: str = ""
    metric: NonEmptyStr

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = dict(data)
            if not data.get("dataset") and data.get("task"):
                data["dataset"] = data["task"]
            if isinstance(data.get("metric"), str):
                data["metric"] = normalise_metric_name(data["metric"])
            if data.get("config_hash") is None:
                data["config_hash"] = ""
        return data

    @property
    def run_id(self) -> str:
        return run_id_for(
            self.model,
            self.dataset,
            self.task,
            self.language,
            self.seed,
            self.config_hash,
            self.metric,
        )

    def describe(self) -> str:
        """Short human-readable form used in messages."""
        seed = "none" if self.seed is None else self.seed
        cfg = f", config_hash={self.config_hash!r}" if self.config_hash else ""
        return (
            f"model={self.model!r}, dataset={self.dataset!r}, task={self.task!r}, "
            f"language={self.language!r}, seed={seed}{cfg}, metric={self.metric!r}"
        )


class RunRecord(RunKey):
    """A run as stored in the ``runs`` table (without its example statistics).

    ``stat_names`` are the metric's statistic names (the columns of the run's
    n × k statistics matrix); ``n_examples`` is filled in by
    ``store.runs.write`` from the matrix. ``seconds`` and
    ``examples_per_second`` are optional timing of the evaluation.
    """

    model_config = ConfigDict(frozen=False, protected_namespaces=())

    metric_config: dict[str, Any] = Field(default_factory=dict)
    stat_names: tuple[str, ...]
    n_examples: int | None = None
    model_metadata: dict[str, Any] = Field(default_factory=dict)
    seconds: float | None = Field(default=None, ge=0)
    examples_per_second: float | None = Field(default=None, ge=0)
    source: str | None = None
    import_id: str | None = None
    created_at: datetime = Field(default_factory=utc_now)

    @property
    def key(self) -> RunKey:
        return RunKey(**{c: getattr(self, c) for c in RUN_KEY_COLUMNS})


class ImportRecord(BaseModel):
    """One import of a file (a row of the ``imports`` table)."""

    import_id: str
    kind: ImportKind
    source: str
    sha256: str
    rows: int = Field(ge=0)
    added: int | None = None
    started_at: datetime = Field(default_factory=utc_now)
    completed_at: datetime | None = None


def stats_digest(
    example_ids: npt.ArrayLike, stats: npt.NDArray[np.float64], stat_names: tuple[str, ...]
) -> str:
    """SHA-256 of a run's content: example ids (in order), statistic names and values.

    Two imports of the same run from different files (CSV, JSONL, Parquet)
    have the same digest; a re-import with different numbers does not.
    """
    digest = StatsDigest(stat_names)
    digest.update_ids(example_ids)
    digest.update_stats(stats)
    return digest.hexdigest()


class StatsDigest:
    """:func:`stats_digest` fed chunk by chunk: all example ids first, then all statistics.

    The hashed bytes are those of :func:`stats_digest` —
    ``"\x1f".join(stat_names)``, ``\x1e``, the ids (``str``) joined by ``\x1f``,
    ``\x1e``, the (n × k) statistics as little-endian float64 in row order —
    so a run written in chunks (ids in row chunks, then statistics in row
    chunks of a C-ordered matrix) gets the digest of its one-piece write.
    Memory: one chunk's joined ids.
    """

    def __init__(self, stat_names: tuple[str, ...] | list[str]) -> None:
        self._hash = hashlib.sha256()
        self._hash.update("\x1f".join(stat_names).encode("utf-8"))
        self._hash.update(b"\x1e")
        self._n_ids = 0
        self._in_stats = False

    @property
    def n_ids(self) -> int:
        """How many example ids were fed so far."""
        return self._n_ids

    def update_ids(self, example_ids: npt.ArrayLike) -> None:
        """Feed the next example ids (in run order); only before any statistics."""
        if self._in_stats:
            raise ValueError("example ids must all be fed before the statistics")
        ids = (
            example_ids if isinstance(example_ids, list) else np.asarray(example_ids, dtype=object)
        )
        if len(ids) == 0:
            return
        if self._n_ids:  # the separator between the previous chunk's last id and this one's first
            self._hash.update(b"\x1f")
        self._hash.update("\x1f".join(map(str, ids)).encode("utf-8"))
        self._n_ids += len(ids)

    def update_joined_ids(self, joined: bytes, count: int) -> None:
        """Feed ``count`` next ids given already joined: UTF-8, separated by ``\x1f``.

        The same bytes as :meth:`update_ids` of those ids (a reader joins them
        without making Python strings, e.g. Arrow's ``binary_join``).
        """
        if self._in_stats:
            raise ValueError("example ids must all be fed before the statistics")
        if count == 0:
            return
        if self._n_ids:
            self._hash.update(b"\x1f")
        self._hash.update(joined)
        self._n_ids += count

    def update_stats(self, stats: npt.NDArray[np.float64]) -> None:
        """Feed the next rows of the statistics matrix (after every id)."""
        if not self._in_stats:
            self._hash.update(b"\x1e")
            self._in_stats = True
        self._hash.update(np.ascontiguousarray(stats, dtype="<f8").tobytes())

    def hexdigest(self) -> str:
        """The digest of what was fed (ids only so far: as if the statistics were empty)."""
        h = self._hash.copy()
        if not self._in_stats:
            h.update(b"\x1e")
        return h.hexdigest()


_RUNNER_SOURCE = re.compile(r"^glotbench run (\S+) \(protocol v\d+\)$")


def runner_source(suite: str, protocol_version: int) -> str:
    """A run's ``source`` as the runner writes it: ``glotbench run [SUITE ](protocol vN)``."""
    named = f"{suite} " if suite else ""
    return f"glotbench run {named}(protocol v{protocol_version})"


def suite_of_source(source: object) -> str | None:
    """The suite a run came from, read from its ``source`` (:func:`runner_source`), or None."""
    match = _RUNNER_SOURCE.match(source) if isinstance(source, str) else None
    return match.group(1) if match else None
