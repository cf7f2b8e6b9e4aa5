"""Shared machinery of the harness importers (lm-eval, EuroEval, XTREME).

Every importer turns its input into two things and hands them to
:func:`write_import`:

* :class:`PendingRun` — one run (model, dataset, task, language, seed,
  config_hash, metric) with its per-example statistics matrix and where it came
  from (file and line, for error messages);
* a tidy scores frame (the columns of
  :func:`glotbench.core.validate.validate_scores`) for aggregate scores.

:func:`write_import` then applies the store's guarantees, the same as the tidy
importers of :mod:`glotbench.core.ingest`:

* everything is read and checked before anything is written;
* a run whose key is already stored with the same statistics is skipped, with
  different statistics it is an error naming the file and line it came from;
* runs are written in transactions of whole runs (``Store.write_run_batches``),
  so an interrupted import is completed by running the same command again;
* scores are added in one transaction (``Store.add_scores``), rows stored with
  the same values are skipped;
* the same input (same SHA-256 over its files) imported again is a no-op.
"""

from __future__ import annotations

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

from glotbench.core.readers import file_sha256
from glotbench.core.schema import ImportRecord, RunRecord, stats_digest
from glotbench.core.store import ScoreConflictError, Store, new_import_id
from glotbench.errors import InputError
from glotbench.importers.task_languages import language_suffix

try:  # optional speed-up: orjson parses JSON lines ~3x faster
    import orjson as _orjson

    def json_loads(text: str | bytes) -> Any:
        return _orjson.loads(text)

    _JSON_ERRORS: tuple[type[Exception], ...] = (_orjson.JSONDecodeError, ValueError)
except ImportError:  # pragma: no cover - orjson is optional

    def json_loads(text: str | bytes) -> Any:
        return json.loads(text)

    _JSON_ERRORS = (json.JSONDecodeError, ValueError)

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

    def error(self, message: str, *, field: str | None = None) -> InputError:
        return InputError(message, path=self.path, line=self.line, field=field or self.field)


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
    """The frame ``Store.add_scores`` takes (validate_scores's columns)."""
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
    """What a harness import did (``--json`` prints :meth:`to_dict`).

    ``status``: ``imported``, ``resumed`` (an interrupted import of the same
    input was completed) or ``skipped`` (this exact input was imported before).
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
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise InputError(f"cannot read the file: {exc}", path=str(path)) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason})", path=str(path)) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        truncated = exc.pos >= len(text.rstrip())
        reason = (
            f"truncated JSON: the file ends inside a value ({exc.msg}); was it completely written?"
            if truncated
            else f"invalid JSON ({exc.msg}, column {exc.colno})"
        )
        raise InputError(reason, path=str(path), line=exc.lineno) from None


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-empty line; clear errors for bad lines."""
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise InputError(f"cannot read the file: {exc}", path=str(path)) from None
    with fh:
        for lineno, raw in enumerate(fh, start=1):
            text = raw.strip()
            if not text:
                continue
            try:
                value = json_loads(text)
            except _JSON_ERRORS as exc:
                if not raw.endswith(b"\n"):
                    reason = (
                        "truncated JSON record: the file ends inside it; was the file "
                        "completely written?"
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
            yield lineno, value


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
    stored = store.stored_runs(r.record.run_id for r in runs)
    todo: list[PendingRun] = []
    for run in runs:
        existing = stored.get(run.record.run_id)
        if existing is None:
            todo.append(run)
            continue
        digest = stats_digest(run.example_ids, run.stats, tuple(run.record.stat_names))
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
        new_ids = set(run.example_ids.tolist())
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
    """All runs of one (dataset, task, language, metric, config) cover the same ids."""
    first: dict[tuple[str, ...], PendingRun] = {}
    for run in runs:
        r = run.record
        key = (r.dataset, r.task, r.language, r.metric, r.config_hash)
        ref = first.setdefault(key, run)
        if ref is run:
            continue
        if ref.example_ids.size == run.example_ids.size and np.array_equal(
            np.sort(ref.example_ids.astype(str)), np.sort(run.example_ids.astype(str))
        ):
            continue
        ref_ids, new_ids = set(ref.example_ids.tolist()), set(run.example_ids.tolist())
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
) -> HarnessImportResult:
    """Write validated runs and scores with the store's guarantees (see module doc)."""
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
    record_kind = "examples" if runs else "scores"
    done = store.find_import(sha, record_kind, completed=True)
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
    check_score_rows(score_rows)
    unique_scores = dedupe_score_rows(score_rows)
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
            store.start_import(record)
            store.complete_import(import_id, 0)
        return HarnessImportResult(
            status=status,
            import_id=import_id,
            scores_added=scores_added,
            scores_skipped=scores_skipped,
            message=_message(0, 0, 0, scores_added, scores_skipped, status),
            seconds=time.perf_counter() - t0,
            **base,
        )

    partial = store.find_import(sha, "examples", completed=False)
    if partial is not None:
        import_id, status = partial.import_id, "resumed"
    else:
        import_id = new_import_id()
        store.start_import(
            ImportRecord(
                import_id=import_id,
                kind="examples",
                source=str(source.resolve()),
                sha256=sha,
                rows=int(sum(r.example_ids.size for r in runs)),
            )
        )
    if frame is not None:
        # scores first, in their own transaction; a re-run skips the stored rows
        scores_record = ImportRecord(
            import_id=new_import_id(),
            kind="scores",
            source=str(source.resolve()),
            sha256=hashlib.sha256((sha + ":scores").encode()).hexdigest(),
            rows=len(unique_scores),
        )
        scores_added, scores_skipped = _add_scores(store, frame, scores_record, unique_scores)
    total = len(todo)
    if progress is not None:
        progress(0, total)
    for run in todo:
        run.record.import_id = import_id
    written = store.write_run_batches(
        ((run.record, run.example_ids, run.stats) for run in todo),
        progress=None if progress is None else (lambda done: progress(done, total)),
    )
    examples = written.examples
    added = store.count_runs_of_import(import_id)
    store.complete_import(import_id, added)
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
        seconds=time.perf_counter() - t0,
        **base,
    )


def _add_scores(
    store: Store, frame: pd.DataFrame, record: ImportRecord, rows: Sequence[ScoreRow]
) -> tuple[int, int]:
    try:
        return store.add_scores(frame, record)
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
