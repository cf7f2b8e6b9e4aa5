"""A command's first line comes before the analysis stack loads (glotbench.cli._lazy.announce).

References: the command's own words (what the line names) and the order of
events — the line is printed before the API proxy imports its module — and
nothing is added to stderr when it is not a terminal.
"""

from __future__ import annotations

import io
import sys

import pytest

from glotbench.cli import _lazy


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_line_names_the_command_and_its_store():
    assert _lazy._command_words(["analyze", "aggregate", "--store", "s.duckdb", "--json"]) == [
        "analyze",
        "aggregate",
        "(store s.duckdb)",
    ]
    assert _lazy._command_words(["show", "--store=x.duckdb"]) == ["show", "(store x.duckdb)"]
    assert _lazy._command_words(["import", "scores", "a.csv", "--", "--store", "y"]) == [
        "import",
        "scores",
    ]


def test_printed_once_on_a_terminal_and_never_elsewhere(monkeypatch: pytest.MonkeyPatch):
    argv = ["glotbench", "analyze", "compare", "--store", "s.duckdb"]
    monkeypatch.setattr(sys, "argv", argv)
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setattr(_lazy, "_announced", [])
    _lazy.announce()
    _lazy.announce()
    assert terminal.getvalue().count("glotbench analyze compare (store s.duckdb) …") == 1
    pipe = io.StringIO()
    monkeypatch.setattr(sys, "stderr", pipe)
    monkeypatch.setattr(_lazy, "_announced", [])
    _lazy.announce()
    assert pipe.getvalue() == ""


def test_the_proxy_announces_before_it_imports(monkeypatch: pytest.MonkeyPatch):
    module = "glotbench.data"  # not imported by the tests' process before this test needs it
    monkeypatch.delitem(sys.modules, module, raising=False)
    events: list[bool] = []
    monkeypatch.setattr(_lazy, "announce", lambda: events.append(module in sys.modules))
    proxy = _lazy.OnFirstUse(module, announce=True)
    proxy.__name__  # noqa: B018 - the first use imports the module
    proxy.__name__  # noqa: B018 - imported: no second line
    assert events == [False]
    assert module in sys.modules
