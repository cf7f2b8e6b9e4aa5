"""A cache of computed analyses, keyed by the store's content and the request.

An analysis of a store is a pure function of what the store holds, the
settings (draws, seed, confidence level, …) and the glotbench code.
:func:`content_digest` digests the first: every row of every table (runs,
scores, imports, failures, meta, attributes, kept outputs), so any write —
a run, an imported score or file, a replaced or deleted row — changes it
(docs/analysis-cache.md). :func:`cache_key` adds the rest. :class:`AnalysisCache`
keeps results in a folder next to the store (``<store>.cache/``), one file per
key, written atomically; :meth:`AnalysisCache.put_answer` keeps the printed
answers of the command line there, and drops those of an older store content.

This module imports DuckDB but neither numpy nor pandas, so the command line
can answer a repeated question before it loads them (docs/cli-performance.md).

Computed results are Python pickles, loaded only from files the current user
owns (a pickle can run code when loaded). The printed answers are plain bytes
(what stdout and stderr printed) with their key and SHA-256 (never
unpickled): one whose bytes changed on disk is not served. A file that is
truncated, corrupt, from another glotbench version, of another user, not a
regular file (a link, a named pipe) or written for another key is ignored
(and recomputed), never an error. At most
:data:`MAX_ANSWERS` answers are kept.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import re
import tempfile
import time
from pathlib import Path
from stat import S_ISREG
from typing import TYPE_CHECKING, Any

import duckdb

from glotbench._version import __version__
from glotbench.store.writes import WRITE_GENERATION

if TYPE_CHECKING:
    from glotbench.store.store import Store

_MAGIC = b"glotbench-analysis-cache-1\n"
#: first line of a kept answer file; then its key, the SHA-256 of key and body, the body:
#: the length of stdout's bytes, a newline, stdout's bytes, stderr's bytes
_ANSWER_MAGIC = b"glotbench-answer-2\n"
#: name of a kept answer: content prefix, key (``argv-`` for an invocation's); the only
#: files :meth:`AnalysisCache.put_answer` removes (``.pkl``: answers of older versions)
_ANSWER_NAME = re.compile(r"[0-9a-f]{16}-[A-Za-z0-9_-]+\.(?:answer|pkl)")
#: answers kept at most (one per invocation: environment, terminal size, …); the oldest go
MAX_ANSWERS = 256
#: seconds after which a temporary file of a killed writer is removed
_STALE_TEMPORARY = 3600.0


#: ``example_stats`` is not read row by row: every run's row carries the SHA-256 of its
#: statistics (``stats_sha256``) and is written with them in one transaction
_COVERED_BY_RUNS = "example_stats"


#: floating-point column types: their signs enter the digest (see :func:`_row_hash`)
_FLOATS = ("DOUBLE", "FLOAT")


def content_digest(connection: duckdb.DuckDBPyConnection) -> str:
    """SHA-256 of what a store's connection holds: every table, every row and column.

    Per table (in name order): its row count and the sum and XOR of a 64-bit
    hash of each row (order-independent; a sum, so a duplicated row counts
    twice): DuckDB's ``hash`` of the row, with the sign bit of each
    floating-point value (:func:`_row_hash`). ``example_stats`` contributes its
    row count only: a complete run's row in ``runs`` carries the digest of its
    statistics. The ``meta`` row counting the write transactions
    (:data:`~glotbench.store.writes.WRITE_GENERATION`) is not content:
    :func:`write_generation` reads it. One scan of each table, in DuckDB; no
    rows are fetched into Python.
    """
    columns: dict[str, list[tuple[str, str]]] = {}
    for table, column, kind in connection.execute(
        "SELECT table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = 'main' ORDER BY table_name, ordinal_position"
    ).fetchall():
        columns.setdefault(table, []).append((column, kind))
    digest = hashlib.sha256(b"glotbench-store-content-3\n")
    for table in sorted(columns):
        quoted = _quoted(table)
        if table == _COVERED_BY_RUNS:
            query = f"SELECT count(*), 0, 0 FROM {quoted}"
        else:
            where = f" WHERE t.key <> '{WRITE_GENERATION}'" if table == "meta" else ""
            query = (
                "SELECT count(*), coalesce(sum(h::HUGEINT), 0), coalesce(bit_xor(h), 0) "
                f"FROM (SELECT {_row_hash(columns[table])} AS h FROM {quoted} AS t{where})"
            )
        ((count, total, xor),) = connection.execute(query).fetchall()
        digest.update(f"{table}:{count}:{total}:{xor}\n".encode())
    return digest.hexdigest()


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _row_hash(columns: list[tuple[str, str]]) -> str:
    """SQL of a row's 64-bit hash: DuckDB's ``hash(t)`` of the whole row, and with it the
    sign bits of its floating-point values and the lengths of its lists of them.

    DuckDB hashes by value, so ``-0.0`` and ``0.0`` (equal numbers, other bits: ``1/x``
    is ``-inf`` or ``inf``) hash alike, and a list of zeros hashes to 0 whatever its
    length; ``signbit`` tells the zeros apart, the length the lists (the sign of a NaN
    counts too; its payload bits do not). Costs a few per cent of the scan.
    """
    extra: list[str] = []
    for column, kind in columns:
        quoted = "t." + _quoted(column)
        if kind in _FLOATS:
            extra.append(f"signbit({quoted})")
        elif kind.endswith("[]") and kind[:-2] in _FLOATS:
            extra.append(f"len({quoted})")
            extra.append(f"list_transform({quoted}, {_SIGNBIT_LAMBDA})")
    return f"hash({', '.join(['t', *extra])})"


def _lambda_syntax() -> str:
    """``signbit`` of a list element as the installed DuckDB writes a lambda (1.3 added
    ``lambda v: …``; 2.0 refuses the older ``v -> …``)."""
    major, minor = (int(part) for part in re.findall(r"\d+", duckdb.__version__)[:2])
    return "lambda v: signbit(v)" if (major, minor) >= (1, 3) else "v -> signbit(v)"


_SIGNBIT_LAMBDA = _lambda_syntax()


def write_generation(connection: duckdb.DuckDBPyConnection) -> int:
    """How many write transactions the store has committed (0: none counted yet).

    The analysis cache reads it before and after an analysis: a write between
    the two, even one undone by a later write (the same content again), means
    the analysis may have read another content, so its answer is not kept.
    """
    rows = connection.execute(
        "SELECT TRY_CAST(value AS UBIGINT) FROM meta WHERE key = ?", [WRITE_GENERATION]
    ).fetchall()
    return int(rows[0][0] or 0) if rows else 0


def store_fingerprint(store: Store) -> str:
    """:func:`content_digest` of an open ``store``."""
    with store.held():
        return content_digest(store.connection)


def store_file_fingerprint(path: str | Path, timeout: float | None = None) -> str | None:
    """:func:`content_digest` of the store file at ``path`` (see :func:`store_file_state`)."""
    state = store_file_state(path, timeout)
    return None if state is None else state[0]


def store_file_state(path: str | Path, timeout: float | None = None) -> tuple[str, int] | None:
    """:func:`content_digest` and :func:`write_generation` of the store file at ``path``,
    opened read-only and closed again.

    None when there is no file or it is not a glotbench store (no ``meta``
    table): the command that reads it then says why. Waits for a writing
    process as opening a store does (:func:`glotbench.store.lock.connect`).
    """
    from glotbench.store.lock import connect

    file = Path(path)
    if not file.is_file():
        return None
    try:
        connection = connect(file, read_only=True, timeout=timeout)
    except duckdb.Error:
        return None
    try:
        ((has_meta,),) = connection.execute(
            "SELECT count(*) FROM information_schema.tables "
            "WHERE table_schema = 'main' AND table_name = 'meta'"
        ).fetchall()
        if not has_meta:
            return None
        return content_digest(connection), write_generation(connection)
    except duckdb.Error:
        return None
    finally:
        connection.close()


def code_fingerprint() -> str:
    """Digest of the installed glotbench files (path, size, modification time).

    A development install keeps its version number while its code changes;
    this makes an edited analysis miss the cache. Every file of the package
    counts (modules, embedded tables, suites), not its ``__pycache__``.
    """
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256(__version__.encode())
    for path in sorted(root.rglob("*")):
        if "__pycache__" in path.parts or not path.is_file():
            continue
        stat = path.stat()
        digest.update(f"{path.relative_to(root)}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def cache_key(fingerprint: str, request: dict[str, Any]) -> str:
    """Key of an analysis: the store's fingerprint, the request and the glotbench code."""
    payload = json.dumps(
        {"store": fingerprint, "request": request, "code": code_fingerprint()},
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(payload.encode()).hexdigest()


class AnalysisCache:
    """Computed results in ``folder``, one pickle per key (see the module docstring)."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)

    @classmethod
    def beside(cls, store_path: str | Path) -> AnalysisCache:
        """The cache folder of a store file: ``<store>.cache/``."""
        path = Path(store_path)
        return cls(path.with_name(path.name + ".cache"))

    def _path(self, key: str) -> Path:
        return self.folder / f"{key}.pkl"

    def get(self, key: str) -> Any | None:
        """The cached result of ``key``, or None (missing, unreadable, not for this key, or
        a file the current user does not own: a pickle is loaded only from a trusted file)."""
        data = _read_own_file(self._path(key))
        if data is None or not data.startswith(_MAGIC):
            return None
        try:
            stored_key, value = pickle.loads(data[len(_MAGIC) :])
        except Exception:  # truncated or corrupt: recompute
            return None
        return value if stored_key == key else None

    def put(self, key: str, value: Any) -> None:
        """Store ``value`` under ``key`` (atomically: a temporary file, then a rename)."""
        try:
            data = _MAGIC + pickle.dumps((key, value), protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError):
            return  # a cache that cannot be written only costs time
        _write_atomically(self.folder, self._path(key), data)

    # ------------------------------------------------------------------
    # the command line's printed answers (glotbench.cli._answer_cache)
    # ------------------------------------------------------------------
    def get_answer(self, content: str, key: str) -> bytes | None:
        """The printed standard output of ``key`` for the store content ``content``, or
        None (also when the file's bytes do not match the SHA-256 kept with them)."""
        streams = self.get_answer_streams(content, key)
        return None if streams is None else streams[0]

    def get_answer_streams(self, content: str, key: str) -> tuple[bytes, bytes] | None:
        """The bytes ``key``'s command printed on stdout and on stderr (a warning, a
        caveat) for the store content ``content``, or None (see :meth:`get_answer`)."""
        name = f"{content[:16]}-{key}"
        data = _read_own_file(self.folder / "answers" / f"{name}.answer")
        header = _ANSWER_MAGIC + name.encode() + b"\n"
        if data is None or not data.startswith(header):
            return None
        checksum, newline, body = data[len(header) :].partition(b"\n")
        if not newline or checksum != _answer_digest(name, body).encode():
            return None
        size, newline, streams = body.partition(b"\n")
        if not newline or not size.isdigit() or int(size) > len(streams):
            return None
        return streams[: int(size)], streams[int(size) :]

    def put_answer(self, content: str, key: str, answer: bytes, errors: bytes = b"") -> None:
        """Keep ``answer`` (stdout's bytes; ``errors``: stderr's) and drop the answers kept
        for another store content.

        Answers of an older content can never be asked for again (the content
        digest is part of every key), so the folder holds the answers of one
        store content at a time, at most :data:`MAX_ANSWERS` of them (the
        oldest go). Only files named as answers are removed, and temporary
        files of killed writers after an hour.
        """
        name = f"{content[:16]}-{key}"
        folder = self.folder / "answers"
        body = str(len(answer)).encode() + b"\n" + answer + errors
        data = _ANSWER_MAGIC + name.encode() + b"\n"
        data += _answer_digest(name, body).encode() + b"\n" + body
        _write_atomically(folder, folder / f"{name}.answer", data)
        _prune(folder, content[:16] + "-", f"{name}.answer")


def _read_own_file(path: Path) -> bytes | None:
    """The bytes of ``path`` if it is a regular file (not a link, pipe or device) that the
    current user owns, else None; opened without waiting (a named pipe would block)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        stat = os.fstat(fd)
        if not S_ISREG(stat.st_mode) or not _owned(stat):
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            return handle.read()
    except OSError:
        return None
    finally:
        os.close(fd)


def _owned(stat: os.stat_result) -> bool:
    """Whether a file of this ``stat`` belongs to the current user (always, off POSIX)."""
    getuid = getattr(os, "getuid", None)
    return getuid is None or stat.st_uid == getuid()


def _answer_digest(name: str, answer: bytes) -> str:
    return hashlib.sha256(name.encode() + b"\n" + answer).hexdigest()


def _write_atomically(folder: Path, path: Path, data: bytes) -> None:
    """``data`` into ``path``: a temporary file in ``folder``, then a rename; on any
    failure nothing is left (a cache that cannot be written only costs time)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _prune(folder: Path, keep_prefix: str, newest: str) -> None:
    """Remove the answers in ``folder`` not of ``keep_prefix`` and the oldest beyond
    :data:`MAX_ANSWERS` (never ``newest``, the one just written), and temporary files
    older than an hour; other files stay."""
    try:
        entries = [(p, p.stat()) for p in folder.iterdir()]
    except OSError:
        return
    kept: list[tuple[bool, int, Path]] = []
    drop: list[Path] = []
    now = time.time()
    for path, stat in entries:
        if path.name.endswith(".tmp"):
            if now - stat.st_mtime > _STALE_TEMPORARY:
                drop.append(path)
        elif _ANSWER_NAME.fullmatch(path.name):
            if path.name.startswith(keep_prefix) and path.name.endswith(".answer"):
                kept.append((path.name == newest, stat.st_mtime_ns, path))
            else:
                drop.append(path)
    kept.sort(key=lambda item: item[:2], reverse=True)
    drop.extend(path for _, _, path in kept[MAX_ANSWERS:])
    for path in drop:
        try:
            path.unlink()
        except OSError:
            pass
