"""Limits on input lines, fields and files, and a line reader that enforces them in bounded memory.

Every reader of user files goes through these, so a hostile or broken file is
refused by file, line (and field) *while it is read*, before it can take
gigabytes of memory (a 2 GB line used to take 4.4 GB in the CSV reader and
6.5 GB in the JSONL reader before a traceback):

* :data:`MAX_LINE_BYTES` — a line of a CSV, JSONL or text file (lm-eval's
  samples lines included: a 128k-token prompt is well under 1 MiB, even
  repeated in ``doc``, ``arguments`` and ``resps``);
* :data:`MAX_FIELD_CHARS` — a CSV field (a quoted field may span lines);
* :data:`MAX_JSON_FILE_BYTES` — a whole JSON document (lm-eval's results
  file, a reuben config);
* names (model, task, language, dataset, metric): :data:`glotbench.store.names.MAX_NAME_CHARS`.

:func:`bounded_lines` reads at most ``limit + 1`` characters (or bytes) per
call (``readline(size)``), so an over-long line is refused after reading one
limit's worth of it, never materialised whole.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, AnyStr

from glotbench.errors import InputError

MiB = 1 << 20
#: longest line accepted (bytes in binary reads, characters in text reads)
MAX_LINE_BYTES = 64 * MiB
#: longest CSV field accepted (characters)
MAX_FIELD_CHARS = 1 * MiB
#: largest whole JSON document read at once (bytes)
MAX_JSON_FILE_BYTES = 512 * MiB


def line_too_long(path: str, line: int, limit: int) -> InputError:
    """The error of a line longer than ``limit``."""
    return InputError(
        f"the line is longer than {limit / MiB:g} MiB (the limit of one line; see "
        "docs/formats.md, 'Limits'); is this the right file?",
        path=path,
        line=line,
    )


def bounded_lines(
    handle: IO[AnyStr], path: str, *, limit: int = MAX_LINE_BYTES, first_line: int = 1
) -> Iterator[tuple[int, AnyStr]]:
    """(line number, line with its terminator) of an open file; InputError on an over-long line.

    Memory is bounded by ``limit`` whatever the file holds: each line is read
    with ``readline(limit + 1)``, and a read that fills it without reaching
    the line's end is refused, naming the file and line.
    """
    lineno = first_line
    newline: AnyStr | None = None
    while True:
        line = handle.readline(limit + 1)
        if not line:
            return
        if newline is None:
            newline = "\n" if isinstance(line, str) else b"\n"  # type: ignore[assignment]
        if len(line) > limit and not line.endswith(newline):  # type: ignore[arg-type]
            raise line_too_long(path, lineno, limit)
        yield lineno, line
        lineno += 1


def text_lines(handle: IO[str], path: str, *, limit: int = MAX_LINE_BYTES) -> Iterator[str]:
    """The lines of :func:`bounded_lines` without their numbers (e.g. for :func:`csv.reader`)."""
    for _, line in bounded_lines(handle, path, limit=limit):
        yield line


def check_file_size(size: int, path: str, limit: int = MAX_JSON_FILE_BYTES) -> None:
    """InputError when a file read whole is larger than ``limit`` bytes."""
    if size > limit:
        raise InputError(
            f"the file has {size / MiB:,.0f} MiB; a JSON document read whole may have at most "
            f"{limit / MiB:g} MiB (see docs/formats.md, 'Limits')",
            path=path,
        )
