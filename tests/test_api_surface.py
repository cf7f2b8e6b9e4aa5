"""The public API: every public name of api.py (and _api/) exported and documented (numpydoc), its
Examples run as doctests (in a temporary folder holding the example files), every result
class with an Attributes section, and docs/api.md in step with ``api.__all__``.
"""

from __future__ import annotations

import ast
import dataclasses
import doctest
import inspect
import itertools
import json
import random
import re
from pathlib import Path

import pytest

from glotbench import api
from glotbench.analysis.buckets import BucketAnalysis
from glotbench.analysis.examples import ExamplesResult
from glotbench.analysis.learning_curve import LearningCurves
from glotbench.analysis.mixed.robustness import RobustnessStudy
from glotbench.analysis.sources.scopes import ScopedResults
from glotbench.analysis.speed import SpeedTable

API_FILE = Path(api.__file__)
PUBLIC = [getattr(api, name) for name in api.__all__]
FUNCTIONS = [name for name in api.__all__ if inspect.isfunction(getattr(api, name))]
#: the result classes: the dataclasses of ``__all__`` and those api functions return
RESULT_CLASSES = [
    *(obj for obj in PUBLIC if inspect.isclass(obj) and dataclasses.is_dataclass(obj)),
    BucketAnalysis,
    ExamplesResult,
    LearningCurves,
    RobustnessStudy,
    ScopedResults,
    SpeedTable,
]
#: Examples that take more than a few seconds (a run, a rendered report)
SLOW_EXAMPLES = {"store_pair_statistics", "write_report"}


#: the functions api.py defines itself, by subject (imported into api.py)
API_PARTS = sorted((API_FILE.parent / "_api").glob("*.py"))


def _defined_in_api() -> list[str]:
    return [
        node.name
        for path in (API_FILE, *API_PARTS)
        for node in ast.parse(path.read_text(encoding="utf-8")).body
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


def _section(doc: str, title: str) -> str | None:
    """The body of numpydoc section ``title`` of ``doc`` (None: no such section)."""
    match = re.search(
        rf"^{title}\n{'-' * len(title)}\n(.*?)(?=^\S[^\n]*\n-{{3,}}\n|\Z)", doc, re.M | re.S
    )
    return None if match is None else match.group(1)


def _names(section: str) -> set[str]:
    """The names a Parameters or Attributes section describes (``a, b : type`` lines)."""
    names: set[str] = set()
    for line in section.splitlines():
        if line and not line[0].isspace():
            names.update(part.strip().lstrip("*") for part in line.split(" : ")[0].split(","))
    return names


@pytest.mark.parametrize("name", FUNCTIONS)
def test_public_functions_have_numpydoc_sections(name: str) -> None:
    func = getattr(api, name)
    doc = inspect.getdoc(func) or ""
    parameters = inspect.signature(func).parameters
    if parameters:
        section = _section(doc, "Parameters")
        assert section is not None, f"{name}: no Parameters section"
        missing = [p for p in parameters if p not in _names(section)]
        assert missing == [], f"{name}: parameters not described: {missing}"
    if inspect.signature(func).return_annotation not in ("None", None):
        assert _section(doc, "Returns"), f"{name}: no Returns section"
    examples = _section(doc, "Examples")
    assert examples is not None and ">>> " in examples, f"{name}: no Examples section"


@pytest.mark.parametrize("cls", RESULT_CLASSES, ids=lambda cls: cls.__name__)
def test_result_classes_have_an_attributes_section(cls: type) -> None:
    section = _section(inspect.getdoc(cls) or "", "Attributes")
    assert section is not None, f"{cls.__name__}: no Attributes section"
    missing = [f.name for f in dataclasses.fields(cls) if f.name not in _names(section)]
    assert missing == [], f"{cls.__name__}: attributes not described: {missing}"


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


def _doctest_params() -> list[object]:
    names = [
        name
        for name in api.__all__
        if inspect.isfunction(getattr(api, name)) or inspect.isclass(getattr(api, name))
    ]
    return [
        pytest.param(name, marks=pytest.mark.slow) if name in SLOW_EXAMPLES else name
        for name in names
    ]


@pytest.mark.slow
@pytest.mark.parametrize("name", _doctest_params())
def test_api_examples_run_as_doctests(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_example_files(tmp_path)
    monkeypatch.chdir(tmp_path)
    obj = getattr(api, name)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in doctest.DocTestFinder().find(obj, name, globs={}) if t.examples]
    if inspect.isfunction(obj):
        assert tests, f"{name}: no examples"
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"


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
