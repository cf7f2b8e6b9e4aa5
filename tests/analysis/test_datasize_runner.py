"""Datasize and the significance --store path on real tagger outputs from `glotbench run`.

Three token-tagger feature sets x 2 seeds are trained by the runner on a small
part of the Danish UD treebank (UPOS) and the NorNE Nynorsk files (NER); the
store they fill is read by `glotbench analyze datasize` and `glotbench
significance bootstrap --store`.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from glotbench import api
from glotbench.analysis.significance import paired_bootstrap_test
from glotbench.cli import app
from glotbench.metrics import get_metric

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
FEATURES = {
    "tagger-word": ["word"],
    "tagger-affix": ["word", "affix"],
    "tagger-full": ["word", "affix", "shape", "context"],
}
SIZES = "100,200,500,1000,2000,all"

pytestmark = pytest.mark.slow


def _suite_yaml(path: Path) -> Path:
    models = "\n".join(
        f"  - name: {name}\n    kind: tagger\n    options: {{features: {json.dumps(feats)}}}"
        for name, feats in FEATURES.items()
    )
    path.write_text(
        f"""name: datasize-test
needs_data_dir: true
protocol: {{iterations: 2, seed: 7, bootstrap_train: true, speed_iterations: 0}}
datasets:
  - name: pos-da
    task: pos
    language: da
    loader: conllu
    paths: ["ud/UD_Danish-DDT/da_ddt-ud-test.conllu"]
    splits: {{train: 250, validation: 0, test: 300}}
  - name: norne-nn
    task: ner
    language: nn
    loader: conllu
    paths: ["norne/no_nynorsk-norne-test.conllu"]
    splits: {{train: 300, validation: 0, test: 300}}
models:
{models}
""",
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="module")
def tagger_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (SHARED_DATA / "ud" / "UD_Danish-DDT").is_dir() or not (SHARED_DATA / "norne").is_dir():
        pytest.skip(f"the shared UD/NorNE data is not at {SHARED_DATA} (../shared/data)")
    folder = tmp_path_factory.mktemp("datasize-runner")
    store = folder / "taggers.duckdb"
    summary = api.run_benchmark(
        _suite_yaml(folder / "suite.yaml"), store=store, data_dir=SHARED_DATA
    )
    assert not summary.to_dict().get("failed")
    return store


def _datasize(store: Path, *args: str) -> dict:
    result = CliRunner().invoke(
        app,
        ["analyze", "datasize", "--store", str(store), "--sizes", SIZES, "--draws", "60",
         "--aso-iterations", "100", "--json", *args],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_datasize_pos_from_runner_store(tagger_store: Path, tmp_path: Path) -> None:
    plot = tmp_path / "pos.png"
    payload = _datasize(
        tagger_store, "--dataset", "pos-da", "--task", "pos", "--language", "da",
        "--metric", "token_accuracy", "--plot", str(plot),
    )  # fmt: skip
    for key in ("analysis", "metric", "level", "models", "n_seeds", "n_examples", "n_tokens",
                "token_unit", "n_draws", "seed", "recommendation", "table", "full_scores",
                "notes", "plot"):  # fmt: skip
        assert key in payload
    assert payload["analysis"] == "datasize" and payload["metric"] == "token_accuracy"
    assert sorted(payload["models"]) == sorted(FEATURES)
    assert payload["n_seeds"] == 2 and payload["n_examples"] == 300
    assert payload["token_unit"] == "tokens" and plot.stat().st_size > 0

    # tokens per sentence come from the stored statistics (words of the test sentences)
    with api.open_store(tagger_store, read_only=True) as handle:
        matrix = handle.stats.matrix("pos-da", "pos", "da", "token_accuracy")
    assert payload["n_tokens"] == pytest.approx(matrix.stats[0, :, 1].sum())
    assert len(matrix.run_ids) == 6  # 3 feature sets x 2 seeds, each run a system

    scores = {r["model"]: r["score"] for r in payload["full_scores"]}
    assert scores["tagger-full"] > scores["tagger-word"]  # real taggers, real differences

    table = payload["table"]
    full = [r for r in table if r["size"] == "all"]
    assert full and all(r["tau_mean"] == pytest.approx(1.0) for r in full)
    for unit in ("model", "seed"):
        rand = [r for r in table if r["strategy"] == "RAND" and r["unit"] == unit]
        taus = [r["tau_mean"] for r in sorted(rand, key=lambda r: r["tokens_mean"])]
        assert all(b >= a - 0.1 for a, b in zip(taus, taus[1:], strict=False)), taus
        assert taus[-1] >= taus[0]
    grid = {int(s) for s in SIZES.split(",") if s != "all"}
    for rec in payload["recommendation"]:
        size = rec["recommended_size"]
        assert (size is None) == rec["full_set_needed"]
        assert size is None or (isinstance(size, int) and size in grid)
    rand_model = next(
        r for r in payload["recommendation"] if r["strategy"] == "RAND" and r["unit"] == "model"
    )
    assert rand_model["recommended_size"] in grid


def test_datasize_ner_uses_stored_test_tokens(tagger_store: Path) -> None:
    payload = _datasize(
        tagger_store, "--dataset", "norne-nn", "--task", "ner", "--language", "nn",
        "--metric", "ner_f1", "--strategy", "RAND", "--no-aso",
    )  # fmt: skip
    # ner_f1 has no token statistic: sizes are the words stored by the runner
    assert payload["token_unit"] == "tokens"
    with api.open_store(tagger_store, read_only=True) as handle:
        run = handle.runs.frame(datasets=["norne-nn"], metrics=["ner_f1"]).iloc[0]
    assert payload["n_tokens"] == sum(run["model_metadata"]["test_tokens"])
    assert payload["n_tokens"] > payload["n_examples"] == 300
    full = [r for r in payload["table"] if r["size"] == "all"]
    assert all(r["tau_mean"] == pytest.approx(1.0) for r in full)


def test_significance_store_path_matches_engine(tagger_store: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(
        app,
        ["significance", "bootstrap", "--store", str(tagger_store), "--dataset", "pos-da",
         "--task", "pos", "--language", "da", "--metric", "token_accuracy",
         "--model", "tagger-full", "--model", "tagger-word", "--run-seed", "7",
         "--resamples", "2000", "--seed", "3", "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)

    # the same runs read one by one (not through stats_matrix), aligned by example id
    with api.open_store(tagger_store, read_only=True) as handle:
        runs = handle.runs.frame(datasets=["pos-da"], metrics=["token_accuracy"], seeds=[7])
        pair, order = {}, None
        for model in ("tagger-full", "tagger-word"):
            run_id = runs.loc[runs["model"] == model, "run_id"].item()
            ids, stats = handle.stats.of_run(run_id)
            pair[model] = dict(zip(map(str, ids), stats, strict=True))
            order = order or [str(i) for i in ids]  # A's stored order, as the CLI uses
    stats_a = np.array([pair["tagger-full"][i] for i in order])
    stats_b = np.array([pair["tagger-word"][i] for i in order])
    direct = paired_bootstrap_test(
        stats_a, stats_b, get_metric("token_accuracy"), n_resamples=2000, seed=3,
        names=("tagger-full", "tagger-word"),
    ).to_dict()  # fmt: skip
    assert payload["system_a"] == "tagger-full" and payload["n_examples"] == 300
    for key in ("score_a", "score_b", "difference", "p_value"):
        assert payload[key] == pytest.approx(direct[key], abs=1e-12), key
    assert payload["confidence_interval"] == pytest.approx(direct["confidence_interval"], abs=1e-12)
    accuracy_a = stats_a[:, 0].sum() / stats_a[:, 1].sum()
    accuracy_b = stats_b[:, 0].sum() / stats_b[:, 1].sum()
    assert payload["difference"] == pytest.approx(accuracy_a - accuracy_b, abs=1e-12)
    low, high = payload["confidence_interval"]
    assert low <= payload["difference"] <= high


def test_significance_store_needs_one_run_per_model(tagger_store: Path) -> None:
    result = CliRunner().invoke(
        app,
        ["significance", "bootstrap", "--store", str(tagger_store), "--dataset", "pos-da",
         "--task", "pos", "--language", "da", "--metric", "token_accuracy",
         "--model", "tagger-full", "--model", "tagger-word"],
    )  # fmt: skip
    assert result.exit_code != 0
    assert "--run-seed" in result.output + str(result.exception)


def test_tagger_feature_templates() -> None:
    from glotbench.runner.errors import ModelError
    from glotbench.runner.models import build_model
    from glotbench.runner.models.sklearn import token_features

    tokens = ["Oslo", "er", "stor", "."]
    assert token_features(tokens, 1) == token_features(
        tokens, 1, ["word", "affix", "shape", "context"]
    )
    assert token_features(tokens, 1, ["word"]) == {"bias": 1.0, "w=er": 1.0}
    model = build_model({"name": "t", "kind": "tagger", "options": {"features": ["word"]}})
    assert model.metadata()["feature_templates"] == ["word"]
    with pytest.raises(ModelError, match="unknown feature template"):
        build_model({"name": "t", "kind": "tagger", "options": {"features": ["suffix"]}})
