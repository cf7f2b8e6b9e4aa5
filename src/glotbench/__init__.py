"""glotbench: uncertainty-aware multilingual, multitask NLP evaluation."""

from __future__ import annotations

__version__ = "0.1.0"

from glotbench.analysis.aso import aso, multi_aso  # noqa: E402
from glotbench.errors import GlotbenchError, InputError  # noqa: E402
from glotbench.metrics import get_metric, metric_names  # noqa: E402
from glotbench.resample import BootstrapResult, bootstrap, bootstrap_metric  # noqa: E402

__all__ = [
    "__version__",
    "GlotbenchError",
    "InputError",
    "BootstrapResult",
    "bootstrap",
    "bootstrap_metric",
    "aso",
    "multi_aso",
    "get_metric",
    "metric_names",
]
