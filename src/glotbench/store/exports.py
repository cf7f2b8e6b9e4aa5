"""Export of the store's tables to CSV or Parquet files (``store.exports``).

A directory of Parquet files is a snapshot of the whole store; merging one
back is the way in's (:func:`glotbench.ingest.snapshot.import_snapshot`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import duckdb
import pandas as pd

from glotbench.errors import InputError, StoreError
from glotbench.store.atomic_files import atomic_path
from glotbench.store.layout import EXPORT_TABLES
from glotbench.store.sql import (
    PARTIAL_RUN_PREFIX,
    Collaborator,
    _in_use,
    _sql_ident,
    _sql_string,
)
from glotbench.store.writes import WRITE_GENERATION

ExportTable = Literal["runs", "examples", "scores", "imports", "meta", "all"]


#: Text that a spreadsheet evaluates when a CSV cell begins with it, and the
#: apostrophe that marks a neutralised cell (see :meth:`Exports.write`).
_FORMULA_START = "^[=+@\t\r'-]"


@dataclass
class ExportResult:
    """Files written by an export.

    Attributes
    ----------
    store : str
        The store exported.
    table : str
        The table(s) exported.
    files : list of str
        The files written.
    """

    store: str
    table: str
    files: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"store": self.store, "table": self.table, "files": list(self.files)}

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame({"table": self.table, "file": self.files})


class Exports(Collaborator):
    """Export of whole tables to files (``store.exports``)."""

    def _export_query(self, table: str, fmt: str) -> str:
        if table == "runs":
            if fmt == "csv":
                return (
                    "SELECT * REPLACE (to_json(stat_names)::VARCHAR AS stat_names) "
                    "FROM runs ORDER BY run_id"
                )
            return "SELECT * FROM runs ORDER BY run_id"
        if table == "examples":
            keys = "r.model, r.dataset, r.task, r.language, r.seed, r.config_hash, r.metric"
            if fmt != "csv":
                return (
                    f"SELECT e.run_id, {keys}, e.position, e.example_id, e.stats, "
                    f"{self._store.stats.source_position_sql('e')} "
                    "FROM example_stats e JOIN runs r USING (run_id) ORDER BY e.run_id, e.position"
                )
            layouts = [
                list(row[0])
                for row in self._con.execute(
                    "SELECT DISTINCT stat_names FROM runs ORDER BY stat_names"
                ).fetchall()
            ]
            if not layouts:
                return (
                    "SELECT NULL::VARCHAR AS run_id, NULL::VARCHAR AS model, "
                    "NULL::VARCHAR AS dataset, NULL::VARCHAR AS task, NULL::VARCHAR AS language, "
                    "NULL::BIGINT AS seed, NULL::VARCHAR AS config_hash, NULL::VARCHAR AS metric, "
                    "NULL::VARCHAR AS example_id WHERE false"
                )
            parts = []
            for names in layouts:
                stat_cols = ", ".join(
                    f"e.stats[{i + 1}] AS {_sql_ident(name)}" for i, name in enumerate(names)
                )
                literal = "[" + ", ".join(_sql_string(n) for n in names) + "]::VARCHAR[]"
                parts.append(
                    f"SELECT e.run_id, {keys}, e.position, e.example_id, "
                    f"{self._store.stats.source_position_sql('e')}, {stat_cols} "
                    "FROM example_stats e JOIN runs r USING (run_id) "
                    f"WHERE r.stat_names = {literal}"
                )
            union = " UNION ALL BY NAME ".join(f"({p})" for p in parts)
            return (
                f"SELECT * EXCLUDE (position) FROM ({union}) "
                "ORDER BY model, dataset, task, language, metric, seed NULLS FIRST, "
                "config_hash, position"
            )
        if table == "scores":
            return (
                "SELECT * FROM scores ORDER BY model, task, language, dataset, metric, "
                "seed NULLS FIRST, replicate NULLS FIRST"
            )
        if table == "imports":
            return "SELECT * FROM imports ORDER BY started_at, import_id"
        if table == "meta":
            # not the marks of interrupted chunked writes (PARTIAL_RUN_PREFIX), nor the
            # count of write transactions (a property of this file, not of the results)
            skip = _sql_string(PARTIAL_RUN_PREFIX)
            return (
                f"SELECT * FROM meta WHERE NOT starts_with(key, {skip}) "
                f"AND key <> {_sql_string(WRITE_GENERATION)} ORDER BY key"
            )
        raise InputError(
            f"unknown table {table!r}; choose one of {', '.join(EXPORT_TABLES)} or all",
            field="table",
        )

    def _neutralised_csv_query(self, query: str) -> str:
        """Wrap ``query`` so that no text cell starts a spreadsheet formula.

        A cell that begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
        return is evaluated as a formula by spreadsheet programs (CSV
        injection, OWASP "CSV Injection"). Such text cells, and text cells that
        begin with an apostrophe (so the change can be undone unambiguously),
        get a leading apostrophe; numeric columns are untouched.
        """
        columns = self._con.execute(f"DESCRIBE ({query})").fetchall()
        text = [name for name, kind, *_ in columns if str(kind).upper() == "VARCHAR"]
        if not text:
            return query
        pattern = _sql_string(_FORMULA_START)
        replaced = ", ".join(
            f"CASE WHEN regexp_matches({_sql_ident(n)}, {pattern}) "
            f"THEN {_sql_string(chr(39))} || {_sql_ident(n)} ELSE {_sql_ident(n)} END "
            f"AS {_sql_ident(n)}"
            for n in text
        )
        return f"SELECT * REPLACE ({replaced}) FROM ({query})"

    @_in_use
    def write(
        self, out: str | Path, table: str = "all", *, keep_formulas: bool = False
    ) -> list[Path]:
        """Write table(s) to CSV or Parquet; returns the files written.

        * ``out`` ending in ``.csv``, ``.csv.gz`` or ``.parquet`` and one table:
          that file;
        * such a name and ``table="all"``: one file per table next to it,
          ``STEM_runs.EXT``, ``STEM_examples.EXT``, ``STEM_scores.EXT``,
          ``STEM_imports.EXT`` and ``STEM_meta.EXT``;
        * any other name (no such suffix, or an existing directory): a
          directory of Parquet files ``runs.parquet``, ``examples.parquet``, ...
          — a snapshot of the whole store that
          :func:`glotbench.ingest.snapshot.import_snapshot` reads back.

        In CSV, examples are *wide* (one column per statistic name, the format
        ``glotbench import examples`` reads); in Parquet they keep the stats list.

        In CSV, text cells that a spreadsheet would evaluate as a formula (they
        begin with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return) and
        text cells that begin with an apostrophe get a leading apostrophe,
        unless ``keep_formulas`` is true. Parquet is written as stored.
        """
        out = Path(out)
        if table != "all" and table not in EXPORT_TABLES:
            raise InputError(
                f"unknown table {table!r}; choose one of {', '.join(EXPORT_TABLES)} or all",
                field="table",
            )
        tables = list(EXPORT_TABLES) if table == "all" else [table]
        name = out.name.lower()
        suffix = next((s for s in (".csv.gz", ".csv", ".parquet") if name.endswith(s)), None)
        targets: list[tuple[str, Path, str]] = []
        if suffix is None or out.is_dir():
            try:
                out.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise InputError(f"cannot create the directory: {exc}", path=str(out)) from None
            targets = [(t, out / f"{t}.parquet", "parquet") for t in tables]
        else:
            fmt = "parquet" if suffix == ".parquet" else "csv"
            stem = out.name[: len(out.name) - len(suffix)]
            if not out.parent.exists():
                raise InputError("the directory to write into does not exist", path=str(out.parent))
            if len(tables) == 1:
                targets = [(tables[0], out, fmt)]
            else:
                targets = [(t, out.with_name(f"{stem}_{t}{suffix}"), fmt) for t in tables]
        for tbl, path, fmt in targets:
            query = self._export_query(tbl, fmt)
            if fmt == "csv" and not keep_formulas:
                query = self._neutralised_csv_query(query)
            if fmt == "parquet":
                options = "FORMAT parquet, COMPRESSION zstd"
            else:
                options = "FORMAT csv, HEADER true"
                if path.name.lower().endswith(".gz"):
                    options += ", COMPRESSION gzip"
            try:
                # into a temporary file renamed onto the target: a killed export
                # keeps the previous file; a symlink at the target is replaced
                with atomic_path(path) as tmp:
                    self._con.execute(f"COPY ({query}) TO {_sql_string(str(tmp))} ({options})")
            except duckdb.Error as exc:
                raise StoreError(f"could not write {path}: {exc}") from None
        return [p for _, p, _ in targets]
