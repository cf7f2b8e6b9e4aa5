"""Import reuben's input files (Sälevä, Ataman & Lignos's toolkit, github.com/j0ma/reuben).

reuben reads one table (JSONL, CSV or TSV) whose column names its YAML config
declares (``reuben/config.py``, ``reuben/utils.py:grab_data_and_preprocess``):

* identifiers: ``score_col`` (default ``Mean``), ``model_col`` (``Model``),
  ``task_col`` (``Task``) — reuben's *task* is the unit scores are averaged
  over: a language (XQuAD), a language pair (FLORES) or a dataset (NER);
* a **summary file** gives one row per model and task with ready standard
  deviations: ``seed_sd_col`` and ``boot_sd_col`` (σ_seed and σ_boot; reuben
  adds them as σ_w = √(σ_seed² + σ_boot²)), or ``replication_sd_col`` alone
  (the whole within-task SD);
* a **replication file** gives one row per model, task, seed and bootstrap
  replicate: ``seed_idx_col`` / ``boot_idx_col`` (or ``replication_idx_col``).

A summary file may hold several metrics per row, as the paper's FLORES file
(``bleu_mean, bleu_seed_sd, bleu_boot_sd, chrf_mean, …``): every column that
ends like ``score_col`` and has SD columns named like the declared ones is a
metric too (:func:`metric_columns`).

What is stored (scores table): per model, task and metric a score with
``stderr`` = σ_w and ``metadata`` holding ``sigma_seed``/``sigma_boot`` (or
``sigma_w``) — read back as a
:class:`~glotbench.analysis.variance.ComponentTable` by
:func:`glotbench.analysis.sources.inputs.load_replicated`, so ``analyze variance /
aggregate / compare / ranks --scheme parametric`` run on it as reuben's
parametric replication does; replication rows become scores with ``seed`` and
``replicate`` (the non-parametric scheme). reuben's task becomes glotbench's
``language`` (the unit of analysis); glotbench's ``task`` is ``--task``.

Validation: every score must lie on its metric's scale, every SD must be finite,
non-negative and at most half the scale's width (the largest SD values in
[lo, hi] can have); a value that fails is refused with file, line and field,
and nothing is stored. Analysis settings of the config (resampling counts,
``fix_outliers``, ``standardized``) are recorded, not applied: they belong to
the analysis, not the data (docs/importers/reuben.md).
"""

from __future__ import annotations

import csv
import math
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from glotbench.errors import InputError
from glotbench.importers.common import HarnessImportResult, ScoreRow
from glotbench.importers.json_files import files_sha256, iter_jsonl
from glotbench.importers.writer import write_import
from glotbench.ingest.limits import MAX_FIELD_CHARS, text_lines
from glotbench.ingest.score_validation import metric_score_range
from glotbench.store.store import Store

#: config keys reuben declares (reuben/config.py ConfigModel); others are refused
CONFIG_KEYS: frozenset[str] = frozenset(
    {
        "score_col", "model_col", "task_col",
        "replication_sd_col", "seed_sd_col", "boot_sd_col",
        "replication_idx_col", "seed_idx_col", "boot_idx_col",
        "task_resampling_method", "task_resampling_with_replacement",
        "task_resampling_num_tasks", "replication_resampling_method",
        "num_bootstrap_resamples", "standardized", "rounding", "fix_outliers",
        "output_format", "output_path", "pickle_output_folder",
    }
)  # fmt: skip

_COLUMN_KEYS = (
    "score_col", "model_col", "task_col", "replication_sd_col", "seed_sd_col",
    "boot_sd_col", "replication_idx_col", "seed_idx_col", "boot_idx_col",
)  # fmt: skip

#: the typed config keys: (keys, whether a value is valid, what a valid value must be)
_TYPED_KEYS: tuple[tuple[Sequence[str], Callable[[Any], bool], str], ...] = (
    (
        _COLUMN_KEYS,
        lambda v: isinstance(v, str) and bool(v.strip()),
        "name a column (a non-empty string)",
    ),
    (
        ("num_bootstrap_resamples", "task_resampling_num_tasks"),
        lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
        "be a non-negative integer",
    ),
    (
        ("task_resampling_method", "replication_resampling_method"),
        lambda v: v in ("none", "parametric", "nonparametric"),
        "be none, parametric or nonparametric",
    ),
    (
        ("task_resampling_with_replacement", "fix_outliers", "standardized"),
        lambda v: isinstance(v, bool),
        "be true or false",
    ),
)


@dataclass(frozen=True)
class ReubenConfig:
    """The column names and resampling settings of a reuben YAML config (its defaults)."""

    score_col: str = "Mean"
    model_col: str = "Model"
    task_col: str = "Task"
    replication_sd_col: str | None = None
    seed_sd_col: str | None = None
    boot_sd_col: str | None = None
    replication_idx_col: str | None = None
    seed_idx_col: str | None = None
    boot_idx_col: str | None = None
    num_bootstrap_resamples: int = 0
    task_resampling_method: str = "none"
    task_resampling_with_replacement: bool = False
    task_resampling_num_tasks: int | None = None
    replication_resampling_method: str = "none"
    fix_outliers: bool = False
    standardized: bool = False
    source: str = "defaults"

    @property
    def is_replication_file(self) -> bool:
        """Index columns declared: one row per seed / bootstrap replicate (reuben's rule)."""
        return any(
            c is not None for c in (self.seed_idx_col, self.boot_idx_col, self.replication_idx_col)
        )

    @classmethod
    def from_yaml(cls, path: str | Path) -> ReubenConfig:
        """Read a reuben config; unknown keys and wrong types are InputErrors naming the key."""
        from glotbench.ingest.yaml_files import load_yaml

        file = Path(path)
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read the config: {exc}", path=str(file)) from None
        data = load_yaml(text, str(file))  # a key given twice is refused, not the last kept
        data = {} if data is None else data
        if not isinstance(data, dict):
            raise InputError("a reuben config must be a mapping of keys", path=str(file))
        return cls.from_mapping(data, source=str(file))

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str = "mapping") -> ReubenConfig:
        unknown = sorted(set(map(str, data)) - CONFIG_KEYS)
        if unknown:
            raise InputError(
                f"unknown reuben config key(s) {', '.join(unknown)}; reuben knows "
                f"{', '.join(sorted(CONFIG_KEYS))}",
                path=source,
                field=unknown[0],
            )
        values: dict[str, Any] = {}
        for keys, valid, what in _TYPED_KEYS:
            for key in keys:
                if data.get(key) is not None:
                    if not valid(data[key]):
                        raise InputError(
                            f"{key} must {what}, got {data[key]!r}", path=source, field=key
                        )
                    values[key] = data[key]
        config = cls(**values, source=source)
        if not config.is_replication_file and not (
            config.replication_sd_col or (config.seed_sd_col and config.boot_sd_col)
        ):
            raise InputError(
                "the config declares neither SD columns (seed_sd_col and boot_sd_col, or "
                "replication_sd_col) nor index columns (seed_idx_col / boot_idx_col / "
                "replication_idx_col); reuben needs one of them",
                path=source,
            )
        return config


@dataclass(frozen=True)
class MetricColumns:
    """The columns of one metric in a summary file and the glotbench metric they go to."""

    metric: str
    score: str
    seed_sd: str | None = None
    boot_sd: str | None = None
    replication_sd: str | None = None


@dataclass(frozen=True)
class MetricSpec:
    """A glotbench metric for a reuben score column; ``scale`` is its declared range."""

    name: str
    scale: tuple[float, float] | None


def parse_metric_specs(entries: Sequence[str] | None) -> dict[str, MetricSpec]:
    """``COLUMN=NAME`` or ``COLUMN=NAME:LO:HI`` (scale of a metric glotbench does not know)."""
    out: dict[str, MetricSpec] = {}
    for entry in entries or ():
        column, sep, value = str(entry).partition("=")
        parts = value.split(":")
        if not sep or not column.strip() or not parts[0].strip() or len(parts) not in (1, 3):
            raise InputError(
                f"a metric mapping must look like COLUMN=NAME or COLUMN=NAME:LO:HI, got {entry!r}",
                field="metric",
            )
        scale = None
        if len(parts) == 3:
            try:
                lo, hi = float(parts[1]), float(parts[2])
            except ValueError:
                raise InputError(
                    f"the scale in {entry!r} must be two numbers LO:HI", field="metric"
                ) from None
            if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
                raise InputError(f"the scale in {entry!r} needs LO < HI", field="metric")
            scale = (lo, hi)
        out[column.strip()] = MetricSpec(parts[0].strip().lower(), scale)
    return out


def _affixes(score: str, other: str) -> tuple[str, str] | None:
    """(prefix shared by score and other, score's suffix after it) when they share a prefix."""
    n = 0
    while n < min(len(score), len(other)) and score[n] == other[n]:
        n += 1
    if n == 0:
        return None
    return score[:n], score[n:]


def metric_columns(
    columns: Sequence[str], config: ReubenConfig
) -> list[tuple[str, dict[str, str | None]]]:
    """(base name, {score, seed_sd, boot_sd, replication_sd} columns) of each metric in a file.

    The declared score column is always one. When the declared SD columns share
    a prefix with it (``bleu_mean`` / ``bleu_seed_sd`` / ``bleu_boot_sd``: prefix
    ``bleu_``), every other prefix with the same three suffixes present is
    another metric (``chrf_…``, ``comet_…``), as in the paper's FLORES file.
    The base name is the prefix without separators (``bleu``), else the score
    column itself (``F1``).
    """
    declared = {
        "seed_sd": config.seed_sd_col,
        "boot_sd": config.boot_sd_col,
        "replication_sd": config.replication_sd_col,
    }
    sd_cols = {k: v for k, v in declared.items() if v}
    score = config.score_col
    found: list[tuple[str, dict[str, str | None]]] = []
    affix = None
    if sd_cols:
        pieces = [_affixes(score, v) for v in sd_cols.values()]
        prefixes = {p[0] for p in pieces if p is not None}
        if len(pieces) == len(sd_cols) and None not in pieces and len(prefixes) == 1:
            prefix = prefixes.pop()
            affix = (
                prefix,
                score[len(prefix) :],
                {k: v[len(prefix) :] for k, v in sd_cols.items()},
            )
    if affix is None:
        found.append((score, {"score": score, **declared}))
        return found
    prefix, score_suffix, sd_suffixes = affix
    base = prefix.rstrip("_-. ") or score
    found.append((base, {"score": score, **declared}))
    for column in columns:
        if column == score or not column.endswith(score_suffix) or not score_suffix:
            continue
        other = column[: len(column) - len(score_suffix)]
        named = {k: other + s for k, s in sd_suffixes.items()}
        if all(n in columns for n in named.values()):
            cols: dict[str, str | None] = {"score": column, **dict.fromkeys(declared)}
            cols.update(named)
            found.append((other.rstrip("_-. ") or column, cols))
    return found


# ---------------------------------------------------------------------------
# reading the table
# ---------------------------------------------------------------------------


def _iter_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, record) of a JSONL / JSON-lines, CSV or TSV file (reuben's formats)."""
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".json", ".ndjson"):
        yield from iter_jsonl(path)
        return
    if suffix not in (".csv", ".tsv"):
        raise InputError(
            "reuben reads .jsonl/.json, .csv or .tsv files; rename the file or convert it",
            path=str(path),
        )
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            # line by line: an over-long line is refused while read (ingest/limits.py)
            lines = text_lines(fh, str(path))
            reader = csv.DictReader(lines, delimiter="\t" if suffix == ".tsv" else ",")
            for record in reader:
                if None in record:
                    raise InputError(
                        "the row has more fields than the header",
                        path=str(path),
                        line=reader.line_num,
                    )
                if any(len(v) > MAX_FIELD_CHARS for v in record.values() if isinstance(v, str)):
                    raise InputError(
                        f"a field has more than {MAX_FIELD_CHARS:,} characters (see "
                        "docs/formats.md, 'Limits')",
                        path=str(path),
                        line=reader.line_num,
                    )
                yield reader.line_num, dict(record)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise InputError(f"cannot read the file: {exc}", path=str(path)) from None


def _number(value: Any, text: bool = False) -> float | None:
    """A finite float from a JSON number (or, ``text``, a CSV field); None for anything else."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(float(value)) else None
    if text and isinstance(value, str):
        try:
            out = float(value.strip())
        except ValueError:
            return None
        return out if math.isfinite(out) else None
    return None


def _index(value: Any) -> int | None:
    """A non-negative integer index (JSON integer, integral float or CSV digits)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        return int(text) if text.isdigit() else None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    return None


@dataclass
class ReubenRows:
    """Validated rows of a reuben file, ready to store or analyse.

    ``frame``: one row per model, language (reuben's task) and metric with
    ``score`` and, for a summary file, ``sigma_seed`` / ``sigma_boot`` /
    ``sigma_w``; for a replication file ``seed`` and ``replicate`` columns.
    Scores and SDs are on the store's scale (``percent`` divided 0–1 metrics by 100).
    """

    path: Path
    config: ReubenConfig
    task: str
    frame: pd.DataFrame
    lines: list[int]
    metrics: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def summary_frame(self, metric: str | None = None) -> pd.DataFrame:
        """The columns :func:`glotbench.analysis.variance.components_from_summary` reads."""
        frame = self.frame if metric is None else self.frame[self.frame["metric"] == metric]
        wanted = ("model", "task", "language", "metric", "score", "sigma_seed", "sigma_boot",
                  "sigma_w")  # fmt: skip
        keep = [c for c in wanted if c in frame.columns]
        return frame[keep].reset_index(drop=True)


def _resolve_metric(
    base: str, column: str, specs: Mapping[str, MetricSpec], allow_unknown: bool, path: Path
) -> MetricSpec:
    spec = specs.get(column) or specs.get(base)
    if spec is not None and spec.scale is not None:
        return spec
    name = spec.name if spec is not None else base.strip().lower()
    scale = metric_score_range(name)
    if scale is None and not allow_unknown:
        raise InputError(
            f"score column {column!r} names no glotbench metric ({name!r} is unknown); map it "
            f"with metrics='{column}=NAME' (e.g. squad_f1, bleu, chrf) or declare its scale "
            f"with metrics='{column}=NAME:LO:HI'",
            path=str(path),
            field=column,
        )
    return MetricSpec(name, scale)


def read_reuben(
    path: str | Path,
    config: ReubenConfig | None = None,
    *,
    task: str = "reuben",
    metrics: Mapping[str, MetricSpec] | Sequence[str] | None = None,
    percent: bool = False,
    allow_unknown_metrics: bool = False,
) -> ReubenRows:
    """Read and validate a reuben summary or replication file (nothing is stored).

    ``metrics`` maps score columns (or their base names, ``bleu``) to glotbench
    metrics (:func:`parse_metric_specs`); ``percent``: the file reports 0–1
    metrics in percent (reuben's files do), so their scores and SDs are divided
    by 100. Raises :class:`InputError` naming file, line and field for the
    first problem.
    """
    file = Path(path)
    if not file.is_file():
        raise InputError("no such file", path=str(file))
    config = config or ReubenConfig()
    specs = (
        dict(metrics) if isinstance(metrics, Mapping) else parse_metric_specs(metrics)  # type: ignore[arg-type]
    )
    rows = list(_iter_rows(file))
    from_text = file.suffix.lower() in (".csv", ".tsv")
    if not rows:
        raise InputError("the file holds no rows", path=str(file))
    layout = _check_columns(rows, config, file)
    resolved = {
        base: _resolve_metric(base, cols["score"], specs, allow_unknown_metrics, file)  # type: ignore[index]
        for base, cols in layout
    }
    out: list[dict[str, Any]] = []
    lines: list[int] = []
    for line, record in rows:
        ids = _row_ids(record, config, file, line)
        indices = _row_indices(record, config, file, line) if config.is_replication_file else {}
        for base, cols in layout:
            spec = resolved[base]
            divide = percent and spec.scale is not None and spec.scale[1] == 1.0
            entry: dict[str, Any] = {**ids, "task": task, "metric": spec.name, **indices}
            entry |= _row_values(record, cols, spec, divide, from_text, file, line)
            out.append(entry)
            lines.append(line)
    frame = pd.DataFrame(out)
    _check_unique(frame, lines, config, file)
    notes = []
    if config.fix_outliers:
        notes.append(
            "the config sets fix_outliers: reuben winsorises the SD columns (IQR rule, 3.5 × IQR, "
            "replaced by the median) before resampling; glotbench stores the SDs as given"
        )
    if config.standardized:
        notes.append("the config sets standardized: reuben z-scores per task; stored as given")
    return ReubenRows(
        path=file,
        config=config,
        task=task,
        frame=frame,
        lines=lines,
        metrics={base: spec.name for base, spec in resolved.items()},
        notes=notes,
    )


def _check_columns(
    rows: list[tuple[int, dict[str, Any]]], config: ReubenConfig, file: Path
) -> list[tuple[str, dict[str, Any]]]:
    """The file's metric columns (:func:`metric_columns`); every row has the config's columns."""
    columns = list(rows[0][1])
    needed = [config.model_col, config.task_col, config.score_col]
    if config.is_replication_file:
        needed += [c for c in (config.seed_idx_col, config.boot_idx_col,
                               config.replication_idx_col) if c]  # fmt: skip
        layout = [(config.score_col, {"score": config.score_col})]
    else:
        needed += [c for c in (config.seed_sd_col, config.boot_sd_col,
                               config.replication_sd_col) if c]  # fmt: skip
        layout = metric_columns(columns, config)  # type: ignore[assignment]
    for line, record in rows:
        for column in dict.fromkeys(needed):
            if column not in record:
                raise InputError(
                    f"column {column!r} declared by the config ({config.source}) is missing; "
                    f"the row has {', '.join(map(repr, record))}",
                    path=str(file),
                    line=line,
                    field=column,
                )
    return layout


def _row_ids(record: dict[str, Any], config: ReubenConfig, file: Path, line: int) -> dict[str, str]:
    """A row's model and language (reuben's task column), as non-empty text."""
    ids: dict[str, str] = {}
    for key, column in (("model", config.model_col), ("language", config.task_col)):
        value = record[column]
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str) or not value.strip():
            raise InputError(
                f"the {key} must be a non-empty text, got {value!r}",
                path=str(file),
                line=line,
                field=column,
            )
        ids[key] = value.strip()
    return ids


def _row_indices(
    record: dict[str, Any], config: ReubenConfig, file: Path, line: int
) -> dict[str, int | None]:
    """A replication file's row: its seed and bootstrap (replicate) indices."""
    indices: dict[str, int | None] = {}
    seed_col = config.seed_idx_col
    boot_col = config.boot_idx_col or (
        config.replication_idx_col if config.replication_idx_col != seed_col else None
    )
    for key, index_column in (("seed", seed_col), ("replicate", boot_col)):
        if index_column is None:
            indices[key] = None
            continue
        index = _index(record[index_column])
        if index is None:
            raise InputError(
                f"the {key} index must be a non-negative integer, got {record[index_column]!r}",
                path=str(file),
                line=line,
                field=index_column,
            )
        indices[key] = index
    return indices


#: a metric's columns in reuben's files -> their names in glotbench's scores
_TARGETS = {"score": "score", "seed_sd": "sigma_seed", "boot_sd": "sigma_boot",
            "replication_sd": "sigma_w"}  # fmt: skip


def _row_values(
    record: dict[str, Any],
    cols: dict[str, Any],
    spec: MetricSpec,
    divide: bool,
    from_text: bool,
    file: Path,
    line: int,
) -> dict[str, float]:
    """A row's score and SDs of one metric (``cols``), / 100 when ``divide``, checked."""
    factor = 100.0 if divide else 1.0
    values: dict[str, float] = {}
    for key, target in _TARGETS.items():
        found = cols.get(key)
        if not found:
            continue
        column = str(found)
        value = _number(record.get(column), text=from_text)
        if value is None:
            raise InputError(
                f"{'the score' if key == 'score' else 'a standard deviation'} must be a "
                f"finite number, got {record.get(column)!r}",
                path=str(file),
                line=line,
                field=column,
            )
        value /= factor
        _check_value(key, value, spec, factor, file, line, column)
        values[target] = value
    return values


def _check_unique(frame: pd.DataFrame, lines: list[int], config: ReubenConfig, file: Path) -> None:
    """One row per model, language, metric (and seed and replicate); else an error."""
    unique_by = ["model", "language", "metric"] + (
        ["seed", "replicate"] if config.is_replication_file else []
    )
    dup = frame.duplicated([k for k in unique_by if k in frame], keep=False)
    if dup.any():
        second = [i for i in range(len(frame)) if dup.iloc[i]][1]
        row = frame.iloc[second]
        raise InputError(
            f"model {row['model']!r} and {config.task_col} {row['language']!r} repeat an earlier "
            "row"
            + (" with the same seed and bootstrap index" if config.is_replication_file else ""),
            path=str(file),
            line=lines[second],
            field=config.task_col,
        )


def _check_value(
    key: str, value: float, spec: MetricSpec, factor: float, file: Path, line: int, column: str
) -> None:
    """Scores inside the metric's scale; SDs in [0, (hi − lo) / 2]."""
    if spec.scale is None:
        if key != "score" and value < 0:
            raise InputError(
                f"a standard deviation cannot be negative, got {value * factor:g}",
                path=str(file), line=line, field=column,
            )  # fmt: skip
        return
    lo, hi = spec.scale
    shown = f"{value * factor:.10g}"
    unit = " (after dividing by 100 for percent=True)" if factor != 1.0 else ""
    if key == "score" and not lo <= value <= hi:
        hint = ""
        if factor == 1.0 and hi == 1.0 and lo <= value <= 100.0:
            hint = "; the file reports percentages: pass percent=True"
        raise InputError(
            f"score {shown}{unit} is outside the scale {lo:g}–{hi:g} of metric {spec.name!r}{hint}",
            path=str(file), line=line, field=column,
        )  # fmt: skip
    if key != "score" and not 0.0 <= value <= (hi - lo) / 2:
        raise InputError(
            f"standard deviation {shown}{unit} cannot be on metric {spec.name!r}'s scale "
            f"{lo:g}–{hi:g}: an SD lies between 0 and half the scale's width ({(hi - lo) / 2:g})",
            path=str(file), line=line, field=column,
        )  # fmt: skip


# ---------------------------------------------------------------------------
# storing
# ---------------------------------------------------------------------------


def score_rows(rows: ReubenRows) -> list[ScoreRow]:
    """Store rows: summary scores carry σ_w as stderr and the components in metadata."""
    out: list[ScoreRow] = []
    meta_base = {"source": "reuben", "reuben_task_col": rows.config.task_col}
    for (_, row), line in zip(rows.frame.iterrows(), rows.lines, strict=True):
        metadata: dict[str, Any] = dict(meta_base)
        stderr = None
        for name in ("sigma_seed", "sigma_boot", "sigma_w"):
            if name in row and not pd.isna(row[name]):
                metadata[name] = float(row[name])
        if "sigma_seed" in metadata or "sigma_boot" in metadata:
            stderr = math.hypot(metadata.get("sigma_seed", 0.0), metadata.get("sigma_boot", 0.0))
        elif "sigma_w" in metadata:
            stderr = metadata["sigma_w"]
        seed = row.get("seed")
        replicate = row.get("replicate")
        out.append(
            ScoreRow(
                model=row["model"],
                task=rows.task,
                language=row["language"],
                dataset=rows.task,
                metric=row["metric"],
                score=float(row["score"]),
                seed=None if seed is None or pd.isna(seed) else int(seed),
                replicate=None if replicate is None or pd.isna(replicate) else int(replicate),
                stderr=stderr,
                metadata=metadata,
                path=str(rows.path),
                line=line,
            )
        )
    return out


def import_reuben(
    store: Store,
    path: str | Path,
    *,
    config: str | Path | ReubenConfig | None = None,
    task: str = "reuben",
    metrics: Sequence[str] | None = None,
    percent: bool = False,
    allow_unknown_metrics: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> HarnessImportResult:
    """Validate a reuben file and add its scores to ``store`` (see the module docstring)."""
    t0 = time.perf_counter()
    cfg = (
        config
        if isinstance(config, ReubenConfig)
        else ReubenConfig.from_yaml(config)
        if config is not None
        else ReubenConfig()
    )
    rows = read_reuben(
        path, cfg, task=task, metrics=metrics, percent=percent,
        allow_unknown_metrics=allow_unknown_metrics,
    )  # fmt: skip
    file = rows.path
    files = [file] + (
        [Path(cfg.source)] if config is not None and Path(cfg.source).is_file() else []
    )
    extra = f"reuben|task={task}|metrics={sorted(metrics or [])}|percent={percent}"
    sha = files_sha256(files, file.parent, extra=extra)
    result = write_import(
        store, kind="reuben", source=file, sha=sha, runs=[], score_rows=score_rows(rows),
        n_files=len(files), progress=progress, t0=t0,
    )  # fmt: skip
    result.notes = (
        list(result.notes)
        + rows.notes
        + [f"metrics: {', '.join(f'{k} -> {v}' for k, v in rows.metrics.items())}"]
    )
    return result
