"""Hugging Face ``datasets`` loader: a local folder or a Hub id (lazy import)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from glotbench.runner.datasets.base import Record
from glotbench.runner.errors import DatasetError


def load_hf(
    path_or_id: str,
    *,
    base: Path | None = None,
    name: str | None = None,
    splits: list[str] | None = None,
    fields: dict[str, str] | None = None,
    revision: str | None = None,
) -> list[Record]:
    """Records of a Hugging Face dataset, all requested splits pooled.

    ``path_or_id`` is a folder written by ``Dataset.save_to_disk`` /
    ``DatasetDict.save_to_disk``, a folder of data files ``load_dataset`` can
    read, or a Hub id (downloaded by ``datasets``; needs a network unless it
    is cached). ``fields`` renames columns (runner name -> column name).
    Ids are ``<split>#<row>`` unless the data has an ``id`` column.
    """
    try:
        import datasets
    except ImportError:  # pragma: no cover - depends on the environment
        raise DatasetError(
            "loading Hugging Face datasets needs the 'datasets' package: pip install datasets"
        ) from None
    local = Path(path_or_id)
    if base is not None and not local.is_absolute() and (base / local).exists():
        local = base / local
    try:
        if local.is_dir() and (
            (local / "dataset_dict.json").exists() or (local / "dataset_info.json").exists()
        ):
            loaded: Any = datasets.load_from_disk(str(local))
        elif local.exists():
            loaded = datasets.load_dataset(str(local), name=name)
        else:
            loaded = datasets.load_dataset(path_or_id, name=name, revision=revision)
    except Exception as exc:  # datasets raises many types
        raise DatasetError(f"cannot load the Hugging Face dataset {path_or_id!r}: {exc}") from None
    if isinstance(loaded, datasets.Dataset):
        parts = {"train": loaded}
    else:
        parts = dict(loaded)
    wanted = splits or list(parts)
    rename = {src: dst for dst, src in (fields or {}).items()}
    records: list[Record] = []
    for split in wanted:
        if split not in parts:
            raise DatasetError(
                f"the dataset {path_or_id!r} has no split {split!r} (it has {', '.join(parts)})"
            )
        for i, row in enumerate(parts[split]):
            rec = {rename.get(k, k): v for k, v in row.items()}
            rec["id"] = str(rec["id"]) if rec.get("id") not in (None, "") else f"{split}#{i + 1}"
            records.append(rec)
    return records
