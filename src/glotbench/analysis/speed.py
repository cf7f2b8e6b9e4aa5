"""Inference speed per model, as ScandEval reports it: mean tokens per second ± 1.96·SD/√n.

Two sources hold speed figures in a store:

- runs of ``glotbench run``: the model's speed job stores the per-iteration
  tokens per second of ScandEval's benchmark (:mod:`glotbench.runner.speed`)
  in its run's ``model_metadata['speed']``;
- imported EuroEval results: the ``speed`` task's scores (metrics ``speed``
  and ``speed_short``), one replicate per iteration.

Either way the summary is ScandEval's aggregate (Nielsen 2023, §4): the mean
over iterations and the half-width ``1.96 · SD(ddof=1) / √n`` of its 95 %
interval. The primary figure is the long documents' (about 100 … 1,000
GPT-2 tokens), the secondary the short documents' (about 12.5 … 125).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from glotbench.core.store import Store

#: ScandEval's 95 % normal multiplier of the standard error
CI_MULTIPLIER = 1.96
#: Above this many GPT-2 tokens per second a model does no per-token work: a call on
#: one document of about 100 … 1,000 tokens then takes under 1 … 10 µs, the cost of a
#: few Python function calls, less than reading the document once (a majority-class
#: baseline measures 10⁹ tokens/s). Such figures time call overhead, not a model, and
#: are shown as "trivial" instead of a number.
TRIVIAL_TOKENS_PER_SECOND = 1e8

COLUMNS = [
    "model",
    "tokens_per_second",
    "ci_half_width",
    "tokens_per_second_short",
    "ci_half_width_short",
    "iterations",
    "source",
    "trivial",
]


def mean_and_half_width(values: Sequence[float]) -> tuple[float, float | None]:
    """ScandEval's aggregate: mean and ``1.96 · SD(ddof=1) / √n`` (None for one value)."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.size == 0:
        return float("nan"), None
    half = float(CI_MULTIPLIER * arr.std(ddof=1) / np.sqrt(arr.size)) if arr.size > 1 else None
    return float(arr.mean()), half


@dataclass
class SpeedTable:
    """Speed per model; ``to_frame()`` has one row per model (:data:`COLUMNS`)."""

    rows: list[dict[str, Any]] = field(default_factory=list)

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows, columns=COLUMNS)

    def to_dict(self) -> dict[str, Any]:
        return {
            "unit": "GPT-2 tokens per second",
            "interval": "95 % (mean ± 1.96·SD/√n over the benchmark's iterations)",
            "trivial": f"above {TRIVIAL_TOKENS_PER_SECOND:.0e} tokens/s: no per-token work "
            "(the figure times call overhead)",
            "models": [dict(r) for r in self.rows],
        }

    def of(self, model: str) -> dict[str, Any] | None:
        """The row of ``model``, or None."""
        return next((r for r in self.rows if r["model"] == model), None)

    def __len__(self) -> int:
        return len(self.rows)


def _row(model: str, long: Sequence[float], short: Sequence[float], source: str) -> dict[str, Any]:
    mean, half = mean_and_half_width(long)
    mean_s, half_s = mean_and_half_width(short) if len(short) else (None, None)
    return {
        "model": model,
        "tokens_per_second": mean,
        "ci_half_width": half,
        "tokens_per_second_short": mean_s,
        "ci_half_width_short": half_s,
        "iterations": len(long),
        "source": source,
        "trivial": bool(mean > TRIVIAL_TOKENS_PER_SECOND),
    }


def _filter_sql(column: str, values: Sequence[str] | None) -> tuple[str, list[Any]]:
    if values is None:
        return "", []
    return f" AND {column} IN (SELECT unnest(?))", [list(values)]


def speed_table(store: Store, *, models: Sequence[str] | None = None) -> SpeedTable:
    """Speed of every model with speed figures in ``store`` (runner runs first, then imports)."""
    with store.held():
        con = store.connection
        where, params = _filter_sql("model", models)
        measured = con.execute(
            "SELECT model, any_value(json_extract(model_metadata, '$.speed')) FROM runs "
            "WHERE json_extract(model_metadata, '$.speed') IS NOT NULL "
            "AND json_type(json_extract(model_metadata, '$.speed')) = 'OBJECT'"
            f"{where} GROUP BY model ORDER BY model",
            params,
        ).fetchall()
        imported = con.execute(
            "SELECT model, metric, replicate, avg(score) FROM scores "
            f"WHERE task = 'speed' AND metric IN ('speed', 'speed_short'){where} "
            "GROUP BY model, metric, replicate ORDER BY model, metric, replicate NULLS FIRST",
            params,
        ).fetchall()
    rows: dict[str, dict[str, Any]] = {}
    for model, raw in measured:
        speed = json.loads(raw) if isinstance(raw, str) else raw
        long = speed.get("tokens_per_second") or []
        if long:
            rows[model] = _row(
                model, long, speed.get("tokens_per_second_short") or [], "glotbench run"
            )
    by_model: dict[str, dict[str, dict[Any, float]]] = {}
    for model, metric, replicate, score in imported:
        by_model.setdefault(model, {}).setdefault(metric, {})[replicate] = float(score)
    for model, metrics in by_model.items():
        if model in rows:
            continue
        long = _replicates(metrics.get("speed", {}))
        if long:
            rows[model] = _row(model, long, _replicates(metrics.get("speed_short", {})), "import")
    return SpeedTable(rows=[rows[m] for m in sorted(rows)])


def _replicates(values: dict[Any, float]) -> list[float]:
    """Per-iteration values when replicates are stored, else the one total."""
    reps = [v for k, v in values.items() if k is not None and not pd.isna(k)]
    if reps:
        return reps
    return [v for k, v in values.items() if k is None or pd.isna(k)]


def store_speed_table(store: str | Path, models: Sequence[str] | None = None) -> SpeedTable:
    """:func:`speed_table` of the store at the path ``store`` (opened read-only)."""
    from glotbench.core.store import Store

    with Store.open(store, read_only=True) as handle:
        return speed_table(handle, models=models)
