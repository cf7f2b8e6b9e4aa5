"""Example attributes and entity-unit statistics in the store (two additive tables).

``example_attributes``  (dataset, example_id, unit, attribute) → text_value | number_value
                        ``unit`` is ``''`` for the example itself, else an entity
                        unit ``start:end:label`` (:func:`glotbench.ingest.attributes.unit_id`)
``unit_stats``          (run_id, example_id, unit) → stats: the run's span
                        statistics of that entity unit (they sum to the
                        example's statistics in ``example_stats``)

Both tables are *additive*, like ``failures``: they are created by the first
write (``CREATE TABLE IF NOT EXISTS``), glotbench versions that do not know
them ignore them, so the schema version stays as it is, and read paths treat a
missing table as empty (an older store, or a store opened read-only). Nothing
here touches ``runs`` or ``example_stats``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from glotbench.store.sql import Collaborator

if TYPE_CHECKING:
    from glotbench.store.store import Store

ATTRIBUTES_DDL = """
CREATE TABLE IF NOT EXISTS example_attributes (
    dataset VARCHAR NOT NULL,
    example_id VARCHAR NOT NULL,
    unit VARCHAR NOT NULL,
    attribute VARCHAR NOT NULL,
    text_value VARCHAR,
    number_value DOUBLE,
    PRIMARY KEY (dataset, example_id, unit, attribute)
);
CREATE TABLE IF NOT EXISTS unit_stats (
    run_id VARCHAR NOT NULL,
    example_id VARCHAR NOT NULL,
    unit VARCHAR NOT NULL,
    stats DOUBLE[] NOT NULL
);
"""


def _has_table(store: Store, name: str) -> bool:
    row = store.connection.execute(
        "SELECT 1 FROM information_schema.tables WHERE table_schema = 'main' AND table_name = ?",
        [name],
    ).fetchall()
    return bool(row)


def attribute_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Long rows ``{example_id, unit, attribute, value}`` → the table's columns."""
    records = []
    for row in rows:
        value = row["value"]
        number = (
            float(value)
            if isinstance(value, int | float | np.integer | np.floating)
            and not isinstance(value, bool)
            else None
        )
        records.append(
            {
                "example_id": str(row["example_id"]),
                "unit": str(row.get("unit", "")),
                "attribute": str(row["attribute"]),
                "text_value": None if number is not None or value is None else str(value),
                "number_value": number,
            }
        )
    return pd.DataFrame(
        records, columns=["example_id", "unit", "attribute", "text_value", "number_value"]
    )


class Attributes(Collaborator):
    """Example attributes and entity-unit statistics of a store (``store.attributes``)."""

    def write(self, dataset: str, rows: Iterable[Mapping[str, Any]]) -> int:
        """Insert (or replace) attribute rows of ``dataset`` in one transaction; the count."""
        frame = attribute_frame(rows).drop_duplicates(
            ["example_id", "unit", "attribute"], keep="last"
        )
        if frame.empty:
            return 0
        frame.insert(0, "dataset", dataset)
        with self._store.transaction() as con:
            con.execute(ATTRIBUTES_DDL)
            con.register("_glotbench_attributes", frame)
            try:
                con.execute(
                    "INSERT OR REPLACE INTO example_attributes "
                    "SELECT dataset, example_id, unit, attribute, text_value, number_value "
                    "FROM _glotbench_attributes"
                )
            finally:
                con.unregister("_glotbench_attributes")
        return len(frame)

    def write_unit_stats(self, units: Mapping[str, Sequence[tuple[str, str, Any]]]) -> int:
        """Replace each run's unit statistics: ``{run_id: [(example_id, unit, stats), ...]}``."""
        records = [
            (run_id, str(example_id), str(unit), [float(v) for v in stats])
            for run_id, rows in units.items()
            for example_id, unit, stats in rows
        ]
        if not units:
            return 0
        with self._store.transaction() as con:
            con.execute(ATTRIBUTES_DDL)
            con.execute("DELETE FROM unit_stats WHERE run_id IN (SELECT unnest(?))", [list(units)])
            if records:
                frame = pd.DataFrame(records, columns=["run_id", "example_id", "unit", "stats"])
                con.register("_glotbench_units", frame)
                try:
                    con.execute(
                        "INSERT INTO unit_stats SELECT run_id, example_id, unit, "
                        "CAST(stats AS DOUBLE[]) FROM _glotbench_units"
                    )
                finally:
                    con.unregister("_glotbench_units")
        return len(records)

    def read(self, dataset: str) -> tuple[pd.DataFrame, pd.DataFrame]:
        """The stored attributes of ``dataset``: (per example, per entity unit).

        The first frame is indexed by ``example_id``, the second by
        (``example_id``, ``unit``); one column per attribute (numbers as floats,
        text as strings). Both are empty when nothing is stored.
        """
        empty_examples = pd.DataFrame(index=pd.Index([], name="example_id"))
        empty_units = pd.DataFrame(
            index=pd.MultiIndex.from_arrays([[], []], names=["example_id", "unit"])
        )
        if not _has_table(self._store, "example_attributes"):
            return empty_examples, empty_units
        long = self._store.connection.execute(
            "SELECT example_id, unit, attribute, text_value, number_value FROM example_attributes "
            "WHERE dataset = ? ORDER BY example_id, unit, attribute",
            [dataset],
        ).df()
        if long.empty:
            return empty_examples, empty_units
        numeric = long.groupby("attribute")["number_value"].apply(lambda s: s.notna().all())
        long["value"] = [
            n if numeric[a] else t
            for a, t, n in zip(
                long["attribute"], long["text_value"], long["number_value"], strict=True
            )
        ]

        def wide(part: pd.DataFrame, index: list[str]) -> pd.DataFrame:
            table = part.pivot(index=index, columns="attribute", values="value")
            table.columns.name = None
            for column in table.columns:
                if numeric[column]:
                    values = pd.to_numeric(table[column])
                    whole = values.notna().all() and bool((values == values.round()).all())
                    table[column] = values.astype("int64") if whole else values
            return table

        examples = long[long["unit"] == ""]
        units = long[long["unit"] != ""]
        return (
            wide(examples, ["example_id"]) if not examples.empty else empty_examples,
            wide(units, ["example_id", "unit"]) if not units.empty else empty_units,
        )

    def unit_stats(self, run_ids: Sequence[str]) -> pd.DataFrame:
        """Unit statistics of ``run_ids``: columns run_id, example_id, unit, stats (arrays)."""
        columns = ["run_id", "example_id", "unit", "stats"]
        if not run_ids or not _has_table(self._store, "unit_stats"):
            return pd.DataFrame(columns=columns)
        return self._store.connection.execute(
            "SELECT run_id, example_id, unit, stats FROM unit_stats "
            "WHERE run_id IN (SELECT unnest(?)) ORDER BY run_id, example_id, unit",
            [list(run_ids)],
        ).df()
