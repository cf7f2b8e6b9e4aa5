"""A store removed and created anew by another process while this one has it open.

An import that created a store and failed removes it again; another process then
creates a new store at the same path (a temporary file renamed over it). A process that
still had the old file open must not write into it (it is unlinked: the write would be
lost). Reference: what a fresh reader of the path finds after the write.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from glotbench.errors import StoreError
from glotbench.store import Store
from glotbench.store import store as store_module

SRC = Path(__file__).resolve().parents[2] / "src"


def _replace_in_process(path: Path) -> None:
    """What the other processes do: remove the store (and its log), create a new one."""
    for file in (path, path.with_name(path.name + ".wal")):
        if file.exists():
            file.unlink()
    store_module._create(path)


def _replace_by_another_process(path: Path) -> None:
    code = (
        "import os, sys\nfrom glotbench.store import Store\n"
        "path = sys.argv[1]\nfor file in (path, path + '.wal'):\n"
        "    if os.path.exists(file):\n        os.unlink(file)\n"
        "Store.open(path).close()\n"
    )
    subprocess.run(
        [sys.executable, "-c", code, str(path)],
        check=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        timeout=120,
    )


def _meta(path: Path) -> dict[str, str]:
    with Store.open(path, read_only=True) as store:
        return store.meta()


@pytest.mark.parametrize("replace", [_replace_in_process, _replace_by_another_process])
def test_a_write_after_the_file_was_replaced_goes_to_the_new_store(tmp_path: Path, replace):
    path = tmp_path / "s.duckdb"
    store = Store.open(path)  # keeps its connection open (hold=True)
    store.set_meta("note", "old file")
    replace(path)
    store.set_meta("note", "new file")  # reopened on the file the path names now
    store.close()
    assert _meta(path)["note"] == "new file"


def test_a_transaction_inside_held_refuses_to_commit_to_a_replaced_file(tmp_path: Path):
    """Inside ``held()`` the reads so far came from the old file: the write cannot move to
    the new one, so it is refused with a StoreError and nothing is written anywhere."""
    path = tmp_path / "s.duckdb"
    with Store.open(path) as store:
        with store.held():
            store.set_meta("note", "old file")
            _replace_in_process(path)
            with pytest.raises(StoreError, match="removed or replaced by another process"):
                store.set_meta("note", "lost")
    assert "note" not in _meta(path)
