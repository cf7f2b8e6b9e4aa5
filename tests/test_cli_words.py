"""The library names parameters in API words; the command line shows its options."""

from __future__ import annotations

import re
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
        # prose and other keywords stay as they are
        ("each task's metric; n_languages=3", "each task's metric; n_languages=3"),
    ],
)  # fmt: skip
def test_cli_words(library: str, command_line: str) -> None:
    assert cli_words(library) == command_line


def test_library_messages_name_no_command_line_option() -> None:
    """Raised messages outside cli/ name parameters, not options (``--metric``). The
    exceptions: the runner's model specs (``--model KIND:ID`` is their syntax), the
    importers' messages (the harnesses' own flags) and page text that shows a
    command to run."""
    allowed = ("cli/", "runner/", "importers/", "report/leaderboard.py",
               "report/analyses.py", "report/html.py", "report/reproduction_link.py",
               "reproduce/scandeval.py")  # fmt: skip
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith(allowed):
            continue
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"(raise \w+\(|\.append\()(.{0,400}?)\)\n", text, re.S):
            body = "".join(re.findall(r"""["']([^"'\n]*)["']""", match.group(2)))
            if re.search(r"(?<![\w-])--[a-z][a-z-]+", body):
                offenders.append(f"{rel}: {body[:80]}")
    assert offenders == []
