"""The model-adapter interface and the model specification of suites.

An adapter has a ``name``, says whether it ``trains``, may be ``fit`` on a
training split with a seed, and answers a task through one method per task
kind (see :mod:`glotbench.runner.tasks.base`): ``predict_labels``,
``predict_tags``, ``answer``, ``embed``, ``parse``. It supports a task when it
has that method.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from glotbench.runner.datasets.base import content_hash

if TYPE_CHECKING:
    from glotbench.runner.datasets.base import Dataset, Record
    from glotbench.runner.tasks import Task


class ModelSpec(BaseModel):
    """One entry of a suite's ``models`` list.

    ``kind`` picks the adapter (``glotbench run --list-models``; the kinds are registered
    in :data:`glotbench.runner.models.registry.REGISTRY`);
    ``options`` are the adapter's keyword arguments; ``tasks`` / ``languages``
    restrict where it runs; ``metadata`` is free-form model metadata stored
    with every run (parameters, training data, ... as XTREME-R submissions);
    ``optional`` models are skipped, with a note, when their extra is missing.
    ``deterministic`` says the model's answers do not depend on the seed and
    it does not train: the runner then predicts once per process and reuses
    the predictions for the model's other iterations on the same data (their
    runs are still stored, one per seed). Leave it off for anything that
    samples (``langdetect``, generative models).
    """

    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    name: str
    kind: str
    options: dict[str, Any] = Field(default_factory=dict)
    tasks: list[str] | None = None
    languages: list[str] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    optional: bool = False
    deterministic: bool = False

    def config_hash(self) -> str:
        """Hash of the kind and the options that change answers (not how requests travel).

        Options whose default is resolved when the model loads (``chat: auto``) are
        hashed with their default when not given, so runs stored before the option
        existed are not resumed as if they had used it."""
        from glotbench.runner.models.registry import REGISTRY

        kind = REGISTRY.get(self.kind)
        skip = kind.transport if kind is not None else frozenset()
        defaults = kind.hashed_defaults if kind is not None else {}
        options = {k: v for k, v in {**defaults, **self.options}.items() if k not in skip}
        return content_hash({"kind": self.kind, "options": options})[:16]


class Model:
    """Base class of model adapters."""

    #: whether ``fit`` learns from the training split (then it runs per seed)
    trains: bool = False

    def __init__(self, name: str, **options: Any) -> None:
        self.name = name
        self.options = options

    def fit(
        self,
        task: Task,
        dataset: Dataset,
        train: Sequence[Record],
        validation: Sequence[Record],
        seed: int,
    ) -> None:
        """Train on ``train`` (possibly a bootstrap of the training split) with ``seed``."""

    def supports(self, task: Task) -> bool:
        from glotbench.runner.tasks import KIND_METHODS

        return callable(getattr(self, KIND_METHODS[task.kind], None))

    def metadata(self) -> dict[str, Any]:
        return {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"
