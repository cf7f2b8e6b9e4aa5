"""The import rules of docs/architecture.md, checked on the source.

Every module's imports are read with :mod:`ast` — at the top, inside
functions and under ``if TYPE_CHECKING:`` — and resolved to modules of
``glotbench``. Two rules:

* **no cycles** between modules among the imports that run (top-level and
  inside functions); an import under ``if TYPE_CHECKING:`` only names a type
  for an annotation and never runs, so it may point back (a store module
  annotates an argument as ``Store`` while ``store.store`` imports it);
* **layers**: a module imports (type-only imports included) only from its own
  layer or below, per the table "What each layer may import".
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "glotbench"

#: layers from the bottom (0) to the top; a module may import from its own rank or below
LAYERS: dict[str, int] = {
    "statistics": 0,
    "store": 1,
    "ingest": 2,
    "producers": 3,
    "analysis": 3,
    "reproduction": 4,
    "rendering": 5,
    "facade": 6,
    "command line": 7,
}

#: first part below ``glotbench`` -> layer (docs/architecture.md, "What each layer may import")
TOP_LEVEL: dict[str, str] = {
    "metrics": "statistics",
    "resample": "statistics",
    "errors": "statistics",
    "_version": "statistics",
    "data": "statistics",
    "store": "store",
    "ingest": "ingest",
    "runner": "producers",
    "importers": "producers",
    "checklist": "producers",
    "suites": "producers",
    "analysis": "analysis",
    "reproduce": "reproduction",
    "report": "rendering",
    "api": "facade",
    "_api": "facade",  # the functions api.py defines, by subject
    "demo_xtreme": "facade",
    "demo_starter": "facade",
    "cli": "command line",  # cli.py, or the package glotbench/cli/
    "__main__": "command line",
}


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int
    type_only: bool


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _resolve(name: str) -> str | None:
    """The module of ``glotbench`` that an imported dotted name lives in."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk(node: ast.AST, type_only: bool = False) -> Iterator[tuple[ast.AST, bool]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for stmt in child.body:
                yield stmt, True
                yield from _walk(stmt, True)
            for stmt in child.orelse:
                yield stmt, type_only
                yield from _walk(stmt, type_only)
            continue
        yield child, type_only
        yield from _walk(child, type_only)


def _imports(module: str) -> list[Import]:
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = []
    for node, type_only in _walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            # `from glotbench.metrics import tagging` imports the module metrics.tagging
            targets = [
                f"{name}.{alias.name}" if f"{name}.{alias.name}" in MODULES else name
                for alias in node.names
            ]
        for target in targets:
            if target != "glotbench" and not target.startswith("glotbench."):
                continue
            resolved = _resolve(target)
            if resolved is not None and resolved != module:
                out.append(Import(module, resolved, node.lineno, type_only))  # type: ignore[attr-defined]
    return out


IMPORTS = [imp for module in MODULES for imp in _imports(module)]


def layer_of(module: str) -> str:
    """The layer of a module; the root package ``glotbench`` is the facade."""
    parts = module.split(".")
    if len(parts) == 1:
        return "facade"
    if parts[1] not in TOP_LEVEL:
        raise AssertionError(
            f"{module} is in no layer: add its folder to TOP_LEVEL here and to the table in "
            "docs/architecture.md"
        )
    return TOP_LEVEL[parts[1]]


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_the_import_graph_is_read() -> None:
    # a parser that found nothing would pass everything: check known edges
    edges = {(i.source, i.target) for i in IMPORTS}
    assert ("glotbench.store.store", "glotbench.store.schema") in edges
    assert ("glotbench.__main__", "glotbench.cli") in edges
    assert ("glotbench.store.stats", "glotbench.metrics") in edges  # in a function
    assert any(i.type_only for i in IMPORTS)


def test_no_import_cycles() -> None:
    edges: dict[str, set[str]] = {}
    for imp in IMPORTS:
        if not imp.type_only:
            edges.setdefault(imp.source, set()).add(imp.target)
    cycles = _cycles(edges)
    detail = sorted(
        {
            f"{imp.source}:{imp.line} -> {imp.target}"
            for cycle in cycles
            for imp in IMPORTS
            if not imp.type_only and imp.source in cycle and imp.target in cycle
        }
    )
    assert not cycles, "import cycles:\n" + "\n".join(detail)


@pytest.mark.parametrize(
    ("module", "layer"),
    [
        ("glotbench.cli", "command line"),
        ("glotbench.cli.store", "command line"),
        ("glotbench.api", "facade"),
        ("glotbench.store.store", "store"),
        ("glotbench.ingest.snapshot", "ingest"),
        ("glotbench.metrics.registry", "statistics"),
    ],
)
def test_layer_names(module: str, layer: str) -> None:
    parts = module.split(".")
    assert TOP_LEVEL[parts[1]] == layer


def test_each_layer_imports_only_its_own_or_lower_layers() -> None:
    wrong = [
        f"{imp.source}:{imp.line} ({layer_of(imp.source)}) imports {imp.target} "
        f"({layer_of(imp.target)})"
        for imp in IMPORTS
        if LAYERS[layer_of(imp.target)] > LAYERS[layer_of(imp.source)]
    ]
    assert not wrong, "imports from a higher layer:\n" + "\n".join(wrong)


def test_producers_and_analysis_do_not_import_each_other() -> None:
    # both sit on the store; neither may reach into the other
    producers = {"producers"}
    wrong = [
        f"{imp.source}:{imp.line} imports {imp.target}"
        for imp in IMPORTS
        if {layer_of(imp.source), layer_of(imp.target)} == producers | {"analysis"}
    ]
    assert not wrong, "\n".join(wrong)


#: the analysis sub-layer that reads data in (files, the store, paired files); the rest of
#: ``glotbench.analysis`` is the estimators (docs/architecture.md, "The analysis layer")
SOURCES = "glotbench.analysis.sources"


def _is_estimator(module: str) -> bool:
    return module.startswith("glotbench.analysis") and not (
        module == SOURCES or module.startswith(SOURCES + ".")
    )


def test_the_analysis_sources_are_found() -> None:
    # a rule over an empty set passes everything: the split must be where the rules look
    sources = [m for m in MODULES if m.startswith(SOURCES + ".")]
    assert f"{SOURCES}.inputs" in sources and f"{SOURCES}.paired_files" in sources
    assert any(i.source.startswith(SOURCES) and _is_estimator(i.target) for i in IMPORTS)
    assert "glotbench.analysis.variance" in MODULES and _is_estimator("glotbench.analysis.variance")


def test_estimators_do_not_import_the_sources() -> None:
    """Sources read and call the estimators; an estimator never knows where data came from."""
    wrong = [
        f"{imp.source}:{imp.line} imports {imp.target}"
        for imp in IMPORTS
        if _is_estimator(imp.source)
        and not _is_estimator(imp.target)
        and imp.target.startswith(SOURCES)
    ]
    assert not wrong, "estimators importing glotbench.analysis.sources:\n" + "\n".join(wrong)


def test_estimators_do_not_open_the_store() -> None:
    """Only the sources hold a ``Store`` (type-only imports included): estimators take
    replicated scores, frames and matrices."""
    wrong = []
    for module, path in MODULES.items():
        if not _is_estimator(module):
            continue
        for node, _ in _walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and any(a.name == "Store" for a in node.names):
                wrong.append(f"{module}:{node.lineno} imports Store from {node.module}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.slow
def test_scandeval_multiplier_is_written_once() -> None:
    """ScandEval's ±1.96·SD/√N lives in :mod:`glotbench.resample.scandeval`; code elsewhere
    imports it (a literal 1.96 in code, not in text, is a second copy of the formula)."""
    home = "glotbench.resample.scandeval"
    found = [
        f"{module}:{node.lineno}"
        for module, path in MODULES.items()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and node.value == 1.96 and module != home
    ]
    assert not found, "1.96 outside glotbench.resample.scandeval:\n" + "\n".join(found)
    assert "CI_MULTIPLIER = 1.96" in MODULES[home].read_text(encoding="utf-8")


def test_version_is_written_once() -> None:
    """pyproject.toml reads the version from glotbench/_version.py; the installed
    distribution reports the same."""
    import importlib.metadata
    import tomllib

    from glotbench._version import __version__

    project = tomllib.loads((SRC.parent / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    dynamic = project["tool"]["setuptools"]["dynamic"]["version"]
    assert dynamic == {"attr": "glotbench._version.__version__"}
    assert importlib.metadata.version("glotbench") == __version__
