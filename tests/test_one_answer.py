"""One question, one answer (issue 22 item 1): every door gives the same numbers.

With the same settings — the defaults, or modest ones passed identically —
``glotbench leaderboard``, ``glotbench report``, ``glotbench analyze
aggregate|compare|ranks`` and the Python API read the same quantity (score,
SE, interval bounds, a pair's difference, rank intervals) back for four kinds of
store: runs with per-example statistics, imported scores, a EuroEval import and
an lm-evaluation-harness import (the real harness outputs of
``tests/fixtures/importers``). The leaderboard page and ``analyze compare``
agree to every digit the page stores; the report to every digit it prints.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import typer.main

from glotbench import api
from glotbench.analysis.settings import DEFAULT_SETTINGS, AnalysisSettings
from glotbench.data import xtreme_r_baselines

from .conftest import CliResult
from .report.conftest import write_store

Cli = Callable[..., CliResult]
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "importers"
#: modest settings, passed identically through every door (the defaults are tested below)
SMALL = AnalysisSettings(n_draws=400, n_replicates=60, seed=3, confidence_level=0.9)
STORE_KINDS = ("runs", "scores", "euroeval", "lm-eval")


def _options(settings: AnalysisSettings) -> list[str]:
    """The command-line options that give ``settings``."""
    out = [
        "--draws", str(settings.n_draws), "--replicates", str(settings.n_replicates),
        "--seed", str(settings.seed), "--confidence-level", repr(settings.confidence_level),
        "--scheme", settings.scheme, "--resample-languages", settings.languages,
    ]  # fmt: skip
    if settings.k is not None:
        out += ["--k", str(settings.k)]
    for metric in settings.metric:
        out += ["--metric", metric]
    return out


def _lm_eval_other_model(folder: Path) -> Path:
    """A copy of the real lm-eval output whose every third example's accuracy is flipped."""
    shutil.copytree(FIXTURES / "lm_eval_out", folder)
    for path in folder.glob("*/samples_*.jsonl"):
        task, _, stamp = path.stem.removeprefix("samples_").rpartition("_")
        lines, accuracies = [], []
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if "acc" in record:
                if record["doc_id"] % 3 == 0:
                    record["acc"] = 1.0 - float(record["acc"])
                accuracies.append(float(record["acc"]))
            lines.append(json.dumps(record))
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        if accuracies:  # the harness's aggregate of the same samples, as lm-eval writes it
            results_path = path.with_name(f"results_{stamp}.json")
            results = json.loads(results_path.read_text(encoding="utf-8"))
            results["results"][task]["acc,none"] = float(np.mean(accuracies))
            results_path.write_text(json.dumps(results), encoding="utf-8")
    return folder


def _euroeval_other_model(path: Path) -> Path:
    """The real EuroEval results, each model renamed and every score 0.9x (two more models)."""
    lines = []
    for line in (FIXTURES / "euroeval" / "euroeval_benchmark_results.jsonl").open(encoding="utf-8"):
        if not line.strip():
            continue
        record = json.loads(line)
        record["model"] = "scaled/" + record["model"]
        for row in record["results"]["raw"]:
            for key, value in row.items():
                if key.startswith("test_") and isinstance(value, float):
                    row[key] = value * 0.9
        record["results"]["total"] = {
            k: (v * 0.9 if isinstance(v, float) else v)
            for k, v in record["results"].get("total", {}).items()
        }
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _scores_file(path: Path) -> Path:
    """Per-seed scores of three models on two tasks × four languages (a tidy scores file)."""
    rng = np.random.default_rng(11)
    rows = [
        {
            "model": model,
            "task": task,
            "language": language,
            "metric": "accuracy",
            "seed": seed,
            "score": float(np.clip(base + rng.normal(0, 0.03), 0, 1)),
        }
        for model, base in (("alpha", 0.62), ("beta", 0.58), ("gamma", 0.45))
        for task in ("nli", "qa")
        for language in ("de", "fi", "sw", "ja")
        for seed in range(3)
    ]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One store of each kind."""
    folder = tmp_path_factory.mktemp("stores")
    out = {
        "runs": write_store(
            folder / "runs.duckdb",
            {"m-high": 0.72, "m-mid": 0.66, "m-low": 0.5},
            languages=("da", "sv", "fi"),
            seeds=(0, 1),
            n=40,
        )
    }
    out["scores"] = folder / "scores.duckdb"
    api.import_scores(_scores_file(folder / "scores.csv"), store=out["scores"])
    out["euroeval"] = folder / "euroeval.duckdb"
    api.import_euroeval(
        FIXTURES / "euroeval" / "euroeval_benchmark_results.jsonl", store=out["euroeval"]
    )
    api.import_euroeval(_euroeval_other_model(folder / "scaled.jsonl"), store=out["euroeval"])
    out["lm-eval"] = folder / "lm_eval.duckdb"
    api.import_lm_eval(FIXTURES / "lm_eval_out", store=out["lm-eval"])
    api.import_lm_eval(
        _lm_eval_other_model(folder / "other_out"), store=out["lm-eval"], model="other-gpt2"
    )
    return out


def _json(result: CliResult) -> dict[str, Any]:
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def _significant(value: float, digits: int = 6) -> float:
    """``value`` to ``digits`` significant digits, as the page stores a pair's numbers."""
    return float(f"{value:.{digits}g}")


def _report_overall(path: Path) -> dict[str, dict[str, str]]:
    """The report's overall table as printed: model -> column -> cell text."""
    text = path.read_text(encoding="utf-8")
    table = text[text.index("<table") : text.index("</table>")]
    head = re.findall(r"<th[^>]*>(.*?)</th>", table)
    rows = re.findall(r"<tr>(.*?)</tr>", table[table.index("<tbody>") :])
    out = {}
    for row in rows:
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
        name = re.sub(r"<sup>.*?</sup>", "", cells[0])  # note marks
        out[re.sub(r"<[^>]+>", "", name).strip()] = dict(zip(head, cells, strict=True))
    return out


def _printed(value: float, text: str) -> str:
    """``value`` printed with as many decimals as ``text`` has."""
    decimals = len(text.partition(".")[2])
    return f"{value:.{decimals}f}"


def _read_doors(
    cli: Cli,
    store: Path | None,
    settings: AnalysisSettings | None,
    tmp: Path,
    published: list[str] | None = None,
) -> dict:
    """Every door's answer for ``store``: None settings = every door with its defaults.

    ``published`` (no store): the embedded XTREME-R table, ``--demo`` on the pages and
    ``--input`` of the same table, restricted to these models, in the analyses.
    """
    options = [] if settings is None else _options(settings)
    request = settings or AnalysisSettings()
    if published is None:
        page_input = analysis_input = ["--store", store]
        source = api.load_replicated(
            store=store,
            metric=request.metric_choice,
            n_replicates=request.n_replicates,
            seed=request.seed,
        )
    else:
        table = tmp / "xtreme_r.csv"
        xtreme_r_baselines().to_csv(table, index=False)
        page_input = ["--demo"]
        analysis_input = ["--input", table, *(x for m in published for x in ("--model", m))]
        source = api.load_replicated(input=table, models=published)
    headline = (
        api.analyze_headline(source) if settings is None else api.analyze_headline(source, settings)
    )
    api_pairs = (
        api.analyze_compare(source) if settings is None else api.analyze_compare(source, settings)
    )
    page = _json(cli("leaderboard", *page_input, "--out", tmp / "page", *options, "--json"))
    payload = json.loads((tmp / "page" / "leaderboard.json").read_text(encoding="utf-8"))
    assert page["kind"] == "leaderboard" and page["settings"] == payload["settings"]
    report = _json(cli("report", *page_input, "--out", tmp / "report.html", *options, "--json"))
    assert report["settings"] == payload["settings"]
    return {
        "source": source,
        "api": headline,
        "api_pairs": api_pairs,
        "page": payload,
        "report": _report_overall(tmp / "report.html"),
        "report_text": (tmp / "report.html").read_text(encoding="utf-8"),
        "aggregate": _json(cli("analyze", "aggregate", *analysis_input, *options, "--json")),
        "compare": _json(cli("analyze", "compare", *analysis_input, *options, "--json")),
        "ranks": _json(cli("analyze", "ranks", *analysis_input, *options, "--json")),
        "settings": request,
    }


def _check_one_answer(doors: dict[str, Any]) -> int:
    """The same score, SE, interval, pair differences and ranks from every door; checks made."""
    checks = 0
    overall = doors["api"].overall
    page_rows = {row["model"]: row for row in doors["page"]["views"]["overall"]["rows"]}
    aggregate = {
        r["model"]: r for r in doors["aggregate"]["aggregates"] if r["aggregator"] == "mean"
    }
    for m, model in enumerate(overall.models):
        api_row = {
            "score": overall.observed[m],
            "se": overall.se[m],
            "ci_low": overall.ci_low[m],
            "ci_high": overall.ci_high[m],
        }
        # analyze aggregate (JSON, full precision) = the API, exactly
        cli_row = aggregate[model]
        assert cli_row["score"] == api_row["score"]
        assert cli_row["se_resampled"] == api_row["se"]
        assert [cli_row["ci_low"], cli_row["ci_high"]] == [api_row["ci_low"], api_row["ci_high"]]
        # the page stores 4 decimals of the same numbers
        row = page_rows[model]
        assert row["score"] == round(cli_row["score"], 4)
        assert row["se"] == round(cli_row["se_resampled"], 4)
        assert row["ci"] == [round(cli_row["ci_low"], 4), round(cli_row["ci_high"], 4)]
        # the report prints them
        printed = doors["report"][model]
        level = f"{doors['settings'].confidence_level * 100:g}%"
        for column, key in (
            ("score", "score"),
            ("SE", "se"),
            (f"{level} CI low", "ci_low"),
            (f"{level} CI high", "ci_high"),
        ):
            assert printed[column] == _printed(api_row[key], printed[column]), (model, column)
        checks += 1
    # pairs: the page's overall difference of each pair = analyze compare's = the API's
    compare = {
        (r["model_a"], r["model_b"]): r
        for r in doors["compare"]["aggregates"]
        if r["aggregator"] == "mean"
    }
    api_compare = doors["api_pairs"].aggregates
    api_compare = api_compare[api_compare["aggregator"] == "mean"]
    for row in api_compare.to_dict(orient="records"):
        cli_row = compare[(row["model_a"], row["model_b"])]
        for key in ("difference", "sd", "ci_low", "ci_high", "share_a_better"):
            assert cli_row[key] == row[key], key
    pairwise = doors["page"]["pairwise"]
    if len(overall.models) > 1:
        assert pairwise is not None and pairwise["pairs"]
        names = pairwise["models"]
        for key, pair in pairwise["pairs"].items():
            i, j = (int(x) for x in key.split(","))
            a, b = names[i], names[j]
            row, sign = (compare[(a, b)], 1) if (a, b) in compare else (compare[(b, a)], -1)
            low, high = (
                (row["ci_low"], row["ci_high"]) if sign > 0 else (-row["ci_high"], -row["ci_low"])
            )
            assert pair["overall"]["difference"] == _significant(sign * row["difference"])
            assert pair["overall"]["sd"] == _significant(row["sd"])
            assert pair["overall"]["ci"] == [_significant(low), _significant(high)]
            checks += 1
        # ranks: the page's rank intervals = analyze ranks'
        ranks = {r["model"]: r for r in doors["ranks"]["summary"] if r["aggregator"] == "mean"}
        for model, row in page_rows.items():
            if row.get("rank"):
                assert row["rank"]["best"] == ranks[model]["rank_best"]
                assert row["rank"]["worst"] == ranks[model]["rank_worst"]
                assert row["rank"]["mean"] == pytest.approx(ranks[model]["mean_rank"], abs=5e-3)
                checks += 1
    else:
        assert pairwise is None
    # every output records the settings it used
    record = doors["settings"].record(doors["source"])
    for payload in (doors["aggregate"], doors["compare"], doors["ranks"]):
        assert {k: payload["settings"][k] for k in record} == record
    assert doors["page"]["settings"] == record
    assert record["description"] in doors["report_text"].replace("&#x27;", "'")
    return checks


@pytest.mark.slow
@pytest.mark.parametrize("kind", STORE_KINDS)
def test_every_door_gives_the_same_numbers(
    cli: Cli, stores: dict[str, Path], kind: str, tmp_path: Path
) -> None:
    doors = _read_doors(cli, stores[kind], SMALL, tmp_path)
    assert len(doors["api"].overall.models) >= 2, "a store of two or more models, so pairs exist"
    assert _check_one_answer(doors) >= 3


@pytest.mark.slow
def test_a_published_table_gives_the_same_numbers(cli: Cli, tmp_path: Path) -> None:
    """The issue's example: the XTREME-R demo page vs ``analyze`` on the same table.

    One score per model and language: the scheme is languages-only on every door.
    The page ranks the models with every task; the analyses are given those models.
    """
    complete = ["XLM-R Large", "mBERT"]
    doors = _read_doors(cli, None, SMALL, tmp_path, published=complete)
    ranked = [r["model"] for r in doors["page"]["views"]["overall"]["rows"] if r["score"]]
    assert sorted(ranked) == sorted(complete)
    assert doors["page"]["settings"]["scheme"] == "languages-only"
    assert _check_one_answer(doors) >= 3


@pytest.mark.slow
def test_a_task_view_is_the_task_analysed_alone(
    cli: Cli, stores: dict[str, Path], tmp_path: Path
) -> None:
    """The page's task view = ``analyze aggregate --task`` (each task's units alone)."""
    store = stores["runs"]
    _json(cli("leaderboard", "--store", store, "--out", tmp_path, *_options(SMALL), "--json"))
    payload = json.loads((tmp_path / "leaderboard.json").read_text(encoding="utf-8"))
    for task in ("sentiment", "xnli"):
        result = _json(
            cli(
                "analyze", "aggregate", "--store", store, "--task", task, *_options(SMALL), "--json"
            )
        )
        rows = {r["model"]: r for r in payload["views"][f"task:{task}"]["rows"]}
        for record in result["aggregates"]:
            if record["aggregator"] == "mean":
                row = rows[record["model"]]
                assert row["score"] == round(record["score"], 4)
                assert row["se"] == round(record["se_resampled"], 4)


@pytest.mark.slow
def test_true_defaults_agree_on_a_tiny_store(cli: Cli, tmp_path: Path) -> None:
    """No options anywhere: 10,000 draws from 1,000 replicates per run, on every door."""
    store = write_store(
        tmp_path / "tiny.duckdb", {"a": 0.7, "b": 0.55}, languages=("da", "sv"),
        tasks=("xnli",), seeds=(0, 1), n=12,
    )  # fmt: skip
    doors = _read_doors(cli, store, None, tmp_path)
    assert doors["settings"] == DEFAULT_SETTINGS
    assert doors["page"]["settings"]["n_draws"] == 10_000
    assert doors["page"]["settings"]["n_replicates"] == 1000
    assert doors["source"].n_replicates == 1000
    assert _check_one_answer(doors) >= 3


def test_every_store_option_is_the_one_declared(cli: Cli) -> None:
    """Every command's ``--store`` reads $GLOTBENCH_STORE (cli/_options.StoreOption)."""
    from glotbench.cli import app

    def walk(command: Any, path: str) -> list[tuple[str, Any]]:
        found = [(path, p) for p in getattr(command, "params", []) if "--store" in p.opts]
        for name, sub in getattr(command, "commands", {}).items():
            found += walk(sub, f"{path} {name}")
        return found

    options = walk(typer.main.get_command(app), "glotbench")
    assert len(options) >= 20
    for path, option in options:
        assert option.envvar == "GLOTBENCH_STORE", path


def test_glotbench_store_is_honoured_by_significance(
    cli: Cli, stores: dict[str, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Significance read the store from $GLOTBENCH_STORE (it ignored it before)."""
    args = [
        "significance", "bootstrap", "--dataset", "xnli", "--task", "xnli", "--language", "da",
        "--metric", "accuracy", "--model", "m-high", "--model", "m-low", "--run-seed", "0",
        "--resamples", "200", "--json",
    ]  # fmt: skip
    typed = _json(cli(*args[:2], "--store", stores["runs"], *args[2:]))
    monkeypatch.setenv("GLOTBENCH_STORE", str(stores["runs"]))
    assert _json(cli(*args)) == typed
    # files typed on the command line win over the environment's store
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("1\n0\n1\n1\n", encoding="utf-8")
    b.write_text("0\n0\n1\n0\n", encoding="utf-8")
    result = _json(cli("significance", "bootstrap", a, b, "--resamples", "100", "--json"))
    assert result["difference"] == pytest.approx(0.5)


@pytest.mark.slow
def test_demo_typed_wins_over_the_environment_store(
    cli: Cli, stores: dict[str, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("GLOTBENCH_STORE", str(stores["runs"]))
    result = _json(cli("leaderboard", "--demo", "--out", tmp_path, "--draws", "50", "--json"))
    assert "XLM-R Large" in result["models"]


def test_the_lock_timeout_is_a_parameter_not_an_environment_variable(
    cli: Cli, stores: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from glotbench.store import lock

    monkeypatch.delenv(lock.LOCK_TIMEOUT_ENV, raising=False)
    try:
        assert cli("--lock-timeout", "7", "show", "--store", stores["runs"]).exit_code == 0
        assert lock.LOCK_TIMEOUT_ENV not in os.environ
        assert lock.lock_timeout() == 7.0
        # the next command without the option is back to the default
        assert cli("show", "--store", stores["runs"]).exit_code == 0
        assert lock.lock_timeout() == lock.DEFAULT_LOCK_TIMEOUT
        # the environment variable stays a documented fallback
        monkeypatch.setenv(lock.LOCK_TIMEOUT_ENV, "3")
        assert cli("show", "--store", stores["runs"]).exit_code == 0
        assert lock.lock_timeout() == 3.0
    finally:
        lock.set_lock_timeout(None)
    # API functions that open a store take it as an argument
    summary = api.show_store(stores["runs"], lock_timeout=0)
    assert summary.counts["runs"] > 0


def test_settings_validate_and_describe_themselves() -> None:
    with pytest.raises(api.InputError, match="scheme"):
        AnalysisSettings(scheme="bayesian")  # type: ignore[arg-type]
    with pytest.raises(api.InputError, match="confidence level"):
        AnalysisSettings(confidence_level=1.5)
    settings = AnalysisSettings.with_metric("mcc", n_draws=2000)
    assert settings.metric == ("mcc",) and settings.metric_choice == ["mcc"]
    assert AnalysisSettings().metric_choice is None
    text = DEFAULT_SETTINGS.describe()
    assert "10,000 draws" in text and "1,000 bootstrap replicates" in text and "95%" in text
    assert math.isclose(DEFAULT_SETTINGS.z, 1.959963984540054)


@pytest.mark.slow
def test_every_analysis_json_records_its_settings(cli: Cli, stores: dict[str, Path]) -> None:
    """A ``settings`` object in every analysis's ``--json``, with the options the request used."""
    runs, euroeval = stores["runs"], stores["euroeval"]
    cases = {
        ("variance", "n_replicates", 60): ["--store", runs, "--replicates", "60"],
        ("transfer", "min_size", 3): ["--example", "--min-size", "3"],
        ("lmm", "formula", "score ~ task + (1 | model)"): [
            "--store", runs, "--formula", "score ~ task + (1 | model)", "--seed", "4",
        ],
        ("euroeval-rank", "n_bootstraps", 50): ["--store", euroeval, "--bootstraps", "50"],
        ("datasize", "n_draws", 5): [
            "--store", runs, "--dataset", "xnli", "--task", "xnli", "--language", "da",
            "--metric", "accuracy", "--sizes", "10,all", "--draws", "5", "--no-aso",
        ],
    }  # fmt: skip
    for (command, key, value), args in cases.items():
        payload = _json(cli("analyze", command, *args, "--json"))
        assert payload["settings"][key] == value, command


@pytest.mark.slow
def test_an_unbalanced_store_gives_the_same_numbers(cli: Cli, tmp_path: Path) -> None:
    """One rule for the overall view on every door (glotbench.analysis.overall).

    ``m-notask`` has no sentiment scores: it leaves the overall view (with a note
    naming it and the task) but keeps its xnli row. ``m-nolang`` lacks Finnish: it
    stays, and the Finnish cells leave the overall view for every model. The page,
    the report, ``analyze aggregate|compare|ranks`` and the API then agree.
    """
    store = tmp_path / "unbalanced.duckdb"
    write_store(store, {"m-high": 0.72, "m-mid": 0.64}, languages=("da", "sv", "fi"), n=40)
    write_store(store, {"m-notask": 0.7}, languages=("da", "sv", "fi"), tasks=("xnli",), n=40)
    write_store(store, {"m-nolang": 0.6}, languages=("da", "sv"), n=40)
    doors = _read_doors(cli, store, SMALL, tmp_path)
    ranked = {"m-high", "m-mid", "m-nolang"}
    assert set(doors["api"].overall.models) == ranked
    # the cells every ranked model has: da and sv of both tasks (Finnish left out)
    assert sorted(doors["api"].overall.left_out) == ["sentiment/fi", "xnli/fi"]
    for command in ("aggregate", "ranks"):
        rows = doors[command]["aggregates" if command == "aggregate" else "summary"]
        assert {r["model"] for r in rows} == ranked, command
    assert {r["model_a"] for r in doors["compare"]["aggregates"]} | {
        r["model_b"] for r in doors["compare"]["aggregates"]
    } == ranked
    assert all(r["n_languages"] == 4 for r in doors["aggregate"]["aggregates"])
    # the note names the model left out and the task it lacks, on every door
    for name in ("aggregate", "compare", "ranks"):
        said = [n for n in doors[name]["notes"] if n.startswith("left out of the overall view")]
        assert len(said) == 1 and "m-notask (no score on sentiment)" in said[0], name
    assert any("m-notask (no score on sentiment)" in n for n in doors["api"].to_dict()["notes"])
    overall_view = doors["page"]["views"]["overall"]
    page_rows = {row["model"]: row for row in overall_view["rows"]}
    assert page_rows["m-notask"]["score"] is None and page_rows["m-notask"]["rank"] is None
    partial = [n for n in overall_view["row_notes"] if n["models"] == ["m-notask"]]
    assert partial and partial[0]["table"]["rows"] == [["m-notask", "✗", "✓"]]
    # the report lists it without an overall score, SE or interval, and says why
    assert doors["report"]["m-notask"]["score"] == "—"
    assert "no score on every task" in doors["report_text"]
    # the model left out keeps its task view
    xnli = {row["model"] for row in doors["page"]["views"]["task:xnli"]["rows"]}
    assert "m-notask" in xnli
    # and the numbers of the ranked models are the same through every door
    assert _check_one_answer(doors) >= 3
    # the overall score is the mean of task means over the shared cells, by hand
    points = doors["source"].point_frame()
    shared = points[points["language"].isin(["da", "sv"])]
    for model in ranked:
        mine = shared[shared["model"] == model]
        expected = mine.groupby("task")["score"].mean().mean()
        row = next(r for r in doors["aggregate"]["aggregates"] if r["model"] == model)
        assert row["score"] == pytest.approx(expected, abs=1e-12)


def _two_metric_store(path: Path, tmp: Path) -> Path:
    """Scores of two models on ``nli`` (accuracy and f1, no declared primary metric) and
    on ``wikiann-ner`` (f1 only; XTREME's ``panx``) in four languages."""
    rng = np.random.default_rng(5)
    rows = [
        {"model": model, "task": task, "language": language, "metric": metric, "seed": seed,
         "score": float(np.clip(base + rng.normal(0, 0.03), 0, 1))}
        for model, base in (("alpha", 0.7), ("beta", 0.6))
        for task, metrics in (("nli", ("accuracy", "f1")), ("wikiann-ner", ("f1",)))
        for metric in metrics
        for language in ("de", "fi", "sw", "ja")
        for seed in range(2)
    ]  # fmt: skip
    pd.DataFrame(rows).to_csv(tmp / "two_metrics.csv", index=False)
    api.import_scores(tmp / "two_metrics.csv", store=path)
    return path


@pytest.mark.slow
def test_metric_choice_is_one_rule_on_every_door(cli: Cli, tmp_path: Path) -> None:
    """A task with two metrics and none declared: the same error (listing the choices) from
    the page, the report and the analyses; ``--metric nli=f1`` then gives the same numbers.
    ``--task panx`` (XTREME's name) finds the stored ``wikiann-ner`` on the page as in the
    analyses."""
    store = _two_metric_store(tmp_path / "two.duckdb", tmp_path)
    for args in (
        ("leaderboard", "--store", store, "--out", tmp_path / "page"),
        ("report", "--store", store, "--out", tmp_path / "report.html"),
        ("analyze", "aggregate", "--store", store),
        ("analyze", "compare", "--store", store),
    ):
        result = cli(*args, *_options(SMALL))
        assert result.exit_code != 0, args
        message = " ".join((result.stderr + result.stdout).split())
        assert "nli: accuracy, f1" in message and "--metric nli=accuracy" in message, args
    chosen = dataclasses.replace(SMALL, metric=("nli=f1",))
    doors = _read_doors(cli, store, chosen, tmp_path)
    assert dict(doors["source"].task_metrics) == {"nli": "f1", "wikiann-ner": "f1"}
    assert _check_one_answer(doors) >= 3
    # --task under the harness's name: the page and the analysis find the same task
    page = _json(
        cli("leaderboard", "--store", store, "--task", "panx", "--out", tmp_path / "panx",
            *_options(SMALL), "--json")
    )  # fmt: skip
    payload = json.loads((tmp_path / "panx" / "leaderboard.json").read_text(encoding="utf-8"))
    assert page["kind"] == "leaderboard"
    aggregate = _json(
        cli("analyze", "aggregate", "--store", store, "--task", "panx", *_options(SMALL), "--json")
    )
    rows = {row["model"]: row for row in payload["views"]["overall"]["rows"]}
    means = [r for r in aggregate["aggregates"] if r["aggregator"] == "mean"]
    assert {r["model"] for r in means} == {"alpha", "beta"}
    for record in means:
        assert rows[record["model"]]["score"] == round(record["score"], 4)
