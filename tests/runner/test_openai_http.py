"""The ``openai`` model kind against a real HTTP server on 127.0.0.1 (openai_server.py).

Checked: the OpenAI wire format (completions and chat), retries on injected
429s (``Retry-After``) and 500s, a timeout on a slow answer, the rate limit,
the API key taken from the environment and never stored, token counts and
latency in every run's metadata, and the response cache beside the store: a
run whose server is killed mid-way resumes against a restarted server,
sending only what was never answered, with nothing stored twice and the
same statistics as an uninterrupted run.
"""

from __future__ import annotations

import hashlib
import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from glotbench import api
from glotbench.runner.errors import ModelError
from glotbench.runner.executors import response_cache_path
from glotbench.runner.models import ModelSpec, build_model
from glotbench.runner.models.http_client import (
    JSONClient,
    ResponseCache,
    retry_after_seconds,
)
from glotbench.store import Store

from .conftest import store_digests
from .openai_server import FaultyServer, echo_backend, read_log

N_TEST = 12


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_suite(folder: Path, url: str, iterations: int = 2, **options: Any) -> Path:
    """Sentiment items whose text starts with their label (the echo model repeats it)."""
    rows = []
    for i in range(8 + N_TEST):
        label = "pos" if i % 2 else "neg"
        split = "train" if i < 8 else "test"
        rows.append({"id": f"r{i}", "text": f"{label} review {i}", "label": label, "split": split})
    (folder / "sent.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", "utf-8")
    model = {
        "name": "served",
        "kind": "openai",
        "options": {
            "base_url": url,
            "endpoint": "completions",
            "concurrency": 3,
            "max_retries": 3,
            "retry_base_seconds": 0.01,
            "timeout": 5,
            **options,
        },
    }
    suite = {
        "name": "http",
        "protocol": {"iterations": iterations, "seed": 5, "speed_iterations": 0},
        "datasets": [
            {
                "name": "sent",
                "task": "sentiment",
                "language": "en",
                "loader": "jsonl",
                "paths": ["sent.jsonl"],
                "splits": "predefined",
            }
        ],
        "models": [model],
    }
    path = folder / "suite.yaml"
    path.write_text(json.dumps(suite), encoding="utf-8")
    return path


def run_metadata(store: Path) -> list[dict[str, Any]]:
    with Store.open(store, read_only=True) as handle:
        runs = handle.runs.frame()
    seen, out = set(), []
    for rec in runs.to_dict(orient="records"):
        meta = rec["model_metadata"]
        meta = json.loads(meta) if isinstance(meta, str) else meta
        if rec["seed"] not in seen:  # one job, several metrics: the same metadata
            seen.add(rec["seed"])
            out.append({**meta, "seed": rec["seed"]})
    return out


@pytest.mark.slow
def test_faults_are_retried_and_counts_are_stored(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    faults = {"429": [0, 4], "500": [1, 6], "slow": [2], "slow_seconds": 1.0}
    server = FaultyServer(0, echo_backend, log, faults).start()
    try:
        suite = write_suite(tmp_path, server.url, timeout=0.4)
        summary = api.run_benchmark(suite, store=tmp_path / "s.duckdb", scores=False)
    finally:
        server.shutdown()
        server.server_close()
    assert not summary.failures and summary.completed == 2
    entries = read_log(log)
    ok = [e for e in entries if e["status"] == 200]
    keys = {e["key"] for e in ok}
    # 24 distinct requests (12 items x 2 seeds); the slow one was answered after the client
    # gave up, then asked again: 25 answers, plus the 4 injected errors
    assert len(keys) == 2 * N_TEST
    assert len(ok) == 2 * N_TEST + 1 and len(entries) == 2 * N_TEST + 5
    metas = run_metadata(tmp_path / "s.duckdb")
    assert sum(m["retries"] for m in metas) == 5
    assert all(m["requests_sent"] == N_TEST and m["cache_hits"] == 0 for m in metas)
    for meta in metas:
        bodies = [e["body"] for e in ok if e["body"]["seed"] is not None]
        # the seeds a job sent are its own; its prompts are the 12 test items
        mine = {json.dumps(b, sort_keys=True): b for b in bodies if _job_of(b, metas) == meta}
        assert len(mine) == N_TEST
        # the echo model's rule, applied to the requests the server saw: the unparsed answers
        wrong = sum(echo_backend(b["prompt"], b)[0].strip() == "wrong" for b in mine.values())
        assert meta["unparsed_rate"] == pytest.approx(wrong / N_TEST)
        # usage: the echo model counts prompt words and one completion token per answer
        assert meta["prompt_tokens"] == sum(len(b["prompt"].split()) for b in mine.values())
        assert meta["completion_tokens"] == N_TEST
        assert meta["requests"] == N_TEST and meta["latency_seconds"]["max"] >= 0
        assert meta["latency_seconds"]["median"] <= meta["latency_seconds"]["max"]
    # every answered request is in the cache beside the store, under its body's hash
    cache = ResponseCache(response_cache_path(tmp_path / "s.duckdb"))
    assert len(cache) == 2 * N_TEST


def _job_of(body: dict[str, Any], metas: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The run whose iteration seed drew ``body``'s seed (glotbench's item seeds)."""
    from glotbench.runner.models.hf_generative import item_seed

    for meta in metas:
        if item_seed(meta["sampling_seed"], body["prompt"], 0) == body["seed"]:
            return meta
    return None


def _start_echo(port: int, log: Path, faults: dict[str, Any]) -> subprocess.Popen:
    server = Path(__file__).with_name("openai_server.py")
    proc = subprocess.Popen(
        [sys.executable, str(server), str(port), str(log), json.dumps(faults)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


@pytest.mark.slow
def test_killed_server_resume_sends_only_what_was_not_answered(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    suite = write_suite(tmp_path, url, max_retries=2)
    store = tmp_path / "s.duckdb"
    first_log, second_log = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    proc = _start_echo(port, first_log, {"die_after": 7})
    try:
        summary = api.run_benchmark(suite, store=store, scores=False)
        assert proc.wait(timeout=10) == 1  # the server died mid-run
    finally:
        proc.kill()
    assert summary.failures and summary.completed == 0
    cache = ResponseCache(response_cache_path(store))
    cached_before = len(cache)
    assert 1 <= cached_before <= 7
    answered_first = {e["key"] for e in read_log(first_log) if e["status"] == 200}
    proc = _start_echo(port, second_log, {})
    try:
        summary = api.run_benchmark(suite, store=store, scores=False)
    finally:
        proc.kill()
        proc.wait(timeout=10)
    assert not summary.failures and summary.completed == 2
    second = [e["key"] for e in read_log(second_log)]
    assert len(second) == len(set(second)) == 2 * N_TEST - cached_before  # nothing re-sent
    assert not set(second) & {k for k in answered_first if _cached(cache, k)}
    assert len(cache) == 2 * N_TEST
    metas = run_metadata(store)
    assert sum(m["cache_hits"] for m in metas) == cached_before
    # nothing stored twice, and the statistics of an uninterrupted run (a third server)
    clean_log = tmp_path / "clean.jsonl"
    clean = FaultyServer(0, echo_backend, clean_log).start()
    try:
        (tmp_path / "clean").mkdir()
        suite2 = write_suite(tmp_path / "clean", clean.url, max_retries=2)
        api.run_benchmark(suite2, store=tmp_path / "clean.duckdb", scores=False)
    finally:
        clean.shutdown()
        clean.server_close()
    assert store_digests(store) == store_digests(tmp_path / "clean.duckdb")
    # a third run of the resumed store sends nothing at all
    api.run_benchmark(suite, store=store, scores=False, force=True)
    assert len(read_log(second_log)) == len(second)


def _cached(cache: ResponseCache, server_key: str) -> bool:
    """Whether a request the server logged (by the SHA-256 of its raw body) is in the cache."""
    import sqlite3

    with sqlite3.connect(cache.path) as db:
        bodies = [row[0] for row in db.execute("SELECT request FROM responses")]
    return any(
        hashlib.sha256(json.dumps(json.loads(b)).encode()).hexdigest() == server_key for b in bodies
    )


@pytest.mark.slow
def test_api_key_from_the_environment_is_sent_and_never_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GLOTBENCH_TEST_KEY", "sk-secret-123")
    log = tmp_path / "log.jsonl"
    server = FaultyServer(0, echo_backend, log, {"auth": "Bearer sk-secret-123"}).start()
    try:
        suite = write_suite(
            tmp_path, server.url, iterations=1, api_key_env="GLOTBENCH_TEST_KEY", endpoint="chat"
        )
        summary = api.run_benchmark(suite, store=tmp_path / "s.duckdb", scores=False)
        assert not summary.failures
        assert all(e["status"] == 200 for e in read_log(log))
        # a wrong key is refused at once, not retried, and the message says what to check
        monkeypatch.setenv("GLOTBENCH_TEST_KEY", "sk-wrong")
        model = build_model(
            {
                "name": "m",
                "kind": "openai",
                "options": {"base_url": server.url, "api_key_env": "GLOTBENCH_TEST_KEY"},
            }
        )
        before = len(read_log(log))
        with pytest.raises(ModelError, match="HTTP 401.*API key"):
            model.client.post("/chat/completions", {"model": "m", "messages": []})
        assert len(read_log(log)) == before + 1
    finally:
        server.shutdown()
        server.server_close()
    for path in (tmp_path / "s.duckdb", Path(response_cache_path(tmp_path / "s.duckdb"))):
        assert b"sk-secret-123" not in path.read_bytes()


@pytest.mark.slow
def test_rate_limit_spaces_requests(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    server = FaultyServer(0, echo_backend, log).start()
    try:
        client = JSONClient(server.url, requests_per_second=20)
        for _ in range(6):
            client.post("/completions", {"model": "m", "prompt": "Text: a", "temperature": 0})
    finally:
        server.shutdown()
        server.server_close()
    times = [e["t"] for e in read_log(log)]
    assert times[-1] - times[0] >= 5 / 20 - 0.01


def test_retry_after_and_transport_options() -> None:
    assert retry_after_seconds("2.5") == 2.5
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0
    assert retry_after_seconds("soon") is None and retry_after_seconds(None) is None
    a = ModelSpec(name="m", kind="openai", options={"base_url": "http://a/v1", "concurrency": 2})
    b = ModelSpec(name="m", kind="openai", options={"base_url": "http://b/v1", "timeout": 9})
    c = ModelSpec(name="m", kind="openai", options={"temperature": 0.5})
    assert a.config_hash() == b.config_hash() != c.config_hash()
    with pytest.raises(ModelError, match="endpoint"):
        build_model({"name": "m", "kind": "openai", "options": {"endpoint": "embeddings"}})
    with pytest.raises(ModelError, match="concurrency"):
        build_model({"name": "m", "kind": "openai", "options": {"concurrency": 0}})


def test_unreachable_server_fails_after_its_retries(tmp_path: Path) -> None:
    client = JSONClient(
        f"http://127.0.0.1:{free_port()}/v1", max_retries=2, retry_base_seconds=0.01
    )
    start = time.perf_counter()
    with pytest.raises(ModelError, match="failed 3 times"):
        client.post("/completions", {"model": "m", "prompt": "x"})
    assert client.retries == 2 and time.perf_counter() - start < 2
