"""Opening a store's DuckDB file while another process holds it: wait, then fail clearly.

DuckDB lets **one** process open a database file read-write, or **several**
processes open it read-only, never both at once (DuckDB documentation,
"Concurrency": https://duckdb.org/docs/current/connect/concurrency). A process
that asks for a conflicting lock gets at once an ``IOException`` "Could not set
lock on file ... Conflicting lock is held in <program> (PID n)".

:func:`connect` turns that immediate failure into a bounded wait: it retries
with a growing pause (10 ms, doubling, at most 100 ms; a failed attempt costs
about 6 ms of CPU) until the lock is free or ``timeout`` seconds have passed;
after the first second it tells the user once (``on_wait``, by default a line
on stderr) who holds the store. On time-out it raises a
:class:`~glotbench.errors.StoreError` naming the store, the holding process
and the way to wait longer (:data:`LOCK_TIMEOUT_ENV`).

Writers (``glotbench run``, imports) hold the file only while they write
(see ``Store.open(..., hold=False)``), so readers wait at most for one
transaction, and a writer waits for the readers open at that moment.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from pathlib import Path

import duckdb

from glotbench.errors import StoreError, print_notice

#: environment variable: seconds to wait for a store another process holds
LOCK_TIMEOUT_ENV = "GLOTBENCH_LOCK_TIMEOUT"
#: default wait (seconds) when neither an argument nor the environment sets one
DEFAULT_LOCK_TIMEOUT = 60.0
#: seconds of waiting after which the user is told (once) what is happening
NOTICE_AFTER = 1.0
_FIRST_PAUSE = 0.01
_MAX_PAUSE = 0.1

_HOLDER = re.compile(r"Conflicting lock is held in (?P<program>.*?) \(PID (?P<pid>\d+)\)")


#: the process's lock wait, set by :func:`set_lock_timeout` (the CLI's ``--lock-timeout``)
_process_timeout: float | None = None


def set_lock_timeout(value: float | None) -> None:
    """Set the lock wait of every store this process opens without its own (None: unset).

    ``$GLOTBENCH_LOCK_TIMEOUT`` is read only when neither an argument nor this
    is given (documented fallback, ``docs/store.md``).

    Parameters
    ----------
    value : float or None
        Seconds to wait for a store another process holds (0: do not wait);
        None unsets it.

    Examples
    --------
    >>> from glotbench import api
    >>> api.set_lock_timeout(5.0)
    >>> api.set_lock_timeout(None)
    """
    global _process_timeout
    _process_timeout = None if value is None else lock_timeout(value)


def lock_timeout(value: float | None = None) -> float:
    """The lock wait in seconds: ``value``, else :func:`set_lock_timeout`'s, else
    ``$GLOTBENCH_LOCK_TIMEOUT``, else 60.

    ``0`` means "do not wait" (fail at once, DuckDB's own behaviour).
    """
    if value is None and _process_timeout is not None:
        value = _process_timeout
    if value is None:
        raw = os.environ.get(LOCK_TIMEOUT_ENV, "").strip()
        if not raw:
            return DEFAULT_LOCK_TIMEOUT
        try:
            value = float(raw)
        except ValueError:
            raise StoreError(
                f"{LOCK_TIMEOUT_ENV}={raw!r} is not a number of seconds (e.g. 60, or 0 to not wait)"
            ) from None
    if not value >= 0:  # also rejects NaN
        raise StoreError(f"the lock timeout must be ≥ 0 seconds, got {value!r}")
    return float(value)


def is_lock_conflict(exc: BaseException) -> bool:
    """True when DuckDB refused a connection because another process holds the file."""
    text = str(exc)
    return isinstance(exc, duckdb.IOException) and "Could not set lock" in text


def holder_of(exc: BaseException) -> str:
    """ "PID n (program)" of the process DuckDB names as holding the lock, or "another process"."""
    match = _HOLDER.search(str(exc))
    if not match:
        return "another process"
    return f"process {match['pid']} ({Path(match['program']).name})"


def connect(
    path: Path,
    *,
    read_only: bool,
    timeout: float | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> duckdb.DuckDBPyConnection:
    """``duckdb.connect(path, read_only=...)``, waiting up to ``timeout`` s for a lock.

    Only a lock conflict is retried; any other error is raised as DuckDB
    raised it (the caller words it). ``on_wait`` receives one message after
    :data:`NOTICE_AFTER` seconds of waiting (default: :func:`~glotbench.errors.print_notice`).
    """
    limit = lock_timeout(timeout)
    notice = on_wait or print_notice
    start = time.monotonic()
    pause = _FIRST_PAUSE
    told = False
    mode = "read" if read_only else "write to"
    while True:
        try:
            return duckdb.connect(str(path), read_only=read_only)
        except duckdb.Error as exc:
            if not is_lock_conflict(exc):
                raise
            waited = time.monotonic() - start
            if waited >= limit:
                raise StoreError(
                    f"the store {path} is in use by {holder_of(exc)}: DuckDB allows one "
                    "writing process or several reading ones at a time, and glotbench waited "
                    f"{limit:g} s to {mode} it; try again when that process has finished, "
                    f"or wait longer with lock_timeout=SECONDS (or {LOCK_TIMEOUT_ENV})"
                ) from None
            if not told and waited >= NOTICE_AFTER:
                notice(
                    f"glotbench: waiting for the store {path}, held by {holder_of(exc)} (up to "
                    f"{limit:g} s; change with lock_timeout=SECONDS or {LOCK_TIMEOUT_ENV}) ..."
                )
                told = True
            time.sleep(min(pause, max(limit - waited, 0.0)))
            pause = min(2 * pause, _MAX_PAUSE)


def open_error_message(path: Path, exc: Exception) -> str:
    """The StoreError text of a failed ``duckdb.connect`` of the store ``path``."""
    text = str(exc)
    lowered = text.lower()
    if "lock" in lowered:
        return (
            f"the store {path} is in use by another process (DuckDB allows one writer at a "
            f"time); wait for it to finish and try again [{text.splitlines()[0]}]"
        )
    if "different configuration" in lowered:
        return (
            f"the store {path} is already open in this process in another mode; "
            "close the other Store first"
        )
    if "not a valid duckdb database" in lowered or "not a duckdb" in lowered or "magic" in lowered:
        return f"{path} is not a DuckDB database; pass a glotbench store as store=PATH"
    if "version" in lowered and "storage" in lowered:
        return f"{path} was written by an incompatible DuckDB version: {text.splitlines()[0]}"
    return f"cannot open the store {path}: {text.splitlines()[0] if text else type(exc).__name__}"
