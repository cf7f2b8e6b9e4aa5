"""Model adapters and ``build_model(spec)``.

The model kinds (``ModelSpec.kind``) are registered once, in
:data:`glotbench.runner.models.registry.REGISTRY` (kind -> adapter class, the
modules and extra it needs, a description); ``glotbench run --list-models``
prints them, and the loader, suite validation and the command line read them.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from glotbench.runner.errors import ModelError, UnknownNameError
from glotbench.runner.models.base import Model, ModelSpec
from glotbench.runner.models.depparse import DependencyParser, ParseBaseline
from glotbench.runner.models.external import CallableModel, PredictionsFile, import_object
from glotbench.runner.models.registry import (
    GENERATIVE_KINDS,
    MODEL_KINDS,
    NEURAL_KINDS,
    REGISTRY,
    ModelKind,
    model_kind,
)
from glotbench.runner.models.sklearn import HashingEmbedder, Majority, TextClassifier, TokenTagger


def neural_available() -> bool:
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("torch", "transformers"))


def build_model(spec: ModelSpec | dict[str, Any], *, base: str | Path | None = None) -> Model:
    """A fresh adapter for ``spec`` (relative paths resolve against ``base``)."""
    if isinstance(spec, dict):
        spec = ModelSpec(**spec)
    try:
        kind = model_kind(spec.kind)
    except UnknownNameError as exc:
        raise UnknownNameError(f"model {spec.name!r}: {exc}") from None
    options = {**kind.fixed, **spec.options}
    cls = kind.adapter_class()
    if "base" in inspect.signature(cls.__init__).parameters:
        options["base"] = base
    try:
        return cls(spec.name, **options)  # type: ignore[no-any-return]
    except TypeError as exc:
        raise ModelError(f"model {spec.name!r} (kind {spec.kind}): bad options: {exc}") from None


__all__ = [
    "GENERATIVE_KINDS",
    "MODEL_KINDS",
    "NEURAL_KINDS",
    "REGISTRY",
    "CallableModel",
    "DependencyParser",
    "HashingEmbedder",
    "Majority",
    "Model",
    "ModelKind",
    "ModelSpec",
    "ParseBaseline",
    "PredictionsFile",
    "TextClassifier",
    "TokenTagger",
    "build_model",
    "import_object",
    "model_kind",
    "neural_available",
]
