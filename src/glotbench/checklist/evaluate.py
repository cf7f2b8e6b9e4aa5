"""Evaluating template tests: expectations, failure rates with CIs, storing runs.

A test case **passes**, **fails** or **does not apply** (CheckList's
"filtered"):

* MFT: passes iff the prediction equals the expected label;
* INV: passes iff every perturbed text gets the original's label (with
  probabilities and a ``tolerance`` > 0, iff the probability of the original's
  label moves by at most the tolerance);
* DIR: with ``direction: increasing`` each perturbation must not lower the
  probability of the expectation's label (default: the original's predicted
  label) by more than ``tolerance``; ``decreasing`` mirrors it. A perturbation
  whose original probability already sits at the bound the change is measured
  against (≤ tolerance for increasing, ≥ 1 − tolerance for decreasing) cannot
  fail and does not apply. With hard labels only, the probability of a label
  is 1 when it is the prediction and 0 otherwise.

A case with several perturbations passes iff all that apply pass, and does not
apply iff none applies. The **failure rate** of a test in a language is
failed / applicable cases, as CheckList reports it.

Per-case statistics are ``(failed, applicable)``; the failure rate is their
summed ratio, so the bootstrap CI is the engine's ``score(W @ S)`` with the
same weights for every model (paired). Stored runs use the registry's
``accuracy`` metric with statistics ``(passed, applicable)``: the stored score
is the **pass rate** (1 − failure rate), so leaderboards stay
higher-is-better and every analysis can read the runs.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from glotbench.checklist.engine import iter_texts
from glotbench.checklist.spec import Case
from glotbench.errors import InputError
from glotbench.metrics.base import safe_divide

#: Metric name of stored checklist runs (pass rate; see the module docstring).
STORED_METRIC = "accuracy"


@dataclass(frozen=True)
class Prediction:
    """A model's output for one text: a label and, optionally, label probabilities."""

    label: str
    probs: dict[str, float] | None = None

    def prob(self, label: str) -> float:
        if self.probs is not None:
            return float(self.probs.get(label, 0.0))
        return 1.0 if self.label == label else 0.0


# ---------------------------------------------------------------------------
# predictions
# ---------------------------------------------------------------------------


def as_prediction(value: Any, labels: Sequence[str], where: str) -> Prediction:
    if isinstance(value, Prediction):
        return value
    if isinstance(value, (bool, np.bool_)):
        raise InputError(f"{where}: a prediction must be a label or probabilities, got {value!r}")
    if isinstance(value, (int, np.integer)) and labels:
        if not 0 <= int(value) < len(labels):
            raise InputError(f"{where}: label index {value} is outside the labels {list(labels)}")
        return Prediction(labels[int(value)])
    if isinstance(value, (str, int, np.integer)):
        return Prediction(str(value))
    if isinstance(value, dict):
        probs = {str(k): float(v) for k, v in value.items()}
        if not probs:
            raise InputError(f"{where}: empty probabilities")
        return Prediction(max(probs, key=lambda k: probs[k]), probs)
    arr = np.asarray(value, dtype=np.float64).reshape(-1)
    if not labels or arr.size != len(labels):
        raise InputError(
            f"{where}: a probability vector needs one value per suite label "
            f"({list(labels)}), got {arr.size} values"
        )
    probs = dict(zip(labels, arr.tolist(), strict=True))
    return Prediction(labels[int(np.argmax(arr))], probs)


def predictions_from_callable(
    cases: Sequence[Case], predict: Callable[[list[str]], Sequence[Any]], batch_size: int = 256
) -> dict[str, Prediction]:
    """Run ``predict(texts)`` once per distinct text; returns predictions by text id.

    ``predict`` returns, per text, a label (str; an int is an index into the
    suite's labels), a dict label → probability, or a probability vector in
    the order of the suite's labels.
    """
    labels = cases[0].labels if cases else ()
    by_text: dict[str, list[str]] = {}
    for tid, text in iter_texts(cases):
        by_text.setdefault(text, []).append(tid)
    distinct = list(by_text)
    out: dict[str, Prediction] = {}
    for start in range(0, len(distinct), batch_size):
        batch = distinct[start : start + batch_size]
        values = list(predict(batch))
        if len(values) != len(batch):
            raise InputError(f"predict() returned {len(values)} predictions for {len(batch)} texts")
        for text, value in zip(batch, values, strict=True):
            pred = as_prediction(value, labels, f"prediction for {text!r}")
            for tid in by_text[text]:
                out[tid] = pred
    return out


def read_predictions(path: str | Path, labels: Sequence[str] = ()) -> dict[str, Prediction]:
    """Predictions keyed by text id from JSONL (``id`` + ``label`` and/or ``probs``) or CSV/TSV.

    CSV/TSV files have an ``id`` column, a ``label`` column and/or one
    ``prob_<label>`` column per label.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(
            f"cannot read the predictions: {exc.strerror or exc}", path=str(p)
        ) from None
    out: dict[str, Prediction] = {}
    suffix = p.suffix.lower()
    if suffix in (".csv", ".tsv"):
        reader = csv.DictReader(text.splitlines(), delimiter="\t" if suffix == ".tsv" else ",")
        fields = reader.fieldnames or []
        if "id" not in fields:
            raise InputError("missing column", path=str(p), line=1, field="id")
        prob_cols = [f for f in fields if f.startswith("prob_")]
        if "label" not in fields and not prob_cols:
            raise InputError(
                "give a 'label' column or 'prob_<label>' columns",
                path=str(p),
                line=1,
                field="label",
            )
        for lineno, row in enumerate(reader, start=2):
            rid = (row.get("id") or "").strip()
            if not rid:
                raise InputError("empty id", path=str(p), line=lineno, field="id")
            value: Any
            if prob_cols:
                try:
                    value = {c[5:]: float(row[c]) for c in prob_cols}
                except (TypeError, ValueError):
                    raise InputError(
                        "probabilities must be numbers",
                        path=str(p),
                        line=lineno,
                        field=prob_cols[0],
                    ) from None
            else:
                value = (row.get("label") or "").strip()
            pred = as_prediction(value, labels, f"{p}, line {lineno}")
            if "label" in fields and prob_cols and (row.get("label") or "").strip():
                pred = Prediction((row["label"] or "").strip(), pred.probs)
            _put(out, rid, pred, p, lineno)
        return out
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON: {exc.msg}", path=str(p), line=lineno) from None
        if not isinstance(row, dict) or "id" not in row:
            raise InputError("missing", path=str(p), line=lineno, field="id")
        if "probs" in row and row["probs"] is not None:
            try:
                pred = as_prediction(row["probs"], labels, f"{p}, line {lineno}")
            except InputError:  # already says where and what (InputError is a ValueError)
                raise
            except (TypeError, ValueError):
                raise InputError(
                    "must be a list of numbers or a label → number object",
                    path=str(p),
                    line=lineno,
                    field="probs",
                ) from None
            if row.get("label") is not None:
                pred = Prediction(str(row["label"]), pred.probs)
        elif row.get("label") is not None:
            pred = as_prediction(row["label"], labels, f"{p}, line {lineno}")
        else:
            raise InputError("give 'label' or 'probs'", path=str(p), line=lineno, field="label")
        _put(out, str(row["id"]), pred, p, lineno)
    return out


def _put(out: dict[str, Prediction], rid: str, pred: Prediction, path: Path, lineno: int) -> None:
    if rid in out:
        raise InputError(f"id {rid!r} occurs twice", path=str(path), line=lineno, field="id")
    out[rid] = pred


# ---------------------------------------------------------------------------
# expectations
# ---------------------------------------------------------------------------


def case_outcome(case: Case, predictions: Sequence[Prediction]) -> bool | None:
    """True (pass), False (fail) or None (does not apply) for one case."""
    exp = case.expectation
    if case.type == "MFT":
        return predictions[0].label == str(exp["label"])
    original = predictions[0]
    results: list[bool | None] = []
    for pred in predictions[1:]:
        if case.type == "INV":
            tol = float(exp.get("tolerance") or 0.0)
            if pred.label == original.label:
                results.append(True)
            elif tol > 0 and original.probs is not None and pred.probs is not None:
                results.append(
                    abs(pred.prob(original.label) - original.prob(original.label)) <= tol
                )
            else:
                results.append(False)
        else:  # DIR
            label = exp.get("label") or original.label
            tol = float(exp.get("tolerance") or 0.0)
            before, after = original.prob(label), pred.prob(label)
            if exp["direction"] == "increasing":
                results.append(None if before <= tol else after - before + tol >= 0)
            else:
                results.append(None if before >= 1 - tol else after - before - tol <= 0)
    applicable = [r for r in results if r is not None]
    if not applicable:
        return None
    return all(applicable)


def case_statistics(
    cases: Sequence[Case], predictions: dict[str, Prediction], model: str = "model"
) -> npt.NDArray[np.float64]:
    """Per-case ``(failed, applicable)`` statistics, shape (n_cases × 2)."""
    out = np.zeros((len(cases), 2), dtype=np.float64)
    for i, case in enumerate(cases):
        preds = []
        for tid in case.text_ids():
            pred = predictions.get(tid)
            if pred is None:
                raise InputError(
                    f"model {model!r} has no prediction for text {tid!r}; "
                    "predict every 'id' of the cases file"
                )
            preds.append(pred)
        outcome = case_outcome(case, preds)
        if outcome is not None:
            out[i] = (0.0 if outcome else 1.0, 1.0)
    return out


def failure_rate_score(summed: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Failure rate from summed ``(failed, applicable)``; 0 where nothing applies."""
    arr = np.asarray(summed, dtype=np.float64)
    return safe_divide(arr[..., 0], arr[..., 1])


# ---------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------


def _num(x: Any) -> Any:
    if x is None:
        return None
    if isinstance(x, (float, np.floating)):
        return float(x) if math.isfinite(float(x)) else None
    if isinstance(x, (np.integer,)):
        return int(x)
    return x


@dataclass(frozen=True)
class ChecklistResult:
    """Failure rates per model, test and language with bootstrap CIs.

    ``rates`` has one row per (model, suite, test, language): type,
    capability, n_cases, n_applicable, n_failed, failure_rate,
    standard_error, ci_low, ci_high. ``outcomes`` has one row per (model,
    case): passed / failed / n/a and the case's first text.
    """

    rates: pd.DataFrame
    outcomes: pd.DataFrame
    confidence_level: float
    n_resamples: int
    seed: int
    stored: dict[str, int | str]
    notes: tuple[str, ...] = ()

    def to_frame(self) -> pd.DataFrame:
        return self.rates

    def to_dict(self) -> dict[str, Any]:
        rows = [{k: _num(v) for k, v in r.items()} for r in self.rates.to_dict(orient="records")]
        failures = self.outcomes[self.outcomes["outcome"] == "fail"]
        return {
            "confidence_level": self.confidence_level,
            "n_resamples": self.n_resamples,
            "seed": self.seed,
            "failure_rates": rows,
            "n_failed_cases": int(len(failures)),
            "example_failures": [
                {k: _num(v) for k, v in r.items()}
                for r in failures.groupby(["model", "test", "language"], sort=False)
                .head(2)
                .to_dict(orient="records")
            ],
            "stored": self.stored,
            "notes": list(self.notes),
        }


def score_cases(
    cases: Sequence[Case],
    predictions: dict[str, dict[str, Prediction]],
    *,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> tuple[ChecklistResult, dict[tuple[str, str, str], tuple[list[str], npt.NDArray[np.float64]]]]:
    """Failure rates of every model (paired bootstrap per test and language).

    Returns the result and, per (suite, test, language), the case ids and the
    (m × n × 2) ``(failed, applicable)`` statistics in model order.
    """
    from glotbench.resample import bootstrap

    if not cases:
        raise InputError("no test cases to score")
    if not predictions:
        raise InputError("no predictions to score; give at least one model")
    models = list(predictions)
    stats = {m: case_statistics(cases, predictions[m], m) for m in models}
    groups: dict[tuple[str, str, str], list[int]] = {}
    for i, c in enumerate(cases):
        groups.setdefault((c.suite, c.test, c.language), []).append(i)
    rate_rows: list[dict[str, Any]] = []
    matrices: dict[tuple[str, str, str], tuple[list[str], npt.NDArray[np.float64]]] = {}
    notes: list[str] = []
    for key, idx in groups.items():
        suite, test, language = key
        first = cases[idx[0]]
        stacked = np.stack([stats[m][idx] for m in models])  # (m, n, 2)
        matrices[key] = ([cases[i].case_id for i in idx], stacked)
        applicable = stacked[..., 1].sum(axis=1)
        boot = bootstrap(
            stacked,
            failure_rate_score,
            n_resamples=n_resamples,
            confidence_level=confidence_level,
            seed=seed,
            names=models,
        )
        for j, model in enumerate(models):
            na = int(applicable[j])
            if na == 0:
                notes.append(
                    f"{model}: no case of {test}/{language} applies; its failure rate is undefined"
                )
            rate_rows.append(
                {
                    "model": model,
                    "suite": suite,
                    "test": test,
                    "type": first.type,
                    "capability": first.capability,
                    "language": language,
                    "n_cases": len(idx),
                    "n_applicable": na,
                    "n_failed": int(stacked[j, :, 0].sum()),
                    "failure_rate": float(boot.estimates[j]) if na else float("nan"),
                    "standard_error": float(boot.standard_errors[j]) if na else float("nan"),
                    "ci_low": float(boot.low[j]) if na else float("nan"),
                    "ci_high": float(boot.high[j]) if na else float("nan"),
                }
            )
    outcome_rows = []
    for m in models:
        for i, c in enumerate(cases):
            failed, app = stats[m][i]
            outcome = "n/a" if app == 0 else ("fail" if failed else "pass")
            outcome_rows.append(
                {
                    "model": m,
                    "case_id": c.case_id,
                    "test": c.test,
                    "type": c.type,
                    "language": c.language,
                    "outcome": outcome,
                    "text": c.texts[0],
                    "perturbed": " | ".join(c.texts[1:]),
                    "predictions": " | ".join(predictions[m][t].label for t in c.text_ids()),
                }
            )
    result = ChecklistResult(
        rates=pd.DataFrame(rate_rows),
        outcomes=pd.DataFrame(outcome_rows),
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        seed=seed,
        stored={},
        notes=tuple(notes),
    )
    return result, matrices


def run_key_fields(suite: str, test: str) -> dict[str, str]:
    """Task and dataset of a stored checklist run: ``checklist:<test>`` in ``checklist:<suite>``."""
    return {"task": f"checklist:{test}", "dataset": f"checklist:{suite}"}


def store_results(
    store: Any,
    matrices: dict[tuple[str, str, str], tuple[list[str], npt.NDArray[np.float64]]],
    models: Sequence[str],
    *,
    source: str | None = None,
    model_metadata: dict[str, dict[str, Any]] | None = None,
) -> dict[str, int]:
    """Write one run per (model, test, language); re-running is a no-op.

    Each run's example ids are the case ids and its statistics
    ``(passed, applicable)`` under the ``accuracy`` metric. A run already
    stored with different statistics is an error (pass another model name).
    """
    from glotbench.store.schema import RunRecord, stats_digest

    written = skipped = 0
    for (suite, test, language), (case_ids, stacked) in matrices.items():
        for j, model in enumerate(models):
            failed, applicable = stacked[j, :, 0], stacked[j, :, 1]
            run_stats = np.column_stack([applicable - failed, applicable])
            record = RunRecord(
                model=model,
                language=language,
                metric=STORED_METRIC,
                stat_names=("value", "count"),
                model_metadata=(model_metadata or {}).get(model, {}),
                source=source,
                task=f"checklist:{test}",
                dataset=f"checklist:{suite}",
            )
            existing = store.runs.stored([record.run_id]).get(record.run_id)
            if existing is not None:
                digest = stats_digest(
                    np.asarray(case_ids, dtype=object), run_stats, ("value", "count")
                )
                if digest != existing["stats_sha256"]:
                    raise InputError(
                        f"run ({record.describe()}) is already stored with different results "
                        "(other templates or predictions); score under another model name "
                        "or use another store"
                    )
                skipped += 1
                continue
            if store.runs.write(record, case_ids, run_stats):
                written += 1
            else:
                skipped += 1
    return {"runs_written": written, "runs_skipped": skipped}
