"""Benchmark runner: datasets, tasks, model adapters, replication protocol, executors.

Data flows one way: the runner evaluates models and writes per-example
statistics to the store; analyses read the store. See ``docs/runner.md``.
"""

from glotbench.runner.errors import DatasetError, JobError, ModelError, UnknownNameError

__all__ = ["DatasetError", "JobError", "ModelError", "UnknownNameError"]
