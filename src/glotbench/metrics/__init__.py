"""Metric registry: per-example sufficient statistics and vectorised scores."""

from glotbench.metrics.base import MeanMetric, Metric
from glotbench.metrics.registry import get_metric, metric_names, register_metric

# Importing the modules registers the built-in metrics.
from glotbench.metrics import classification  # noqa: E402,F401  isort: skip
from glotbench.metrics import binary  # noqa: E402,F401  isort: skip
from glotbench.metrics import tagging  # noqa: E402,F401  isort: skip
from glotbench.metrics import qa  # noqa: E402,F401  isort: skip
from glotbench.metrics import translation  # noqa: E402,F401  isort: skip
from glotbench.metrics import parsing  # noqa: E402,F401  isort: skip
from glotbench.metrics import retrieval  # noqa: E402,F401  isort: skip

__all__ = ["Metric", "MeanMetric", "get_metric", "metric_names", "register_metric"]
