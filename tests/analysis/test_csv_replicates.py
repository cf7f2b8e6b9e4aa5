"""The column-wise CSV path of load_replicated against the per-record path.

``replicates_from_csv`` either returns what ``read_tidy`` + ``replicates_from_table``
build (bit for bit) or None (the caller then takes the per-record path). Seeded
mutations of small files check that whatever it accepts is read identically, and
that ``load_replicated``'s errors stay the per-record path's (file, line, field).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from glotbench.analysis.selection import MetricChoice, replicates_from_table
from glotbench.analysis.sources import csv_chunks
from glotbench.analysis.sources.csv_replicates import replicates_from_csv
from glotbench.analysis.sources.inputs import filter_frame, load_replicated
from glotbench.errors import InputError
from glotbench.ingest.readers import csv_header, read_tidy

pytest.importorskip("pyarrow")


def reference(path: Path) -> object:
    """What the per-record path gives: ReplicatedScores or the InputError's text."""
    try:
        table = read_tidy(path)
        return replicates_from_table(table.frame, MetricChoice.parse(None), error=table.error)
    except InputError as exc:
        return f"InputError: {exc}"


def same(a: object, b: object) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    for f in dataclasses.fields(a):  # type: ignore[arg-type]
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            if x.dtype != y.dtype or x.shape != y.shape or x.tobytes() != y.tobytes():
                return False
        elif x != y:
            return False
    return True


def base_lines(rng: np.random.Generator) -> list[str]:
    columns = ["model", "task", "language", "seed", "replicate", "score"]
    rng.shuffle(columns)
    keep = [c for c in columns if c in ("model", "language", "score") or rng.random() < 0.7]
    rows = []
    for m in rng.permutation(3):
        for t in range(2 if "task" in keep else 1):
            for lang in ("sw", "af", "yo")[: 1 + int(rng.integers(3))]:
                for s in (7, 3)[: 1 + int(rng.integers(2)) if "seed" in keep else 1]:
                    for r in range(3 if "replicate" in keep else 1):
                        value = {
                            "model": f"m{m}",
                            "task": f"t{t}",
                            "language": lang,
                            "seed": str(s),
                            "replicate": str(r),
                            "score": repr(float(rng.normal(0.7, 0.1))),
                        }
                        rows.append(",".join(value[c] for c in keep))
    return [",".join(keep), *rows]


MUTATIONS = [
    "",
    '"',
    " ",
    ",",
    "\r",
    "\n",
    "\n\n",
    "nan",
    "inf",
    "-",
    "+",
    "1e3",
    "0.5",
    "1.0",
    "\ufeff",
    "\x00",
    "\xff",
    "é",
    "  \n",
    "2",
    "9007199254740993",
    "",
    "x",
]


def mutate(lines: list[str], rng: np.random.Generator) -> str:
    lines = list(lines)
    for _ in range(int(rng.integers(0, 3))):
        i = int(rng.integers(len(lines)))
        line = lines[i]
        j = int(rng.integers(len(line) + 1))
        kind = rng.integers(5)
        piece = MUTATIONS[int(rng.integers(len(MUTATIONS)))]
        if kind == 0:  # insert
            line = line[:j] + piece + line[j:]
        elif kind == 1:  # replace a field
            fields = line.split(",")
            fields[int(rng.integers(len(fields)))] = piece
            line = ",".join(fields)
        elif kind == 2:  # duplicate a record
            lines.insert(i, line)
        elif kind == 3:  # drop a record
            line = "" if i else line
        else:  # delete a character
            line = line[:j] + line[j + 1 :]
        lines[i] = line
    ending = ["\n", "\r\n"][int(rng.integers(2))]
    text = ending.join(lines) + (ending if rng.random() < 0.8 else "")
    return ("\ufeff" if rng.random() < 0.1 else "") + text


@pytest.mark.parametrize("sizes", [None, (64, 64), (256, 48)])
@pytest.mark.parametrize("chunk", range(4))
def test_fast_path_matches_the_per_record_path_on_mutated_files(
    tmp_path: Path, chunk: int, sizes: tuple[int, int] | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Also with chunks of 64 bytes (problems in later chunks, after earlier ones) and
    chunks of 256 bytes split into parts of 48 (only the failing parts checked)."""
    if sizes is not None:
        monkeypatch.setattr(csv_chunks, "CHUNK_BYTES", sizes[0])
        monkeypatch.setattr(csv_chunks, "PART_BYTES", sizes[1])
    rng = np.random.default_rng(1000 + chunk)
    accepted = refused = 0
    for case in range(100):
        path = tmp_path / f"s{case}.csv"
        path.write_bytes(mutate(base_lines(rng), rng).encode("utf-8", "surrogatepass"))
        ref = reference(path)
        try:
            names = csv_header(path, False)
        except InputError:
            names = None
        try:
            fast: object = replicates_from_csv(path, False, names) if names is not None else None
        except InputError as exc:  # found by the fast path: the per-record path's text
            fast = f"InputError: {exc}"
            refused += 1
        if fast is not None:
            accepted += 1
            assert same(fast, ref), (case, path.read_bytes()[:400])
        try:
            got: object = load_replicated(input=path)
        except InputError as exc:
            got = f"InputError: {exc}"
        assert same(got, ref), (case, path.read_bytes()[:400])
    assert accepted - refused >= 20  # the fast path is exercised, not only the fallback
    assert refused >= 5  # and so are its errors


def filtered_reference(path: Path, filters: dict[str, list[str] | None]) -> object:
    """The per-record path with filters: every record read, the filters, the kept values."""
    try:
        table = read_tidy(path)
        frame = filter_frame(table.frame, filters)
        return replicates_from_table(frame, MetricChoice.parse(None), error=table.error)
    except InputError as exc:
        return f"InputError: {exc}"


def random_filters(rng: np.random.Generator) -> dict[str, list[str] | None]:
    """Some of model / task / language, each a few of the names (now and then one unknown)."""
    names = {"model": ["m0", "m1", "m2"], "task": ["t0", "t1"], "language": ["sw", "af", "yo"]}
    out: dict[str, list[str] | None] = {}
    for column, options in names.items():
        if rng.random() < 0.5:
            picked = [o for o in options if rng.random() < 0.5] or [options[0]]
            out[column] = picked + (["zz"] if rng.random() < 0.08 else [])
        else:
            out[column] = None
    return out


@pytest.mark.parametrize("chunk", range(3))
def test_filters_on_the_fast_path_match_the_per_record_path(
    tmp_path: Path, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mutated files with random filters: the scores or the error text of the per-record
    path (a record the filters drop may be bad: then the per-record path reads the file)."""
    import glotbench.analysis.sources.inputs as inputs_module

    filtered: list[int] = []
    original = inputs_module.filter_replicated

    def counted(scores: object, filters: object) -> object:
        filtered.append(1)
        return original(scores, filters)  # type: ignore[arg-type]

    monkeypatch.setattr(inputs_module, "filter_replicated", counted)
    rng = np.random.default_rng(2000 + chunk)
    for case in range(100):
        path = tmp_path / f"f{case}.csv"
        mutated = rng.random() < 0.5
        lines = base_lines(rng)
        text = mutate(lines, rng) if mutated else "\n".join(lines) + "\n"
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
        filters = random_filters(rng)
        ref = filtered_reference(path, filters)
        try:
            got: object = load_replicated(input=path, **{f"{k}s": v for k, v in filters.items()})
        except InputError as exc:
            got = f"InputError: {exc}"
        assert same(got, ref), (case, filters, path.read_bytes()[:400])
    assert len(filtered) >= 30  # the filters were applied on the fast path, not only per record


def test_unmutated_files_take_the_fast_path(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    for case in range(20):
        path = tmp_path / f"s{case}.csv"
        path.write_text("\n".join(base_lines(rng)) + "\n")
        fast = replicates_from_csv(path, False, csv_header(path, False))
        assert fast is not None
        assert same(fast, reference(path))


def test_gzipped_and_crlf_files_read_alike(tmp_path: Path) -> None:
    import gzip

    rng = np.random.default_rng(11)
    text = "\r\n".join(base_lines(rng)) + "\r\n"
    plain, packed = tmp_path / "s.csv", tmp_path / "s.csv.gz"
    plain.write_text(text, newline="")
    packed.write_bytes(gzip.compress(text.encode()))
    fast = replicates_from_csv(packed, True, csv_header(packed, True))
    assert fast is not None
    assert same(fast, reference(plain))
    assert same(load_replicated(input=packed), reference(packed))


def _chunked_fast_path_only(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Small chunks; the whole-file per-record reader fails the test if it is called; the
    returned list gets the number of records of each part checked per record."""
    import glotbench.analysis.replicates as replicates_module
    import glotbench.ingest.readers as readers_module

    monkeypatch.setattr(csv_chunks, "CHUNK_BYTES", 1 << 18)
    checked: list[int] = []
    check_numbers = replicates_module.check_numbers

    def counted(frame: object, error: object) -> object:
        checked.append(len(frame))  # type: ignore[arg-type]
        return check_numbers(frame, error)  # type: ignore[arg-type]

    def no_whole_file(path: object) -> object:
        raise AssertionError("the whole file was read per record")

    monkeypatch.setattr(replicates_module, "check_numbers", counted)
    monkeypatch.setattr(readers_module, "read_tidy", no_whole_file)
    return checked


def large_lines(n_models: int = 20, n_reps: int = 200) -> list[str]:
    """A well-formed file: n_models × 3 tasks × 10 languages × 1 seed × n_reps records."""
    rng = np.random.default_rng(5)
    rows = ["model,task,language,seed,replicate,score"]
    for m in range(n_models):
        for t in range(3):
            for lang in range(10):
                scores = rng.uniform(0.2, 0.9, n_reps)
                rows += [f"m{m:02d},t{t},l{lang},7,{r},{float(s)!r}" for r, s in enumerate(scores)]
    return rows


def _break_score(lines: list[str], at: int) -> None:
    lines[at] = lines[at].rsplit(",", 1)[0] + ",nan"


LARGE_CASES = {
    "score": lambda lines: _break_score(lines, -3),
    "extra field": lambda lines: lines.__setitem__(-3, lines[-3] + ",x"),
    "repeated key": lambda lines: lines.append(lines[10]),
    "seed after score": lambda lines: (
        _break_score(lines, 1000),
        lines.__setitem__(-3, lines[-3].replace(",7,", ",seven,")),
    ),
    "fewer replicates": lambda lines: lines.pop(-3),
    "invalid UTF-8": lambda lines: lines.__setitem__(-3, lines[-3].replace("t2", "t\udcff2")),
    "blank lines, repeated key": lambda lines: (
        lines.insert(50_000, ""),
        lines.insert(90_000, ""),
        lines.insert(100_000, lines[95_000]),
    ),
}


@pytest.mark.parametrize("case", sorted(LARGE_CASES))
def test_a_bad_line_near_the_end_of_a_large_file_is_named_without_a_per_record_pass(
    tmp_path: Path, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """120,000 records in chunks of 256 KiB: the problem near the end (or, seeds before
    scores, the earlier stage) is the per-record path's error, found by checking only
    the chunk that holds it per record."""
    lines = large_lines()
    LARGE_CASES[case](lines)
    path = tmp_path / "large.csv"
    path.write_bytes(("\n".join(lines) + "\n").encode("utf-8", "surrogateescape"))
    ref = reference(path)
    assert isinstance(ref, str) and "InputError" in ref
    checked = _chunked_fast_path_only(monkeypatch)
    with pytest.raises(InputError) as caught:
        load_replicated(input=path)
    assert f"InputError: {caught.value}" == ref
    # at most two chunks of about 256 KiB (~8,000 records each) were checked per record
    assert sum(checked) < len(lines) // 5


@pytest.mark.parametrize(("shape_line", "utf8_line"), [(3, 5), (5, 3), (3, 60_000), (60_000, 3)])
def test_a_malformed_record_and_invalid_utf8_are_reported_as_the_per_record_path_does(
    tmp_path: Path, shape_line: int, utf8_line: int
) -> None:
    """The per-record reader decodes ahead of the record it checks, so invalid UTF-8
    shortly after a malformed record is what it reports; far after, the record."""
    lines = large_lines(n_models=10, n_reps=200)
    lines[shape_line - 1] += ",x"
    lines[utf8_line - 1] = lines[utf8_line - 1].replace("m0", "m\udcff")
    path = tmp_path / "both.csv"
    path.write_bytes(("\n".join(lines) + "\n").encode("utf-8", "surrogateescape"))
    with pytest.raises(InputError) as caught:
        load_replicated(input=path)
    assert f"InputError: {caught.value}" == reference(path)


FEATURES = {
    "a seed written 7.0": lambda lines: lines.__setitem__(500, lines[500].replace(",7,", ",7.0,")),
    "one model without seeds": lambda lines: [
        lines.__setitem__(i, lines[i].replace(",7,", ",,"))
        for i in range(len(lines))
        if lines[i].startswith("m19,")
    ],
    "a blank language": lambda lines: [
        lines.__setitem__(i, lines[i].replace(",l3,", ", ,"))
        for i in range(len(lines))
        if lines[i].startswith("m05,t1,")
    ],
}


@pytest.mark.parametrize("case", sorted(FEATURES))
def test_values_the_fast_path_does_not_parse_are_read_per_chunk(
    tmp_path: Path, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Empty seeds, ``7.0``, blank names: the chunks holding them are read as the
    per-record path reads them (bit for bit), the others column-wise."""
    lines = large_lines()
    FEATURES[case](lines)
    path = tmp_path / "features.csv"
    path.write_text("\n".join(lines) + "\n")
    ref = reference(path)
    assert not isinstance(ref, str)
    checked = _chunked_fast_path_only(monkeypatch)
    assert same(load_replicated(input=path), ref)
    assert 0 < sum(checked) < len(lines) // 5
