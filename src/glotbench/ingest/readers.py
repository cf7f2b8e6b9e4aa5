"""Read tidy result files (CSV, JSONL, Parquet) and locate their rows.

:func:`read_tidy` returns a :class:`TidyTable`: the file's records as a pandas
DataFrame plus what is needed to name the *physical* place of a record in an
error message:

* CSV (``.csv``, ``.csv.gz``): the 1-based line on which the record starts
  (the header is line 1). The file is parsed by pandas; only when an error is
  reported is the exact line recomputed with the :mod:`csv` module, so quoted
  fields that span lines and blank lines are counted correctly.
* JSONL (``.jsonl``, ``.jsonl.gz``, ``.ndjson``): the line of the record.
* Parquet (``.parquet``): ``row N`` (1-based).
* an in-memory DataFrame (:meth:`TidyTable.from_frame`): ``row N`` (1-based).

CSV values are read as text (empty cell = missing); JSONL values keep their
JSON types; Parquet columns keep their Arrow types.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

import numpy as np
import pandas as pd

from glotbench.errors import InputError
from glotbench.ingest.limits import MAX_FIELD_CHARS, MAX_LINE_BYTES, bounded_lines, text_lines

# the csv module's own limit (128 KiB by default) ended in a raw _csv.Error; fields are
# checked against MAX_FIELD_CHARS with the file, line and column named, so the module's
# limit only has to bound memory (a quoted field can span lines): one line's limit
if csv.field_size_limit() < MAX_LINE_BYTES:
    csv.field_size_limit(MAX_LINE_BYTES)

SourceKind = Literal["csv", "jsonl", "parquet", "frame"]

_SUFFIXES: tuple[tuple[str, SourceKind, bool], ...] = (
    (".csv.gz", "csv", True),
    (".jsonl.gz", "jsonl", True),
    (".ndjson.gz", "jsonl", True),
    (".csv", "csv", False),
    (".jsonl", "jsonl", False),
    (".ndjson", "jsonl", False),
    (".parquet", "parquet", False),
    (".pq", "parquet", False),
)

SUPPORTED_SUFFIXES = tuple(s for s, _, _ in _SUFFIXES)


class RowInputError(InputError):
    """An :class:`InputError` located by *row* (Parquet files, DataFrames), not line.

    ``line`` holds the 1-based row number; the message says ``row N``.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        row: int | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message, path=path, line=row, field=field)
        where = [str(path)] if path is not None else []
        if row is not None:
            where.append(f"row {row}")
        if field is not None:
            where.append(f"field '{field}'")
        prefix = ", ".join(where)
        self.args = (f"{prefix}: {message}" if prefix else message,)


def detect_format(path: Path) -> tuple[SourceKind, bool]:
    """(format, gzipped) from the file name; raises InputError for other names."""
    name = path.name.lower()
    for suffix, kind, gz in _SUFFIXES:
        if name.endswith(suffix):
            return kind, gz
    raise InputError(
        f"cannot tell the file format from the name; use one of {', '.join(SUPPORTED_SUFFIXES)}",
        path=str(path),
    )


def file_sha256(path: Path) -> str:
    """SHA-256 of the file's bytes (as stored, i.e. of the compressed file for .gz)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _open_text(path: Path, gz: bool) -> IO[str]:
    if gz:
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8-sig", newline="")
    return open(path, encoding="utf-8-sig", newline="")


@dataclass
class TidyTable:
    """Records of one tidy file, with what is needed to locate each record.

    ``frame`` has a RangeIndex: position ``i`` is the i-th data record.
    ``columns`` are the column names in file order (header order for CSV,
    first appearance for JSONL).
    """

    path: str
    kind: SourceKind
    frame: pd.DataFrame
    columns: list[str]
    #: CSV: record number (0 = header) of each row; JSONL: physical line
    #: number; Parquet / frame: unused.
    record_index: np.ndarray = field(repr=False)
    gz: bool = False
    #: Parquet float columns: rows holding an explicit NaN (pandas reads NaN and
    #: null alike; these masks keep "NaN" apart from "missing" in messages)
    explicit_nan: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    _csv_lines: dict[int, int] | None = field(default=None, repr=False)

    # -- construction ----------------------------------------------------
    @classmethod
    def from_frame(cls, frame: pd.DataFrame, name: str = "<DataFrame>") -> TidyTable:
        """Wrap an in-memory DataFrame (errors name ``row N``, 1-based)."""
        frame = frame.reset_index(drop=True)
        frame.columns = [str(c) for c in frame.columns]
        return cls(
            path=name,
            kind="frame",
            frame=frame,
            columns=list(frame.columns),
            record_index=np.arange(len(frame)),
        )

    def __len__(self) -> int:
        return len(self.frame)

    # -- locations -------------------------------------------------------
    @property
    def unit(self) -> str:
        """``"line"`` for text files, ``"row"`` for Parquet and DataFrames."""
        return "line" if self.kind in ("csv", "jsonl") else "row"

    @property
    def header_line(self) -> int | None:
        """Line of the header (CSV: 1), where missing columns are reported."""
        return 1 if self.kind == "csv" else None

    def lines_of(self, positions: Sequence[int]) -> list[int]:
        """1-based line (CSV, JSONL) or row (Parquet, frame) of each record position."""
        pos = [int(p) for p in positions]
        if self.kind == "jsonl":
            return [int(self.record_index[p]) for p in pos]
        if self.kind != "csv":  # Parquet / frame: record_index is the 0-based row in the file
            return [int(self.record_index[p]) + 1 for p in pos]
        records = [int(self.record_index[p]) for p in pos]
        if self._csv_lines is None:
            self._csv_lines = {}
        missing = sorted(set(records) - set(self._csv_lines))
        if missing:
            self._csv_lines.update(_csv_record_lines(Path(self.path), self.gz, missing))
        return [self._csv_lines[r] for r in records]

    def line_of(self, position: int) -> int:
        return self.lines_of([position])[0]

    def error(
        self, message: str, position: int | None = None, field: str | None = None
    ) -> InputError:
        """An InputError located at record ``position`` (None: the file / header)."""
        if position is None:
            if self.unit == "line":
                return InputError(message, path=self.path, line=self.header_line, field=field)
            return RowInputError(message, path=self.path, field=field)
        loc = self.line_of(position)
        if self.unit == "line":
            return InputError(message, path=self.path, line=loc, field=field)
        return RowInputError(message, path=self.path, row=loc, field=field)

    def where(self, position: int) -> str:
        """``"line N"`` or ``"row N"`` of a record, for messages naming a second place."""
        return f"{self.unit} {self.line_of(position)}"


def _csv_record_lines(path: Path, gz: bool, records: Sequence[int]) -> dict[int, int]:
    """Start line of each CSV record number (record 0 is the header)."""
    wanted = set(records)
    last = max(wanted)
    out: dict[int, int] = {}
    with _open_text(path, gz) as fh:
        reader = csv.reader(text_lines(fh, str(path)))
        record = 0
        start = reader.line_num + 1
        for _row in reader:
            if record in wanted:
                out[record] = start
            if record >= last:
                break
            record += 1
            start = reader.line_num + 1
    return out


# ---------------------------------------------------------------------------
# readers
# ---------------------------------------------------------------------------


def read_tidy(path: str | Path) -> TidyTable:
    """Read a tidy CSV / JSONL / Parquet file (format from the extension)."""
    p = Path(path)
    kind, gz = detect_format(p)
    if not p.exists():
        raise InputError("file not found", path=str(p))
    if not p.is_file():
        raise InputError("not a file", path=str(p))
    if kind == "csv":
        table = _read_csv(p, gz)
    elif kind == "jsonl":
        table = _read_jsonl(p, gz)
    else:
        table = _read_parquet(p)
    if len(table) == 0:
        raise InputError("the file holds no data records", path=str(p))
    return table


def _check_utf8(path: Path, gz: bool) -> None:
    """Raise InputError naming the first line that is not valid UTF-8."""
    opener = gzip.open if gz else open
    with opener(path, "rb") as fh:
        for lineno, raw in bounded_lines(fh, str(path)):  # type: ignore[arg-type]
            error = utf8_line_error(str(path), lineno, raw)
            if error is not None:
                raise error


def utf8_line_error(path: str, lineno: int, raw: bytes) -> InputError | None:
    """The error of a line (split at ``\\n``) that is not valid UTF-8, else None."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return InputError(
            f"not valid UTF-8 text (byte {exc.start + 1} of the line); save the file as UTF-8",
            path=path,
            line=lineno,
        )
    return None


def csv_read_options(gz: bool, names: list[str]) -> dict[str, Any]:
    """``pandas.read_csv`` options of every tidy CSV read: all text, nothing
    turned into NaN, blank lines kept (so line numbers stay the file's)."""
    return {
        "dtype": str,
        "keep_default_na": False,
        "na_filter": False,
        "skip_blank_lines": False,
        "encoding": "utf-8-sig",
        "compression": "gzip" if gz else None,
        "header": 0,
        "names": names,
        "engine": "c",
    }


def _read_csv(path: Path, gz: bool) -> TidyTable:
    names = csv_header(path, gz)
    # first, in bounded memory: line and field lengths, record lengths (pandas reads whole)
    _check_record_lengths(path, gz, len(names), names)
    try:
        frame = pd.read_csv(path, **csv_read_options(gz, names))
    except UnicodeDecodeError:
        _check_utf8(path, gz)
        raise
    except pd.errors.ParserError as exc:
        raise _csv_shape_error(path, gz, len(names), str(exc)) from None
    except (OSError, EOFError) as exc:
        raise InputError(f"cannot read the file: {exc}", path=str(path)) from None
    check_csv_frame(path, gz, frame, names)
    return csv_chunk_table(path, gz, frame, names, first_record=1)


def check_csv_frame(path: Path, gz: bool, frame: pd.DataFrame, names: list[str]) -> None:
    """pandas turns the extra leading fields of a too-long record into an index: refuse it."""
    if not isinstance(frame.index, pd.RangeIndex) or list(frame.columns) != names:
        raise _csv_shape_error(path, gz, len(names), "a record has more fields than the header")


def csv_chunk_table(
    path: Path, gz: bool, frame: pd.DataFrame, names: list[str], first_record: int
) -> TidyTable:
    """A TidyTable of CSV records ``first_record, first_record + 1, ...`` (blank lines dropped)."""
    records = np.arange(first_record, first_record + len(frame))
    if len(frame):
        stripped = [frame[c].str.strip() != "" for c in frame.columns]
        nonblank = np.logical_or.reduce([s.to_numpy(dtype=bool) for s in stripped])
        if not nonblank.all():
            frame = frame.loc[nonblank].reset_index(drop=True)
            records = records[nonblank]
    frame = frame.reset_index(drop=True)
    return TidyTable(
        path=str(path), kind="csv", frame=frame, columns=names, record_index=records, gz=gz
    )


def csv_header(path: Path, gz: bool) -> list[str]:
    """The checked column names of a CSV file's header line."""
    try:
        with _open_text(path, gz) as fh:
            header = next(csv.reader(text_lines(fh, str(path))), None)
    except UnicodeDecodeError:
        _check_utf8(path, gz)
        raise
    except (OSError, EOFError, csv.Error) as exc:
        raise InputError(f"cannot read the file: {exc}", path=str(path)) from None
    if header is None or not any(h.strip() for h in header):
        raise InputError(
            "the file is empty; expected a header line naming the columns", path=str(path), line=1
        )
    names = [h.strip() for h in header]
    for i, name in enumerate(names):
        if not name:
            raise InputError(f"column {i + 1} of the header has no name", path=str(path), line=1)
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        if name in seen:
            raise InputError(
                f"column name {name!r} appears twice in the header (columns {seen[name] + 1} "
                f"and {i + 1})",
                path=str(path),
                line=1,
                field=name,
            )
        seen[name] = i
    return names


def _check_record_lengths(
    path: Path, gz: bool, n_columns: int, names: Sequence[str] | None = None
) -> None:
    """Every non-blank record has as many fields as the header (pandas pads short ones).

    Also, reading in bounded memory: no line is longer than ``MAX_LINE_BYTES``
    and no field longer than ``MAX_FIELD_CHARS`` (InputError naming the line
    and the column).
    """
    try:
        _check_records(path, gz, n_columns, names)
    except UnicodeDecodeError:
        _check_utf8(path, gz)
        raise
    except (OSError, EOFError) as exc:
        raise InputError(f"cannot read the file: {exc}", path=str(path)) from None


def _check_records(path: Path, gz: bool, n_columns: int, names: Sequence[str] | None) -> None:
    with _open_text(path, gz) as fh:
        reader = csv.reader(text_lines(fh, str(path)))
        try:
            next(reader, None)
        except csv.Error as exc:
            raise InputError(f"malformed CSV: {exc}", path=str(path), line=1) from None
        check_csv_records(reader, str(path), n_columns, names)


def check_csv_records(
    reader: Any, path: str, n_columns: int, names: Sequence[str] | None, first_line: int = 1
) -> None:
    """The record checks of :func:`_check_record_lengths` on the rows of a ``csv.reader``
    (lines numbered from ``first_line`` for the reader's line 1, e.g. a block of a file)."""
    offset = first_line - 1
    start = offset + reader.line_num + 1
    rows = iter(reader)
    while True:
        try:
            row = next(rows, None)
        except csv.Error as exc:  # a quoted field longer than one line's limit
            raise InputError(
                f"malformed CSV: {exc} (fields may have at most {MAX_FIELD_CHARS:,} characters)",
                path=path,
                line=start,
            ) from None
        if row is None:
            break
        if row and max(map(len, row)) > MAX_FIELD_CHARS:
            i = max(range(len(row)), key=lambda j: len(row[j]))
            raise InputError(
                f"the field has {len(row[i]):,} characters; fields may have at most "
                f"{MAX_FIELD_CHARS:,} (see docs/formats.md, 'Limits')",
                path=path,
                line=start,
                field=names[i] if names is not None and i < len(names) else f"column {i + 1}",
            )
        if row and len(row) != n_columns:
            if len(row) == 1 and not row[0].strip():
                start = offset + reader.line_num + 1
                continue  # a blank line (spaces only)
            more = len(row) > n_columns
            raise InputError(
                f"the record has {len(row)} field{'s' if len(row) != 1 else ''} but the "
                f"header has {n_columns}; "
                + (
                    "quote fields that contain commas"
                    if more
                    else "every record needs a (possibly empty) field for each column"
                ),
                path=path,
                line=start,
            )
        start = offset + reader.line_num + 1


def _csv_shape_error(path: Path, gz: bool, n_columns: int, fallback: str) -> InputError:
    with _open_text(path, gz) as fh:
        reader = csv.reader(text_lines(fh, str(path)))
        start = 1
        try:
            for row in reader:
                if len(row) > n_columns:
                    return InputError(
                        f"the record has {len(row)} fields but the header has {n_columns}; "
                        "quote fields that contain commas",
                        path=str(path),
                        line=start,
                    )
                start = reader.line_num + 1
        except csv.Error as exc:
            return InputError(f"malformed CSV: {exc}", path=str(path), line=start)
    return InputError(f"malformed CSV: {fallback}", path=str(path))


def _iter_lines(path: Path, gz: bool) -> Iterator[tuple[int, str, bool]]:
    """(line number, text, terminated) for each physical line."""
    with _open_text(path, gz) as fh:
        for lineno, line in bounded_lines(fh, str(path)):
            terminated = line.endswith("\n")
            yield lineno, line, terminated


class DuplicateKeyError(ValueError):
    """A JSON object names the same key twice (raised by :func:`unique_keys`)."""

    def __init__(self, key: str) -> None:
        super().__init__(f"duplicate key {key!r}")
        self.key = key


def unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """``object_pairs_hook`` for :func:`json.loads` that rejects repeated keys."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKeyError(key)
            seen.add(key)
    return out


def iter_jsonl_records(path: Path, gz: bool) -> Iterator[tuple[int, dict[str, object]]]:
    """(line number, JSON object) of each non-blank line; InputError naming the line."""
    try:
        for lineno, line, terminated in _iter_lines(path, gz):
            text = line.strip()
            if not text:
                continue
            try:
                value = json.loads(text, object_pairs_hook=unique_keys)
            except DuplicateKeyError as exc:
                raise InputError(
                    f"the key {exc.key!r} appears twice in one JSON object; keep one "
                    "(JSON readers silently keep the last)",
                    path=str(path),
                    line=lineno,
                    field=exc.key,
                ) from None
            except json.JSONDecodeError as exc:
                if not terminated:
                    reason = (
                        f"truncated JSON record: the file ends inside it ({exc.msg}, column "
                        f"{exc.colno}); was the file completely written?"
                    )
                else:
                    reason = (
                        f"invalid JSON ({exc.msg}, column {exc.colno}); each line must be one "
                        "JSON object"
                    )
                raise InputError(reason, path=str(path), line=lineno) from None
            if not isinstance(value, dict):
                raise InputError(
                    f"expected a JSON object ({{...}}) per line, got {type(value).__name__}",
                    path=str(path),
                    line=lineno,
                )
            yield lineno, value
    except UnicodeDecodeError:
        _check_utf8(path, gz)
        raise
    except (OSError, EOFError) as exc:
        raise InputError(f"cannot read the file: {exc}", path=str(path)) from None


def jsonl_table(
    path: Path,
    gz: bool,
    records: Sequence[dict[str, object]],
    lines: Sequence[int],
    columns: dict[str, None] | None = None,
) -> TidyTable:
    """A TidyTable of JSON records; ``columns`` (updated in place) gives the column order."""
    if columns is None:
        columns = {}
    for rec in records:
        for key in rec:
            columns.setdefault(key, None)
    # keep JSON values as Python objects (no type inference); a missing key is None
    frame = pd.DataFrame(
        {c: pd.Series([rec.get(c) for rec in records], dtype=object) for c in columns}
    )
    return TidyTable(
        path=str(path),
        kind="jsonl",
        frame=frame,
        columns=list(columns),
        record_index=np.asarray(lines, dtype=np.int64),
        gz=gz,
    )


def _read_jsonl(path: Path, gz: bool) -> TidyTable:
    records: list[dict[str, object]] = []
    lines: list[int] = []
    for lineno, value in iter_jsonl_records(path, gz):
        records.append(value)
        lines.append(lineno)
    return jsonl_table(path, gz, records, lines)


def _read_parquet(path: Path) -> TidyTable:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(f"not a readable Parquet file: {exc}", path=str(path)) from None
    return parquet_table(path, table, first_row=0)


def parquet_table(path: Path, table: object, first_row: int) -> TidyTable:
    """A TidyTable of Arrow rows ``first_row, first_row + 1, ...`` of a Parquet file."""
    import pyarrow as pa
    import pyarrow.compute as pc

    assert isinstance(table, pa.Table | pa.RecordBatch)
    explicit_nan: dict[str, np.ndarray] = {}
    for name, column in zip(table.column_names, table.columns, strict=True):
        if pa.types.is_floating(column.type):
            mask = pc.fill_null(pc.is_nan(column), False)
            explicit_nan[str(name)] = np.asarray(mask, dtype=bool)
    frame = table.to_pandas()
    frame.columns = [str(c) for c in frame.columns]
    return TidyTable(
        path=str(path),
        kind="parquet",
        frame=frame.reset_index(drop=True),
        columns=list(frame.columns),
        record_index=np.arange(first_row, first_row + len(frame)),
        explicit_nan=explicit_nan,
    )
