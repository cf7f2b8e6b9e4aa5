"""Examples side by side: kept outputs of models on the same test items.

The seed papers advise looking at the examples behind a difference (where
two models disagree, where both fail; MultiCheckList-style failure cases).
:func:`compare_outputs` pairs the kept outputs
(:func:`glotbench.store.outputs.read_outputs`) of the named models on
(dataset, language, seed, example): one row per example, one output column
per model, and whether each output matches the reference exactly —
case-insensitive and stripped for text, membership when the reference is a
list of acceptable answers (QA answers, translation references), equality
for tag sequences. Exact match is a reading aid, not the task's metric (the
stored statistics are; a close translation is "wrong" here).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from glotbench.errors import InputError

KEYS = ["dataset", "language", "seed", "example_id"]


def _norm(value: Any) -> Any:
    if isinstance(value, str):
        return " ".join(value.split()).casefold()
    if isinstance(value, list):
        return [_norm(v) for v in value]
    return value


def matches(output: Any, reference: Any) -> bool | None:
    """Whether ``output`` is the reference (or one of the acceptable ones); None if unknown."""
    if reference is None:
        return None
    out, ref = _norm(output), _norm(reference)
    if isinstance(ref, list) and not isinstance(out, list):
        return out in ref
    return bool(out == ref)


@dataclass
class ExamplesResult:
    """Paired examples of ``models``, side by side (:func:`glotbench.api.kept_examples`).

    Attributes
    ----------
    models : list of str
        The models listed.
    frame : pandas.DataFrame
        The keys, ``input``, ``reference``, ``output:<model>`` and
        ``correct:<model>`` per model.
    total : int
        Rows before ``limit``.
    filters : dict
        The filters applied.
    notes : list of str
        What the reader should know.
    """

    models: list[str]
    frame: pd.DataFrame
    total: int
    filters: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def to_frame(self) -> pd.DataFrame:
        """A copy of the side-by-side table (``frame``)."""
        return self.frame.copy()

    def to_dict(self) -> dict[str, Any]:
        """Models, rows, totals and notes as a JSON-safe dict."""
        rows = json.loads(self.frame.to_json(orient="records", force_ascii=False))
        return {
            "models": self.models,
            "filters": self.filters,
            "total": self.total,
            "shown": len(rows),
            "examples": rows,
            "notes": self.notes,
        }

    def samples(self) -> list[dict[str, Any]]:
        """lm-evaluation-harness-style sample records (one per model and example)."""
        out = []
        for rec in self.frame.to_dict(orient="records"):
            for model in self.models:
                output = rec[f"output:{model}"]
                out.append(
                    {
                        "doc_id": rec["example_id"],
                        "model": model,
                        "dataset": rec["dataset"],
                        "language": rec["language"],
                        "seed": rec["seed"],
                        "doc": {"input": rec["input"]},
                        "target": rec["reference"],
                        "resps": [[output]],
                        "filtered_resps": [output],
                        "exact_match": rec[f"correct:{model}"],
                    }
                )
        return out


def compare_outputs(
    outputs: pd.DataFrame,
    models: list[str],
    *,
    disagree: bool = False,
    all_wrong: bool = False,
    limit: int | None = None,
) -> ExamplesResult:
    """Pair the kept outputs of ``models`` (a frame of ``read_outputs``) example by example.

    ``disagree``: only examples where the models' outputs differ; ``all_wrong``:
    only examples none of them gets right (exact match). ``limit`` rows are kept
    (``total`` says how many matched).
    """
    if not models:
        raise InputError("name at least one model whose kept outputs to list")
    if disagree and len(models) < 2:
        raise InputError("disagree=True compares models: name at least two")
    have = set(outputs["model"]) if len(outputs) else set()
    missing = [m for m in models if m not in have]
    if missing:
        raise InputError(
            f"no kept outputs of model(s) {', '.join(map(repr, missing))} in the selection; "
            f"of those asked for, these have some: {', '.join(sorted(have)) or 'none'} (run with "
            "keep_outputs=True; generative models keep them by default)"
        )
    merged: pd.DataFrame | None = None
    for model in models:
        part = outputs[outputs["model"] == model]
        part = part.drop_duplicates(KEYS, keep="last")[
            [*KEYS, "position", "input", "reference", "output"]
        ]
        part = part.rename(columns={"output": f"output:{model}"})
        if merged is None:
            merged = part
        else:
            merged = merged.merge(part.drop(columns=["input", "reference", "position"]), on=KEYS)
    assert merged is not None
    notes = []
    if len(models) > 1 and merged.empty:
        notes.append("the models share no (dataset, language, seed, example) with kept outputs")
    for model in models:
        merged[f"correct:{model}"] = [
            matches(o, r)
            for o, r in zip(merged[f"output:{model}"], merged["reference"], strict=True)
        ]
    keep = pd.Series(True, index=merged.index)
    if disagree:
        first = merged[f"output:{models[0]}"].map(lambda v: json.dumps(_norm(v), default=str))
        differs = pd.Series(False, index=merged.index)
        for model in models[1:]:
            other = merged[f"output:{model}"].map(lambda v: json.dumps(_norm(v), default=str))
            differs |= first != other
        keep &= differs
    if all_wrong:
        for model in models:
            keep &= merged[f"correct:{model}"].map(lambda c: c is False)
    merged = merged[keep].sort_values(["dataset", "language", "seed", "position"], kind="stable")
    total = len(merged)
    if limit is not None:
        merged = merged.head(limit)
    columns = [*KEYS, "input", "reference"]
    columns += [f"{p}:{m}" for m in models for p in ("output", "correct")]
    return ExamplesResult(
        models=list(models),
        frame=merged[columns].reset_index(drop=True),
        total=total,
        filters={"disagree": disagree, "all_wrong": all_wrong, "limit": limit},
        notes=notes,
    )
