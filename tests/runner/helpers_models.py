"""Importable callables for the callable-model tests (targets 'tests.runner.helpers_models:...')."""

from __future__ import annotations


def first_word(texts: list[str]) -> list[str]:
    return [t.split()[0] if t.split() else "" for t in texts]


def fails_on_boom(texts: list[str]) -> list[str]:
    for t in texts:
        if "boom" in t:
            raise RuntimeError("cannot handle this text")
    return ["pos" for _ in texts]


def make_langid(default: str = "en"):
    def predict(texts: list[str]) -> list[str]:
        return ["da" if "ikke" in t else default for t in texts]

    return predict


def sleeps(texts: list[str]) -> list[str]:
    """Holds its worker for a minute (the orphan test kills the driver meanwhile)."""
    import time

    time.sleep(60)
    return ["pos" for _ in texts]
