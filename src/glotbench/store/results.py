"""What an import reports, shared by the store and the importers of ``glotbench.ingest``.

:class:`ImportResult` is returned by the tidy-file importers
(:mod:`glotbench.ingest.tidy`) and the snapshot importer
(:mod:`glotbench.ingest.snapshot`);
:class:`ScoreConflictError` is raised by the store when an incoming score's
key is stored with a different value.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import pandas as pd

from glotbench.errors import InputError


class ScoreConflictError(InputError):
    """A score whose key is stored with a different value.

    ``position`` is the record's index in the incoming frame; the importer turns
    it into the file's line number.
    """

    def __init__(
        self,
        message: str,
        *,
        position: int,
        field: str,
        existing: Any,
        new: Any,
    ) -> None:
        super().__init__(message, line=position + 1, field=field)
        self.position = position
        self.existing = existing
        self.new = new


ImportStatus = Literal["imported", "resumed", "skipped"]


@dataclass
class ImportResult:
    """What an import did.

    Attributes
    ----------
    kind : str
        What was imported (``scores``, ``examples``, ``api`` for a DataFrame, ...).
    source : str
        The file (or frame name).
    store : str
        The store written.
    status : {"imported", "resumed", "skipped"}
        ``imported`` (a new import), ``resumed`` (an interrupted import of the
        same file was completed) or ``skipped`` (this exact file was already
        imported; nothing was done).
    sha256 : str
        The file's content hash.
    import_id : str or None
        The import's id in the store.
    rows : int
        Rows read.
    runs_added, runs_skipped : int
        Runs written and runs already stored.
    scores_added, scores_skipped : int
        Scores written and scores already stored with the same value.
    ignored_columns : list of str
        Columns of the file glotbench does not read.
    message : str
        One line saying what happened.
    seconds : float
        Time taken.
    """

    kind: str
    source: str
    store: str
    status: ImportStatus
    sha256: str
    import_id: str | None
    rows: int = 0
    runs_added: int = 0
    runs_skipped: int = 0
    scores_added: int = 0
    scores_skipped: int = 0
    ignored_columns: list[str] = field(default_factory=list)
    message: str = ""
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_frame(self) -> pd.DataFrame:
        d = self.to_dict()
        d["ignored_columns"] = ", ".join(d["ignored_columns"])
        return pd.DataFrame([d])
