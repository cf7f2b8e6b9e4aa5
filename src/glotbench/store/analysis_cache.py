"""A cache of computed analyses, keyed by the store's content and the request.

An analysis of a store is a pure function of the runs it reads (their ids and
statistics digests), the settings (draws, seed, confidence level, …) and the
glotbench version. :func:`store_fingerprint` digests the first from the
``runs`` table (``run_id`` and ``stats_sha256`` of every complete run, in
order), so any new, replaced or removed run changes it; :func:`cache_key`
adds the rest. :class:`AnalysisCache` keeps results in a folder next to the
store (``<store>.cache/``), one file per key, written atomically.

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

from glotbench._version import __version__

if TYPE_CHECKING:
    from glotbench.store.store import Store

_MAGIC = b"glotbench-analysis-cache-1\n"


def store_fingerprint(store: Store) -> str:
    """SHA-256 of the ids and statistics digests of every run in ``store``."""
    with store.held():
        rows = store.connection.execute(
            "SELECT run_id, stats_sha256 FROM runs ORDER BY run_id"
        ).fetchall()
    digest = hashlib.sha256()
    for run_id, stats in rows:
        digest.update(f"{run_id}:{stats}\n".encode())
    return digest.hexdigest()


def code_fingerprint() -> str:
    """Digest of the installed glotbench source files (path, size, modification time).

    A development install keeps its version number while its code changes;
    this makes an edited analysis miss the cache.
    """
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256(__version__.encode())
    for path in sorted(root.rglob("*.py")):
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
