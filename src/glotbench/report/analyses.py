"""Other analyses shown in the HTML report: evaluation size (datasize) and mixed models.

Their results come either as objects of the analysis API or as the JSON that
``glotbench analyze datasize --json`` and ``glotbench analyze lmm --json``
print. JSON is validated here (errors name the file and the field); nothing
is computed beyond the Q-Q points of :func:`glotbench.analysis.mixed.dharma.uniform_qq`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from glotbench.analysis.datasize import DataSizeResult
from glotbench.analysis.mixed.dharma import uniform_qq
from glotbench.analysis.mixed.model import LmmResult
from glotbench.errors import InputError

_DATASIZE_TABLE = ("strategy", "size", "unit", "tokens_mean", "tau_mean", "tau_q05", "tau_q95")
_RECOMMENDATION = ("strategy", "unit", "recommended_size", "full_set_needed")


def read_json(path: str | Path) -> Any:
    """A JSON document, with errors naming the file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("file not found", path=str(p)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the file ({exc})", path=str(p)) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON ({exc.msg})", path=str(p), line=exc.lineno) from None


def _frame(
    payload: Mapping[str, Any], key: str, columns: tuple[str, ...], path: str
) -> pd.DataFrame:
    rows = payload.get(key)
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise InputError("expected a list of records", path=path, field=key)
    frame = pd.DataFrame(rows)
    missing = [c for c in columns if c not in frame.columns] if rows else []
    if missing:
        raise InputError(f"records lack {', '.join(missing)}", path=path, field=key)
    return frame


def _number(payload: Mapping[str, Any], key: str, path: str, default: Any = None) -> Any:
    value = payload.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"expected a number, got {value!r}", path=path, field=key)
    return value


def datasize_from_dict(payload: Any, path: str = "<datasize>") -> DataSizeResult:
    """A :class:`DataSizeResult` from its JSON form (``DataSizeResult.to_dict``)."""
    if not isinstance(payload, dict) or payload.get("analysis") != "datasize":
        raise InputError(
            "not the JSON of a datasize analysis (write it with "
            "`glotbench analyze datasize --json > FILE.json`)",
            path=path,
        )
    table = _frame(payload, "table", _DATASIZE_TABLE, path)
    if table.empty:
        raise InputError("the datasize table is empty", path=path, field="table")
    for column in ("tokens_mean", "tau_mean", "tau_q05", "tau_q95"):
        try:
            table[column] = pd.to_numeric(table[column]).astype(float)
        except (TypeError, ValueError):
            raise InputError(f"column {column} is not numeric", path=path, field="table") from None
    level = _number(payload, "level", path)
    if level is None:
        raise InputError("missing", path=path, field="level")
    models = payload.get("models", [])
    if not isinstance(models, list):
        raise InputError("expected a list of model names", path=path, field="models")
    notes = payload.get("notes", [])
    if not isinstance(notes, list):
        raise InputError("expected a list of notes", path=path, field="notes")
    metric = payload.get("metric")
    return DataSizeResult(
        table=table,
        recommendation=_frame(payload, "recommendation", _RECOMMENDATION, path),
        level=float(level),
        models=tuple(str(m) for m in models),
        n_seeds=int(_number(payload, "n_seeds", path, 0)),
        n_examples=int(_number(payload, "n_examples", path, 0)),
        n_tokens=float(_number(payload, "n_tokens", path, math.nan)),
        n_draws=int(_number(payload, "n_draws", path, 0)),
        seed=int(_number(payload, "seed", path, 0)),
        metric=None if metric is None else str(metric),
        token_unit=str(payload.get("token_unit") or "tokens"),
        full_scores=_frame(payload, "full_scores", (), path)
        if "full_scores" in payload
        else pd.DataFrame(),
        notes=tuple(str(n) for n in notes),
        order=str(payload.get("order") or "input"),
    )


@dataclass
class LmmSummary:
    """What the report shows of a mixed model (from an :class:`LmmResult` or its JSON)."""

    formula: str
    criterion: str
    n_observations: int | None
    fixed_effects: pd.DataFrame
    anova: pd.DataFrame
    random_effects: pd.DataFrame
    residual_variance: float | None
    r2: dict[str, float | None]
    emmeans: dict[str, pd.DataFrame] = field(default_factory=dict)
    contrasts: dict[str, pd.DataFrame] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)
    #: the DHARMa tests (``SimulatedResiduals.to_dict`` without the residuals), or None
    residual_checks: dict[str, Any] | None = None
    #: Q-Q points against U(0, 1): expected and observed (sorted) scaled residuals
    qq: tuple[np.ndarray, np.ndarray] | None = None


def lmm_from_dict(payload: Any, path: str = "<lmm>") -> LmmSummary:
    """An :class:`LmmSummary` from the JSON of ``glotbench analyze lmm --json``."""
    if not isinstance(payload, dict) or "formula" not in payload or "fixed_effects" not in payload:
        raise InputError(
            "not the JSON of a mixed model (write it with "
            "`glotbench analyze lmm --formula F --residuals --json > FILE.json`)",
            path=path,
        )
    if not isinstance(payload["formula"], str):
        raise InputError("expected a string", path=path, field="formula")
    fixed = _frame(payload, "fixed_effects", ("term", "estimate"), path)
    anova = _frame(payload, "anova", ("term",), path) if "anova" in payload else pd.DataFrame()
    random = (
        _frame(payload, "random_effects", ("group",), path)
        if "random_effects" in payload
        else pd.DataFrame()
    )
    emmeans: dict[str, pd.DataFrame] = {}
    contrasts: dict[str, pd.DataFrame] = {}
    for key, target in (("emmeans", emmeans), ("contrasts", contrasts)):
        value = payload.get(key, {})
        if not isinstance(value, dict):
            raise InputError("expected an object of tables", path=path, field=key)
        for spec in value:
            target[str(spec)] = _frame(value, spec, (), f"{path}, {key}")
    r2 = payload.get("r2") or {}
    if not isinstance(r2, dict):
        raise InputError("expected an object", path=path, field="r2")
    diagnostics = payload.get("diagnostics") or {}
    if not isinstance(diagnostics, dict):
        raise InputError("expected an object", path=path, field="diagnostics")
    messages = [str(m) for m in diagnostics.get("messages", []) or []]
    checks = payload.get("residual_checks")
    qq = None
    if checks is not None:
        if not isinstance(checks, dict):
            raise InputError("expected an object", path=path, field="residual_checks")
        for part in ("uniformity", "dispersion", "outliers"):
            if not isinstance(checks.get(part), dict):
                raise InputError(f"missing {part}", path=path, field="residual_checks")
        residuals = checks.get("residuals")
        if residuals is not None:
            try:
                values = np.asarray(residuals, dtype=np.float64)
            except (TypeError, ValueError):
                values = np.array([np.nan])
            if values.ndim != 1 or not np.isfinite(values).all():
                raise InputError(
                    "expected a list of numbers", path=path, field="residual_checks.residuals"
                )
            qq = uniform_qq(values)
        messages += [str(m) for m in checks.get("messages", []) or []]
        checks = {k: v for k, v in checks.items() if k != "residuals"}
    return LmmSummary(
        formula=payload["formula"],
        criterion=str(payload.get("criterion") or "REML"),
        n_observations=_number(payload, "n_observations", path),
        fixed_effects=fixed,
        anova=anova,
        random_effects=random,
        residual_variance=_number(payload, "residual_variance", path),
        r2={str(k): v for k, v in r2.items()},
        emmeans=emmeans,
        contrasts=contrasts,
        messages=messages,
        residual_checks=checks,
        qq=qq,
    )


def lmm_summary(result: LmmResult) -> LmmSummary:
    """The report's view of a fitted model (its JSON form, as from a file)."""
    return lmm_from_dict(json.loads(json.dumps(result.to_dict(), default=_plain)), "<lmm>")


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


def read_datasize(path: str | Path) -> DataSizeResult:
    """``glotbench analyze datasize --json`` output, read from ``path``."""
    return datasize_from_dict(read_json(path), str(path))


def read_lmm(path: str | Path) -> LmmSummary:
    """``glotbench analyze lmm --json`` output, read from ``path``."""
    return lmm_from_dict(read_json(path), str(path))
