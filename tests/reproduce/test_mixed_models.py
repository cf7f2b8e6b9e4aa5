"""Mixed-model reproduction (issue 23): every R value of the six fixtures beside glotbench's.

The R values are read here from tests/fixtures/mixed/*.json with ``json``; each cell must
carry exactly that value, and its status must follow from glotbench's value and the
stated tolerance.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from glotbench.reproduce.mixed_models import DESIGNS, fixture_dir, reproduce

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "mixed"


@pytest.fixture(scope="module")
def paper():
    return reproduce(Path("/nonexistent"))


def _golden(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def _expected_cells(g: dict) -> dict[str, float]:
    """Every R value the page compares, keyed as the module keys them."""
    out: dict[str, float] = {}
    for row in g["fixed_effects"]:
        for col in ("estimate", "se", "df", "t", "p"):
            out[f"fixed effect {row['term']}, {col}"] = row[col]
    for row in g["anova"]:
        for col in ("num_df", "den_df", "F", "p", "eta2_partial", "eta2_ci_low", "eta2_ci_high"):
            out[f"Type III ANOVA {row['term']}, {col}"] = row[col]
    for spec, rows in g["emmeans"].items():
        for row in rows:
            for col in ("emmean", "se", "df", "lower", "upper"):
                out[f"EMM {spec} = {row['level']}, {col}"] = row[col]
    for spec, rows in g["contrasts"].items():
        for row in rows:
            for col in ("estimate", "se", "df", "t", "p"):
                out[f"Tukey contrast ({spec}) {row['contrast']}, {col}"] = row[col]
    for row in g["random_effects"]:
        kind = "variance" if row["kind"] == "variance" else "correlation"
        out[f"random effect {row['group']} {row['effect']}, {kind}"] = row[
            "variance" if kind == "variance" else "sd"
        ]
    out["residual variance"] = g["residual_variance"]
    for part in ("marginal", "conditional"):
        out[f"Nakagawa R², {part}"] = g["r2"][part]
    out["singular fit (1 = yes)"] = float(g["singular"])
    return {k: v for k, v in out.items() if v is not None or k.startswith("Nakagawa")}


def test_fixtures_are_found_in_the_source_tree() -> None:
    assert fixture_dir(Path("/nonexistent")) == FIXTURES.resolve()


@pytest.mark.slow
@pytest.mark.parametrize("design", DESIGNS)
def test_every_r_value_is_a_cell_and_reproduced(paper, design: str) -> None:
    table = next(t for t in paper.tables if t.table == f"design {design}")
    g = _golden(design)
    expected = _expected_cells(g)
    cells = {c.key: c for c in table.cells}
    assert set(cells) == set(expected)
    for key, value in expected.items():
        cell = cells[key]
        assert cell.published == value, key
        if value is None:  # R prints NA: glotbench must have no value either
            assert cell.recomputed is None and cell.status == "reproduced"
            continue
        assert abs(cell.recomputed - value) <= cell.tolerance + 1e-12, key
        assert cell.status == "reproduced"
    assert g["formula"] in table.title
    # glotbench's REML/ML optimum is never worse than lme4's
    assert "at least as good as" in table.notes[0]


def test_tolerances_follow_the_documented_rules(paper) -> None:
    table = next(t for t in paper.tables if t.table == "design nested")
    cells = {c.key: c for c in table.cells}
    g = _golden("nested")
    row = g["fixed_effects"][1]
    assert cells[f"fixed effect {row['term']}, estimate"].tolerance == pytest.approx(
        1e-4 * abs(row["estimate"])
    )
    assert cells[f"fixed effect {row['term']}, df"].tolerance == pytest.approx(1e-2 * row["df"])
    assert cells[f"fixed effect {row['term']}, p"].tolerance == 1e-3
    assert paper.counts() == {
        "reproduced": sum(len(t.cells) for t in paper.tables),
        "differs": 0,
        "not_reproducible": 0,
    }


def test_missing_fixtures_are_not_reproducible_with_a_reason(tmp_path, monkeypatch) -> None:
    import glotbench.reproduce.mixed_models as module

    monkeypatch.setattr(module, "fixture_dir", lambda data_dir: None)
    result = module.reproduce(tmp_path)
    assert result.counts()["not_reproducible"] == len(DESIGNS)
    assert all("DATA_DIR/mixed" in t.cells[0].reason for t in result.tables)
