"""Which languages belong in one benchmark: cross-lingual transfer groups (ScandEval §3.3).

Nielsen (2023, "ScandEval: A Benchmark for Scandinavian Natural Language
Processing", NoDaLiDa, §3.3 and Appendix A) evaluates one representative model
per language — the benchmark languages (da, no, sv, is) and control languages
that only contribute models (en, de, nl, fi, ru, ar) — on the datasets of every
benchmark language (da, no, sv, is, fo; Faroese has datasets but no model), and
asks which group G of benchmark languages the models transfer within.

For a candidate group G and each benchmark language d in G, the models' scores
on d are split into two clusters — models whose language is in G, and all other
models — and the one-way ANOVA F-statistic of that split is computed (Fisher
1925; ``scipy.stats.f_oneway``). With clusters c = 1 … K (here K = 2) of n_c
observations, cluster means x̄_c, grand mean x̄ and N observations::

    F_d(G) = [Σ_c n_c (x̄_c − x̄)² / (K − 1)] / [Σ_c Σ_{i∈c} (x_i − x̄_c)² / (N − K)]

"Technically speaking, we get an F-statistic for each language in the
benchmarking group, but we just use the mean of these F-statistics" (§3.3)::

    F(G) = mean_{d ∈ G} F_d(G)

and the best benchmark group has the largest F(G). A large F_d(G) means the
models of G score on d clearly above (or below) the other models relative to
the spread inside the clusters: d's datasets are "solved" by the models of G.

Observations for language d (``observations``):

* ``"model"`` (default, the paper's unit): one observation per model — its
  score on d, the mean over d's datasets it was scored on. The paper's
  Appendix A lists exactly one benchmarking value per (model, dataset
  language), and that table is what the F-statistics are computed from, so
  each cluster holds models, not (model, dataset) pairs. Averaging first also
  keeps differences in dataset difficulty (an easy and a hard dataset of the
  same language) out of the within-cluster variance.
* ``"dataset"``: every (model, dataset) score on d's datasets is one
  observation (the two coincide when each language has one dataset).

Repeated rows for one (model, dataset), e.g. seeds, are averaged first.

Edge cases (all follow the one-way ANOVA definition, as ``f_oneway``):

* a cluster with one member (e.g. the single Danish model when G = {da, fo}
  and d = fo) has no variance of its own; it contributes 0 to the within sum
  of squares and its member still counts in N, so F is defined whenever
  N > K = 2;
* an empty cluster (no model of G was scored on d, e.g. G = {fo}; or every
  model is in G) or N ≤ 2 leaves F_d(G) undefined (NaN); F(G) is the mean over
  the languages whose F_d(G) is defined and ``n_f`` says how many there were;
* zero within-cluster variance with distinct cluster means gives F = +inf
  (perfect separation; such groups sort first and a note says so); identical
  values everywhere give NaN.

Groups are all subsets of the benchmark (dataset) languages with at least
``min_size`` members, the full set included (the control models form the
other cluster). The paper's finding, Mainland Scandinavian {da, no, sv}, is
best among groups of two or more languages; single languages are left out by
default (``min_size=2``) because a "group" of one language measures only how
much better a language's own model is, not transfer — on the Appendix A table
{is} alone would score F = 39.3, above {da, no, sv} (33.3), and the paper does
not report it, so it did not enumerate singletons.
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
from glotbench.ingest.readers import RowInputError, TidyTable

Observations = Literal["model", "dataset"]
FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
#: more benchmark languages than this would mean enumerating over 4,000 groups
MAX_LANGUAGES = 12
#: SSW at most this fraction of the total sum of squares counts as zero (rounding)
_ZERO_SSW = 1e-13


def one_way_f(*clusters: npt.ArrayLike) -> float:
    """One-way ANOVA F of the clusters (Fisher 1925; as ``scipy.stats.f_oneway``).

    F = [SSB/(K − 1)] / [SSW/(N − K)] over the K non-empty clusters. NaN when
    K < 2 or N ≤ K (no within degrees of freedom) or all values are equal;
    +inf when the within sum of squares is zero (to rounding) and the cluster
    means differ. Clusters with one member are allowed (they add nothing to SSW).
    """
    arrays = [np.asarray(c, dtype=np.float64).reshape(-1) for c in clusters]
    arrays = [a for a in arrays if a.size > 0]
    k = len(arrays)
    n = sum(a.size for a in arrays)
    if k < 2 or n <= k:
        return float("nan")
    grand = float(np.concatenate(arrays).mean())
    means = [float(a.mean()) for a in arrays]
    ssb = sum(a.size * (m - grand) ** 2 for a, m in zip(arrays, means, strict=True))
    ssw = sum(float(((a - m) ** 2).sum()) for a, m in zip(arrays, means, strict=True))
    total = ssb + ssw
    if total == 0.0:
        return float("nan")
    if ssw <= _ZERO_SSW * total:
        return float("inf")
    return float((ssb / (k - 1)) / (ssw / (n - k)))


@dataclass(frozen=True)
class TransferGroups:
    """Every candidate benchmark group with its mean F-statistic, best first.

    Attributes
    ----------
    benchmark_languages : tuple of str
        The dataset languages groups are made of.
    control_languages : tuple of str
        Model languages without datasets (they only add models).
    models : dict of str to str
        Each model with its language, ``{model: language}``.
    observations : str
        ``"model"`` or ``"dataset"`` (see the module docstring).
    min_size : int
        The smallest group considered.
    groups : pandas.DataFrame
        One row per group, best first: ``group`` (comma-joined languages),
        ``size``, ``mean_f`` (the paper's F(G)), ``n_f`` (languages with a
        defined F_d), ``min_f``, ``max_f``.
    per_language : pandas.DataFrame
        One row per (group, language d): ``f`` (F_d(G)), ``n_inside`` /
        ``n_outside`` (observations per cluster), ``mean_inside``,
        ``mean_outside``.
    notes : tuple of str
        What the reader should know.
    scores : pandas.DataFrame or None
        The scores the groups were computed from, when they came from a
        store's runs (:func:`glotbench.analysis.transfer_store.transfer_scores_from_store`).
    """

    benchmark_languages: tuple[str, ...]
    control_languages: tuple[str, ...]
    models: dict[str, str]
    observations: str
    min_size: int
    groups: pd.DataFrame
    per_language: pd.DataFrame = field(repr=False)
    notes: tuple[str, ...] = ()
    #: the scores the groups were computed from, when they came from a store's runs
    #: (:func:`glotbench.analysis.sources.transfer_store.transfer_scores_from_store`)
    scores: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def best(self) -> tuple[str, ...]:
        """The group with the largest mean F."""
        return tuple(str(self.groups.iloc[0]["group"]).split(","))

    @property
    def best_f(self) -> dict[str, float]:
        """F_d of each language d of the best group."""
        return self.f_by_language(self.best)

    def f_by_language(self, group: tuple[str, ...] | list[str] | str) -> dict[str, float]:
        """F_d(G) of each language d in ``group`` (a tuple or ``"da,no,sv"``)."""
        name = group if isinstance(group, str) else ",".join(sorted(group))
        rows = self.per_language[self.per_language["group"] == name]
        if rows.empty:
            raise InputError(f"{name!r} is not one of the enumerated groups")
        return {str(r.language): float(r.f) for r in rows.itertuples()}

    def to_frame(self) -> pd.DataFrame:
        """The groups table."""
        return self.groups

    def to_dict(self) -> dict[str, Any]:
        """JSON form: best group and every group with its per-language F values."""
        by_group: dict[str, dict[str, Any]] = {}
        for row in records(self.per_language):
            by_group.setdefault(row["group"], {})[row["language"]] = row["f"]
        groups = records(self.groups)
        for row in groups:
            row["languages"] = str(row["group"]).split(",")
            row["f_by_language"] = by_group[row["group"]]
        best = groups[0]
        return {
            "analysis": "transfer",
            "method": "ScandEval (Nielsen 2023, §3.3): mean over d in G of the one-way "
            "ANOVA F of models in G vs the other models on language d",
            "benchmark_languages": list(self.benchmark_languages),
            "control_languages": list(self.control_languages),
            "models": dict(self.models),
            "observations": self.observations,
            "min_size": self.min_size,
            "best_group": list(self.best),
            "best_mean_f": best["mean_f"],
            "best_f_by_language": best["f_by_language"],
            "groups": groups,
            "per_language": records(self.per_language),
            "notes": list(self.notes),
            **({"scores": records(self.scores)} if self.scores is not None else {}),
        }


@dataclass(frozen=True)
class _Scores:
    """(model, dataset) scores after averaging repeats, with both languages."""

    frame: pd.DataFrame  # columns model, model_language, dataset, language, score
    models: dict[str, str]
    benchmark_languages: list[str]
    control_languages: list[str]


def _clean(table: TidyTable) -> _Scores:
    """Validate the tidy input; errors name the file, line and field."""
    frame = table.frame
    columns = set(frame.columns)
    language_column = "language" if "language" in columns else "dataset_language"
    required = ["model_language", language_column, "score"]
    missing = [c for c in required if c not in columns]
    if missing:
        raise table.error(
            f"the transfer analysis needs columns model_language (the language the model is "
            f"for), language or dataset_language (the dataset's language) and score; missing "
            f"{missing}",
            field=missing[0],
        )
    data = pd.DataFrame(index=frame.index)
    for column in ("model_language", language_column):
        values = frame[column]
        blank = values.isna() | (values.astype(str).str.strip() == "")
        if blank.any():
            raise table.error(f"{column} is empty", int(np.flatnonzero(blank)[0]), column)
    data["model_language"] = frame["model_language"].astype(str).str.strip()
    data["language"] = frame[language_column].astype(str).str.strip()
    data["model"] = (
        frame["model"].astype(str).str.strip() if "model" in columns else data["model_language"]
    )
    data["dataset"] = (
        frame["dataset"].astype(str).str.strip() if "dataset" in columns else data["language"]
    )
    score = pd.to_numeric(frame["score"], errors="coerce")
    bad = score.isna() | ~np.isfinite(score.to_numpy(dtype=np.float64, na_value=np.nan))
    if bad.any():
        raise table.error("score is not a finite number", int(np.flatnonzero(bad)[0]), "score")
    data["score"] = score.astype(np.float64)
    for key, value, what in (
        ("model", "model_language", "model"),
        ("dataset", "language", "dataset"),
    ):
        positions = pd.Series(np.arange(len(data)), index=data.index)
        first_at = positions.groupby(data[key], sort=False).transform("first")
        first = data[value].to_numpy()[first_at.to_numpy()]
        clash = first != data[value].to_numpy()
        if clash.any():
            position = int(np.flatnonzero(clash)[0])
            earlier = int(first_at.iloc[position])
            where = table.error("", earlier)
            raise table.error(
                f"{what} {data[key].iloc[position]!r} is listed under two languages: "
                f"{data[value].iloc[position]!r} here and {first[position]!r} at "
                f"{'row' if isinstance(where, RowInputError) else 'line'} {where.line}",
                position,
                value if what == "model" else language_column,
            )
    averaged = data.groupby(
        ["model", "model_language", "dataset", "language"], as_index=False, sort=True
    )["score"].mean()
    benchmark = sorted(set(averaged["language"]))
    models = dict(sorted(zip(averaged["model"], averaged["model_language"], strict=True)))
    controls = sorted(set(models.values()) - set(benchmark))
    return _Scores(averaged, models, benchmark, controls)


def _observations(
    scores: _Scores, observations: Observations
) -> dict[str, tuple[FloatArray, IntArray]]:
    """Per benchmark language: its scores and each score's model-language code.

    Codes index :attr:`_Scores.benchmark_languages`; control languages get
    ``len(benchmark_languages)`` (never a member of a group).
    """
    frame = scores.frame
    if observations == "model":
        frame = frame.groupby(["language", "model", "model_language"], as_index=False)[
            "score"
        ].mean()
    code = {lang: i for i, lang in enumerate(scores.benchmark_languages)}
    outside = len(scores.benchmark_languages)
    return {
        str(lang): (
            part["score"].to_numpy(dtype=np.float64),
            np.array([code.get(m, outside) for m in part["model_language"]], dtype=np.int64),
        )
        for lang, part in frame.groupby("language", sort=True)
    }


def _group_rows(
    members: tuple[int, ...],
    benchmark: Sequence[str],
    by_language: dict[str, tuple[FloatArray, IntArray]],
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """F_d(G) of each member language d of the group G, and the group's mean F."""
    name = ",".join(benchmark[i] for i in members)
    in_group = np.zeros(len(benchmark) + 1, dtype=bool)
    in_group[list(members)] = True
    values: list[float] = []
    language_rows: list[dict[str, Any]] = []
    for i in members:
        lang = benchmark[i]
        x, codes = by_language[lang]
        inside = in_group[codes]
        f = one_way_f(x[inside], x[~inside])
        values.append(f)
        language_rows.append(
            {
                "group": name,
                "language": lang,
                "f": f,
                "n_inside": int(inside.sum()),
                "n_outside": int((~inside).sum()),
                "mean_inside": float(x[inside].mean()) if inside.any() else np.nan,
                "mean_outside": float(x[~inside].mean()) if (~inside).any() else np.nan,
            }
        )
    defined = np.array([v for v in values if not np.isnan(v)])
    group = {
        "group": name,
        "size": len(members),
        "mean_f": float(defined.mean()) if defined.size else np.nan,
        "n_f": int(defined.size),
        "min_f": float(defined.min()) if defined.size else np.nan,
        "max_f": float(defined.max()) if defined.size else np.nan,
    }
    return group, language_rows


def transfer_groups(
    data: pd.DataFrame | TidyTable,
    *,
    observations: Observations = "model",
    min_size: int = 2,
) -> TransferGroups:
    """Rank benchmark language groups by ScandEval's mean F-statistic (Nielsen 2023, §3.3).

    Parameters
    ----------
    data : tidy scores, a DataFrame or a :class:`TidyTable` read from a file
        (errors then name its lines): ``model_language`` (the language the
        representative model is for), ``language`` or ``dataset_language`` (the
        dataset's language), ``score``, and optionally ``model`` (default: the
        model language) and ``dataset`` (default: the dataset language).
    observations : ``"model"`` (one observation per model and language: the
        mean over that language's datasets; the paper's unit) or ``"dataset"``
        (one per (model, dataset)).
    min_size : smallest group enumerated (default 2; 1 adds single languages).

    Returns
    -------
    TransferGroups : groups best first with F(G) = mean_{d∈G} F_d(G), and every
        F_d(G) (the module docstring defines them and the edge cases).
    """
    if observations not in ("model", "dataset"):
        raise InputError(f"observations must be 'model' or 'dataset', got {observations!r}")
    if min_size < 1:
        raise InputError(f"min_size must be at least 1, got {min_size}")
    table = data if isinstance(data, TidyTable) else TidyTable.from_frame(data)
    scores = _clean(table)
    benchmark = scores.benchmark_languages
    if len(benchmark) > MAX_LANGUAGES:
        raise InputError(
            f"at most {MAX_LANGUAGES} dataset languages can be enumerated; got {len(benchmark)}"
        )
    if min_size > len(benchmark):
        raise InputError(
            f"min_size is {min_size} but the datasets cover only {len(benchmark)} languages"
        )
    if len(set(scores.models.values())) < 2:
        raise InputError(
            "the transfer analysis needs models of at least two languages (model_language)"
        )
    by_language = _observations(scores, observations)
    group_rows: list[dict[str, Any]] = []
    language_rows: list[dict[str, Any]] = []
    for size in range(min_size, len(benchmark) + 1):
        for members in combinations(range(len(benchmark)), size):
            group, per_language = _group_rows(members, benchmark, by_language)
            group_rows.append(group)
            language_rows += per_language
    groups = (
        pd.DataFrame(group_rows)
        .sort_values(
            ["mean_f", "size", "group"],
            ascending=[False, True, True],
            na_position="last",
            kind="stable",
        )
        .reset_index(drop=True)
    )
    if groups["mean_f"].isna().all():
        raise InputError(
            "no group has a defined F-statistic: each dataset language needs scores of models "
            "of at least two languages and at least three scores"
        )
    per_language = pd.DataFrame(language_rows)
    return TransferGroups(
        benchmark_languages=tuple(benchmark),
        control_languages=tuple(scores.control_languages),
        models=scores.models,
        observations=observations,
        min_size=min_size,
        groups=groups,
        per_language=per_language,
        notes=tuple(_notes(scores, groups, per_language, observations)),
    )


def _notes(
    scores: _Scores, groups: pd.DataFrame, per_language: pd.DataFrame, observations: str
) -> list[str]:
    notes: list[str] = []
    model_languages = set(scores.models.values())
    without_model = [lang for lang in scores.benchmark_languages if lang not in model_languages]
    if without_model:
        notes.append(f"no model for {', '.join(without_model)}: these languages add datasets only")
    if scores.control_languages:
        notes.append(f"control languages (models only): {', '.join(scores.control_languages)}")
    expected = scores.frame.groupby("language")["dataset"].nunique()
    evaluated = scores.frame.groupby(["language", "model"])["dataset"].nunique()
    short = evaluated[evaluated < expected.reindex(evaluated.index.get_level_values(0)).to_numpy()]
    n_pairs = len(scores.models) * len(scores.benchmark_languages)
    if len(short) or len(evaluated) < n_pairs:
        notes.append(
            "not every model was scored on every dataset; each F_d uses the scores there are"
            + (" (a model's mean over fewer datasets)" if observations == "model" else "")
        )
    undefined = per_language[per_language["f"].isna()]
    if not undefined.empty:
        notes.append(
            f"{len(undefined)} per-language F-statistics are undefined (a cluster is empty or "
            "there are too few scores); a group's mean F uses the defined ones (n_f)"
        )
    if np.isinf(groups["mean_f"]).any():
        notes.append("some clusters have no spread (F = inf): perfect separation, sorted first")
    return notes
