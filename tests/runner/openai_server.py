"""A small OpenAI-compatible HTTP server for the ``openai`` model kind's tests.

It speaks the wire format of ``POST /v1/completions`` and ``POST
/v1/chat/completions`` (``choices[0].text`` / ``choices[0].message.content``,
``usage``) and answers with a *backend*: the tiny GPT-2 the HF tests build
(greedy generation with plain ``transformers``, in a thread of the test
process), or a deterministic echo model (in a subprocess that the test can
kill). Faults are injected by the number of the arriving request: HTTP 429
with ``Retry-After``, HTTP 500, a slow answer (past the client's timeout), or
the process exiting after it has answered a number of requests.

Every request is logged as one JSON line (``n``, ``key`` = SHA-256 of the
body, ``status``) to a file, so a test counts what reached the server even
across a killed process.

Run as a script: ``python openai_server.py PORT LOG FAULTS_JSON`` (echo backend).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

Backend = Callable[[str, dict[str, Any]], tuple[str, int, int]]


def echo_backend(prompt: str, body: dict[str, Any]) -> tuple[str, int, int]:
    """The first word of the last ``Text:`` of the prompt; when sampling, a seeded coin
    replaces it by ``wrong`` one time in three. Token counts are whitespace words."""
    tail = prompt.rsplit("Text:", 1)[-1].split()
    word = tail[0] if tail else ""
    if body.get("temperature", 1.0) > 0:
        digest = hashlib.sha256(f"{body.get('seed')}|{prompt}".encode()).digest()
        if digest[0] % 3 == 0:
            word = "wrong"
    return " " + word, len(prompt.split()), 1


def gpt_backend(folder: Path) -> Backend:
    """Greedy generation of a saved causal LM with ``transformers`` (one prompt at a time)."""
    import torch
    import transformers

    tok = transformers.AutoTokenizer.from_pretrained(folder)
    model = transformers.AutoModelForCausalLM.from_pretrained(folder).eval()
    lock = threading.Lock()

    def answer(prompt: str, body: dict[str, Any]) -> tuple[str, int, int]:
        ids = tok(prompt, return_tensors="pt")["input_ids"]
        with lock, torch.no_grad():
            out = model.generate(
                input_ids=ids,
                attention_mask=torch.ones_like(ids),
                max_new_tokens=int(body["max_tokens"]),
                do_sample=False,
                pad_token_id=tok.eos_token_id,
            )
        new = out[0, ids.shape[1] :]
        text = tok.decode(new, skip_special_tokens=True)
        for stop in body.get("stop") or []:
            at = text.find(stop)
            if at >= 0:
                text = text[:at]
        return text, int(ids.shape[1]), int(new.shape[0])

    return answer


class FaultyServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self, port: int, backend: Backend, log: Path, faults: dict[str, Any] | None = None
    ) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        self.backend = backend
        self.log = log
        self.faults = {k: set(v) if isinstance(v, list) else v for k, v in (faults or {}).items()}
        self.count = 0
        self.answered = 0
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def start(self) -> FaultyServer:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self


class Handler(BaseHTTPRequestHandler):
    server: FaultyServer

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _reply(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        srv = self.server
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = json.loads(raw)
        with srv.lock:
            n = srv.count
            srv.count += 1
        key = hashlib.sha256(raw).hexdigest()
        status = 200
        if n in srv.faults.get("429", ()):
            status = 429
        elif n in srv.faults.get("500", ()):
            status = 500
        elif "auth" in srv.faults and self.headers.get("Authorization") != srv.faults["auth"]:
            status = 401
        with srv.lock, srv.log.open("a", encoding="utf-8") as fh:
            fh.write(
                json.dumps({"n": n, "key": key, "status": status, "t": time.time(), "body": body})
                + "\n"
            )
        if status == 429:
            self._reply(429, {"error": {"message": "slow down"}}, {"Retry-After": "0.05"})
            return
        if status == 500:
            self._reply(500, {"error": {"message": "injected failure"}})
            return
        if status == 401:
            self._reply(401, {"error": {"message": "bad key"}})
            return
        if n in srv.faults.get("slow", ()):
            time.sleep(float(srv.faults.get("slow_seconds", 1.0)))
        if self.path.endswith("/chat/completions"):
            prompt = "\n".join(m["content"] for m in body["messages"] if m["role"] == "user")
        else:
            prompt = body["prompt"]
        text, prompt_tokens, completion_tokens = srv.backend(prompt, body)
        choice: dict[str, Any] = {"index": 0, "finish_reason": "stop"}
        if self.path.endswith("/chat/completions"):
            choice["message"] = {"role": "assistant", "content": text}
        else:
            choice["text"] = text
        self._reply(
            200,
            {
                "id": f"r{n}",
                "object": "text_completion",
                "model": body["model"],
                "choices": [choice],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            },
        )
        with srv.lock:
            srv.answered += 1
            if srv.answered == srv.faults.get("die_after"):
                self.wfile.flush()
                os._exit(1)  # a killed server: no goodbye, connections refused from now on


def read_log(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


if __name__ == "__main__":
    port, log, faults = int(sys.argv[1]), Path(sys.argv[2]), json.loads(sys.argv[3])
    server = FaultyServer(port, echo_backend, log, faults)
    print("ready", flush=True)
    server.serve_forever()
