"""Example data embedded in the package (published figures)."""

from __future__ import annotations

from importlib import resources

import pandas as pd


def xtreme_r_baselines() -> pd.DataFrame:
    """Published per-language test scores of the XTREME-R baselines.

    Ruder et al. 2021, "XTREME-R: Towards More Challenging and Nuanced
    Multilingual Evaluation" (EMNLP): mBERT, XLM-R Large, mT5-XXL and mBERT
    translate-train(-all) on XNLI, XCOPA, WikiANN-NER, XQuAD, MLQA,
    TyDiQA-GoldP, Mewsli-X and LAReQA. Long format: model, task, language,
    metric, score (0-100).
    """
    with (
        resources.files(__name__)
        .joinpath("xtreme_r_baselines.csv")
        .open("r", encoding="utf-8") as fh
    ):
        return pd.read_csv(fh, dtype={"model": str, "task": str, "language": str, "metric": str})


def multichecklist_xlmr_error_rates() -> pd.DataFrame:
    """Published MultiCheckList error rates (%) of XLM-R per language and test.

    Ruder et al. 2021, "XTREME-R: Towards More Challenging and Nuanced
    Multilingual Evaluation" (EMNLP), MultiCheckList (templates of CheckList,
    Ribeiro et al. 2020, translated into 50 languages; question-answering MFTs).
    Long format: model, language, test, error_rate (0-100). Used as the example
    table of ``glotbench checklist example``.
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
