"""Pages, reports and exports are written to a temporary file and renamed (issue 24, item 2).

A symlink planted at a page's name is replaced, never written through; a build
killed with SIGKILL in the middle of writing leaves the previous page intact.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from glotbench.cli import app
from glotbench.store import Store
from glotbench.store.atomic_files import atomic_path, write_text_atomic

from .conftest import write_store

VICTIM_TEXT = "precious data outside --out\n"


def _store(tmp_path: Path) -> Path:
    return write_store(
        tmp_path / "s.duckdb", {"a": 0.8, "b": 0.6}, languages=("da", "sv"), tasks=("x",), n=30
    )


def _victim(tmp_path: Path, name: str) -> Path:
    victim = tmp_path / "outside" / name
    victim.parent.mkdir(exist_ok=True)
    victim.write_text(VICTIM_TEXT)
    return victim


@pytest.mark.slow
@pytest.mark.parametrize("page", ["index.html", "leaderboard.json"])
def test_leaderboard_replaces_a_planted_symlink_instead_of_following_it(
    tmp_path: Path, page: str
) -> None:
    store = _store(tmp_path)
    site = tmp_path / "site"
    site.mkdir()
    victim = _victim(tmp_path, "victim-" + page)
    (site / page).symlink_to(os.path.relpath(victim, site))
    result = CliRunner().invoke(
        app, ["leaderboard", "--store", str(store), "--out", str(site), "--draws", "50"]
    )
    assert result.exit_code == 0, result.output
    assert victim.read_text() == VICTIM_TEXT  # not written through
    assert not (site / page).is_symlink() and (site / page).stat().st_size > 100
    # the page is readable by others as an ordinary file would be (not mkstemp's 0600)
    assert (site / page).stat().st_mode & 0o777 == 0o666 & ~_umask()
    assert not [p for p in site.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.slow
def test_report_replaces_a_planted_symlink_instead_of_following_it(tmp_path: Path) -> None:
    store = _store(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    victim = _victim(tmp_path, "victim.html")
    (out / "report.html").symlink_to(victim)
    args = ["report", "--store", str(store), "--out", str(out / "report.html"), "--draws", "50"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert victim.read_text() == VICTIM_TEXT
    assert not (out / "report.html").is_symlink()
    assert "<html" in (out / "report.html").read_text().lower()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["runs.csv", "runs.parquet"])
def test_export_replaces_a_planted_symlink(tmp_path: Path, name: str) -> None:
    store = _store(tmp_path)
    victim = _victim(tmp_path, "victim-" + name)
    target = tmp_path / name
    target.symlink_to(victim)
    with Store.open(store, read_only=True) as handle:
        written = handle.exports.write(target, "runs")
    assert written == [target]
    assert victim.read_text() == VICTIM_TEXT
    assert not target.is_symlink() and target.stat().st_size > 0


def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "page.html"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half a pa")
        raise RuntimeError("killed")
    assert target.read_text() == "old"
    assert list(tmp_path.iterdir()) == [target]
    write_text_atomic(target, "new")
    assert target.read_text() == "new" and list(tmp_path.iterdir()) == [target]


def test_temporary_files_of_killed_writers_are_removed_once_stale(tmp_path: Path) -> None:
    target = tmp_path / "index.html"
    stale = tmp_path / ".index.html.killed1.tmp"
    fresh = tmp_path / ".index.html.live22.tmp"  # another writer, still at work
    other = tmp_path / ".report.html.killed3.tmp"  # another target's: not this write's business
    for f in (stale, fresh, other):
        f.write_text("half")
    hours_ago = time.time() - 7200
    os.utime(stale, (hours_ago, hours_ago))
    os.utime(other, (hours_ago, hours_ago))
    write_text_atomic(target, "page")
    assert not stale.exists() and fresh.exists() and other.exists()
    assert target.read_text() == "page"


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# the child writes half of each page, says so, and hangs until it is killed
_SLOW_CHILD = textwrap.dedent(
    """
    import pathlib, sys, time
    real = pathlib.Path.write_text

    def slow_write_text(self, text, *args, **kwargs):
        with open(self, "w", encoding="utf-8") as fh:
            fh.write(text[: len(text) // 2])
            fh.flush()
        print("WRITING", self.name, flush=True)
        time.sleep(120)

    pathlib.Path.write_text = slow_write_text
    from glotbench.cli import main
    sys.argv = ["glotbench", "leaderboard", "--store", sys.argv[1], "--out", sys.argv[2],
                "--draws", "50"]
    main()
    """
)


@pytest.mark.slow
def test_a_leaderboard_build_killed_mid_write_leaves_the_previous_pages(tmp_path: Path) -> None:
    store = _store(tmp_path)
    site = tmp_path / "site"
    first = CliRunner().invoke(
        app, ["leaderboard", "--store", str(store), "--out", str(site), "--draws", "50"]
    )
    assert first.exit_code == 0, first.output
    before = {p.name: p.read_bytes() for p in site.iterdir()}
    assert set(before) == {"index.html", "leaderboard.json"}
    child = subprocess.Popen(
        [sys.executable, "-c", _SLOW_CHILD, str(store), str(site)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert child.stdout is not None
        line = child.stdout.readline()  # blocks until the child is inside a write
        assert line.startswith("WRITING"), child.stderr.read() if child.stderr else line
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == -signal.SIGKILL
    after = {p.name: p.read_bytes() for p in site.iterdir() if not p.name.startswith(".")}
    assert after == before  # both pages exactly as the previous build left them
    # the killed build's half-written temporary file is hidden, and the next build succeeds
    time.sleep(0.01)
    again = CliRunner().invoke(
        app, ["leaderboard", "--store", str(store), "--out", str(site), "--draws", "50"]
    )
    assert again.exit_code == 0, again.output
    assert (site / "index.html").read_bytes()[-8:] == before["index.html"][-8:]
