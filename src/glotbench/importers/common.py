"""Shared machinery of the harness importers (lm-eval, EuroEval, XTREME).

Every importer turns its input into two things and hands them to
:func:`write_import`:

* :class:`PendingRun` — one run (model, dataset, task, language, seed,
  config_hash, metric) with its per-example statistics matrix and where it came
  from (file and line, for error messages);
* a tidy scores frame (the columns of
  :func:`glotbench.ingest.score_validation.validate_scores`) for aggregate scores.

:func:`write_import` then applies the store's guarantees, the same as the tidy
importers of :mod:`glotbench.ingest.tidy`:

* everything is read and checked before anything is written;
* a run whose key is already stored with the same statistics is skipped, with
  different statistics it is an error naming the file and line it came from;
* runs are written in transactions of whole runs (``store.runs.write_batches``),
  so an interrupted import is completed by running the same command again;
* scores are added in one transaction (``store.scores.add``), rows stored with
  the same values are skipped;
* the same input (same SHA-256 over its files) imported again is a no-op.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from glotbench.ingest.limits import MAX_LINE_BYTES, check_file_size, line_too_long
from glotbench.ingest.readers import DuplicateKeyError, file_sha256, unique_keys
from glotbench.store.names import check_name

try:  # a C JSON parser, about 3x the standard library's with a duplicate-key hook
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is a dependency; the stdlib path is exact too
    _orjson = None  # type: ignore[assignment]
from glotbench.errors import InputError, UnknownMetricError
from glotbench.importers.task_languages import language_suffix
from glotbench.ingest.score_validation import metric_score_range, score_range_message
from glotbench.ingest.spool import RunSpool
from glotbench.store.layout import new_import_id
from glotbench.store.results import ScoreConflictError
from glotbench.store.schema import ImportRecord, RunRecord, stats_digest
from glotbench.store.store import Store


def json_loads(text: str | bytes) -> Any:
    """Parse JSON, rejecting objects that repeat a key (:class:`DuplicateKeyError`).

    The standard library parser is used (not orjson) because only it can see
    repeated keys, through ``object_pairs_hook``; others keep the last silently.
    """
    return json.loads(text, object_pairs_hook=unique_keys)


_JSON_ERRORS: tuple[type[Exception], ...] = (json.JSONDecodeError, ValueError)

Progress = Callable[[int, int], None]

#: language used for a task that names none (BCP 47 "undetermined")
UNDETERMINED_LANGUAGE = "und"


# ---------------------------------------------------------------------------
# task names -> (task, language)
# ---------------------------------------------------------------------------

#: lm-evaluation-harness task families whose task names end in a language:
#: ``<family>_<language>`` (``xnli_de``, ``belebele_dan_Latn``, ``xquad_es``...)
KNOWN_FAMILIES: tuple[str, ...] = (
    "xnli",
    "belebele",
    "xquad",
    "xcopa",
    "xstorycloze",
    "xwinograd",
    "paws",
    "pawsx",
    "mgsm_direct",
    "mgsm_native_cot",
    "mgsm_en_cot",
    "m_mmlu",
    "global_mmlu",
    "arc",
    "hellaswag",
    "lambada_openai_mt",
    "afrixnli",
    "afrimmlu",
    "kmmlu",
    "mlqa",
    "tydiqa",
    "wikiann",
    "flores",
)

_LANGUAGE_RE = re.compile(r"^[a-z]{2,3}(?:[_-][A-Z][a-z]{3})?(?:[_-](?:[A-Z]{2}|\d{3}))?$")


@dataclass(frozen=True)
class TaskLanguageMap:
    """How task names are split into (task, language).

    ``overrides`` map a full task name to ``(task, language)``; ``families``
    are prefixes whose tasks are named ``<family>_<language>`` (the language
    a BCP 47-like code: ``de``, ``dan_Latn``, ``zh-CN``); with ``auto_suffix``
    any other name ending in an ISO 639 code is split too (``scala_da`` →
    ``scala``, ``da``; see :func:`~glotbench.importers.task_languages.language_suffix`);
    any other task keeps its name and gets ``default_language``.
    """

    families: tuple[str, ...] = KNOWN_FAMILIES
    overrides: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    default_language: str = UNDETERMINED_LANGUAGE
    auto_suffix: bool = True

    @classmethod
    def build(
        cls,
        families: Iterable[str] | None = None,
        mapping: Mapping[str, str] | Iterable[str] | None = None,
        default_language: str | None = None,
        auto_suffix: bool = True,
    ) -> TaskLanguageMap:
        """From extra families and ``TASK=NAME:LANG`` (or ``TASK=LANG``) entries."""
        overrides: dict[str, tuple[str, str]] = {}
        items: list[tuple[str, str]] = []
        if isinstance(mapping, Mapping):
            items = [(str(k), str(v)) for k, v in mapping.items()]
        elif mapping is not None:
            for entry in mapping:
                key, sep, value = str(entry).partition("=")
                if not sep or not key.strip() or not value.strip():
                    raise InputError(
                        f"a task mapping must look like TASK=NAME:LANGUAGE or TASK=LANGUAGE, "
                        f"got {entry!r}",
                        field="map",
                    )
                items.append((key.strip(), value.strip()))
        for key, value in items:
            name, sep, lang = value.rpartition(":")
            overrides[key] = (name.strip() or key, lang.strip()) if sep else (key, value)
        fams = tuple(dict.fromkeys([*(families or ()), *KNOWN_FAMILIES]))
        return cls(
            families=tuple(sorted(fams, key=len, reverse=True)),
            overrides=overrides,
            default_language=default_language or UNDETERMINED_LANGUAGE,
            auto_suffix=auto_suffix,
        )

    def split(self, name: str) -> tuple[str, str]:
        if name in self.overrides:
            return self.overrides[name]
        for family in sorted(self.families, key=len, reverse=True):
            for sep in ("_", "-"):
                prefix = family + sep
                if name.startswith(prefix):
                    rest = name[len(prefix) :]
                    if _LANGUAGE_RE.match(rest):
                        return family, rest
        if self.auto_suffix:
            found = language_suffix(name)
            if found is not None:
                return found
        return name, self.default_language


# ---------------------------------------------------------------------------
# runs and scores waiting to be written
# ---------------------------------------------------------------------------


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


#: examples per chunk when a large spilled run is written (:func:`write_import`)
CHUNK_WRITE_ROWS = 131_072

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


# ---------------------------------------------------------------------------
# the import result
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------


def read_json_file(path: Path) -> Any:
    """A whole JSON file; errors name the file and the line of the problem."""
    try:
        check_file_size(path.stat().st_size, str(path))
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise InputError(f"cannot read the file: {exc}", path=str(path)) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason})", path=str(path)) from None
    try:
        return json.loads(text, object_pairs_hook=unique_keys)
    except DuplicateKeyError as exc:
        raise InputError(
            f"the key {exc.key!r} appears twice in one JSON object; keep one (JSON readers "
            "silently keep the last)",
            path=str(path),
            line=_second_key_line(text, exc.key),
            field=exc.key,
        ) from None
    except json.JSONDecodeError as exc:
        truncated = exc.pos >= len(text.rstrip())
        reason = (
            f"truncated JSON: the file ends inside a value ({exc.msg}); was it completely written?"
            if truncated
            else f"invalid JSON ({exc.msg}, column {exc.colno})"
        )
        raise InputError(reason, path=str(path), line=exc.lineno) from None


def _second_key_line(text: str, key: str) -> int | None:
    """Line of the second ``"key":`` in ``text`` when the key occurs exactly twice, else None."""
    pattern = re.compile(re.escape(json.dumps(key)) + r"\s*:")
    hits = [m.start() for m in pattern.finditer(text)]
    if len(hits) != 2:  # with more, which pair shares an object is unknown
        return None
    return text.count("\n", 0, hits[1]) + 1


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-empty line; clear errors for bad lines."""
    for block in iter_jsonl_blocks(path):
        yield from block


def _parse_jsonl_line(raw: bytes, lineno: int, path: Path) -> dict[str, Any] | None:
    """One JSONL line, strictly (repeated keys are an error); None for a blank line."""
    text = raw.strip()
    if not text:
        return None
    try:
        value = json_loads(text)
    except DuplicateKeyError as exc:
        raise InputError(
            f"the key {exc.key!r} appears twice in one JSON object; keep one (JSON "
            "readers silently keep the last)",
            path=str(path),
            line=lineno,
            field=exc.key,
        ) from None
    except _JSON_ERRORS as exc:
        if not raw.endswith(b"\n"):
            reason = (
                "truncated JSON record: the file ends inside it; was the file completely written?"
            )
        else:
            reason = f"invalid JSON ({exc}); each line must be one JSON object"
        raise InputError(reason, path=str(path), line=lineno) from None
    if not isinstance(value, dict):
        raise InputError(
            f"expected a JSON object ({{...}}) per line, got {type(value).__name__}",
            path=str(path),
            line=lineno,
        )
    return value


#: a key's closing quote separated from its colon by whitespace, or a quote or a colon
#: written as an escape (re-serialising writes ``\":`` for the string text ``\"\u003a`` and so
#: adds a ``":`` the raw text lacks, which would hide one repeated key): the fast
#: duplicate-key check cannot count such blocks, the exact parser does
_UNCOUNTABLE_KEYS = re.compile(rb'"[ \t\r]+:|\\u0022|\\u003[aA]')


def _fast_block(lines: list[bytes]) -> list[Any] | None:
    """Parse a block of lines with orjson, or None when the strict parser must decide.

    orjson keeps the last of repeated keys silently, so the block is accepted
    only when it provably has none: every ``":`` in valid JSON ends a key or
    sits inside a string as ``\\":``; re-serialising the parsed objects
    (orjson writes ``"`` in strings as ``\\"``, and no whitespace) keeps the
    in-string ones and drops one key per repetition. Equal counts, with no key
    the count cannot see (:data:`_UNCOUNTABLE_KEYS`), mean no key was repeated.
    """
    if _orjson is None:
        return None
    blob = b"\n".join(lines)
    if _UNCOUNTABLE_KEYS.search(blob):
        return None
    try:
        values = [_orjson.loads(line) for line in lines]
    except _orjson.JSONDecodeError:
        return None
    if any(type(v) is not dict for v in values):
        return None
    try:
        dumped = _orjson.dumps(values)
    except TypeError:  # e.g. integers beyond 64 bits: the stdlib parser decides
        return None
    if blob.count(b'":') != dumped.count(b'":'):
        return None
    return values


def iter_jsonl_blocks(
    path: Path, *, block_lines: int = 65536
) -> Iterator[list[tuple[int, dict[str, Any]]]]:
    """Blocks of (line number, object) of a JSONL file, read ``block_lines`` lines at a time.

    A block is parsed with orjson when it is installed and the block provably
    has no repeated key (:func:`_fast_block`); otherwise, and for every error
    message, line by line with the strict standard-library parser, so the
    result and the errors are the same either way. Memory is bounded by the
    block, not the file.
    """
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise InputError(f"cannot read the file: {exc}", path=str(path)) from None
    with fh:
        first = 1
        while True:
            raw_lines = _read_block(fh, path, first, block_lines)
            if not raw_lines:
                return
            numbered = [(first + i, raw) for i, raw in enumerate(raw_lines) if raw.strip()]
            first += len(raw_lines)
            complete = raw_lines[-1].endswith(b"\n")
            fast = _fast_block([raw for _, raw in numbered]) if complete else None
            if fast is not None:
                yield [(lineno, value) for (lineno, _), value in zip(numbered, fast, strict=True)]
                continue
            block = []
            for lineno, raw in numbered:
                value = _parse_jsonl_line(raw, lineno, path)
                if value is not None:
                    block.append((lineno, value))
            yield block


#: bytes of lines read per block (besides ``block_lines``): memory stays bounded with long lines
BLOCK_BYTES = 1 << 26


def _read_block(fh: Any, path: Path, first: int, block_lines: int) -> list[bytes]:
    """Up to ``block_lines`` lines (and about :data:`BLOCK_BYTES`); an over-long line is refused.

    Each line is read with ``readline(MAX_LINE_BYTES + 1)``, so a line longer
    than the limit is refused after one limit's worth of it was read.
    """
    lines: list[bytes] = []
    size = 0
    while len(lines) < block_lines and size < BLOCK_BYTES:
        raw = fh.readline(MAX_LINE_BYTES + 1)
        if not raw:
            break
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            raise line_too_long(str(path), first + len(lines), MAX_LINE_BYTES)
        lines.append(raw)
        size += len(raw)
    return lines


def files_sha256(files: Sequence[Path], root: Path, extra: str = "") -> str:
    """SHA-256 over (relative name, content hash) of ``files`` and the import options."""
    h = hashlib.sha256()
    for p in sorted(files, key=lambda f: str(f.relative_to(root)) if root in f.parents else str(f)):
        rel = str(p.relative_to(root)) if root in p.parents else p.name
        h.update(rel.encode("utf-8") + b"\0" + file_sha256(p).encode("ascii") + b"\n")
    h.update(extra.encode("utf-8"))
    return h.hexdigest()


def finite_number(value: Any) -> float | None:
    """``value`` as a finite float, or None (booleans count as 0/1)."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and math.isfinite(float(value)):
        return float(value)
    return None


# ---------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------


def check_against_store(store: Store, runs: Sequence[PendingRun]) -> list[PendingRun]:
    """Runs still to write; a run stored with different statistics is an error.

    Also checks that a new run covers the same example ids as the runs of other
    models already stored for its (dataset, task, language, metric, config):
    paired analyses need the same test examples for every model.
    """
    stored = store.runs.stored(r.record.run_id for r in runs)
    todo: list[PendingRun] = []
    for run in runs:
        existing = stored.get(run.record.run_id)
        if existing is None:
            todo.append(run)
            continue
        ids, stats = run.arrays()
        digest = stats_digest(ids, stats, tuple(run.record.stat_names))
        if digest != existing["stats_sha256"]:
            raise run.error(
                f"the run {run.record.describe()} is already stored with different statistics "
                f"({existing['n_examples']} examples, from {existing['source']}); a run's key "
                "must identify one result — import into another store, or give the runs "
                "different seeds"
            )
    _check_ids_against_store(store, todo)
    return todo


def _check_ids_against_store(store: Store, runs: Sequence[PendingRun]) -> None:
    cache: dict[tuple[str, ...], tuple[str, set[str]] | None] = {}
    con = store.connection
    for run in runs:
        r = run.record
        key = (r.dataset, r.task, r.language, r.metric, r.config_hash)
        if key not in cache:
            row = con.execute(
                "SELECT run_id, model FROM runs WHERE dataset = ? AND task = ? AND language = ? "
                "AND metric = ? AND config_hash = ? ORDER BY model, seed NULLS FIRST LIMIT 1",
                list(key),
            ).fetchall()
            if not row:
                cache[key] = None
            else:
                ids = con.execute(
                    "SELECT example_id FROM example_stats WHERE run_id = ?", [row[0][0]]
                ).fetchall()
                cache[key] = (row[0][1], {i[0] for i in ids})
        ref = cache[key]
        if ref is None:
            continue
        other_model, ref_ids = ref
        new_ids = set(run.ids().tolist())
        if new_ids != ref_ids:
            missing = sorted(ref_ids - new_ids)[:3]
            extra = sorted(new_ids - ref_ids)[:3]
            raise run.error(
                f"the examples of {r.describe()} differ from those stored for model "
                f"{other_model!r} on the same task and language ({len(new_ids)} vs "
                f"{len(ref_ids)} ids"
                + (f"; missing e.g. {missing}" if missing else "")
                + (f"; unexpected e.g. {extra}" if extra else "")
                + "); paired analyses need the same test examples for every model — "
                "evaluate on the full test set (no --limit) or import into another store",
                field=run.field or "doc_id",
            )


def check_same_examples(runs: Sequence[PendingRun]) -> None:
    """All runs of one (dataset, task, language, metric, config) cover the same ids.

    Runs are compared by a digest of their sorted ids (one run's ids in memory
    at a time, so spilled runs stay on disk); the ids are read back only to
    describe a disagreement.
    """
    first: dict[tuple[str, ...], tuple[PendingRun, str]] = {}
    for run in runs:
        r = run.record
        key = (r.dataset, r.task, r.language, r.metric, r.config_hash)
        if key not in first:
            first[key] = (run, "")
            continue
        ref, ref_digest = first[key]
        if not ref_digest:
            ref_digest = _ids_digest(ref.ids())
            first[key] = (ref, ref_digest)
        if ref.n_examples == run.n_examples and _ids_digest(run.ids()) == ref_digest:
            continue
        ref_ids, new_ids = set(ref.ids().tolist()), set(run.ids().tolist())
        missing = sorted(ref_ids - new_ids)[:3]
        extra = sorted(new_ids - ref_ids)[:3]
        raise run.error(
            f"the example ids of model {r.model!r} (seed {r.seed}) on task {r.task!r}, language "
            f"{r.language!r} disagree with those of model {ref.record.model!r} (seed "
            f"{ref.record.seed}) in {ref.path}: {len(new_ids)} vs {len(ref_ids)} ids"
            + (f"; missing e.g. {missing}" if missing else "")
            + (f"; unexpected e.g. {extra}" if extra else "")
            + "; paired analyses need the same test examples for every model and seed",
            field=run.field or "doc_id",
        )


def _ids_digest(ids: np.ndarray) -> str:
    """SHA-256 of the sorted ids (as text), each followed by a NUL."""
    text = "\0".join(np.sort(ids.astype(str)).tolist()) + "\0"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def write_import(
    store: Store,
    *,
    kind: str,
    source: Path,
    sha: str,
    runs: Sequence[PendingRun],
    score_rows: Sequence[ScoreRow],
    n_files: int,
    progress: Progress | None = None,
    t0: float | None = None,
    chunk_rows: int | None = None,
) -> HarnessImportResult:
    """Write validated runs and scores with the store's guarantees (see module doc).

    A spilled run of more than ``chunk_rows`` (default :data:`CHUNK_WRITE_ROWS`)
    examples is written chunk by chunk, in several transactions with its
    ``runs`` row last (``store.runs.write_chunks``):
    memory holds one chunk of it and one transaction's rows; the stored rows
    and digest do not depend on the chunk size, and a re-run after a kill
    deletes the killed write's rows before writing the run again.
    """
    t0 = time.perf_counter() if t0 is None else t0
    models = sorted({r.record.model for r in runs} | {s.model for s in score_rows})
    tasks = sorted({r.record.task for r in runs} | {s.task for s in score_rows})
    languages = sorted({r.record.language for r in runs} | {s.language for s in score_rows})
    base = {
        "kind": kind,
        "source": str(source),
        "store": str(store.path),
        "sha256": sha,
        "files": n_files,
        "models": models,
        "tasks": tasks,
        "languages": languages,
    }
    # decide from the store's content and write under the writer lock: one writer at a time
    with store.writing():
        return _write_import(store, runs, score_rows, sha, base, progress, t0, chunk_rows)


def _write_import(
    store: Store,
    runs: Sequence[PendingRun],
    score_rows: Sequence[ScoreRow],
    sha: str,
    base: dict[str, Any],
    progress: Progress | None,
    t0: float,
    chunk_rows: int | None = None,
) -> HarnessImportResult:
    source = Path(base["source"])
    record_kind = "examples" if runs else "scores"
    done = store.imports.find(sha, record_kind, completed=True)
    if done is not None:
        return HarnessImportResult(
            status="skipped",
            import_id=done.import_id,
            message=(
                f"this input (sha256 {sha[:12]}…) was already imported (import "
                f"{done.import_id}); nothing to do"
            ),
            seconds=time.perf_counter() - t0,
            **base,
        )
    score_rows, nan_notes = split_nan_scores(score_rows)
    check_score_ranges(score_rows)
    check_score_rows(score_rows)
    unique_scores = dedupe_score_rows(score_rows)
    check_runs(runs)
    check_same_examples(runs)
    todo = check_against_store(store, runs)
    frame = scores_frame(unique_scores) if unique_scores else None

    scores_added = scores_skipped = 0
    status: Literal["imported", "resumed"] = "imported"
    if not runs:
        import_id = new_import_id()
        record = ImportRecord(
            import_id=import_id,
            kind="scores",
            source=str(source.resolve()),
            sha256=sha,
            rows=len(unique_scores),
        )
        if frame is not None:
            scores_added, scores_skipped = _add_scores(store, frame, record, unique_scores)
        else:
            store.imports.start(record)
            store.imports.complete(import_id, 0)
        return HarnessImportResult(
            status=status,
            import_id=import_id,
            scores_added=scores_added,
            scores_skipped=scores_skipped,
            message=_message(0, 0, 0, scores_added, scores_skipped, status),
            notes=list(nan_notes),
            seconds=time.perf_counter() - t0,
            **base,
        )

    if frame is not None:
        # scores first, in their own transaction, before the examples import is
        # started: a conflicting score leaves the store as it was; a re-run skips them
        scores_record = ImportRecord(
            import_id=new_import_id(),
            kind="scores",
            source=str(source.resolve()),
            sha256=hashlib.sha256((sha + ":scores").encode()).hexdigest(),
            rows=len(unique_scores),
        )
        scores_added, scores_skipped = _add_scores(store, frame, scores_record, unique_scores)
    partial = store.imports.find(sha, "examples", completed=False)
    if partial is not None:
        import_id, status = partial.import_id, "resumed"
    else:
        import_id = new_import_id()
        store.imports.start(
            ImportRecord(
                import_id=import_id,
                kind="examples",
                source=str(source.resolve()),
                sha256=sha,
                rows=int(sum(r.n_examples for r in runs)),
            )
        )
    total = len(todo)
    if progress is not None:
        progress(0, total)
    for run in todo:
        run.record.import_id = import_id
    rows = CHUNK_WRITE_ROWS if chunk_rows is None else chunk_rows
    # a spilled run larger than a chunk is written chunk by chunk (several transactions a
    # run, its runs row last), the others in batches of whole runs
    large = [run for run in todo if run.spool is not None and run.n_examples > rows]
    small = [run for run in todo if not (run.spool is not None and run.n_examples > rows)]
    written = store.runs.write_batches(
        ((run.record, *run.arrays()) for run in small),  # spilled runs read back one at a time
        progress=None if progress is None else (lambda done: progress(done, total)),
    )
    examples = written.examples
    for n_done, run in enumerate(large, start=len(small) + 1):
        spool, index = run.spool, run.spool_index
        assert spool is not None
        if store.runs.write_chunks(run.record, functools.partial(spool.iter_chunks, index, rows)):
            examples += run.n_examples
        if progress is not None:
            progress(n_done, total)
    added = store.imports.count_runs(import_id)
    store.imports.complete(import_id, added)
    skipped = len(runs) - total
    return HarnessImportResult(
        status=status,
        import_id=import_id,
        runs_added=total,
        runs_skipped=skipped,
        examples_added=examples,
        scores_added=scores_added,
        scores_skipped=scores_skipped,
        message=_message(total, skipped, examples, scores_added, scores_skipped, status),
        notes=list(nan_notes),
        seconds=time.perf_counter() - t0,
        **base,
    )


def _add_scores(
    store: Store, frame: pd.DataFrame, record: ImportRecord, rows: Sequence[ScoreRow]
) -> tuple[int, int]:
    try:
        return store.scores.add(frame, record)
    except ScoreConflictError as exc:
        row = rows[exc.position]
        raise InputError(exc.reason, path=row.path, line=row.line, field=row.field) from None


def _message(
    runs: int, skipped: int, examples: int, scores: int, scores_skipped: int, status: str
) -> str:
    parts = []
    if runs or skipped:
        parts.append(f"added {runs} run(s) ({examples} examples)")
        if skipped:
            parts.append(f"{skipped} run(s) already complete in the store, skipped")
    parts.append(f"added {scores} score(s)")
    if scores_skipped:
        parts.append(f"{scores_skipped} score(s) already stored with the same values, skipped")
    text = "; ".join(parts)
    if status == "resumed":
        text += " (resumed an interrupted import of this input)"
    return text
