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

Entries are Python pickles: load a cache only from a folder you own, as with
any pickle (a store's cache folder is as trusted as the store). A file that is
truncated, corrupt, from another glotbench version or written for another key
is ignored (and recomputed), never an error.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from glotbench._version import __version__

if TYPE_CHECKING:
    from glotbench.store.store import Store

_MAGIC = b"glotbench-analysis-cache-1\n"


#: ``example_stats`` is not read row by row: every run's row carries the SHA-256 of its
#: statistics (``stats_sha256``) and is written with them in one transaction
_COVERED_BY_RUNS = "example_stats"


def content_digest(connection: duckdb.DuckDBPyConnection) -> str:
    """SHA-256 of what a store's connection holds: every table, every row and column.

    Per table (in name order): its row count and the sum and XOR of DuckDB's
    64-bit ``hash`` of each row (order-independent; a sum, so a duplicated row
    counts twice). ``example_stats`` contributes its row count only: a complete
    run's row in ``runs`` carries the digest of its statistics. One scan of
    each table, in DuckDB; no rows are fetched into Python.
    """
    tables = sorted(
        row[0]
        for row in connection.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
        ).fetchall()
    )
    digest = hashlib.sha256(b"glotbench-store-content-2\n")
    for table in tables:
        quoted = '"' + table.replace('"', '""') + '"'
        if table == _COVERED_BY_RUNS:
            query = f"SELECT count(*), 0, 0 FROM {quoted}"
        else:
            query = (
                f"SELECT count(*), coalesce(sum(hash(t)::HUGEINT), 0), "
                f"coalesce(bit_xor(hash(t)), 0) FROM {quoted} AS t"
            )
        ((count, total, xor),) = connection.execute(query).fetchall()
        digest.update(f"{table}:{count}:{total}:{xor}\n".encode())
    return digest.hexdigest()


def store_fingerprint(store: Store) -> str:
    """:func:`content_digest` of an open ``store``."""
    with store.held():
        return content_digest(store.connection)


def store_file_fingerprint(path: str | Path, timeout: float | None = None) -> str | None:
    """:func:`content_digest` of the store file at ``path``, opened read-only and closed again.

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
        return content_digest(connection)
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
        """The cached result of ``key``, or None (missing, unreadable or not for this key)."""
        try:
            data = self._path(key).read_bytes()
        except OSError:
            return None
        if not data.startswith(_MAGIC):
            return None
        try:
            stored_key, value = pickle.loads(data[len(_MAGIC) :])
        except Exception:  # truncated or corrupt: recompute
            return None
        return value if stored_key == key else None

    def put(self, key: str, value: Any) -> None:
        """Store ``value`` under ``key`` (atomically: a temporary file, then a rename)."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            data = _MAGIC + pickle.dumps((key, value), protocol=pickle.HIGHEST_PROTOCOL)
            fd, tmp = tempfile.mkstemp(dir=self.folder, suffix=".tmp")
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, self._path(key))
        except (OSError, pickle.PicklingError, TypeError, AttributeError):
            return  # a cache that cannot be written only costs time

    # ------------------------------------------------------------------
    # the command line's printed answers (glotbench.cli._answer_cache)
    # ------------------------------------------------------------------
    def get_answer(self, content: str, key: str) -> bytes | None:
        """The printed answer of ``key`` for the store content ``content``, or None."""
        value = AnalysisCache(self.folder / "answers").get(f"{content[:16]}-{key}")
        return value if isinstance(value, bytes) else None

    def put_answer(self, content: str, key: str, answer: bytes) -> None:
        """Keep ``answer`` and drop the answers kept for another store content.

        Answers of an older content can never be asked for again (the content
        digest is part of every key), so the folder holds the answers of one
        store content at a time.
        """
        answers = AnalysisCache(self.folder / "answers")
        answers.put(f"{content[:16]}-{key}", answer)
        prefix = content[:16] + "-"
        try:
            stale = [p for p in answers.folder.glob("*.pkl") if not p.name.startswith(prefix)]
        except OSError:
            return
        for path in stale:
            try:
                path.unlink()
            except OSError:
                pass
