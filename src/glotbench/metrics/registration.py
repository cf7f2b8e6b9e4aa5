"""The table of registered metrics and the decorator that fills it.

The metric modules register themselves here; :mod:`glotbench.metrics.registry`
imports them (so the built-in metrics are registered) and looks names up. The
table lives below both so that neither imports the other in a circle.
"""

from __future__ import annotations

from collections.abc import Callable

from glotbench.metrics.base import Metric

MetricFactory = Callable[..., Metric]

_REGISTRY: dict[str, MetricFactory] = {}
_ALIASES: dict[str, str] = {}


def register_metric(
    name: str, *, aliases: tuple[str, ...] = ()
) -> Callable[[MetricFactory], MetricFactory]:
    """Class decorator: register a metric factory under ``name`` (and aliases)."""

    def decorator(factory: MetricFactory) -> MetricFactory:
        if name in _REGISTRY:
            raise ValueError(f"metric {name!r} registered twice")
        _REGISTRY[name] = factory
        for alias in aliases:
            _ALIASES[alias] = name
        return factory

    return decorator
