"""The library names parameters in API words; the command line shows its options."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from glotbench.cli._words import cli_words

SRC = Path(__file__).resolve().parents[1] / "src" / "glotbench"


@pytest.mark.parametrize(
    ("library", "command_line"),
    [
        ("choose one with metric='nli=accuracy'", "choose one with --metric nli=accuracy"),
        ("use scheme='parametric'", "use --scheme parametric"),
        ("metric=TASK=METRIC needs a column", "--metric TASK=METRIC needs a column"),
        ("pass input=FILE or store=PATH", "pass --input FILE or --store PATH"),
        ("add languages='with' or languages='without'",
         "add --resample-languages with or --resample-languages without"),
        ("disagree=True compares models", "--disagree compares models"),
        ("predictions=FILES or simulate_models=N", "--pred FILES or --simulate-models N"),
        ("emmeans='model': 'model' is numeric", "--emmeans model: 'model' is numeric"),
        ("change with lock_timeout=SECONDS", "change with --lock-timeout SECONDS"),
        ("model_args=KEY=VALUE: 'oops'", "--model-arg KEY=VALUE: 'oops'"),
        ("device='cpu' or batch_size=4", "--device cpu or --batch-size 4"),
        ("re-run with force=True", "re-run with --force"),
        ("use models='openai:PATH' with model_args='base_url=http://H:8000/v1'",
         "use --model openai:PATH with --model-arg base_url=http://H:8000/v1"),
        # prose and other keywords stay as they are
        ("each task's metric; n_languages=3", "each task's metric; n_languages=3"),
    ],
)  # fmt: skip
def test_cli_words(library: str, command_line: str) -> None:
    assert cli_words(library) == command_line


#: files whose text shows a command to run (a page's "reproduce with", a dumped suite's
#: header) or a harness's own flags, with the options they may name (None: any)
SHOWS_COMMANDS: dict[str, set[str] | None] = {
    "report/leaderboard.py": None,
    "report/analyses.py": None,
    "report/html.py": None,
    "report/lmm_section.py": None,  # how to get the residual checks: the command
    "report/reproduction_link.py": None,
    "reproduce/scandeval.py": None,
    "runner/command_line.py": {"--dump-suite", "--data-dir"},  # the dumped suite's header
    "importers/lm_eval_results.py": {"--output_path"},  # lm-evaluation-harness's flags
    "importers/lm_eval_samples.py": {"--log_samples"},
}


def _string_literals(tree: ast.Module) -> Iterator[ast.Constant]:
    """Every string literal of ``tree`` (f-strings' text included) but the docstrings."""
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings:
                yield node


def test_library_messages_name_no_command_line_option() -> None:
    """Strings outside cli/ (errors, notes, notices, reasons) name parameters, not options
    (``--metric``); docstrings may mention the command line. The exceptions: text that
    shows a command to run and the harnesses' own flags (:data:`SHOWS_COMMANDS`)."""
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        allowed = SHOWS_COMMANDS.get(rel, set())
        if rel.startswith("cli/") or allowed is None:
            continue
        for node in _string_literals(ast.parse(path.read_text(encoding="utf-8"))):
            for flag in re.findall(r"(?<![\w-])--[a-z][a-z_-]+", node.value):
                if flag not in allowed:
                    offenders.append(f"{rel}:{node.lineno}: {flag} in {node.value[:60]!r}")
    assert offenders == []


def test_notices_are_shown_in_command_line_words_while_a_command_runs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The library prints a notice in API words; a command shows it with its options, and
    leaves the process's notices as it found them."""
    from typer.testing import CliRunner

    import glotbench.api
    from glotbench.cli import app
    from glotbench.errors import print_notice

    notice = "waiting for the store s.duckdb (change with lock_timeout=SECONDS) ..."
    print_notice(notice)
    assert capsys.readouterr().err == notice + "\n"

    def list_metrics() -> list[dict[str, object]]:
        print_notice(notice)
        return []

    monkeypatch.setattr(glotbench.api, "list_metrics", list_metrics)
    result = CliRunner().invoke(app, ["metrics", "--json"])
    assert result.exit_code == 0, result.output
    assert "(change with --lock-timeout SECONDS) ..." in result.stderr
    print_notice(notice)
    assert capsys.readouterr().err == notice + "\n"


@pytest.mark.parametrize(
    "record",
    [
        # glotbench.store.schema.RunRecord.describe: which run, not which option to give
        "model='A', dataset='d', task='t', language='de', seed=0, metric='accuracy'",
        # glotbench.importers.common: which score row conflicts
        "a second, different score for model='A', task='t', language='de', "
        "metric='accuracy', seed=0 (the first is in a.csv, line 2); give each run its own seed",
    ],
)
def test_a_described_row_is_not_turned_into_options(record: str) -> None:
    """A row named by its fields (four or more ``key=value`` in a comma-separated run) is
    data, not advice: ``--model A, --task t, …, seed=0`` would half-translate it."""
    assert cli_words(record) == record


def test_a_short_list_of_hints_is_still_translated() -> None:
    assert cli_words("give sigma_seed=SD, sigma_boot=SD and correlation=R") == (
        "give --sigma-seed SD, --sigma-boot SD and --correlation R"
    )


def test_a_duplicate_score_row_is_named_by_its_fields_on_the_command_line(cli, tmp_path: Path):
    scores = tmp_path / "a.csv"
    scores.write_text(
        "model,task,language,metric,seed,score\nA,t,de,accuracy,0,0.5\nA,t,de,accuracy,0,0.6\n"
    )
    result = cli("import", "scores", scores, "--store", tmp_path / "s.duckdb")
    assert result.exit_code != 0
    assert "model='A', task='t', language='de'" in result.stderr + result.stdout
    assert "--model A" not in result.stderr + result.stdout
