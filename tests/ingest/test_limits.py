"""Bounded lines and fields (issue 24, item 3).

A CSV field over 128 KiB ended in a raw ``_csv.Error`` traceback; a 2 GB line took
4.4 GB (CSV) / 6.5 GB (JSONL) of memory before failing. Now fields up to
``MAX_FIELD_CHARS`` are read, longer ones and lines over ``MAX_LINE_BYTES`` are
refused by file, line (and field) after reading at most one limit's worth.

Over-long lines are made as sparse files (``os.truncate``): no disk, no time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from glotbench.errors import InputError
from glotbench.importers.json_files import iter_jsonl, read_json_file
from glotbench.ingest.limits import MAX_FIELD_CHARS, MAX_JSON_FILE_BYTES, MAX_LINE_BYTES, MiB
from glotbench.ingest.line_files import read_examples_file, read_scores_file
from glotbench.ingest.readers import read_tidy

HEADER = "model,task,language,metric,score,note\n"


def _long_line_file(path: Path, head: str, size: int = MAX_LINE_BYTES + MiB) -> Path:
    """``head`` then one line of NUL bytes up to ``size`` bytes (sparse: costs no disk)."""
    path.write_text(head, encoding="utf-8")
    os.truncate(path, size)
    return path


def test_a_csv_field_over_128_kib_is_read(tmp_path: Path) -> None:
    note = "x" * (200 * 1024)  # the csv module's default limit is 128 KiB
    path = tmp_path / "s.csv"
    path.write_text(HEADER + f"m,t,de,accuracy,0.5,{note}\n")
    table = read_tidy(path)
    assert table.frame.loc[0, "note"] == note


@pytest.mark.parametrize("quoted_lines", [False, True])
def test_a_csv_field_over_the_limit_is_refused_by_line_and_column(
    tmp_path: Path, quoted_lines: bool
) -> None:
    if quoted_lines:  # one quoted field spanning many short lines
        note = '"' + ("y" * 1000 + "\n") * (MAX_FIELD_CHARS // 1000 + 2) + '"'
    else:
        note = "y" * (MAX_FIELD_CHARS + 1)
    path = tmp_path / "s.csv"
    path.write_text(HEADER + "m,t,de,accuracy,0.5,ok\n" + f"m,t,fr,accuracy,0.5,{note}\n")
    with pytest.raises(InputError, match="fields may have at most") as info:
        read_tidy(path)
    assert (info.value.path, info.value.line, info.value.field) == (str(path), 3, "note")


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_an_over_long_tidy_line_is_refused_by_line(tmp_path: Path, suffix: str) -> None:
    head = HEADER + "m,t,de,accuracy,0.5,ok\n" if suffix == ".csv" else '{"model": "m"}\n'
    path = _long_line_file(tmp_path / f"s{suffix}", head)
    with pytest.raises(InputError, match="longer than 64 MiB") as info:
        read_tidy(path)
    assert info.value.line == (3 if suffix == ".csv" else 2)


def test_an_over_long_header_is_refused(tmp_path: Path) -> None:
    path = _long_line_file(tmp_path / "s.csv", "model")
    with pytest.raises(InputError, match="longer than 64 MiB") as info:
        read_tidy(path)
    assert info.value.line == 1


def test_line_files_refuse_an_over_long_line(tmp_path: Path) -> None:
    path = _long_line_file(tmp_path / "scores.txt", "0.5\n0.25\n")
    with pytest.raises(InputError, match="longer than 64 MiB") as info:
        read_scores_file(path)
    assert info.value.line == 3
    jsonl = _long_line_file(tmp_path / "pred.jsonl", '"a"\n')
    with pytest.raises(InputError, match="longer than 64 MiB") as info:
        read_examples_file(jsonl)
    assert info.value.line == 2


def test_harness_jsonl_refuses_an_over_long_line(tmp_path: Path) -> None:
    path = _long_line_file(tmp_path / "samples_x_1.jsonl", '{"doc_id": 0}\n{"doc_id": 1}\n')
    with pytest.raises(InputError, match="longer than 64 MiB") as info:
        list(iter_jsonl(path))
    assert info.value.line == 3


def test_a_json_document_over_the_limit_is_refused_unread(tmp_path: Path) -> None:
    path = _long_line_file(tmp_path / "results_x.json", "{", size=MAX_JSON_FILE_BYTES + 1)
    with pytest.raises(InputError, match="at most 512 MiB"):
        read_json_file(path)
    small = tmp_path / "ok.json"
    small.write_text(json.dumps({"a": 1}))
    assert read_json_file(small) == {"a": 1}


_MEASURE = textwrap.dedent(
    """
    import resource, sys
    from glotbench.ingest.readers import read_tidy
    from glotbench.errors import InputError
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        read_tidy(sys.argv[1])
    except InputError as exc:
        print(exc.line, before, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    """
)


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_a_1_gib_line_is_refused_in_bounded_memory(tmp_path: Path, suffix: str) -> None:
    head = HEADER if suffix == ".csv" else ""
    path = _long_line_file(tmp_path / f"big{suffix}", head, size=1 << 30)
    result = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(path)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    line, before_kib, after_kib = map(int, result.stdout.split())
    assert line == (2 if suffix == ".csv" else 1)
    grown_mib = (after_kib - before_kib) / 1024
    # one line's limit read (bytes, then decoded text) — never the gigabyte
    assert grown_mib < 4 * MAX_LINE_BYTES / MiB, grown_mib
