"""Shared helpers: load the R golden fixtures and fit the same models in glotbench."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pandas as pd

from glotbench.analysis.mixed.model import LmmResult, analyze_lmm

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "mixed"
DESIGNS = ["nested", "nested_ml", "crossed", "unbalanced", "singular", "slopes"]


@cache
def golden(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text())


@cache
def fitted(name: str) -> LmmResult:
    g = golden(name)
    data = pd.read_csv(FIXTURES / g["csv"])
    return analyze_lmm(data, g["formula"], emmeans_specs=list(g["emmeans"]), reml=bool(g["reml"]))
