"""The examples' statistics in the store: one run's, many runs', aligned matrices.

``store.stats`` (:class:`Stats`) reads the ``example_stats`` table: a run's
example ids and (n × k) statistics (:meth:`Stats.of_run`), many runs' in one
query (:meth:`Stats.of_runs`), a tidy frame (:meth:`Stats.examples`), the
source positions of examples and the (m × n × k) matrix of paired runs
(:meth:`Stats.matrix`, a :class:`StatsMatrix`). Listing runs is
``store.runs.frame`` (:mod:`glotbench.store.runs`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from glotbench.errors import StoreError
from glotbench.store.layout import (
    _first,
)
from glotbench.store.schema import (
    normalise_metric_name,
)
from glotbench.store.sql import (
    Collaborator,
    Filter,
    _in_use,
    _where,
)


def _stats_from_list(column: pa.ChunkedArray | pa.Array, n: int, k: int) -> np.ndarray:
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    values = np.asarray(arr.flatten(), dtype=np.float64)
    if values.size != n * k:
        raise StoreError(
            f"the store is inconsistent: expected {n} × {k} statistics, found {values.size} values"
        )
    return values.reshape(n, k)


@dataclass
class StatsMatrix:
    """Per-example statistics of several runs, aligned by example_id.

    ``stats[i, j, :]`` are the statistics of example ``example_ids[j]`` in run
    ``run_ids[i]`` (model ``models[i]``, seed ``seeds[i]``).
    """

    dataset: str
    task: str
    language: str
    metric: str
    metric_config: dict[str, Any]
    stat_names: tuple[str, ...]
    run_ids: list[str]
    models: list[str]
    seeds: list[int | None]
    config_hashes: list[str]
    example_ids: np.ndarray
    stats: np.ndarray  # (m, n, k)

    def get_metric(self) -> Any:
        """The metric, configured as stored (``get_metric(metric, **metric_config)``)."""
        from glotbench.metrics import get_metric

        return get_metric(self.metric, **self.metric_config)

    def scores(self) -> np.ndarray:
        """Score of each run on the whole test set: ``score(stats.sum(axis=1))``."""
        return np.asarray(self.get_metric().score(self.stats.sum(axis=1)), dtype=np.float64)

    def to_frame(self) -> pd.DataFrame:
        """One row per run: run_id, model, seed, config_hash, n_examples, score."""
        return pd.DataFrame(
            {
                "run_id": self.run_ids,
                "model": self.models,
                "seed": pd.array(self.seeds, dtype="Int64"),
                "config_hash": self.config_hashes,
                "n_examples": len(self.example_ids),
                "score": self.scores(),
            }
        )


def _example_rows(con: Any, run_ids: Sequence[str]) -> tuple[pa.Table, np.ndarray]:
    """Example rows (run_id, position, example_id, stats) of ``run_ids`` in one query.

    Rows are ordered by (the run's place in ``run_ids``, position) — each run in
    its stored order — and ``sizes[i]`` is the number of rows of ``run_ids[i]``.
    The order is made in numpy: cheaper than an SQL sort of the stats lists, and
    a no-op for rows already stored run by run.
    """
    table = con.sql(
        "SELECT run_id, position, example_id, stats FROM example_stats "
        "WHERE run_id IN (SELECT unnest(?))",
        params=[list(run_ids)],
    ).to_arrow_table()
    run_pos = pc.index_in(table.column("run_id"), value_set=pa.array(list(run_ids))).to_numpy()
    position = table.column("position").to_numpy().astype(np.int64)
    sort_key = run_pos.astype(np.int64) * (int(position.max(initial=0)) + 1) + position
    if (np.diff(sort_key) < 0).any():
        table = table.take(pa.array(np.argsort(sort_key, kind="stable")))
    return table, np.bincount(run_pos, minlength=len(run_ids))


#: example rows per Arrow batch of the streamed matrix read (bounds its transient memory)
STREAM_ROWS = 1 << 20


def _streamed_matrix(
    con: Any, run_ids: Sequence[str], k: int
) -> tuple[np.ndarray, np.ndarray] | None:
    """The (m × n × k) statistics of ``run_ids`` aligned to the first run's example order.

    One streamed query: DuckDB joins each example row to its run's row number and its
    example's column (the first run's stored position of its example id), and the
    batches are scattered into the preallocated matrix, so memory is the matrix plus
    one batch of :data:`STREAM_ROWS` rows — no per-example Python objects (5,000 runs ×
    10,000 examples: 800 MB of statistics, not 6 GB of rows). None when some run does
    not cover exactly the first run's examples (the caller's run-by-run path then
    names the difference).
    """
    import pyarrow as pa

    reference = con.sql(
        "SELECT example_id FROM example_stats WHERE run_id = ? ORDER BY position",
        params=[run_ids[0]],
    ).to_arrow_table()
    ids = reference.column("example_id").combine_chunks()
    m, n = len(run_ids), len(ids)
    runs_table = pa.table(  # noqa: F841 - read by DuckDB's replacement scan
        {
            "run_id": pa.array(list(run_ids), pa.string()),
            "r": pa.array(np.arange(m, dtype=np.int32)),
        }
    )
    ids_table = pa.table({"example_id": ids, "c": pa.array(np.arange(n, dtype=np.int32))})  # noqa: F841
    out = np.empty((m, n, k), dtype=np.float64)
    filled = np.zeros(m * n, dtype=bool)
    rows = 0
    reader = con.sql(
        "SELECT l.r, x.c, e.stats FROM example_stats e JOIN runs_table l USING (run_id) "
        "LEFT JOIN ids_table x USING (example_id)"
    ).to_arrow_reader(STREAM_ROWS)
    flat_out = out.reshape(m * n, k)
    for batch in reader:
        cols = batch.column(1)
        if cols.null_count:  # an example the first run lacks
            return None
        cell = batch.column(0).to_numpy().astype(np.int64) * n + cols.to_numpy()
        values = np.asarray(batch.column(2).flatten(), dtype=np.float64)
        if values.size != batch.num_rows * k:
            raise StoreError(
                f"the store is inconsistent: expected {batch.num_rows} × {k} statistics, "
                f"found {values.size} values"
            )
        flat_out[cell] = values.reshape(-1, k)
        filled[cell] = True
        rows += batch.num_rows
    if rows != m * n or not filled.all():  # a run lacks examples (or repeats one)
        return None
    return ids.to_numpy(zero_copy_only=False).astype(object), out


class Stats(Collaborator):
    """The statistics of the stored examples (``store.stats``)."""

    @_in_use
    def of_run(self, run_id: str) -> tuple[np.ndarray, np.ndarray]:
        """(example_ids, stats) of one run, in stored order; stats is (n × k)."""
        row = _first(
            self._con.execute(
                "SELECT n_examples, len(stat_names) FROM runs WHERE run_id = ?", [run_id]
            ).fetchall()
        )
        if row is None:
            raise StoreError(f"no run with id {run_id!r} in {self.path}")
        table = self._con.sql(
            "SELECT example_id, stats FROM example_stats WHERE run_id = ? ORDER BY position",
            params=[run_id],
        ).to_arrow_table()
        if table.num_rows != row[0]:
            raise StoreError(
                f"the store is inconsistent: run {run_id} has {table.num_rows} example rows "
                f"but n_examples = {row[0]}"
            )
        ids = table.column("example_id").to_numpy(zero_copy_only=False).astype(object)
        return ids, _stats_from_list(table.column("stats"), row[0], row[1])

    @_in_use
    def of_runs(self, run_ids: Sequence[str]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """:meth:`of_run` of many runs in one query: run id -> (example_ids, stats).

        Each run keeps its stored example order (what a seeded bootstrap of
        its test set indexes). Raises :class:`StoreError` for an unknown run
        id or a run whose example rows do not match ``n_examples``.
        """
        ids = list(dict.fromkeys(run_ids))
        if not ids:
            return {}
        meta = self._con.execute(
            "SELECT run_id, n_examples, len(stat_names) FROM runs "
            "WHERE run_id IN (SELECT unnest(?))",
            [ids],
        ).fetchall()
        shape = {run_id: (int(n), int(k)) for run_id, n, k in meta}
        unknown = [r for r in ids if r not in shape]
        if unknown:
            raise StoreError(f"no run with id {unknown[0]!r} in {self.path}")
        table, sizes = _example_rows(self._con, ids)
        starts = np.concatenate([[0], np.cumsum(sizes)])
        all_ids = table.column("example_id").to_numpy(zero_copy_only=False).astype(object)
        stats_column = table.column("stats").combine_chunks()
        out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for i, run_id in enumerate(ids):
            n, k = shape[run_id]
            lo, hi = int(starts[i]), int(starts[i + 1])
            if hi - lo != n:
                raise StoreError(
                    f"the store is inconsistent: run {run_id} has {hi - lo} example rows "
                    f"but n_examples = {n}"
                )
            out[run_id] = (all_ids[lo:hi], _stats_from_list(stats_column.slice(lo, hi - lo), n, k))
        return out

    @_in_use
    def source_positions(
        self, run_ids: Sequence[str], example_ids: Sequence[Any] | np.ndarray
    ) -> np.ndarray:
        """Source position of each example of each run: (runs × examples), NaN where unknown.

        Row ``i`` belongs to ``run_ids[i]``, column ``j`` to ``example_ids[j]``
        (e.g. a :class:`StatsMatrix`'s run ids and example ids). NaN: the run
        stored no source position for it, the run lacks the example, or the
        store predates the column (schema version 1, opened read-only).
        """
        ids = pd.Index([str(e) for e in example_ids])
        out = np.full((len(run_ids), ids.size), np.nan)
        if not self._has_source_positions() or not len(run_ids):
            return out
        frame = self._con.sql(
            "SELECT run_id, example_id, source_position FROM example_stats "
            "WHERE run_id IN (SELECT unnest(?)) AND source_position IS NOT NULL",
            params=[list(run_ids)],
        ).df()
        row_of = {rid: i for i, rid in enumerate(run_ids)}
        rows = frame["run_id"].map(row_of).to_numpy(dtype=np.int64)
        cols = ids.get_indexer(pd.Index(frame["example_id"].astype(str)))
        keep = cols >= 0
        out[rows[keep], cols[keep]] = frame["source_position"].to_numpy(np.float64)[keep]
        return out

    @_in_use
    def examples(
        self,
        run_ids: Filter = None,
        *,
        models: Filter = None,
        datasets: Filter = None,
        tasks: Filter = None,
        languages: Filter = None,
        metrics: Filter = None,
        seeds: Filter = None,
    ) -> pd.DataFrame:
        """Per-example statistics, tidy: one row per (run, example).

        Columns: run_id, model, dataset, task, language, seed, config_hash,
        metric, position, example_id, stats (a float array per row),
        source_position (nullable integer).
        For analysis prefer :meth:`matrix`, which aligns runs by example id.
        """
        where, params = _where(
            {
                "run_id": run_ids,
                "model": models,
                "dataset": datasets,
                "task": tasks,
                "language": languages,
                "metric": metrics,
                "seed": seeds,
            },
            alias="r",
        )
        frame = self._con.sql(
            "SELECT e.run_id, r.model, r.dataset, r.task, r.language, r.seed, r.config_hash, "
            f"r.metric, e.position, e.example_id, e.stats, {self.source_position_sql('e')} "
            f"FROM example_stats e JOIN runs r USING (run_id){where} "
            "ORDER BY r.model, r.dataset, r.task, r.language, r.metric, r.seed NULLS FIRST, "
            "r.config_hash, e.position",
            params=params,
        ).df()
        frame["seed"] = frame["seed"].astype("Int64")
        frame["stats"] = [np.asarray(v, dtype=np.float64) for v in frame["stats"]]
        frame["source_position"] = frame["source_position"].astype("Int64")
        return frame

    def source_position_sql(self, alias: str) -> str:
        """``alias.source_position``, or a typed NULL in a version-1 store opened read-only."""
        if self._has_source_positions():
            return f"{alias}.source_position"
        return "NULL::BIGINT AS source_position"

    @_in_use
    def matrix(
        self,
        dataset: str,
        task: str,
        language: str,
        metric: str,
        *,
        models: Sequence[str] | None = None,
        seeds: Sequence[int] | None = None,
        config_hash: str | None = None,
        configs: Mapping[str, str] | None = None,
    ) -> StatsMatrix:
        """Statistics of all matching runs as one (m × n × k) array aligned by example_id.

        Runs are ordered by ``models`` (as given, else alphabetically), then
        seed and config hash; examples follow the first run's order. Raises
        :class:`StoreError` when no run matches, when a requested model has no
        run, when the runs' statistic layouts differ, or when they do not
        cover the same example ids. ``configs`` (model -> config hash) keeps only
        that configuration of the models it names.
        """
        metric = normalise_metric_name(metric)
        what = f"dataset={dataset!r}, task={task!r}, language={language!r}, metric={metric!r}"
        runs = self._matrix_runs(
            what, dataset, task, language, metric, models, seeds, config_hash, configs
        )
        stat_names = tuple(runs["stat_names"].iloc[0])
        run_ids = runs["run_id"].tolist()
        k = len(stat_names)
        streamed = _streamed_matrix(self._con, run_ids, k)
        # None: some run lacks examples or has others; the run-by-run path names them
        example_ids, stats = (
            streamed if streamed is not None else _aligned_matrix(self._con, runs, k, what)
        )
        return StatsMatrix(
            dataset=dataset,
            task=task,
            language=language,
            metric=metric,
            metric_config=runs["metric_config"].iloc[0],
            stat_names=stat_names,
            run_ids=run_ids,
            models=runs["model"].tolist(),
            seeds=[None if pd.isna(s) else int(s) for s in runs["seed"]],
            config_hashes=runs["config_hash"].tolist(),
            example_ids=example_ids,
            stats=stats,
        )

    def _matrix_runs(
        self,
        what: str,
        dataset: str,
        task: str,
        language: str,
        metric: str,
        models: Sequence[str] | None,
        seeds: Sequence[int] | None,
        config_hash: str | None,
        configs: Mapping[str, str] | None,
    ) -> pd.DataFrame:
        """The runs of :meth:`matrix`, in its order, checked: some match, every requested
        model has one, and all share one statistic layout and metric configuration."""
        runs = self._store.runs.frame(
            models=models,
            datasets=[dataset],
            tasks=[task],
            languages=[language],
            metrics=[metric],
            seeds=seeds,
        )
        if config_hash is not None:
            runs = runs[runs["config_hash"] == config_hash]
        if configs is not None:
            runs = runs[in_configs(runs, configs)]
        if runs.empty:
            raise StoreError(
                f"no runs for {what} in {self.path}; 'glotbench show' lists what the store holds"
            )
        if models is not None:
            present = set(runs["model"])  # once, not per model (quadratic at 5,000 models)
            absent = [m for m in models if m not in present]
            if absent:
                raise StoreError(f"no runs of model(s) {', '.join(map(repr, absent))} for {what}")
            order = {m: i for i, m in enumerate(models)}
            runs = runs.assign(_order=runs["model"].map(order)).sort_values(
                ["_order", "seed", "config_hash"], na_position="first", kind="stable"
            )
        runs = runs.reset_index(drop=True)
        layouts = runs["stat_names"].drop_duplicates().tolist()
        if len(layouts) > 1:
            raise StoreError(
                f"runs for {what} have different statistics "
                f"({' vs '.join(map(str, layouts[:2]))}); "
                "re-import them with the same label set (labels=LABELS) so they can be compared"
            )
        metric_configs = {json.dumps(c, sort_keys=True) for c in runs["metric_config"]}
        if len(metric_configs) > 1:
            raise StoreError(
                f"runs for {what} were scored with different metric configurations "
                f"({', '.join(sorted(metric_configs))})"
            )
        return runs


def _aligned_matrix(
    con: Any, runs: pd.DataFrame, k: int, what: str
) -> tuple[np.ndarray, np.ndarray]:
    """Example ids (the first run's order) and the (m × n × k) statistics, run by run, each
    run's rows put in the first run's order; runs that cover other examples are an error."""
    run_ids = runs["run_id"].tolist()
    table, sizes = _example_rows(con, run_ids)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    all_ids = table.column("example_id").to_numpy(zero_copy_only=False).astype(object)
    flat = _stats_from_list(table.column("stats"), table.num_rows, k)
    reference_ids: np.ndarray | None = None
    reference_index: pd.Index | None = None
    blocks: list[np.ndarray] = []
    for i in range(len(run_ids)):
        lo = int(starts[i])
        hi = lo + int(sizes[i])
        ids = all_ids[lo:hi]
        block = flat[lo:hi]
        if reference_index is None:
            reference_ids = ids
            reference_index = pd.Index(ids)
            blocks.append(block)
            continue
        if ids.size == reference_index.size and np.array_equal(ids, reference_index):
            blocks.append(block)  # same examples in the same order: nothing to align
            continue
        idx = reference_index.get_indexer(pd.Index(ids))
        if ids.size != reference_index.size or (idx < 0).any():
            missing = reference_index.difference(pd.Index(ids))
            extra = pd.Index(ids).difference(reference_index)
            first = runs.iloc[0]
            this = runs.iloc[i]
            raise StoreError(
                f"runs for {what} cover different examples: model {this['model']!r} "
                f"(seed {this['seed']}) lacks {len(missing)} example id(s) that model "
                f"{first['model']!r} (seed {first['seed']}) has"
                + (f", e.g. {list(missing[:3])}" if len(missing) else "")
                + f", and has {len(extra)} it lacks"
                + (f", e.g. {list(extra[:3])}" if len(extra) else "")
                + "; paired analyses need the same test examples for every model"
            )
        aligned = np.empty_like(block)
        aligned[idx] = block
        blocks.append(aligned)
    assert reference_ids is not None
    return reference_ids, np.stack(blocks)


def in_configs(runs: pd.DataFrame, configs: Mapping[str, str]) -> pd.Series:
    """Rows (runs or scores) of the configuration ``configs`` names for their model.

    ``configs`` maps model -> config hash; models it does not name keep every
    configuration.
    """
    wanted = runs["model"].map(dict(configs)).fillna(runs["config_hash"])
    return runs["config_hash"] == wanted
