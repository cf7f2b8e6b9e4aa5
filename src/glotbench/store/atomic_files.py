"""Write a file all at once: a temporary file in the target's folder, then a rename.

Every page, report and export glotbench writes goes through :func:`atomic_path`
(or its text/bytes shortcuts), so

* a build that is killed (``kill -9``, power loss after the data reached the
  disk) leaves the previous file intact, never a truncated one: readers see
  the old file or the new one, nothing in between (POSIX ``rename(2)``,
  ``os.replace`` on Windows, is atomic within one file system — hence the
  temporary file sits in the target's own folder);
* a symbolic link planted at the target is *replaced* by the new file, never
  followed: ``rename(2)`` replaces the directory entry and does not resolve a
  link at the destination, so a link pointing outside the output folder cannot
  make glotbench overwrite the file it points to;
* the temporary file is hidden (``.NAME.<random>.tmp``), created exclusively
  (``O_EXCL``, so it cannot be a pre-planted link either) and removed when the
  write fails; one left by a killed writer is removed by a later write of
  the same target once it is an hour old (:func:`remove_stale_temporaries`).

The new file gets the permissions an ordinary ``open(path, "w")`` would give it
(``0o666`` minus the umask), not the ``0o600`` of :func:`tempfile.mkstemp`.
"""

from __future__ import annotations

import contextlib
import glob
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from glotbench.errors import GlotbenchError


def _default_mode() -> int:
    """``0o666`` minus the process umask (read without changing it where possible)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)  # no /proc: read it by setting it back at once
    os.umask(mask)
    return 0o666 & ~mask


@contextlib.contextmanager
def atomic_path(target: str | Path, *, fsync: bool = True) -> Iterator[Path]:
    """Yield a temporary path next to ``target``; on success rename it onto ``target``.

    The caller writes the whole file to the yielded path (with any writer:
    ``open``, ``DataFrame.to_parquet``, DuckDB ``COPY ... TO``). When the block
    ends without an exception the file is flushed to disk (``fsync``) and
    renamed onto ``target``, replacing a file or a symbolic link there; when it
    raises, the temporary file is removed and ``target`` is untouched.

    Raises :class:`GlotbenchError` when ``target`` is an existing folder.
    """
    path = Path(target)
    if path.is_dir() and not path.is_symlink():
        raise GlotbenchError(f"{path} is a folder; give a file name to write")
    folder = path.parent
    remove_stale_temporaries(path)
    fd, tmp_name = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        os.chmod(tmp, _default_mode())
        yield tmp
        if fsync:
            with open(tmp, "rb") as fh:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


#: a temporary file untouched for this long was left by a killed writer (seconds)
STALE_SECONDS = 3600.0


def remove_stale_temporaries(target: str | Path, older_than: float = STALE_SECONDS) -> list[Path]:
    """Remove ``.NAME.*.tmp`` files next to ``target`` not modified for ``older_than`` seconds.

    They were left by a writer killed mid-write (``kill -9`` gives it no
    chance to clean up); a live writer's file is younger. Returns the files
    removed.
    """
    path = Path(target)
    removed = []
    now = time.time()
    for tmp in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        try:
            if now - tmp.lstat().st_mtime > older_than:
                tmp.unlink()
                removed.append(tmp)
        except OSError:
            continue  # gone already, or not ours to remove
    return removed


def write_text_atomic(target: str | Path, text: str, *, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``target`` atomically (see :func:`atomic_path`); return the path."""
    with atomic_path(target) as tmp, open(tmp, "w", encoding=encoding, newline="") as fh:
        fh.write(text)
    return Path(target)


def write_bytes_atomic(target: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``target`` atomically (see :func:`atomic_path`); return the path."""
    with atomic_path(target) as tmp, open(tmp, "wb") as fh:
        fh.write(data)
    return Path(target)


@contextlib.contextmanager
def atomic_files(*targets: str | Path) -> Iterator[list[Path]]:
    """Several files replaced together: all written to temporary files, then renamed in a row.

    The renames follow one another only after every file is complete, so a
    kill while writing leaves all previous files; only a kill between two
    renames (microseconds) can leave a mix of old and new.
    """
    with contextlib.ExitStack() as stack:
        temps = [stack.enter_context(atomic_path(t)) for t in targets]
        yield temps
