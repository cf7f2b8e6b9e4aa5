"""Validate a per-example tidy file before anything is stored.

One example of one run per record: required ``model, task, language, seed,
example_id, metric``; optional ``dataset, config_hash``; plus either the
metric's statistic columns (``metric.stat_names()``, e.g. ``value, count`` or
``tp[POS], pred[POS], true[POS], ...``) or, for metrics that are a mean of one
per-example value, a single ``score`` column; and optionally
``source_position`` (alias ``position``): the example's index in its source
data, for every record of a run or for none (``docs/formats.md``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from glotbench.errors import UnknownMetricError
from glotbench.ingest.column_checks import (
    Numbers,
    Problems,
    check_duplicates,
    first_true,
    int_column,
    known_metric_list,
    lookup_metric,
    parse_column,
    report_numbers,
    require_columns,
    resolve_columns,
    text_column,
)
from glotbench.ingest.readers import TidyTable
from glotbench.metrics.base import Metric
from glotbench.metrics.constraints import score_range_text
from glotbench.store.schema import RunRecord, normalise_metric_name

EXAMPLE_REQUIRED: tuple[str, ...] = ("model", "task", "language", "seed", "example_id", "metric")
EXAMPLE_OPTIONAL: tuple[str, ...] = ("dataset", "config_hash", "score")
#: optional column names of an example's index in its source data (the first is canonical)
SOURCE_POSITION_COLUMNS: tuple[str, ...] = ("source_position", "position")


# ---------------------------------------------------------------------------
# examples
# ---------------------------------------------------------------------------


@dataclass
class ValidatedRun:
    """One run of an examples file: record, example ids and (n × k) statistics."""

    record: RunRecord
    example_ids: np.ndarray  # object array of str, in file order
    stats: np.ndarray  # float64 (n, k)
    positions: np.ndarray  # record positions in the file
    source_positions: np.ndarray | None = None  # int64 (n,): index in the source data

    @property
    def first_position(self) -> int:
        return int(self.positions[0])


@dataclass
class ExamplesData:
    table: TidyTable
    runs: list[ValidatedRun]
    #: columns that are neither key columns nor statistics of any metric
    ignored_columns: list[str]


@dataclass
class _MetricPlan:
    metric: Metric
    stat_names: tuple[str, ...]
    columns: tuple[str, ...] | None  # statistic columns, or None: use 'score'


def _split_labels(labels: Sequence[str] | None) -> list[str] | None:
    if not labels:
        return None
    out: list[str] = []
    for item in labels:
        out.extend(part.strip() for part in str(item).split(",") if part.strip())
    return out or None


def _plan_metric(
    table: TidyTable,
    name: str,
    first: int,
    score_column: str | None,
    labels: list[str] | None,
) -> _MetricPlan:
    columns = [c.strip() for c in table.columns]
    header_pos = None if table.kind != "jsonl" else first
    needs_labels = False
    try:
        metric = lookup_metric(name)
        stat_names = tuple(metric.stat_names())
    except UnknownMetricError:
        raise table.error(
            f"unknown metric {name!r}; known metrics: {known_metric_list()}", first, "metric"
        ) from None
    except (ValueError, TypeError):
        needs_labels = True
    if needs_labels:
        # the metric needs a label set: from --labels or from the column names
        if labels is None:
            try:
                probe = lookup_metric(name, labels=["\x00"]).stat_names()
            except Exception:  # noqa: BLE001 - any failure means: cannot configure it here
                raise table.error(
                    f"metric {name!r} needs configuration that a tidy file cannot give",
                    first,
                    "metric",
                ) from None
            prefix, _, suffix = probe[0].partition("\x00")
            labels = [
                c[len(prefix) : len(c) - len(suffix)]
                for c in columns
                if c.startswith(prefix)
                and c.endswith(suffix)
                and len(c) > len(prefix) + len(suffix)
            ]
            if not labels:
                pattern = ", ".join(s.replace("\x00", "LABEL") for s in probe)
                raise table.error(
                    f"metric {name!r} needs its label set: add the statistic columns {pattern} "
                    "for every label, or pass the labels (labels=LABELS)",
                    header_pos,
                    "metric",
                )
        try:
            metric = lookup_metric(name, labels=labels)
            stat_names = tuple(metric.stat_names())
        except (TypeError, ValueError) as exc:
            raise table.error(
                f"cannot configure metric {name!r} with labels {labels}: {exc}", first, "metric"
            ) from None
    missing = [s for s in stat_names if s not in columns]
    if not missing:
        index = {c.strip(): c for c in table.columns}
        return _MetricPlan(metric, stat_names, tuple(index[s] for s in stat_names))
    if metric.is_mean and score_column is not None:
        return _MetricPlan(metric, stat_names, None)
    hint = " or one per-example 'score' column" if metric.is_mean else ""
    if table.kind == "jsonl":
        what = "fields"
    else:
        what = "columns"
    raise table.error(
        f"metric {name!r} needs the statistic {what} {', '.join(stat_names)}{hint}; "
        f"missing: {', '.join(missing)}",
        header_pos,
        missing[0],
    )


def _check_metric_stats(
    table: TidyTable,
    plan: _MetricPlan,
    idx: np.ndarray,
    matrix: np.ndarray,
    problems: Problems,
    score_column: str | None,
) -> None:
    """Report statistics that break the metric's declared constraints (counts, ranges...)."""
    n = len(table)
    for problem in plan.metric.check_stats(matrix):
        mask = np.zeros(n, dtype=bool)
        mask[idx[problem.rows]] = True
        first = problem.first
        if plan.columns is None:
            column = score_column or "score"
            lo, hi = plan.metric.score_range
            message = (
                f"score is {matrix[first, 0]:.10g}; a per-example {plan.metric.name} lies in "
                f"{score_range_text(lo, hi)}"
            )
        else:
            column = plan.columns[plan.stat_names.index(problem.column)]
            message = problem.message(matrix[first])
        problems.add(int(idx[first]), column, message, problem.count)


def validate_examples(table: TidyTable, *, labels: Sequence[str] | None = None) -> ExamplesData:
    """Validate a per-example statistics table and group its records into runs."""
    label_list = _split_labels(labels)
    cols = resolve_columns(
        table, set(EXAMPLE_REQUIRED) | set(EXAMPLE_OPTIONAL) | set(SOURCE_POSITION_COLUMNS)
    )
    require_columns(table, cols, EXAMPLE_REQUIRED)
    source_label = _source_position_label(table, cols)
    source_col = cols[source_label] if source_label is not None else None
    problems = Problems(table)
    keys = _key_columns(table, cols, problems)
    source_pos = (
        int_column(table, source_col, problems, label=source_label, required=False, minimum=0)
        if source_col is not None and source_label is not None
        else None
    )
    problems.raise_first()

    # normalise each distinct name once (a per-record Python call costs ~1 s per million rows)
    names = {m: normalise_metric_name(m) for m in pd.unique(keys["metric"].to_numpy(dtype=object))}
    keys["metric"] = keys["metric"].map(names)
    used_columns: set[str] = set(cols.values())
    stats_by_metric = _metric_statistics(
        table, keys["metric"].to_numpy(dtype=object), cols, label_list, problems, used_columns
    )
    problems.raise_first()
    for plan, idx, matrix in stats_by_metric.values():
        _check_metric_stats(table, plan, idx, matrix, problems, cols.get("score"))
    problems.raise_first()

    def describe(p: int) -> str:
        row = keys.iloc[p]
        return ", ".join(f"{k}={row[k]!r}" if k != "seed" else f"seed={row[k]}" for k in keys)

    check_duplicates(table, keys, problems, describe, cols["example_id"])
    problems.raise_first()
    runs = _group_runs(table, keys, stats_by_metric, source_pos, source_col)
    ignored = [c for c in table.columns if c not in used_columns]
    return ExamplesData(table=table, runs=runs, ignored_columns=ignored)


def _source_position_label(table: TidyTable, cols: dict[str, str]) -> str | None:
    """The canonical name of the source-position column the table has (None: none); two
    such columns are an error."""
    given = [c for c in SOURCE_POSITION_COLUMNS if c in cols]
    if len(given) > 1:
        raise table.error(
            f"columns {cols[given[0]]!r} and {cols[given[1]]!r} both give the source position; "
            "keep one",
            None,
            cols[given[1]],
        )
    return given[0] if given else None


def _key_columns(table: TidyTable, cols: dict[str, str], problems: Problems) -> pd.DataFrame:
    """The key columns of every record, checked (problems go to ``problems``): model,
    dataset (default: the task), task, language, seed (empty: none), config_hash (default:
    empty), metric (as written) and example_id."""
    n = len(table)
    model = text_column(table, cols["model"], problems, label="model", required=True, name=True)
    task = text_column(table, cols["task"], problems, label="task", required=True, name=True)
    language = text_column(
        table, cols["language"], problems, label="language", required=True, name=True
    )
    metric = text_column(table, cols["metric"], problems, label="metric", required=True, name=True)
    example_id = text_column(
        table, cols["example_id"], problems, label="example_id", required=True, allow_int=True
    )
    if "dataset" in cols:
        dataset = text_column(
            table, cols["dataset"], problems, label="dataset", required=False, name=True
        )
        dataset = dataset.where(dataset.notna(), task)
    else:
        dataset = task.copy()
    if "config_hash" in cols:
        config_hash = text_column(
            table, cols["config_hash"], problems, label="config_hash", required=False
        ).fillna("")
    else:
        config_hash = pd.Series([""] * n, dtype=object)
    # the seed column is required; an empty seed means "no seed" (a deterministic run)
    seed = int_column(table, cols["seed"], problems, label="seed", required=False)
    return pd.DataFrame(
        {
            "model": model,
            "dataset": dataset,
            "task": task,
            "language": language,
            "seed": seed,
            "config_hash": config_hash,
            "metric": metric,
            "example_id": example_id,
        }
    )


MetricStatistics = dict[str, tuple[_MetricPlan, np.ndarray, np.ndarray]]


def _metric_statistics(
    table: TidyTable,
    metric_arr: np.ndarray,
    cols: dict[str, str],
    label_list: list[str] | None,
    problems: Problems,
    used_columns: set[str],
) -> MetricStatistics:
    """Per metric: its plan, its rows and their statistics matrix (its statistic columns, or
    the score and a count of 1); the columns read are added to ``used_columns``."""
    stats_by_metric: MetricStatistics = {}
    parsed_cache: dict[str, Numbers] = {}
    for name in pd.unique(metric_arr):
        rows = metric_arr == name
        plan = _plan_metric(table, name, first_true(rows), cols.get("score"), label_list)
        source = plan.columns if plan.columns is not None else (cols["score"],)
        used_columns.update(source)
        values = []
        for col in source:
            if col not in parsed_cache:
                parsed_cache[col] = parse_column(table, col)
            parsed = parsed_cache[col]
            report_numbers(table, col, parsed, problems, label=col, required=True, rows=rows)
            values.append(parsed.values)
        idx = np.flatnonzero(rows)
        if plan.columns is None:
            matrix = np.column_stack([values[0][idx], np.ones(idx.size)])
        else:
            matrix = np.column_stack([v[idx] for v in values])
        stats_by_metric[name] = (plan, idx, matrix)
    return stats_by_metric


def _group_runs(
    table: TidyTable,
    keys: pd.DataFrame,
    stats_by_metric: MetricStatistics,
    source_pos: pd.Series | None,
    source_col: str | None,
) -> list[ValidatedRun]:
    """The records grouped into runs (one per key but the example id), in file order."""
    # row -> (metric's row index) so each run can take its statistics rows
    row_in_metric = np.empty(len(table), dtype=np.int64)
    for _plan, idx, _matrix in stats_by_metric.values():
        row_in_metric[idx] = np.arange(idx.size)

    run_cols = ["model", "dataset", "task", "language", "seed", "config_hash", "metric"]
    groups = keys.groupby(run_cols, sort=False, dropna=False).indices
    source_name = str(table.path)
    ids = keys["example_id"].to_numpy(dtype=object)
    runs: list[ValidatedRun] = []
    for key, positions in groups.items():
        positions = np.sort(np.asarray(positions, dtype=np.int64))
        m, d, t, lang, s, cfg, met = key
        plan, _idx, matrix = stats_by_metric[met]
        record = RunRecord(
            model=m,
            dataset=d,
            task=t,
            language=lang,
            seed=None if pd.isna(s) else int(s),
            config_hash=cfg,
            metric=met,
            metric_config=plan.metric.config(),
            stat_names=plan.stat_names,
            n_examples=int(positions.size),
            source=source_name,
        )
        runs.append(
            ValidatedRun(
                record=record,
                example_ids=ids[positions],
                stats=np.ascontiguousarray(matrix[row_in_metric[positions]]),
                positions=positions,
                source_positions=_run_source_positions(
                    table, source_pos, source_col, positions, record.describe()
                ),
            )
        )
    runs.sort(key=lambda r: r.first_position)
    return runs


def _run_source_positions(
    table: TidyTable,
    source: pd.Series | None,
    column: str | None,
    positions: np.ndarray,
    run: str,
) -> np.ndarray | None:
    """A run's source positions: all given and unique, or none (None)."""
    if source is None or column is None:
        return None
    values = source.iloc[positions]
    missing = values.isna().to_numpy()
    if missing.all():
        return None
    if missing.any():
        p = int(positions[np.flatnonzero(missing)[0]])
        raise table.error(
            f"{column} is empty here but given for other examples of this run ({run}); "
            "give it for every example of a run or for none",
            p,
            column,
        )
    out = values.to_numpy(dtype=np.int64)
    dup = pd.Series(out).duplicated().to_numpy()
    if dup.any():
        p = int(positions[np.flatnonzero(dup)[0]])
        raise table.error(
            f"{column} {int(out[np.flatnonzero(dup)[0]])} occurs twice in this run ({run}); "
            "each example has its own position in the source data",
            p,
            column,
        )
    return out
