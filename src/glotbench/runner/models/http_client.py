"""A small JSON-over-HTTP client for model servers, standard library only.

What a benchmark against a hosted or self-served model needs, and no more:

* **retries** of transient failures — HTTP 429 and 5xx, refused or dropped
  connections, timeouts — with exponential backoff: attempt ``a`` (0-based)
  waits ``min(max_wait, base · 2^a)``, "equal jitter" (half of it fixed, half
  drawn uniformly; AWS Architecture Blog, *Exponential Backoff and Jitter*,
  2015). A ``Retry-After`` header (seconds or an HTTP date, RFC 9110 §10.2.3)
  is honoured instead when the server sends one, capped at ``max_wait``.
  Other client errors (400, 401, 404, ...) are not retried: they are the
  request's fault and are raised at once with the server's message;
* **timeouts** per request (connect and read);
* a **rate limit**: request starts are spaced at least ``1 / rate`` seconds
  apart across all threads of the client;
* the **API key** is read from an environment variable when the client is
  built and only ever sent in the ``Authorization`` header; it is never
  stored, logged or part of a cache key.

A :class:`ResponseCache` (SQLite, beside the store) keeps every successful
response under the SHA-256 of its endpoint and request body, so a resumed run
sends only what was never answered.
"""

from __future__ import annotations

import email.utils
import hashlib
import http.client
import json
import random
import sqlite3
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from glotbench.runner.errors import ModelError

#: statuses worth retrying: too many requests, and the server's own failures
RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


class TransientError(Exception):
    """A failure that a later attempt may not meet (connection, timeout, 429, 5xx)."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass
class Reply:
    """A decoded JSON reply, its latency (seconds, the successful attempt) and attempts made."""

    body: dict[str, Any]
    latency: float
    attempts: int


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks to wait: a number of seconds or an HTTP date."""
    if not value:
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def backoff_seconds(attempt: int, base: float, cap: float, rng: random.Random) -> float:
    """Equal-jitter exponential backoff: ``d/2 + U(0, d/2)`` with ``d = min(cap, base·2^a)``."""
    delay = min(cap, base * (2**attempt))
    return delay / 2 + rng.uniform(0, delay / 2)


class RateLimiter:
    """Spaces request starts at least ``1 / rate`` seconds apart (thread-safe)."""

    def __init__(self, rate: float | None) -> None:
        self.interval = 1.0 / rate if rate else 0.0
        self._next = 0.0
        self._lock = threading.Lock()

    def wait(self) -> None:
        if not self.interval:
            return
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
        if start > now:
            time.sleep(start - now)


class JSONClient:
    """POSTs JSON to ``base_url + path`` with retries, backoff, a timeout and a rate limit."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 6,
        retry_base_seconds: float = 1.0,
        max_retry_seconds: float = 60.0,
        requests_per_second: float | None = None,
        headers: dict[str, str] | None = None,
        name: str = "model",
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.max_retries = max_retries
        self.retry_base = retry_base_seconds
        self.retry_cap = max_retry_seconds
        self.limiter = RateLimiter(requests_per_second)
        self.name = name
        self._headers = {"Content-Type": "application/json", **(headers or {})}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._rng = random.Random()
        self.retries = 0  # transient failures retried, over the client's life
        self._lock = threading.Lock()

    def post(self, path: str, body: dict[str, Any]) -> Reply:
        """The JSON reply to ``body``; transient failures retried, others a :class:`ModelError`."""
        data = json.dumps(body).encode("utf-8")
        url = self.base_url + path
        last: TransientError | None = None
        for attempt in range(self.max_retries + 1):
            if attempt:
                with self._lock:
                    self.retries += 1
                    wait = backoff_seconds(attempt - 1, self.retry_base, self.retry_cap, self._rng)
                if last is not None and last.retry_after is not None:
                    wait = min(self.retry_cap, last.retry_after)
                time.sleep(wait)
            self.limiter.wait()
            start = time.perf_counter()
            try:
                reply = self._send(url, data)
            except TransientError as exc:
                last = exc
                continue
            return Reply(reply, time.perf_counter() - start, attempt + 1)
        raise ModelError(
            f"model {self.name!r}: {url} failed {self.max_retries + 1} times; last: {last}"
        )

    def _send(self, url: str, data: bytes) -> dict[str, Any]:
        request = urllib.request.Request(url, data=data, headers=self._headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            detail = _error_text(exc)
            if exc.code in RETRY_STATUSES:
                raise TransientError(
                    f"HTTP {exc.code}: {detail}",
                    retry_after_seconds(exc.headers.get("Retry-After")),
                ) from None
            raise ModelError(
                f"model {self.name!r}: {url} answered HTTP {exc.code}: {detail}"
                + (" (is the API key's environment variable set?)" if exc.code == 401 else "")
            ) from None
        except urllib.error.URLError as exc:
            raise TransientError(f"cannot reach {url}: {exc.reason}") from None
        except TimeoutError:
            raise TransientError(f"no answer from {url} within {self.timeout} s") from None
        except (http.client.HTTPException, ConnectionError, OSError) as exc:
            raise TransientError(f"connection to {url} broke: {exc!r}") from None
        try:
            out = json.loads(raw)
        except ValueError:
            raise TransientError(f"{url} answered with something that is not JSON") from None
        if not isinstance(out, dict):
            raise ModelError(f"model {self.name!r}: {url} answered JSON that is not an object")
        return out


def _error_text(exc: urllib.error.HTTPError) -> str:
    try:
        text = exc.read().decode("utf-8", "replace")
    except Exception:  # noqa: BLE001 - the status alone is still worth reporting
        return exc.reason or ""
    try:
        message = json.loads(text).get("error", {})
        if isinstance(message, dict):
            return str(message.get("message", text))[:300]
    except (ValueError, AttributeError):
        pass
    return text[:300]


def request_key(endpoint: str, body: dict[str, Any]) -> str:
    """SHA-256 of the endpoint and the canonical JSON of the request body (no URL, no key)."""
    canonical = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(f"{endpoint}\x00{canonical}".encode()).hexdigest()


class ResponseCache:
    """Successful responses by request key, in a SQLite file (safe across threads, processes)."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self._connect() as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, endpoint TEXT, "
                "request TEXT, response TEXT, latency REAL, created REAL)"
            )

    def _connect(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=60)
            self._local.db = db
        return db

    def get(self, key: str) -> tuple[dict[str, Any], float] | None:
        row = (
            self._connect()
            .execute("SELECT response, latency FROM responses WHERE key = ?", (key,))
            .fetchone()
        )
        return None if row is None else (json.loads(row[0]), float(row[1]))

    def put(self, key: str, endpoint: str, body: dict[str, Any], reply: Reply) -> None:
        with self._connect() as db:  # one transaction per response: a kill loses none
            db.execute(
                "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?)",
                (
                    key,
                    endpoint,
                    json.dumps(body, ensure_ascii=False),
                    json.dumps(reply.body, ensure_ascii=False),
                    reply.latency,
                    time.time(),
                ),
            )

    def __len__(self) -> int:
        return int(self._connect().execute("SELECT count(*) FROM responses").fetchone()[0])
