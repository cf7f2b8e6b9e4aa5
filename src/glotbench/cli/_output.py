"""What the commands print: the two consoles, JSON documents, tables and progress bars.

The renderers of :mod:`glotbench.report` are reached through import-on-first-use
proxies (:mod:`glotbench.cli._lazy`); nothing here imports numpy, pandas or scipy
at import time.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape

from glotbench.cli._lazy import OnFirstUse
from glotbench.cli._words import cli_words

console = Console()
err_console = Console(stderr=True)


def stderr_console() -> Console:
    """The console for progress bars and messages on stderr: ``glotbench.cli.err_console``.

    Looked up on every use, so a replacement of ``glotbench.cli.err_console``
    (tests) reaches every command module.
    """
    return getattr(sys.modules.get("glotbench.cli"), "err_console", err_console)


_printed_json: list[bool] = []  # set once a command has printed its JSON document


#: documents up to this size (compact) are printed indented; larger ones compact, one line
INDENT_LIMIT = 1 << 20


def encode_json(payload: Any, indent: bool = True) -> bytes:
    """The JSON document of ``payload`` as UTF-8 bytes, ending in a newline.

    Encoded with orjson (numpy scalars and arrays as numbers, non-string keys
    as strings, anything else as ``str``; NaN and ±inf as null). A document
    under :data:`INDENT_LIMIT` bytes is indented by two spaces for reading; a
    larger one (or any with ``indent=False``) stays compact: ``json.dumps(indent=2)``
    of the 1,000-model comparison held gigabytes of strings in memory, orjson's compact bytes
    are the document's own size. Values orjson cannot encode (integers beyond
    64 bits) fall back to the standard library's encoder.
    """
    import orjson

    options = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS | orjson.OPT_APPEND_NEWLINE
    try:
        data = orjson.dumps(payload, default=str, option=options)
        if indent and len(data) <= INDENT_LIMIT:
            data = orjson.dumps(payload, default=str, option=options | orjson.OPT_INDENT_2)
        return data
    except orjson.JSONEncodeError:
        text = json.dumps(_finite(payload), indent=2, default=str, ensure_ascii=False)
        return (text + "\n").encode()


def _finite(value: Any) -> Any:
    """``value`` with NaN and ±inf floats as None, as orjson writes them (lists, dicts)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


#: tables (DataFrames in a payload) of more rows are written slice by slice, compact
STREAM_ROWS = 20_000


def _is_frame(value: Any) -> bool:
    return type(value).__name__ == "DataFrame" and hasattr(value, "iloc")


def _write(data: bytes) -> None:
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is not None:
        buffer.write(data)
    else:
        sys.stdout.write(data.decode())


def print_json(payload: Any) -> None:
    """Print a JSON document on stdout (no rich markup, no wrapping); see :func:`encode_json`.

    A top-level value that is a DataFrame is written as its records
    (:func:`glotbench.analysis.results.records`); one of more than
    :data:`STREAM_ROWS` rows makes the document compact and is encoded
    :data:`STREAM_ROWS` records at a time, so that the records of every pair
    of 1,000 models are never all in memory as Python objects.
    """
    from glotbench.analysis.results import records

    sys.stdout.flush()
    frames = isinstance(payload, dict) and any(_is_frame(v) for v in payload.values())
    if frames and any(_is_frame(v) and len(v) > STREAM_ROWS for v in payload.values()):
        _write(b"{")
        for position, (key, value) in enumerate(payload.items()):
            _write((b"," if position else b"") + encode_json(str(key), indent=False)[:-1] + b":")
            if not _is_frame(value):
                _write(encode_json(value, indent=False)[:-1])
                continue
            _write(b"[")
            for start in range(0, len(value), STREAM_ROWS):
                chunk = encode_json(records(value.iloc[start : start + STREAM_ROWS]), indent=False)
                _write((b"," if start else b"") + chunk[1:-2])
            _write(b"]")
        _write(b"}\n")
    else:
        if frames:
            payload = {k: records(v) if _is_frame(v) else v for k, v in payload.items()}
        _write(encode_json(payload))
    if getattr(sys.stdout, "buffer", None) is not None:
        sys.stdout.buffer.flush()
    _printed_json.append(True)


_tables: Any = OnFirstUse("glotbench.report.tables")
_transfer: Any = OnFirstUse("glotbench.report.transfer")


def frame_table(*args: Any, **kwargs: Any) -> Any:
    """:func:`glotbench.report.tables.frame_table`, imported on first use."""
    return _tables.frame_table(*args, **kwargs)


def leaderboard_tables(*args: Any, **kwargs: Any) -> Any:
    """:func:`glotbench.report.tables.leaderboard_tables`, imported on first use."""
    return _tables.leaderboard_tables(*args, **kwargs)


def transfer_table(*args: Any, **kwargs: Any) -> Any:
    """:func:`glotbench.report.transfer.transfer_table`, imported on first use."""
    return _transfer.transfer_table(*args, **kwargs)


def print_notes(notes: tuple[str, ...] | list[str]) -> None:
    """One ``note:`` line per note of a result."""
    for note in notes:
        console.print(f"[yellow]note:[/] {escape(cli_words(str(note)))}", highlight=False)


def speed_table(table: Any) -> Any:
    """The speed table as ScandEval shows it: tokens/s mean ± 95 % half-width."""
    import pandas as pd

    def cell(mean: Any, half: Any) -> str:
        if mean is None or mean != mean:
            return "–"
        return f"{mean:,.0f}" + (f" ± {half:,.0f}" if half is not None else "")

    trivial = "trivial (no per-token work)"  # analysis.speed.TRIVIAL_TOKENS_PER_SECOND
    rows = [
        {
            "model": r["model"],
            "tokens/s": trivial
            if r.get("trivial")
            else cell(r["tokens_per_second"], r["ci_half_width"]),
            "tokens/s (short)": trivial
            if r.get("trivial")
            else cell(r["tokens_per_second_short"], r["ci_half_width_short"]),
            "iterations": r["iterations"],
        }
        for r in table.rows
    ]
    return frame_table(
        pd.DataFrame(rows),
        title="Inference speed: GPT-2 tokens per second (ScandEval; mean ± 1.96·SD/√n over "
        "documents of ~100 … 1,000 tokens; short: ~12 … 125)",
    )


def run_with_import_progress(call: Any, label: str, json_output: bool) -> Any:
    """``call(progress)`` with a progress bar on a terminal (``call(None)`` otherwise).

    An interrupt keeps the runs written so far and exits with 130.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    err = stderr_console()
    try:
        if json_output or not err.is_terminal:
            return call(None)
        with Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=err,
            transient=True,
        ) as bar:
            task = bar.add_task(f"reading and checking {label}", total=None)

            def progress(done: int, total: int) -> None:
                bar.update(task, description="writing runs", completed=done, total=total)

            return call(progress)
    except KeyboardInterrupt:
        err.print(
            "[yellow]interrupted:[/] the runs written so far are complete and kept; "
            "run the same command again to resume",
            highlight=False,
        )
        raise typer.Exit(130) from None


def print_with_settings(payload: dict[str, Any], **settings: Any) -> None:
    """Print ``payload`` with the settings the request used, as its JSON ``settings`` object."""
    plain = {
        key: str(value) if isinstance(value, Path) else value for key, value in settings.items()
    }
    payload["settings"] = {**plain, **payload.get("settings", {})}
    print_json(payload)
