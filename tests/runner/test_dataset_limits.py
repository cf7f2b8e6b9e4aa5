"""The runner's dataset readers read lines with the limits of ingest/limits.py (issue 24).

An over-long line is refused naming the file and line, after reading one
limit's worth of it — never the whole line (the limits are patched small so
the tests stay fast, except one at the real 64 MiB limit on a sparse file).
"""

from __future__ import annotations

import resource
from pathlib import Path

import pytest

from glotbench.errors import InputError
from glotbench.ingest.limits import MAX_FIELD_CHARS, MAX_LINE_BYTES
from glotbench.runner.datasets import conllu, load_conllu, load_table, tabular, textgen

CONLLU = """# sent_id = a1
# text = Jens bor i Oslo.
1\tJens\tJens\tPROPN\t_\t_\t2\tnsubj\t_\tname=B-PER
2\tbor\tbo\tVERB\t_\t_\t0\troot\t_\tname=O
3\ti\ti\tADP\t_\t_\t4\tcase\t_\tname=O
4\tOslo\tOslo\tPROPN\t_\t_\t2\tobl\t_\tname=B-GPE_LOC|SpaceAfter=No
5\t.\t.\tPUNCT\t_\t_\t2\tpunct\t_\tname=O

"""


def _refused(exc: pytest.ExceptionInfo[InputError], path: Path, line: int) -> None:
    assert exc.value.path == str(path)
    assert exc.value.line == line
    assert "longer than" in str(exc.value) or "characters" in str(exc.value)


def test_jsonl_line_over_the_limit_is_refused_by_file_and_line(tmp_path, monkeypatch):
    monkeypatch.setattr(tabular, "MAX_LINE_BYTES", 200)
    f = tmp_path / "d.jsonl"
    short = '{"text": "ok", "label": "a"}\n'
    f.write_text(short * 2 + '{"text": "' + "x" * 5000 + '", "label": "b"}\n' + short)
    with pytest.raises(InputError) as exc:
        load_table(f)
    _refused(exc, f, 3)
    # lines within the limit are read as before
    f.write_text(short * 3)
    assert [r["text"] for r in load_table(f)] == ["ok", "ok", "ok"]


def test_csv_line_and_field_over_the_limit_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(tabular, "MAX_LINE_BYTES", 300)
    monkeypatch.setattr(tabular, "MAX_FIELD_CHARS", 100)
    f = tmp_path / "d.csv"
    f.write_text("text,label\nok,a\n" + "y" * 1000 + ",b\nok,c\n")
    with pytest.raises(InputError) as exc:
        load_table(f)
    _refused(exc, f, 3)
    # within one line's limit, over the field limit: the field is named
    f.write_text("text,label\nok,a\nok,b\n" + "z" * 150 + ",c\n")
    with pytest.raises(InputError) as exc:
        load_table(f)
    _refused(exc, f, 4)
    assert exc.value.field == "text"
    f.write_text("text,label\nok,a\n" + "w" * 90 + ",b\n")
    assert [len(r["text"]) for r in load_table(f)] == [2, 90]


def test_csv_field_over_the_csv_modules_default_limit_is_read(tmp_path):
    """A 200 KiB field (the csv module stops at 128 KiB by default) is within glotbench's limit."""
    f = tmp_path / "d.tsv"
    f.write_text("text\tlabel\n" + "a" * (200 << 10) + "\tx\n")
    [rec] = load_table(f)
    assert len(rec["text"]) == 200 << 10 < MAX_FIELD_CHARS


def test_conllu_line_over_the_limit_is_refused_by_file_and_line(tmp_path, monkeypatch):
    monkeypatch.setattr(conllu, "MAX_LINE_BYTES", 100)
    f = tmp_path / "x.conllu"
    long = "6\t" + "q" * 500 + "\tq\tNOUN\t_\t_\t2\tobj\t_\tname=O\n"
    f.write_text(CONLLU + CONLLU.replace("a1", "a2").replace("5\t.", long + "7\t."))
    with pytest.raises(InputError) as exc:
        load_conllu(f, ner=True)
    _refused(exc, f, 15)  # 8 lines of the first sentence, 6 of the second before it
    f.write_text(CONLLU)
    [rec] = load_conllu(f, ner=True)
    assert rec["tokens"] == ["Jens", "bor", "i", "Oslo", "."]


def test_parallel_text_line_over_the_limit_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(textgen, "MAX_LINE_BYTES", 50)
    f = tmp_path / "src.txt"
    f.write_text("one\n" + "t" * 400 + "\nthree\n")
    with pytest.raises(InputError) as exc:
        textgen._lines(f)
    _refused(exc, f, 2)


def test_a_line_at_the_real_limit_is_refused_in_bounded_memory(tmp_path):
    """A 256 MiB line (a sparse file): refused at line 1 having held one limit's worth."""
    f = tmp_path / "huge.jsonl"
    with f.open("wb") as fh:
        fh.truncate(4 * MAX_LINE_BYTES)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    with pytest.raises(InputError) as exc:
        load_table(f)
    _refused(exc, f, 1)
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
    assert grown < 2 * MAX_LINE_BYTES + (64 << 20)  # never the 256 MiB line (or 4x it decoded)
