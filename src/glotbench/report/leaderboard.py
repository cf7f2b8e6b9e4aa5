"""The static interactive leaderboard: one self-contained ``index.html``.

The page holds its data as JSON inside ``<script type="application/json">``
(with ``<``, ``>``, ``&``, U+2028 and U+2029 escaped, so no string can close
the tag) and renders every value with ``textContent``; a Content-Security-Policy
allows only the page's own script (by its SHA-256) and no network access. A
model named ``<img src=x onerror=alert(1)>`` is therefore shown as text.

Statistics come from the analysis layer: task and overall aggregates with
between-language standard errors from :func:`glotbench.analysis.aggregate.leaderboard`,
per-cell means and within-language SDs σ_w from
:func:`glotbench.analysis.variance.components`, rank draws from
:func:`glotbench.analysis.draws.prepare_draws` with
:func:`glotbench.analysis.rank_stats.rank_statistics` (rank counts and
intervals, computed once per distinct view and shared between views with the
same models and units). This module only assembles them into views.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import ndtri

from glotbench.analysis.aggregate import leaderboard
from glotbench.analysis.draws import DrawSettings, prepare_draws
from glotbench.analysis.pairs import pair_quantiles
from glotbench.analysis.rank_stats import rank_statistics
from glotbench.analysis.replicates import ReplicatedScores
from glotbench.analysis.variance import components
from glotbench.errors import GlotbenchError

#: language groups offered as sub-leaderboards when two or more of their
#: languages are present (ISO 639-1 codes; genealogical groups, Glottolog)
LANGUAGE_GROUPS: dict[str, tuple[str, ...]] = {
    "Mainland Scandinavian": ("da", "nb", "nn", "no", "sv"),
    "Insular Scandinavian": ("fo", "is"),
    "Germanic": ("af", "da", "de", "en", "fo", "fy", "is", "lb", "nb", "nl", "nn", "no", "sv"),
    "Romance": ("ca", "es", "fr", "gl", "it", "pt", "ro"),
    "Slavic": ("be", "bg", "cs", "hr", "mk", "pl", "ru", "sk", "sl", "sr", "uk"),
    "Indo-Aryan": ("bn", "gu", "hi", "mr", "ne", "pa", "ur"),
    "Dravidian": ("kn", "ml", "ta", "te"),
    "Turkic": ("az", "kk", "ky", "tr", "tt", "uz"),
    "Semitic": ("am", "ar", "he", "mt"),
    "Uralic": ("et", "fi", "hu"),
    "Austronesian": ("id", "jv", "mg", "ms", "tl"),
    "Niger-Congo": ("ig", "sw", "xh", "yo", "zu"),
}

#: metadata of the embedded XTREME-R baselines (Ruder et al. 2021, Table 8;
#: Devlin et al. 2019; Conneau et al. 2020; Xue et al. 2021)
XTREME_R_METADATA: dict[str, dict[str, Any]] = {
    "mBERT": {"parameters": "178M", "type": "encoder", "training data": "Wikipedia (104 langs)"},
    "mBERT translate-train": {
        "parameters": "178M",
        "type": "encoder",
        "training data": "Wikipedia (104 langs) + translated training data",
    },
    "mBERT translate-train-all": {
        "parameters": "178M",
        "type": "encoder",
        "training data": "Wikipedia (104 langs) + translated training data (all langs)",
    },
    "XLM-R Large": {"parameters": "550M", "type": "encoder", "training data": "CC-100 (100 langs)"},
    "mT5-XXL": {"parameters": "13B", "type": "encoder-decoder", "training data": "mC4 (101 langs)"},
}

TEMPLATE = "leaderboard.html"


def score_digits(scores: Any) -> int:
    """Decimals to show: 3 for scores on a 0–1 scale, 1 for percentages."""
    values = np.abs(np.asarray(scores, dtype=float))
    values = values[np.isfinite(values)]
    return 3 if values.size and values.max() <= 1.5 else 1


def _num(value: Any, digits: int = 4) -> float | None:
    """A JSON number rounded to ``digits`` decimals, or None where undefined."""
    if value is None:
        return None
    value = float(value)
    return round(value, digits) if math.isfinite(value) else None


def _metadata_value(value: Any) -> str | float | int | bool | None:
    """Metadata as a JSON scalar (nested values become their JSON text)."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


@dataclass(frozen=True)
class LeaderboardData:
    """Everything the page shows, JSON-ready (``to_dict``)."""

    payload: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return self.payload


def _z(confidence_level: float) -> float:
    return float(ndtri(0.5 + confidence_level / 2))


def _rank_block(
    replicated: ReplicatedScores, settings: DrawSettings, confidence_level: float
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Rank summary per model: interval, mean rank, distribution, tie with the next model."""
    design = prepare_draws(replicated, settings)
    observed, draws = design.aggregate("mean")  # (M,), (R, M)
    models = design.table.models
    stats = rank_statistics(draws, confidence_level)
    shares, mean_rank = stats.shares, stats.mean_rank
    alpha = (1 - confidence_level) / 2
    order = np.argsort(-observed, kind="stable")
    # each model against the next one down: percentile interval of the paired difference
    tie_low, tie_high, _ = pair_quantiles(draws, order[:-1], order[1:], (alpha, 1 - alpha))
    out: dict[str, dict[str, Any]] = {}
    for position, m in enumerate(order):
        tie_next = None
        if position + 1 < len(order):
            tie_next = bool(tie_low[position] <= 0 <= tie_high[position])
        nonzero = np.flatnonzero(shares[m] > 0)
        # shares are finite: round() as _num does, without its per-value checks
        dist = [
            [r + 1, round(v, 1)]
            for r, v in zip(nonzero.tolist(), shares[m, nonzero].tolist(), strict=True)
        ]
        out[models[m]] = {
            "best": int(stats.best[m]),
            "worst": int(stats.worst[m]),
            "mean": _num(mean_rank[m], 2),
            "dist": dist,
            "tie_next": tie_next,
            "n_ranked": len(models),
        }
    return out, list(design.notes)


def _replicated(source: ReplicatedScores) -> bool:
    return source.values.shape[2] > 1 or source.values.shape[3] > 1


RankCache = dict[tuple[Any, ...], tuple[dict[str, dict[str, Any]], list[str]]]


def _ranks_for(
    source: ReplicatedScores,
    models: Sequence[str],
    tasks: Sequence[str] | None,
    languages: Sequence[str] | None,
    *,
    n_draws: int,
    seed: int,
    resample_languages: bool,
    confidence_level: float,
    cache: RankCache | None = None,
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Ranks of ``models`` on the units of ``tasks`` x ``languages`` (None: all).

    Views with the same models, units and settings (the overall view and the
    only task's view, a group and a language with the same units, …) share
    one computation through ``cache``.
    """
    keep = [
        i
        for i, u in enumerate(source.units)
        if (tasks is None or u.task in tasks) and (languages is None or u.language in languages)
    ]
    if len(models) < 2 or not keep:
        return {}, []
    key = (tuple(models), tuple(keep), resample_languages, n_draws, seed, confidence_level)
    if cache is not None and key in cache:
        return cache[key]
    index = [source.models.index(m) for m in models]
    sub = ReplicatedScores(
        tuple(models),
        tuple(source.units[i] for i in keep),
        source.values[np.ix_(index, keep)],  # only the cells of this view
        source.source,
        source.metric,
    )
    scheme = "nonparametric" if _replicated(source) else "languages-only"
    if scheme == "languages-only" and not resample_languages:
        return {}, []
    settings = DrawSettings(
        scheme=scheme,
        n_draws=n_draws,
        seed=seed,
        languages="with" if resample_languages else "none",
    )
    try:
        result = _rank_block(sub, settings, confidence_level)
    except GlotbenchError as exc:
        result = {}, [str(exc)]
    if cache is not None:
        cache[key] = result
    return result


def _cell_scores(source: ReplicatedScores) -> pd.DataFrame:
    """One score per model, task and language: the mean over all its seeds and replicates.

    Computed on the (model, unit, seed, replicate) array, without the long
    table of every replicate (10⁷ rows for 200 models × 50 languages × 1,000).
    """
    values = source.values
    count = (~np.isnan(values)).sum(axis=(2, 3))
    total = np.nansum(values, axis=(2, 3))
    m, u = np.nonzero(count > 0)
    frame = pd.DataFrame(
        {
            "model": np.asarray(source.models, dtype=object)[m],
            "task": np.asarray([unit.task for unit in source.units], dtype=object)[u],
            "language": np.asarray([unit.language for unit in source.units], dtype=object)[u],
            "score": total[m, u] / count[m, u],
        }
    )
    return frame.sort_values(["model", "task", "language"], kind="stable").reset_index(drop=True)


def _cell_rows(source: ReplicatedScores, confidence_level: float) -> list[list[Any]]:
    """Per (model, task, language): mean, σ_w and the normal interval mean ± z·σ_w."""
    table = components(source)
    sigma_w = table.sigma_w
    z = _z(confidence_level)
    rows = []
    for i in range(len(table.models)):
        for j, unit in enumerate(table.units):
            mean = table.mean[i, j]
            if np.isnan(mean):
                continue
            sd = sigma_w[i, j]
            rows.append(
                [
                    i,
                    unit.task,
                    unit.language,
                    _num(mean),
                    _num(sd),
                    _num(mean - z * sd),
                    _num(mean + z * sd),
                    int(table.n_seeds[i, j]),
                ]
            )
    return rows


def _aggregate_rows(board_frame: pd.DataFrame) -> dict[str, dict[str, Any]]:
    return {
        str(r["model"]): {
            "score": _num(r["score"]),
            "se": _num(r["standard_error"]),
            "ci": [_num(r["ci_low"]), _num(r["ci_high"])],
            "n_languages": int(r["n_languages"]),
            **({"n_tasks": int(r["n_tasks"])} if "n_tasks" in r else {}),
        }
        for r in board_frame.to_dict(orient="records")
    }


def _multi_task_view(
    kind: str,
    label: str,
    scores: pd.DataFrame,
    source: ReplicatedScores,
    languages: Sequence[str] | None,
    rank_kwargs: dict[str, Any],
) -> dict[str, Any]:
    """Overall or language-group view: unweighted mean of task means, task columns."""
    board = leaderboard(scores, confidence_level=rank_kwargs["confidence_level"])
    overall = _aggregate_rows(board.overall)
    per_task: dict[str, dict[str, Any]] = {}
    for r in board.per_task.to_dict(orient="records"):
        per_task.setdefault(str(r["model"]), {})[str(r["task"])] = [
            _num(r["score"]),
            _num(r["standard_error"]),
            _num(r["ci_low"]),
            _num(r["ci_high"]),
        ]
    complete = [m for m, row in overall.items() if row["score"] is not None]
    ranks, notes = _ranks_for(
        source, complete, list(board.tasks), languages, resample_languages=True, **rank_kwargs
    )
    rows = []
    for model, row in overall.items():
        rows.append(
            row | {"model": model, "sub": per_task.get(model, {}), "rank": ranks.get(model)}
        )
    return {
        "kind": kind,
        "label": label,
        "score_label": "mean of task means",
        "sub_columns": list(board.tasks),
        "rows": rows,
        "notes": notes,
    }


def _task_view(
    task: str, scores: pd.DataFrame, source: ReplicatedScores, rank_kwargs: dict[str, Any]
) -> dict[str, Any]:
    board = leaderboard(scores, confidence_level=rank_kwargs["confidence_level"])
    agg = _aggregate_rows(board.per_task)
    ranks, notes = _ranks_for(
        source, list(agg), [task], None, resample_languages=True, **rank_kwargs
    )
    languages = sorted(scores["language"].astype(str).unique())
    return {
        "kind": "task",
        "label": task,
        "task": task,
        "score_label": "mean over languages",
        "sub_columns": languages,
        "rows": [row | {"model": m, "rank": ranks.get(m)} for m, row in agg.items()],
        "notes": notes,
    }


def _language_view(
    language: str, scores: pd.DataFrame, source: ReplicatedScores, rank_kwargs: dict[str, Any]
) -> dict[str, Any]:
    board = leaderboard(scores, confidence_level=rank_kwargs["confidence_level"])
    overall = _aggregate_rows(board.overall)
    complete = [m for m, row in overall.items() if row["score"] is not None]
    ranks, notes = _ranks_for(
        source, complete, None, [language], resample_languages=False, **rank_kwargs
    )
    return {
        "kind": "language",
        "label": language,
        "language": language,
        "score_label": "mean over tasks",
        "sub_columns": list(board.tasks),
        "rows": [
            row | {"model": m, "se": None, "ci": [None, None], "rank": ranks.get(m)}
            for m, row in overall.items()
        ],
        "notes": notes,
    }


def build_leaderboard(
    source: ReplicatedScores,
    *,
    title: str = "glotbench leaderboard",
    metadata: Mapping[str, Mapping[str, Any]] | None = None,
    language_groups: Mapping[str, Sequence[str]] | None = None,
    notes: Sequence[str] = (),
    n_draws: int = 1000,
    seed: int = 0,
    confidence_level: float = 0.95,
) -> LeaderboardData:
    """Assemble every view of the leaderboard from replicated scores.

    ``metadata`` maps a model to its metadata (parameters, training data, type,
    …); ``language_groups`` maps a group name to its languages (default:
    :data:`LANGUAGE_GROUPS`, those with two or more languages present).
    """
    scores = _cell_scores(source)
    tasks = sorted(scores["task"].unique())
    languages = sorted(scores["language"].unique())
    cache: RankCache = {}
    rank_kwargs = {
        "n_draws": n_draws,
        "seed": seed,
        "confidence_level": confidence_level,
        "cache": cache,
    }
    views: dict[str, dict[str, Any]] = {
        "overall": _multi_task_view("overall", "Overall", scores, source, None, rank_kwargs)
    }
    for task in tasks:
        views[f"task:{task}"] = _task_view(
            task, scores[scores["task"] == task], source, rank_kwargs
        )
    groups = dict(language_groups) if language_groups is not None else dict(LANGUAGE_GROUPS)
    present_groups = {}
    for name, members in groups.items():
        present = sorted(set(members) & set(languages))
        if len(present) >= 2:
            present_groups[name] = present
            views[f"group:{name}"] = _multi_task_view(
                "group",
                name,
                scores[scores["language"].isin(present)],
                source,
                present,
                rank_kwargs,
            )
    for language in languages:
        views[f"language:{language}"] = _language_view(
            language, scores[scores["language"] == language], source, rank_kwargs
        )
    meta = {str(k): dict(v) for k, v in (metadata or {}).items()}
    keys = sorted({k for m in source.models for k in meta.get(m, {})})
    payload = {
        "title": title,
        "confidence_level": confidence_level,
        "replicated": _replicated(source),
        "models": [
            {"name": m, "metadata": {k: _metadata_value(meta.get(m, {}).get(k)) for k in keys}}
            for m in source.models
        ],
        "metadata_keys": keys,
        "score_digits": score_digits(scores["score"]),
        "tasks": tasks,
        "languages": languages,
        "groups": present_groups,
        "cells": _cell_rows(source, confidence_level),
        "views": views,
        "notes": list(notes),
    }
    return LeaderboardData(payload)


def embed_json(payload: Any) -> str:
    """JSON safe inside a ``<script>`` element: ``< > &`` and U+2028/9 escaped as ``\\uXXXX``."""
    text = json.dumps(payload, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    for char, escape in (
        ("&", "\\u0026"),
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(char, escape)
    return text


def _template(name: str) -> str:
    return resources.files("glotbench.report").joinpath("templates", name).read_text("utf-8")


def script_hash(script: str) -> str:
    """CSP source expression allowing exactly this inline script."""
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def render_html(data: LeaderboardData) -> str:
    """The page: template + inline CSS/JS + data; the CSP allows only this page's script."""
    script = _template("leaderboard.js")
    values = {
        "CSS": _template("leaderboard.css"),
        "CSP_SCRIPT": script_hash(script),
        "TITLE": html.escape(str(data.payload.get("title", "leaderboard")), quote=True),
        "DATA": embed_json(data.to_dict()),
        "SCRIPT": script,
    }
    # one pass over the template, so no substituted text is ever searched again
    return re.sub(r"@@(\w+)@@", lambda m: values[m.group(1)], _template(TEMPLATE))


def write_leaderboard(data: LeaderboardData, out: str | Path) -> Path:
    """Write ``out/index.html`` (and ``out/leaderboard.json``, the same data); return its path."""
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise GlotbenchError(f"{folder} exists and is not a folder; choose another --out")
    folder.mkdir(parents=True, exist_ok=True)
    index = folder / "index.html"
    index.write_text(render_html(data), encoding="utf-8")
    (folder / "leaderboard.json").write_text(
        json.dumps(data.to_dict(), ensure_ascii=False, allow_nan=False, indent=1), encoding="utf-8"
    )
    return index
