"""glotbench import reuben: the paper's real inputs, generated replication files, bad files.

References: σ_b is numpy's sample SD of the file's per-language scores; the parametric
per-language SD of a difference is √(σ_w,a² + σ_w,b²) (independent normal noise), checked
within its Monte Carlo error; seed/bootstrap components of a generated replication file
against numpy on the generated array.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from glotbench import api
from glotbench.analysis.draws import DrawSettings
from glotbench.analysis.replicates import ReplicatedScores
from glotbench.analysis.variance import ComponentTable
from glotbench.cli import app
from glotbench.errors import InputError
from glotbench.importers.reuben import (
    ReubenConfig,
    metric_columns,
    parse_metric_specs,
    read_reuben,
)
from glotbench.store.store import Store

SALEVA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "saleva" / "inputs"


@pytest.fixture(scope="module")
def inputs() -> Path:
    if not SALEVA.is_dir():
        pytest.skip(f"the Sälevä inputs (reuben's experiments-for-paper) are not at {SALEVA}")
    return SALEVA


def _xquad(inputs: Path, store: Path) -> api.HarnessImportResult:
    return api.import_reuben(
        inputs / "xquad" / "sd-cols" / "data.jsonl",
        config=inputs / "xquad" / "sd-cols" / "config-seed-boot.yaml",
        store=store,
        task="xquad",
        metrics=["F1=squad_f1"],
        percent=True,
    )


def _scores_count(store: Path) -> int:
    if not store.exists():
        return 0
    with Store.open(store, read_only=True) as handle:
        return len(handle.scores.frame())


# --- the paper's files ------------------------------------------------------------------------


@pytest.mark.slow
def test_xquad_summary_analyses_run_as_reuben(inputs: Path, tmp_path: Path) -> None:
    store = tmp_path / "s.duckdb"
    result = _xquad(inputs, store)
    assert result.status == "imported" and result.scores_added == 48
    raw = pd.read_json(inputs / "xquad" / "sd-cols" / "data.jsonl", lines=True)

    source = api.load_replicated(store=store)
    assert isinstance(source, ComponentTable)
    variance = api.analyze_variance(source).per_model.set_index("model")
    expected_b = raw.groupby("Model")["F1"].std(ddof=1) / 100
    np.testing.assert_allclose(variance.loc[expected_b.index, "sigma_b"], expected_b, rtol=1e-9)
    per_unit = api.analyze_variance(source).per_unit.set_index(["model", "language"])
    w = np.hypot(raw["SD_seed"], raw["SD_boot_avg"]).to_numpy() / 100
    np.testing.assert_allclose(
        per_unit.loc[list(zip(raw["Model"], raw["Language"], strict=True)), "sigma_w"], w
    )

    n = 20_000
    comparison = api.analyze_compare(
        source, DrawSettings(scheme="parametric", n_draws=n, seed=1), per_language=True
    ).per_language
    by = raw.set_index(["Model", "Language"])
    for row in comparison.itertuples(index=False):
        wa = math.hypot(*by.loc[(row.model_a, row.language), ["SD_seed", "SD_boot_avg"]]) / 100
        wb = math.hypot(*by.loc[(row.model_b, row.language), ["SD_seed", "SD_boot_avg"]]) / 100
        closed = math.hypot(wa, wb)
        assert abs(row.sd - closed) <= 5 * closed / math.sqrt(2 * n)
        observed = (by.loc[(row.model_a, row.language), "F1"]
                    - by.loc[(row.model_b, row.language), "F1"]) / 100  # fmt: skip
        assert row.difference == pytest.approx(observed, abs=1e-12)
    ranks = api.analyze_ranks(source, DrawSettings(scheme="parametric", n_draws=2000, seed=1))
    assert set(ranks.distribution["aggregator"]) == {"mean", "geometric_mean", "median"}

    again = _xquad(inputs, store)
    assert again.status == "skipped" and _scores_count(store) == 48


def test_flores_has_three_metrics_and_its_scale_error_is_refused(
    inputs: Path, tmp_path: Path
) -> None:
    store = tmp_path / "s.duckdb"
    with pytest.raises(InputError) as caught:
        api.import_reuben(
            inputs / "flores" / "data.jsonl",
            config=inputs / "flores" / "config-rich-output.yaml",
            store=store,
            task="flores",
            metrics=["chrf=chrf++", "comet=comet:0:100"],
        )
    error = caught.value
    assert (error.line, error.field) == (33, "chrf_mean")
    assert error.path.endswith("data.jsonl") and "5269.19" in error.reason
    assert _scores_count(store) == 0

    config = ReubenConfig.from_yaml(inputs / "flores" / "config-rich-output.yaml")
    columns = list(json.loads((inputs / "flores" / "data.jsonl").read_text().splitlines()[0]))
    found = dict(metric_columns(columns, config))
    assert set(found) == {"bleu", "chrf", "comet"}
    assert found["comet"]["seed_sd"] == "comet_seed_sd"
    assert found["chrf"]["boot_sd"] == "chrf_boot_sd"


def test_ner_summary_imports(inputs: Path) -> None:
    root = inputs / "ner" / "sd-cols"
    rows = read_reuben(
        root / "data.jsonl",
        ReubenConfig.from_yaml(root / "config-seed-boot.yaml"),
        task="ner",
        metrics=["Mean=ner_f1"],
        percent=True,
    )
    assert len(rows.frame) == 366 and rows.frame["model"].nunique() == 6
    assert rows.frame["score"].between(0, 1).all()


def test_replication_configs_are_read(inputs: Path) -> None:
    config = ReubenConfig.from_yaml(inputs / "ner" / "idx-cols" / "config-seed-boot.yaml")
    assert config.is_replication_file
    assert (config.seed_idx_col, config.boot_idx_col, config.score_col) == (
        "Seed",
        "Bootstrap",
        "F1",
    )
    assert config.num_bootstrap_resamples == 10_000


# --- generated replication and CSV files ------------------------------------------------------


def test_replication_file_gives_seed_and_bootstrap_components(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    models, tasks, seeds, boots = ["a", "b"], ["t1", "t2", "t3"], 3, 5
    values = rng.uniform(0.3, 0.9, size=(len(models), len(tasks), seeds, boots))
    path = tmp_path / "reps.jsonl"
    with path.open("w") as fh:
        for i, m in enumerate(models):
            for j, t in enumerate(tasks):
                for s in range(seeds):
                    for b in range(boots):
                        fh.write(json.dumps({"Model": m, "Task": t, "Seed": s, "Bootstrap": b,
                                             "F1": values[i, j, s, b]}) + "\n")  # fmt: skip
    config = tmp_path / "c.yaml"
    config.write_text('score_col: "F1"\nseed_idx_col: "Seed"\nboot_idx_col: "Bootstrap"\n')
    store = tmp_path / "s.duckdb"
    result = api.import_reuben(path, config=config, store=store, task="ner",
                               metrics=["F1=ner_f1"])  # fmt: skip
    assert result.scores_added == values.size
    source = api.load_replicated(store=store)
    assert isinstance(source, ReplicatedScores)
    per_unit = api.analyze_variance(source).per_unit.set_index(["model", "language"])
    for i, m in enumerate(models):
        for j, t in enumerate(tasks):
            cell = values[i, j]
            seed_sd = cell.mean(axis=1).std(ddof=1)
            boot_sd = cell.std(axis=1, ddof=1).mean()
            assert per_unit.loc[(m, t), "sigma_seed"] == pytest.approx(seed_sd, rel=1e-9)
            assert per_unit.loc[(m, t), "sigma_boot"] == pytest.approx(boot_sd, rel=1e-9)


def test_csv_summary_and_cli_json(tmp_path: Path) -> None:
    path = tmp_path / "summary.csv"
    path.write_text("Model,Task,Mean,sd_seed,sd_boot\nm1,de,30.5,0.4,0.6\nm1,fr,40.0,0.3,0.5\n"
                    "m2,de,31.0,0.2,0.7\nm2,fr,38.0,0.5,0.4\n")  # fmt: skip
    config = tmp_path / "c.yaml"
    config.write_text("score_col: Mean\nseed_sd_col: sd_seed\nboot_sd_col: sd_boot\n")
    store = tmp_path / "s.duckdb"
    out = CliRunner().invoke(
        app,
        ["import", "reuben", str(path), "--config", str(config), "--metric", "Mean=bleu",
         "--task", "mt", "--store", str(store), "--json"],
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    payload = json.loads(out.output)
    assert payload["scores_added"] == 4 and payload["languages"] == ["de", "fr"]
    with Store.open(store, read_only=True) as handle:
        scores = handle.scores.frame()
    row = scores[(scores["model"] == "m1") & (scores["language"] == "de")].iloc[0]
    assert row["score"] == 30.5 and row["stderr"] == pytest.approx(math.hypot(0.4, 0.6))
    assert row["metadata"]["sigma_seed"] == 0.4 and row["metric"] == "bleu"


# --- bad files: each refused with file, line and field; nothing stored -------------------------

GOOD = {"Model": "m", "Task": "de", "F1": 50.0, "SD_seed": 0.5, "SD_boot_avg": 0.7}
CONFIG = 'score_col: "F1"\nmodel_col: "Model"\ntask_col: "Task"\nseed_sd_col: "SD_seed"\n' \
         'boot_sd_col: "SD_boot_avg"\n'  # fmt: skip


def _record(**changes: object) -> dict[str, object]:
    out = {**GOOD, **changes}
    return {k: v for k, v in out.items() if v is not _DROP}


_DROP = object()

BAD_ROWS = [
    ("score is text", _record(F1="fifty"), "F1", "finite number"),
    ("score is a bool", _record(F1=True), "F1", "finite number"),
    ("score is null", _record(F1=None), "F1", "finite number"),
    ("score is a list", _record(F1=[50]), "F1", "finite number"),
    ("score above the scale", _record(F1=150.0), "F1", "outside the scale 0–1"),
    ("score below the scale", _record(F1=-2.0), "F1", "outside the scale 0–1"),
    ("negative SD", _record(SD_seed=-0.1), "SD_seed", "between 0 and half"),
    ("SD wider than the scale allows", _record(SD_boot_avg=60.0), "SD_boot_avg", "half the scale"),
    ("SD is JSON text", _record(SD_seed="0.5"), "SD_seed", "finite number"),
    ("missing SD column", _record(SD_boot_avg=_DROP), "SD_boot_avg", "is missing"),
    ("missing score column", _record(F1=_DROP), "F1", "is missing"),
    ("empty model", _record(Model=""), "Model", "non-empty"),
    ("model is a number list", _record(Model=[1]), "Model", "non-empty"),
]


@pytest.mark.parametrize(("label", "bad", "field", "words"), BAD_ROWS, ids=[b[0] for b in BAD_ROWS])
def test_bad_row_is_refused_and_nothing_stored(
    tmp_path: Path, label: str, bad: dict[str, object], field: str, words: str | None
) -> None:
    path = tmp_path / "data.jsonl"
    good2 = {**GOOD, "Task": "fr"}
    bad = {**bad, "Task": "es"} if "Task" in bad else bad
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps(good2) + "\n" + json.dumps(bad) + "\n")
    config = tmp_path / "c.yaml"
    config.write_text(CONFIG)
    store = tmp_path / "s.duckdb"
    try:
        api.import_reuben(path, config=config, store=store, metrics=["F1=squad_f1"], percent=True)
    except InputError as error:
        assert (error.line, error.field) == (3, field), str(error)
        assert str(path) in str(error)
        if words:
            assert words in error.reason
    else:
        raise AssertionError(f"{label}: accepted")
    assert _scores_count(store) == 0


def test_random_corruptions_are_refused_or_valid(tmp_path: Path) -> None:
    """Fuzz: random type/range corruptions of one cell; each is refused at its line and field,
    or what is read lies on the scale (the bad-row test above shows a refusal stores nothing)."""
    rng = np.random.default_rng(7)
    corruptions = ["x", None, -1.0, 1e9, float("nan"), [], {}, True, -0.0, 99.99, 100.0001, "1"]
    config = ReubenConfig.from_mapping({"score_col": "F1", "seed_sd_col": "SD_seed",
                                        "boot_sd_col": "SD_boot_avg"})  # fmt: skip
    refused = 0
    for trial in range(60):
        rows = [dict(GOOD, Task=f"l{i}") for i in range(4)]
        line = int(rng.integers(4))
        column = ["F1", "SD_seed", "SD_boot_avg"][int(rng.integers(3))]
        rows[line][column] = corruptions[int(rng.integers(len(corruptions)))]
        path = tmp_path / f"d{trial}.jsonl"
        path.write_text("".join(json.dumps(r, allow_nan=True) + "\n" for r in rows))
        try:
            read = read_reuben(path, config, metrics=["F1=squad_f1"], percent=True)
        except InputError as error:
            assert (error.line, error.field) == (line + 1, column)
            refused += 1
            continue
        assert read.frame["score"].between(0, 1).all()
        assert read.frame[["sigma_seed", "sigma_boot"]].stack().between(0, 0.5).all()
    assert refused > 20


def test_duplicate_row_and_bad_index_and_bad_lines(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(CONFIG)
    path = tmp_path / "dup.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps(GOOD) + "\n")
    with pytest.raises(InputError, match="repeat an earlier row") as caught:
        read_reuben(path, ReubenConfig.from_yaml(config), metrics=["F1=squad_f1"], percent=True)
    assert caught.value.line == 2

    path.write_text(json.dumps(GOOD) + "\n[1, 2]\n")
    with pytest.raises(InputError, match="JSON object") as caught:
        read_reuben(path, ReubenConfig.from_yaml(config), metrics=["F1=squad_f1"], percent=True)
    assert caught.value.line == 2

    reps = tmp_path / "reps.jsonl"
    reps.write_text(json.dumps({"Model": "m", "Task": "t", "Seed": 1.5, "Bootstrap": 0,
                                "F1": 0.5}) + "\n")  # fmt: skip
    idx = ReubenConfig.from_mapping({"score_col": "F1", "seed_idx_col": "Seed",
                                     "boot_idx_col": "Bootstrap"})  # fmt: skip
    with pytest.raises(InputError, match="non-negative integer") as caught:
        read_reuben(reps, idx, metrics=["F1=squad_f1"])
    assert (caught.value.line, caught.value.field) == (1, "Seed")


def test_config_and_metric_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="unknown reuben config key") as caught:
        ReubenConfig.from_mapping({"score_col": "F1", "seed_sd": "x"})
    assert caught.value.field == "seed_sd"
    with pytest.raises(InputError, match="neither SD columns"):
        ReubenConfig.from_mapping({"score_col": "F1"})
    with pytest.raises(InputError, match="must be a non-negative integer"):
        ReubenConfig.from_mapping({"seed_sd_col": "a", "boot_sd_col": "b",
                                   "num_bootstrap_resamples": "many"})  # fmt: skip
    bad_yaml = tmp_path / "c.yaml"
    bad_yaml.write_text("score_col: [unclosed\n")
    with pytest.raises(InputError, match="not valid YAML"):
        ReubenConfig.from_yaml(bad_yaml)
    with pytest.raises(InputError, match="COLUMN=NAME"):
        parse_metric_specs(["F1"])
    with pytest.raises(InputError, match="LO < HI"):
        parse_metric_specs(["comet=comet:100:0"])
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({**GOOD, "F1": 0.5}) + "\n")
    config = ReubenConfig.from_mapping({"score_col": "F1", "seed_sd_col": "SD_seed",
                                        "boot_sd_col": "SD_boot_avg"})  # fmt: skip
    with pytest.raises(InputError, match="names no glotbench metric") as caught:
        read_reuben(path, config, metrics=["F1=rouge_zz"])
    assert caught.value.field == "F1"
    rows = read_reuben(path, config, metrics=["F1=rouge_zz"], allow_unknown_metrics=True)
    assert rows.frame["metric"].tolist() == ["rouge_zz"]
