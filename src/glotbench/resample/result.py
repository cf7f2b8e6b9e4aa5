"""Result objects of the resampling engine, shaped like ``scipy.stats`` results."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt
import pandas as pd


class ConfidenceInterval(NamedTuple):
    """Lower and upper confidence limits (scalars, or arrays for several systems)."""

    low: Any
    high: Any


def _scalar_or_array(values: npt.NDArray[np.float64], single: bool) -> Any:
    return float(values[0]) if single else values


def _json_number(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


@dataclass(frozen=True)
class BootstrapResult:
    """Bootstrap estimate, standard error and confidence interval.

    For one system the properties are floats; for several systems (paired on
    the same resamples) they are arrays in the order of :attr:`names`. As
    scipy's ``BootstrapResult``: ``confidence_interval`` (``low``, ``high``),
    ``standard_error`` and ``bootstrap_distribution``; ``score`` is the
    estimate.

    Attributes
    ----------
    estimates : numpy.ndarray
        The full-sample score of each system.
    replicates : numpy.ndarray, shape (n_resamples, m)
        The replicate scores.
    low, high : numpy.ndarray
        The interval's bounds per system.
    standard_errors : numpy.ndarray
        The SD of the replicates per system.
    confidence_level : float
        Level of the interval.
    method : str
        ``percentile`` or ``bca``.
    scheme : str
        ``multinomial`` or ``poisson``.
    n_resamples : int
        Number of replicates.
    seed : int
        Seed of the weights.
    n_examples : int
        Examples resampled.
    names : tuple of str
        The systems' names.
    metric : str or None
        The metric's name, when known.
    """

    estimates: npt.NDArray[np.float64]
    replicates: npt.NDArray[np.float64] = field(repr=False)
    low: npt.NDArray[np.float64]
    high: npt.NDArray[np.float64]
    standard_errors: npt.NDArray[np.float64]
    confidence_level: float
    method: str
    scheme: str
    n_resamples: int
    seed: int
    n_examples: int
    names: tuple[str, ...]
    metric: str | None = None

    @property
    def _single(self) -> bool:
        return len(self.names) == 1

    @property
    def score(self) -> Any:
        """Score on the full test set."""
        return _scalar_or_array(self.estimates, self._single)

    @property
    def standard_error(self) -> Any:
        """Bootstrap standard error (SD of the replicates, ddof = 1)."""
        return _scalar_or_array(self.standard_errors, self._single)

    @property
    def confidence_interval(self) -> ConfidenceInterval:
        """Confidence interval at :attr:`confidence_level`."""
        return ConfidenceInterval(
            _scalar_or_array(self.low, self._single), _scalar_or_array(self.high, self._single)
        )

    @property
    def bootstrap_distribution(self) -> npt.NDArray[np.float64]:
        """Replicate scores; 1-D for one system, like ``scipy.stats.bootstrap``."""
        return self.replicates[:, 0] if self._single else self.replicates

    def to_frame(self) -> pd.DataFrame:
        """One tidy row per system."""
        return pd.DataFrame(
            {
                "system": list(self.names),
                "metric": self.metric,
                "score": self.estimates,
                "standard_error": self.standard_errors,
                "ci_low": self.low,
                "ci_high": self.high,
                "confidence_level": self.confidence_level,
                "method": self.method,
                "n_resamples": self.n_resamples,
                "n_examples": self.n_examples,
            }
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form (NaN becomes null)."""
        return {
            "metric": self.metric,
            "confidence_level": self.confidence_level,
            "method": self.method,
            "scheme": self.scheme,
            "n_resamples": self.n_resamples,
            "seed": self.seed,
            "n_examples": self.n_examples,
            "systems": [
                {
                    "system": name,
                    "score": _json_number(self.estimates[i]),
                    "standard_error": _json_number(self.standard_errors[i]),
                    "confidence_interval": [_json_number(self.low[i]), _json_number(self.high[i])],
                }
                for i, name in enumerate(self.names)
            ],
        }
