"""Kept outputs: each example's prediction or generated text, stored beside its statistics.

An additive table (created on first write, as the attribute tables; versions
that do not know it ignore it; a store without it reads as empty):

``outputs(output_key, model, dataset, task, language, seed, config_hash,
n_examples, data, created_at)`` — one row per job (model, dataset,
iteration): ``data`` is the zlib-compressed JSON ``{"ids": [...],
"outputs": [...], "references": [...], "inputs": [...]}`` in the order of
the test split. A re-run replaces the row. Statistics stay in
``example_stats``; these rows are for reading examples (error analysis,
where two models disagree), never for scoring.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from glotbench.store.sql import Collaborator

if TYPE_CHECKING:
    pass

OUTPUTS_DDL = """
CREATE TABLE IF NOT EXISTS outputs (
    output_key VARCHAR PRIMARY KEY,
    model VARCHAR NOT NULL,
    dataset VARCHAR NOT NULL,
    task VARCHAR NOT NULL,
    language VARCHAR NOT NULL,
    seed BIGINT,
    config_hash VARCHAR NOT NULL,
    n_examples BIGINT NOT NULL,
    data BLOB NOT NULL,
    created_at TIMESTAMP NOT NULL
);
"""
COLUMNS = ["model", "dataset", "task", "language", "seed", "config_hash"]


def jsonable(value: Any) -> Any:
    """``value`` as JSON data: numpy scalars and arrays, tuples and sets become lists."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if hasattr(value, "tolist"):
        return jsonable(value.tolist())
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def output_key(key: dict[str, Any]) -> str:
    text = json.dumps([key.get(c) for c in COLUMNS], default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class Outputs(Collaborator):
    """Kept outputs of a store (``store.outputs``): one row per job."""

    def write(self, key: dict[str, Any], payload: Mapping[str, Sequence[Any]]) -> None:
        """Store (or replace) one job's outputs; ``key`` has :data:`COLUMNS`."""
        data = zlib.compress(
            json.dumps(jsonable(payload), ensure_ascii=False, allow_nan=False).encode(), 6
        )
        with self._store.transaction() as con:
            con.execute(OUTPUTS_DDL)
            con.execute(
                "INSERT OR REPLACE INTO outputs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, now())",
                [
                    output_key(key),
                    *[key[c] for c in COLUMNS],
                    len(payload["ids"]),
                    data,
                ],
            )

    def read(
        self,
        *,
        models: Sequence[str] | None = None,
        datasets: Sequence[str] | None = None,
        languages: Sequence[str] | None = None,
        seeds: Sequence[int] | None = None,
    ) -> pd.DataFrame:
        """Kept outputs as a tidy frame: one row per (job, example), in test-split order.

        Columns: model, dataset, task, language, seed, config_hash, position,
        example_id, output, reference, input. Empty when nothing is kept.
        """
        columns = [*COLUMNS, "position", "example_id", "output", "reference", "input"]
        con = self._store.connection
        exists = con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'outputs'"
        ).fetchone()
        if not exists or not exists[0]:
            return pd.DataFrame(columns=columns)
        where, params = [], []
        for column, values in (
            ("model", models),
            ("dataset", datasets),
            ("language", languages),
            ("seed", seeds),
        ):
            if values:
                where.append(f"{column} IN (SELECT unnest(?))")
                params.append(list(values))
        sql = f"SELECT {', '.join(COLUMNS)}, data FROM outputs"
        if where:
            sql += " WHERE " + " AND ".join(where)
        rows = []
        for *key, blob in con.execute(
            sql + " ORDER BY model, dataset, language, seed", params
        ).fetchall():
            payload = json.loads(zlib.decompress(blob))
            refs = payload.get("references") or [None] * len(payload["ids"])
            inputs = payload.get("inputs") or [None] * len(payload["ids"])
            for i, (eid, out, ref, inp) in enumerate(
                zip(payload["ids"], payload["outputs"], refs, inputs, strict=True)
            ):
                rows.append([*key, i, eid, out, ref, inp])
        return pd.DataFrame(rows, columns=columns)
