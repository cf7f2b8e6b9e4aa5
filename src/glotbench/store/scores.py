"""Aggregate scores in the store: the ``scores`` table, added in checked transactions.

``store.scores`` (:class:`Scores`) adds and reads them: a stored key with a
different value is a :class:`ScoreConflictError`, a key stored with the same
value is skipped, so a re-import changes nothing.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from glotbench.store.results import ScoreConflictError
from glotbench.store.schema import (
    SCORE_COLUMNS,
    ImportRecord,
    utc_now,
)
from glotbench.store.sql import Collaborator, Filter, _in_use, _where

_SCORE_TABLE_COLUMNS = SCORE_COLUMNS

#: relative tolerance under which a re-imported score equals the stored one
SCORE_RTOL = 1e-9


class Scores(Collaborator):
    """The ``scores`` table (``store.scores``): add (all at once or in checked batches)
    and read."""

    def add(self, frame: pd.DataFrame, import_meta: ImportRecord) -> tuple[int, int]:
        """Add validated scores and their import record in one transaction.

        ``frame`` has the columns of :func:`glotbench.ingest.score_validation.validate_scores`
        (model, task, language, dataset, metric, score, seed, replicate, stderr,
        n, metadata as JSON text, position, optionally import_id). Rows whose
        key is stored with the same values are skipped; a stored key with a
        different score, stderr or n raises :class:`ScoreConflictError` and
        nothing is written. Returns (added, skipped).
        """
        with self.transaction():
            added, skipped = self._add_scores(frame, import_meta.import_id)
            record = import_meta.model_copy(
                update={"added": added, "completed_at": import_meta.completed_at or utc_now()}
            )
            self._store.imports.insert(record)
        return added, skipped

    def has_any(self) -> bool:
        """Whether the scores table holds any row."""
        with self.held():
            return bool(self._con.execute("SELECT count(*) FROM scores").fetchall()[0][0])

    def check_batch(self, frame: pd.DataFrame) -> int:
        """Compare a frame of validated scores with the stored ones; write nothing.

        Raises :class:`ScoreConflictError` for the first row (by ``position``)
        whose key is stored with another value; returns how many rows are
        stored with the same values.
        """
        with self.held():
            return self._add_scores(frame, "", write=False)[1]

    def add_batch(self, frame: pd.DataFrame, import_id: str, *, check: bool = True) -> int:
        """Add one frame of scores in its own transaction; rows stored alike are skipped.

        For an import that has checked all its frames (:meth:`check_batch`)
        and recorded itself (``store.imports.start``): ``check=False`` when no key
        can be stored (the table was empty). Returns the number of rows added.
        """
        with self.transaction():
            return self._add_scores(frame, import_id, check=check)[0]

    def _add_scores(
        self, frame: pd.DataFrame, import_id: str, *, check: bool = True, write: bool = True
    ) -> tuple[int, int]:
        """Conflict check and insert; the caller holds the transaction.

        ``check=False``: the caller knows no key of ``frame`` is stored (insert
        only); ``write=False``: the check only.
        """
        con = self._con
        incoming = frame.copy()
        if "position" not in incoming:
            incoming["position"] = np.arange(len(incoming), dtype=np.int64)
        if "import_id" not in incoming:
            incoming["import_id"] = import_id
        else:
            incoming["import_id"] = incoming["import_id"].where(
                incoming["import_id"].notna(), import_id
            )
        for col in ("seed", "replicate", "n"):
            incoming[col] = incoming[col].astype("Int64")
        incoming["stderr"] = incoming["stderr"].astype(np.float64)
        for col in ("model", "task", "language", "dataset", "metric", "metadata", "import_id"):
            incoming[col] = incoming[col].astype(object)
        arrow = pa.Table.from_pandas(
            incoming[[*_SCORE_TABLE_COLUMNS, "position"]], preserve_index=False
        )
        view = f"_incoming_scores_{uuid.uuid4().hex[:8]}"
        join = (
            "s.model = i.model AND s.task = i.task AND s.language = i.language "
            "AND s.dataset = i.dataset AND s.metric = i.metric "
            "AND s.seed IS NOT DISTINCT FROM i.seed "
            "AND s.replicate IS NOT DISTINCT FROM i.replicate"
        )
        con.register(view, arrow)
        try:
            if not check:
                con.execute(
                    f"INSERT INTO scores SELECT {', '.join(_SCORE_TABLE_COLUMNS)} FROM {view} "
                    "ORDER BY position"
                )
                return len(incoming), 0
            matches = con.execute(
                f"SELECT i.position, i.score, i.stderr, i.n, s.score, s.stderr, s.n, "
                f"s.import_id, imp.source FROM {view} i JOIN scores s ON {join} "
                "LEFT JOIN imports imp ON imp.import_id = s.import_id ORDER BY i.position"
            ).fetchall()
            for pos, new_score, new_se, new_n, old_score, old_se, old_n, old_imp, src in matches:
                _check_same_score(
                    int(pos),
                    [
                        ("score", new_score, old_score),
                        ("stderr", new_se, old_se),
                        ("n", new_n, old_n),
                    ],
                    old_imp,
                    src,
                )
            if not write:
                return 0, len(matches)
            # the rows without a stored key: all but the matched positions (no second
            # join against the whole scores table)
            con.execute(
                f"INSERT INTO scores SELECT {', '.join('i.' + c for c in _SCORE_TABLE_COLUMNS)} "
                f"FROM {view} i WHERE i.position NOT IN (SELECT unnest(?::BIGINT[])) "
                "ORDER BY i.position",
                [[int(m[0]) for m in matches]],
            )
        finally:
            con.unregister(view)
        return len(incoming) - len(matches), len(matches)

    @_in_use
    def frame(
        self,
        *,
        models: Filter = None,
        tasks: Filter = None,
        languages: Filter = None,
        metrics: Filter = None,
        datasets: Filter = None,
        seeds: Filter = None,
    ) -> pd.DataFrame:
        """Aggregate scores as a tidy DataFrame; ``metadata`` is parsed into dicts."""
        where, params = _where(
            {
                "model": models,
                "task": tasks,
                "language": languages,
                "metric": metrics,
                "dataset": datasets,
                "seed": seeds,
            }
        )
        frame = self._con.sql(
            f"SELECT {', '.join(_SCORE_TABLE_COLUMNS)} FROM scores{where} "
            "ORDER BY model, task, language, dataset, metric, seed NULLS FIRST, "
            "replicate NULLS FIRST",
            params=params,
        ).df()
        frame["metadata"] = [json.loads(v) for v in frame["metadata"]]
        for col in ("seed", "replicate", "n"):
            frame[col] = frame[col].astype("Int64")
        return frame.reset_index(drop=True)


def _check_same_score(
    position: int,
    pairs: list[tuple[str, Any, Any]],
    import_id: str | None,
    source: str | None,
) -> None:
    for name, new, old in pairs:
        new_missing = new is None or (isinstance(new, float) and np.isnan(new))
        old_missing = old is None or (isinstance(old, float) and np.isnan(old))
        if new_missing and old_missing:
            continue
        same = (
            not new_missing
            and not old_missing
            and abs(float(new) - float(old)) <= SCORE_RTOL * max(abs(float(new)), abs(float(old)))
        )
        if not same:
            origin = f" by import {import_id} of {source}" if import_id else ""
            old_text = "empty" if old_missing else repr(old)
            new_text = "empty" if new_missing else repr(new)
            raise ScoreConflictError(
                f"this key is already stored with {name} = {old_text}{origin}, but the file "
                f"gives {new_text}; correct the file or import it into another store",
                position=position,
                field=name,
                existing=None if old_missing else old,
                new=None if new_missing else new,
            )
