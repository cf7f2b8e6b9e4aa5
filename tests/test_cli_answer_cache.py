"""``glotbench analyze …`` on a store: a repeated question answered from the store's cache.

References: the same command computed afresh (``--no-cache``): a cached answer
must equal it byte for byte, and after every kind of write the answer must
equal the fresh answer of the changed store. A cached answer is proved to be
one by making the analysis unavailable (it would raise) and, in a fresh
process, by the modules it loaded (no Typer, numpy or pandas).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from glotbench import api
from glotbench.store import Store
from glotbench.store.schema import RunRecord


def _scores(path: Path, rows: list[tuple[str, str, int, float]]) -> Path:
    path.write_text(
        "model,task,language,metric,seed,score\n"
        + "".join(f"{m},t,{lang},accuracy,{seed},{score}\n" for m, lang, seed, score in rows)
    )
    return path


ROWS = [
    (m, lang, seed, 0.5 + 0.1 * i + 0.01 * seed + (0.03 if lang == "en" else 0.0))
    for i, m in enumerate("ABC")
    for lang in ("de", "en")
    for seed in range(3)
]


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "s.duckdb"
    api.import_scores(_scores(tmp_path / "a.csv", ROWS), store=path)
    return path


def _ask(cli: Callable[..., object], store: Path, *extra: str) -> str:
    result = cli("analyze", "aggregate", "--store", store, "--draws", "40", "--json", *extra)
    assert result.exit_code == 0, result.stderr  # type: ignore[attr-defined]
    return str(result.stdout)  # type: ignore[attr-defined]


def _count_analyses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the analyses that run (one item a computed answer) from now on."""
    original = api.analyze_aggregate
    calls: list[int] = []

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(api, "analyze_aggregate", counted)
    return calls


def _unavailable(*args: object, **kwargs: object) -> None:
    raise AssertionError("the analysis ran: the answer did not come from the cache")


def test_a_cached_answer_equals_a_fresh_one_byte_for_byte(cli, store: Path, monkeypatch):
    fresh = _ask(cli, store, "--no-cache")
    assert not (store.parent / "s.duckdb.cache").exists()  # --no-cache keeps nothing
    first = _ask(cli, store)
    assert first == fresh
    assert list((store.parent / "s.duckdb.cache" / "answers").glob("*.answer"))
    monkeypatch.setattr(api, "analyze_aggregate", _unavailable)
    assert _ask(cli, store) == fresh  # from the cache: the analysis was not called
    json.loads(fresh)  # one JSON document


def test_every_write_invalidates_the_answer(cli, store: Path, tmp_path: Path):
    """Imported scores, another import file, a run, a replaced run, a deleted score row:
    after each, the answer is the fresh answer of the changed store (never the old one)."""
    answers = [_ask(cli, store)]

    def check() -> None:
        cached_or_new = _ask(cli, store)
        assert cached_or_new == _ask(cli, store, "--no-cache")
        assert cached_or_new not in answers
        answers.append(cached_or_new)

    api.import_scores(
        _scores(tmp_path / "b.csv", [("D", "de", 0, 0.9), ("D", "en", 0, 0.8)]), store=store
    )
    check()
    more = [("D", lang, seed, 0.7 + 0.01 * seed) for lang in ("de", "en") for seed in (1, 2)]
    api.import_scores(_scores(tmp_path / "c.csv", more), store=store)
    check()
    with Store.open(store) as handle, handle.transaction() as con:
        con.execute("DELETE FROM scores WHERE model = 'D' AND seed = 2")
    check()


def test_runs_written_and_replaced_invalidate_the_answer(cli, tmp_path: Path):
    path = tmp_path / "runs.duckdb"
    rng = np.random.default_rng(0)

    def write(model: str, language: str, seed: int, p: float, replace: bool = False) -> None:
        record = RunRecord(
            model=model, dataset="d-" + language, task="t", language=language, seed=seed,
            metric="accuracy", stat_names=("correct", "count"), source="test",
        )  # fmt: skip
        correct = (rng.random(30) < p).astype(float)
        stats = np.column_stack([correct, np.ones(30)])
        with Store.open(path) as handle:
            handle.runs.write(record, [f"e{i}" for i in range(30)], stats, replace=replace)

    for model, p in (("A", 0.6), ("B", 0.7)):
        for language in ("de", "en"):
            write(model, language, 0, p)
    first = _ask(cli, path)
    assert _ask(cli, path) == first
    write("C", "de", 0, 0.8)
    write("C", "en", 0, 0.8)
    second = _ask(cli, path)
    assert second != first and second == _ask(cli, path, "--no-cache")
    write("C", "en", 0, 0.2, replace=True)
    third = _ask(cli, path)
    assert third not in (first, second) and third == _ask(cli, path, "--no-cache")


def test_other_settings_other_answers_and_the_environment_switch(cli, store: Path, monkeypatch):
    assert _ask(cli, store) != _ask(cli, store, "--seed", "1")
    assert _ask(cli, store, "--seed", "1") == _ask(cli, store, "--seed", "1", "--no-cache")
    monkeypatch.setattr(api, "analyze_aggregate", _unavailable)
    monkeypatch.setenv("GLOTBENCH_NO_CACHE", "1")  # the same question, computed afresh
    with pytest.raises(AssertionError, match="did not come from the cache"):
        _ask(cli, store)


def test_files_other_than_the_store_and_failures_are_not_cached(cli, store: Path, tmp_path: Path):
    table = _scores(tmp_path / "in.csv", ROWS)
    result = cli("analyze", "aggregate", "--input", table, "--store", store, "--draws", "40")
    assert result.exit_code == 0, result.stderr
    assert not (store.parent / "s.duckdb.cache").exists()
    failed = cli("analyze", "aggregate", "--store", store, "--metric", "bleu", "--json")
    assert failed.exit_code != 0
    assert not (store.parent / "s.duckdb.cache").exists()


def test_a_damaged_cache_entry_is_recomputed(cli, store: Path):
    fresh = _ask(cli, store)
    for entry in (store.parent / "s.duckdb.cache" / "answers").glob("*.answer"):
        entry.write_bytes(entry.read_bytes()[:20])
    assert _ask(cli, store) == fresh


def test_a_new_process_answers_from_the_cache_without_typer_numpy_or_pandas(store: Path):
    """The fast path (glotbench.cli._replay): the second process prints the first one's
    bytes having loaded none of the command line's or the analyses' libraries."""
    code = (
        "import sys\nfrom glotbench.cli import main\n"
        "try:\n    main()\nfinally:\n"
        "    loaded = [m for m in ('typer', 'numpy', 'pandas') if m in sys.modules]\n"
        "    sys.stderr.write('LOADED=' + ','.join(loaded))\n"
    )
    command = [sys.executable, "-c", code, "analyze", "aggregate", "--store", str(store)]
    command += ["--draws", "40", "--json"]
    env = {k: v for k, v in os.environ.items() if k != "GLOTBENCH_NO_CACHE"}
    runs = [
        subprocess.run(command, capture_output=True, env=env, cwd=store.parent, timeout=300)
        for _ in range(2)
    ]
    assert all(run.returncode == 0 for run in runs), runs[0].stderr
    assert runs[0].stdout == runs[1].stdout
    assert runs[0].stderr.decode().endswith("LOADED=typer,numpy,pandas")
    assert runs[1].stderr.decode().endswith("LOADED=")


def test_an_upgraded_library_is_not_answered_from_the_cache(
    cli, store: Path, tmp_path, monkeypatch
):
    """The answer depends on numpy, scipy, pandas, rich…: installing or removing a package
    (which changes its ``site-packages`` folder) must recompute, also for the parsed question
    (a new shell, another working directory or environment: not the same invocation)."""
    packages = tmp_path / "site-packages"
    packages.mkdir()
    monkeypatch.syspath_prepend(str(packages))
    calls = _count_analyses(monkeypatch)
    first = _ask(cli, store)
    _ask(cli, store)
    assert len(calls) == 1  # the second answer came from the cache
    stamp = packages.stat().st_mtime_ns + 10**9
    os.utime(packages, ns=(stamp, stamp))  # a package was installed there
    monkeypatch.setenv("GLOTBENCH_TEST_NEW_SHELL", "1")  # not the same invocation
    assert _ask(cli, store) == first
    assert len(calls) == 2  # computed again with the new installation


def test_a_kept_answer_is_the_bytes_the_stream_printed(tmp_path: Path):
    """stdout that writes what its encoding lacks as escapes (``ascii:backslashreplace``):
    the kept answer holds those escapes, not another replacement, so the cached answer
    equals the computed one byte for byte."""
    store = tmp_path / "s.duckdb"
    rows = [(m, lang, seed, 0.5 + 0.1 * i + 0.01 * seed) for i, m in enumerate(["Modèle", "B"])
            for lang in ("de", "en") for seed in range(3)]  # fmt: skip
    api.import_scores(_scores(tmp_path / "a.csv", rows), store=store)
    command = [sys.executable, "-m", "glotbench", "analyze", "aggregate", "--store", str(store)]
    command += ["--draws", "40"]
    env = {k: v for k, v in os.environ.items() if k != "GLOTBENCH_NO_CACHE"}
    env["PYTHONIOENCODING"] = "ascii:backslashreplace"
    runs = [
        subprocess.run(command, capture_output=True, env=env, cwd=tmp_path, timeout=300)
        for _ in range(2)
    ]
    assert all(run.returncode == 0 for run in runs), runs[0].stderr
    assert b"Mod\\xe8le" in runs[0].stdout
    assert runs[1].stdout == runs[0].stdout


def test_the_question_holds_the_stdout_error_handler(monkeypatch):
    """Escapes kept for ``ascii:backslashreplace`` are not the answer of a strict ascii
    stdout (there the command fails): the handler is part of the key."""
    import io

    from glotbench.cli._answer_cache import _question

    questions = []
    for errors in ("strict", "backslashreplace"):
        stream = io.TextIOWrapper(io.BytesIO(), encoding="ascii", errors=errors)
        monkeypatch.setattr(sys, "stdout", stream)
        questions.append(_question("analyze aggregate", {"draws": 40}))
    assert questions[0] != questions[1]


@pytest.mark.parametrize("variable", ["OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"])
def test_blas_thread_counts_are_part_of_the_question(cli, store: Path, monkeypatch, variable):
    """A BLAS library's thread count can change a sum's last bits (another order of
    additions): an answer computed with one count is not the answer of another."""
    from glotbench.cli._answer_cache import _question

    monkeypatch.setenv(variable, "1")
    one = _question("analyze aggregate", {"draws": 40})
    monkeypatch.setenv(variable, "2")
    assert _question("analyze aggregate", {"draws": 40}) != one
    monkeypatch.delenv(variable)
    assert _question("analyze aggregate", {"draws": 40}) != one

    calls = _count_analyses(monkeypatch)
    monkeypatch.setenv(variable, "1")
    _ask(cli, store)
    _ask(cli, store)
    assert len(calls) == 1  # the same count: from the cache
    monkeypatch.setenv(variable, "2")
    _ask(cli, store)
    assert len(calls) == 2  # another count: computed again


def test_a_cached_answer_prints_what_the_command_printed_on_stderr(cli, store: Path, monkeypatch):
    """Text the analysis wrote on stderr (a caveat, a warning) is part of its answer: the
    cached answer writes it to stderr again, and stdout stays the same bytes."""
    original = api.analyze_aggregate

    def noted(*args: object, **kwargs: object) -> object:
        sys.stderr.write("note: few seeds per model\n")
        return original(*args, **kwargs)

    monkeypatch.setattr(api, "analyze_aggregate", noted)
    args = ("analyze", "aggregate", "--store", store, "--draws", "40", "--json")
    first = cli(*args)
    assert first.exit_code == 0 and first.stderr == "note: few seeds per model\n"
    monkeypatch.setattr(api, "analyze_aggregate", _unavailable)
    second = cli(*args)  # from the cache
    assert (second.stdout, second.stderr) == (first.stdout, first.stderr)


def test_a_warning_of_the_first_run_is_replayed_by_the_next_process(store: Path):
    """A Python warning the computing process printed is printed again by a process that
    answers from the cache (the fast path, before Typer loads), byte for byte."""
    code = (
        "import sys, warnings\nimport glotbench.api as api\n"
        "original = api.analyze_aggregate\n"
        "def warned(*args, **kwargs):\n"
        "    warnings.warn('only 3 seeds per model', UserWarning)\n"
        "    return original(*args, **kwargs)\n"
        "api.analyze_aggregate = warned\n"
        "from glotbench.cli import main\nmain()\n"
    )
    command = [sys.executable, "-c", code, "analyze", "aggregate", "--store", str(store)]
    command += ["--draws", "40", "--json"]
    env = {k: v for k, v in os.environ.items() if k not in ("GLOTBENCH_NO_CACHE", "PYTHONWARNINGS")}
    runs = [
        subprocess.run(command, capture_output=True, env=env, cwd=store.parent, timeout=300)
        for _ in range(2)
    ]
    assert all(run.returncode == 0 for run in runs), runs[0].stderr
    assert b"UserWarning: only 3 seeds per model" in runs[0].stderr
    assert (runs[1].stdout, runs[1].stderr) == (runs[0].stdout, runs[0].stderr)


def test_a_notice_about_the_moment_is_printed_but_not_kept(capsys):
    """A notice (waiting for another process's lock) goes to stderr as always, but is not
    part of the answer kept: a later cached answer does not wait for anyone."""
    from glotbench.cli._answer_cache import _run_recorded
    from glotbench.errors import print_notice

    def command() -> None:
        print_notice("glotbench: waiting for process 12 to finish writing ...")
        sys.stderr.write("caveat\n")
        sys.stdout.write("answer\n")

    assert _run_recorded(command) == (b"answer\n", b"caveat\n")
    captured = capsys.readouterr()
    assert captured.err == "glotbench: waiting for process 12 to finish writing ...\ncaveat\n"
    assert captured.out == "answer\n"


def test_a_write_reverted_during_the_analysis_keeps_no_answer(cli, store: Path, monkeypatch):
    """Another process adds a row while the analysis reads the store and removes it again
    before the analysis ends: the rows before and after are the same, but the analysis may
    have read the row. Its answer must not be kept for the store's content."""
    original = api.analyze_aggregate
    calls: list[int] = []

    def raced(*args: object, **kwargs: object) -> object:
        calls.append(1)
        if len(calls) == 1:  # a write, and its reversal, while this analysis runs
            with Store.open(store) as handle, handle.transaction() as con:
                con.execute(
                    "INSERT INTO scores SELECT * REPLACE ('Z' AS model) FROM scores LIMIT 1"
                )
            with Store.open(store) as handle, handle.transaction() as con:
                con.execute("DELETE FROM scores WHERE model = 'Z'")
        return original(*args, **kwargs)

    monkeypatch.setattr(api, "analyze_aggregate", raced)
    first = _ask(cli, store)
    second = _ask(cli, store)
    assert len(calls) == 2  # the first answer was not kept: computed again
    assert second == first  # (the rows are the same again, so is the answer)
    _ask(cli, store)
    assert len(calls) == 2  # a store left alone: the second answer was kept
