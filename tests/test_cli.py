"""The command line as a user runs it: exit codes, JSON output, error messages."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "glotbench", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


@pytest.mark.slow
def test_demo_prints_the_leaderboard(tmp_path: Path) -> None:
    result = run_cli("demo", "--no-starter", "--draws", "1000", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "XLM-R Large" in result.stdout
    # the headline SE is the SD over draws resampling each task's languages (the leaderboard's
    # and the report's too): ≈ σ_b/√L · √((L − 1)/L) per task, 0.945 here (σ_b/√L alone: 0.969)
    assert "64.2 ± 0.9" in result.stdout
    assert "8 of the paper's 10 tasks" in " ".join(result.stdout.split())
    # the demo ends by writing the leaderboard and the report, and says where
    assert (tmp_path / "glotbench-demo" / "leaderboard" / "index.html").is_file()
    assert (tmp_path / "glotbench-demo" / "report.html").is_file()
    assert "report.html" in result.stdout


@pytest.mark.slow
def test_demo_json_is_documented_object() -> None:
    result = run_cli("demo", "--no-starter", "--json", "--draws", "1000", "--no-pages")
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert set(payload) == {"starter", "xtreme_r", "written", "notes"}
    assert payload["written"] == [] and payload["starter"] is None
    xtreme = payload["xtreme_r"]
    assert set(xtreme) == {
        "leaderboard",
        "between_language_sd",
        "comparison",
        "ranks",
        "notes",
        "analysis",  # the settings and headline numbers the pages render
    }
    # the JSON warns that the overall covers 8 of 10 tasks and that TyDiQA's tables disagree
    assert any("8 of the paper's 10 tasks" in note for note in xtreme["notes"])
    assert any("TyDiQA" in note for note in xtreme["notes"])
    top = xtreme["leaderboard"]["overall"][0]
    assert top["model"] == "XLM-R Large"
    assert top["ci_low"] < top["score"] < top["ci_high"]


@pytest.mark.slow
def test_bootstrap_command(tmp_path: Path) -> None:
    (tmp_path / "pred.txt").write_text("\n".join(["POS", "NEG", "POS", "NEU"] * 25) + "\n")
    (tmp_path / "ref.txt").write_text("\n".join(["POS", "NEG", "NEG", "NEU"] * 25) + "\n")
    result = run_cli(
        "bootstrap",
        "pred.txt",
        "ref.txt",
        "--metric",
        "accuracy",
        "-B",
        "2000",
        "--json",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    system = json.loads(result.stdout)["systems"][0]
    assert system["score"] == pytest.approx(0.75)
    assert system["standard_error"] == pytest.approx((0.75 * 0.25 / 100) ** 0.5, rel=0.12)


@pytest.mark.slow
def test_bootstrap_command_reports_misaligned_files(tmp_path: Path) -> None:
    (tmp_path / "pred.txt").write_text("a\nb\n")
    (tmp_path / "ref.txt").write_text("a\n")
    result = run_cli("bootstrap", "pred.txt", "ref.txt", cwd=tmp_path)
    assert result.returncode != 0
    assert "2 predictions" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow
def test_bootstrap_command_reports_bad_json_line(tmp_path: Path) -> None:
    (tmp_path / "pred.jsonl").write_text('"a"\n{broken\n')
    (tmp_path / "ref.jsonl").write_text('"a"\n"b"\n')
    result = run_cli("bootstrap", "pred.jsonl", "ref.jsonl", cwd=tmp_path)
    assert result.returncode == 2
    assert "pred.jsonl, line 2" in result.stderr


@pytest.mark.slow
def test_metrics_command_lists_the_registry() -> None:
    result = run_cli("metrics", "--json")
    assert result.returncode == 0, result.stderr
    names = {m["name"] for m in json.loads(result.stdout)["metrics"]}
    assert {"accuracy", "f1_macro", "mcc"} <= names


@pytest.mark.slow
def test_every_command_has_help() -> None:
    for command in (["--help"], ["demo", "--help"], ["bootstrap", "--help"], ["metrics", "--help"]):
        result = run_cli(*command)
        assert result.returncode == 0, (command, result.stderr)
        assert "Usage" in result.stdout


@pytest.mark.slow
def test_demo_writes_leaderboard_and_report(tmp_path: Path) -> None:
    result = run_cli(
        "demo", "--no-starter", "--draws", "500", "--out", str(tmp_path / "site"), "--json"
    )
    assert result.returncode == 0, result.stderr
    written = json.loads(result.stdout)["written"]
    assert [Path(p).name for p in written] == ["index.html", "report.html"]
    index = (tmp_path / "site" / "leaderboard" / "index.html").read_text(encoding="utf-8")
    assert "XLM-R Large" in index and "<script src=" not in index  # self-contained
    assert "<svg" in (tmp_path / "site" / "report.html").read_text(encoding="utf-8")


@pytest.mark.slow
def test_version() -> None:
    from glotbench import __version__

    result = run_cli("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"glotbench {__version__}"


@pytest.mark.slow
def test_json_errors_are_json_on_stdout(tmp_path: Path) -> None:
    bad = tmp_path / "scores.csv"
    bad.write_text("model,task,language,metric,score\nm,t,da,accuracy,abc\n", encoding="utf-8")
    result = run_cli("import", "scores", str(bad), "--store", str(tmp_path / "s.duckdb"), "--json")
    assert result.returncode == 2, result.stderr
    error = json.loads(result.stdout)["error"]
    assert error["type"] == "InputError" and error["exit_code"] == 2
    assert error["path"] == str(bad) and error["line"] == 2 and error["field"] == "score"
    assert "line 2" in " ".join(result.stderr.split())  # and as text on stderr
    # a usage error is JSON too, with click's exit code
    result = run_cli("export", "--bogus", "--json")
    assert result.returncode == 2
    assert json.loads(result.stdout)["error"]["type"] == "NoSuchOption"
    # without --json the error is text on stderr only
    result = run_cli("import", "scores", str(bad), "--store", str(tmp_path / "s.duckdb"))
    assert result.returncode == 2 and result.stdout == ""
    assert "line 2" in " ".join(result.stderr.split())
