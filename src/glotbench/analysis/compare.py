"""Pairwise model comparisons with effect sizes.

For models A and B, a quantity's difference d = A − B (per language, or of an
aggregate over languages) is recomputed on every draw (see
:mod:`glotbench.analysis.draws`). Following Sälevä, Ataman & Lignos (2025):

* SD(d)   = standard deviation of d over the draws (ddof = 1);
* effect  = d_observed / SD(d) — the difference in units of its own
  replication uncertainty;
* flagged = |effect| ≥ 2, a difference that replications would reproduce in
  sign and size.

Observed values are computed from the per-language means (over seeds and
bootstrap replicates), on the languages all compared models share. Each model's
aggregates with standard errors are in :mod:`glotbench.analysis.model_aggregates`
(:class:`Aggregates` and :func:`aggregate_scores` are importable from here too).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from glotbench.analysis.draws import (
    AGGREGATORS,
    Aggregator,
    DesignError,
    DrawnDesign,
    DrawSettings,
    aggregate_units,
    prepare_draws,
)
from glotbench.analysis.model_aggregates import Aggregates as Aggregates
from glotbench.analysis.model_aggregates import aggregate_scores as aggregate_scores
from glotbench.analysis.model_aggregates import mean_standard_errors as mean_standard_errors
from glotbench.analysis.overall import overall_source
from glotbench.analysis.pairs import (
    CrossProducts,
    DifferenceMoments,
    covariance_sd,
    draw_covariance,
    pair_indices,
    pair_quantiles,
    select_pairs,
    upper_pairs,
)
from glotbench.analysis.replicates import ReplicatedScores
from glotbench.analysis.results import best_row, number, records, summary_repr
from glotbench.analysis.settings import (
    DEFAULT_PAIRS,
    DEFAULT_SETTINGS,
    DEFAULT_TOP_K,
    PAIR_MODES,
    settings_record,
)
from glotbench.analysis.variance import ComponentTable
from glotbench.errors import InputError

EFFECT_THRESHOLD = 2.0
AGGREGATE_COLUMNS = (
    "aggregator",
    "model_a",
    "model_b",
    "score_a",
    "score_b",
    "difference",
    "sd",
    "effect_size",
    "flagged",
    "ci_low",
    "ci_high",
    "share_a_better",
)


def _effect(observed: np.ndarray, sd: np.ndarray) -> np.ndarray:
    out = np.full(np.broadcast(observed, sd).shape, np.nan)
    np.divide(observed, sd, out=out, where=sd > 0)
    # a non-zero difference with no replication variance at all is infinitely clear;
    # set in place (at 1,000 models × 50 languages each full-size copy is 200 MB)
    zero = sd == 0
    if zero.any():
        observed = np.broadcast_to(observed, out.shape)
        clear = zero & (observed != 0)
        out[clear] = np.copysign(np.inf, observed[clear])
        out[zero & (observed == 0)] = 0.0
    return out


def _infinite_effect_notes(count: int) -> tuple[str, ...]:
    """Say so when differences have no replication variance (their effect is ±inf)."""
    if not count:
        return ()
    return (
        f"{count} difference(s) have no replication variance (SD = 0 over all draws): their "
        "effect size is infinite (null in JSON) and they are flagged",
    )


@dataclass(frozen=True)
class Comparison:
    """Result of :func:`compare_models` (:func:`glotbench.api.analyze_compare`).

    Attributes
    ----------
    aggregates : pandas.DataFrame
        One row per aggregator and pair: difference, SD, effect size,
        interval, share of draws in which ``model_a`` is better
        (``.to_frame()``).
    per_language : pandas.DataFrame or None
        One row per pair and language (None unless asked for: it has
        M(M − 1)/2 × L rows).
    settings : DrawSettings
        The draws' settings.
    languages : tuple of str
        The languages compared.
    notes : tuple of str
        What the reader should know.
    language_summary : pandas.DataFrame
        One row per language, condensing the per-language comparisons.
    pair_summary : pandas.DataFrame
        One row per pair, likewise.
    recorded : dict or None
        The request's settings as recorded in the JSON.
    summary : pandas.DataFrame
        Per aggregator, over every pair: pairs, flagged pairs, neighbours
        flagged (:func:`comparison_summary`'s columns).
    pairs : dict
        Which pairs the tables hold: mode, top_k, pairs asked for, pairs
        computed.
    """

    aggregates: pd.DataFrame
    per_language: pd.DataFrame | None
    settings: DrawSettings
    languages: tuple[str, ...]
    notes: tuple[str, ...]
    language_summary: pd.DataFrame = field(default_factory=pd.DataFrame)
    pair_summary: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: the request's settings as recorded (:meth:`AnalysisSettings.record`), if known
    recorded: dict[str, Any] | None = None
    #: per aggregator, over every pair: pairs, flagged pairs, neighbours flagged
    #: (:func:`comparison_summary`'s columns; computed from all pairs' SDs in either mode)
    summary: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: which pairs the tables hold: mode, top_k, pairs asked for, pairs computed
    pairs: dict[str, Any] = field(default_factory=dict)

    def to_frame(self) -> pd.DataFrame:
        """The aggregate comparisons (``aggregates``): one row per aggregator and pair."""
        return self.aggregates

    def __repr__(self) -> str:
        frame = self.aggregates
        first = frame[frame["aggregator"] == frame["aggregator"].iloc[0]] if len(frame) else frame
        sizes = {"pairs": len(first), "languages": len(self.languages)}
        headline = ""
        if len(first) and "flagged" in first:
            widest = best_row(first.assign(_abs=first["difference"].abs()), "_abs")
            headline = f"{first['aggregator'].iloc[0]}: {int(first['flagged'].sum())} flagged"
            if widest is not None:
                headline += (
                    f", largest {widest['model_a']!r} - {widest['model_b']!r} = "
                    f"{number(widest['difference'])}"
                )
        return summary_repr(self, sizes, headline)

    def to_dict(self, frames: bool = False) -> dict[str, Any]:
        """The JSON document.

        ``frames=True`` leaves the tables as DataFrames (the CLI writes their
        records slice by slice instead of holding a list of every pair).
        """
        table = (lambda frame: frame) if frames else records
        out = {
            "settings": settings_record(self.settings, self.recorded),
            "languages": list(self.languages),
            "effect_threshold": EFFECT_THRESHOLD,
            "pairs": self.pairs,
            "summary": records(self.summary),
            "aggregates": table(self.aggregates),
            "language_summary": table(self.language_summary),
            "pair_summary": table(self.pair_summary),
            "notes": list(self.notes),
        }
        if self.per_language is not None:
            out["per_language"] = table(self.per_language)
        return out


def _aggregate_frame(
    aggregator: str,
    models: np.ndarray,
    observed: np.ndarray,
    replicated: np.ndarray,
    pairs: tuple[np.ndarray, np.ndarray],
    alpha: float,
    cov: np.ndarray,
) -> pd.DataFrame:
    """The chosen pairs' differences of one aggregate, as columns (no loop over pairs).

    Every number of a pair's row is computed element by element from the
    covariance matrix ``cov`` of the draws and the pair's own draws, so it is
    the same float whichever other pairs are computed beside it.
    """
    a, b = pairs
    diff = observed[a] - observed[b]
    sd = covariance_sd(cov, a, b)
    effect = _effect(diff, sd)
    low, high, share = pair_quantiles(replicated, a, b, (alpha, 1 - alpha), cov=cov)
    return pd.DataFrame(
        {
            "aggregator": aggregator,
            "model_a": models[a],
            "model_b": models[b],
            "score_a": observed[a],
            "score_b": observed[b],
            "difference": diff,
            "sd": sd,
            "effect_size": effect,
            "flagged": np.abs(effect) >= EFFECT_THRESHOLD,
            "ci_low": low,
            "ci_high": high,
            "share_a_better": share,
        }
    )


def _flagged_pairs(observed: np.ndarray, cov: np.ndarray) -> int:
    """How many of all M(M − 1)/2 pairs are flagged (the rows' own rule), chunk by chunk."""
    count = 0
    for a, b in upper_pairs(len(observed)):
        effect = _effect(observed[a] - observed[b], covariance_sd(cov, a, b))
        count += int(np.count_nonzero(np.abs(effect) >= EFFECT_THRESHOLD))
    return count


def _summaries(
    models: np.ndarray,
    labels: tuple[str, ...],
    pairs: tuple[np.ndarray, np.ndarray],
    diff: np.ndarray,
    sd: np.ndarray,
    effect: np.ndarray,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per language and per pair: how many per-language differences are flagged, and how."""
    a, b = pairs
    flagged = np.abs(effect) >= EFFECT_THRESHOLD  # (pairs, U)
    n_pairs = len(a)
    with np.errstate(invalid="ignore"):
        language_summary = pd.DataFrame(
            {
                "language": list(labels),
                "n_pairs": n_pairs,
                "n_flagged": flagged.sum(axis=0),
                "share_flagged": flagged.mean(axis=0) if n_pairs else np.nan,
                "median_abs_difference": np.median(np.abs(diff), axis=0) if n_pairs else np.nan,
                "median_sd": np.median(sd, axis=0) if n_pairs else np.nan,
            }
        )
    pair_summary = pd.DataFrame(
        {
            "model_a": models[a],
            "model_b": models[b],
            "n_languages": len(labels),
            "n_flagged_a_better": (flagged & (diff > 0)).sum(axis=1),
            "n_flagged_b_better": (flagged & (diff < 0)).sum(axis=1),
        }
    )
    return language_summary, pair_summary


def _names_column(names: np.ndarray, codes: np.ndarray) -> Any:
    """``names[codes]`` as a table column, in the dtype pandas gives those names.

    When that is pandas' Arrow-backed string dtype (pandas 3), the column is
    built in Arrow from the codes and the few distinct names: the 995,000 rows
    of 200 models × 50 languages no longer pass through Python strings one by
    one (0.17 → 0.01 s per column). The values and dtype are those of ``names[codes]``.
    """
    names = np.asarray(names, dtype=object)
    dtype = pd.Series(names[:1]).dtype
    arrow = isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow"
    if not (arrow and len(names) and all(type(name) is str for name in names)):
        return names[codes]
    import pyarrow as pa

    dictionary = pa.array(list(names), type=pa.large_string())
    column = pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32)), dictionary)
    return pd.array(column.cast(pa.large_string()), dtype=dtype)


def _language_frame(
    models: np.ndarray,
    labels: tuple[str, ...],
    pairs: tuple[np.ndarray, np.ndarray],
    diff: np.ndarray,
    sd: np.ndarray,
    effect: np.ndarray,
) -> pd.DataFrame:
    """The full table: one row per pair and language, pairs outer, languages inner."""
    a, b = pairs
    n_units = len(labels)
    return pd.DataFrame(
        {
            "model_a": _names_column(models, np.repeat(a, n_units)),
            "model_b": _names_column(models, np.repeat(b, n_units)),
            "language": _names_column(
                np.asarray(labels, dtype=object), np.tile(np.arange(n_units), len(a))
            ),
            "difference": diff.ravel(),
            "sd": sd.ravel(),
            "effect_size": effect.ravel(),
            "flagged": np.abs(effect.ravel()) >= EFFECT_THRESHOLD,
        }
    )


def _aggregates_and_language_sd(
    design: DrawnDesign,
    aggregators: tuple[Aggregator, ...],
    pairs: tuple[np.ndarray, np.ndarray],
    every_pair: bool,
) -> tuple[dict[str, tuple[np.ndarray, np.ndarray] | DesignError], np.ndarray]:
    """The aggregators' draws and the pairs' SDs per language (pairs × U).

    Both from the same blocks of unit draws (languages fixed). Every pair: from
    the U × M × M cross products (400 MB at 1,000 models × 50 languages,
    released on return); chosen pairs: from their differences' own draws
    (memory linear in models).
    """
    if every_pair:
        products = CrossProducts()
        results = design.aggregate_all(aggregators, visit=lambda rows, block: products.add(block))
        return results, products.difference_sd(*pairs)
    moments = DifferenceMoments(*pairs)
    results = design.aggregate_all(aggregators, visit=lambda rows, block: moments.add(block))
    return results, moments.difference_sd()


def _observed_aggregates(
    design: DrawnDesign, aggregators: tuple[Aggregator, ...]
) -> dict[str, np.ndarray]:
    """Each aggregator's observed aggregate (M,), those that can be computed."""
    out: dict[str, np.ndarray] = {}
    for aggregator in aggregators:
        try:
            out[aggregator] = aggregate_units(design.observed, design.layout, aggregator)
        except DesignError:
            continue
    return out


def compare_models(
    source: ReplicatedScores | ComponentTable,
    settings: DrawSettings | None = None,
    aggregators: tuple[Aggregator, ...] = AGGREGATORS,
    confidence_level: float = DEFAULT_SETTINGS.confidence_level,
    per_language: bool = True,
    pairs: str = DEFAULT_PAIRS,
    top_k: int = DEFAULT_TOP_K,
    requested: tuple[tuple[str, str], ...] = (),
) -> Comparison:
    """Pairs of models: per-language and aggregate differences with effect sizes.

    ``pairs="all"`` computes every pair; ``"adjacent"`` (the default) the
    neighbours in each aggregate's ranking, every pair of its ``top_k`` best
    models and the pairs ``requested`` by name (:func:`select_pairs`), so that
    time and memory grow linearly in models. A pair's row is the same in both
    modes, float for float (see :func:`_aggregate_frame`); :attr:`Comparison.summary`
    counts flagged pairs over every pair in both. ``per_language=True`` (the
    table of every pair × language) implies ``pairs="all"``.

    Pair SDs come from the draws' covariance matrices (one product per
    aggregate, one accumulated per language; see :mod:`glotbench.analysis.pairs`),
    percentile intervals and shares from chunks of pairwise differences. An
    aggregator that cannot be computed (the geometric mean of negative scores)
    is left out with a note. ``per_language=False`` keeps only the
    per-language summaries, not the table of every pair and language.
    """
    if pairs not in PAIR_MODES:
        raise InputError(
            f"pairs must be one of {', '.join(PAIR_MODES)}, not {pairs!r}", field="pairs"
        )
    settings = settings or DEFAULT_SETTINGS.draws(source)
    source, overall_notes = overall_source(source)  # the overall view's models
    design = prepare_draws(source, settings)
    notes = [*overall_notes, *design.notes]
    alpha = (1 - confidence_level) / 2
    models = np.asarray(design.table.models, dtype=object)
    if len(models) < 2:
        raise InputError(
            "comparing models needs at least two; the data holds only "
            f"{', '.join(map(repr, models)) or 'none'} (check the model names selected)"
            + "".join(f"; {n}" for n in overall_notes)  # overall_source: models left out
        )
    every_pair = pairs == "all" or per_language
    chosen = (
        pair_indices(len(models))
        if every_pair
        else select_pairs(models, _observed_aggregates(design, aggregators), top_k, requested)
    )
    if every_pair and requested:
        select_pairs(models, {}, top_k, requested)  # the names are checked in either mode
    # per language: the unit draws themselves, languages fixed
    results, sd = _aggregates_and_language_sd(design, aggregators, chosen, every_pair)
    frames, summary, infinite = [], [], 0
    n_all = len(models) * (len(models) - 1) // 2
    for aggregator, result in results.items():
        if isinstance(result, Exception):
            notes.append(f"{aggregator}: {result}")
            continue
        cov = draw_covariance(result[1])
        frame = _aggregate_frame(aggregator, models, *result, chosen, alpha, cov)
        n_flagged = int(frame["flagged"].sum()) if every_pair else _flagged_pairs(result[0], cov)
        summary.append(_summary_row(aggregator, frame, n_all, n_flagged))
        del cov
        infinite += int(np.isinf(frame["effect_size"]).sum())
        frames.append(frame)
    aggregates = (
        pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=AGGREGATE_COLUMNS)
    )
    observed = design.observed
    diff = observed[chosen[0]] - observed[chosen[1]]  # (pairs, U)
    effect = _effect(diff, sd)
    infinite += int(np.isinf(effect).sum())
    language_summary, pair_summary = _summaries(models, design.labels, chosen, diff, sd, effect)
    return Comparison(
        aggregates=aggregates,
        per_language=(
            _language_frame(models, design.labels, chosen, diff, sd, effect)
            if per_language
            else None
        ),
        settings=settings,
        languages=design.labels,
        notes=tuple(notes) + _infinite_effect_notes(infinite),
        language_summary=language_summary,
        pair_summary=pair_summary,
        summary=pd.DataFrame(summary, columns=SUMMARY_COLUMNS),
        pairs={
            "mode": "all" if every_pair else "adjacent",
            "top_k": None if every_pair else top_k,
            "requested": [list(p) for p in requested],
            "n_pairs": len(chosen[0]),
            "n_all_pairs": n_all,
        },
    )


def adjacent_pairs(aggregates: pd.DataFrame, aggregator: str) -> pd.DataFrame:
    """Neighbours in the ranking by ``aggregator``: rank 1 vs 2, 2 vs 3, … (M − 1 rows).

    Each row is oriented better − worse: ``model_a`` is the higher-ranked
    model, and the difference, effect size and interval are those of
    A − B (a stored row for (B, A) has them negated and the interval bounds
    swapped, which is exact). ``share_a_better`` is left out: for a flipped
    row it would need the share of tied draws. Models are ranked by their
    observed aggregate (ties: by name).
    """
    rows = aggregates[aggregates["aggregator"] == aggregator]
    columns = ["rank", "model_a", "model_b", "score_a", "score_b", "difference", "sd"]
    columns += ["effect_size", "flagged", "ci_low", "ci_high"]
    if rows.empty:
        return pd.DataFrame(columns=columns)
    scores = pd.concat(
        [
            pd.Series(rows["score_a"].to_numpy(), index=rows["model_a"].to_numpy()),
            pd.Series(rows["score_b"].to_numpy(), index=rows["model_b"].to_numpy()),
        ]
    )
    scores = scores[~scores.index.duplicated()]
    order = sorted(scores.index, key=lambda m: (-scores[m], str(m)))
    better, worse = np.asarray(order[:-1], dtype=object), np.asarray(order[1:], dtype=object)
    keyed = rows.set_index(["model_a", "model_b"])
    forward = pd.MultiIndex.from_arrays([better, worse])
    stored = keyed.index.isin(forward)
    same = pd.Index(forward).isin(keyed.index[stored])
    picked = pd.concat(
        [
            keyed.reindex(pd.MultiIndex.from_arrays([better[same], worse[same]])),
            _flipped(keyed.reindex(pd.MultiIndex.from_arrays([worse[~same], better[~same]]))),
        ]
    ).reindex(forward)
    out = picked.reset_index(names=["model_a", "model_b"])
    out.insert(0, "rank", np.arange(1, len(out) + 1))
    return out[columns]


def _flipped(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows of B − A given as A − B (index levels swapped, numbers negated)."""
    out = pd.DataFrame(
        {
            "score_a": rows["score_b"].to_numpy(),
            "score_b": rows["score_a"].to_numpy(),
            "difference": -rows["difference"].to_numpy(),
            "sd": rows["sd"].to_numpy(),
            "effect_size": -rows["effect_size"].to_numpy(),
            "flagged": rows["flagged"].to_numpy(),
            "ci_low": -rows["ci_high"].to_numpy(),
            "ci_high": -rows["ci_low"].to_numpy(),
        },
        index=pd.MultiIndex.from_arrays(
            [rows.index.get_level_values(1), rows.index.get_level_values(0)]
        ),
    )
    return out


SUMMARY_COLUMNS = (
    "aggregator",
    "n_pairs",
    "n_flagged",
    "share_flagged",
    "n_adjacent",
    "n_adjacent_flagged",
)


def _summary_row(
    aggregator: str, rows: pd.DataFrame, n_pairs: int, n_flagged: int
) -> dict[str, Any]:
    """One aggregator's summary: ``n_flagged`` of ``n_pairs``; the neighbours from ``rows``."""
    adjacent = adjacent_pairs(rows, aggregator)
    return {
        "aggregator": aggregator,
        "n_pairs": n_pairs,
        "n_flagged": n_flagged,
        "share_flagged": n_flagged / n_pairs if n_pairs else np.nan,
        "n_adjacent": len(adjacent),
        "n_adjacent_flagged": int(adjacent["flagged"].astype(bool).sum()),
    }


def comparison_summary(aggregates: pd.DataFrame) -> pd.DataFrame:
    """Per aggregator: pairs, flagged pairs, and how many ranking neighbours are flagged.

    Counted over the rows given (every pair, for ``pairs="all"``'s table).
    """
    out = [
        _summary_row(str(aggregator), rows, len(rows), int(rows["flagged"].sum()))
        for aggregator, rows in aggregates.groupby("aggregator", sort=False)
    ]
    return pd.DataFrame(out, columns=SUMMARY_COLUMNS)
