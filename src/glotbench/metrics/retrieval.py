"""Retrieval metric: mean average precision at k (mAP@k).

One example is one query: the prediction is the ranked list of retrieved ids
(best first), the reference the collection of relevant ids (a single string id
counts as one relevant id). The per-query value is AP@k as defined by
LAReQA / XTREME-R (``google-research/xtreme``,
``third_party/utils_lareqa.py::average_precision_at_k``; XTREME-R reports
mAP@20)::

    AP@k = 1 / min(k, |relevant|) · Σ_{i ≤ k} P@i · rel_i

where rel_i = 1 if the i-th retrieved id is relevant and has not been retrieved
at a higher rank (a repeated id earns no second credit) and P@i is the number
of such hits among the first i retrieved ids divided by i. A query without any
relevant id scores 0 (the reference divides by zero). When every relevant id
is retrieved and at most k ids are retrieved, AP@k equals
``sklearn.metrics.average_precision_score`` on the ranking.

mAP@k is the mean of AP@k over queries: statistics ``(AP@k, 1)``. Register
name ``map@k``; ``map@20`` is shorthand for ``get_metric("map@k", k=20)``.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any

from glotbench.errors import InputError
from glotbench.metrics.base import MeanMetric
from glotbench.metrics.registration import register_metric


def _id_list(value: Any) -> list[Any]:
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        return [value]
    return list(value)


def average_precision_at_k(retrieved: list[Any], relevant: set[Any], k: int) -> float:
    """AP@k of one ranked list (LAReQA / XTREME-R definition)."""
    if not relevant:
        return 0.0
    hits = 0
    total = 0.0
    seen: set[Any] = set()
    for rank, item in enumerate(retrieved[:k], start=1):
        if item in relevant and item not in seen:
            hits += 1
            total += hits / rank
        seen.add(item)
    return total / min(k, len(relevant))


@register_metric("map@k")
class MeanAveragePrecisionAtK(MeanMetric):
    """Mean over queries of AP@k (LAReQA / XTREME-R mAP@k)."""

    name = "map@k"  # instances are named map@<k>
    description = "mean average precision at k over queries (XTREME-R / LAReQA mAP@k)"

    def __init__(self, k: int = 10) -> None:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InputError(f"map@k: k must be a positive integer, got {k!r}")
        self.k = k
        self.name = f"map@{k}"

    def config(self) -> dict[str, Any]:
        return {"k": self.k}

    def example_value(self, prediction: Any, reference: Any) -> float:
        retrieved = _id_list(prediction)
        relevant_ids = _id_list(reference)
        for item in (*retrieved, *relevant_ids):
            if not isinstance(item, Hashable):
                raise InputError(
                    f"{self.name}: ids must be hashable (strings or integers), got {item!r}"
                )
        return average_precision_at_k(retrieved, set(relevant_ids), self.k)
