"""Inference speed per model, as ScandEval reports it: mean tokens per second ± 1.96·SD/√n.

Two sources hold speed figures in a store:

- runs of ``glotbench run``: the model's speed job stores the per-iteration
  tokens per second of ScandEval's benchmark (:mod:`glotbench.runner.speed`)
  in its run's ``model_metadata['speed']``;
- imported EuroEval results: the ``speed`` task's scores (metrics ``speed``
  and ``speed_short``), one replicate per iteration.

Either way the summary is ScandEval's aggregate (Nielsen 2023, §4): the mean
over iterations and the half-width ``1.96 · SD(ddof=1) / √n`` of its 95 %
interval (:func:`glotbench.resample.scandeval.mean_and_half_width`). The
primary figure is the long documents' (about 100 … 1,000 GPT-2 tokens), the
secondary the short documents' (about 12.5 … 125).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from glotbench.resample.scandeval import mean_and_half_width

#: Above this many GPT-2 tokens per second a model does no per-token work: a call on
#: one document of about 100 … 1,000 tokens then takes under 1 … 10 µs, the cost of a
#: few Python function calls, less than reading the document once (a majority-class
#: baseline measures 10⁹ tokens/s). Such figures time call overhead, not a model, and
#: are shown as "trivial" instead of a number.
TRIVIAL_TOKENS_PER_SECOND = 1e8

COLUMNS = [
    "model",
    "tokens_per_second",
    "ci_half_width",
    "tokens_per_second_short",
    "ci_half_width_short",
    "iterations",
    "source",
    "trivial",
]


@dataclass
class SpeedTable:
    """Speed per model (:func:`glotbench.api.speed_summary`).

    Attributes
    ----------
    rows : list of dict
        One per model (:data:`COLUMNS`; ``.to_frame()``): tokens per second
        with its interval's half-width (also for short documents), the
        iterations and the source.
    """

    rows: list[dict[str, Any]] = field(default_factory=list)

    def to_frame(self) -> pd.DataFrame:
        """One row per model: tokens per second with its interval."""
        return pd.DataFrame(self.rows, columns=COLUMNS)

    def to_dict(self) -> dict[str, Any]:
        """Unit, rows and notes as a JSON-safe dict."""
        return {
            "unit": "GPT-2 tokens per second",
            "interval": "95 % (mean ± 1.96·SD/√n over the benchmark's iterations)",
            "trivial": f"above {TRIVIAL_TOKENS_PER_SECOND:.0e} tokens/s: no per-token work "
            "(the figure times call overhead)",
            "models": [dict(r) for r in self.rows],
        }

    def of(self, model: str) -> dict[str, Any] | None:
        """The row of ``model``, or None."""
        return next((r for r in self.rows if r["model"] == model), None)

    def __len__(self) -> int:
        return len(self.rows)


def _summary(values: Sequence[float]) -> tuple[float, float | None]:
    """ScandEval's mean and half-width; no half-width (None) for one value."""
    mean, half = mean_and_half_width(values)
    return mean, (half if len(values) > 1 else None)


def speed_row(
    model: str, long: Sequence[float], short: Sequence[float], source: str
) -> dict[str, Any]:
    """One model's row of :class:`SpeedTable` from its per-iteration tokens per second."""
    mean, half = _summary(long)
    mean_s, half_s = _summary(short) if len(short) else (None, None)
    return {
        "model": model,
        "tokens_per_second": mean,
        "ci_half_width": half,
        "tokens_per_second_short": mean_s,
        "ci_half_width_short": half_s,
        "iterations": len(long),
        "source": source,
        "trivial": bool(mean > TRIVIAL_TOKENS_PER_SECOND),
    }
