"""Line-per-example input files: predictions, references and score lists.

Problems are :class:`~glotbench.errors.InputError` naming the file and line.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np

from glotbench.errors import InputError
from glotbench.ingest.limits import bounded_lines


def read_examples_file(path: Path) -> list[Any]:
    r"""One example per line: JSON values for ``.jsonl``/``.json`` files, else the stripped text.

    A tag sequence in a text file is one line of whitespace-separated tags.

    Parameters
    ----------
    path : Path
        The file.

    Returns
    -------
    list
        One value per line.

    Raises
    ------
    InputError
        A line that is not valid JSON in a ``.jsonl`` file (the message names
        file and line).

    Examples
    --------
    >>> from pathlib import Path
    >>> from glotbench import api
    >>> _ = Path("pred.jsonl").write_text('["B-PER", "O"]\n["O", "O"]\n')
    >>> api.read_examples_file(Path("pred.jsonl"))
    [['B-PER', 'O'], ['O', 'O']]
    """
    opener = gzip.open if path.suffix == ".gz" else open
    suffixes = path.suffixes
    is_json = ".jsonl" in suffixes or ".json" in suffixes
    items: list[Any] = []
    try:
        with opener(path, "rt", encoding="utf-8") as fh:
            for line_number, line in bounded_lines(fh, str(path)):
                text = line.rstrip("\n")
                if not is_json:
                    items.append(text)
                    continue
                if not text.strip():
                    continue
                try:
                    items.append(json.loads(text))
                except json.JSONDecodeError as exc:
                    raise InputError(
                        f"invalid JSON ({exc.msg})", path=str(path), line=line_number
                    ) from None
    except FileNotFoundError:
        raise InputError("file not found", path=str(path)) from None
    return items


def read_scores_file(path: str | Path) -> np.ndarray:
    r"""One number per line (e.g. one score per seed, or one per-example score).

    Trailing blank lines are ignored.

    Parameters
    ----------
    path : str or Path
        The file.

    Returns
    -------
    numpy.ndarray
        The numbers, in file order.

    Raises
    ------
    InputError
        A blank line before the last number, a line that is not a number, or
        a file without numbers (the message names file and line).

    Examples
    --------
    >>> from pathlib import Path
    >>> from glotbench import api
    >>> _ = Path("seeds.txt").write_text("0.71\n0.73\n0.70\n")
    >>> api.read_scores_file("seeds.txt").tolist()
    [0.71, 0.73, 0.7]
    """
    p = Path(path)
    try:
        with open(p, encoding="utf-8") as fh:  # line by line: an over-long line is refused
            lines = [line.rstrip("\r\n") for _, line in bounded_lines(fh, str(p))]
    except FileNotFoundError:
        raise InputError("file not found", path=str(p)) from None
    except UnicodeDecodeError:
        raise InputError("not a UTF-8 text file", path=str(p)) from None
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        raise InputError("the file holds no scores; give one number per line", path=str(p))
    values = []
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text:
            raise InputError("empty line; give one number per line", path=str(p), line=number)
        try:
            value = float(text)
        except ValueError:
            raise InputError(
                f"{text[:40]!r} is not a number; give one number per line", path=str(p), line=number
            ) from None
        if not np.isfinite(value):
            raise InputError(f"{text!r} is not a finite number", path=str(p), line=number)
        values.append(value)
    return np.asarray(values, dtype=np.float64)
