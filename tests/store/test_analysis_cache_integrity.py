"""Kept answers of the command line (``<store>.cache/answers``): never trusted blindly.

References: the bytes that were kept. A kept answer whose bytes changed on disk
(corruption, tampering), a file that is not an answer (a pickle someone planted),
a file of another user, a folder shared with other files, a write that fails
halfway: in each case the cache must answer None (the command recomputes) or
leave the foreign files alone, never return other bytes, run code or crash.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

from glotbench.store import analysis_cache
from glotbench.store.analysis_cache import AnalysisCache

CONTENT = "ab" * 32
KEY = "cd" * 32


def _answer_file(cache: AnalysisCache) -> Path:
    (path,) = [p for p in (cache.folder / "answers").iterdir() if not p.name.endswith(".tmp")]
    return path


def test_a_changed_byte_in_a_kept_answer_is_not_served(tmp_path: Path):
    cache = AnalysisCache(tmp_path / "s.duckdb.cache")
    answer = b'{"score": 0.512345}\n' * 50
    cache.put_answer(CONTENT, KEY, answer)
    assert cache.get_answer(CONTENT, KEY) == answer
    path = _answer_file(cache)
    data = bytearray(path.read_bytes())
    position = data.rindex(b"0.512345") + 2  # a digit of the last number
    data[position] = ord("9")
    path.write_bytes(bytes(data))
    assert cache.get_answer(CONTENT, KEY) is None  # recomputed, not "0.592345"


def test_a_planted_pickle_is_never_unpickled(tmp_path: Path):
    """An answer is bytes: its file is read as bytes, so a pickle in its place cannot run."""
    cache = AnalysisCache(tmp_path / "s.duckdb.cache")
    cache.put_answer(CONTENT, KEY, b"real answer\n")
    path = _answer_file(cache)
    marker = tmp_path / "code-ran"

    class Payload:
        def __reduce__(self):  # what pickle.loads would call
            return (Path.touch, (marker,))

    key = f"{CONTENT[:16]}-{KEY}"
    path.write_bytes(analysis_cache._MAGIC + pickle.dumps((key, Payload())))
    assert cache.get_answer(CONTENT, KEY) is None
    assert not marker.exists()


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="file owners are POSIX")
def test_a_pickle_of_another_user_is_not_loaded(tmp_path: Path, monkeypatch):
    cache = AnalysisCache(tmp_path / "c")
    cache.put("k", {"x": 1})
    assert cache.get("k") == {"x": 1}
    monkeypatch.setattr(analysis_cache.os, "getuid", lambda: os.stat(tmp_path).st_uid + 1)
    assert cache.get("k") is None  # written by "someone else": not unpickled


def test_pruning_leaves_files_that_are_not_answers(tmp_path: Path):
    """A cache folder linked to a folder of other pickles: only answers are dropped."""
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "model.pkl").write_bytes(b"someone's data")
    (shared / "notes.txt").write_text("keep me")
    cache = AnalysisCache(tmp_path / "s.duckdb.cache")
    cache.folder.mkdir()
    (cache.folder / "answers").symlink_to(shared, target_is_directory=True)
    cache.put_answer("00" * 32, KEY, b"old content's answer")
    cache.put_answer(CONTENT, KEY, b"new content's answer")
    assert (shared / "model.pkl").read_bytes() == b"someone's data"
    assert (shared / "notes.txt").exists()
    assert cache.get_answer("00" * 32, KEY) is None  # the older content's answer: dropped
    assert cache.get_answer(CONTENT, KEY) == b"new content's answer"


def test_answers_of_one_content_are_bounded(tmp_path: Path, monkeypatch):
    """Each environment or terminal size keeps its own answer: their number is capped."""
    monkeypatch.setattr(analysis_cache, "MAX_ANSWERS", 5)
    cache = AnalysisCache(tmp_path / "c")
    for i in range(12):
        cache.put_answer(CONTENT, f"{i:064x}", b"answer %d" % i)
    kept = list((cache.folder / "answers").iterdir())
    assert len(kept) == 5
    assert cache.get_answer(CONTENT, f"{11:064x}") == b"answer 11"  # the newest stays


def test_a_failed_write_leaves_no_temporary_file(tmp_path: Path, monkeypatch):
    cache = AnalysisCache(tmp_path / "c")

    def fail(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(analysis_cache.os, "replace", fail)
    cache.put("k", [1, 2, 3])
    cache.put_answer(CONTENT, KEY, b"answer")
    assert cache.get("k") is None
    assert cache.get_answer(CONTENT, KEY) is None
    assert not [p for p in cache.folder.rglob("*") if p.is_file()]  # no .tmp left behind


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_an_answer_that_is_a_pipe_or_a_link_is_not_read(tmp_path: Path):
    """A kept answer replaced by a named pipe (reading would wait forever) or by a link
    elsewhere (to /dev/zero: reading would never end) is ignored at once."""
    import threading

    cache = AnalysisCache(tmp_path / "s.duckdb.cache")
    cache.put_answer(CONTENT, KEY, b"real answer\n")
    path = _answer_file(cache)
    results: list[object] = []
    for make in (lambda: os.mkfifo(path), lambda: path.symlink_to(tmp_path / "elsewhere")):
        path.unlink()
        make()
        (tmp_path / "elsewhere").write_bytes(path.name.encode())
        reader = threading.Thread(
            target=lambda: results.append(cache.get_answer(CONTENT, KEY)), daemon=True
        )
        reader.start()
        reader.join(5)
        assert not reader.is_alive(), "reading the kept answer did not return"
    assert results == [None, None]
