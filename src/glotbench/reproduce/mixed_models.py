"""The mixed-model designs of Benito-Santos et al. recomputed against R.

The paper's own tables were fitted on data that is not available, so what glotbench
reproduces is R's answers on the same models: six designs (nested REML and ML,
crossed, unbalanced, singular, random slopes) fitted by R's lme4 1.1-31, lmerTest
3.1-3, emmeans 1.8.4-1, effectsize 0.8.3 and performance 0.10.2, written by
``tests/fixtures/mixed/make_golden.R`` as one JSON file of R's printed values and one
CSV of data per design. glotbench refits each design with
:func:`glotbench.analysis.mixed.model.analyze_lmm` and sets every R value beside its
own.

Tolerances (as in ``tests/analysis/mixed/test_golden.py``): estimates, standard
errors, t and F 1e-4 relative; Satterthwaite df 1e-2 relative; p-values, interval
bounds and partial η² 1e-3 absolute; variance components 1e-3 relative (lme4's bobyqa
stops about 1e-5 short of the optimum in θ); R² 1e-3 absolute.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from glotbench.analysis.mixed.model import LmmResult, analyze_lmm
from glotbench.reproduce.base import Cell, PaperReproduction, TableReproduction

PAPER_ID = "mixed-models"
CITATION = (
    "Benito-Santos et al.: linear mixed-effects models for multilingual evaluation "
    "(lme4 / lmerTest / emmeans / effectsize designs); reference values from R"
)

DESIGNS: tuple[str, ...] = ("nested", "nested_ml", "crossed", "unbalanced", "singular", "slopes")

REL_ESTIMATE = 1e-4
REL_DF = 1e-2
ABS_P = 1e-3
REL_VARIANCE = 1e-3
ABS_R2 = 1e-3
#: Absolute floor of a relative tolerance, for R values that are (nearly) zero.
FLOOR = 1e-10

#: (kind, tolerance) per compared column
FIXED = {
    "estimate": ("rel", REL_ESTIMATE),
    "se": ("rel", REL_ESTIMATE),
    "df": ("rel", REL_DF),
    "t": ("rel", REL_ESTIMATE),
    "p": ("abs", ABS_P),
}
ANOVA = {
    "num_df": ("abs", 1e-9),
    "den_df": ("rel", REL_DF),
    "F": ("rel", REL_ESTIMATE),
    "p": ("abs", ABS_P),
    "eta2_partial": ("abs", ABS_P),
    "eta2_ci_low": ("abs", ABS_P),
    "eta2_ci_high": ("abs", ABS_P),
}
EMMEANS = {
    "emmean": ("rel", REL_ESTIMATE),
    "se": ("rel", REL_ESTIMATE),
    "df": ("rel", REL_DF),
    "lower": ("abs", ABS_P),
    "upper": ("abs", ABS_P),
}
CONTRASTS = FIXED


def fixture_dir(data_dir: Path) -> Path | None:
    """Where the R fixtures are: ``data_dir/mixed`` if it holds them, else the source tree's
    ``tests/fixtures/mixed`` (they ship with the source, not with the wheel)."""
    candidates = [
        Path(data_dir) / "mixed",
        Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "mixed",
    ]
    for candidate in candidates:
        if all((candidate / f"{name}.json").is_file() for name in DESIGNS):
            return candidate
    return None


def _tolerance(kind: str, tol: float, want: float) -> float:
    return max(tol * abs(want), FLOOR) if kind == "rel" else tol


def _compare_rows(
    design: str,
    what: str,
    actual: pd.DataFrame,
    rows: list[dict[str, Any]],
    key: str,
    columns: dict[str, tuple[str, float]],
) -> list[Cell]:
    table = actual.set_index(key)
    cells = []
    for row in rows:
        label = str(row[key])
        present = label in table.index
        for column, (kind, tol) in columns.items():
            want = row.get(column)
            cell_key = f"{what} {label}, {column}"
            if want is None:
                continue  # R prints nothing here (e.g. NA), nothing to compare
            got = float(table.loc[label, column]) if present else None
            cells.append(
                Cell.compare(
                    cell_key,
                    float(want),
                    got,
                    _tolerance(kind, tol, float(want)),
                    reason_if_differs=f"glotbench's {column} differs from R's beyond the tolerance",
                    reason_if_missing=f"glotbench's fit of {design} has no {what} {label}",
                )
            )
    return cells


def _design_table(design: str, golden: dict[str, Any], fit: LmmResult) -> TableReproduction:
    cells: list[Cell] = []
    cells += _compare_rows(
        design, "fixed effect", fit.fixed_effects, golden["fixed_effects"], "term", FIXED
    )
    cells += _compare_rows(design, "Type III ANOVA", fit.anova, golden["anova"], "term", ANOVA)
    for spec, rows in golden["emmeans"].items():
        cells += _compare_rows(design, f"EMM {spec} =", fit.emmeans[spec], rows, "level", EMMEANS)
    for spec, rows in golden["contrasts"].items():
        cells += _compare_rows(
            design, f"Tukey contrast ({spec})", fit.contrasts[spec], rows, "contrast", CONTRASTS
        )
    effects = fit.random_effects
    for row in golden["random_effects"]:
        match = effects[(effects.group == row["group"]) & (effects.effect == row["effect"])]
        got = (
            float(match.iloc[0]["variance" if row["kind"] == "variance" else "sd"])
            if len(match) == 1
            else None
        )
        if row["kind"] == "variance":
            want, tol = float(row["variance"]), max(REL_VARIANCE * abs(row["variance"]), 1e-8)
            label = f"random effect {row['group']} {row['effect']}, variance"
        else:
            want, tol = float(row["sd"]), 1e-3
            label = f"random effect {row['group']} {row['effect']}, correlation"
        cells.append(
            Cell.compare(
                label,
                want,
                got,
                tol,
                reason_if_differs="variance component differs from lme4's",
                reason_if_missing="no such random effect in glotbench's fit",
            )
        )
    want = float(golden["residual_variance"])
    cells.append(
        Cell.compare(
            "residual variance",
            want,
            float(fit.residual_variance),
            _tolerance("rel", REL_ESTIMATE, want),
        )
    )
    for part in ("marginal", "conditional"):
        want_r2 = golden["r2"][part]
        got_r2 = float(fit.r2[part])
        if want_r2 is None:
            # performance prints NA for the conditional R² of a singular fit
            cells.append(
                Cell(
                    f"Nakagawa R², {part}",
                    None,
                    None if math.isnan(got_r2) else got_r2,
                    ABS_R2,
                    "reproduced" if math.isnan(got_r2) else "differs",
                    "" if math.isnan(got_r2) else "R prints NA, glotbench a value",
                )
            )
            continue
        cells.append(Cell.compare(f"Nakagawa R², {part}", float(want_r2), got_r2, ABS_R2))
    cells.append(
        Cell.compare(
            "singular fit (1 = yes)",
            float(golden["singular"]),
            float(bool(fit.diagnostics["singular"])),
            0.0,
            reason_if_differs="singular-fit detection disagrees with lme4",
        )
    )
    criterion = "REML" if golden["reml"] else "ML"
    deviance = float(fit.diagnostics["deviance"])
    gap = deviance - float(golden["deviance"])
    verdict = "at least as good as" if gap <= 1e-6 else "worse than"
    notes = [
        f"{criterion} criterion: glotbench {deviance:.6f}, lme4 {float(golden['deviance']):.6f} "
        f"(glotbench − lme4 = {gap:.2e}; lower is better, so glotbench's optimum is {verdict} "
        "lme4's).",
    ]
    return TableReproduction(
        table=f"design {design}",
        title=f"{golden['formula']} ({criterion}, {golden['n']} rows)",
        method=(
            "analyze_lmm on the design's CSV, emmeans specs as in R; compared with lme4, "
            "lmerTest (Satterthwaite), emmeans (Tukey), effectsize and performance"
        ),
        cells=cells,
        notes=notes,
    )


def reproduce(data_dir: Path) -> PaperReproduction:
    """The six R designs refitted by glotbench, every R value beside glotbench's."""
    folder = fixture_dir(data_dir)
    tables: list[TableReproduction] = []
    for design in DESIGNS:
        if folder is None:
            tables.append(
                TableReproduction(
                    table=f"design {design}",
                    title="R fixture not found",
                    method="not recomputed",
                    cells=[
                        Cell(
                            f"{design}: every R value",
                            None,
                            None,
                            0.0,
                            "not_reproducible",
                            "the R fixtures (tests/fixtures/mixed/*.json and *.csv) ship with "
                            "glotbench's source tree, not with an installed wheel; put them in "
                            "DATA_DIR/mixed",
                        )
                    ],
                )
            )
            continue
        golden = json.loads((folder / f"{design}.json").read_text(encoding="utf-8"))
        data = pd.read_csv(folder / golden["csv"])
        fit = analyze_lmm(
            data,
            golden["formula"],
            emmeans_specs=list(golden["emmeans"]),
            reml=bool(golden["reml"]),
        )
        tables.append(_design_table(design, golden, fit))
    versions = ""
    if folder is not None:
        first = json.loads((folder / f"{DESIGNS[0]}.json").read_text(encoding="utf-8"))
        versions = ", ".join(f"{k} {v}" for k, v in first.get("versions", {}).items())
    return PaperReproduction(
        paper=PAPER_ID,
        citation=CITATION,
        inputs=(
            f"R fixtures in {folder if folder is not None else 'tests/fixtures/mixed (absent)'}"
            f" written by make_golden.R ({versions})"
        ),
        tables=tables,
    )
