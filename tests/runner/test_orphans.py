"""Worker processes die with a killed driver (issue 24, item 6).

``kill -9`` of ``glotbench run --executor processes`` used to leave its two
workers and multiprocessing's resource tracker running; the workers now end
with their parent (``glotbench.runner.worker_guard``), and the tracker with them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import ROOT, write_sentiment

psutil = pytest.importorskip("psutil")

SUITE = """
name: sleepy
protocol: {iterations: 1, speed_iterations: 0}
datasets:
  - {name: sent, task: sentiment, language: en, loader: jsonl, paths: [sent.jsonl]}
models:
  - {name: s1, kind: callable, options: {target: "tests.runner.helpers_models:sleeps"}}
  - {name: s2, kind: callable, options: {target: "tests.runner.helpers_models:sleeps"}}
"""


def _alive(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.slow
def test_kill_9_of_a_process_executor_run_leaves_no_process_behind(tmp_path: Path):
    write_sentiment(tmp_path / "sent.jsonl")
    (tmp_path / "suite.yaml").write_text(SUITE, encoding="utf-8")
    driver = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "glotbench",
            "run",
            "suite.yaml",
            "--store",
            "s.duckdb",
            "--executor",
            "processes",
            "--num-cpus",
            "2",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=tmp_path,
    )
    descendants: list[psutil.Process] = []
    try:
        parent = psutil.Process(driver.pid)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # the resource tracker and two workers
            descendants = parent.children(recursive=True)
            if len(descendants) >= 3:
                break
            time.sleep(0.1)
        assert len(descendants) >= 3, f"the workers did not start: {descendants}"
        time.sleep(1.0)  # let them run their initializer and start the jobs
        descendants = parent.children(recursive=True)
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait(timeout=10)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(_alive(p) for p in descendants):
            time.sleep(0.1)
        survivors = [p for p in descendants if _alive(p)]
        assert not survivors, [p.cmdline() for p in survivors]
    finally:
        if driver.poll() is None:
            driver.kill()
        for p in descendants:  # never leave a survivor to the next test
            if _alive(p):
                p.kill()


def test_watchdog_ends_a_process_whose_parent_died(tmp_path: Path):
    """The portable fallback alone (no parent-death signal): a grandchild outlives its parent
    for at most about one watchdog interval."""
    script = (
        "import os, sys, time\n"
        "from glotbench.runner.worker_guard import start_watchdog\n"
        "parent = os.getppid()\n"
        "start_watchdog(parent, 0.05)\n"
        "print(os.getpid(), flush=True)\n"
        "time.sleep(30)\n"
    )
    middle = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys, time\n"
            f"c = subprocess.Popen([sys.executable, '-c', {script!r}], stdout=sys.stdout)\n"
            "time.sleep(30)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    assert middle.stdout is not None
    child = psutil.Process(int(middle.stdout.readline()))
    assert _alive(child)
    middle.kill()
    middle.wait(timeout=10)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(child):
        time.sleep(0.05)
    alive = _alive(child)
    if alive:
        child.kill()
    assert not alive


def test_parent_death_signal_is_set_on_linux():
    if not sys.platform.startswith("linux"):
        pytest.skip("PR_SET_PDEATHSIG is Linux only")
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import ctypes, signal\n"
            "from glotbench.runner.worker_guard import set_parent_death_signal\n"
            "assert set_parent_death_signal(signal.SIGTERM)\n"
            "sig = ctypes.c_int()\n"
            "libc = ctypes.CDLL(None)\n"
            "assert libc.prctl(2, ctypes.byref(sig), 0, 0, 0) == 0\n"  # PR_GET_PDEATHSIG
            "print(sig.value)\n",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) == signal.SIGTERM
