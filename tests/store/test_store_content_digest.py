"""The store's content digest (the analysis cache's key): every kind of write changes it.

Reference: the store's own rows. Each test makes one write of one kind — a
run, a replaced run, imported scores (and their ``imports`` row), a meta key,
a failure and its resolution, attributes, kept outputs, a deleted row — and
checks that the digest differs from the one before, while reading, reopening
and the file-level digest (:func:`store_file_fingerprint`, DuckDB only) agree.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from glotbench.ingest.tidy import import_scores_file
from glotbench.store import Store
from glotbench.store.analysis_cache import (
    AnalysisCache,
    content_digest,
    store_file_fingerprint,
    store_fingerprint,
)
from glotbench.store.schema import RunRecord


def _record(model: str, seed: int) -> RunRecord:
    return RunRecord(
        model=model,
        dataset="d",
        task="t",
        language="en",
        seed=seed,
        metric="accuracy",
        stat_names=("value", "count"),
        source="test",
    )


def _stats(correct: list[int]) -> np.ndarray:
    return np.column_stack([correct, np.ones(len(correct))]).astype(np.float64)


def _scores_file(tmp_path: Path, name: str, rows: list[tuple[str, str, int, float]]) -> Path:
    path = tmp_path / name
    path.write_text(
        "model,task,language,metric,seed,score\n"
        + "".join(f"{m},t,{lang},accuracy,{seed},{score}\n" for m, lang, seed, score in rows)
    )
    return path


@pytest.fixture
def store(tmp_path: Path):
    with Store.open(tmp_path / "s.duckdb") as handle:
        handle.runs.write(_record("a", 1), ["e0", "e1", "e2"], _stats([1, 0, 1]))
        yield handle


def test_reading_keeps_the_digest_and_the_file_digest_agrees(store: Store):
    first = store_fingerprint(store)
    store.runs.frame()
    store.summary()
    assert store_fingerprint(store) == first
    path = store.path
    store.close()
    assert store_file_fingerprint(path) == first  # read-only, DuckDB alone
    with Store.open(path, read_only=True) as again:
        assert store_fingerprint(again) == first


def test_a_new_run_and_a_replaced_run_change_it(store: Store):
    before = store_fingerprint(store)
    store.runs.write(_record("a", 2), ["e0", "e1", "e2"], _stats([1, 1, 1]))
    added = store_fingerprint(store)
    assert added != before
    store.runs.write(_record("a", 2), ["e0", "e1", "e2"], _stats([0, 0, 0]), replace=True)
    assert store_fingerprint(store) not in (before, added)


def test_imported_scores_change_it_in_a_store_without_runs(tmp_path: Path):
    """The key of the previous cache digested the runs only: imported scores left it unchanged."""
    with Store.open(tmp_path / "scores.duckdb") as store:
        empty = store_fingerprint(store)
        import_scores_file(store, _scores_file(tmp_path, "a.csv", [("m", "de", 0, 0.5)]))
        one = store_fingerprint(store)
        import_scores_file(store, _scores_file(tmp_path, "b.csv", [("m", "de", 1, 0.6)]))
        two = store_fingerprint(store)
        assert len({empty, one, two}) == 3
        assert store.connection.execute("SELECT count(*) FROM imports").fetchone() == (2,)


def test_meta_failures_attributes_and_outputs_change_it(store: Store):
    seen = [store_fingerprint(store)]
    store.set_meta("suite:x", '{"title": "X"}')
    seen.append(store_fingerprint(store))
    store.failures.record(
        model="b",
        dataset="d",
        task="t",
        language="en",
        seed=1,
        config_hash="c",
        error_type="RuntimeError",
        message="boom",
    )
    seen.append(store_fingerprint(store))
    assert store.failures.resolve(models=["b"]) == 1
    seen.append(store_fingerprint(store))
    store.attributes.write("d", [{"example_id": "e0", "attribute": "length", "value": 3}])
    seen.append(store_fingerprint(store))
    key = {"model": "a", "dataset": "d", "task": "t", "language": "en", "seed": 1}
    store.outputs.write({**key, "config_hash": "c"}, {"ids": ["e0"], "prediction": ["x"]})
    seen.append(store_fingerprint(store))
    assert len(set(seen)) == len(seen)


def test_a_deleted_or_changed_score_row_changes_it(tmp_path: Path):
    with Store.open(tmp_path / "scores.duckdb") as store:
        rows = [("m", "de", 0, 0.5), ("m", "de", 1, 0.5), ("n", "en", 0, 0.25)]
        import_scores_file(store, _scores_file(tmp_path, "a.csv", rows))
        full = store_fingerprint(store)
        with store.transaction() as con:  # a row with the same values as another one
            con.execute("DELETE FROM scores WHERE model = 'm' AND seed = 1")
        deleted = store_fingerprint(store)
        with store.transaction() as con:
            con.execute("UPDATE scores SET score = 0.75 WHERE model = 'n'")
        changed = store_fingerprint(store)
        assert len({full, deleted, changed}) == 3


def test_the_digest_is_independent_of_row_order(tmp_path: Path):
    """Two stores with the same rows inserted in another order have one digest."""
    import duckdb

    digests = []
    for name, order in (("x.duckdb", "ASC"), ("y.duckdb", "DESC")):
        con = duckdb.connect(str(tmp_path / name))
        con.execute("CREATE TABLE scores (model VARCHAR, score DOUBLE)")
        con.execute(
            f"INSERT INTO scores SELECT 'm' || i, i / 7 FROM range(100) t(i) ORDER BY i {order}"
        )
        digests.append(content_digest(con))
        con.close()
    assert digests[0] == digests[1]


def test_no_store_or_not_a_store_has_no_file_digest(tmp_path: Path):
    assert store_file_fingerprint(tmp_path / "missing.duckdb") is None
    (tmp_path / "text.duckdb").write_text("not a database")
    assert store_file_fingerprint(tmp_path / "text.duckdb") is None


def test_answers_of_an_older_content_are_dropped(tmp_path: Path):
    cache = AnalysisCache.beside(tmp_path / "s.duckdb")
    cache.put_answer("a" * 64, "k1", b"old\n")
    assert cache.get_answer("a" * 64, "k1") == b"old\n"
    cache.put_answer("b" * 64, "k1", b"new\n")
    assert cache.get_answer("a" * 64, "k1") is None
    assert cache.get_answer("b" * 64, "k1") == b"new\n"
    assert len(list((cache.folder / "answers").glob("*.answer"))) == 1


def test_the_digest_module_loads_no_numpy_or_pandas():
    code = (
        "import sys\nimport glotbench.store.analysis_cache\n"
        "print(','.join(m for m in ('numpy', 'pandas') if m in sys.modules))"
    )
    child = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, timeout=120
    )
    assert child.stdout.strip() == ""


def test_every_commit_counts_in_the_write_generation(store: Store):
    """The rows after an insert and the matching delete are the rows before (the same
    content digest), but a reader between the two saw another store: every committed
    write transaction adds one to the write generation, a rollback none."""
    from glotbench.store.analysis_cache import store_file_state, write_generation

    before = store_fingerprint(store), write_generation(store.connection)
    with store.transaction() as con:
        con.execute("INSERT INTO meta VALUES ('note', 'x')")
    with store.transaction() as con:
        con.execute("DELETE FROM meta WHERE key = 'note'")
    assert store_fingerprint(store) == before[0]  # the same rows: the same content
    assert write_generation(store.connection) == before[1] + 2
    with pytest.raises(RuntimeError):
        with store.transaction() as con:
            con.execute("INSERT INTO meta VALUES ('note', 'y')")
            raise RuntimeError("rolled back")
    assert write_generation(store.connection) == before[1] + 2
    path = store.path
    store.close()
    assert store_file_state(path) == (before[0], before[1] + 2)


def _digest_of(tmp_path: Path, name: str, columns: str, rows: list[tuple]) -> str:
    import duckdb

    con = duckdb.connect(str(tmp_path / name))
    con.execute(f"CREATE TABLE t ({columns})")
    con.executemany(f"INSERT INTO t VALUES ({', '.join('?' * len(rows[0]))})", rows)
    digest = content_digest(con)
    con.close()
    return digest


@pytest.mark.parametrize("kind", ["DOUBLE", "FLOAT"])
def test_a_negative_zero_is_not_a_zero(tmp_path: Path, kind: str):
    """-0.0 == 0.0 as numbers, and DuckDB's ``hash`` gives both one value, but they are
    other bits (1/x is -inf or inf): a score changed from one to the other changes the
    digest, and so does a sign moved from one row to another."""
    columns = f"model VARCHAR, score {kind}"
    digests = [
        _digest_of(tmp_path, f"{i}.duckdb", columns, rows)
        for i, rows in enumerate(
            [
                [("a", 0.0), ("b", 0.0)],
                [("a", -0.0), ("b", 0.0)],
                [("a", 0.0), ("b", -0.0)],
                [("a", -0.0), ("b", -0.0)],
            ]
        )
    ]
    assert len(set(digests)) == 4
    assert _digest_of(tmp_path, "again.duckdb", columns, [("a", -0.0), ("b", 0.0)]) == digests[1]


def test_lists_of_zeros_differ_by_sign_and_length(tmp_path: Path):
    """DuckDB hashes [0.0], [0.0, 0.0] and [-0.0] alike: the digest tells them apart."""
    lists = [[0.0], [-0.0], [0.0, 0.0], [0.0, -0.0], [-0.0, 0.0], [], None]
    digests = [
        _digest_of(tmp_path, f"{i}.duckdb", "k VARCHAR, stats DOUBLE[]", [("u", value)])
        for i, value in enumerate(lists)
    ]
    assert len(set(digests)) == len(lists)


def test_a_score_set_to_negative_zero_changes_a_store_digest(tmp_path: Path):
    with Store.open(tmp_path / "scores.duckdb") as store:
        import_scores_file(store, _scores_file(tmp_path, "a.csv", [("m", "de", 0, 0.0)]))
        before = store_fingerprint(store)
        with store.transaction() as con:  # (an UPDATE to an equal number keeps the old bits)
            con.execute("CREATE TEMP TABLE old AS SELECT * FROM scores")
            con.execute("DELETE FROM scores")
            con.execute(
                "INSERT INTO scores SELECT * REPLACE (CAST(? AS DOUBLE) AS score) FROM old", [-0.0]
            )
            con.execute("DROP TABLE old")
        assert store.connection.execute("SELECT signbit(score) FROM scores").fetchall() == [(True,)]
        assert store_fingerprint(store) != before
