"""The ``openai`` kind against a server that serves the tiny GPT-2 of the HF tests.

The server (tests/runner/openai_server.py, in a thread) generates greedily
with plain ``transformers``, one prompt at a time; glotbench's
``hf-generative`` adapter generates the same model greedily in batches,
in-process. Both paths must store the same statistics (SQuAD F1/EM) for the
same prompts — over the completions endpoint and over the chat endpoint —
and the token counts stored with the HTTP runs must be the tokenizer's.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (extra 'neural')")
transformers = pytest.importorskip(
    "transformers", reason="transformers is not installed (extra 'neural')"
)
os.environ["HF_HUB_OFFLINE"] = "1"

from glotbench import api  # noqa: E402
from glotbench.store import Store  # noqa: E402

from .openai_server import FaultyServer, gpt_backend, read_log  # noqa: E402
from .test_hf_generative_text import DATASETS, save_biased_gpt, write_data  # noqa: E402


@pytest.mark.slow
def test_served_gpt_matches_the_in_process_adapter(tmp_path: Path) -> None:
    texts = write_data(tmp_path)
    save_biased_gpt(tmp_path / "gpt", texts)
    log = tmp_path / "log.jsonl"
    server = FaultyServer(0, gpt_backend(tmp_path / "gpt"), log, {"429": [1], "500": [3]}).start()
    http = {"base_url": server.url, "retry_base_seconds": 0.01, "concurrency": 2}
    common = {"max_new_tokens": 8, "decoding": "greedy"}
    suite = {
        "name": "served",
        "protocol": {"iterations": 2, "seed": 3, "speed_iterations": 0},
        "datasets": [DATASETS[0]],
        "models": [
            {"name": "local", "kind": "hf-generative", "options": {"path": "gpt", **common}},
            {
                "name": "completions",
                "kind": "openai",
                "options": {"model": "gpt", "endpoint": "completions", **http, **common},
            },
            {
                "name": "chat",
                "kind": "openai",
                "options": {"model": "gpt", "endpoint": "chat", **http, **common},
            },
        ],
    }
    (tmp_path / "suite.yaml").write_text(json.dumps(suite), encoding="utf-8")
    try:
        summary = api.run_benchmark(tmp_path / "suite.yaml", store=tmp_path / "s.duckdb")
    finally:
        server.shutdown()
        server.server_close()
    assert not summary.failures
    with Store.open(tmp_path / "s.duckdb", read_only=True) as store:
        runs = store.runs.frame()
        stats = {
            (r["model"], int(r["seed"]), r["metric"]): store.stats.of_run(r["run_id"])
            for r in runs.to_dict(orient="records")
        }
        metas = {
            (r["model"], int(r["seed"])): r["model_metadata"]
            for r in runs.to_dict(orient="records")
        }
    local = {k[1:]: v for k, v in stats.items() if k[0] == "local"}
    assert local
    for model in ("completions", "chat"):
        served = {k[1:]: v for k, v in stats.items() if k[0] == model}
        assert served.keys() == local.keys()
        for key, (ids, values) in served.items():
            assert list(map(str, ids)) == list(map(str, local[key][0]))
            assert (values == local[key][1]).all(), (model, key)
    entries = [e for e in read_log(log) if e["status"] == 200]
    # greedy: a prompt is sent once (the test split repeats some questions), and the second
    # iteration's requests are the first's, answered from the cache
    sent = [e["body"]["prompt"] for e in entries if "prompt" in e["body"]]
    assert len(sent) == len(set(sent)) == len({e["key"] for e in entries}) / 2
    n_test = DATASETS[0]["splits"]["test"]
    with Store.open(tmp_path / "s.duckdb", read_only=True) as store:
        run = store.runs.frame().iloc[0]
        ids, _ = store.stats.of_run(run["run_id"])
    tok = transformers.AutoTokenizer.from_pretrained(tmp_path / "gpt")
    prompts = _test_prompts(tmp_path, [str(i) for i in ids])
    assert set(prompts) == set(sent)
    expected = sum(len(tok(p)["input_ids"]) for p in prompts)
    for seed in {k[0] for k in local}:
        meta = metas[("completions", seed)]
        meta = json.loads(meta) if isinstance(meta, str) else meta
        assert meta["prompt_tokens"] == expected and meta["requests"] == n_test
    cache_hits = sorted(
        (json.loads(m) if isinstance(m, str) else m)["cache_hits"]
        for (model, _), m in metas.items()
        if model == "completions"
    )
    assert cache_hits == [0, n_test]


def _test_prompts(folder: Path, ids: list[str]) -> list[str]:
    """The zero-shot QA prompts of the test items (the documented default template), in the
    stored order, written from the SQuAD file."""
    data = json.loads((folder / "qa.json").read_text(encoding="utf-8"))
    by_id = {
        qa["id"]: f"Context: {paragraph['context']}\nQuestion: {qa['question']}\nAnswer:"
        for article in data["data"]
        for paragraph in article["paragraphs"]
        for qa in paragraph["qas"]
    }
    return [by_id[i] for i in ids]
