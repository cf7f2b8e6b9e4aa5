"""glotbench: uncertainty-aware multilingual, multitask NLP evaluation."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from glotbench._version import __version__
from glotbench.errors import GlotbenchError, InputError

if TYPE_CHECKING:
    from glotbench.analysis.aso import aso, multi_aso
    from glotbench.metrics import get_metric, metric_names
    from glotbench.resample import BootstrapResult, bootstrap, bootstrap_metric

# The public names below are imported on first use (PEP 562), so that the
# command line starts without loading numpy, pandas and scipy.
_LAZY = {
    "aso": "glotbench.analysis.aso",
    "multi_aso": "glotbench.analysis.aso",
    "get_metric": "glotbench.metrics",
    "metric_names": "glotbench.metrics",
    "BootstrapResult": "glotbench.resample",
    "bootstrap": "glotbench.resample",
    "bootstrap_metric": "glotbench.resample",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'glotbench' has no attribute {name!r}")


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
