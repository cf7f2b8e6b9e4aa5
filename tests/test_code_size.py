"""Small modules, short functions: the sizes docs/architecture.md asks of the source.

A module of ``src/glotbench`` has at most :data:`MODULE_LINES` lines; a function or
method at most :data:`FUNCTION_LINES` lines of code, its docstring not counted (a
public function's numpydoc, with its parameters and doctested examples, may be long).
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "glotbench"
MODULE_LINES = 700
FUNCTION_LINES = 100


def _modules() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


def _code_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines from the ``def`` to the function's last line, less its docstring's lines."""
    assert node.end_lineno is not None
    lines = node.end_lineno - node.lineno + 1
    first = node.body[0]
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        assert first.end_lineno is not None
        lines -= first.end_lineno - first.lineno + 1
    return lines


def test_modules_are_at_most_700_lines() -> None:
    long = {
        str(path.relative_to(SRC)): n
        for path in _modules()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MODULE_LINES
    }
    assert not long, f"modules over {MODULE_LINES} lines (split them by responsibility): {long}"


def test_functions_are_at_most_100_lines_of_code() -> None:
    long = {}
    for path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if (n := _code_lines(node)) > FUNCTION_LINES:
                    long[f"{path.relative_to(SRC)}:{node.lineno} {node.name}"] = n
    assert not long, f"functions over {FUNCTION_LINES} lines of code: {long}"


def test_the_docstring_is_what_is_left_out() -> None:
    """The measure itself: a docstring's lines are not counted, code lines are."""
    source = 'def f(x):\n    """One.\n\n    Two.\n    """\n    y = x\n    return y\n'
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.FunctionDef)
    assert _code_lines(node) == 3  # def, y = x, return y
