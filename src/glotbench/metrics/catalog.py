"""What ``glotbench metrics`` lists: every registered metric's name, statistics and rules."""

from __future__ import annotations

from typing import Any

from glotbench.metrics.constraints import describe_constraints
from glotbench.metrics.registry import get_metric, metric_names


def list_metrics() -> list[dict[str, Any]]:
    """Name, description and statistics layout of every registered metric.

    Returns
    -------
    list of dict
        One dict per metric: ``name``, ``description``, ``stats`` (the
        per-example statistics), ``mean_type``, ``score_range`` and the
        ``constraints`` its statistics must meet.

    See Also
    --------
    glotbench.metrics.get_metric : The metric object of a name.

    Examples
    --------
    >>> from glotbench import api
    >>> accuracy = next(m for m in api.list_metrics() if m["name"] == "accuracy")
    >>> accuracy["stats"], accuracy["score_range"]
    (['value', 'count'], [0.0, 1.0])
    """
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
