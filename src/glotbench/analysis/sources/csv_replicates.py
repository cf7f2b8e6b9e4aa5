"""Replicated scores from a plain tidy CSV file, read column-wise in chunks.

:func:`replicates_from_csv` is the fast path of
:func:`glotbench.analysis.sources.inputs.load_replicated` for the common file:
a CSV whose header names only ``model``, ``task``, ``language``, ``seed``,
``replicate`` and ``score`` (any order, no ``metric``) and whose data has no
quotes. It reads the file in chunks of whole lines (:mod:`.csv_chunks`), parses
each with ``pyarrow.csv`` in blocks of ``MAX_FIELD_CHARS`` bytes (a record that
does not fit in a block cannot satisfy the field limit, so the parser's refusal
is the limit check), turns each block's names into global integer codes, keeps
only those codes and the scores (24 bytes a record), and places the scores by
dense ranks, as :func:`glotbench.analysis.replicates.replicates_from_frame`
does with pandas.

Every check the per-record reader (:func:`glotbench.ingest.readers.read_tidy`)
and ``replicates_from_frame`` make is made here as a condition to go on:
field count, UTF-8, numbers that parse as integers or floats, finite scores,
duplicate keys, equal replicate counts. A chunk that fails one, or holds
values pyarrow reads otherwise than pandas (empty cells, ``7.0``, blank
names, blank-looking lines), is read with the per-record reader's own code
(:func:`.csv_chunks.chunk_error`): its records are coded from pandas' values,
or its first problem is the error, with the file line; the other chunks are
still only checked, so an error costs one column-wise pass in bounded memory.
Repeated keys and unequal replicate counts are named here as that reader names
them. Files this path cannot split into chunks (quotes, NUL, a header that is
not one plain line), filters, or keys too sparse for the presence tables
return None: the caller reads them with the per-record path. So the paths give
bit-identical results and identical errors (``tests/analysis/test_csv_replicates.py``
checks both on mutated files, in chunks of 64 bytes too).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from glotbench.analysis.replicates import (
    DUPLICATE_RECORD,
    ReplicatedScores,
    Source,
    Unit,
    unequal_replicates,
)
from glotbench.analysis.sources import csv_chunks
from glotbench.analysis.sources.csv_chunks import (
    SCORE,
    SHAPE,
    UTF8_LOOKAHEAD,
    Checked,
    Chunk,
    Found,
    NeedsPerRecord,
    chunk_error,
    chunks,
    valid_utf8_start,
)
from glotbench.errors import InputError
from glotbench.ingest.limits import MAX_FIELD_CHARS

#: the columns this path reads (others: the per-record path)
COLUMNS = frozenset({"model", "task", "language", "seed", "replicate", "score"})
_NAMES = ("model", "task", "language")
_INTS = ("seed", "replicate")
_BOM = b"\xef\xbb\xbf"
#: seeds and replicates beyond this are left to pandas' own number handling
_EXACT_INT = 2**53
#: presence tables (models × units × seeds [× replicates]) larger than this many cells
#: per record, plus a constant, go to the per-record path (sparse designs)
_CELLS_PER_RECORD = 8


class _Problem(Exception):
    """A chunk the fast path does not take: a problem, or a feature it does not parse."""


@dataclass
class _Codes:
    """A growing name -> code table (first appearance order)."""

    index: dict[Any, int] = field(default_factory=dict)

    def codes(self, values: list[Any]) -> np.ndarray:
        out = np.empty(len(values), dtype=np.int64)
        for i, value in enumerate(values):
            out[i] = self.index.setdefault(value, len(self.index))
        return out

    def keys(self) -> list[Any]:
        return list(self.index)

    def truncate(self, size: int) -> None:
        """Forget the codes given after the first ``size``."""
        for key in list(self.index)[size:]:
            del self.index[key]


def _header_ok(path: Path, gz: bool, names: list[str]) -> bool:
    """The first physical line is the header, unquoted, naming ``names`` (BOM allowed)."""
    import gzip

    opener: Any = gzip.open if gz else open
    with opener(path, "rb") as fh:
        first = fh.readline(1 << 16)
    if first.startswith(b"\xef\xbb\xbf"):
        first = first[3:]
    if b'"' in first or b"\r" in first.rstrip(b"\r\n"):
        return False
    text = first.rstrip(b"\r\n").decode("utf-8", errors="replace")
    return [h.strip() for h in text.split(",")] == names


def replicates_from_csv(path: Path, gz: bool, names: list[str]) -> ReplicatedScores | None:
    """The file's ReplicatedScores, or None when the per-record path must read it.

    ``names`` is the checked header (:func:`glotbench.ingest.readers.csv_header`).
    A file with a problem raises the per-record path's InputError (file, line, field).
    """
    if not set(names) <= COLUMNS or not {"model", "language", "score"} <= set(names):
        return None
    if not _header_ok(path, gz, names):
        return None
    try:
        return _read(path, names, gz)
    except NeedsPerRecord:
        return None


def _types(names: list[str], typed: frozenset[str] = COLUMNS) -> dict[str, Any]:
    """pyarrow column types: names dictionary-encoded, the ``typed`` numbers as numbers,
    others as text."""
    import pyarrow as pa

    types: dict[str, Any] = {}
    for c in names:
        if c not in typed:
            types[c] = pa.string()
        elif c in _NAMES:
            types[c] = pa.dictionary(pa.int32(), pa.string())
        else:
            types[c] = pa.float64() if c == "score" else pa.int64()
    return types


def _open(
    data: Any,
    names: list[str],
    types: dict[str, Any],
    skip_rows: int = 0,
    block_size: int = MAX_FIELD_CHARS,
) -> Any:
    """A pyarrow CSV reader of ``data`` (a path or a buffer) in blocks of ``block_size``
    bytes (longer records are refused)."""
    import pyarrow.csv as pv

    return pv.open_csv(
        data,
        read_options=pv.ReadOptions(
            column_names=names,
            skip_rows=skip_rows,
            block_size=block_size,
            use_threads=False,
        ),
        parse_options=pv.ParseOptions(
            quote_char=False, double_quote=False, escape_char=False, ignore_empty_lines=True
        ),
        convert_options=pv.ConvertOptions(
            column_types=types,
            null_values=[],
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
            check_utf8=True,
        ),
    )


def _batches(chunk: Chunk, names: list[str], typed: frozenset[str] = COLUMNS) -> list[Any]:
    """The chunk's record batches (one block); _Problem when it does not parse with these
    types or has a line over the field limit (the per-record path names it)."""
    import pyarrow as pa

    data = chunk.data
    if chunk.longest_line > MAX_FIELD_CHARS or b'"' in data or b"\x00" in data:
        raise _Problem
    if data.startswith(_BOM):
        raise _Problem  # pyarrow drops a byte-order mark that starts its input
    try:
        size = len(data) + 1
        reader = _open(pa.py_buffer(data), names, _types(names, typed), block_size=size)
        return [batch for batch in reader if batch.num_rows]
    except (pa.ArrowInvalid, ValueError):
        raise _Problem from None


@dataclass
class _Blocks:
    """Each block's codes (model, unit = (task, language), seed, replicate) and scores,
    and its records' lines (the first line, or each line when blank lines were skipped)."""

    models: _Codes = field(default_factory=_Codes)
    units: _Codes = field(default_factory=_Codes)
    seeds: _Codes = field(default_factory=_Codes)
    replicates: _Codes = field(default_factory=_Codes)
    columns: list[tuple[np.ndarray, ...]] = field(default_factory=list)
    lines: list[int | np.ndarray] = field(default_factory=list)
    n: int = 0

    #: some record gives a replicate (the per-record path's ``has_replicate``)
    replicate_given: bool = False

    def add(self, chunk: Chunk, names: list[str]) -> None:
        """Code the chunk's records; _Problem (nothing kept) when the fast path does not
        take the chunk."""
        tables = (self.models, self.units, self.seeds, self.replicates)
        sizes = [len(table.index) for table in tables]
        try:
            batches = _batches(chunk, names)
            columns = [self._codes(batch) for batch in batches]
        except _Problem:
            for table, size in zip(tables, sizes, strict=True):
                table.truncate(size)
            raise
        rows = sum(batch.num_rows for batch in batches)
        lines: np.ndarray | None = None
        if rows != chunk.n_lines:  # blank lines, which pyarrow skips
            present = [i for i, text in enumerate(chunk.data.splitlines()) if text]
            lines = chunk.first_line + np.asarray(present, dtype=np.int64)
        done = 0
        for batch, codes in zip(batches, columns, strict=True):
            self.columns.append(codes)
            self.lines.append(
                chunk.first_line + done if lines is None else lines[done : done + batch.num_rows]
            )
            done += batch.num_rows
        self.n += rows
        self.replicate_given |= rows > 0 and "replicate" in names

    def add_checked(self, checked: Checked) -> None:
        """Code records the per-record checks read (:class:`Checked`: pandas' values)."""
        import pandas as pd

        data = checked.frame
        if len(data) == 0:
            return

        def factors(column: str) -> tuple[np.ndarray, list[str]]:
            codes, words = pd.factorize(data[column])
            return codes, [str(word) for word in words]

        model_index, model_words = factors("model")
        model = self.models.codes(model_words).astype(np.int32)[model_index]
        unit = _unit_codes(factors("task"), factors("language"), self.units)
        zeros = np.zeros(len(data), dtype=np.int32)
        seed = _int_codes(_integers(data["seed"], -1), self.seeds) if "seed" in data else zeros
        rep = zeros
        if "replicate" in data:
            rep = _int_codes(_integers(data["replicate"], 0), self.replicates)
            self.replicate_given |= bool(data["replicate"].notna().any())
        score = data["score"].to_numpy(dtype=np.float64)
        self.columns.append((model, unit, seed, rep, score))
        self.lines.append(checked.lines)
        self.n += len(data)

    def _codes(self, batch: Any) -> tuple[np.ndarray, ...]:
        get = dict(zip(batch.schema.names, batch.columns, strict=True))
        score = get["score"].to_numpy(zero_copy_only=False)
        if not np.isfinite(score).all():
            raise _Problem
        model = _name_codes(get["model"], self.models)
        task = _dictionary(get["task"]) if "task" in get else None
        unit = _unit_codes(task, _dictionary(get["language"]), self.units)
        seed = (
            _int_codes(get["seed"].to_numpy(), self.seeds)
            if "seed" in get
            else np.zeros(len(score), dtype=np.int32)
        )
        rep = (
            _int_codes(get["replicate"].to_numpy(), self.replicates)
            if "replicate" in get
            else np.zeros(len(score), dtype=np.int32)
        )
        return model, unit, seed, rep, score

    def line(self, block: int, row: int) -> int:
        lines = self.lines[block]
        return lines + row if isinstance(lines, int) else int(lines[row])


def _dictionary(column: Any) -> tuple[np.ndarray, list[str]]:
    """(row indices, words) of a dictionary column; _Problem for words the per-record
    path has its own message or reading for (over the field limit, NUL, blank)."""
    import pyarrow as pa

    chunk = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    words = chunk.dictionary.to_pylist()
    for word in words:
        if len(word) > MAX_FIELD_CHARS or "\x00" in word or not word.strip():
            raise _Problem
    return chunk.indices.to_numpy(zero_copy_only=False), words


def _name_codes(column: Any, table: _Codes) -> np.ndarray:
    """Global codes of a dictionary column's rows."""
    indices, words = _dictionary(column)
    return table.codes(words).astype(np.int32)[indices]


def _unit_codes(
    task: tuple[np.ndarray, list[str]] | None,
    language: tuple[np.ndarray, list[str]],
    table: _Codes,
) -> np.ndarray:
    """Global codes of the rows' (task, language) pairs, each given as (row indices,
    words) (task "task" when there is no column)."""
    lang_index, lang_words = language
    if task is None:
        task_index, task_words = np.zeros(len(lang_index), dtype=np.int32), ["task"]
    else:
        task_index, task_words = task
    local = task_index.astype(np.int64) * len(lang_words) + lang_index
    seen = np.zeros(len(task_words) * len(lang_words), dtype=bool)
    seen[local] = True
    present = np.flatnonzero(seen)
    width = len(lang_words)
    lookup = np.zeros(len(seen), dtype=np.int32)
    lookup[present] = table.codes(
        [(task_words[p // width], lang_words[p % width]) for p in present]
    )
    return lookup[local]


def _integers(values: Any, missing: int) -> np.ndarray:
    """Checked seeds or replicates (pandas numbers, NaN where empty) as int64, missing ones
    ``missing``; NeedsPerRecord for values the codes do not hold exactly (±inf, ≥ 2**53)."""
    filled = values.fillna(missing).to_numpy()
    if filled.dtype.kind not in "if" or not (np.abs(filled) < _EXACT_INT).all():
        raise NeedsPerRecord
    return filled.astype(np.int64)


def _int_codes(values: np.ndarray, table: _Codes) -> np.ndarray:
    """Global codes of integers: by a presence table over their range when it is
    small (linear time: seeds and replicate indices), else by sorting."""
    low, high = int(values.min()), int(values.max())
    if low <= -_EXACT_INT or high >= _EXACT_INT:
        raise _Problem
    if high - low < max(1 << 16, len(values)):
        offset = values - low
        seen = np.zeros(high - low + 1, dtype=bool)
        seen[offset] = True
        present = np.flatnonzero(seen)
        lookup = np.zeros(len(seen), dtype=np.int32)
        lookup[present] = table.codes((present + low).tolist())
        return lookup[offset]
    uniq, inverse = np.unique(values, return_inverse=True)
    return table.codes(uniq.tolist())[inverse].astype(np.int32)


def _read_blocks(path: Path, names: list[str], gz: bool) -> _Blocks:
    """Every chunk coded, or the per-record path's first problem raised (InputError).

    A chunk the fast path does not take is checked per record (:func:`chunk_error`):
    without a problem (a feature such as empty seeds, ``3.0``, blank names), its
    records are coded from pandas' values as the per-record path reads them; from
    the first problem on, chunks are no longer kept, only checked for an
    earlier-stage problem, and a record-shape problem ends the pass (the
    per-record path meets those first).
    """
    blocks = _Blocks()
    best: Found | None = None
    parts = chunks(path, gz)
    for chunk in parts:
        if _taken(chunk, blocks, best, names):
            continue
        for offset, part in chunk.split(csv_chunks.PART_BYTES):  # the problem's part, checked alone
            if part is not chunk and _taken(part, blocks, best, names):
                continue
            found = chunk_error(part, str(path), names)
            if isinstance(found, Checked):
                if best is None:
                    blocks.add_checked(found)
                continue
            if found.stage == SHAPE:
                if found.end is not None:
                    _check_lookahead(chunk, offset + found.end, parts)
                raise found.error
            if best is None:
                blocks.columns.clear()
                blocks.lines.clear()
            if best is None or found.stage < best.stage:
                best = found
    if best is not None:
        raise best.error
    if not blocks.seeds.index:
        blocks.seeds.codes([-1])
    if not blocks.replicates.index:
        blocks.replicates.codes([0])
    return blocks


def _taken(chunk: Chunk, blocks: _Blocks, best: Found | None, names: list[str]) -> bool:
    """The chunk coded column-wise (no problem so far) or seen to hold no problem that
    comes before ``best``; else False: it needs the per-record checks."""
    if best is not None:
        return _clean(chunk, names, best.stage)
    try:
        blocks.add(chunk, names)
    except _Problem:
        return False
    return True


def _clean(chunk: Chunk, names: list[str], stage: int) -> bool:
    """The chunk surely holds no problem of a stage before ``stage``: it parses with
    the numbers of those stages typed (records, UTF-8 and field lengths checked too)."""
    typed = frozenset(c for c, s in (("seed", 2), ("replicate", 3)) if c in names and s < stage)
    assert stage <= SCORE
    try:
        _batches(chunk, names, typed)
    except _Problem:
        return False
    return True


def _check_lookahead(chunk: Chunk, end: int, parts: Any) -> None:
    """NeedsPerRecord when invalid UTF-8 follows a malformed record closely (the
    per-record reader decodes ahead and may report it instead)."""
    window = bytes(chunk.data[end : end + UTF8_LOOKAHEAD])
    while len(window) < UTF8_LOOKAHEAD:
        following = next(parts, None)
        if following is None:
            break
        window += following.data[: UTF8_LOOKAHEAD - len(window)]
    if not valid_utf8_start(window):
        raise NeedsPerRecord


def _ranks(keys: list[Any]) -> np.ndarray:
    """Rank of each code's key in sorted order (code -> position)."""
    order = sorted(range(len(keys)), key=lambda i: keys[i])
    rank = np.empty(len(keys), dtype=np.int64)
    rank[order] = np.arange(len(keys))
    return rank


def _repeated(blocks: _Blocks, keys: Any, n_keys: int, path: str) -> InputError:
    """The per-record path's error of repeated keys: at the second record (in file
    order) whose key is repeated (pandas' ``duplicated(keep=False)``, then ``[1]``)."""
    seen = np.zeros(n_keys, dtype=bool)
    twice = np.zeros(n_keys, dtype=bool)
    for block in blocks.columns:
        key = keys(block)
        twice[key[seen[key]]] = True
        unique, count = np.unique(key, return_counts=True)
        twice[unique[count > 1]] = True
        seen[key] = True
    before = 0
    for b, block in enumerate(blocks.columns):
        rows = np.flatnonzero(twice[keys(block)])
        if before + len(rows) >= 2:
            line = blocks.line(b, int(rows[1 - before]))
            return InputError(DUPLICATE_RECORD, path=path, line=line, field="replicate")
        before += len(rows)
    raise AssertionError("no repeated key")  # pragma: no cover


def _read(path: Path, names: list[str], gz: bool) -> ReplicatedScores:
    blocks = _read_blocks(path, names, gz)
    if blocks.n == 0:
        raise NeedsPerRecord
    limit = _CELLS_PER_RECORD * blocks.n + (1 << 20)
    unit_rank = _ranks(blocks.units.keys())
    units = tuple(Unit(task, language) for task, language in sorted(blocks.units.keys()))
    models = sorted(blocks.models.keys())
    model_rank = _ranks(blocks.models.keys())
    seed_rank = _ranks(blocks.seeds.keys())
    rep_rank = _ranks(blocks.replicates.keys())
    n_m, n_u, k_s, k_r = len(models), len(units), len(seed_rank), len(rep_rank)
    if n_m * n_u * k_s > limit:
        raise NeedsPerRecord

    def cells(block: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray]:
        model, unit, seed, _, _ = block
        mu = model_rank[model] * n_u + unit_rank[unit]
        return mu, mu * k_s + seed_rank[seed]

    seen_seed = np.zeros(n_m * n_u * k_s, dtype=bool)
    for block in blocks.columns:
        seen_seed[cells(block)[1]] = True
    seed_table = seen_seed.reshape(n_m * n_u, k_s)
    seed_pos = (np.cumsum(seed_table, axis=1, dtype=np.int32) - 1).ravel()
    n_seeds = int(seed_table.sum(axis=1).max())
    if n_m * n_u * n_seeds * k_r > limit:
        raise NeedsPerRecord

    def seed_cells(block: tuple[np.ndarray, ...]) -> np.ndarray:
        mu, mus = cells(block)
        return mu * n_seeds + seed_pos[mus]

    def rep_cells(block: tuple[np.ndarray, ...]) -> np.ndarray:
        return seed_cells(block) * k_r + rep_rank[block[3]]

    seen_rep = np.zeros(n_m * n_u * n_seeds * k_r, dtype=bool)
    for block in blocks.columns:
        seen_rep[rep_cells(block)] = True
    rep_table = seen_rep.reshape(-1, k_r)
    if int(rep_table.sum()) != blocks.n:
        raise _repeated(blocks, rep_cells, len(seen_rep), str(path))
    counts = rep_table.sum(axis=1)
    has_replicate = blocks.replicate_given
    full = counts[counts > 0]
    if has_replicate and full.min() != full.max():
        # the first (model, unit, seed) in sorted order with the fewest, as groupby's idxmin
        m, u = divmod(int(np.flatnonzero(counts == full.min())[0]) // n_seeds, n_u)
        message = unequal_replicates(models[m], units[u], int(full.min()), int(full.max()))
        raise InputError(message, path=str(path), line=1, field="replicate")
    n_reps = int(full.max())
    dense = bool((full == k_r).all())
    rep_pos = None if dense else (np.cumsum(rep_table, axis=1, dtype=np.int32) - 1).ravel()
    del seen_seed, seed_table
    values = np.full(n_m * n_u * n_seeds * n_reps, np.nan)
    for block in blocks.columns:
        mus_pos = seed_cells(block)
        rank = rep_rank[block[3]]
        b = rank if rep_pos is None else rep_pos[mus_pos * k_r + rank]
        values[mus_pos * n_reps + b] = block[4]
    source: Source = "replicates" if has_replicate else "seeds"
    return ReplicatedScores(
        tuple(models), units, values.reshape(n_m, n_u, n_seeds, n_reps), source, None
    )
