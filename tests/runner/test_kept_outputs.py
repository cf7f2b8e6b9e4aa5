"""Kept outputs (issue 25 item 4): predictions stored beside statistics, listed side by side."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sklearn.metrics import matthews_corrcoef

from glotbench import api
from glotbench.errors import InputError
from glotbench.metrics import get_metric
from glotbench.store import Store

from .openai_server import FaultyServer, echo_backend
from .test_command_line_models import write_data


@pytest.mark.slow
def test_kept_outputs_reproduce_the_stored_scores(tmp_path: Path) -> None:
    suite = write_data(tmp_path)
    store = tmp_path / "s.duckdb"
    api.run_benchmark(
        suite, store=store, models=["lr", "majority:"], keep_outputs=True, scores=False
    )
    with Store.open(store, read_only=True) as handle:
        kept = handle.outputs.read()
        runs = handle.runs.frame(metrics=["mcc"])
        stats = {
            (r["model"], r["dataset"], r["seed"]): (*handle.stats.of_run(r["run_id"]), r)
            for r in runs.to_dict(orient="records")
        }
    assert set(kept["model"]) == {"lr", "majority"} and len(kept) == 2 * 2 * 2 * 60
    for (model, dataset, seed), part in kept.groupby(["model", "dataset", "seed"]):
        ids, values, run = stats[(model, dataset, seed)]
        config = run["metric_config"]
        config = json.loads(config) if isinstance(config, str) else config
        assert list(part["example_id"]) == [str(i) for i in ids]  # the stored order
        # MCC of the kept predictions (scikit-learn) = MCC of the stored statistics
        mcc = get_metric("mcc", **config).score(values.sum(axis=0))
        expected = matthews_corrcoef(list(part["reference"]), list(part["output"]))
        assert float(mcc) == pytest.approx(expected, abs=1e-12)
        assert list(part["input"])[0].split()[0] in ("pos", "neg")


@pytest.mark.slow
def test_examples_where_models_disagree(tmp_path: Path, cli: Callable[..., Any]) -> None:
    suite = write_data(tmp_path)
    store = tmp_path / "s.duckdb"
    out = cli("run", suite, "--store", store, "--model", "lr,majority:", "--language", "en",
              "--limit", "30", "--keep-outputs", "--json")  # fmt: skip
    assert out.exit_code == 0, out.err
    with Store.open(store, read_only=True) as handle:
        kept = handle.outputs.read()
    wide = kept.pivot_table(
        index=["seed", "example_id"], columns="model", values="output", aggfunc="first"
    )
    differ = int((wide["lr"] != wide["majority"]).sum())
    assert 0 < differ < len(wide)
    pair = ["--store", store, "--model", "lr", "--model", "majority"]
    out = cli("examples", *pair, "--disagree", "--limit", "1000", "--samples", tmp_path / "s.jsonl",
              "--json")  # fmt: skip
    assert out.exit_code == 0, out.err
    payload = json.loads(out.stdout)
    assert payload["total"] == payload["shown"] == differ
    assert all(r["output:lr"] != r["output:majority"] for r in payload["examples"])
    lines = (tmp_path / "s.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 * differ
    sample = json.loads(lines[0])
    assert {"doc_id", "target", "resps", "filtered_resps"} <= set(sample)
    # where both are wrong: each listed output differs from its reference
    out = cli("examples", "--store", store, "--model", "lr", "--model", "majority",
              "--all-wrong", "--json")  # fmt: skip
    for row in json.loads(out.stdout)["examples"]:
        assert row["output:lr"] != row["reference"] and row["output:majority"] != row["reference"]
    # the terminal table
    out = cli("examples", "--store", store, "--model", "lr", "--model", "majority", "--disagree")
    assert out.exit_code == 0 and "output:majority" in out.stdout


@pytest.mark.slow
def test_generative_models_keep_outputs_by_default(tmp_path: Path) -> None:
    suite = write_data(tmp_path)
    server = FaultyServer(0, echo_backend, tmp_path / "log.jsonl").start()
    try:
        common = {"store": tmp_path / "s.duckdb", "scores": False, "limit": 6, "languages": ["en"]}
        args = [f"base_url={server.url}", "endpoint=completions", "decoding=greedy"]
        api.run_benchmark(suite, models=["openai:echo", "lr"], model_args=args, **common)
        common["store"] = tmp_path / "t.duckdb"
        api.run_benchmark(
            suite, models=["openai:echo"], model_args=args, keep_outputs=False, **common
        )
    finally:
        server.shutdown()
        server.server_close()
    with Store.open(tmp_path / "s.duckdb", read_only=True) as handle:
        kept = handle.outputs.read()
    assert set(kept["model"]) == {"echo"}  # the generative model only
    # the echo model repeats the label word that starts each text
    assert (kept["output"].str.strip() == kept["reference"]).all()
    with Store.open(tmp_path / "t.duckdb", read_only=True) as handle:
        assert handle.outputs.read().empty
    result = api.kept_examples(tmp_path / "s.duckdb", models=["echo"])
    assert result.total == 2 * 6 and all(result.to_frame()["correct:echo"])
    with pytest.raises(InputError, match="at least two"):
        api.kept_examples(tmp_path / "s.duckdb", models=["echo"], disagree=True)
    with pytest.raises(InputError, match="no kept outputs of model.*'lr'"):
        api.kept_examples(tmp_path / "s.duckdb", models=["echo", "lr"])
