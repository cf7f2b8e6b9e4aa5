"""Errors of the benchmark runner (all :class:`~glotbench.errors.GlotbenchError`)."""

from __future__ import annotations

from glotbench.errors import GlotbenchError, InputError


class UnknownNameError(GlotbenchError):
    """An unknown task, model kind, loader, suite or language."""

    exit_code = 2


class DatasetError(InputError):
    """A dataset cannot be loaded or split (empty split, label missing from train, ...)."""


class ModelError(GlotbenchError):
    """A model failed to train or to predict (the message names the item when it can)."""

    exit_code = 4


class JobError(GlotbenchError):
    """One or more jobs of a benchmark run failed; the others were stored."""

    exit_code = 5
