"""``glotbench run --model KIND:ID`` and friends: models and tasks named on the command line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from glotbench.errors import InputError
from glotbench.runner.benchmark import prepare_suite
from glotbench.runner.command_line import model_kind, parse_model_args, split_list
from glotbench.runner.models import ModelSpec
from glotbench.store import Store

from .conftest import store_digests
from .openai_server import FaultyServer, echo_backend, read_log

N_TRAIN, N_TEST = 40, 60


def write_data(folder: Path) -> Path:
    """Two sentiment datasets (en, da) of the same rows; the label is the text's first word."""
    rows = [
        {
            "id": f"r{i}",
            "text": f"{'pos' if i % 3 else 'neg'} item {i}",
            "label": "pos" if i % 3 else "neg",
            "split": "train" if i < N_TRAIN else "test",
        }
        for i in range(N_TRAIN + N_TEST)
    ]
    (folder / "sent.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", "utf-8")
    suite = folder / "s.yaml"
    suite.write_text(
        """
name: mini
protocol: {iterations: 2, speed_iterations: 0}
datasets:
  - {name: sent, task: sentiment, language: en, loader: jsonl, paths: [sent.jsonl],
     splits: predefined}
  - {name: sent-da, task: sentiment, language: da, loader: jsonl, paths: [sent.jsonl],
     splits: predefined}
models:
  - {name: lr, kind: tfidf-logreg}
  - {name: nb, kind: tfidf-nb}
""",
        encoding="utf-8",
    )
    return suite


def stored(path: Path) -> dict[tuple[str, str, int], list[str]]:
    with Store.open(path, read_only=True) as store:
        runs = store.runs.frame()
        return {
            (r["model"], r["dataset"], int(r["seed"])): [
                str(i) for i in store.stats.of_run(r["run_id"])[0]
            ]
            for r in runs.to_dict(orient="records")
        }


@pytest.mark.slow
def test_models_and_filters_on_the_command_line(tmp_path: Path, cli: Callable[..., Any]) -> None:
    suite = write_data(tmp_path)
    out = cli(
        "run", suite, "--store", tmp_path / "a.duckdb", "--model", "majority:,lr",
        "--language", "en,da", "--limit", "16", "--json",
    )  # fmt: skip
    assert out.exit_code == 0, out.err
    runs = stored(tmp_path / "a.duckdb")
    # the suite model named (lr) and the command-line one (majority); not nb
    assert {k[0] for k in runs} == {"majority", "lr"}
    assert {k[1] for k in runs} == {"sent", "sent-da"}
    # --limit: the first 16 test examples of the file, in order
    expected = [f"r{i}" for i in range(N_TRAIN, N_TRAIN + 16)]
    assert all(ids == expected for ids in runs.values())
    # the majority baseline, built from 'majority:', predicts 'pos' (2 in 3 training rows)
    with Store.open(tmp_path / "a.duckdb", read_only=True) as store:
        frame = store.runs.frame()
        row = frame[(frame["model"] == "majority") & (frame["metric"] == "mcc")].iloc[0]
        meta = row["model_metadata"]
        meta = json.loads(meta) if isinstance(meta, str) else meta
    assert meta["kind"] == "majority"


@pytest.mark.slow
def test_dump_suite_runs_again_with_the_same_keys(tmp_path: Path, cli: Callable[..., Any]) -> None:
    suite = write_data(tmp_path)
    args = ["--model", "tfidf-logreg:quick", "--model-arg", "C=0.5", "--task", "sentiment"]
    args += ["--language", "da", "--limit", "12", "--iterations", "1"]
    out = cli("run", suite, "--store", tmp_path / "a.duckdb", *args)
    assert out.exit_code == 0, out.err
    out = cli("run", suite, *args, "--dump-suite", tmp_path / "dumped.yaml", "--json")
    assert out.exit_code == 0 and json.loads(out.stdout)["suite_file"] == str(
        tmp_path / "dumped.yaml"
    )
    text = (tmp_path / "dumped.yaml").read_text(encoding="utf-8")
    assert "C: 0.5" in text and "limit: 12" in text and "sent-da" in text
    assert not (tmp_path / "b.duckdb").exists()  # dumping runs nothing
    out = cli(
        "run", tmp_path / "dumped.yaml", "--data-dir", tmp_path, "--store", tmp_path / "b.duckdb"
    )
    assert out.exit_code == 0, out.err
    digests = store_digests(tmp_path / "a.duckdb")
    assert len(digests) == 2 and digests == store_digests(tmp_path / "b.duckdb")


def test_default_task_suite_and_option_parsing() -> None:
    suite, notes = prepare_suite(
        None, models=["majority:"], tasks=["sentiment"], languages=["da"], limit=64
    )
    assert suite.name == "euroeval-hub" and [m.name for m in suite.models] == ["majority"]
    assert [(d.name, d.hf, d.limit) for d in suite.datasets] == [
        ("angry-tweets", "EuroEval/angry-tweets-mini", 64)
    ]
    suite, notes = prepare_suite(
        None, models=["hf:org/tiny", "openai:served"], device="cpu", batch_size=4
    )
    by_name = {m.name: m for m in suite.models}
    assert by_name["org/tiny"].kind == "hf-generative"
    assert by_name["org/tiny"].options == {"path": "org/tiny", "device": "cpu", "batch_size": 4}
    assert by_name["served"].options == {"model": "served", "concurrency": 4}
    assert notes == ["device='cpu' does not apply to model 'served' (kind openai)"]
    assert parse_model_args(["a=8,b=true", "c=x,y", "d=0.5"]) == {
        "a": 8, "b": True, "c": "x,y", "d": 0.5,
    }  # fmt: skip
    assert split_list(["en,da", " sv "]) == ["en", "da", "sv"]
    assert model_kind("hf:x") == "hf-generative" and model_kind("lr") is None
    assert model_kind("some:name") is None  # not a kind: a suite model's name


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "majority:", "--model-arg", "C=1"], "C is not an option of kind majority"),
        (["--model", "vllm:x"], r"needs vllm, not installed.*glotbench\[vllm\]"),
        (["--model", "lr", "--device", "cpu"], "models named on the command line"),
        (["--model", "gpt", "--model", "majority:"], "unknown model.*'gpt'.*KIND:ID"),
        (["--model", "hf:"], r"needs an identifier after ':' \(--model hf:\)"),
        (["--model", "majority:", "--model-arg", "oops"], "--model-arg KEY=VALUE: 'oops'"),
    ],
)
def test_command_line_mistakes_are_clear_errors(
    tmp_path: Path, cli: Callable[..., Any], args: list[str], message: str
) -> None:
    suite = write_data(tmp_path)
    out = cli("run", suite, "--store", tmp_path / "a.duckdb", *args, "--json")
    assert out.exit_code != 0
    import re

    assert re.search(message, json.loads(out.stdout)["error"]["message"])
    assert not (tmp_path / "a.duckdb").exists()


def test_no_suite_and_no_model_is_an_error(cli: Callable[..., Any]) -> None:
    out = cli("run", "--json")
    assert out.exit_code == 2 and "--model KIND:ID" in json.loads(out.stdout)["error"]["message"]
    with pytest.raises(InputError, match="model_args"):
        prepare_suite("starter", model_args=["a=1"])


@pytest.mark.slow
def test_openai_model_on_the_command_line(tmp_path: Path, cli: Callable[..., Any]) -> None:
    suite = write_data(tmp_path)
    log = tmp_path / "log.jsonl"
    server = FaultyServer(0, echo_backend, log).start()
    try:
        out = cli(
            "run", suite, "--store", tmp_path / "a.duckdb", "--model", "openai:echo",
            "--model-arg", f"base_url={server.url},endpoint=completions,decoding=greedy",
            "--batch-size", "2", "--limit", "10", "--language", "en", "--json",
        )  # fmt: skip
    finally:
        server.shutdown()
        server.server_close()
    assert out.exit_code == 0, out.err
    # greedy: the second iteration is answered from the cache; 10 distinct prompts sent
    assert len(read_log(log)) == 10
    result = json.loads(out.stdout)
    scores = {(r["model"], r["metric"]): r["score"] for r in result["scores"]}
    assert scores[("echo", "mcc")] == pytest.approx(1.0)  # the echo repeats the label


def test_data_files_without_a_suite(
    tmp_path: Path, cli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_data(tmp_path)
    monkeypatch.chdir(tmp_path)
    args = ["--model", "majority:", "--task", "sentiment", "--language", "da"]
    args += ["--data", "sent.jsonl", "--limit", "9", "--iterations", "2"]
    args += ["--no-speed"]  # ScandEval's speed benchmark is a minute of calls; not tested here
    out = cli("run", "--store", tmp_path / "a.duckdb", *args, "--json")
    assert out.exit_code == 0, out.err
    runs = stored(tmp_path / "a.duckdb")
    # the file's own splits (it has a split field); its name is the dataset's
    assert set(runs) == {("majority", "sent", 4242), ("majority", "sent", 4243)}
    assert all(ids == [f"r{i}" for i in range(N_TRAIN, N_TRAIN + 9)] for ids in runs.values())
    out = cli("run", *args, "--dump-suite", tmp_path / "d.yaml")
    assert out.exit_code == 0, out.err
    out = cli("run", tmp_path / "d.yaml", "--store", tmp_path / "b.duckdb", "--iterations", "2")
    assert out.exit_code == 0, out.err
    assert store_digests(tmp_path / "a.duckdb") == store_digests(tmp_path / "b.duckdb")
    for extra, message in (
        (["--language", "sv"], "one --task and one --language"),
        (["--data", "missing.jsonl"], "does not exist"),
    ):
        out = cli("run", *args, *extra, "--json")
        assert out.exit_code == 2 and message in json.loads(out.stdout)["error"]["message"]


@pytest.mark.slow
def test_hf_model_on_the_command_line_without_a_yaml(
    tmp_path: Path, cli: Callable[..., Any]
) -> None:
    """The issue's example, offline: a tiny local causal LM named with hf:PATH."""
    pytest.importorskip("torch", reason="torch is not installed (extra 'neural')")
    pytest.importorskip("transformers", reason="transformers is not installed (extra 'neural')")
    from .hf_tiny import save_gpt, train_tokenizer

    write_data(tmp_path)
    texts = (tmp_path / "sent.jsonl").read_text("utf-8").splitlines()
    save_gpt(tmp_path / "tiny-gpt", train_tokenizer(texts, bert=False, vocab_size=120))
    out = cli(
        "run", "--store", tmp_path / "a.duckdb", "--model", f"hf:{tmp_path / 'tiny-gpt'}",
        "--model-arg", "max_new_tokens=2", "--device", "cpu", "--batch-size", "4",
        "--task", "sentiment", "--language", "da", "--limit", "8", "--iterations", "2",
        "--data", tmp_path / "sent.jsonl", "--json",
    )  # fmt: skip
    assert out.exit_code == 0, out.err
    runs = stored(tmp_path / "a.duckdb")
    assert {k[:2] for k in runs} == {("tiny-gpt", "sent")}
    assert len({k[2] for k in runs}) == 2 and all(len(ids) == 8 for ids in runs.values())
    with Store.open(tmp_path / "a.duckdb", read_only=True) as store:
        meta = store.runs.frame()["model_metadata"].iloc[0]
    meta = json.loads(meta) if isinstance(meta, str) else meta
    assert meta["kind"] == "hf-generative" and meta["batch_size"] == 4 and meta["device"] == "cpu"


def test_model_args_split_only_between_pairs() -> None:
    # a comma inside a value (a system prompt) stays; a comma before key= separates
    assert parse_model_args(["system=Be brief, answer with one word, temperature=0.5"]) == {
        "system": "Be brief, answer with one word",
        "temperature": 0.5,
    }
    # a quoted value is taken verbatim, even with "key=" inside it
    assert parse_model_args(['system="Say label=x, or label=y",few_shot=2']) == {
        "system": "Say label=x, or label=y",
        "few_shot": 2,
    }
    # text with a colon is text, not a YAML mapping; lists and explicit mappings stay
    assert parse_model_args(["system=Answer: yes", "stop=[a, b]", "extra_body={x: 1}"]) == {
        "system": "Answer: yes",
        "stop": ["a", "b"],
        "extra_body": {"x": 1},
    }


def test_list_models_reads_the_registry(cli: Callable[..., Any]) -> None:
    from glotbench.runner.models import REGISTRY

    out = cli("run", "--list-models", "--json")
    assert out.exit_code == 0, out.err
    kinds = json.loads(out.stdout)["model_kinds"]
    assert [k["kind"] for k in kinds] == list(REGISTRY)
    by_kind = {k["kind"]: k for k in kinds}
    assert by_kind["vllm"]["extra"] == "vllm" and by_kind["vllm"]["id_option"] == "path"
    assert by_kind["openai"]["generative"] and not by_kind["majority"]["generative"]
    assert by_kind["majority"]["available"] is True
    text = cli("run", "--list-models")
    assert text.exit_code == 0 and "hf-generative" in text.stdout and "vllm" in text.stdout


def test_the_chat_setting_is_part_of_the_configuration_hash() -> None:
    """``chat: auto`` resolves when the model loads: it is hashed with its default, so a run
    stored without it (before chat templates) is not resumed as a chat-template run, and
    each explicit setting has its own hash."""
    base = {"path": "m"}
    hashes = {
        chat: ModelSpec(
            name="g", kind="hf-generative", options={**base, "chat": chat}
        ).config_hash()
        for chat in (True, False, "auto")
    }
    assert len(set(hashes.values())) == 3
    default = ModelSpec(name="g", kind="hf-generative", options=base).config_hash()
    assert default == hashes["auto"]
    # the hash a run stored before the chat option existed got: kind and options only
    from glotbench.runner.datasets.base import content_hash as old_style

    assert default != old_style({"kind": "hf-generative", "options": base})[:16]
    vllm = ModelSpec(name="g", kind="vllm", options=base).config_hash()
    assert vllm == ModelSpec(name="g", kind="vllm", options={**base, "chat": "auto"}).config_hash()
