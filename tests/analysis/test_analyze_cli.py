"""``glotbench analyze variance|aggregate|compare|ranks`` as a user runs them, with --json."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from glotbench.data import xtreme_r_baselines

from ..conftest import CliResult
from .conftest import simulate, write_accuracy_runs

Cli = Callable[..., CliResult]

TOP_KEYS = {
    "variance": {"settings", "per_model", "per_language", "notes"},
    "aggregate": {"settings", "aggregates", "hierarchy", "notes"},
    "compare": {
        "settings",
        "languages",
        "effect_threshold",
        "pairs",
        "summary",
        "aggregates",
        "per_language",
        "language_summary",
        "pair_summary",
        "notes",
    },
    "ranks": {
        "settings",
        "summary",
        "distribution_format",
        "distribution",
        "notes",
        "euroeval_rank",
    },
}
RECORD_KEYS = {
    ("variance", "per_model"): {
        "model",
        "task",
        "n_languages",
        "mean",
        "sigma_b",
        "se_sigma_b",
        *(
            f"{c}_{s}"
            for c in ("sigma_seed", "sigma_boot", "sigma_w")
            for s in ("mean", "sd", "min", "max")
        ),
    },
    ("variance", "per_language"): {
        "model",
        "task",
        "language",
        "unit",
        "mean",
        "sigma_seed",
        "se_sigma_seed",
        "sigma_boot",
        "se_sigma_boot",
        "sigma_w",
        "se_sigma_w",
        "n_seeds",
        "n_replicates",
    },
    ("aggregate", "aggregates"): {
        "model",
        "aggregator",
        "score",
        "se_resampled",
        "ci_low",
        "ci_high",
        "se_closed_form",
        "se_languages",
        "n_languages",
    },
    ("aggregate", "hierarchy"): {"level", "name", "model", "score", "se", "n_tasks"},
    ("compare", "aggregates"): {
        "aggregator",
        "model_a",
        "model_b",
        "score_a",
        "score_b",
        "difference",
        "sd",
        "effect_size",
        "flagged",
        "ci_low",
        "ci_high",
        "share_a_better",
    },
    ("compare", "per_language"): {
        "model_a",
        "model_b",
        "language",
        "difference",
        "sd",
        "effect_size",
        "flagged",
    },
    ("compare", "language_summary"): {
        "language",
        "n_pairs",
        "n_flagged",
        "share_flagged",
        "median_abs_difference",
        "median_sd",
    },
    ("compare", "pair_summary"): {
        "model_a",
        "model_b",
        "n_languages",
        "n_flagged_a_better",
        "n_flagged_b_better",
    },
    ("ranks", "summary"): {
        "aggregator",
        "model",
        "mean_rank",
        "modal_rank",
        "rank_best",
        "rank_worst",
        "euroeval_rank_score",
        "euroeval_rank_low",
        "euroeval_rank_high",
    },
}
#: numbers that must be present in every record (never null) when the design supports them
ALWAYS_NUMBERS = {
    ("variance", "per_language"): ("mean", "sigma_w", "se_sigma_w"),
    ("aggregate", "aggregates"): ("score", "se_resampled", "ci_low", "ci_high"),
    ("aggregate", "hierarchy"): ("score", "se"),
    ("compare", "aggregates"): ("score_a", "score_b", "difference", "sd", "ci_low", "ci_high"),
    ("compare", "per_language"): ("difference", "sd"),
    ("ranks", "summary"): ("mean_rank", "euroeval_rank_score"),
}
DRAWS = ("--draws", "500")


def _replicated_frame(seed: int = 0) -> pd.DataFrame:
    """Three models, tasks t1 (de, en, fr) and t2 (de, sw), 3 seeds × 20 replicates."""
    rng = np.random.default_rng(seed)
    parts = []
    for task, languages in (("t1", ["de", "en", "fr"]), ("t2", ["de", "sw"])):
        values = simulate(
            rng,
            [72.0, 70.0, 60.0],
            tau=4,
            sigma_seed=0.5,
            sigma_boot=0.8,
            n_languages=len(languages),
            n_seeds=3,
            n_reps=20,
        )
        m, lang, s, b = np.nonzero(np.isfinite(values))
        parts.append(
            pd.DataFrame(
                {
                    "model": np.array(["A", "B", "C"])[m],
                    "task": task,
                    "language": np.array(languages)[lang],
                    "metric": "accuracy",
                    "seed": s,
                    "replicate": b,
                    "score": values[m, lang, s, b],
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


@pytest.fixture
def replicated_csv(tmp_path: Path) -> Path:
    path = tmp_path / "scores.csv"
    _replicated_frame().to_csv(path, index=False)
    return path


def _json(result: CliResult) -> dict[str, Any]:
    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.stderr
    return json.loads(result.stdout)


def _check_payload(command: str, payload: dict[str, Any]) -> None:
    # compare gives the full per-language table only with --per-language
    optional = {"per_language"} if command == "compare" else set()
    assert TOP_KEYS[command] - optional <= set(payload) <= TOP_KEYS[command]
    for (cmd, part), keys in RECORD_KEYS.items():
        if cmd == command and part in payload:
            assert payload[part], part
            for record in payload[part]:
                assert set(record) == keys, (part, set(record) ^ keys)
    for (cmd, part), names in ALWAYS_NUMBERS.items():
        if cmd == command and part in payload:
            for record in payload[part]:
                for name in names:
                    assert isinstance(record[name], int | float), (part, name, record)
    if command == "ranks":
        for record in payload["distribution"]:
            shares = [v for k, v in record.items() if k.startswith("rank_")]
            assert sum(shares) == pytest.approx(100.0)
    assert all(isinstance(n, str) for n in payload["notes"])


# -- every subcommand, documented keys, filters -----------------------------------------


@pytest.mark.parametrize("command", ["variance", "aggregate", "compare", "ranks"])
def test_every_subcommand_prints_the_documented_json(
    cli: Cli, replicated_csv: Path, command: str
) -> None:
    extra = () if command == "variance" else DRAWS
    if command == "compare":  # the full per-language table is given on request
        extra = (*extra, "--per-language")
    payload = _json(cli("analyze", command, "--input", replicated_csv, *extra, "--json"))
    _check_payload(command, payload)
    if command != "variance":
        assert payload["settings"]["n_draws"] == 500
        assert payload["settings"]["scheme"] == "nonparametric"
    if command == "variance":
        assert payload["notes"] == []
        units = {r["unit"] for r in payload["per_language"]}
        assert units == {"t1/de", "t1/en", "t1/fr", "t2/de", "t2/sw"}
        assert {r["n_seeds"] for r in payload["per_language"]} == {3}
        assert {r["n_replicates"] for r in payload["per_language"]} == {20}
    if command == "compare":
        assert payload["effect_threshold"] == 2.0
        pairs = {(r["model_a"], r["model_b"]) for r in payload["aggregates"]}
        assert pairs == {("A", "B"), ("A", "C"), ("B", "C")}
        a_c = [r for r in payload["aggregates"] if r["model_b"] == "C" and r["model_a"] == "A"]
        assert all(r["flagged"] and r["effect_size"] > 2 for r in a_c)


@pytest.mark.parametrize("command", ["variance", "aggregate", "compare", "ranks"])
def test_text_output_runs(cli: Cli, replicated_csv: Path, command: str) -> None:
    extra = () if command == "variance" else DRAWS
    result = cli("analyze", command, "--input", replicated_csv, *extra)
    assert result.exit_code == 0, result.stderr
    assert "A" in result.stdout and "C" in result.stdout


def test_filters(cli: Cli, replicated_csv: Path) -> None:
    payload = _json(
        cli(
            "analyze",
            "compare",
            "--input",
            replicated_csv,
            "--model",
            "A",
            "--model",
            "C",
            "--task",
            "t1",
            "--language",
            "de",
            "--language",
            "fr",
            "--metric",
            "accuracy",
            *DRAWS,
            "--json",
        )
    )
    assert payload["languages"] == ["de", "fr"]  # one task: units are labelled by language
    assert {(r["model_a"], r["model_b"]) for r in payload["aggregates"]} == {("A", "C")}
    payload = _json(cli("analyze", "variance", "--input", replicated_csv, "--model", "B", "--json"))
    assert {r["model"] for r in payload["per_model"]} == {"B"}
    # one summary row per task; B has 5 (task, language) cells in all
    assert len({r["task"] for r in payload["per_model"]}) == len(payload["per_model"])
    assert sum(r["n_languages"] for r in payload["per_model"]) == 5
    payload = _json(
        cli("analyze", "ranks", "--input", replicated_csv, "--task", "t2", *DRAWS, "--json")
    )
    assert {r["model"] for r in payload["summary"]} == {"A", "B", "C"}


def test_filter_matching_nothing_is_a_clear_error(cli: Cli, replicated_csv: Path) -> None:
    result = cli("analyze", "variance", "--input", replicated_csv, "--model", "nobody", "--json")
    assert result.exit_code == 2
    # a name the input does not hold is refused with the names it does hold
    assert "unknown model name(s) 'nobody'" in result.err and "the input has:" in result.err
    # with --json the error is also a JSON object on stdout
    assert "nobody" in json.loads(result.stdout)["error"]["message"]


def test_several_metrics_need_metric(cli: Cli, tmp_path: Path) -> None:
    frame = _replicated_frame()
    other = frame.assign(metric="f1", score=frame["score"] - 5)
    path = tmp_path / "two.csv"
    pd.concat([frame, other]).to_csv(path, index=False)
    result = cli("analyze", "variance", "--input", path, "--json")
    assert result.exit_code == 2 and "--metric" in result.err and "f1" in result.err
    payload = _json(cli("analyze", "variance", "--input", path, "--metric", "f1", "--json"))
    means = {(r["model"], r["task"]): r["mean"] for r in payload["per_model"]}
    per_language = other.groupby(["model", "task", "language"])["score"].mean()
    expected = per_language.groupby(["model", "task"]).mean()
    assert means == pytest.approx(expected.to_dict())


def test_bad_options_are_rejected(cli: Cli, replicated_csv: Path) -> None:
    result = cli("analyze", "compare", "--input", replicated_csv, "--scheme", "magic")
    assert result.exit_code == 2 and "parametric" in result.err
    result = cli("analyze", "compare", "--input", replicated_csv, "--resample-languages", "x")
    assert result.exit_code == 2 and "without" in result.err
    result = cli("analyze", "compare", "--input", replicated_csv, "--draws", "1")
    assert result.exit_code == 2 and "at least 2" in result.err


# -- error paths and design messages ------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("bad", ["nan", "", "abc", "inf"])
def test_nan_score_names_file_line_and_field(cli: Cli, tmp_path: Path, bad: str) -> None:
    path = tmp_path / "scores.csv"
    path.write_text(
        "model,language,seed,score\n"
        "B,de,0,0.5\n"
        "B,de,1,0.6\n"
        "A,de,0,0.5\n"
        f"A,en,0,{bad}\n"
        "A,en,1,0.4\n"
        "A,de,1,0.7\n"
    )
    for command in ("variance", "compare"):
        result = cli("analyze", command, "--input", path, "--json")
        assert result.exit_code == 2, result.stdout
        assert "scores.csv, line 5, field 'score'" in result.err, result.err
        assert "not a finite number" in result.err and "Traceback" not in result.stderr
        error = json.loads(result.stdout)["error"]  # --json: the error as JSON on stdout
        assert (error["line"], error["field"], error["exit_code"]) == (5, "score", 2)
    # filtering first: the line number is still the file's
    result = cli("analyze", "variance", "--input", path, "--model", "A", "--json")
    assert result.exit_code == 2 and "scores.csv, line 5" in result.err
    # the bad row filtered out: no error
    _json(cli("analyze", "variance", "--input", path, "--model", "B", "--json"))


def test_non_integer_seed_names_the_line(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "scores.csv"
    path.write_text("model,language,seed,score\nA,de,0,0.5\nA,de,x1,0.6\n")
    result = cli("analyze", "variance", "--input", path)
    assert result.exit_code == 2 and "line 3, field 'seed'" in result.err


def test_duplicate_replicates_are_an_error(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "scores.csv"
    path.write_text("model,language,seed,replicate,score\nA,de,0,0,0.5\nA,de,0,0,0.6\n")
    result = cli("analyze", "variance", "--input", path)
    assert result.exit_code == 2 and "line 3" in result.err and "repeats" in result.err


@pytest.fixture
def single_score_csv(tmp_path: Path) -> Path:
    """One seed, no replicates: one score per model and language (a published table)."""
    path = tmp_path / "single.csv"
    rng = np.random.default_rng(1)
    rows = [
        {"model": m, "language": lang, "score": 60 + 5 * i + rng.normal(0, 3)}
        for i, m in enumerate(["A", "B"])
        for lang in ["de", "en", "fr", "sw"]
    ]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_one_seed_and_no_replicates_say_so(cli: Cli, single_score_csv: Path) -> None:
    payload = _json(cli("analyze", "variance", "--input", single_score_csv, "--json"))
    notes = " ".join(payload["notes"])
    assert "seed-to-seed variance cannot be estimated" in notes
    assert "bootstrap variance cannot be estimated" in notes
    for record in payload["per_language"]:
        assert record["sigma_seed"] is None and record["sigma_boot"] is None
        assert record["sigma_w"] is None and record["n_seeds"] == 1
    for record in payload["per_model"]:
        assert isinstance(record["sigma_b"], float)

    # the default scheme (auto) analyses one score per cell languages-only
    payload = _json(cli("analyze", "compare", "--input", single_score_csv, *DRAWS, "--json"))
    assert payload["settings"]["scheme"] == "languages-only"
    assert payload["settings"]["scheme_requested"] == "auto"
    result = cli(
        "analyze", "compare", "--input", single_score_csv, "--scheme", "nonparametric", *DRAWS,
        "--json",
    )  # fmt: skip
    assert result.exit_code == 2 and "single score" in json.loads(result.stdout)["error"]["message"]
    assert "single score" in result.err and "--scheme parametric" in result.err
    result = cli("analyze", "ranks", "--input", single_score_csv, "--scheme", "parametric", *DRAWS)
    assert result.exit_code == 2 and "within-language SD" in result.err
    # a published table's uncertainty: languages only
    payload = _json(
        cli(
            "analyze",
            "compare",
            "--input",
            single_score_csv,
            "--scheme",
            "languages-only",
            "--resample-languages",
            "with",
            *DRAWS,
            "--json",
        )
    )
    assert payload["aggregates"][0]["sd"] > 0


def test_one_seed_with_replicates_notes_missing_seed_variance(cli: Cli, tmp_path: Path) -> None:
    frame = _replicated_frame()
    frame = frame[frame["seed"] == 0]
    path = tmp_path / "one_seed.csv"
    frame.to_csv(path, index=False)
    payload = _json(cli("analyze", "variance", "--input", path, "--json"))
    assert any("seed-to-seed variance cannot be estimated" in n for n in payload["notes"])
    assert all(r["sigma_w"] == pytest.approx(r["sigma_boot"]) for r in payload["per_language"])
    _check_payload(
        "compare",
        _json(cli("analyze", "compare", "--input", path, *DRAWS, "--per-language", "--json")),
    )


def test_unbalanced_design_notes_name_the_model(cli: Cli, tmp_path: Path) -> None:
    frame = _replicated_frame()
    frame = frame[~((frame["model"] == "B") & (frame["language"] == "fr"))]
    frame = frame[~((frame["model"] == "C") & (frame["seed"] == 2))]  # C has two seeds
    path = tmp_path / "unbalanced.csv"
    frame.to_csv(path, index=False)
    payload = _json(cli("analyze", "variance", "--input", path, "--json"))
    assert any("unbalanced design" in n for n in payload["notes"])
    counts: dict[str, int] = {}
    for r in payload["per_model"]:
        counts[r["model"]] = counts.get(r["model"], 0) + r["n_languages"]
    assert counts == {"A": 5, "B": 4, "C": 5}
    assert {r["n_seeds"] for r in payload["per_language"] if r["model"] == "C"} == {2}
    for command in ("aggregate", "compare", "ranks"):
        payload = _json(cli("analyze", command, "--input", path, *DRAWS, "--json"))
        _check_payload(command, payload)
        assert any("B lacks t1/fr" in n for n in payload["notes"]), payload["notes"]
    payload = _json(cli("analyze", "compare", "--input", path, *DRAWS, "--json"))
    assert "t1/fr" not in payload["languages"]


@pytest.mark.slow
def test_zero_variance_gives_valid_json_without_nan(cli: Cli, tmp_path: Path) -> None:
    """All replicates identical: no crash; SDs 0; effects 0 (same scores) or null + note."""
    rows = [
        {"model": m, "language": lang, "seed": s, "replicate": b, "score": score}
        for m, score in (("A", 0.75), ("B", 0.5), ("Bcopy", 0.5))
        for lang in ("de", "en", "fr")
        for s in range(2)
        for b in range(5)
    ]
    path = tmp_path / "zero.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    payload = _json(cli("analyze", "variance", "--input", path, "--json"))
    for record in payload["per_language"]:
        for name in ("sigma_seed", "sigma_boot", "sigma_w", "se_sigma_w"):
            assert record[name] == 0.0, name
    payload = _json(
        cli("analyze", "compare", "--input", path, "--draws", "2000", "--per-language", "--json")
    )
    _check_payload("compare", payload)
    for record in payload["aggregates"] + payload["per_language"]:
        assert record["sd"] == 0.0
        if record["model_a"] == "B" and record["model_b"] == "Bcopy":
            assert record["effect_size"] == 0.0 and record["flagged"] is False
        else:
            assert record["effect_size"] is None and record["flagged"] is True
    assert any("infinite" in n for n in payload["notes"])
    payload = _json(cli("analyze", "aggregate", "--input", path, "--draws", "2000", "--json"))
    assert all(r["se_resampled"] == 0.0 for r in payload["aggregates"])
    payload = _json(cli("analyze", "ranks", "--input", path, *DRAWS, "--json"))
    summary = {(r["aggregator"], r["model"]): r for r in payload["summary"]}
    assert summary[("mean", "A")]["rank_worst"] == 1
    assert summary[("mean", "B")]["rank_best"] == summary[("mean", "Bcopy")]["rank_best"] == 2
    for command in ("aggregate", "compare", "ranks"):
        _check_payload(
            command,
            _json(
                cli("analyze", command, "--input", path, "--scheme", "parametric", *DRAWS, "--json")
            ),
        )


@pytest.mark.slow
def test_ready_sd_summary_with_the_parametric_scheme(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "summary.csv"
    pd.DataFrame(
        {
            "model": ["A"] * 3 + ["B"] * 3,
            "language": ["de", "en", "fr"] * 2,
            "score": [80.0, 75.0, 70.0, 70.0, 72.0, 65.0],
            "sigma_seed": [0.5, 0.6, 0.4, 0.8, 0.7, 0.9],
            "sigma_boot": [1.0, 1.1, 0.9, 1.2, 1.0, 1.3],
        }
    ).to_csv(path, index=False)
    payload = _json(cli("analyze", "variance", "--input", path, "--json"))
    w = {(r["model"], r["language"]): r["sigma_w"] for r in payload["per_language"]}
    assert w[("A", "de")] == pytest.approx(np.hypot(0.5, 1.0))
    assert any("plug-in SEs need n_seeds" in n for n in payload["notes"])
    for command in ("aggregate", "compare", "ranks"):
        nonparametric = ("--scheme", "nonparametric", *DRAWS, "--json")
        result = cli("analyze", command, "--input", path, *nonparametric)
        assert result.exit_code == 2 and "--scheme parametric" in result.err
        # the default scheme (auto) draws ready SDs parametrically
        default = _json(cli("analyze", command, "--input", path, *DRAWS, "--json"))
        assert default["settings"]["scheme"] == "parametric"
        payload = _json(
            cli("analyze", command, "--input", path, "--scheme", "parametric", *DRAWS, "--json")
        )
        _check_payload(command, payload)
        assert payload["settings"]["scheme"] == "parametric"
    payload = _json(
        cli(
            "analyze",
            "aggregate",
            "--input",
            path,
            "--scheme",
            "parametric",
            "--resample-languages",
            "none",
            "--draws",
            "4000",
            "--json",
        )
    )
    row = next(r for r in payload["aggregates"] if r["model"] == "A" and r["aggregator"] == "mean")
    closed = np.sqrt(0.5**2 + 1.0**2 + 0.6**2 + 1.1**2 + 0.4**2 + 0.9**2) / 3
    assert row["se_closed_form"] == pytest.approx(closed)
    assert row["se_resampled"] == pytest.approx(closed, rel=4 / np.sqrt(2 * 3999))


# -- the embedded XTREME-R data -------------------------------------------------------------


@pytest.fixture(scope="module")
def xtreme_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("xtreme") / "xtreme_r.csv"
    xtreme_r_baselines().to_csv(path, index=False)
    return path


def test_xtreme_r_between_language_sds(cli: Cli, xtreme_csv: Path) -> None:
    scores = xtreme_r_baselines()
    for task, group in scores.groupby("task"):
        payload = _json(cli("analyze", "variance", "--input", xtreme_csv, "--task", task, "--json"))
        per_model = {r["model"]: r for r in payload["per_model"]}
        expected = group.groupby("model")["score"]
        assert set(per_model) == set(expected.groups)
        for model, values in expected:
            row = per_model[model]
            assert row["sigma_b"] == pytest.approx(values.std(ddof=1), rel=1e-12), (task, model)
            assert row["mean"] == pytest.approx(values.mean(), rel=1e-12)
            assert row["n_languages"] == len(values)
            assert row["se_sigma_b"] == pytest.approx(
                values.std(ddof=1) / np.sqrt(2 * (len(values) - 1)), rel=1e-12
            )
        notes = " ".join(payload["notes"])
        assert "seed-to-seed variance cannot be estimated" in notes, task
        assert "bootstrap variance cannot be estimated" in notes, task


def test_xtreme_r_languages_only_comparison(cli: Cli, xtreme_csv: Path) -> None:
    payload = _json(
        cli(
            "analyze",
            "compare",
            "--input",
            xtreme_csv,
            "--task",
            "xnli",
            "--scheme",
            "languages-only",
            "--resample-languages",
            "with",
            "--draws",
            "4000",
            "--json",
        )
    )
    _check_payload("compare", payload)
    xnli = (
        xtreme_r_baselines()
        .query("task == 'xnli'")
        .pivot(index="language", columns="model", values="score")
    )
    row = next(
        r
        for r in payload["aggregates"]
        if r["aggregator"] == "mean" and {r["model_a"], r["model_b"]} == {"XLM-R Large", "mBERT"}
    )
    diff = xnli[row["model_a"]] - xnli[row["model_b"]]
    assert row["difference"] == pytest.approx(diff.mean())
    assert row["sd"] == pytest.approx(diff.std(ddof=0) / np.sqrt(len(diff)), rel=0.1)
    assert row["flagged"]


def test_xtreme_r_several_tasks(cli: Cli, xtreme_csv: Path) -> None:
    """The table mixes metrics (one per task); F1 tasks are unbalanced across models."""
    # without --metric each task is analysed on its only metric (issue 12)
    languages_only = ("--scheme", "languages-only", "--resample-languages", "without")
    # mT5-XXL translate-train-all has TyDiQA-GoldP only (Table 21's "mT5" row, issue 23) and
    # shares no language with mT5-XXL, so it is left out of these designs
    models = tuple(f"--model={m}" for m in ZERO_SHOT_AND_MBERT_TRANSLATE_TRAIN)
    payload = _json(
        cli("analyze", "ranks", "--input", xtreme_csv, *models, *languages_only, "--k", "3",
            *DRAWS, "--json")
    )  # fmt: skip
    notes = " ".join(payload["notes"])
    assert "metric per task:" in notes and "lareqa: map@20" in notes and "xnli: accuracy" in notes
    payload = _json(
        cli(
            "analyze",
            "ranks",
            "--input",
            xtreme_csv,
            "--metric",
            "f1",
            *models,
            "--scheme",
            "languages-only",
            "--resample-languages",
            "without",
            "--k",
            "3",
            *DRAWS,
            "--json",
        )
    )
    _check_payload("ranks", payload)
    notes = " ".join(payload["notes"])
    # models without a whole F1 task leave the overall view, named with the tasks they lack
    # (glotbench.analysis.overall: the leaderboard's rule, on every door)
    assert "left out of the overall view" in notes
    assert "mT5-XXL (no score on mlqa, tydiqa-goldp, wikiann-ner)" in notes
    assert "mBERT translate-train (no score on wikiann-ner)" in notes
    assert {r["model"] for r in payload["summary"]} == {"mBERT", "XLM-R Large"}


ZERO_SHOT_AND_MBERT_TRANSLATE_TRAIN = (
    "mBERT",
    "XLM-R Large",
    "mT5-XXL",
    "mBERT translate-train",
    "mBERT translate-train-all",
)


# -- the store path ---------------------------------------------------------------------------


@pytest.mark.slow
def test_store_path(cli: Cli, tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    correct = {
        (model, language, seed): (rng.random(150) < p).astype(float)
        for model, p in (("A", 0.8), ("B", 0.6))
        for language in ("de", "en")
        for seed in range(2)
    }
    store = write_accuracy_runs(tmp_path / "runs.duckdb", correct)
    payload = _json(cli("analyze", "variance", "--store", store, "--replicates", "300", "--json"))
    _check_payload("variance", payload)
    assert payload["notes"] == []
    assert {r["n_replicates"] for r in payload["per_language"]} == {300}
    for record in payload["per_language"]:
        p = np.mean([correct[(record["model"], record["language"], s)].mean() for s in range(2)])
        assert record["mean"] == pytest.approx(p, abs=0.01)
        assert record["sigma_boot"] == pytest.approx(np.sqrt(p * (1 - p) / 150), rel=0.15)
    for command in ("aggregate", "compare", "ranks"):
        payload = _json(
            cli(
                "analyze",
                command,
                "--store",
                store,
                "--replicates",
                "200",
                "--language",
                "de",
                *DRAWS,
                "--json",
            )
        )
        _check_payload(command, payload)
    assert payload["summary"][0]["model"] in {"A", "B"}


@pytest.mark.slow
def test_module_entry_point_prints_json(tmp_path: Path, replicated_csv: Path) -> None:
    """The real process: ``python -m glotbench analyze ranks --json``."""
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "glotbench",
            "analyze",
            "ranks",
            "--input",
            str(replicated_csv),
            "--draws",
            "300",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    _check_payload("ranks", json.loads(result.stdout))
    assert result.stderr == ""  # no stray warnings


# -- compare: summaries by default, the full pair table on request ------------------------


def test_compare_summarises_per_language_and_writes_the_full_table(
    cli: Cli, replicated_csv: Path, tmp_path: Path
) -> None:
    payload = _json(cli("analyze", "compare", "--input", replicated_csv, *DRAWS, "--json"))
    _check_payload("compare", payload)
    assert "per_language" not in payload
    assert {r["language"] for r in payload["language_summary"]} == set(payload["languages"])
    assert all(r["n_pairs"] == 3 for r in payload["language_summary"])
    assert {r["aggregator"] for r in payload["aggregates"]} == {"mean", "geometric_mean", "median"}
    out = tmp_path / "pairs.parquet"
    written = _json(
        cli("analyze", "compare", "--input", replicated_csv, *DRAWS, "--pairs-out", out, "--json")
    )
    table = pd.read_parquet(out)
    assert len(table) == 3 * len(written["languages"])
    full = _json(
        cli("analyze", "compare", "--input", replicated_csv, *DRAWS, "--per-language", "--json")
    )
    records = table.to_dict(orient="records")
    assert len(records) == len(full["per_language"])
    # pytest.approx compares a mapping or a flat sequence of numbers, not a list of dicts
    for written_row, full_row in zip(records, full["per_language"], strict=True):
        assert written_row == pytest.approx(full_row)
    text = cli("analyze", "compare", "--input", replicated_csv, *DRAWS)
    assert text.exit_code == 0 and "flagged pair differences" in text.stdout
    help_text = cli("analyze", "compare", "--help").stdout
    assert "--pairs-out" in help_text and "--per-language" in help_text
