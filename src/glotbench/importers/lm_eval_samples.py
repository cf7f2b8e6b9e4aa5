"""Samples files of an lm-evaluation-harness output folder, read whole.

Per-sample values by (metric, filter), read in batches through DuckDB with
the line-by-line reader as the fallback that names line and field, and the
per-example statistics built from them (see :mod:`glotbench.importers.lm_eval`).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from glotbench.errors import InputError
from glotbench.importers.json_files import finite_number, iter_jsonl
from glotbench.importers.lm_eval_results import CORPUS_METRICS, MEAN_AGGREGATIONS, MEAN_METRICS
from glotbench.ingest.limits import MAX_LINE_BYTES
from glotbench.metrics import get_metric


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
    _, encoded = _filter_codes(table)
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


def _filter_codes(table: Any) -> tuple[Any, Any]:
    """The samples' filter column (null or "" read as lm-eval's "none") and its dictionary
    encoding: small integer codes, not one Python string per sample."""
    import pyarrow.compute as pc

    filt = pc.if_else(
        pc.or_kleene(pc.is_null(table.column("filt")), pc.equal(table.column("filt"), "")),
        "none",
        table.column("filt"),
    )
    return filt, pc.dictionary_encode(filt).combine_chunks()
