"""Write a result table to a file: Parquet (default) or CSV, chosen by the file name.

Large tables — such as the per-language comparison of every pair of models,
M(M − 1)/2 × L rows — belong in a columnar file rather than in JSON.
"""

from __future__ import annotations

from pathlib import Path

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
                frame.to_csv(tmp, index=False)
            else:
                frame.to_parquet(tmp, index=False)
    except (ImportError, OSError) as exc:
        raise GlotbenchError(f"cannot write {target}: {exc}") from exc
    return target
