"""The public Python API: what the CLI calls.

Everything the command line can do is a function here, returning result
objects with ``.to_frame()`` and ``.to_dict()``.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from glotbench.analysis.aggregate import Leaderboard, leaderboard
from glotbench.data import xtreme_r_baselines
from glotbench.errors import InputError
from glotbench.metrics import get_metric, metric_names
from glotbench.resample import BootstrapResult, bootstrap, bootstrap_metric

__all__ = [
    "bootstrap",
    "bootstrap_metric",
    "bootstrap_files",
    "demo_leaderboard",
    "list_metrics",
    "read_examples_file",
]


# --- analysis commands ---------------------------------------------------------


def demo_leaderboard(confidence_level: float = 0.95) -> Leaderboard:
    """Leaderboard of the embedded XTREME-R baselines (published per-language scores)."""
    return leaderboard(xtreme_r_baselines(), confidence_level=confidence_level)


def list_metrics() -> list[dict[str, Any]]:
    """Name, description and statistics layout of every registered metric."""
    out = []
    for name in metric_names():
        metric = get_metric(name)
        try:
            stat_names: list[str] | str = list(metric.stat_names())
        except ValueError:  # label-dependent layout
            stat_names = "per-label counts (tp[label], pred[label], true[label])"
        out.append({"name": name, "description": metric.description, "stats": stat_names, "mean_type": metric.is_mean})
    return out


def read_examples_file(path: Path) -> list[Any]:
    """One example per line: JSON values for ``.jsonl``/``.json`` files, else the stripped text.

    A tag sequence in a text file is one line of whitespace-separated tags.
    """
    opener = gzip.open if path.suffix == ".gz" else open
    suffixes = path.suffixes
    is_json = ".jsonl" in suffixes or ".json" in suffixes
    items: list[Any] = []
    try:
        with opener(path, "rt", encoding="utf-8") as fh:
            for line_number, line in enumerate(fh, start=1):
                text = line.rstrip("\n")
                if not is_json:
                    items.append(text)
                    continue
                if not text.strip():
                    continue
                try:
                    items.append(json.loads(text))
                except json.JSONDecodeError as exc:
                    raise InputError(f"invalid JSON ({exc.msg})", path=str(path), line=line_number) from None
    except FileNotFoundError:
        raise InputError("file not found", path=str(path)) from None
    return items


def bootstrap_files(
    metric: str,
    predictions: Path,
    references: Path,
    *,
    n_resamples: int = 10_000,
    confidence_level: float = 0.95,
    seed: int = 0,
    method: str = "percentile",
) -> BootstrapResult:
    """Bootstrap a metric over a predictions file against a references file (line-aligned)."""
    bound = get_metric(metric)
    preds = [bound.parse_line(x) if isinstance(x, str) else x for x in read_examples_file(predictions)]
    refs = [bound.parse_line(x) if isinstance(x, str) else x for x in read_examples_file(references)]
    if len(preds) != len(refs):
        raise InputError(
            f"{len(preds)} predictions in {predictions} but {len(refs)} references in {references}; "
            "the files must have one example per line, in the same order"
        )
    return bootstrap_metric(
        bound, preds, refs, n_resamples=n_resamples, confidence_level=confidence_level, seed=seed,
        method=method,  # type: ignore[arg-type]
    )
