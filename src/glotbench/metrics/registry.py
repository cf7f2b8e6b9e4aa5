"""Registry of metrics by name.

``get_metric("f1_macro")`` returns a fresh instance; keyword arguments are
passed to the metric's constructor (e.g. ``get_metric("map@k", k=20)``).
A name of the form ``map@20`` is shorthand for ``get_metric("map@k", k=20)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from glotbench.errors import UnknownMetricError
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
    _ensure_builtins()
    key, implied = _resolve(name)
    return _REGISTRY[key](**{**implied, **config})


def metric_names() -> list[str]:
    """Sorted names of all registered metrics."""
    _ensure_builtins()
    return sorted(_REGISTRY)


def _ensure_builtins() -> None:
    # Importing the package registers the built-in metrics.
    import glotbench.metrics  # noqa: F401
