"""Reading tidy files and locating records by physical line / row."""

from __future__ import annotations

import gzip
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from glotbench.errors import InputError
from glotbench.ingest import RowInputError, read_tidy


def test_csv_lines_account_for_blank_lines_and_multiline_fields(tmp_path: Path) -> None:
    path = tmp_path / "x.csv"
    path.write_text(
        "a,b\n"  # 1
        "1,x\n"  # 2
        "\n"  # 3 blank
        '2,"multi\n'  # 4
        'line"\n'  # 5
        "   \n"  # 6 whitespace only
        "3,y\n"  # 7
    )
    table = read_tidy(path)
    assert len(table) == 3
    assert table.frame["a"].tolist() == ["1", "2", "3"]
    assert table.lines_of([0, 1, 2]) == [2, 4, 7]


def test_csv_crlf_and_bom(tmp_path: Path) -> None:
    path = tmp_path / "x.csv"
    path.write_bytes("\ufeffa,b\r\n1,x\r\n2,y\r\n".encode())
    table = read_tidy(path)
    assert table.columns == ["a", "b"]
    assert table.lines_of([1]) == [3]


def test_gzipped_csv_and_jsonl(tmp_path: Path) -> None:
    csv_gz = tmp_path / "x.csv.gz"
    with gzip.open(csv_gz, "wt") as fh:
        fh.write('a,b\n1,x\n\n"2",y\n')
    table = read_tidy(csv_gz)
    assert table.lines_of([1]) == [4]
    jsonl_gz = tmp_path / "x.jsonl.gz"
    with gzip.open(jsonl_gz, "wt") as fh:
        fh.write('{"a": 1}\n\n{"a": 2}\n')
    table = read_tidy(jsonl_gz)
    assert table.lines_of([0, 1]) == [1, 3]
    assert table.frame["a"].tolist() == [1, 2]


def test_jsonl_keeps_types_and_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1, "b": "x"}\n\n   \n{"a": 2.5, "c": [1, 2]}\n')
    table = read_tidy(path)
    assert table.columns == ["a", "b", "c"]
    assert table.lines_of([0, 1]) == [1, 4]
    assert table.frame["b"].tolist() == ["x", None]
    assert table.frame["c"].iloc[1] == [1, 2]


def test_jsonl_invalid_and_truncated_lines(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"a": 1}\n{"a": 2,,}\n{"a": 3}\n')
    with pytest.raises(InputError) as exc:
        read_tidy(bad)
    assert (exc.value.line, exc.value.field) == (2, None)
    assert "invalid JSON" in str(exc.value)

    truncated = tmp_path / "trunc.jsonl"
    truncated.write_text('{"a": 1}\n{"a": 2}\n{"a": 3, "b": "unfinis')
    with pytest.raises(InputError) as exc:
        read_tidy(truncated)
    assert exc.value.line == 3
    assert "truncated" in str(exc.value)

    not_object = tmp_path / "list.jsonl"
    not_object.write_text('{"a": 1}\n[1, 2]\n')
    with pytest.raises(InputError, match="JSON object") as exc:
        read_tidy(not_object)
    assert exc.value.line == 2


def test_parquet_errors_name_rows(tmp_path: Path) -> None:
    path = tmp_path / "x.parquet"
    pq.write_table(pa.table({"a": [1, 2, 3]}), path)
    table = read_tidy(path)
    err = table.error("bad value", 2, "a")
    assert isinstance(err, RowInputError) and isinstance(err, InputError)
    assert err.line == 3 and err.field == "a"
    assert str(err) == f"{path}, row 3, field 'a': bad value"


def test_header_problems(tmp_path: Path) -> None:
    dup = tmp_path / "dup.csv"
    dup.write_text("a,b,a\n1,2,3\n")
    with pytest.raises(InputError, match="appears twice") as exc:
        read_tidy(dup)
    assert (exc.value.line, exc.value.field) == (1, "a")

    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(InputError, match="empty") as exc:
        read_tidy(empty)
    assert exc.value.line == 1

    header_only = tmp_path / "header.csv"
    header_only.write_text("a,b\n")
    with pytest.raises(InputError, match="no data records"):
        read_tidy(header_only)


def test_too_many_fields_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "x.csv"
    path.write_text('a,b\n1,2\n"3\n",4\n5,6,7\n')
    with pytest.raises(InputError, match="3 fields but the header has 2") as exc:
        read_tidy(path)
    assert exc.value.line == 5


def test_invalid_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "x.csv"
    path.write_bytes(b"a,b\n1,2\n3,\xff\xfe\n")
    with pytest.raises(InputError, match="UTF-8") as exc:
        read_tidy(path)
    assert exc.value.line == 3


def test_unknown_extension_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file format"):
        read_tidy(tmp_path / "x.txt")
    with pytest.raises(InputError, match="not found"):
        read_tidy(tmp_path / "missing.csv")


def test_frame_table_rows_are_one_based(tmp_path: Path) -> None:
    from glotbench.ingest import TidyTable

    table = TidyTable.from_frame(pd.DataFrame({"a": [1, 2]}))
    assert table.lines_of([0, 1]) == [1, 2]
    assert "row 2" in str(table.error("x", 1, "a"))
