"""What ``glotbench metrics`` lists: every registered metric's name, statistics and rules."""

from __future__ import annotations

from typing import Any

from glotbench.metrics.constraints import describe_constraints
from glotbench.metrics.registry import get_metric, metric_names


def list_metrics() -> list[dict[str, Any]]:
    """Name, description and statistics layout of every registered metric."""
    out = []
    for name in metric_names():
        metric = get_metric(name)
        try:
            stat_names: list[str] | str = list(metric.stat_names())
            rules = describe_constraints(metric.constraints())
        except ValueError:  # label-dependent layout
            stat_names = "per-label counts (tp[label], pred[label], true[label])"
            rules = describe_constraints(get_metric(name, labels=["label"]).constraints())
        out.append(
            {
                "name": name,
                "description": metric.description,
                "stats": stat_names,
                "mean_type": metric.is_mean,
                "score_range": list(metric.score_range),
                "constraints": rules,
            }
        )
    return out
