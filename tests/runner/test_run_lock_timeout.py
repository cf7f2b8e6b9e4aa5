"""``--lock-timeout`` after the writing commands: a run beside a long import waits for it.

Another process holds the store's writer lock (as a long import does).
``glotbench run --lock-timeout 60`` waits, says so, and completes once the lock
is freed; ``--lock-timeout 0`` fails at once naming the holder,
writing nothing. The command's option wins over ``$GLOTBENCH_LOCK_TIMEOUT``.
The import commands take the same option.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from glotbench.store import Store

from .conftest import ROOT, write_suite

CLI = [sys.executable, "-c", "from glotbench.cli import main; main()"]

HOLDER = """
import sys, time
from glotbench.store.writer_lock import writer_lock
with writer_lock(sys.argv[1]):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def _env(timeout: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT / "src"), "GLOTBENCH_LOCK_TIMEOUT": timeout}


def _hold(store: Path, seconds: float) -> subprocess.Popen[str]:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(store), str(seconds)],
        stdout=subprocess.PIPE, text=True, env=_env("60"),
    )  # fmt: skip
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def _runs(store: Path) -> int:
    with Store.open(store, read_only=True) as s:
        return s.summary().counts["runs"]


@pytest.mark.slow
def test_run_waits_for_a_writer_with_lock_timeout_and_fails_at_once_with_zero(
    tmp_path: Path,
) -> None:
    suite = write_suite(tmp_path, iterations=1)
    store = tmp_path / "s.duckdb"
    command = [*CLI, "run", str(suite), "--store", str(store), "--model", "majority"]

    holder = _hold(store, 30)
    try:  # the option (0) wins over the environment (120): fails at once
        refused = subprocess.run(
            [*command, "--lock-timeout", "0"], capture_output=True, text=True, env=_env("120"),
            timeout=120,
        )  # fmt: skip
    finally:
        holder.kill()
        holder.wait()
    assert refused.returncode != 0
    message = " ".join(refused.stderr.split())  # as wrapped for the terminal
    assert "is being written by" in message and str(holder.pid) in message
    assert not store.exists() or _runs(store) == 0

    holder = _hold(store, 300)  # held until the run says it waits; the environment says 0
    run = subprocess.Popen(
        [*command, "--lock-timeout", "60"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=_env("0"),
    )  # fmt: skip
    assert run.stderr is not None
    said = ""
    for line in run.stderr:
        said += line
        if "waiting for" in " ".join(said.split()):
            break
    holder.kill()  # the long writer ends: the waiting run goes on
    holder.wait()
    rest, err = run.communicate(timeout=300)
    assert run.returncode == 0, said + err
    assert "waiting for" in " ".join(said.split())
    assert "change with --lock-timeout SECONDS" in " ".join(said.split())  # the CLI's words
    assert _runs(store) > 0


@pytest.mark.slow
def test_import_commands_take_lock_timeout(tmp_path: Path) -> None:
    scores = tmp_path / "scores.csv"
    scores.write_text("model,task,language,metric,score\nm,t,en,accuracy,0.5\n")
    store = tmp_path / "s.duckdb"
    holder = _hold(store, 30)
    try:
        refused = subprocess.run(
            [*CLI, "import", "scores", str(scores), "--store", str(store), "--lock-timeout", "0"],
            capture_output=True, text=True, env=_env("120"), timeout=60,
        )  # fmt: skip
    finally:
        holder.kill()
        holder.wait()
    assert refused.returncode != 0 and "is being written by" in " ".join(refused.stderr.split())
    done = subprocess.run(
        [*CLI, "import", "scores", str(scores), "--store", str(store), "--lock-timeout", "5"],
        capture_output=True, text=True, env=_env("0"), timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
