"""Line-aligned chunks of a CSV file, and the per-record reader's checks of one chunk.

The column-wise reader (:mod:`.csv_replicates`) reads a scores CSV in chunks
of about :data:`CHUNK_BYTES` that end at a line end, so it knows each chunk's
first line. When pyarrow does not take a chunk, :func:`chunk_error` runs the
per-record reader's own checks (the record checks of
:func:`glotbench.ingest.readers.check_csv_records`, the UTF-8 check, pandas'
reading of the values and :func:`glotbench.analysis.replicates.check_numbers`)
on that chunk alone and returns its first problem with the file line — so a
bad line near the end of a 20-million-record file is named after one fast
pass, in bounded memory, with the message the per-record reader gives for the
whole file — or, without a problem, the chunk's records as that reader reads
them (:class:`Checked`).

That reader checks in stages over the whole file: record shapes and UTF-8
first, then every seed, then every replicate, then every score; so the caller
keeps the earliest problem of the earliest stage (:class:`Found` ``.stage``)
and only a record-shape problem ends the pass at once. Where this module cannot
tell what the per-record reader would say from one chunk (quotes, which may
join lines; NUL; a chunk starting with a byte-order mark; invalid UTF-8 just
after a malformed record, which that reader may meet first because it decodes
ahead), it raises :class:`NeedsPerRecord` and the caller reads the whole file
per record.
"""

from __future__ import annotations

import codecs
import csv
import io
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from glotbench.errors import InputError
from glotbench.ingest.limits import MiB

#: bytes read per chunk (a chunk ends at a line end): large, as each chunk is one
#: pyarrow reader (4 MiB chunks took 0.5 s more than 16 MiB ones at 20,000,000 records)
CHUNK_BYTES = 16 * MiB
#: a chunk pyarrow does not take is split into parts of about this many bytes, and only
#: those it does not take either are read per record
PART_BYTES = 1 * MiB
_HEADER_BYTES = 1 << 16
#: invalid UTF-8 this close after a malformed record may be met first by the per-record
#: reader (it decodes 8 KiB ahead of the records it checks): such files take that reader
UTF8_LOOKAHEAD = 1 * MiB

#: the per-record reader's stages, in the order it checks the whole file
SHAPE, SEED, REPLICATE, SCORE = 1, 2, 3, 4
_STAGE = {"seed": SEED, "replicate": REPLICATE, "score": SCORE}


class NeedsPerRecord(Exception):
    """The file needs the per-record reader."""


@dataclass(frozen=True)
class Chunk:
    """Whole lines of a file's data (after the header)."""

    data: bytes | bytearray
    #: line number of the first line (``\\r``, ``\\n`` and ``\\r\\n`` end lines, as for
    #: the csv module and pandas)
    first_line: int
    #: the same counting ``\\n`` only (how the UTF-8 check numbers lines)
    first_nl_line: int
    #: lines in the chunk (a last line without an end included), and ``\\n`` in it
    n_lines: int
    n_nl: int
    #: bytes of the longest line (ended by ``\\n``; at least the longest line)
    longest_line: int

    @classmethod
    def of(cls, data: bytes | bytearray, first_line: int, first_nl_line: int) -> Chunk:
        """The chunk of ``data``, its lines counted (numpy: ``bytes.count`` is 8x slower)."""
        codes = np.frombuffer(data, dtype=np.uint8)
        newline = codes == 10
        ends = np.flatnonzero(newline)
        n_nl = len(ends)
        n = n_nl
        if b"\r" in data:
            ret = codes == 13
            n += int(np.count_nonzero(ret)) - int(np.count_nonzero(ret[:-1] & newline[1:]))
        if data and data[-1:] not in (b"\n", b"\r"):
            n += 1
        bounds = np.concatenate(([-1], ends, [len(data)]))
        longest = int(np.diff(bounds).max()) if len(data) else 0
        return cls(data, first_line, first_nl_line, n, n_nl, longest)

    def split(self, size: int) -> Iterator[tuple[int, Chunk]]:
        """(byte offset, part) of parts of whole lines of about ``size`` bytes (the chunk
        itself when it is not larger)."""
        return _split(self, size)


def _split(chunk: Chunk, size: int) -> Iterator[tuple[int, Chunk]]:
    """(byte offset, part) of the chunk's parts of whole lines, about ``size`` bytes each."""
    data = chunk.data
    if len(data) <= size:
        yield 0, chunk
        return
    ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10) + 1
    cuts = np.unique(ends[np.searchsorted(ends, np.arange(size, len(data), size)) - 1])
    bounds = [0, *(int(c) for c in cuts if 0 < c < len(data)), len(data)]
    line, nl_line = chunk.first_line, chunk.first_nl_line
    for start, stop in zip(bounds[:-1], bounds[1:], strict=True):
        if stop > start:
            part = Chunk.of(bytes(data[start:stop]), line, nl_line)
            yield start, part
            line += part.n_lines
            nl_line += part.n_nl


@dataclass(frozen=True)
class Checked:
    """A chunk's records as the per-record reader reads and checks them
    (:func:`glotbench.analysis.replicates.check_numbers`: numeric seeds and replicates,
    NaN where empty; float scores; a task column), blank records left out, and the
    line of each."""

    frame: Any
    lines: np.ndarray


@dataclass(frozen=True)
class Found:
    """A problem of a chunk: its stage, the error, and (record shapes) the byte after the
    record, from where the per-record reader may have decoded invalid UTF-8 first."""

    stage: int
    error: InputError
    end: int | None = None


def chunks(path: Path, gz: bool) -> Iterator[Chunk]:
    """The data lines of a CSV file (the header line skipped) in chunks of whole lines.

    A line longer than ``2 * CHUNK_BYTES`` (far over the field limit) or a file
    that cannot be read raises :class:`NeedsPerRecord`.
    """
    import gzip

    opener: Any = gzip.open if gz else open
    try:
        with opener(path, "rb") as handle:
            if not handle.readline(_HEADER_BYTES).endswith(b"\n"):
                raise NeedsPerRecord  # no data, or a header longer than the fast path reads
            line = nl_line = 2
            while True:
                data = bytearray(CHUNK_BYTES)  # grown in place by the line's rest
                data[handle.readinto(data) :] = b""
                if not data:
                    return
                if not data.endswith(b"\n"):
                    rest = handle.readline(2 * CHUNK_BYTES)
                    if len(rest) == 2 * CHUNK_BYTES and not rest.endswith(b"\n"):
                        raise NeedsPerRecord
                    data += rest
                chunk = Chunk.of(data, line, nl_line)
                yield chunk
                line += chunk.n_lines
                nl_line += chunk.n_nl
    except (OSError, EOFError, zlib.error):
        raise NeedsPerRecord from None


def chunk_error(chunk: Chunk, path: str, names: Sequence[str]) -> Found | Checked:
    """The per-record reader's first problem in the chunk (earliest stage, then line), or
    the chunk's records as that reader reads them."""
    data = chunk.data
    if b'"' in data or b"\x00" in data or data.startswith(b"\xef\xbb\xbf"):
        raise NeedsPerRecord  # quotes may join lines; pandas reads NUL and a leading BOM its way
    try:
        text, bad = data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        bad = exc.start
        start = data.rfind(b"\n", 0, bad) + 1
        text = data[:start].decode("utf-8")
    found = _shape_error(text, chunk, path, names)
    if bad is None:
        return found if found is not None else _value_error(text, chunk, path, names)
    if found is not None:
        assert found.end is not None
        if bad - found.end < UTF8_LOOKAHEAD:
            raise NeedsPerRecord
        return found
    from glotbench.ingest.readers import utf8_line_error

    stop = data.find(b"\n", bad)
    raw = data[start : len(data) if stop < 0 else stop + 1]
    error = utf8_line_error(path, chunk.first_nl_line + data.count(b"\n", 0, start), bytes(raw))
    if error is None:  # pragma: no cover - the chunk failed to decode in this line
        raise NeedsPerRecord
    return Found(SHAPE, error)


def valid_utf8_start(data: bytes) -> bool:
    """``data`` is valid UTF-8 but perhaps for a character cut at its end."""
    try:
        codecs.getincrementaldecoder("utf-8")().decode(data, final=False)
    except UnicodeDecodeError:
        return False
    return True


class _Lines:
    """The lines of a text as a file opened with ``newline=""`` gives them, counting the
    characters handed out (where a record the csv module refuses ends)."""

    def __init__(self, text: str) -> None:
        self._lines = iter(io.StringIO(text, newline=""))
        self.chars = 0

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> str:
        line = next(self._lines)
        self.chars += len(line)
        return line


def _shape_error(text: str, chunk: Chunk, path: str, names: Sequence[str]) -> Found | None:
    from glotbench.ingest.readers import check_csv_records

    lines = _Lines(text)
    try:
        check_csv_records(csv.reader(lines), path, len(names), names, chunk.first_line)
    except InputError as exc:
        return Found(SHAPE, exc, len(text[: lines.chars].encode("utf-8")))
    return None


def _value_error(text: str, chunk: Chunk, path: str, names: Sequence[str]) -> Found | Checked:
    """The first seed, replicate or score of the chunk the per-record reader refuses,
    or its records as that reader reads them."""
    import pandas as pd

    from glotbench.analysis.replicates import check_numbers
    from glotbench.ingest.readers import csv_chunk_table, csv_read_options

    options = csv_read_options(False, list(names))
    options.update(header=None, encoding=None, compression=None)
    try:
        frame = pd.read_csv(io.StringIO(text, newline=""), **options)
    except (ValueError, pd.errors.ParserError):
        raise NeedsPerRecord from None
    same_shape = isinstance(frame.index, pd.RangeIndex) and list(frame.columns) == list(names)
    if not same_shape or len(frame) != chunk.n_lines:
        raise NeedsPerRecord  # lines and records do not pair up as the line numbers assume
    table = csv_chunk_table(Path(path), False, frame, list(names), first_record=0)

    def error(message: str, position: int | None, field: str | None) -> InputError:
        line = None if position is None else chunk.first_line + int(table.record_index[position])
        return InputError(message, path=path, line=line, field=field)

    try:
        data = check_numbers(table.frame, error)
    except InputError as exc:
        return Found(_STAGE[str(exc.field)], exc)
    return Checked(data, chunk.first_line + np.asarray(table.record_index, dtype=np.int64))
