"""Example data embedded in the package (published figures)."""

from __future__ import annotations

from importlib import resources

import pandas as pd

#: What a reader of the XTREME-R figures must know before comparing them with
#: the paper's overall table (Ruder et al. 2021, Table 4). Shown wherever the
#: embedded baselines are (demo, leaderboard, report, JSON).
XTREME_R_CAVEATS: tuple[str, ...] = (
    "The embedded XTREME-R figures cover 8 of the paper's 10 tasks: the per-language UD-POS "
    "(Table 17) and Tatoeba (Table 22) tables are not available, so an overall average here is "
    "over 8 tasks and is not comparable with the Avg column of the paper's Table 4 (65.3 XLM-R "
    "Large, 54.1 mBERT), which covers all 10.",
    "TyDiQA-GoldP: the per-language Table 21 row labelled mT5 averages to 81.9, exactly Table 4's "
    "mT5-XXL translate-train-all figure (Table 4's zero-shot mT5-XXL prints 80.1), so it is "
    "embedded as 'mT5-XXL translate-train-all', not as zero-shot mT5-XXL. Table 21's mBERT "
    "translate-train and translate-train-all rows average to 55.1 and 64.2 where Table 4 prints "
    "52.4 and 59.5 (cause not found).",
)


def xtreme_r_baselines() -> pd.DataFrame:
    """Published per-language test scores of the XTREME-R baselines.

    Ruder et al. 2021, "XTREME-R: Towards More Challenging and Nuanced
    Multilingual Evaluation" (EMNLP): mBERT, XLM-R Large, mT5-XXL and mBERT
    translate-train(-all) on XNLI, XCOPA, WikiANN-NER, XQuAD, MLQA,
    TyDiQA-GoldP, Mewsli-X and LAReQA. Long format: model, task, language,
    metric, score (0-100). The TyDiQA-GoldP row of Table 21 labelled "mT5" is
    mT5-XXL translate-train-all (its mean, 81.9, is Table 4's translate-train-all
    figure) and is named so here; see docs/reproductions.md.
    """
    with (
        resources.files(__name__)
        .joinpath("xtreme_r_baselines.csv")
        .open("r", encoding="utf-8") as fh
    ):
        return pd.read_csv(fh, dtype={"model": str, "task": str, "language": str, "metric": str})


#: The "Avg" row of Table 5 of Ruder et al. 2021 (XTREME-R): mean error rate (%)
#: of XLM-R Large over the 50 MultiCheckList languages, per test, as printed.
MULTICHECKLIST_TABLE5_AVG: dict[str, float] = {
    "Comparisons": 47.3,
    "Intensifiers": 90.9,
    "Properties": 64.8,
    "Job vs Nationality": 26.7,
    "Animal vs Vehicles": 51.6,
    "Animal vs Vehicles 2": 32.8,
}


def published_values(paper: str) -> pd.DataFrame:
    """Printed numbers of a paper's tables that :mod:`glotbench.reproduce` recomputes.

    ``paper`` names the file ``<paper>_published.csv`` (``"xtreme_r"``,
    ``"scandeval"``). Columns: table, row, column, printed (the value as printed,
    a string, so its rounding is known), provenance (where the value was read).
    """
    with (
        resources.files(__name__)
        .joinpath(f"{paper}_published.csv")
        .open("r", encoding="utf-8") as fh
    ):
        return pd.read_csv(fh, dtype=str, keep_default_na=False)


def xtreme_r_published() -> pd.DataFrame:
    """Printed numbers of the XTREME-R paper's tables (:func:`published_values`)."""
    return published_values("xtreme_r")


def multichecklist_xlmr_error_rates() -> pd.DataFrame:
    """Published MultiCheckList error rates (%) of XLM-R Large per language and test.

    Table 5 of Ruder et al. 2021, "XTREME-R: Towards More Challenging and
    Nuanced Multilingual Evaluation" (EMNLP): XLM-R Large fine-tuned on English
    SQuAD v1.1, on MultiCheckList (question-answering MFTs of CheckList,
    Ribeiro et al. 2020, translated into 50 languages), all 50 languages × 6
    tests. The per-test means equal the table's Avg row
    (:data:`MULTICHECKLIST_TABLE5_AVG`) within rounding. Long format: model,
    language, test, error_rate (0-100). Used as the example table of
    ``glotbench checklist example``.
    """
    with (
        resources.files(__name__)
        .joinpath("multichecklist_xlmr_error_rates.csv")
        .open("r", encoding="utf-8") as fh
    ):
        return pd.read_csv(fh, dtype={"model": str, "language": str, "test": str})


def scandeval_transfer_scores() -> pd.DataFrame:
    """Published scores of ScandEval's cross-lingual transfer experiment.

    Nielsen 2023, "ScandEval: A Benchmark for Scandinavian Natural Language
    Processing" (NoDaLiDa), Appendix A: one representative monolingual model
    per language (da, no, sv, is and the control languages fi, en, de, nl, ru,
    ar; there is no Faroese model) scored on the da, no, sv, is and fo
    datasets. Columns: model_language, model, dataset_language, score (0-100),
    ci_half_width (the published ± interval half-width). Used as the example
    table of ``glotbench analyze transfer --example``.
    """
    with (
        resources.files(__name__)
        .joinpath("scandeval_transfer_scores.csv")
        .open("r", encoding="utf-8") as fh
    ):
        return pd.read_csv(fh, dtype={"model_language": str, "model": str, "dataset_language": str})
