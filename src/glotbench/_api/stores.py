"""The store functions of :mod:`glotbench.api`.

Opening, importing into, showing and exporting a store.

Imported into :mod:`glotbench.api`, the public facade; use them from there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from glotbench.ingest import (
    ImportResult,
    add_scores_frame,
    import_examples_file,
    import_scores_file,
)
from glotbench.ingest.snapshot import import_snapshot
from glotbench.ingest.tidy import open_store_for_import
from glotbench.store import Store, StoreSummary
from glotbench.store.exports import ExportResult
from glotbench.store.layout import DEFAULT_STORE_PATH


def open_store(
    store: str | Path = DEFAULT_STORE_PATH,
    *,
    read_only: bool = False,
    hold: bool = True,
    lock_timeout: float | None = None,
) -> Store:
    """Open (or create, unless ``read_only``) a results store; use it as a context manager.

    Parameters
    ----------
    store : str or Path, default ``glotbench.duckdb``
        The store's DuckDB file.
    read_only : bool, default False
        Open for reading only (the file must exist; nothing is migrated).
    hold : bool, default True
        Hold the lock while the store is open; ``False`` locks the file only
        while it is read or written (``docs/store.md``, Concurrency).
    lock_timeout : float, optional
        Seconds to wait for a store another process holds (default:
        :func:`set_lock_timeout`'s, else ``$GLOTBENCH_LOCK_TIMEOUT``, else 60;
        every function here that opens a store takes ``lock_timeout`` too).

    Returns
    -------
    Store
        The open store; ``with`` closes it and releases the lock.

    Raises
    ------
    StoreError
        The file is not a glotbench store, was written by a newer version, or
        stays locked past ``lock_timeout``.

    Examples
    --------
    >>> from glotbench import api
    >>> with api.open_store("empty.duckdb") as store:
    ...     store.summary().counts["scores"]
    0
    """
    return Store.open(store, read_only=read_only, hold=hold, lock_timeout=lock_timeout)


def import_scores(
    path: str | Path,
    *,
    store: str | Path = DEFAULT_STORE_PATH,
    lock_timeout: float | None = None,
    allow_unknown_metrics: bool = False,
    percent: bool = False,
) -> ImportResult:
    """Import a tidy scores file (CSV / JSONL / Parquet), streamed in chunks.

    Every row is validated and compared with the store before anything is
    written; then rows are added in batches (an interrupted import is
    completed by running it again). Re-importing the same file is a no-op
    (``status == "skipped"``); rows already stored with the same values are
    skipped.

    Parameters
    ----------
    path : str or Path
        The scores file: one row per score with the columns ``model``,
        ``task``, ``language``, ``metric``, ``score`` and optionally
        ``dataset``, ``seed``, ``replicate``, ``stderr`` (``docs/formats.md``).
    store : str or Path, default ``glotbench.duckdb``
        The store to import into (created if absent).
    lock_timeout : float, optional
        As in :func:`open_store`.
    allow_unknown_metrics : bool, default False
        Store scores of metrics glotbench does not know (no range check).
    percent : bool, default False
        The file gives 0–1 metrics in percent (divided by 100 on import;
        BLEU/chrF are 0–100 anyway).

    Returns
    -------
    ImportResult
        ``status`` (``imported`` or ``skipped``), ``scores_added``,
        ``scores_skipped``, ``ignored_columns`` and a ``message``.

    Raises
    ------
    InputError
        A malformed row (the message names file, line and field), or a key
        stored with a different value; nothing is written then.

    Examples
    --------
    ``scores.csv`` holds 27 accuracy scores: 3 models × 3 languages × 3 seeds.

    >>> from glotbench import api
    >>> result = api.import_scores("scores.csv", store="results.duckdb")
    >>> result.status, result.scores_added
    ('imported', 27)
    >>> api.import_scores("scores.csv", store="results.duckdb").status  # the same file again
    'skipped'
    """
    with open_store_for_import(store, lock_timeout=lock_timeout) as s:
        return import_scores_file(
            s, path, allow_unknown_metrics=allow_unknown_metrics, percent=percent
        )


def import_examples(
    path: str | Path,
    *,
    store: str | Path = DEFAULT_STORE_PATH,
    lock_timeout: float | None = None,
    labels: Sequence[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ImportResult:
    r"""Import a tidy per-example file: validated first, then one transaction per run.

    Runs already complete in the store are skipped, so repeating an
    interrupted import completes it.

    Parameters
    ----------
    path : str or Path
        The per-example file (CSV / JSONL / Parquet): one row per example with
        ``model``, ``task``, ``language``, ``metric``, an ``example_id`` and the
        metric's statistics or a per-example ``score`` (``docs/formats.md``).
    store : str or Path, default ``glotbench.duckdb``
        The store to import into (created if absent).
    lock_timeout : float, optional
        As in :func:`open_store`.
    labels : sequence of str, optional
        The label set of label-count metrics (macro-F1, MCC, ...), e.g.
        ``["POS", "NEG"]``; otherwise read from the ``tp[LABEL]`` column names.
    progress : callable, optional
        Called with (runs done, runs in all) after each run.

    Returns
    -------
    ImportResult
        ``status``, ``runs_added``, ``runs_skipped`` and a ``message``.

    Raises
    ------
    InputError
        A malformed row or statistics that break the metric's constraints (the
        message names file, line and field); nothing is written then.

    See Also
    --------
    import_scores : One score per row instead of per-example statistics.

    Examples
    --------
    Per-example accuracy of one model on six examples (``score`` is 1 when the
    example is right):

    >>> from pathlib import Path
    >>> from glotbench import api
    >>> rows = ["model,task,language,metric,seed,example_id,score"]
    >>> rows += [f"xlmr,sentiment,da,accuracy,0,{i},{i % 3 > 0:d}" for i in range(6)]
    >>> _ = Path("examples.csv").write_text("\n".join(rows) + "\n")
    >>> result = api.import_examples("examples.csv", store="examples.duckdb")
    >>> result.status, result.runs_added
    ('imported', 1)
    """
    with open_store_for_import(store, lock_timeout=lock_timeout) as s:
        return import_examples_file(s, path, labels=labels, progress=progress)


def import_parquet(
    path: str | Path,
    *,
    store: str | Path = DEFAULT_STORE_PATH,
    lock_timeout: float | None = None,
) -> ImportResult:
    """Merge a Parquet snapshot written by :func:`export_store` into ``store``.

    Rows the store already holds are skipped, so merging the same snapshot
    twice adds nothing.

    Parameters
    ----------
    path : str or Path
        The snapshot folder (``export_store(out, table="all")`` with a folder
        ``out`` writes one Parquet file per table).
    store : str or Path, default ``glotbench.duckdb``
        The store to merge into (created if absent).
    lock_timeout : float, optional
        As in :func:`open_store`.

    Returns
    -------
    ImportResult
        ``status``, the rows added and skipped, and a ``message``.

    Raises
    ------
    InputError
        The folder is not a glotbench snapshot, or a key is stored with a
        different value.

    See Also
    --------
    export_store : Write the snapshot.

    Examples
    --------
    >>> from glotbench import api
    >>> _ = api.import_scores("scores.csv", store="a.duckdb")
    >>> _ = api.export_store("snapshot", store="a.duckdb", table="all")
    >>> api.import_parquet("snapshot", store="b.duckdb").scores_added
    27
    """
    with open_store_for_import(store, lock_timeout=lock_timeout) as s:
        return import_snapshot(s, Path(path))


def add_scores(
    frame: pd.DataFrame,
    *,
    store: str | Path = DEFAULT_STORE_PATH,
    lock_timeout: float | None = None,
    source: str = "<DataFrame>",
    allow_unknown_metrics: bool = False,
) -> ImportResult:
    """Add a DataFrame of scores (the columns of a scores file) in one transaction.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per score with the columns of a scores file (``model``,
        ``task``, ``language``, ``metric``, ``score``, optionally ``seed``,
        ``replicate``, ``dataset``, ``stderr``; ``docs/formats.md``).
    store : str or Path, default ``glotbench.duckdb``
        The store to add to (created if absent).
    lock_timeout : float, optional
        As in :func:`open_store`.
    source : str, default ``"<DataFrame>"``
        The name error messages and the import record give the frame.
    allow_unknown_metrics : bool, default False
        Store scores of metrics glotbench does not know (no range check).

    Returns
    -------
    ImportResult
        As :func:`import_scores` returns it.

    Raises
    ------
    InputError
        A malformed row (the message names ``source``, row and column).

    Examples
    --------
    >>> import pandas as pd
    >>> from glotbench import api
    >>> frame = pd.DataFrame({"model": ["xlmr", "mbert"], "task": "sentiment",
    ...                       "language": "da", "metric": "accuracy", "score": [0.71, 0.66]})
    >>> api.add_scores(frame, store="frame.duckdb").scores_added
    2
    """
    with open_store_for_import(store, lock_timeout=lock_timeout) as s:
        return add_scores_frame(
            s, frame, source=source, allow_unknown_metrics=allow_unknown_metrics
        )


def show_store(
    store: str | Path = DEFAULT_STORE_PATH, *, lock_timeout: float | None = None
) -> StoreSummary:
    """What the store holds: counts and a per (model, task, language) table.

    Parameters
    ----------
    store : str or Path, default ``glotbench.duckdb``
        The store (opened read-only; it must exist).
    lock_timeout : float, optional
        As in :func:`open_store`.

    Returns
    -------
    StoreSummary
        ``counts`` (rows per table) and ``by_model_task_language`` (one row
        per model, task and language; also ``.to_frame()``).

    Raises
    ------
    StoreError
        No store at ``store``, or it is not a glotbench store.

    Examples
    --------
    >>> from glotbench import api
    >>> _ = api.import_scores("scores.csv", store="show.duckdb")
    >>> summary = api.show_store("show.duckdb")
    >>> summary.counts["scores"], len(summary.by_model_task_language)
    (27, 9)
    """
    with Store.open(store, read_only=True, lock_timeout=lock_timeout) as s:
        return s.summary()


def store_content_digest(
    store: str | Path = DEFAULT_STORE_PATH, *, lock_timeout: float | None = None
) -> str:
    """SHA-256 of everything the store holds: the key of its analysis cache.

    Any write — a run written, replaced or deleted, scores imported, a
    failure, metadata, attributes, kept outputs — changes it; reading does
    not. The command line keeps each ``analyze`` answer under it
    (``docs/analysis-cache.md``); a script can key its own results the same
    way. Computed in DuckDB, one scan per table
    (:func:`glotbench.store.analysis_cache.content_digest`).

    Parameters
    ----------
    store : str or Path, default ``glotbench.duckdb``
        The store (opened read-only; it must exist).
    lock_timeout : float, optional
        As in :func:`open_store`.

    Returns
    -------
    str
        64 hexadecimal digits.

    Raises
    ------
    StoreError
        No store at ``store``, or it is not a glotbench store.

    Examples
    --------
    >>> from glotbench import api
    >>> _ = api.import_scores("scores.csv", store="digest.duckdb")
    >>> before = api.store_content_digest("digest.duckdb")
    >>> before == api.store_content_digest("digest.duckdb")
    True
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"model": ["m"], "task": "t", "language": "de",
    ...                       "metric": "accuracy", "score": [0.5]})
    >>> _ = api.add_scores(frame, store="digest.duckdb")
    >>> api.store_content_digest("digest.duckdb") == before
    False
    """
    from glotbench.store.analysis_cache import store_fingerprint

    with Store.open(store, read_only=True, lock_timeout=lock_timeout) as s:
        return store_fingerprint(s)


def export_store(
    out: str | Path,
    *,
    store: str | Path = DEFAULT_STORE_PATH,
    lock_timeout: float | None = None,
    table: str = "all",
    keep_formulas: bool = False,
) -> ExportResult:
    """Export table(s) to CSV or Parquet (see ``store.exports.write`` for the file names).

    Parameters
    ----------
    out : str or Path
        A file (``.csv`` or ``.parquet``) for one table, or a folder that gets
        one file per table.
    store : str or Path, default ``glotbench.duckdb``
        The store (opened read-only).
    lock_timeout : float, optional
        As in :func:`open_store`.
    table : str, default ``"all"``
        ``scores``, ``runs``, ``examples`` (and the store's other tables), or
        ``all``.
    keep_formulas : bool, default False
        Keep CSV text cells that a spreadsheet would run as a formula as they
        are; otherwise they get a leading apostrophe.

    Returns
    -------
    ExportResult
        ``store``, ``table`` and the ``files`` written.

    Raises
    ------
    StoreError
        No store at ``store``.

    See Also
    --------
    import_parquet : Merge an exported folder into another store.

    Examples
    --------
    >>> import pandas as pd
    >>> from glotbench import api
    >>> _ = api.import_scores("scores.csv", store="export.duckdb")
    >>> result = api.export_store("scores-out.csv", store="export.duckdb", table="scores")
    >>> len(pd.read_csv(result.files[0]))
    27
    """
    with Store.open(store, read_only=True, lock_timeout=lock_timeout) as s:
        files = s.exports.write(out, table=table, keep_formulas=keep_formulas)
    return ExportResult(store=str(store), table=table, files=[str(f) for f in files])


def import_shards(
    folder: str | Path,
    *,
    store: str | Path = DEFAULT_STORE_PATH,
    lock_timeout: float | None = None,
    progress: Any = None,
) -> Any:
    """Merge the Parquet shards of ``folder`` (one per job) into ``store``; idempotent.

    Parameters
    ----------
    folder : str or Path
        The shard folder a run with ``shards=folder, merge=False`` wrote.
    store : str or Path, default ``glotbench.duckdb``
        The store to merge into (created if absent).
    lock_timeout : float, optional
        As in :func:`open_store`.
    progress : callable, optional
        Called with (shards done, shards in all).

    Returns
    -------
    ShardMerge
        A :class:`~glotbench.ingest.shards.ShardMerge`: the runs merged and
        skipped (already in the store).

    See Also
    --------
    run_benchmark : Writes the shards (``shards``, ``merge``).

    Examples
    --------
    >>> from glotbench import api
    >>> _ = api.run_benchmark(None, data=["da.jsonl"], tasks=["sentiment"], languages=["da"],
    ...                       models=["majority:"], iterations=2, speed=False,
    ...                       store="worker.duckdb", shards="shards", merge=False)
    >>> merge = api.import_shards("shards", store="merged.duckdb")
    >>> merge.merged, api.import_shards("shards", store="merged.duckdb").merged
    (2, 0)
    """
    from glotbench.ingest.shards import merge_shards

    with open_store_for_import(store, lock_timeout=lock_timeout) as s:
        return merge_shards(s, folder, progress=progress)
