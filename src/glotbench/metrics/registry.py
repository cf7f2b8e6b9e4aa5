"""Registry of metrics by name.

``get_metric("f1_macro")`` returns a fresh instance; keyword arguments are
passed to the metric's constructor (e.g. ``get_metric("map@k", k=20)``).
A name of the form ``map@20`` is shorthand for ``get_metric("map@k", k=20)``.
"""

from __future__ import annotations

from typing import Any

from glotbench.errors import UnknownMetricError

# Importing the metric modules registers the built-in metrics (in this order).
from glotbench.metrics import classification  # noqa: F401  isort: skip
from glotbench.metrics import binary  # noqa: F401  isort: skip
from glotbench.metrics import tagging  # noqa: F401  isort: skip
from glotbench.metrics import qa  # noqa: F401  isort: skip
from glotbench.metrics import translation  # noqa: F401  isort: skip
from glotbench.metrics import parsing  # noqa: F401  isort: skip
from glotbench.metrics import retrieval  # noqa: F401  isort: skip
from glotbench.metrics.base import Metric
from glotbench.metrics.registration import _ALIASES, _REGISTRY, MetricFactory, register_metric

__all__ = ["MetricFactory", "get_metric", "metric_names", "register_metric"]


def _resolve(name: str) -> tuple[str, dict[str, Any]]:
    key = name.strip().lower()
    if key in _REGISTRY:
        return key, {}
    if key in _ALIASES:
        return _ALIASES[key], {}
    if "@" in key:  # parametrised shorthand, e.g. map@20
        base, _, param = key.partition("@")
        if f"{base}@k" in _REGISTRY and param.isdigit():
            return f"{base}@k", {"k": int(param)}
    raise UnknownMetricError(
        f"unknown metric {name!r}; known metrics: {', '.join(sorted(_REGISTRY))} "
        "(run 'glotbench metrics' for descriptions)"
    )


def get_metric(name: str, **config: Any) -> Metric:
    """Instantiate the metric registered as ``name`` with ``config``."""
    key, implied = _resolve(name)
    return _REGISTRY[key](**{**implied, **config})


def metric_names() -> list[str]:
    """Sorted names of all registered metrics."""
    return sorted(_REGISTRY)
