"""The public API: every public name of api.py exported and documented, and its
numpydoc Examples run as doctests (in a temporary folder holding the example files).
"""

from __future__ import annotations

import ast
import doctest
import inspect
import itertools
import json
import random
from pathlib import Path

import pytest

from glotbench import api

API_FILE = Path(api.__file__)
#: the main entry points: numpydoc Parameters, Returns and Examples sections
DOCUMENTED = (
    "open_store",
    "import_scores",
    "analyze_aggregate",
    "analyze_compare",
    "analyze_ranks",
    "analyze_variance",
    "plan",
    "reproduce",
    "run_benchmark",
)


def _defined_in_api() -> list[str]:
    tree = ast.parse(API_FILE.read_text(encoding="utf-8"))
    return [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and not node.name.startswith("_")
    ]


def test_every_public_function_of_api_py_is_exported_and_documented() -> None:
    defined = _defined_in_api()
    assert len(defined) > 20
    assert [name for name in defined if name not in api.__all__] == []
    assert [name for name in api.__all__ if not hasattr(api, name)] == []
    undocumented = [
        name
        for name in api.__all__
        if (inspect.isfunction(getattr(api, name)) or inspect.isclass(getattr(api, name)))
        and not (inspect.getdoc(getattr(api, name)) or "").strip()
    ]
    assert undocumented == []
    assert len(set(api.__all__)) == len(api.__all__), "a name is exported twice"


@pytest.mark.parametrize("name", DOCUMENTED)
def test_main_functions_have_numpydoc_sections(name: str) -> None:
    doc = inspect.getdoc(getattr(api, name)) or ""
    for section in ("Parameters", "Returns", "Examples"):
        assert f"\n{section}\n{'-' * len(section)}\n" in doc, f"{name}: no {section} section"
    assert ">>> " in doc
    # every parameter is described (numpydoc groups several names on one line)
    described = " ".join(
        line.split(" : ")[0] for line in doc.split("Returns\n-------")[0].splitlines()
    )
    missing = [p for p in inspect.signature(getattr(api, name)).parameters if p not in described]
    assert missing == [], f"{name}: parameters not described: {missing}"


def write_example_files(folder: Path) -> None:
    """The files the Examples read: scores.csv (3 models × 3 languages × 3 seeds of
    accuracy) and da.jsonl (60 labelled reviews)."""
    rng = random.Random(7)
    rows = ["model,task,language,metric,seed,score"]
    models = {"xlmr": 0.70, "mbert": 0.64, "glot500": 0.72}
    languages = {"da": 0.0, "sv": 0.03, "fi": -0.05}
    for (model, base), (language, offset), seed in itertools.product(
        models.items(), languages.items(), range(3)
    ):
        score = base + offset + rng.gauss(0, 0.01)
        rows.append(f"{model},sentiment,{language},accuracy,{seed},{score:.3f}")
    (folder / "scores.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    with (folder / "da.jsonl").open("w", encoding="utf-8") as fh:
        for i in range(60):
            label = "positive" if i % 3 else "negative"
            fh.write(json.dumps({"text": f"review {i}", "label": label}) + "\n")


def test_api_examples_run_as_doctests(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_example_files(tmp_path)
    monkeypatch.chdir(tmp_path)
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    tests = finder.find(api, "glotbench.api")
    tests += finder.find(api.plan, "glotbench.api.plan", globs={})
    ran = {t.name.rsplit(".", 1)[-1] for t in tests if t.examples}
    assert set(DOCUMENTED) <= ran, f"no examples run for {set(DOCUMENTED) - ran}"
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} doctest examples failed"


API_PAGE = Path(__file__).resolve().parents[1] / "docs" / "api.md"


def test_docs_api_md_lists_exactly_the_public_names() -> None:
    """docs/api.md has one table row per name of ``api.__all__`` and no other, and every
    row links to a guide that exists."""
    text = API_PAGE.read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    named = [row.split("`")[1] for row in rows]
    assert sorted(set(named) - set(api.__all__)) == [], "docs/api.md lists names not in __all__"
    assert sorted(set(api.__all__) - set(named)) == [], "names of __all__ missing in docs/api.md"
    assert len(named) == len(set(named)), "docs/api.md lists a name twice"
    for row in rows:
        purpose, link = row.split(" | ")[1], row.rsplit("](", 1)[-1].rstrip(" |)")
        assert purpose.strip(), row
        assert (API_PAGE.parent / link).is_file(), f"{row}: no file {link}"
