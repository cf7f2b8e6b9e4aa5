"""Fixtures for the import tests: the populated store of the store tests."""

from __future__ import annotations

from ..store.conftest import _populated_template, populated_store  # noqa: F401  (fixtures)
