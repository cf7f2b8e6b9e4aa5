"""Sälevä, Ataman & Lignos: the paper's 12 tables recomputed from the inputs its authors published.

Inputs: ``<data_dir>/saleva/inputs/`` — reuben's ``examples/experiments-for-paper/``
(j0ma/reuben @ 87a3126, see ``inputs/SOURCE.txt``): per-language summaries of XQuAD F1
(``xquad/sd-cols``), FLORES-200 BLEU / ChrF++ / COMET (``flores``) and OpenNER F1
(``ner/sd-cols``), each with reuben's YAML config. Published numbers:
``<data_dir>/saleva/table_01.csv`` … ``table_12.csv`` (one row per printed number).

Every input is read by glotbench's reuben importer (:func:`~glotbench.importers.reuben.read_reuben`,
the validation of ``glotbench import reuben``) into a
:class:`~glotbench.analysis.variance.ComponentTable`, and every number comes from the public
analyses: :func:`~glotbench.analysis.variance.variance_components` (Tables 1, 8, 10, 11),
:func:`~glotbench.analysis.compare.compare_models` with the parametric scheme of the paper's
§4.2 (Tables 2, 7) and :func:`~glotbench.analysis.ranks.rank_models` with languages resampled
with replacement (Table 3). The NER replication file (``ner/idx-cols/data.jsonl``) was never
published, so Tables 4, 5, 6, 9 and 12 are not reproducible; Table 12's relation to the NER
summary is checked and stated instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import cast

import numpy as np
import pandas as pd

from glotbench.analysis.compare import compare_models
from glotbench.analysis.draws import DrawSettings
from glotbench.analysis.ranks import rank_models
from glotbench.analysis.variance import ComponentTable, components_from_summary, variance_components
from glotbench.importers.reuben import ReubenConfig, ReubenRows, parse_metric_specs, read_reuben
from glotbench.reproduce.base import Cell, PaperReproduction, TableReproduction, rounding_tolerance
from glotbench.reproduce.saleva_inputs import (
    inputs_folder,
    printed_value,
    published_table,
    read_flores,
    read_xquad,
)

PAPER = "saleva"
CITATION = (
    "Sälevä, Ataman & Lignos, “Beyond statistical significance: quantifying uncertainty and "
    "statistical variability in multilingual and multitask NLP evaluation” (2025); "
    "toolkit github.com/j0ma/reuben"
)

#: replications per Monte Carlo quantity, as reuben's configs (num_bootstrap_resamples)
N_DRAWS = 10_000
#: seed of glotbench's draws
SEED = 0
#: a Monte Carlo cell is reproduced within rounding + Z_MC standard errors of the
#: difference of two independent 10,000-draw estimates (the paper's and glotbench's)
Z_MC = 4.0

_MISSING_NER = (
    "needs the NER replication file ner/idx-cols/data.jsonl (columns Model, Task, Seed, "
    "Bootstrap, F1), listed in reuben's tree but never published (git object "
    "9bb64dd missing; inputs/SOURCE.txt)"
)


def mc_sd_tolerance(sd: float, n_draws: int = N_DRAWS, z: float = Z_MC) -> float:
    """z standard errors of the difference of two independent SD estimates from n Gaussian draws.

    The SD of n normal draws has SE ≈ σ/√(2n) (Kendall & Stuart; the variance of s² is
    2σ⁴/(n−1)); the paper's and glotbench's estimates are independent, so the SE of their
    difference is σ/√n.
    """
    return z * abs(sd) / math.sqrt(n_draws)


def mc_share_tolerance(percent: float, n_draws: int = N_DRAWS, z: float = Z_MC) -> float:
    """z binomial SEs (in percentage points) of the difference of two independent shares."""
    p = min(max(percent / 100.0, 0.0), 1.0)
    return z * 100.0 * math.sqrt(2.0 * p * (1.0 - p) / n_draws)


def winsorised_count(values: np.ndarray, threshold: float = 3.5) -> int:
    """How many SDs reuben's ``fix_outliers`` would replace: outside [Q1 − 3.5·IQR, Q3 + 3.5·IQR].

    reuben/analysis.py ``winsorize(method="iqr")``, applied by ``grab_data_and_preprocess``
    to each SD column over all models and tasks (numpy's default percentiles).
    """
    q1, q3 = np.percentile(values, [25, 75])
    iqr = q3 - q1
    return int(((values < q1 - threshold * iqr) | (values > q3 + threshold * iqr)).sum())


def _outlier_note(rows: ReubenRows, metric: str | None = None) -> str:
    frame = rows.summary_frame(metric)
    columns = {
        "σ_seed": frame["sigma_seed"].to_numpy(),
        "σ_boot": frame["sigma_boot"].to_numpy(),
        "σ_w": np.hypot(frame["sigma_seed"], frame["sigma_boot"]).to_numpy(),
    }
    counts = {name: winsorised_count(v) for name, v in columns.items()}
    changed = sum(counts.values())
    return (
        "reuben's config sets fix_outliers (SDs beyond 3.5 IQR replaced by the median); "
        + (
            "no SD of this file is beyond that, so it changes nothing here"
            if changed == 0
            else f"it would replace {counts} SDs here, which glotbench keeps"
        )  # fmt: skip
        + f" ({metric or 'all metrics'})."
    )


def _table(rows: ReubenRows, metric: str | None = None) -> ComponentTable:
    return components_from_summary(rows.summary_frame(metric))


# --- helpers ------------------------------------------------------------------------------------


def _cell_key(*parts: object) -> str:
    return ", ".join(str(p) for p in parts if p not in (None, "") and not pd.isna(p))


def _variance_summary(
    published: pd.DataFrame,
    table: ComponentTable,
    scale: float,
    between_ddof: int,
    reason: Callable[[pd.Series], str] = lambda row: "",
) -> list[Cell]:
    """Cells of a Table 1 / 8 block: σ_b per model, mean/sd/min/max of σ_w, σ_seed, σ_boot."""
    result = variance_components(table).per_model.set_index("model")
    cells = []
    for _, row in published.iterrows():
        value = printed_value(row["value"])
        if value is None:  # '-': σ_b has no SD/min/max over languages
            continue
        summary = result.loc[row["model_key"]]
        if row["quantity"] == "sigma_b":
            n = int(summary["n_languages"])
            # glotbench's σ_b has ddof = 1; the SD with ddof d is σ_b · √((n − 1)/(n − d))
            recomputed = summary["sigma_b"] * math.sqrt((n - 1) / (n - between_ddof)) * scale
        else:
            recomputed = summary[f"{row['quantity']}_{row['statistic']}"] * scale
        cells.append(
            Cell.compare(
                _cell_key(
                    row["model"],
                    row.get("metric") if row.get("metric") not in ("F1",) else "",
                    row["quantity"],
                    row["statistic"],
                ),
                value,
                recomputed,
                rounding_tolerance(row["value"]),
                reason_if_differs=reason(row),
            )
        )
    return cells


def _per_language_components(
    published: pd.DataFrame, table: ComponentTable, scale: float, reason: str = ""
) -> list[Cell]:
    per_unit = variance_components(table).per_unit.set_index(["model", "language"])
    cells = []
    for _, row in published.iterrows():
        recomputed = per_unit.loc[(row["model_key"], row["task_key"]), row["quantity"]] * scale
        cells.append(
            Cell.compare(
                _cell_key(
                    row["model"],
                    row["language_or_pair"],
                    row["metric"] if row["metric"] != "F1" else "",
                    row["quantity"],
                ),
                printed_value(row["value"]),
                recomputed,
                rounding_tolerance(row["value"]),
                reason_if_differs=reason,
            )
        )
    return cells


def _pairwise(published: pd.DataFrame, table: ComponentTable, scale: float) -> list[Cell]:
    """Table 2 / 7 cells: observed per-language difference and its SD over parametric draws."""
    settings = DrawSettings(scheme="parametric", n_draws=N_DRAWS, seed=SEED)
    per_language = compare_models(table, settings, per_language=True).per_language
    assert per_language is not None  # per_language=True
    lookup = {
        (a, b, lang): (d, s)
        for a, b, lang, d, s in per_language[
            ["model_a", "model_b", "language", "difference", "sd"]
        ].itertuples(index=False)
    }
    cells = []
    for _, row in published.iterrows():
        a, b, lang = row["model_key"], row["model2_key"], row["task_key"]
        if (a, b, lang) in lookup:
            diff, sd = lookup[(a, b, lang)]
        else:
            diff, sd = lookup[(b, a, lang)]
            diff = -diff
        printed = row["value"]
        key = _cell_key(
            row["language_or_pair"],
            row["metric"] if row["metric"] != "F1" else "",
            f"{row['model']} − {row['model2']}",
            "mean difference" if row["quantity"] == "mean_diff" else "SD",
        )
        if row["quantity"] == "mean_diff":
            cells.append(
                Cell.compare(key, printed_value(printed), diff * scale, rounding_tolerance(printed))
            )
        else:
            tol = rounding_tolerance(printed) + mc_sd_tolerance(sd * scale)
            cells.append(
                Cell.compare(
                    key,
                    printed_value(printed),
                    sd * scale,
                    tol,
                    reason_if_differs="outside the Monte Carlo tolerance of two 10,000-draw SDs",
                )
            )
    return cells


# --- the tables -----------------------------------------------------------------------------------


def _table_1_and_10(data_dir: Path, xquad: ReubenRows) -> list[TableReproduction]:
    table = _table(xquad)
    t1, t10 = published_table(data_dir, 1), published_table(data_dir, 10)
    # evidence: Table 1's summaries are summaries of Table 10's printed cells
    printed10 = t10.assign(v=t10["value"].map(printed_value)).pivot_table(
        index="model_key", columns="quantity", values="v", aggfunc=list
    )
    agree, total = 0, 0
    for _, row in t1[t1["quantity"] != "sigma_b"].iterrows():
        value = printed_value(row["value"])
        if value is None:
            continue
        values = pd.Series(printed10.loc[row["model_key"], row["quantity"]])
        stat = {"mean": values.mean(), "sd": values.std(ddof=1), "min": values.min(),
                "max": values.max()}[row["statistic"]]  # fmt: skip
        total += 1
        agree += abs(stat - value) <= 0.015
    per_unit = variance_components(table).per_unit
    published_w = t10[t10["quantity"] == "sigma_w"]
    first = t10.iloc[0]
    ours = per_unit.set_index(["model", "language"]).loc[(first["model_key"], first["task_key"])]
    t10_seed = t10[
        (t10["model_key"] == first["model_key"]) & (t10["task_key"] == first["task_key"])
    ]
    printed = dict(zip(t10_seed["quantity"], t10_seed["value"], strict=True))
    other_run = (
        "Table 10 (and Table 1, its summary) were computed from other replications than the "
        "published xquad/sd-cols/data.jsonl: e.g. "
        f"{first['model']} {first['language_or_pair']} prints σ_seed {printed['sigma_seed']}, "
        f"σ_boot {printed['sigma_boot']}, but the file gives "
        f"{ours['sigma_seed'] * 100:.2f}, {ours['sigma_boot'] * 100:.2f}"
    )
    notes10 = [
        other_run + ". The printed table is self-consistent (its third column is "
        "√(col1² + col2²) within rounding in "
        f"{_hypot_agreement(t10)}/{len(published_w)} cells), and Table 2's SDs agree with the "
        "published file, not with Table 10 (see Table 2) — so the file is a later or earlier "
        "run than the one behind Tables 1 and 10.",
    ]
    notes1 = [
        f"Table 1 summarises Table 10: the mean / SD (ddof = 1) / min / max over languages of "
        f"Table 10's printed columns match {agree}/{total} printed σ_w, σ_seed, σ_boot cells "
        "within 0.015 (rounding of both tables).",
        other_run + "; hence the σ_w, σ_seed, σ_boot blocks differ. σ_b (SD of the 12 "
        "per-language F1, ddof = 1 as reuben's variance_components_summary) is within 0.06 of "
        "the file: the per-language means also differ slightly between the two runs.",
    ]
    cells1 = _variance_summary(
        t1,
        table,
        100.0,
        between_ddof=1,
        reason=lambda row: "computed from other replications than the published file (see notes)",
    )
    cells10 = _per_language_components(
        t10,
        table,
        100.0,
        reason="computed from other replications than the published file (see notes)",
    )
    return [
        TableReproduction(
            "Table 1",
            "XQuAD F1: variance components per model (σ_b; mean/SD/min/max over 12 "
            "languages of σ_w, σ_boot, σ_seed)",
            "glotbench variance components (analyze variance) of the reuben-imported "
            "xquad/sd-cols/data.jsonl (F1, SD_seed, SD_boot_avg), ×100; σ_b with ddof = 1",
            cells1,
            notes1,
        ),
        TableReproduction(
            "Table 10",
            "XQuAD F1: σ_seed, σ_boot, σ_w per model and language",
            "glotbench variance components per language of the imported summary, ×100 "
            "(σ_w = √(σ_seed² + σ_boot²))",
            cells10,
            notes10,
        ),
    ]


def _hypot_agreement(printed: pd.DataFrame) -> int:
    wide = printed.assign(v=printed["value"].map(printed_value)).pivot_table(
        index=["model_key", "task_key"], columns="quantity", values="v"
    )
    return int((np.abs(np.hypot(wide["sigma_seed"], wide["sigma_boot"]) - wide["sigma_w"])
                <= 0.0151).sum())  # fmt: skip


def _table_2(data_dir: Path, xquad: ReubenRows) -> TableReproduction:
    published = published_table(data_dir, 2)
    cells = _pairwise(published, _table(xquad), 100.0)
    flags = published[published["quantity"] == "mean_diff"]
    recomputed = {c.key: c.recomputed for c in cells}
    agree = 0
    for row in flags.itertuples(index=False):
        prefix = _cell_key(row.language_or_pair, f"{row.model} − {row.model2}")
        mean_difference = cast(float, recomputed[f"{prefix}, mean difference"])
        effect = mean_difference / cast(float, recomputed[f"{prefix}, SD"])
        agree += (abs(effect) < 2) == (row.flag == "*")
    exact = sum(c.status == "reproduced" for c in cells if c.key.endswith("mean difference"))
    return TableReproduction(
        "Table 2",
        "XQuAD F1: per-language differences between models and their SDs (* = |d/SD| < 2)",
        f"glotbench compare, parametric scheme (paper §4.2: per model and language a score "
        f"N(F1, σ_seed² + σ_boot²)), {N_DRAWS:,} draws, seed {SEED}, on the reuben-imported "
        "summary; differences are the observed F1 differences ×100, SDs the SD of the drawn "
        f"differences ×100. Tolerance of an SD: rounding + {Z_MC:g}·SD/√{N_DRAWS:,} (two "
        "independent Monte Carlo estimates).",
        cells,
        [
            f"The mean differences are exact (no Monte Carlo): {exact} of {len(flags)} reproduce "
            "within rounding. The SDs agree with √(σ_w,a² + σ_w,b²) from the published file, "
            "not with Table 10's σ_w — evidence that Table 2 was computed from the published file.",
            f"The printed * (|d/SD| < 2, not significant) agrees with glotbench's effect sizes "
            f"in {agree}/{len(flags)} cells.",
            _outlier_note(xquad),
        ],
    )


#: the two rows of Table 3 that the recomputation finds exchanged (see _table_3's notes)
SWAPPED_IN_TABLE_3 = ("Clarus-7B-v0.3", "gemma-2-9b")


def _with_table_10_sds(data_dir: Path, xquad: ReubenRows) -> ComponentTable:
    """The file's F1 means with Table 10's printed σ_seed and σ_boot (the other run's)."""
    t10 = published_table(data_dir, 10)
    printed = t10.assign(v=t10["value"].map(printed_value) / 100).pivot_table(
        index=["model_key", "task_key"], columns="quantity", values="v"
    )
    printed.index = printed.index.set_names(["model", "language"])
    frame = xquad.summary_frame().drop(columns=["sigma_seed", "sigma_boot"])
    frame = frame.set_index(["model", "language"]).join(printed[["sigma_seed", "sigma_boot"]])
    return components_from_summary(frame.reset_index())


def _shares(table: ComponentTable, languages: str) -> pd.DataFrame:
    settings = DrawSettings(
        scheme="parametric",
        n_draws=N_DRAWS,
        seed=SEED,
        languages=languages,  # type: ignore[arg-type]
    )
    return rank_models(table, settings).distribution.set_index(["aggregator", "model"])


def _table_3(data_dir: Path, xquad: ReubenRows) -> TableReproduction:
    published = published_table(data_dir, 3)
    table = _table(xquad)
    plain = _shares(table, "none")
    resampled = _shares(table, "with")
    other_run = _shares(_with_table_10_sds(data_dir, xquad), "none")
    names = {"Arithmetic mean": "mean", "Median": "median", "Geometric mean": "geometric_mean"}
    swap = dict(zip(SWAPPED_IN_TABLE_3, reversed(SWAPPED_IN_TABLE_3), strict=True))
    cells = []
    agree_swapped = agree_other = 0
    for _, row in published.iterrows():
        value = printed_value(row["value"])
        value = 0.0 if value is None else value  # '-' is printed for 0
        aggregator, column = names[row["aggregator"]], f"rank_{row['rank']}"
        share = float(plain.loc[(aggregator, row["model_key"]), column])
        partner = swap.get(row["model_key"], row["model_key"])
        swapped = float(plain.loc[(aggregator, partner), column])
        swapped_other = float(other_run.loc[(aggregator, partner), column])
        tol = rounding_tolerance("0.00") + mc_share_tolerance(max(value, share))
        agree_swapped += abs(swapped - value) <= rounding_tolerance("0.00") + mc_share_tolerance(
            max(value, swapped)
        )
        agree_other += abs(swapped_other - value) <= rounding_tolerance(
            "0.00"
        ) + mc_share_tolerance(max(value, swapped_other))
        reason = (
            f"rows {SWAPPED_IN_TABLE_3[0]} and {SWAPPED_IN_TABLE_3[1]} look exchanged: glotbench "
            f"gives {swapped:.2f} % for {partner} here, {swapped_other:.2f} % with Table 10's "
            "σ (the run behind Tables 1 and 10)"
            if partner != row["model_key"]
            else "outside the binomial Monte Carlo tolerance"
        )
        cells.append(
            Cell.compare(
                _cell_key(row["aggregator"], row["model"], f"rank {row['rank']}", "% of draws"),
                value,
                share,
                tol,
                reason_if_differs=reason,
            )
        )
    mean = table.mean * 100
    observed = {
        name: dict(zip(table.models, values, strict=True))
        for name, values in (
            ("arithmetic mean", mean.mean(axis=1)),
            ("geometric mean", np.exp(np.log(mean).mean(axis=1))),
        )
    }
    a, b = SWAPPED_IN_TABLE_3
    ti = "TowerInstruct-Mistral-7B-v0.2"
    second = published[(published["model_key"] == a) & (published["rank"] == 2)]
    printed_second = dict(zip(second["aggregator"], second["value"], strict=True))
    return TableReproduction(
        "Table 3",
        "XQuAD F1: rank distribution (% of replications at ranks 1–4) under arithmetic mean, "
        "median and geometric mean",
        f"glotbench ranks: parametric draws N(F1, σ_w²) per model and language, the 12 "
        f"languages kept fixed, {N_DRAWS:,} draws, seed {SEED}, on the reuben-imported summary. "
        f"Tolerance: 0.005 + {Z_MC:g}·√(2p(1−p)/{N_DRAWS:,})·100 (binomial SEs of the "
        "difference of two independent shares). '-' in the paper is read as 0 %.",
        cells,
        [
            "Languages were not resampled for this table, although the config asks for it "
            "(task_resampling_method nonparametric, with replacement): the paper gives "
            f"TowerInstruct 7B 100.00 % at rank 4 under every aggregator, which language "
            f"resampling rules out (glotbench with it: "
            f"{resampled.loc[('mean', ti), 'rank_4']:.2f} % under the mean, "
            f"{resampled.loc[('median', ti), 'rank_4']:.2f} % under the median).",
            f"Erratum (likely): the rows of {a} and {b} are exchanged. From the published file "
            f"{a} has the higher arithmetic mean ({observed['arithmetic mean'][a]:.2f} vs "
            f"{observed['arithmetic mean'][b]:.2f}) but the lower geometric mean "
            f"({observed['geometric mean'][a]:.2f} vs {observed['geometric mean'][b]:.2f}), so it "
            "should rank 2nd more often under the mean and less often under the geometric mean; "
            f"the paper prints the opposite ({printed_second['Arithmetic mean']} % and "
            f"{printed_second['Geometric mean']} % at rank 2). With the two rows "
            f"exchanged, {agree_swapped}/{len(published)} cells agree within the tolerance; "
            f"with the rows exchanged and Table 10's σ (the run behind Tables 1 and 10) "
            f"{agree_other}/{len(published)}.",
        ],
    )


def _table_8_reason(row: pd.Series) -> str:
    if row["statistic"] == "sd":
        return (
            "SD over pairs: not identified — the mean, min and max of the same column "
            "reproduce, so the per-pair values are right; the printed SD matches neither the "
            "sample (ddof = 1) nor the population SD (ddof = 0) of those values"
        )
    return ""


def _flores_tables(data_dir: Path) -> list[TableReproduction]:
    flores, notes = read_flores(data_dir)
    metric_of = {"BLEU": "bleu", "ChrF++": "chrf++", "COMET": "comet"}
    tables = {name: _table(flores, metric) for name, metric in metric_of.items()}
    t7, t8, t11 = (published_table(data_dir, n) for n in (7, 8, 11))
    cells7: list[Cell] = []
    cells8: list[Cell] = []
    cells11: list[Cell] = []
    for name, table in tables.items():
        cells7 += _pairwise(t7[t7["metric"] == name], table, 1.0)
        cells8 += _variance_summary(
            t8[t8["metric"] == name], table, 1.0, between_ddof=0, reason=_table_8_reason
        )
        cells11 += _per_language_components(t11[t11["metric"] == name], table, 1.0)
    ddof1 = {
        name: variance_components(table).per_model.set_index("model")["sigma_b"].round(2).to_dict()
        for name, table in tables.items()
    }
    example = next(iter(ddof1["BLEU"].items()))
    return [
        TableReproduction(
            "Table 7",
            "FLORES-200: per-pair differences between models (BLEU, ChrF++, COMET) and their SDs",
            f"glotbench compare, parametric scheme, {N_DRAWS:,} draws, seed {SEED}, per metric "
            "on the reuben-imported flores/data.jsonl (*_mean, *_seed_sd, *_boot_sd); SD "
            f"tolerance rounding + {Z_MC:g}·SD/√{N_DRAWS:,}.",
            cells7,
            [*notes, *(_outlier_note(flores, metric) for metric in metric_of.values())],
        ),
        TableReproduction(
            "Table 8",
            "FLORES-200: variance components per model and metric (σ_b; mean/SD/min/max over 16 "
            "pairs of σ_w, σ_seed, σ_boot)",
            "glotbench variance components of the imported summary; σ_b converted to the "
            "population SD (ddof = 0): σ_b · √((n − 1)/n), n = 16",
            cells8,
            [
                "Finding: the paper's σ_b in this table is the population SD (ddof = 0) of the "
                "16 per-pair means, while Table 1 (XQuAD) and reuben's "
                "variance_components_summary use the sample SD (ddof = 1). glotbench's σ_b "
                f"(ddof = 1) is {example[1]:.2f} for {example[0]} BLEU where the paper prints "
                "the ddof = 0 value; all σ_b cells reproduce once converted.",
                *notes,
            ],
        ),
        TableReproduction(
            "Table 11",
            "FLORES-200: σ_seed and σ_boot per model, metric and language pair",
            "glotbench variance components per language pair of the imported summary",
            cells11,
            notes,
        ),
    ]


def _ner_tables(data_dir: Path) -> list[TableReproduction]:
    """Tables 4, 5, 6, 9, 12: not reproducible; Table 12 checked against the NER summary."""
    out = []
    titles = {
        4: "NER: σ_b, σ_seed, σ_boot over 61 datasets, individual vs concatenated training",
        5: "NER: differences of the 61-dataset mean between models (original and subsampled)",
        6: "NER: rank distribution (ranks 1–6)",
        9: "NER: variance components summary over 61 datasets",
        12: "NER: var_seed and var_boot per model and dataset",
    }
    root = inputs_folder(data_dir) / "ner" / "sd-cols"
    ner = read_reuben(
        root / "data.jsonl", ReubenConfig.from_yaml(root / "config-seed-boot.yaml"),
        task="ner", metrics=parse_metric_specs(["Mean=ner_f1"]), percent=True,
    )  # fmt: skip
    summary = ner.frame.rename(columns={"model": "model_key", "language": "task_key"})
    summary = summary.set_index(["model_key", "task_key"])
    between = variance_components(_table(ner)).per_model.set_index("model")["sigma_b"] * 100
    split = summary["sigma_boot"] / summary["sigma_seed"]
    split_note = (
        "The published NER summary (ner/sd-cols/data.jsonl) cannot stand in for the replication "
        f"file: its 'SD (boot)' / 'SD (seed)' ratio is 7/3 in every row (range "
        f"{split.min():.6f}–{split.max():.6f}, {len(split)} rows), i.e. one within-dataset SD "
        "split 30 % / 70 %, not two estimated components."
    )
    for number, title in titles.items():
        published = published_table(data_dir, number)
        notes: list[str] = []
        cells = []
        if number == 12:
            wide = published.assign(v=published["value"].map(printed_value)).pivot_table(
                index=["model_key", "task_key"], columns="quantity", values="v"
            )
            joined = wide.join(summary, how="inner")
            total = np.sqrt(joined["var_seed"] + joined["var_boot"])
            ratio = total / (joined["sigma_seed"] * 100 / 0.3)
            close = int((np.abs(ratio - 1) <= 0.05).sum())
            notes.append(
                split_note + " Against Table 12 (whose row-to-dataset order is itself inferred, "
                f"see the data's README): √(var_seed + var_boot) ≈ SD(seed)/0.3 within 5 % in "
                f"{close}/{len(joined)} rows (median ratio {float(ratio.median()):.3f}), so the "
                "summary's SDs are rescaled totals of roughly these variances; neither variance "
                "can be recovered from them."
            )
        elif number in (4, 9):
            notes.append(
                "σ_b is recomputed from the NER summary's per-dataset means (ddof = 1, the "
                "convention of Table 1); the paper computed it from the replication file, whose "
                "per-dataset means differ slightly, so it is close but outside rounding. "
                + split_note
            )
        for _, row in published.iterrows():
            value = printed_value(row["value"])
            if value is None:
                continue
            key = _cell_key(row["model"], row["panel"], row["language_or_pair"], row["model2"],
                            row["quantity"], row["statistic"],
                            f"rank {row['rank']}" if not pd.isna(row["rank"]) else "")  # fmt: skip
            if number in (4, 9) and row["quantity"] == "sigma_b":
                cells.append(
                    Cell.compare(
                        key,
                        value,
                        float(between[row["model_key"]]),
                        rounding_tolerance(row["value"]),
                        reason_if_differs="the summary's per-dataset means are not the "
                        "replication means the paper used (see notes)",
                    )
                )
                continue
            cells.append(
                Cell(
                    key,
                    value,
                    None,
                    rounding_tolerance(row["value"]),
                    "not_reproducible",
                    _MISSING_NER,
                )
            )
        method = (
            "σ_b: glotbench variance components of the reuben-imported ner/sd-cols summary; "
            "everything else not recomputed: " + _MISSING_NER
            if number in (4, 9)
            else "not recomputed: " + _MISSING_NER
        )
        out.append(TableReproduction(f"Table {number}", title, method, cells, notes))
    return out


def reproduce(data_dir: str | Path) -> PaperReproduction:
    """Every table of the paper: recomputed where the published inputs allow, else why not."""
    data = Path(data_dir)
    xquad = read_xquad(data)
    t1, t10 = _table_1_and_10(data, xquad)
    flores = _flores_tables(data)
    ner = {t.table: t for t in _ner_tables(data)}
    by_name = {t.table: t for t in [t1, t10, _table_2(data, xquad), _table_3(data, xquad),
                                    *flores, *ner.values()]}  # fmt: skip
    order = [f"Table {n}" for n in range(1, 13)]
    return PaperReproduction(
        paper=PAPER,
        citation=CITATION,
        inputs=(
            "reuben @ 87a31268 examples/experiments-for-paper (xquad/sd-cols, flores, "
            "ner/sd-cols data and configs; ner/idx-cols/data.jsonl missing), read with "
            "glotbench's reuben importer; published numbers: saleva/table_01…12.csv"
        ),
        tables=[by_name[name] for name in order],
    )
