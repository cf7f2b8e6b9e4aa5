"""One importing writer at a time: an advisory lock file next to the store.

DuckDB's file lock (:mod:`glotbench.store.lock`) is held only for one
transaction at a time (``Store.open(..., hold=False)``), so readers get in
between a writer's batches. An import, though, *decides* things from the
store's content before it writes — which keys are stored already (and so
which rows must be checked), which runs are new, whether an unfinished
``imports`` row is an interrupted import to resume — and then writes in
several transactions. Two imports deciding at the same time from the same
content both write what each found missing (keys stored twice, or both of
two conflicting values), and the second took the first one's live, unfinished
``imports`` row for an interrupted one and "resumed" it.

:func:`writer_lock` serialises those decide-then-write phases: every importer
holds it from its first decision taken from the store's content ("already
imported?" asked again under it) to its ``imports`` row's completion. Other
processes wait for it (up to the lock timeout,
``$GLOTBENCH_LOCK_TIMEOUT``), then re-decide from what is stored by then (the
same file: "already imported"; conflicting keys: a refusal naming file, line
and field). While the lock is held no other import can be running, so an
unfinished ``imports`` row seen under it belongs to a process that died and
is safely resumed.

The lock is ``<store>.writer.lock`` locked with ``flock`` (POSIX) or
``msvcrt.locking`` (Windows): the operating system releases it when its
process ends, however it ends (``kill -9`` included), so a dead owner never
blocks the store and a live one is never taken over. The file records its
owner (process id, the process's start time and command line) for the
messages; it is removed on release (a waiter that locked a file already
unlinked retries on the new one).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from glotbench.errors import StoreError, print_notice
from glotbench.store.lock import LOCK_TIMEOUT_ENV, NOTICE_AFTER, lock_timeout

#: suffix of the writer lock file: ``results.duckdb`` → ``results.duckdb.writer.lock``
WRITER_LOCK_SUFFIX = ".writer.lock"
_PAUSE = 0.02
_MAX_PAUSE = 0.2

# in-process state: lock path -> [file descriptor, depth]; one thread at a time per path
_held: dict[str, list[int]] = {}
_thread_locks: dict[str, threading.RLock] = {}
_registry = threading.Lock()


def writer_lock_path(store_path: str | Path) -> Path:
    """The lock file of the store at ``store_path`` (symlinks resolved: one lock per file)."""
    p = Path(store_path).resolve()
    return p.with_name(p.name + WRITER_LOCK_SUFFIX)


def process_start_time(pid: int) -> float | None:
    """When process ``pid`` started (seconds since the epoch), or None if unknown.

    With the process id it identifies a process: an id reused by a later
    process has another start time. Linux: field 22 of ``/proc/<pid>/stat``
    (clock ticks after boot; proc(5)); elsewhere psutil when installed.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        ticks = int(stat.rsplit(")", 1)[1].split()[19])  # fields after "comm": 3.. → 22 is [19]
        boot = next(
            float(line.split()[1])
            for line in Path("/proc/stat").read_text().splitlines()
            if line.startswith("btime ")
        )
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration, AttributeError):
        pass
    try:
        import psutil

        return float(psutil.Process(pid).create_time())
    except Exception:  # noqa: BLE001 - not installed, no such process, no access
        return None


def _describe(owner: dict[str, Any] | None) -> str:
    if not owner:
        return "another glotbench process"
    text = f"process {owner.get('pid')}"
    command = owner.get("command")
    if command:
        text += f" ({command})"
    since = owner.get("locked_at")
    if since:
        text += f", writing since {since}"
    return text


def read_owner(path: Path) -> dict[str, Any] | None:
    """The owner record in a lock file (None if absent or unreadable)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "null")
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def note_import(store_path: str | Path, import_id: str) -> None:
    """Record in the lock file of a store this process holds which import it is writing.

    So ``glotbench show`` can tell the import in progress from an interrupted
    one (:func:`live_owner`). Does nothing when this process does not hold the lock.
    """
    entry = _held.get(str(writer_lock_path(store_path)))
    if entry is None:
        return
    fd = entry[0]
    with suppress(OSError, ValueError):
        os.lseek(fd, 0, os.SEEK_SET)
        owner = json.loads(os.read(fd, 1 << 16) or b"null") or {}
        owner["import_id"] = import_id
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, json.dumps(owner).encode())


def live_owner(store_path: str | Path) -> dict[str, Any] | None:
    """The owner record of the store's writer lock if a running process holds it, else None.

    The lock is held exactly while its process runs, so this tells an import
    in progress from an interrupted one. Never creates the lock file.
    """
    path = writer_lock_path(store_path)
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return None
    try:
        if _try_lock(fd):  # free: nobody is writing (the lock goes with the close below)
            return None
        return read_owner(path) or {}
    finally:
        os.close(fd)


def _try_lock(fd: int) -> bool:
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _same_file(fd: int, path: Path) -> bool:
    """Whether ``path`` still names the file open as ``fd`` (not unlinked by a releaser)."""
    try:
        a, b = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _acquire(path: Path, limit: float, notice: Callable[[str], None], what: str) -> int:
    start = time.monotonic()
    pause = _PAUSE
    told = False
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreError(
                f"cannot write to the store {what}: its writer lock file {path} cannot be "
                f"created ({exc.strerror or exc}); the store's folder must be writable"
            ) from None
        if _try_lock(fd):
            if _same_file(fd, path):
                owner = {
                    "pid": os.getpid(),
                    "process_started": process_start_time(os.getpid()),
                    "command": " ".join(["glotbench", *sys.argv[1:3]])
                    if Path(sys.argv[0]).name in ("glotbench", "__main__.py")
                    else Path(sys.argv[0]).name,
                    "locked_at": datetime.now(UTC).isoformat(timespec="seconds"),
                }
                os.ftruncate(fd, 0)
                os.write(fd, json.dumps(owner).encode())
                return fd
            os.close(fd)  # locked a file its releaser had just unlinked: retry on the new one
            continue
        os.close(fd)
        waited = time.monotonic() - start
        if waited >= limit:
            raise StoreError(
                f"the store {what} is being written by {_describe(read_owner(path))}; "
                f"glotbench waited {limit:g} s for it to finish: try again when it has "
                f"finished, or wait longer with lock_timeout=SECONDS (or {LOCK_TIMEOUT_ENV})"
            )
        if not told and waited >= NOTICE_AFTER:
            notice(
                f"glotbench: waiting for {_describe(read_owner(path))} to finish writing to "
                f"the store {what} (up to {limit:g} s; change with lock_timeout=SECONDS or "
                f"{LOCK_TIMEOUT_ENV}) ..."
            )
            told = True
        time.sleep(min(pause, max(limit - waited, 0.0)))
        pause = min(2 * pause, _MAX_PAUSE)


def _release(path: Path, fd: int) -> None:
    with suppress(OSError):
        if _same_file(fd, path):
            path.unlink()  # while still locked: a waiter that locks the old file retries
    os.close(fd)  # releases the lock


@contextmanager
def writer_lock(
    store_path: str | Path,
    *,
    timeout: float | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> Iterator[None]:
    """Hold the store's writer lock for the block (re-entrant within a process).

    Waits up to ``timeout`` seconds (default :func:`glotbench.store.lock.lock_timeout`:
    :func:`~glotbench.store.lock.set_lock_timeout`'s, ``$GLOTBENCH_LOCK_TIMEOUT`` or 60)
    while another process holds it, telling the user once after a second (``on_wait``,
    default :func:`~glotbench.errors.print_notice`), then raises a :class:`StoreError`
    naming the owner. Threads of one process take turns.
    """
    path = writer_lock_path(store_path)
    key = str(path)
    limit = lock_timeout(timeout)
    with _registry:
        rlock = _thread_locks.setdefault(key, threading.RLock())
    if not rlock.acquire(timeout=limit):
        raise StoreError(
            f"the store {store_path} is being written by another thread of this process; "
            f"waited {limit:g} s"
        )
    try:
        entry = _held.get(key)
        if entry is None:
            fd = _acquire(path, limit, on_wait or print_notice, str(store_path))
            entry = _held[key] = [fd, 0]
        entry[1] += 1
        try:
            yield
        finally:
            entry[1] -= 1
            if entry[1] == 0:
                del _held[key]
                _release(path, entry[0])
    finally:
        rlock.release()
