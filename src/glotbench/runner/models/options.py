"""A model entry's ``options`` checked against its adapter when the suite is read.

The options of a model are the keyword arguments of its adapter's
constructor, so the constructor's signature is their schema: an option the
adapter does not take is refused (with the ones it takes), and a value of
the wrong type is refused by the parameter's annotation — before any job
runs, instead of a ``TypeError`` in every job. A number written as text
(``learning_rate: "2e-5"``) is read as the number where the annotation wants
one (pydantic's lax mode: unambiguous conversions only); other values are
kept exactly as written, so a valid suite's configuration hash never changes.
"""

from __future__ import annotations

import inspect
import typing
from typing import Any

from pydantic import TypeAdapter, ValidationError

from glotbench.runner.models.registry import model_kind

#: constructor parameters the runner fills, not the suite
_RUNNER_FILLED = {"self", "name", "base"}


class OptionError(ValueError):
    """An option of a model entry is unknown or has a wrong value; ``key`` names it."""

    def __init__(self, key: str | None, message: str) -> None:
        super().__init__(message)
        self.key = key


def adapter_class(kind: str) -> Any:
    """The adapter class of ``kind`` (from the registry; an unknown kind lists the known)."""
    return model_kind(kind).adapter_class()


def option_schema(kind: str) -> tuple[dict[str, Any], bool]:
    """(option -> annotation or ``Any``, whether any other keyword is accepted) of ``kind``."""
    fixed = model_kind(kind).fixed
    init = adapter_class(kind).__init__
    params = inspect.signature(init).parameters
    try:
        hints = typing.get_type_hints(init)
    except Exception:  # noqa: BLE001 - an unresolvable annotation: names are still checked
        hints = {}
    open_ended = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    names = {
        n: hints.get(n, Any)
        for n, p in params.items()
        if n not in _RUNNER_FILLED
        and n not in fixed
        and p.kind not in (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL)
    }
    return names, open_ended


def check_options(kind: str, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` checked against the adapter of ``kind``; text that is a number where the
    adapter wants a number becomes that number. :class:`OptionError` names the bad key."""
    schema, open_ended = option_schema(kind)
    out: dict[str, Any] = {}
    for key, value in options.items():
        if key not in schema:
            if open_ended:
                out[key] = value
                continue
            raise OptionError(
                key,
                f"unknown option {key!r} of model kind {kind}; its options are "
                f"{', '.join(sorted(schema)) or 'none'}",
            )
        hint = schema[key]
        if hint is Any:
            out[key] = value
            continue
        try:
            checked = TypeAdapter(hint).validate_python(value)
        except ValidationError as exc:
            wanted = getattr(hint, "__name__", None) or str(hint).replace("typing.", "")
            raise OptionError(
                key,
                f"option {key!r} of model kind {kind} must be {wanted}, got {value!r} "
                f"({exc.errors()[0]['msg']})",
            ) from None
        except Exception:  # noqa: BLE001 - a hint pydantic cannot check: keep the value
            checked = value
        # a number written as text becomes the number; anything else stays as written
        out[key] = checked if isinstance(value, str) and not isinstance(checked, str) else value
    return out
