"""Terminal table of transfer groups (ScandEval §3.3). Rendering only: no statistics here."""

from __future__ import annotations

import math

import pandas as pd

from glotbench.analysis.transfer import TransferGroups


def _f(value: float) -> str:
    if math.isnan(value):
        return "—"
    return "inf" if math.isinf(value) else f"{value:.2f}"


def transfer_table(result: TransferGroups) -> pd.DataFrame:
    """Groups best first: mean F and each language's F_d as ``"da 25.35 · no 58.57"``."""
    per_language = result.per_language.groupby("group", sort=False)
    f_text = {
        str(name): " · ".join(f"{r.language} {_f(r.f)}" for r in part.itertuples())
        for name, part in per_language
    }
    frame = result.groups
    return pd.DataFrame(
        {
            "#": range(1, len(frame) + 1),
            "group": frame["group"].str.replace(",", ", "),
            "mean F": [_f(v) for v in frame["mean_f"]],
            "F per language": [f_text[str(g)] for g in frame["group"]],
        }
    )
