"""Which languages transfer: benchmark language groups by F-statistic (ScandEval §3.3).

Nielsen (2023, "ScandEval: A Benchmark for Scandinavian Natural Language
Processing", NoDaLiDa, §3.3 and Table 2) decides which languages belong in
one benchmark by evaluating one representative model per language on the
datasets of every language and asking which grouping of the languages best
separates the models' benchmarking values: for a candidate group G, each
model's scores on the datasets are split by whether the dataset's language is
in G, and the one-way ANOVA F-statistic — between-group over within-group
variance — is averaged over the models. A group of languages between which
models transfer well (and which differ from the rest) has a large mean F.

For model r with scores x_d on datasets d = 1 … N falling into K groups
(group g with n_g datasets, mean x̄_g; grand mean x̄), the F-statistic is
(Fisher 1925; ``scipy.stats.f_oneway``)::

    F_r = [Σ_g n_g (x̄_g − x̄)² / (K − 1)] / [Σ_g Σ_{d∈g} (x_d − x̄_g)² / (N − K)]

and the group's score is mean_r F_r. The partition is G against the rest
(``rest="pooled"``, K = 2, the split the paper's Table 2 enumerates) or G
against each remaining language on its own (``rest="singletons"``,
K = 1 + #languages outside G; then only G's own spread counts as "within").
All groups with at least two languages (and at least one language outside)
are enumerated; the best is the one with the largest mean F.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from glotbench.analysis.results import records
from glotbench.errors import InputError

FloatArray = npt.NDArray[np.float64]
Rest = Literal["pooled", "singletons"]
#: more languages than this would mean enumerating over a million groups
MAX_LANGUAGES = 20


def f_statistics(
    scores: npt.ArrayLike, groups: npt.ArrayLike, valid: npt.ArrayLike | None = None
) -> FloatArray:
    """One-way ANOVA F of every row of ``scores`` (models × datasets), vectorised.

    ``groups`` gives each dataset's group (integers 0 … K − 1); ``valid``
    (same shape as ``scores``) marks observed values, so rows may miss some
    datasets. F = [SSB/(K − 1)] / [SSW/(N − K)] (Fisher 1925; equal to
    ``scipy.stats.f_oneway`` per row), counting only groups a row observes;
    NaN where K < 2 or N ≤ K, +inf where SSW = 0 < SSB.
    """
    x = np.asarray(scores, dtype=np.float64)
    if x.ndim == 1:
        x = x[None]
    g = np.asarray(groups, dtype=np.int64).reshape(-1)
    w = np.isfinite(x) if valid is None else np.asarray(valid, dtype=bool) & np.isfinite(x)
    w = w.astype(np.float64)
    x = np.where(w > 0, x, 0.0)
    one_hot = np.zeros((g.size, int(g.max()) + 1))
    one_hot[np.arange(g.size), g] = 1.0
    n_g = w @ one_hot
    sum_g = (w * x) @ one_hot
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_g = np.where(n_g > 0, sum_g / np.where(n_g > 0, n_g, 1.0), 0.0)
        n = w.sum(axis=1)
        grand = (w * x).sum(axis=1) / n
        ssb = (n_g * (mean_g - grand[:, None]) ** 2).sum(axis=1)
        residual = x - mean_g[:, g]
        ssw = (w * residual**2).sum(axis=1)
        k = (n_g > 0).sum(axis=1)
        between = ssb / (k - 1)
        within = ssw / (n - k)
        f = between / within
    f = np.where((k < 2) | (n <= k), np.nan, f)
    f = np.where(
        (k >= 2) & (n > k) & (ssw <= 1e-12 * np.maximum(ssb, 1e-300)) & (ssb > 0), np.inf, f
    )
    return f


@dataclass(frozen=True)
class TransferGroups:
    """Every candidate benchmark group with its mean F-statistic, best first.

    ``groups``: one row per group (``group``, ``size``, ``mean_f``,
    ``median_f``, ``n_models``); ``per_model``: tidy F per (group, model).
    """

    languages: tuple[str, ...]
    models: tuple[str, ...]
    rest: str
    groups: pd.DataFrame
    per_model: pd.DataFrame = field(repr=False)
    notes: tuple[str, ...] = ()

    @property
    def best(self) -> tuple[str, ...]:
        """The group with the largest mean F."""
        return tuple(self.groups.iloc[0]["group"].split(","))

    def to_frame(self) -> pd.DataFrame:
        """The groups table."""
        return self.groups

    def to_dict(self) -> dict[str, Any]:
        """JSON form: best group, all groups, per-model F-statistics."""
        best = self.groups.iloc[0]
        return {
            "analysis": "transfer",
            "languages": list(self.languages),
            "models": list(self.models),
            "rest": self.rest,
            "best_group": list(self.best),
            "best_mean_f": None if not np.isfinite(best["mean_f"]) else float(best["mean_f"]),
            "groups": records(self.groups),
            "per_model": records(self.per_model),
            "notes": list(self.notes),
        }


def _matrix(
    frame: pd.DataFrame,
) -> tuple[FloatArray, list[str], list[str], list[str], list[str]]:
    required = {"model_language", "language", "score"}
    missing = required - set(frame.columns)
    if missing:
        raise InputError(
            f"the transfer analysis needs columns {sorted(required)}; missing "
            f"{sorted(missing)} (model_language: the language the representative model is for; "
            "language: the dataset's language)",
            field=sorted(missing)[0],
        )
    data = frame.copy()
    if "model" not in data.columns:
        data["model"] = data["model_language"].astype(str)
    if "dataset" not in data.columns:
        data["dataset"] = data["language"].astype(str)
    data["score"] = pd.to_numeric(data["score"], errors="coerce")
    if data["score"].isna().any():
        position = int(np.flatnonzero(data["score"].isna().to_numpy())[0])
        raise InputError(f"row {position + 1}: score is not a number", field="score")
    for column in ("model", "dataset", "language", "model_language"):
        data[column] = data[column].astype(str)
    languages_of = data.groupby("dataset")["language"].unique()
    ambiguous = [d for d, langs in languages_of.items() if len(langs) > 1]
    if ambiguous:
        raise InputError(
            f"dataset {ambiguous[0]!r} is listed under several languages", field="language"
        )
    table = data.pivot_table(index="model", columns="dataset", values="score", aggfunc="mean")
    datasets = [str(d) for d in table.columns]
    models = [str(m) for m in table.index]
    dataset_language = [str(languages_of[d][0]) for d in datasets]
    return (
        table.to_numpy(dtype=np.float64),
        models,
        datasets,
        dataset_language,
        sorted(set(dataset_language)),
    )


def transfer_groups(
    frame: pd.DataFrame,
    *,
    rest: Rest = "pooled",
    min_size: int = 2,
) -> TransferGroups:
    """Enumerate benchmark language groups and their mean F-statistics (ScandEval §3.3).

    ``frame`` is tidy: ``model_language`` (the language the representative model
    stands for), ``language`` (the dataset's language), ``score`` and optionally
    ``model`` and ``dataset`` (several datasets per language are separate
    observations; repeated (model, dataset) scores, e.g. seeds, are averaged).
    For every group G of ≥ ``min_size`` languages with at least one language
    outside it, each model's F-statistic (see :func:`f_statistics` and the
    module docstring for the formula) is averaged over models (Nielsen 2023,
    Table 2); groups are returned best first.
    """
    if rest not in ("pooled", "singletons"):
        raise InputError(f"rest must be 'pooled' or 'singletons', got {rest!r}")
    x, models, datasets, dataset_language, languages = _matrix(frame)
    n_languages = len(languages)
    if n_languages < 3:
        raise InputError(
            f"the transfer analysis needs datasets in at least 3 languages; got {n_languages}"
        )
    if n_languages > MAX_LANGUAGES:
        raise InputError(f"at most {MAX_LANGUAGES} languages can be enumerated; got {n_languages}")
    valid = np.isfinite(x)
    notes: list[str] = []
    if not valid.all():
        notes.append(
            f"{int((~valid).sum())} (model, dataset) scores are missing; each model's F uses "
            "the datasets it was evaluated on"
        )
    language_index = np.array([languages.index(lang) for lang in dataset_language])
    group_rows: list[dict[str, Any]] = []
    model_rows: list[dict[str, Any]] = []
    for size in range(max(2, min_size), n_languages):
        for members in combinations(range(n_languages), size):
            inside = np.isin(language_index, members)
            if rest == "pooled":
                labels = inside.astype(np.int64)
            else:
                outside = np.cumsum(~np.isin(np.arange(n_languages), members))
                labels = np.where(inside, 0, outside[language_index])
            f = f_statistics(x, labels, valid)
            name = ",".join(languages[i] for i in members)
            finite = f[~np.isnan(f)]
            group_rows.append(
                {
                    "group": name,
                    "size": size,
                    "mean_f": float(finite.mean()) if finite.size else float("nan"),
                    "median_f": float(np.median(finite)) if finite.size else float("nan"),
                    "n_models": int(finite.size),
                }
            )
            model_rows.extend(
                {"group": name, "model": model, "f": float(value)}
                for model, value in zip(models, f, strict=True)
            )
    groups = pd.DataFrame(group_rows)
    groups = groups.sort_values(
        ["mean_f", "size", "group"],
        ascending=[False, True, True],
        na_position="last",
        kind="stable",
    ).reset_index(drop=True)
    if np.isinf(groups["mean_f"]).any():
        notes.append(
            "some models have no spread within the groups (F = inf); their groups sort first"
        )
    return TransferGroups(
        languages=tuple(languages),
        models=tuple(models),
        rest=rest,
        groups=groups,
        per_model=pd.DataFrame(model_rows),
        notes=tuple(notes),
    )


def scores_frame(
    matrix: npt.ArrayLike,
    model_languages: Sequence[str],
    dataset_languages: Sequence[str],
) -> pd.DataFrame:
    """Tidy input for :func:`transfer_groups` from a (models × datasets) score matrix."""
    x = np.asarray(matrix, dtype=np.float64)
    if x.shape != (len(model_languages), len(dataset_languages)):
        raise InputError(
            f"matrix has shape {x.shape} but there are {len(model_languages)} models and "
            f"{len(dataset_languages)} datasets"
        )
    rows = [
        {
            "model_language": ml,
            "model": ml,
            "language": dl,
            "dataset": f"{dl}:{j}",
            "score": x[i, j],
        }
        for i, ml in enumerate(model_languages)
        for j, dl in enumerate(dataset_languages)
    ]
    return pd.DataFrame(rows)
