"""Metric registry: per-example sufficient statistics and vectorised scores."""

from glotbench.metrics.base import MeanMetric, Metric
from glotbench.metrics.registry import get_metric, metric_names, register_metric

# (importing the registry registers the built-in metrics)

__all__ = ["Metric", "MeanMetric", "get_metric", "metric_names", "register_metric"]
