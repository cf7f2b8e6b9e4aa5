"""Import an lm-evaluation-harness output folder.

``lm_eval ... --output_path OUT [--log_samples]`` writes, per evaluation,
``OUT/<model>/results_<timestamp>.json`` and, with ``--log_samples``, one
``samples_<task>_<timestamp>.jsonl`` per task (see ``docs/importers/lm-eval.md``).

From the **samples** each task becomes runs with per-example statistics keyed
by ``doc_id``:

* every per-sample metric whose aggregation is the mean (``acc``,
  ``acc_norm``, ``exact_match``, ...) gives statistics ``(value, 1)``;
* corpus metrics whose per-sample record carries what the statistics need:
  ``f1`` and ``mcc`` (``[gold, pred]`` → ``f1_binary`` / ``mcc`` counts),
  ``bleu``, ``chrf`` and ``chrf++`` (``[reference, prediction]`` → sacrebleu's
  segment statistics);
* other aggregations (perplexity, bits per byte, ...) are reported and skipped.

The run metric is the glotbench registry metric that reproduces the harness's
aggregation: ``acc`` → ``accuracy``, ``f1`` → ``f1_binary``, ``mcc`` → ``mcc``,
``bleu``/``chrf``/``chrf++`` as named. Other mean metrics with 0/1 values
(``acc_norm``, ``exact_match``, ...) are stored as ``accuracy`` — the share of
examples the harness counted correct — with ``config_hash`` ``lm_eval=<name>``,
which keeps them apart from ``acc``; means of other values (brier score, ...)
are only imported as aggregate scores. A filter other than ``none`` (e.g.
``strict-match``) is added to the ``config_hash`` (``filter=strict-match``).

From the **results** JSON each task's metrics become aggregate scores with
their standard error (metric names as lm-eval writes them, ``acc``,
``acc_norm``, ...; ``,<filter>`` appended unless the filter is ``none``).
Group rows (``groups`` / ``group_subtasks``) are kept apart: their language is
``all`` and ``metadata.lm_eval_kind`` is ``group``.

Several results files of the same task (different ``--seed``) become runs with
different seeds: the seed is the ``fewshot_seed`` of the results' ``config``
(``random_seed`` when that is null), or the file's order with
``seed_from="order"``. Task names are split into (task, language) by a
:class:`~glotbench.importers.common.TaskLanguageMap` (explicit entries, known
families, then ISO 639 suffixes).

Every run and score declares the task's ``primary_metric``
(:func:`primary_metric`: the first metric of the task's ``metric_list``) and
every run its ``source_metric`` (lm-eval's name, ``acc_norm``), so analyses
rank each task on lm-eval's metric and ``--metric acc_norm`` reaches the runs
(:mod:`glotbench.analysis.selection`).
"""

from __future__ import annotations

import json
import math
import re
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import duckdb
import numpy as np

from glotbench.errors import InputError
from glotbench.importers.common import (
    HarnessImportResult,
    PendingRun,
    Progress,
    ScoreRow,
    TaskLanguageMap,
    check_runs,
    files_sha256,
    finite_number,
    iter_jsonl,
    read_json_file,
    write_import,
)
from glotbench.importers.task_languages import read_task_language_file
from glotbench.ingest.limits import MAX_LINE_BYTES
from glotbench.ingest.spool import RunSpool, RunSpoolWriter
from glotbench.ingest.staging import staging_dir
from glotbench.metrics import get_metric
from glotbench.store.names import check_name
from glotbench.store.schema import RunRecord
from glotbench.store.store import Store

#: lm-eval corpus aggregations glotbench can rebuild from per-sample records
CORPUS_METRICS: dict[str, str] = {
    "f1": "f1_binary",
    "mcc": "mcc",
    "matthews_corrcoef": "mcc",
    "bleu": "bleu",
    "chrf": "chrf",
    "chrf++": "chrf++",
}
#: lm-eval mean metrics with a registry metric of their own
MEAN_METRICS: dict[str, str] = {"acc": "accuracy"}
#: aggregations that are a plain mean of the per-sample values
MEAN_AGGREGATIONS = frozenset({"mean", None})
_RESULTS_RE = re.compile(r"^results_(?P<stamp>.+)\.json$")
_SAMPLES_RE = re.compile(r"^samples_(?P<task>.+)_(?P<stamp>[^_]+)\.jsonl$")


@dataclass
class LmEvalRun:
    """One ``results_<timestamp>.json`` and the samples files written with it."""

    results_path: Path
    stamp: str
    data: dict[str, Any]
    samples: dict[str, Path] = field(default_factory=dict)


def _find_runs(root: Path) -> list[LmEvalRun]:
    if root.is_file():
        if not _RESULTS_RE.match(root.name):
            raise InputError(
                "expected an lm-evaluation-harness output folder or a results_<timestamp>.json "
                "file",
                path=str(root),
            )
        candidates = [root]
        folder = root.parent
    elif root.is_dir():
        candidates = sorted(p for p in root.rglob("results_*.json") if _RESULTS_RE.match(p.name))
        folder = root
    else:
        raise InputError("no such file or folder", path=str(root))
    if not candidates:
        raise InputError(
            "no results_<timestamp>.json in this folder; pass the --output_path folder of "
            "lm_eval (or the model folder inside it)",
            path=str(root),
        )
    runs: list[LmEvalRun] = []
    for path in candidates:
        stamp = _RESULTS_RE.match(path.name).group("stamp")  # type: ignore[union-attr]
        data = read_json_file(path)
        if not isinstance(data, dict):
            raise InputError("expected a JSON object at the top level", path=str(path), line=1)
        run = LmEvalRun(path, stamp, data)
        for sample in sorted(path.parent.glob(f"samples_*_{stamp}.jsonl")):
            m = _SAMPLES_RE.match(sample.name)
            if m and m.group("stamp") == stamp:
                run.samples[m.group("task")] = sample
        runs.append(run)
    del folder
    return runs


def _not_available(value: Any) -> bool:
    """lm-eval's "no value here": ``"N/A"`` (its stderr placeholder) or null."""
    return value is None or (isinstance(value, str) and value.strip().upper() in ("N/A", ""))


def _json_number(value: Any, path: str, field: str) -> float:
    """``value`` when it is a JSON number (a boolean counts as 0/1), else InputError.

    A number written as a string (``"0.5"``), a list or an object is refused,
    never converted: the file was not written by lm-eval as documented.
    """
    if isinstance(value, bool | int | float):
        return float(value)
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    raise InputError(
        f"a metric value must be a JSON number, got {type(value).__name__} {shown}"
        + (" (a number written as text: remove the quotes)" if isinstance(value, str) else ""),
        path=path,
        field=field,
    )


def _model_name(data: Mapping[str, Any], override: str | None, path: str) -> str:
    if override:
        return override
    name = data.get("model_name")
    if not name:
        cfg = data.get("config") or {}
        args = cfg.get("model_args")
        if isinstance(args, str):
            m = re.search(r"(?:pretrained|model|engine)=([^,]+)", args)
            name = m.group(1) if m else None
        elif isinstance(args, Mapping):
            name = args.get("pretrained") or args.get("model")
        name = name or cfg.get("model")
    if not name:
        return "unknown-model"
    if not isinstance(name, str):  # never str()-converted: "{'a': 1}" is not a model
        raise InputError(
            f"the model name must be text, got {type(name).__name__} {name!r:.60}",
            path=path,
            field="model_name",
        )
    text = name
    if text.startswith(("/", "./", "../", "~")):  # a local checkpoint: its folder name
        return Path(text.rstrip("/")).name or text
    return text


def _seed(run: LmEvalRun, index: int, seed_from: str) -> int | None:
    if seed_from == "order":
        return index
    cfg = run.data.get("config") or {}
    for key in ("fewshot_seed", "random_seed"):
        value = cfg.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _split_key(key: str) -> tuple[str, str]:
    name, _, filt = key.partition(",")
    return name, filt or "none"


def _aggregations(data: Mapping[str, Any], task: str) -> dict[str, Any]:
    cfg = (data.get("configs") or {}).get(task) or {}
    out: dict[str, Any] = {}
    for item in cfg.get("metric_list") or []:
        if isinstance(item, Mapping) and "metric" in item:
            agg = item.get("aggregation")
            out[str(item["metric"])] = agg if isinstance(agg, str) else None
    return out


def _score_name(metric: str, filt: str) -> str:
    """How glotbench names an lm-eval metric: ``acc``; ``exact_match,strict-match``."""
    return metric if filt == "none" else f"{metric},{filt}"


def primary_metric(data: Mapping[str, Any], task: str) -> str | None:
    """lm-eval's primary metric of ``task``: the first of its ``metric_list`` that it reports.

    The task's configured ``metric_list`` order (the first is the metric lm-eval's
    own tables lead with), with the first filter the results list for it; a task
    without a configuration (a group) takes its first reported metric.
    """
    entries = (data.get("results") or {}).get(task) or (data.get("groups") or {}).get(task) or {}
    reported = [
        _split_key(key)
        for key, value in entries.items()
        if "," in key and "_stderr," not in key and finite_number(value) is not None
    ]
    if not reported:
        return None
    for name in _aggregations(data, task):
        for metric, filt in reported:
            if metric == name:
                return _score_name(metric, filt)
    return _score_name(*reported[0])


def _group_names(data: Mapping[str, Any]) -> set[str]:
    groups = set((data.get("groups") or {}).keys())
    for name, subtasks in (data.get("group_subtasks") or {}).items():
        if subtasks:
            groups.add(name)
    return groups


def _score_rows(
    run: LmEvalRun, model: str, seed: int | None, mapping: TaskLanguageMap
) -> list[ScoreRow]:
    data = run.data
    path = str(run.results_path)
    results = data.get("results")
    if not isinstance(results, Mapping):
        raise InputError(
            "missing the 'results' object (is this an lm-evaluation-harness results file?)",
            path=path,
            field="results",
        )
    groups = _group_names(data)
    n_samples = data.get("n-samples") or {}
    rows: list[ScoreRow] = []
    sections: list[tuple[str, Mapping[str, Any]]] = [("results", results)]
    if isinstance(data.get("groups"), Mapping):
        sections.append(("groups", data["groups"]))
    for section, table in sections:
        for task, metrics in table.items():
            if not isinstance(metrics, Mapping):
                raise InputError(
                    f"expected an object of metric values for task {task!r}",
                    path=path,
                    field=f"{section}.{task}",
                )
            is_group = task in groups
            if is_group:
                name, language = task, "all"
            else:
                name, language = mapping.split(task)
            n_info = n_samples.get(task) or {}
            n = n_info.get("effective") if isinstance(n_info, Mapping) else None
            if n is None:
                n = metrics.get("sample_len")
            for key, value in metrics.items():
                # metric entries are "<metric>,<filter>"; skip alias, name, sample_len, ...
                if "," not in key or "_stderr," in key:
                    continue
                metric, filt = _split_key(key)
                where = f"{section}.{task}.{key}"
                if _not_available(value):
                    continue  # lm-eval writes "N/A" (or null) where it has no value
                score = finite_number(_json_number(value, path, where))
                if score is None:
                    score = math.nan  # not stored; write_import notes where it was
                stderr_key = f"{metric}_stderr,{filt}"
                stderr = metrics.get(stderr_key)
                se = (
                    None
                    if _not_available(stderr)
                    else finite_number(_json_number(stderr, path, f"{section}.{task}.{stderr_key}"))
                )
                stored_metric = _score_name(metric, filt)
                meta: dict[str, Any] = {
                    "source": "lm-evaluation-harness",
                    "lm_eval_task": task,
                    "lm_eval_metric": key,
                    "lm_eval_kind": "group" if is_group else "task",
                    "primary_metric": primary_metric(data, task),
                    "results_file": run.results_path.name,
                }
                if is_group:
                    meta["subtasks"] = list((data.get("group_subtasks") or {}).get(task) or [])
                version = (data.get("versions") or {}).get(task)
                if version is not None:
                    meta["task_version"] = version
                shots = (data.get("n-shot") or {}).get(task)
                if shots is not None:
                    meta["num_fewshot"] = shots
                rows.append(
                    ScoreRow(
                        model=model,
                        task=name,
                        language=language,
                        dataset=name,
                        metric=stored_metric,
                        score=score,
                        seed=seed,
                        stderr=se,
                        n=int(n) if isinstance(n, int) and not isinstance(n, bool) else None,
                        metadata=meta,
                        path=path,
                        field=f"{section}.{task}.{key}",
                    )
                )
    return rows


def _model_metadata(data: Mapping[str, Any]) -> dict[str, Any]:
    cfg = data.get("config") or {}
    meta: dict[str, Any] = {"harness": "lm-evaluation-harness"}
    for key in ("model", "model_args", "batch_size", "device"):
        if cfg.get(key) is not None:
            meta[key] = cfg[key]
    for key in ("lm_eval_version", "transformers_version", "model_name", "max_length", "git_hash"):
        if data.get(key) is not None:
            meta[key] = data[key]
    return meta


@dataclass
class _Column:
    """Per-sample values of one (metric, filter) of a samples file."""

    metric: str
    filt: str
    first_line: int
    #: lists when read line by line, arrays when read by DuckDB
    ids: Any = field(default_factory=list)
    values: Any = field(default_factory=list)
    lines: Any = field(default_factory=list)


#: JSON types of a per-sample number as DuckDB names them
_NUMBER_TYPES = ("DOUBLE", "BIGINT", "UBIGINT", "BOOLEAN")


def _read_samples(path: Path, task: str) -> tuple[dict[tuple[str, str], _Column], int]:
    """The samples file's per-sample values by (metric, filter), with their lines."""
    return read_samples_files([(path, task)])[path]


#: JSON bytes of samples files read per DuckDB query (and held in memory at once)
SAMPLES_BATCH_BYTES = 1 << 26


def read_samples_files(
    files: Sequence[tuple[Path, str]], *, batch_bytes: int | None = None
) -> dict[Path, tuple[dict[tuple[str, str], _Column], int]]:
    """Per-sample values of several samples files (path, task), by (metric, filter).

    All files at once (memory grows with them); :func:`iter_samples_files`
    yields them a batch at a time.
    """
    return dict(iter_samples_files(files, batch_bytes=batch_bytes))


def iter_samples_files(
    files: Sequence[tuple[Path, str]], *, batch_bytes: int | None = None
) -> Iterator[tuple[Path, tuple[dict[tuple[str, str], _Column], int]]]:
    """(path, per-sample values by (metric, filter)) of each samples file, as they are read.

    The common layout — every line an object with the first line's
    ``metrics`` list and numeric per-sample values, no blank lines — is read
    by DuckDB's JSON reader, files with the same metrics together, about
    ``batch_bytes`` (default :data:`SAMPLES_BATCH_BYTES`) of JSON per query
    (:func:`_read_columnar`, about 2 µs a
    sample); anything else, and every error message, goes through the strict
    line-by-line reader (:func:`_read_samples_strict`), so both give the same
    numbers. Each batch's files are yielded before the next batch is read, so
    memory holds one batch (or one strictly read file), whatever the number of
    files; the files come in batch order, strictly read files last.
    """
    batch_bytes = SAMPLES_BATCH_BYTES if batch_bytes is None else batch_bytes
    groups: dict[tuple[str, ...], list[Path]] = defaultdict(list)
    done: set[Path] = set()
    for path, _task in files:
        names = _first_metrics(path)
        if names is not None:
            groups[tuple(names)].append(path)
    with duckdb.connect() as con:
        for group_names, paths in groups.items():
            batch: list[Path] = []
            size = 0
            for next_path in [*paths, None]:
                if next_path is not None:
                    batch.append(next_path)
                    size += next_path.stat().st_size
                if batch and (next_path is None or size >= batch_bytes):
                    read = _read_columnar(con, batch, list(group_names))
                    batch, size = [], 0
                    for p, columns in read.items():
                        if columns is not None and p not in done:
                            done.add(p)
                            yield p, columns
                    del read
    for path, task in files:
        if path not in done:
            done.add(path)
            yield path, _read_samples_strict(path, task)


#: samples per chunk when a samples file is streamed to the spool (:func:`_stream_samples`)
SAMPLES_CHUNK_ROWS = 131_072


@dataclass
class _StreamedColumn:
    """One (metric, filter) of a streamed samples file: its record and its spooled rows."""

    metric: str
    filt: str
    first_line: int
    record: RunRecord
    #: None when the metric's aggregation is not a mean (only its score is imported)
    writer: RunSpoolWriter | None
    totals: np.ndarray = field(default_factory=lambda: np.zeros(2))
    binary: bool = True


def _stream_samples(
    con: duckdb.DuckDBPyConnection,
    item: tuple[LmEvalRun, str, int | None, str, Path],
    names: list[str],
    spool: RunSpool,
    chunk_rows: int,
    mapping: TaskLanguageMap,
) -> list[_StreamedColumn] | None:
    """A samples file read by DuckDB ``chunk_rows`` samples at a time, each chunk to the spool.

    The checks of :func:`_columns_of`, chunk by chunk: a chunk that fails one,
    or a ``doc_id`` repeated for a filter across chunks (``GROUP BY … HAVING
    count(*) > 1`` on a DuckDB file in the spool), returns None and the file
    goes to the strict reader. Each importable column's rows are checked
    (:func:`check_runs`, with their lines) and appended to its spool file as
    they arrive, with their column sums; memory holds one chunk.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    run, _model, _seed, task, path = item
    aggregations = _aggregations(run.data, task)
    n_lines, ends_with_newline = _line_count(path)
    if not ends_with_newline or n_lines == 0:
        return None
    sql, metrics_json = _columnar_sql(names)
    columns: dict[tuple[str, str], _StreamedColumn] = {}
    ids_con = spool.connect(
        f"ids-{path.stem}-{len(spool)}", "CREATE TABLE ids (f VARCHAR, d VARCHAR)"
    )
    offset = 0
    try:
        try:
            reader = con.sql(sql, params=[[str(path)], metrics_json]).to_arrow_reader(chunk_rows)
            batches = iter(reader)
        except duckdb.Error:
            return None
        while True:
            try:
                batch = next(batches)
            except StopIteration:
                break
            except duckdb.Error:
                return None
            table = pa.Table.from_batches([batch])
            doc_ids = table.column("doc_id")
            checks = ["id_ok", "filter_ok", "same_metrics", *(f"ok{i}" for i in range(len(names)))]
            if (
                not all(pc.all(table.column(c)).as_py() for c in checks)
                or pc.any(pc.equal(doc_ids, "")).as_py()
            ):
                return None
            filt = pc.if_else(
                pc.or_kleene(pc.is_null(table.column("filt")), pc.equal(table.column("filt"), "")),
                "none",
                table.column("filt"),
            )
            encoded = pc.dictionary_encode(filt).combine_chunks()
            codes = encoded.indices.to_numpy(zero_copy_only=False)
            ids_con.register("chunk_ids", pa.table({"f": filt, "d": doc_ids}))
            ids_con.execute("INSERT INTO ids SELECT f, d FROM chunk_ids")
            ids_con.unregister("chunk_ids")
            for code, filt_name in enumerate(encoded.dictionary.to_pylist()):
                rows = np.flatnonzero(codes == code)
                if rows.size == 0:
                    continue
                chunk_ids = doc_ids.combine_chunks().take(pa.array(rows))
                for i, name in enumerate(names):
                    values = table.column(f"v{i}").to_numpy(zero_copy_only=False)[rows]
                    if not np.isfinite(values).all():
                        return None
                    key = (name, str(filt_name))
                    col = columns.get(key)
                    if col is None:
                        col = columns[key] = _new_streamed_column(
                            item,
                            name,
                            str(filt_name),
                            offset + int(rows[0]) + 1,
                            spool,
                            aggregations.get(name) in MEAN_AGGREGATIONS,
                            mapping,
                        )
                    if col.writer is None:
                        continue
                    col.binary = col.binary and bool(np.isin(values, (0.0, 1.0)).all())
                    if name not in MEAN_METRICS and not col.binary:
                        continue  # not importable (noted by the caller): nothing to check
                    stats = np.column_stack([values, np.ones_like(values)])
                    check_runs(
                        [
                            PendingRun(
                                record=col.record,
                                example_ids=np.asarray(chunk_ids.to_pylist(), dtype=object),
                                stats=stats,
                                path=str(path),
                                line=col.first_line,
                                field="doc_id",
                                lines=offset + rows + 1,
                            )
                        ]
                    )
                    col.writer.append(chunk_ids, stats)
                    col.totals = col.totals + stats.sum(axis=0)
            offset += table.num_rows
            del table, batch
        if offset != n_lines:  # blank lines: rows are not lines
            return None
        repeated = ids_con.execute(
            "SELECT f, d FROM ids GROUP BY f, d HAVING count(*) > 1 LIMIT 1"
        ).fetchall()
        if repeated:  # the strict reader names both lines
            return None
        return list(columns.values())
    finally:
        for col in columns.values():
            if col.writer is not None:
                col.writer.close()
        ids_con.close()


def _new_streamed_column(
    item: tuple[LmEvalRun, str, int | None, str, Path],
    metric: str,
    filt: str,
    first_line: int,
    spool: RunSpool,
    importable: bool,
    mapping: TaskLanguageMap,
) -> _StreamedColumn:
    """A streamed column's record (names checked) and, if its aggregation is a mean, its writer."""
    record = _record_for(item, metric, filt, "accuracy", {}, ("value", "count"), mapping)
    writer = spool.open_run(2) if importable else None
    return _StreamedColumn(metric, filt, first_line, record, writer)


def _line_count(path: Path) -> tuple[int, bool]:
    """(number of lines, whether the file ends with a newline), reading 16 MB at a time."""
    lines, last = 0, b"\n"
    with open(path, "rb") as fh:
        while block := fh.read(1 << 24):
            lines += block.count(b"\n")
            last = block[-1:]
    return lines + (last != b"\n"), last == b"\n"


def _first_metrics(path: Path) -> list[str] | None:
    """The ``metrics`` list of the file's first line, when it is a plain list of names."""
    with open(path, "rb") as fh:
        first = fh.readline(MAX_LINE_BYTES + 1)  # an over-long line: the strict reader refuses it
    if len(first) > MAX_LINE_BYTES:
        return None
    try:
        names = json.loads(first).get("metrics")
    except (ValueError, AttributeError):
        return None
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        return None
    if len(set(names)) != len(names) or {"doc_id", "filter", "metrics"} & set(names):
        return None
    return names


def _read_columnar(
    con: duckdb.DuckDBPyConnection, paths: list[Path], names: list[str]
) -> dict[Path, tuple[dict[tuple[str, str], _Column], int] | None]:
    """Samples files that share a ``metrics`` list, read through DuckDB in one query.

    DuckDB's ``read_json`` parses each line once and extracts only the members
    glotbench reads (``doc_id``, ``filter``, ``metrics`` and the listed metric
    values), rejecting a line that is not an object or repeats one of those
    keys. The other conditions of the strict reader are checked on the columns
    (``doc_id`` an integer or a non-empty string, ``filter`` absent, null or a
    string, the first line's ``metrics`` list on every line, each value a JSON
    number, no ``doc_id`` twice per filter, no blank line). A file that fails
    one maps to None and goes to the strict reader, which names the line and
    field; when DuckDB rejects the query, each file is tried alone. Keys
    repeated inside members glotbench does not read (``doc``, ``arguments``,
    ``resps`` …) are not inspected on this path.
    """
    sql, metrics_json = _columnar_sql(names)
    try:
        table = con.sql(sql, params=[[str(p) for p in paths], metrics_json]).to_arrow_table()
    except duckdb.Error:
        if len(paths) == 1:
            return {paths[0]: None}
        out: dict[Path, tuple[dict[tuple[str, str], _Column], int] | None] = {}
        for path in paths:
            out.update(_read_columnar(con, [path], names))
        return out
    files = table.column("file_no").to_numpy(zero_copy_only=False)
    starts = np.flatnonzero(np.r_[True, files[1:] != files[:-1]])
    ends = np.r_[starts[1:], len(files)]
    blocks = {int(files[a]): (int(a), int(b)) for a, b in zip(starts, ends, strict=True)}
    out = {}
    for number, path in enumerate(paths, start=1):
        block = blocks.get(number)
        if block is None or len(blocks) != len(starts):  # a file's rows not contiguous
            out[path] = None
            continue
        out[path] = _columns_of(table.slice(block[0], block[1] - block[0]), path, names)
    del table
    return out


def _columnar_sql(names: list[str]) -> tuple[str, str]:
    """The query of :func:`_read_columnar` (parameters: file list, metrics JSON) and its $2."""
    wanted = ["doc_id", "filter", "metrics", *names]
    # column names reach DuckDB as a struct literal built from the data: quoted
    spec = ", ".join(f"{_sql_string(k)}: 'JSON'" for k in wanted)
    # the type checks are done by DuckDB and come back as booleans (one byte a sample), the
    # file as its position in $1: no Python object per sample but the example id
    picks = ", ".join(
        f"coalesce(json_type({_sql_ident(n)}) IN ('DOUBLE', 'BIGINT', 'UBIGINT'), false) AS ok{i}, "
        f"TRY_CAST({_sql_ident(n)} AS DOUBLE) AS v{i}"
        for i, n in enumerate(names)
    )
    sql = (
        "SELECT list_position($1, filename)::INTEGER AS file_no, "
        "coalesce(json_type(doc_id) IN ('BIGINT', 'UBIGINT', 'VARCHAR'), false) AS id_ok, "
        "json_extract_string(doc_id, '$') AS doc_id, "
        "CASE WHEN json_type(doc_id) = 'BIGINT' THEN TRY_CAST(doc_id AS BIGINT) END AS id_int, "
        "coalesce(json_type(filter) IN ('VARCHAR', 'NULL'), true) AS filter_ok, "
        "json_extract_string(filter, '$') AS filt, "
        f"coalesce(metrics::VARCHAR = $2, false) AS same_metrics, {picks} "
        f"FROM read_json($1, format = 'newline_delimited', filename = true, columns = {{{spec}}})"
    )
    return sql, json.dumps(names, separators=(",", ":"))


def _columns_of(
    table: Any, path: Path, names: list[str]
) -> tuple[dict[tuple[str, str], _Column], int] | None:
    """One file's rows of :func:`_read_columnar` (an Arrow table) as columns, or None if a check
    fails."""
    import pyarrow.compute as pc

    n = table.num_rows
    n_lines, ends_with_newline = _line_count(path)
    if not ends_with_newline or n != n_lines or n == 0:  # blank lines: rows are not lines
        return None

    def all_true(column: str) -> bool:
        return bool(pc.all(table.column(column)).as_py())

    doc_ids = table.column("doc_id")
    if not (
        all_true("id_ok")
        and all_true("filter_ok")
        and all_true("same_metrics")
        and not pc.any(pc.equal(doc_ids, "")).as_py()
    ):
        return None
    for i in range(len(names)):  # numbers only; booleans, strings, lists: the strict reader
        if not all_true(f"ok{i}"):
            return None
    # filters as small integer codes (one "none" per sample was a Python string each)
    filt = pc.if_else(
        pc.or_kleene(pc.is_null(table.column("filt")), pc.equal(table.column("filt"), "")),
        "none",
        table.column("filt"),
    )
    encoded = pc.dictionary_encode(filt).combine_chunks()
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    dictionary = encoded.dictionary.to_pylist()
    ids = doc_ids.to_numpy(zero_copy_only=False)  # the one Python object per sample: its id
    id_int = table.column("id_int")
    int_ids = id_int.null_count == 0 and id_int.to_numpy(zero_copy_only=False)
    columns: dict[tuple[str, str], _Column] = {}
    for code, filt_name in enumerate(dictionary):
        rows = np.flatnonzero(codes == code)
        if rows.size == 0:
            continue
        if _has_repeats(ids, int_ids, rows):  # no doc_id twice per filter
            return None
        for i, name in enumerate(names):
            values = table.column(f"v{i}").to_numpy(zero_copy_only=False)[rows]
            if not np.isfinite(values).all():
                return None
            # ids and lines as arrays: a list held one Python object per sample
            columns[(name, str(filt_name))] = _Column(
                name, str(filt_name), int(rows[0]) + 1, ids[rows], values, rows + 1
            )
    return columns, n


def _has_repeats(ids: np.ndarray, int_ids: Any, rows: np.ndarray) -> bool:
    """Whether ``ids[rows]`` repeats a value; integer ids (``int_ids``, else False) by sorting
    8 bytes each, text ids with a set (a hash table of Arrow's took 220 MB for 2M ids)."""
    if int_ids is not False:
        values = np.sort(int_ids[rows])
        return bool((values[1:] == values[:-1]).any())
    return len(set(ids[rows].tolist())) != rows.size


def _sql_string(text: str) -> str:
    """``text`` as a SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def _sql_ident(text: str) -> str:
    """``text`` as a quoted SQL identifier."""
    return '"' + text.replace('"', '""') + '"'


def _read_samples_strict(path: Path, task: str) -> tuple[dict[tuple[str, str], _Column], int]:
    columns: dict[tuple[str, str], _Column] = {}
    seen: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    count = 0
    for lineno, rec in iter_jsonl(path):
        count += 1
        if "doc_id" not in rec:
            raise InputError("missing field 'doc_id'", path=str(path), line=lineno, field="doc_id")
        doc_id = rec["doc_id"]
        if isinstance(doc_id, bool) or not isinstance(doc_id, int | str) or doc_id == "":
            raise InputError(
                f"doc_id must be an integer or a non-empty string, got {doc_id!r}",
                path=str(path),
                line=lineno,
                field="doc_id",
            )
        filt = rec.get("filter") or "none"
        names = rec.get("metrics")
        if names is None:
            raise InputError(
                "missing field 'metrics' (the list of this sample's metric names); was the "
                "file written by lm-evaluation-harness --log_samples?",
                path=str(path),
                line=lineno,
                field="metrics",
            )
        if not isinstance(names, list):
            raise InputError(
                f"'metrics' must be a list of metric names, got {names!r}",
                path=str(path),
                line=lineno,
                field="metrics",
            )
        sid = str(doc_id)
        for name in names:
            if name not in rec:
                raise InputError(
                    f"missing field {name!r}: the sample lists it in 'metrics' but has no value",
                    path=str(path),
                    line=lineno,
                    field=str(name),
                )
            key = (str(name), str(filt))
            col = columns.get(key)
            if col is None:
                col = columns[key] = _Column(str(name), str(filt), lineno)
            if sid in seen[key]:
                raise InputError(
                    f"doc_id {doc_id!r} occurs twice for filter {filt!r} (first on line "
                    f"{seen[key][sid]}) in the samples of task {task!r}",
                    path=str(path),
                    line=lineno,
                    field="doc_id",
                )
            seen[key][sid] = lineno
            col.ids.append(sid)
            col.values.append(rec[name])
            col.lines.append(lineno)
    if count == 0:
        raise InputError("the samples file is empty", path=str(path))
    return columns, count


def _pairs(col: _Column, path: Path) -> tuple[list[Any], list[Any]]:
    golds, preds = [], []
    for value, line in zip(col.values, col.lines, strict=True):
        if not isinstance(value, list | tuple) or len(value) != 2:
            raise InputError(
                f"expected [reference, prediction] for metric {col.metric!r}, got {value!r}",
                path=str(path),
                line=line,
                field=col.metric,
            )
        golds.append(value[0])
        preds.append(value[1])
    return golds, preds


def _column_stats(
    col: _Column, path: Path, aggregation: Any, labels: Sequence[Any] | None
) -> tuple[str, dict[str, Any], tuple[str, ...], np.ndarray] | None:
    """(metric name, metric_config, stat names, stats) or None when not importable."""
    name = col.metric
    corpus = CORPUS_METRICS.get(name)
    if corpus is None and aggregation in ("f1", "matthews_corrcoef", "bleu", "chrf", "chrf++"):
        corpus = CORPUS_METRICS.get(
            {"matthews_corrcoef": "mcc", "f1": "f1"}.get(aggregation, aggregation)
        )
    if corpus is not None and all(isinstance(v, list | tuple) for v in col.values[:1]):
        golds, preds = _pairs(col, path)
        if corpus in ("bleu", "chrf", "chrf++"):
            refs = [g if isinstance(g, str) else list(g) for g in golds]
            hyps = [str(p) for p in preds]
            metric = get_metric(corpus)
            return corpus, metric.config(), tuple(metric.stat_names()), metric.stats(hyps, refs)
        if corpus == "mcc":
            metric = get_metric("mcc", labels=list(labels or sorted(set(golds) | set(preds))))
        else:
            metric = get_metric("f1_binary")
        golds = [g for g in golds]
        return corpus, metric.config(), tuple(metric.stat_names()), metric.stats(preds, golds)
    if aggregation not in MEAN_AGGREGATIONS:
        return None
    if isinstance(col.values, np.ndarray):  # read by DuckDB: already checked finite numbers
        return _mean_stats(name, col.values)
    values = np.empty(len(col.values), dtype=np.float64)
    for i, (v, line) in enumerate(zip(col.values, col.lines, strict=True)):
        num = finite_number(v)
        if num is None:
            if isinstance(v, list | tuple | dict) or v is None:
                return None  # not a per-sample number: a metric glotbench cannot rebuild
            raise InputError(
                f"metric {name!r} must be a finite number, got {v!r}",
                path=str(path),
                line=line,
                field=name,
            )
        values[i] = num
    return _mean_stats(name, values)


def _mean_stats(
    name: str, values: np.ndarray
) -> tuple[str, dict[str, Any], tuple[str, ...], np.ndarray] | None:
    """Per-sample values of a mean metric as accuracy statistics (value, count)."""
    if name not in MEAN_METRICS and not np.isin(values, (0.0, 1.0)).all():
        return None  # a mean of non-binary values: no registry metric says what it is
    stats = np.column_stack([values, np.ones_like(values)])
    return "accuracy", {}, ("value", "count"), stats


def _labels_for(columns: Iterable[_Column], path: Path) -> dict[str, list[Any]]:
    """A stable label set per corpus metric: all golds and predictions seen.

    A label is a string, number, boolean or null; anything else (a list, an
    object) is an :class:`InputError` naming the file, line and metric.
    """
    out: dict[str, set[Any]] = defaultdict(set)
    for col in columns:
        if CORPUS_METRICS.get(col.metric) == "mcc":
            for v, line in zip(col.values, col.lines, strict=True):
                if isinstance(v, list | tuple) and len(v) == 2:
                    for label in v:
                        if not (label is None or isinstance(label, str | int | float)):
                            raise InputError(
                                f"a label of metric {col.metric!r} must be a string or a "
                                f"number, got {label!r} in {v!r}",
                                path=str(path),
                                line=line,
                                field=col.metric,
                            )
                    out[col.metric].update([v[0], v[1]])
    labels: dict[str, list[Any]] = {}
    for key, values in out.items():
        if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            labels[key] = list(range(min(0, min(values)), max(values) + 1))
        else:
            labels[key] = sorted(values, key=lambda v: (str(type(v)), v))
    return labels


@dataclass
class LmEvalData:
    """Everything read from an output folder, validated, nothing written yet."""

    root: Path
    files: list[Path]
    runs: list[PendingRun]
    scores: list[ScoreRow]
    notes: list[str]


def read_lm_eval(
    path: str | Path,
    *,
    model: str | None = None,
    mapping: TaskLanguageMap | None = None,
    tasks: Sequence[str] | None = None,
    seed_from: Literal["config", "order"] = "config",
    samples: bool = True,
    spool: RunSpool | None = None,
    chunk_rows: int | None = None,
) -> LmEvalData:
    """Read and validate an lm-eval output folder (or one results file).

    Samples files are read one batch at a time (:func:`iter_samples_files`).
    With a ``spool`` each run is checked (:func:`check_runs`) and its example
    ids and statistics moved to the spool as soon as its file is read
    (:meth:`PendingRun.spill`), so memory holds one batch of samples plus the
    runs' records, not every sample of the folder; without one, the runs keep
    their arrays (``LmEvalData.runs[i].example_ids`` …).

    With a spool, a samples file larger than :data:`SAMPLES_BATCH_BYTES` (every
    file when ``chunk_rows`` is given) is streamed: read ``chunk_rows``
    (default :data:`SAMPLES_CHUNK_ROWS`) samples at a time, each chunk checked
    and appended to the spool as it arrives (:func:`_stream_samples`), so
    memory holds one chunk however many samples a run has. The runs, their
    example order and statistics are those of the whole-file read.
    """
    if chunk_rows is not None and chunk_rows < 1:
        raise InputError(f"chunk_rows must be at least 1, got {chunk_rows}", field="chunk-rows")
    root = Path(path)
    mapping = mapping or TaskLanguageMap.build()
    found = _find_runs(root)
    found.sort(key=lambda r: (str(r.results_path.parent), r.stamp))
    pending: list[PendingRun] = []
    scores: list[ScoreRow] = []
    notes: list[str] = []
    files: list[Path] = []
    wanted = set(tasks) if tasks else None
    seen_tasks: set[str] = set()
    order: dict[str, int] = defaultdict(int)
    to_read: list[tuple[LmEvalRun, str, int | None, str, Path]] = []
    checks: list[tuple[PendingRun, str, str, str]] = []
    for run in found:
        files.append(run.results_path)
        model_name = check_name(
            _model_name(run.data, model, str(run.results_path)),
            "model",
            path=str(run.results_path),
            field=None if model else "model_name",
        )
        index = order[model_name]
        order[model_name] += 1
        seed = _seed(run, index, seed_from)
        rows = _score_rows(run, model_name, seed, mapping)
        results = run.data.get("results") or {}
        known = set(results) | _group_names(run.data)
        seen_tasks |= known
        if wanted is not None:
            rows = [r for r in rows if r.metadata.get("lm_eval_task") in wanted]
        scores.extend(rows)
        if not samples:
            continue
        for task, sample_path in sorted(run.samples.items()):
            if wanted is not None and task not in wanted:
                continue
            files.append(sample_path)
            if task not in results:
                raise InputError(
                    f"unknown task {task!r}: the results file {run.results_path.name} has no "
                    f"entry for it (its tasks: {', '.join(sorted(results)) or 'none'})",
                    path=str(sample_path),
                    field="task",
                )
            to_read.append((run, model_name, seed, task, sample_path))
    if wanted is not None:
        unknown = sorted(wanted - seen_tasks)
        if unknown:
            raise InputError(
                f"unknown task name(s) {', '.join(map(repr, unknown))}; the results files "
                f"name: {', '.join(sorted(seen_tasks))}",
                path=str(root),
                field="task",
            )
    # one samples file (or one batch of files) at a time: its runs are built, checked
    # and, with a spool, moved to disk before the next file is read. MCC runs wait
    # until all files are read: their label set is shared by all runs of a task,
    # so their statistics line up
    index_of = {item[4]: i for i, item in enumerate(to_read)}
    built: dict[tuple[int, int], tuple[PendingRun, tuple[PendingRun, str, str, str]]] = {}
    deferred: list[tuple[int, int, _Column]] = []
    labels_by_task: dict[str, dict[str, list[Any]]] = defaultdict(dict)
    streamed: set[Path] = set()
    if spool is not None:
        with duckdb.connect() as con:
            for i, item in enumerate(to_read):
                sample_path = item[4]
                if chunk_rows is None and sample_path.stat().st_size <= SAMPLES_BATCH_BYTES:
                    continue
                names = _first_metrics(sample_path)
                if names is None:
                    continue
                got = _stream_samples(
                    con, item, names, spool, chunk_rows or SAMPLES_CHUNK_ROWS, mapping
                )
                if got is None:  # the strict reader names the line and field
                    continue
                streamed.add(sample_path)
                for j, scol in enumerate(got):
                    made = _streamed_run(item, scol, spool, notes)
                    if made is not None:
                        built[(i, j)] = made
    files_read = iter_samples_files(
        [(item[4], item[3]) for item in to_read if item[4] not in streamed]
    )
    for sample_path, (columns, _count) in files_read:
        i = index_of[sample_path]
        task = to_read[i][3]
        for key, values in _labels_for(columns.values(), sample_path).items():
            merged = set(labels_by_task[task].get(key, [])) | set(values)
            if all(isinstance(v, int) for v in merged):
                labels_by_task[task][key] = list(range(min(0, min(merged)), max(merged) + 1))
            else:
                labels_by_task[task][key] = sorted(merged, key=lambda v: (str(type(v)), v))
        for j, col in enumerate(columns.values()):
            if CORPUS_METRICS.get(col.metric) == "mcc":
                deferred.append((i, j, col))
                continue
            made = _run_of_column(to_read[i], col, None, mapping, notes)
            if made is not None:
                if spool is not None:
                    check_runs([made[0]])
                    made[0].spill(spool)
                built[(i, j)] = made
        del columns
    for i, j, col in deferred:
        task = to_read[i][3]
        made = _run_of_column(to_read[i], col, labels_by_task[task].get(col.metric), mapping, notes)
        if made is not None:
            if spool is not None:
                check_runs([made[0]])
                made[0].spill(spool)
            built[(i, j)] = made
    for position in sorted(built):  # the order of the files and their columns
        pending.append(built[position][0])
        checks.append(built[position][1])
    check_runs(pending)
    check_samples_agree(checks, scores)
    return LmEvalData(root=root, files=files, runs=pending, scores=scores, notes=notes)


def _streamed_run(
    item: tuple[LmEvalRun, str, int | None, str, Path],
    col: _StreamedColumn,
    spool: RunSpool,
    notes: list[str],
) -> tuple[PendingRun, tuple[PendingRun, str, str, str]] | None:
    """A streamed column as a spilled run (None: not importable, noted as by
    :func:`_run_of_column`)."""
    run, task, sample_path = item[0], item[3], item[4]
    aggregation = _aggregations(run.data, task).get(col.metric)
    if col.writer is None or (col.metric not in MEAN_METRICS and not col.binary):
        notes.append(
            f"{sample_path.name}: metric {col.metric!r} (aggregation "
            f"{aggregation!r}) has no per-example statistics in glotbench; "
            "only its aggregate score was imported"
        )
        return None
    pending = PendingRun(
        record=col.record,
        example_ids=np.empty(0, dtype=object),
        stats=np.empty((0, 2), dtype=np.float64),
        path=str(sample_path),
        line=col.first_line,
        field="doc_id",
        spool=spool,
        spool_index=col.writer.index,
        n_examples=col.writer.rows,
        totals=col.totals,
    )
    return pending, (pending, run.results_path.name, task, f"{col.metric},{col.filt}")


def _run_of_column(
    item: tuple[LmEvalRun, str, int | None, str, Path],
    col: _Column,
    labels: Sequence[Any] | None,
    mapping: TaskLanguageMap,
    notes: list[str],
) -> tuple[PendingRun, tuple[PendingRun, str, str, str]] | None:
    """One (metric, filter) column of a samples file as a run (None: not importable, noted)."""
    run, _model_name, _seed, task, sample_path = item
    metric, filt = col.metric, col.filt
    aggregations = _aggregations(run.data, task)
    _task_language(item, mapping)
    check_name(metric, "metric", path=str(sample_path), field="metrics")
    built = _column_stats(col, sample_path, aggregations.get(metric), labels)
    if built is None:
        notes.append(
            f"{sample_path.name}: metric {metric!r} (aggregation "
            f"{aggregations.get(metric)!r}) has no per-example statistics in glotbench; "
            "only its aggregate score was imported"
        )
        return None
    stored_metric, metric_config, stat_names, stats = built
    record = _record_for(item, metric, filt, stored_metric, metric_config, stat_names, mapping)
    pending = PendingRun(
        record=record,
        example_ids=np.asarray(col.ids, dtype=object),
        stats=np.ascontiguousarray(stats, dtype=np.float64),
        path=str(sample_path),
        line=col.first_line,
        field="doc_id",
        lines=np.asarray(col.lines, dtype=np.int64),
    )
    return pending, (pending, run.results_path.name, task, f"{metric},{filt}")


def _task_language(
    item: tuple[LmEvalRun, str, int | None, str, Path], mapping: TaskLanguageMap
) -> tuple[str, str]:
    """(task, language) of a samples file's task, names checked."""
    run, task = item[0], item[3]
    name, language = mapping.split(task)
    results_path, field_name = str(run.results_path), f"results.{task}"
    name = check_name(name, "task", path=results_path, field=field_name)
    language = check_name(language, "language", path=results_path, field=field_name)
    return name, language


def _record_for(
    item: tuple[LmEvalRun, str, int | None, str, Path],
    metric: str,
    filt: str,
    stored_metric: str,
    metric_config: dict[str, Any],
    stat_names: tuple[str, ...],
    mapping: TaskLanguageMap,
) -> RunRecord:
    """The run record of one (metric, filter) column of a samples file."""
    run, model_name, seed, task, sample_path = item
    name, language = _task_language(item, mapping)
    check_name(metric, "metric", path=str(sample_path), field="metrics")
    config = [] if metric in MEAN_METRICS or metric in CORPUS_METRICS else [f"lm_eval={metric}"]
    if filt != "none":
        config.append(f"filter={filt}")
    return RunRecord(
        model=model_name,
        dataset=name,
        task=name,
        language=language,
        seed=seed,
        config_hash=";".join(config),
        metric=stored_metric,
        metric_config=metric_config,
        stat_names=stat_names,
        model_metadata={
            **_model_metadata(run.data),
            "lm_eval_task": task,
            "lm_eval_metric": f"{metric},{filt}",
            # the name users type (--metric acc_norm) and the task's primary metric
            "source_metric": _score_name(metric, filt),
            "primary_metric": primary_metric(run.data, task),
        },
        source=str(sample_path),
    )


def rounding_tolerance(reported: float, width: float) -> float:
    """How far a recomputed score may lie from a reported one and still agree.

    A value written with d ≤ 6 decimals (a rounded table) may differ by half a
    unit of its last decimal; a full-precision value by 10⁻⁶ of the metric's
    range (float summation order).
    """
    text = repr(float(reported))
    decimals = len(text.split(".", 1)[1]) if "." in text and "e" not in text else 17
    if decimals <= 6:
        return 0.5 * 10.0**-decimals + 1e-9
    return 1e-6 * width


def check_samples_agree(
    checks: Sequence[tuple[PendingRun, str, str, str]], scores: Sequence[ScoreRow]
) -> None:
    """Each run's score recomputed from its samples equals the results JSON's score.

    ``checks`` holds (run, results file name, lm-eval task, ``metric,filter``).
    A disagreement beyond rounding (:func:`rounding_tolerance`) means the
    samples and the results do not belong together, or the per-sample values
    are not what the harness aggregated: an error naming the task.
    """
    reported: dict[tuple[Any, Any, Any], ScoreRow] = {}
    for score_row in scores:
        meta = score_row.metadata
        key = (meta.get("results_file"), meta.get("lm_eval_task"), meta.get("lm_eval_metric"))
        reported[key] = score_row
    for run, results_file, task, lm_metric in checks:
        row = reported.get((results_file, task, lm_metric))
        if row is None or not math.isfinite(row.score):
            continue
        r = run.record
        metric = get_metric(r.metric, **(r.metric_config or {}))
        value = float(metric.score(run.stat_totals()))
        lo, hi = metric.score_range
        if abs(value - row.score) > rounding_tolerance(row.score, hi - lo):
            raise InputError(
                f"task {task!r}: metric {lm_metric!r} recomputed from the {run.n_examples} "
                f"samples is {value:.10g}, but {results_file} reports {row.score:.10g}; the "
                "samples file and the results file disagree (were they written by the same "
                "run, and are the per-sample values what the harness aggregated?)",
                path=run.path,
                field=run.field,
            )


def import_lm_eval(
    store: Store,
    path: str | Path,
    *,
    model: str | None = None,
    families: Sequence[str] | None = None,
    task_map: Sequence[str] | Mapping[str, str] | None = None,
    default_language: str | None = None,
    tasks: Sequence[str] | None = None,
    seed_from: Literal["config", "order"] = "config",
    samples: bool = True,
    progress: Progress | None = None,
    task_map_file: str | Path | None = None,
    auto_language: bool = True,
    chunk_rows: int | None = None,
) -> HarnessImportResult:
    """Import an lm-eval output folder into ``store`` (see the module docstring).

    ``task_map_file`` adds ``TASK -> LANGUAGE`` entries from a file
    (:func:`~glotbench.importers.task_languages.read_task_language_file`);
    ``task_map`` entries win over it. ``auto_language`` splits task names
    ending in an ISO 639 code (``scala_da`` → ``scala``, ``da``).
    ``chunk_rows``: samples per chunk of a streamed samples file
    (:func:`read_lm_eval`); the stored runs do not depend on it.
    """
    t0 = time.perf_counter()
    if seed_from not in ("config", "order"):
        raise InputError(
            f"seed_from must be 'config' or 'order', got {seed_from!r}", field="seed-from"
        )
    entries: dict[str, str] = (
        read_task_language_file(task_map_file) if task_map_file is not None else {}
    )
    if isinstance(task_map, Mapping):
        entries.update({str(k): str(v) for k, v in task_map.items()})
        listed: list[str] = []
    else:
        listed = list(task_map or [])
    mapping = TaskLanguageMap.build(
        families,
        [*(f"{k}={v}" for k, v in entries.items()), *listed],
        default_language,
        auto_suffix=auto_language,
    )
    # the runs' examples wait on disk (next to the store) until they are written
    with RunSpool(staging_dir(store.path)) as spool:
        data = read_lm_eval(
            path,
            model=model,
            mapping=mapping,
            tasks=tasks,
            seed_from=seed_from,
            samples=samples,
            spool=spool,
            chunk_rows=chunk_rows,
        )
        return _write(
            store, data, model, mapping, tasks, seed_from, samples, progress, t0, chunk_rows
        )


def _write(
    store: Store,
    data: LmEvalData,
    model: str | None,
    mapping: TaskLanguageMap,
    tasks: Sequence[str] | None,
    seed_from: str,
    samples: bool,
    progress: Progress | None,
    t0: float,
    chunk_rows: int | None = None,
) -> HarnessImportResult:
    """Write what :func:`read_lm_eval` read (the import's hash covers files and options)."""
    options = repr(
        (
            model,
            sorted(mapping.families),
            sorted(mapping.overrides.items()),
            mapping.default_language,
            mapping.auto_suffix,
            sorted(tasks or []),
            seed_from,
            samples,
        )
    )
    root = data.root if data.root.is_dir() else data.root.parent
    sha = files_sha256(data.files, root, options)
    result = write_import(
        store,
        kind="lm-eval",
        source=data.root,
        sha=sha,
        runs=data.runs,
        score_rows=data.scores,
        n_files=len(data.files),
        progress=progress,
        t0=t0,
        chunk_rows=chunk_rows,
    )
    result.notes = [*result.notes, *sorted(set(data.notes))]
    return result


def recompute_scores(store: Store, model: str | None = None) -> list[dict[str, Any]]:
    """Each stored lm-eval run's score recomputed from its statistics, beside the reported one.

    Returns one dict per run: task, language, metric, seed, recomputed and
    reported score (``None`` when the results file had none). lm-eval reports
    BLEU/chrF on 0–100 as glotbench does, and the other metrics on 0–1.
    """
    runs = store.runs.frame(models=model)
    scores = store.scores.frame(models=model)
    out: list[dict[str, Any]] = []
    for _, run in runs.iterrows():
        meta = run["model_metadata"]
        lm_metric = meta.get("lm_eval_metric")
        if not lm_metric:
            continue
        name, _, filt = lm_metric.partition(",")
        stored = name if filt == "none" else f"{name},{filt}"
        _ids, stats = store.stats.of_run(run["run_id"])
        metric = get_metric(run["metric"], **run["metric_config"])
        value = float(metric.score(stats.sum(axis=0)))
        match = scores[
            (scores["model"] == run["model"])
            & (scores["task"] == run["task"])
            & (scores["language"] == run["language"])
            & (scores["metric"] == stored)
            & (
                scores["seed"].isna()
                if run["seed"] is None
                or (isinstance(run["seed"], float) and math.isnan(run["seed"]))
                else scores["seed"] == run["seed"]
            )
        ]
        reported = float(match["score"].iloc[0]) if len(match) else None
        out.append(
            {
                "model": run["model"],
                "task": run["task"],
                "language": run["language"],
                "metric": run["metric"],
                "lm_eval_metric": lm_metric,
                "seed": None if run["seed"] is None else run["seed"],
                "recomputed": value,
                "reported": reported,
            }
        )
    return out
