"""Worker processes that die with their parent (issue 24, item 6).

A process pool's workers wait for jobs on a pipe; when the driver is killed
(``kill -9``, the OOM killer) nothing tells them, and they — and
multiprocessing's resource tracker, which lives as long as a process holds its
pipe — stayed alive. :func:`die_with_parent`, run as the pool's worker
initializer, makes a worker end when its parent ends, two ways:

* on Linux, ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` (prctl(2)): the kernel kills
  the worker the moment its parent dies. (The signal follows the *thread* that
  created the worker: the pool is created and its workers started from the
  thread that runs the jobs, which outlives the pool.) A parent that died
  before the call is caught by comparing ``os.getppid()`` with the driver's id
  right after it;
* everywhere, a daemon watchdog thread polls ``os.getppid()`` every
  :data:`WATCHDOG_INTERVAL` seconds; when the worker has been re-parented (its
  parent died), it ends the worker with ``os._exit``.

With the workers gone, the resource tracker sees its pipe close and exits too.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

#: seconds between the watchdog's looks at the parent process id
WATCHDOG_INTERVAL = 0.5
#: exit status of a worker whose parent died
ORPHAN_EXIT = 70
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def set_parent_death_signal(sig: int = signal.SIGKILL) -> bool:
    """Ask Linux to send ``sig`` to this process when its parent dies; False elsewhere."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch(parent: int, interval: float) -> None:
    while True:
        if os.getppid() != parent:
            os._exit(ORPHAN_EXIT)
        time.sleep(interval)


def start_watchdog(parent: int, interval: float = WATCHDOG_INTERVAL) -> threading.Thread:
    """A daemon thread that ends this process once its parent ``parent`` is gone."""
    thread = threading.Thread(
        target=_watch, args=(parent, interval), name="glotbench-parent-watchdog", daemon=True
    )
    thread.start()
    return thread


def die_with_parent(parent: int) -> None:
    """Worker initializer: end this process when ``parent`` (the driver's pid) ends."""
    set_parent_death_signal()
    if os.getppid() != parent:  # the parent died before the signal was set
        os._exit(ORPHAN_EXIT)
    start_watchdog(parent)
