"""The EuroEval/ScandEval rank score: a published leaderboard recomputed from its own table.

EuroEval's leaderboards before 2026-05-28 rank models by the rank score that glotbench
implements as ``--rank-method legacy-2025``
(:func:`glotbench.analysis.euroeval_rank.euroeval_rank_scores`): per dataset, models in
order of their mean score; a model whose iteration scores are significantly worse than
the last model that started a new level (one-sided Welch t-test, α = 0.05) adds the
difference of the means divided by the population SD of all models' means; rank scores
are averaged over datasets within a task, tasks within a language, languages overall.

Published inputs and outputs: the Faroese NLU leaderboard of 2025-01-11
(ScandEval/scandeval.github.io, ``faroese-nlu.md``, commit d1fac74): for each of its 149
models, the mean ± 95 % half-width of the primary metric on FoNE, FoSent, ScaLA-fo and
FoQA (``glotbench/data/euroeval_faroese_nlu_scores.csv``) and the printed rank
(``glotbench/data/euroeval_published.csv``). A half-width h is 1.96 × SD/√n over n = 10
iterations (:mod:`glotbench.resample.scandeval`), so SD = h·√n / 1.96;
the Welch test needs only each model's mean, SD and n, so the summaries carry what
EuroEval's test used, up to their rounding to two decimals.

Tolerance: half a unit of the printed rank (0.005) plus the effect of the means'
rounding: a rank score telescopes to (mean of the top model − mean of the model's
reference) / SD of the means, so two means rounded by ≤ 0.005 each move a dataset's rank
score by ≤ 0.01 / SD_d; averaged over the four datasets.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from glotbench.analysis.euroeval_iterations import EUROEVAL_ITERATIONS, IterationTable
from glotbench.analysis.euroeval_rank import euroeval_rank, welch_greater_pvalue
from glotbench.data import published_values
from glotbench.reproduce.base import Cell, PaperReproduction, TableReproduction, rounding_tolerance
from glotbench.resample.scandeval import CI_MULTIPLIER, sd_from_half_width

PAPER_ID = "euroeval"
CITATION = (
    "EuroEval (formerly ScandEval; Nielsen 2023, NoDaLiDa) leaderboard rank score, as "
    "published on scandeval.com before EuroEval's method change of 2026-05-28"
)
LEADERBOARD = "Faroese NLU leaderboard"
SCORES_FILE = "euroeval_faroese_nlu_scores.csv"
ALPHA = 0.05


def leaderboard_scores() -> pd.DataFrame:
    """The leaderboard's printed mean ± half-width per model and dataset (as strings)."""
    with resources.files("glotbench.data").joinpath(SCORES_FILE).open("r", encoding="utf-8") as fh:
        return pd.read_csv(fh, dtype=str, keep_default_na=False)


def iteration_table(scores: pd.DataFrame) -> IterationTable:
    """Summaries (mean, SD = h·√n/1.96, n = 10) in the leaderboard's model order."""
    models = list(dict.fromkeys(scores["model"]))
    cells = scores[["dataset", "task", "language"]].drop_duplicates()
    datasets = list(cells["dataset"])
    mean = np.full((len(models), len(datasets)), np.nan)
    half = np.full_like(mean, np.nan)
    m_index = {m: i for i, m in enumerate(models)}
    d_index = {d: i for i, d in enumerate(datasets)}
    for row in scores.itertuples(index=False):
        mean[m_index[row.model], d_index[row.dataset]] = float(row.mean)
        half[m_index[row.model], d_index[row.dataset]] = float(row.half_width)
    n = np.where(np.isfinite(mean), float(EUROEVAL_ITERATIONS), 0.0)
    sd = sd_from_half_width(half, EUROEVAL_ITERATIONS)
    metric = dict(zip(scores["dataset"], scores["metric"], strict=False))
    return IterationTable(
        tuple(models),
        tuple(datasets),
        tuple(cells["task"]),
        tuple(cells["language"]),
        None,
        mean,
        sd,
        n,
        metrics=tuple(metric[d] for d in datasets),
    )


#: Half a unit of the printed means and half-widths (two decimals).
PRINTED_ROUNDING = 0.005


@dataclass(frozen=True)
class WelchTest:
    """One gating test of the 2025 rank score: ``model`` against its ``reference`` on
    dataset ``d``, with its p-value from the printed summaries and its range over the
    rounding box of the four printed numbers (each mean and half-width ± 0.005)."""

    model: int
    reference: int
    d: int
    p: float
    p_low: float
    p_high: float
    #: (mean_ref, sd_ref, mean, sd) inside the rounding box that decides the other way
    flipped_inputs: tuple[float, float, float, float] | None

    @property
    def undecided(self) -> bool:
        """True when the rounding allows either decision at α."""
        return self.p_low < ALPHA <= self.p_high


def _welch_test(table: IterationTable, d: int, reference: int, model: int) -> WelchTest:
    n_ref, n = table.n[reference, d], table.n[model, d]
    scale = np.sqrt(EUROEVAL_ITERATIONS) / CI_MULTIPLIER
    p = float(
        welch_greater_pvalue(
            table.mean[reference, d],
            table.sd[reference, d],
            n_ref,
            table.mean[model, d],
            table.sd[model, d],
            n,
        )
    )
    corners = []
    for signs in itertools.product((-1, 1), repeat=4):
        inputs = (
            table.mean[reference, d] + signs[0] * PRINTED_ROUNDING,
            max(table.sd[reference, d] + signs[1] * PRINTED_ROUNDING * scale, 0.0),
            table.mean[model, d] + signs[2] * PRINTED_ROUNDING,
            max(table.sd[model, d] + signs[3] * PRINTED_ROUNDING * scale, 0.0),
        )
        corner_p = float(welch_greater_pvalue(inputs[0], inputs[1], n_ref, inputs[2], inputs[3], n))
        corners.append((corner_p, inputs))
    low, high = min(corners)[0], max(corners)[0]
    other = [c for c in corners if (c[0] < ALPHA) != (p < ALPHA)]
    flipped = min(other, key=lambda c: abs(c[0] - ALPHA))[1] if other else None
    return WelchTest(model, reference, d, p, low, high, flipped)


def gating_tests(table: IterationTable) -> list[WelchTest]:
    """Every model's Welch test against its reference, per dataset, in the 2025 walk:
    models by decreasing mean; the reference is the last model found significantly worse
    than its own reference."""
    out = []
    for d in range(len(table.datasets)):
        mean = table.mean[:, d]
        present = np.flatnonzero(np.isfinite(mean))
        order = present[np.argsort(-mean[present], kind="stable")]
        reference = int(order[0])
        for model in order[1:]:
            test = _welch_test(table, d, reference, int(model))
            out.append(test)
            if test.p < ALPHA:
                reference = int(model)
    return out


def _with_inputs(table: IterationTable, test: WelchTest) -> IterationTable:
    """The table with the test's four numbers moved (within rounding) to decide the other way."""
    assert test.flipped_inputs is not None
    mean, sd = table.mean.copy(), table.sd.copy()
    mean[test.reference, test.d], sd[test.reference, test.d] = test.flipped_inputs[:2]
    mean[test.model, test.d], sd[test.model, test.d] = test.flipped_inputs[2:]
    return replace(table, mean=mean, sd=sd)


def _overall(table: IterationTable) -> pd.Series:
    return euroeval_rank(table, method="legacy-2025").overall.set_index("model")["score"]


def explain_differences(
    table: IterationTable, differing: dict[str, float], tolerance: float
) -> dict[str, str]:
    """Why each differing model's rank differs: for every test that the rounding leaves
    undecided, rerun the rank score with that test's inputs moved inside their rounding box
    to the other decision, and see whether the model's printed rank comes out."""
    tests = gating_tests(table)
    undecided = [t for t in tests if t.undecided]
    reasons: dict[str, str] = {}
    for test in undecided:
        ranks = _overall(_with_inputs(table, test))
        for model, printed in differing.items():
            if model in reasons or abs(ranks[model] - printed) > tolerance + 1e-12:
                continue
            who = (
                "its own" if table.models[test.model] == model else f"{table.models[test.model]}'s"
            )
            reasons[model] = (
                f"rounding: {who} Welch test on {table.datasets[test.d]} (against "
                f"{table.models[test.reference]}) gives p = {test.p:.3f} from the printed "
                f"summaries but anywhere in {test.p_low:.3f}–{test.p_high:.3f} within their "
                "rounding (± 0.005); moved inside that rounding to the other side of α = 0.05, "
                f"the recomputed rank is {ranks[model]:.4f}, which reproduces the printed "
                f"{printed:.2f}. EuroEval tested the unrounded iteration scores"
            )
    index = {m: i for i, m in enumerate(table.models)}
    for model in differing:
        if model not in reasons:
            mine = [t for t in tests if t.model == index[model]]
            near = min(mine, key=lambda t: abs(np.log(max(t.p, 1e-300) / ALPHA)))
            reasons[model] = (
                "not explained by one test's rounding: no single Welch test that the printed "
                "rounding leaves undecided yields the printed rank when flipped (this model's "
                f"nearest: {table.datasets[near.d]}, p = {near.p:.3f}); several decisions, or "
                "the order of models with equal rounded means, may differ from EuroEval's"
            )
    return reasons


def reproduce(data_dir: Path) -> PaperReproduction:
    """The Faroese NLU leaderboard's ranks from its printed means and half-widths."""
    del data_dir
    table = iteration_table(leaderboard_scores())
    result = euroeval_rank(table, method="legacy-2025")
    overall = result.overall.set_index("model")["score"]
    pooled = result.datasets.drop_duplicates("dataset").set_index("dataset")["pooled_sd"]
    rounding = float(np.mean([0.01 / pooled[d] for d in table.datasets]))
    printed = published_values("euroeval")
    printed = printed[printed["table"] == LEADERBOARD]
    cells = []
    for row in printed.itertuples(index=False):
        recomputed = overall.get(row.row)
        tolerance = rounding_tolerance(row.printed) + rounding
        cells.append(
            Cell.compare(
                f"{row.row}, rank",
                float(row.printed),
                None if recomputed is None else float(recomputed),
                tolerance,
                reason_if_missing="the model has no scores in the table",
            )
        )
    differing = {
        c.key.removesuffix(", rank"): float(c.published)
        for c in cells
        if c.status == "differs" and c.published is not None
    }
    reasons = explain_differences(table, differing, cells[0].tolerance if cells else 0.0)
    cells = [
        replace(c, reason=reasons[c.key.removesuffix(", rank")]) if c.status == "differs" else c
        for c in cells
    ]
    counts = pd.Series([c.status for c in cells]).value_counts()
    notes = [
        f"{counts.get('reproduced', 0)} of {len(cells)} printed ranks are reproduced from the "
        "leaderboard's own printed summaries. For each that differs, glotbench looks for a "
        "Welch test that the rounding of the printed means and half-widths leaves undecided "
        "at α = 0.05 and reruns the rank score with that test's inputs moved, within their "
        "rounding, to the other decision; each cell says whether that yields the printed "
        "rank.",
        "SD per model and dataset is recovered from the printed half-width as h·√10/1.96 "
        "(EuroEval's half-width is 1.96·SD/√n with n = 10 iterations).",
        "EuroEval's leaderboard code (generate_leaderboard.py at the same commit) takes the SD "
        "of the models' printed means (ddof 0) and averages datasets → tasks → language; "
        "glotbench's legacy-2025 method does the same.",
    ]
    return PaperReproduction(
        paper=PAPER_ID,
        citation=CITATION,
        inputs=(
            "the Faroese NLU leaderboard of 2025-01-11 (ScandEval/scandeval.github.io "
            "faroese-nlu.md, commit d1fac74): mean ± half-width of each model's primary metric "
            f"on {', '.join(table.datasets)} (glotbench/data/{SCORES_FILE}) and its printed "
            "ranks (glotbench/data/euroeval_published.csv)"
        ),
        tables=[
            TableReproduction(
                table=LEADERBOARD,
                title="EuroEval rank score (method before 2026-05-28) of 149 models, Faroese NLU",
                method=(
                    "euroeval_rank(method='legacy-2025') on the printed mean, SD = h·√10/1.96 and "
                    "n = 10 per model and dataset; tolerance = 0.005 (printed rank) + mean over "
                    f"datasets of 0.01 / SD of the means = {rounding:.4f}"
                ),
                cells=cells,
                notes=notes,
            )
        ],
    )
