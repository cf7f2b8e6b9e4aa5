"""Errors a user can cause.

Every error a user can trigger is a :class:`GlotbenchError`; the CLI prints its
message without a traceback and exits with :attr:`GlotbenchError.exit_code`.
Messages say what went wrong *and* what to do about it.

As in scikit-learn, the errors are also the built-in exceptions they refine:
an :class:`InputError` (a bad file or argument) is a :class:`ValueError`, a
:class:`StoreError` (a store that cannot be used) a :class:`RuntimeError`, and
an :class:`UnknownMetricError` a :class:`KeyError`, so code written against the
standard library catches them without importing glotbench.

Messages speak the Python API's words: a parameter is named in keyword form,
``metric=METRIC``, ``metric='nli=accuracy'``, ``scheme='parametric'``, never as
a command-line option; the CLI shows those as its options (``--metric
nli=accuracy``; :mod:`glotbench.cli._words`). So do the notices printed while
work goes on (:func:`print_notice`, e.g. a wait for a store's lock), which the
CLI rewords the same way while a command runs (:func:`set_notice_words`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable

#: how :func:`print_notice` words a notice (None: as written, in API words)
_notice_words: Callable[[str], str] | None = None


def set_notice_words(words: Callable[[str], str] | None) -> None:
    """Reword every notice this process prints with ``words`` (None: print them as written).

    The command line sets its translation of API words into options
    (``lock_timeout=SECONDS`` → ``--lock-timeout SECONDS``) while a command runs.
    """
    global _notice_words
    _notice_words = words


def print_notice(message: str) -> None:
    """Print ``message`` on stderr as one line, worded by :func:`set_notice_words`'s ``words``.

    A notice is about the moment (waiting for another process), not a command's
    answer: while the command line records stderr for its answer cache, it is
    written past the recording (the recorder's ``unrecorded`` stream)."""
    stream = getattr(sys.stderr, "unrecorded", None) or sys.stderr
    stream.write((_notice_words or str)(message) + "\n")
    stream.flush()


class GlotbenchError(Exception):
    """Base class of all user-facing glotbench errors."""

    exit_code: int = 1

    def to_dict(self) -> dict[str, object]:
        """The error as JSON: its kind, message, exit code and where it is, if known."""
        payload: dict[str, object] = {
            "type": type(self).__name__,
            "message": str(self),
            "exit_code": self.exit_code,
        }
        for name in ("path", "line", "field"):
            value = getattr(self, name, None)
            if value is not None:
                payload[name] = value
        return payload


class InputError(GlotbenchError, ValueError):
    """A file or value supplied by the user is malformed (also a :class:`ValueError`).

    The message names where the problem is so the user can open the file at
    the right place.

    Attributes
    ----------
    path : str or None
        The file, when the problem is in one.
    line : int or None
        Its line (or row).
    field : str or None
        The column, key or parameter at fault.
    reason : str
        The message without the location.
    exit_code : int
        The command line's exit status for it (2).

    Examples
    --------
    >>> from glotbench.errors import InputError
    >>> error = InputError("score is 7; accuracy lies in [0, 1]", path="s.csv", line=3,
    ...                    field="score")
    >>> str(error)
    "s.csv, line 3, field 'score': score is 7; accuracy lies in [0, 1]"
    >>> isinstance(error, ValueError)
    True
    """

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = path
        self.line = line
        self.field = field
        self.reason = message
        where = []
        if path is not None:
            where.append(str(path))
        if line is not None:
            where.append(f"line {line}")
        if field is not None:
            where.append(f"field '{field}'")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class UnknownMetricError(GlotbenchError, KeyError):
    """A metric name that is not in the registry."""

    exit_code = 2

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0]) if self.args else "unknown metric"


class StoreError(GlotbenchError, RuntimeError):
    """The results store cannot be opened or is inconsistent (also a :class:`RuntimeError`)."""

    exit_code = 3
