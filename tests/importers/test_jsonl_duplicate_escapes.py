"""Repeated JSON keys stay an error on the fast (orjson) JSONL path, whatever the escapes."""

from __future__ import annotations

import json

import pytest

from glotbench.errors import InputError
from glotbench.importers.json_files import iter_jsonl, iter_jsonl_blocks
from glotbench.ingest.readers import unique_keys

BAD = [
    '{"doc_id": 1, "acc": 1, "acc": 0}',
    '{"doc_id": 1, "doc": {"a": 1, "a" : 2}}',
    '{"doc_id": 1, "acc"\r: 1, "acc": 0}',
    '{"doc_id": 1, "t": "\\u0022: ", "acc": 1, "acc": 0}',
    # an escaped quote followed by an escaped colon: re-serialised as \": it adds one
    # key end that the raw text lacks and would hide the repeated key
    '{"doc_id": 1, "t": "x\\"\\u003a y", "acc": 1, "acc": 0}',
    '{"doc_id": 1, "t": "x\\"\\u003A y", "acc": 1, "acc": 0}',
]


def _file(tmp_path, bad: str):
    good = [json.dumps({"doc_id": i, "t": 'a "b": c', "acc": 1.0}) for i in range(40)]
    lines = [*good[:30], bad, *good[30:]]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("bad", BAD)
def test_repeated_key_is_an_error_naming_line_and_field(tmp_path, bad):
    with pytest.raises(Exception) as stdlib:  # the reference: the hook-based stdlib parser
        json.loads(bad, object_pairs_hook=unique_keys)
    assert type(stdlib.value).__name__ == "DuplicateKeyError"
    path = _file(tmp_path, bad)
    for read in (lambda: list(iter_jsonl(path)), lambda: list(iter_jsonl_blocks(path))):
        with pytest.raises(InputError) as err:
            read()
        assert err.value.line == 31
        assert "appears twice" in str(err.value)


def test_escaped_colons_without_repeats_are_read_as_the_stdlib_reads_them(tmp_path):
    line = '{"doc_id": 1, "t": "x\\"\\u003a y", "acc": 1}'
    path = _file(tmp_path, line)
    got = dict(iter_jsonl(path))
    assert got[31] == json.loads(line)
