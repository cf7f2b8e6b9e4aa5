"""The committed R golden values are what R computes today (runs only where R is installed).

``tests/fixtures/mixed/make_golden.R`` simulates the designs, fits them with lme4 +
lmerTest (and emmeans, effectsize, performance) and writes the CSV and JSON files the
golden tests compare glotbench against. This test reruns it in a scratch copy of the
fixture folder and compares what it writes with the committed files: the simulated
CSV data byte for byte; the JSON files key by key, every string and flag equal and
every number within 1e-6 relative. R itself is not bit-reproducible here: run after
run, lme4 (Eigen) ends ``crossed`` at one of two optima that differ by up to 2.4e-7
relative (a p-value of 1.5e-14) and 1.1e-8 in the Satterthwaite df; 1e-6 is 100x
tighter than the tolerances of the golden tests (test_golden.py). R is not a test
dependency: without ``Rscript`` or one of the R packages the test is skipped with a
message saying what is missing.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from .golden import FIXTURES

REL = 1e-6  # R's own run-to-run spread is up to 2.4e-7 relative (module docstring)
R_PACKAGES = ["lme4", "lmerTest", "emmeans", "effectsize", "performance", "jsonlite"]
WRITTEN = [
    "nested.csv",
    "crossed.csv",
    "unbalanced.csv",
    "singular.csv",
    "slopes.csv",
    "nested.json",
    "nested_ml.json",
    "crossed.json",
    "unbalanced.json",
    "singular.json",
    "slopes.json",
]


def _differences(new: object, old: object, path: str = "") -> list[str]:
    """Where two parsed JSON documents differ beyond ``REL`` (numbers) or at all (the rest)."""
    if isinstance(new, dict) and isinstance(old, dict):
        if new.keys() != old.keys():
            return [f"{path}: keys {sorted(new)} != {sorted(old)}"]
        return [d for k in new for d in _differences(new[k], old[k], f"{path}/{k}")]
    if isinstance(new, list) and isinstance(old, list):
        if len(new) != len(old):
            return [f"{path}: {len(new)} items != {len(old)}"]
        return [
            d
            for i, (a, b) in enumerate(zip(new, old, strict=True))
            for d in _differences(a, b, f"{path}[{i}]")
        ]
    numbers = (int, float)
    if isinstance(new, numbers) and isinstance(old, numbers) and not isinstance(new, bool):
        if abs(new - old) <= REL * max(abs(new), abs(old)):
            return []
        return [f"{path}: R now {new!r}, committed {old!r}"]
    return [] if new == old else [f"{path}: R now {new!r}, committed {old!r}"]


def _missing_r() -> str | None:
    """Why R cannot make the goldens here, or None if it can."""
    if shutil.which("Rscript") is None:
        return "Rscript is not installed (Debian: r-base-core)"
    names = ", ".join(f'"{p}"' for p in R_PACKAGES)
    check = (
        f"m <- c({names}); ok <- vapply(m, requireNamespace, logical(1), quietly = TRUE); "
        "cat(m[!ok], sep = ' ')"
    )
    out = subprocess.run(["Rscript", "-e", check], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        return f"Rscript failed: {out.stderr.strip()[-200:]}"
    if out.stdout.strip():
        return f"R packages missing: {out.stdout.strip()}"
    return None


@pytest.mark.slow
def test_make_golden_reproduces_committed_files(tmp_path: Path) -> None:
    reason = _missing_r()
    if reason:
        pytest.skip(f"R golden values not re-made: {reason}")
    here = tmp_path / "tests" / "fixtures" / "mixed"
    here.mkdir(parents=True)
    shutil.copy(FIXTURES / "make_golden.R", here)
    out = subprocess.run(
        ["Rscript", "tests/fixtures/mixed/make_golden.R"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    written = sorted(p.name for p in here.iterdir() if p.name != "make_golden.R")
    assert written == sorted(WRITTEN)
    csv_differ = [
        n
        for n in WRITTEN
        if n.endswith(".csv") and (here / n).read_bytes() != (FIXTURES / n).read_bytes()
    ]
    assert not csv_differ, f"R simulates other data than the committed CSV files: {csv_differ}"
    differ = [
        f"{n}{d}"
        for n in WRITTEN
        if n.endswith(".json")
        for d in _differences(
            json.loads((here / n).read_text()), json.loads((FIXTURES / n).read_text())
        )
    ]
    assert not differ, "R's output differs from the committed goldens:\n" + "\n".join(differ[:20])


def test_comparison_tolerates_r_run_to_run_spread_only() -> None:
    committed = json.loads((FIXTURES / "crossed.json").read_text())
    assert _differences(committed, committed) == []
    spread = json.loads((FIXTURES / "crossed.json").read_text())
    spread["fixed_effects"][0]["df"] *= 1 + 1.1e-8  # R's own run-to-run difference
    spread["fixed_effects"][0]["p"] *= 1 + 2.4e-7
    assert _differences(spread, committed) == []
    drift = json.loads((FIXTURES / "crossed.json").read_text())
    drift["fixed_effects"][1]["estimate"] *= 1 + 1e-5
    drift["singular"] = not committed["singular"]
    assert _differences(drift, committed) == [
        f"/fixed_effects[1]/estimate: R now {drift['fixed_effects'][1]['estimate']!r}, "
        f"committed {committed['fixed_effects'][1]['estimate']!r}",
        f"/singular: R now {drift['singular']!r}, committed {committed['singular']!r}",
    ]
