"""Speed figures of a store: runner runs' measurements, else imported EuroEval scores.

Reads what :mod:`glotbench.analysis.speed` summarises (its docstring has the
two sources and ScandEval's aggregate): the per-iteration tokens per second in
a run's ``model_metadata['speed']``, or the ``speed`` task's scores.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from glotbench.analysis.speed import SpeedTable, speed_row
from glotbench.store.store import Store


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
            rows[model] = speed_row(
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
            rows[model] = speed_row(
                model, long, _replicates(metrics.get("speed_short", {})), "import"
            )
    return SpeedTable(rows=[rows[m] for m in sorted(rows)])


def _replicates(values: dict[Any, float]) -> list[float]:
    """Per-iteration values when replicates are stored, else the one total."""
    reps = [v for k, v in values.items() if k is not None and not pd.isna(k)]
    if reps:
        return reps
    return [v for k, v in values.items() if k is None or pd.isna(k)]


def store_speed_table(store: str | Path, models: Sequence[str] | None = None) -> SpeedTable:
    """:func:`speed_table` of the store at the path ``store`` (opened read-only)."""
    with Store.open(store, read_only=True) as handle:
        return speed_table(handle, models=models)
