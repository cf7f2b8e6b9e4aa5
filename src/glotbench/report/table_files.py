"""Write a result table to a file: Parquet (default) or CSV, chosen by the file name.

Large tables — such as the per-language comparison of every pair of models,
M(M − 1)/2 × L rows — belong in a columnar file rather than in JSON.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from glotbench.errors import GlotbenchError, InputError
from glotbench.store.atomic_files import atomic_path


def write_table(frame: pd.DataFrame | None, path: str | Path) -> Path:
    """Write ``frame`` to ``path``: CSV if it ends in ``.csv``, else Parquet; return the path."""
    if frame is None:
        raise InputError("there is no table to write", field="path")
    target = Path(path)
    if target.is_dir():
        raise InputError(f"{target} is a folder; give a file name ending in .parquet or .csv")
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        # a temporary file renamed onto the target (a symlink there is replaced)
        with atomic_path(target) as tmp:
            if target.suffix.lower() == ".csv":
                write_csv(frame, tmp)
            else:
                frame.to_parquet(tmp, index=False)
    except (ImportError, OSError) as exc:
        raise GlotbenchError(f"cannot write {target}: {exc}") from exc
    return target


#: characters that make pandas quote a field (the csv module's QUOTE_MINIMAL)
_QUOTED = '[,"\\r\\n]'


def write_csv(frame: pd.DataFrame, path: str | Path) -> None:
    """``frame.to_csv(path, index=False)``, byte for byte, formatted column-wise.

    pandas spends seconds formatting a million floats; here each float64 column
    is Python's ``repr`` text (what pandas writes; NaN as an empty field) made by
    pyarrow where that text is pyarrow's too (positional notation, 1e-4 ≤ |x| <
    1e16, with a decimal point: the same shortest round-trip digits) and by
    ``repr`` elsewhere, and pyarrow writes the rows. Tables with other column
    types, or text that pandas would quote, are written by pandas.
    """
    columns = _text_columns(frame)
    if columns is None:
        frame.to_csv(path, index=False)
        return
    import pyarrow as pa
    import pyarrow.csv as pv

    with open(path, "wb") as handle:
        handle.write((",".join(map(str, frame.columns)) + os.linesep).encode("utf-8"))
        pv.write_csv(
            pa.table(columns),
            handle,
            pv.WriteOptions(include_header=False, quoting_style="none", eol=os.linesep),
        )


def _text_columns(frame: pd.DataFrame) -> dict[str, Any] | None:
    """Each column as the text pandas writes (pyarrow arrays), or None."""
    import pyarrow as pa
    import pyarrow.compute as pc

    names = [str(c) for c in frame.columns]
    if len(frame) == 0 or len(names) < 2 or len(set(names)) != len(names):
        return None
    if pc.any(pc.match_substring_regex(pa.array(names), _QUOTED)).as_py():
        return None
    out: dict[str, Any] = {}
    for name, column in zip(names, frame.columns, strict=True):
        series = frame[column]
        dtype = series.dtype
        if dtype == np.float64:
            out[name] = _float_text(series.to_numpy())
        elif dtype == np.bool_:
            out[name] = pc.if_else(pa.array(series.to_numpy()), "True", "False")
        elif dtype == np.int64:
            out[name] = pc.cast(pa.array(series.to_numpy()), pa.string())
        elif pd.api.types.is_string_dtype(dtype) and not series.hasnans:
            try:
                text = pa.array(series, type=pa.large_string())
            except (pa.ArrowInvalid, pa.ArrowTypeError):
                return None
            if pc.any(pc.match_substring_regex(text, _QUOTED)).as_py():
                return None
            out[name] = text
        else:
            return None
    return out


def _float_text(values: np.ndarray) -> Any:
    """``repr`` of each float (NaN: null, written empty), as a pyarrow string array."""
    import pyarrow as pa
    import pyarrow.compute as pc

    text = pc.cast(pa.array(values), pa.string())
    size = np.abs(values)
    with np.errstate(invalid="ignore"):
        same = (size >= 1e-4) & (size < 1e16)
    same &= pc.match_substring(text, ".").to_numpy(zero_copy_only=False)
    same &= ~pc.match_substring(text, "e").to_numpy(zero_copy_only=False)
    nan = np.isnan(values)
    other = ~same & ~nan
    if other.any():
        text = pc.replace_with_mask(
            text, pa.array(other), pa.array([repr(v) for v in values[other].tolist()])
        )
    if nan.any():
        text = pc.if_else(pa.array(nan), pa.scalar(None, pa.string()), text)
    return text
