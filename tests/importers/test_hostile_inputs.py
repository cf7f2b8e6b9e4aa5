"""Inputs that used to be accepted silently are refused by file, line and field (issue 24, item 5).

* wrong JSON types are refused, never converted with ``str()`` (lm-eval ``"0.5"``,
  a EuroEval model given as an object);
* names are NFC-normalised, and refused with a control, bidi or zero-width character;
* a file name that is no language code (XTREME ``test-..tsv``) is refused;
* a key given twice in a YAML suite is refused; suite paths stay inside --data-dir.
"""

from __future__ import annotations

import json
import os
import shutil
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from glotbench.errors import InputError
from glotbench.importers.euroeval import import_euroeval
from glotbench.importers.lm_eval import import_lm_eval
from glotbench.importers.xtreme import import_xtreme
from glotbench.ingest.tidy import import_scores_file
from glotbench.ingest.yaml_files import load_yaml
from glotbench.runner.suite import load_suite
from glotbench.store import Store
from glotbench.store.names import MAX_NAME_CHARS, check_name

from .conftest import FIXTURES, LM_EVAL_OUT

LEGACY = FIXTURES / "euroeval" / "euroeval_benchmark_results.jsonl"
EEE = FIXTURES / "euroeval" / "euroeval_v17_eee_results.jsonl"
XT = FIXTURES / "xtreme"
#: every character the name check must refuse, with why
INVISIBLE = [
    "\u202a", "\u202b", "\u202c", "\u202d", "\u202e",  # bidi embeddings and overrides
    "\u2066", "\u2067", "\u2068", "\u2069",  # bidi isolates
    "\u200b", "\u200c", "\u200d", "\ufeff", "\u2060",  # zero width
    "\u200e", "\u200f", "\u061c",  # bidi marks
]  # fmt: skip
CONTROL = ["\x00", "\t", "\n", "\x1b", "\x7f", "\x85", "\x9f"]


def _store_count(store: Store) -> tuple[int, int]:
    return len(store.runs.frame()), len(store.scores.frame())


# ---------------------------------------------------------------- wrong JSON types


def _lm_eval_with_result(tmp_path: Path, value: object) -> tuple[Path, str]:
    root = tmp_path / "out"
    shutil.copytree(LM_EVAL_OUT, root)
    results = sorted((root / "tiny-gpt2").glob("results_*.json"))[0]
    data = json.loads(results.read_text())
    task = sorted(data["results"])[0]
    key = sorted(k for k in data["results"][task] if "," in k and "_stderr" not in k)[0]
    data["results"][task][key] = value
    results.write_text(json.dumps(data))
    return root, f"results.{task}.{key}"


@pytest.mark.slow
@pytest.mark.parametrize("value", ["0.5", [0.5], {"v": 0.5}, "", "N/A"])
def test_lm_eval_result_given_as_text_is_refused(
    store: Store, tmp_path: Path, value: object
) -> None:
    root, field = _lm_eval_with_result(tmp_path, value)
    if value in ("", "N/A"):  # lm-eval's own "no value" placeholders are skipped
        import_lm_eval(store, root)
        return
    with pytest.raises(InputError) as info:
        import_lm_eval(store, root)
    assert info.value.field == field and info.value.path.endswith(".json")
    assert "JSON number" in str(info.value)
    assert _store_count(store) == (0, 0)


def test_lm_eval_model_name_given_as_an_object_is_refused(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "out"
    shutil.copytree(LM_EVAL_OUT, root)
    for results in (root / "tiny-gpt2").glob("results_*.json"):
        data = json.loads(results.read_text())
        data["model_name"] = {"a": 1}
        results.write_text(json.dumps(data))
    with pytest.raises(InputError, match="must be text, got dict") as info:
        import_lm_eval(store, root)
    assert info.value.field == "model_name"


@pytest.mark.parametrize("layout", ["legacy", "eee"])
@pytest.mark.parametrize("value", [{"a": 1}, ["m"], 7, True])
def test_euroeval_model_given_as_non_text_is_refused(
    store: Store, tmp_path: Path, layout: str, value: object
) -> None:
    source = LEGACY if layout == "legacy" else EEE
    lines = [json.loads(x) for x in source.read_text().splitlines() if x.strip()]
    if layout == "legacy":
        lines[1]["model"] = value
        field = "model"
    else:
        lines[1]["model_info"]["id"] = value
        field = "model_info.id"
    file = tmp_path / source.name
    file.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    with pytest.raises(InputError, match="must be text") as info:
        import_euroeval(store, file)
    assert info.value.field == field and info.value.line is not None
    assert _store_count(store) == (0, 0)
    assert (
        "{'a': 1}" not in set(store.scores.frame()["model"]) if len(store.scores.frame()) else True
    )


# ---------------------------------------------------------------- names


@pytest.mark.parametrize("char", INVISIBLE + CONTROL)
def test_the_name_check_refuses_invisible_and_control_characters(char: str) -> None:
    with pytest.raises(InputError, match="invisible|control") as info:
        check_name(f"mBERT{char}x", "model", path="f.csv", line=3, field="model")
    assert (info.value.path, info.value.line, info.value.field) == ("f.csv", 3, "model")


def test_the_name_check_normalises_and_bounds() -> None:
    decomposed = "Mu\u0308ller-e\u0301"  # u + combining diaeresis, e + combining acute
    assert check_name(decomposed, "model") == unicodedata.normalize("NFC", decomposed)
    assert check_name("  xlm-r ", "model") == "xlm-r"
    assert check_name("m" * MAX_NAME_CHARS, "model") == "m" * MAX_NAME_CHARS
    with pytest.raises(InputError, match="at most 256"):
        check_name("m" * (MAX_NAME_CHARS + 1), "model")
    with pytest.raises(InputError, match="must be text, got int"):
        check_name(5, "model")


@pytest.mark.parametrize("char", ["\u202e", "\u200b", "\ufeff"])
def test_tidy_scores_with_an_invisible_character_are_refused_by_line(
    store: Store, tmp_path: Path, char: str
) -> None:
    path = tmp_path / "s.csv"
    path.write_text(
        f"model,task,language,metric,score\nmBERT,xnli,de,accuracy,0.5\nmBERT{char},xnli,fr,"
        "accuracy,0.6\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError, match="invisible") as info:
        import_scores_file(store, path)
    assert (info.value.line, info.value.field) == (3, "model")
    assert _store_count(store) == (0, 0)


def test_tidy_names_are_stored_nfc(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    path.write_text(
        "model,task,language,metric,score\nCafe\u0301,xnli,de,accuracy,0.5\n"
        "Caf\u00e9,xnli,fr,accuracy,0.6\n",
        encoding="utf-8",
    )
    import_scores_file(store, path)
    assert set(store.scores.frame()["model"]) == {"Caf\u00e9"}  # one model, not two that look alike


def test_a_1_mb_model_name_in_jsonl_is_refused(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    record = {"model": "m" * 1_000_000, "task": "x", "language": "de", "metric": "accuracy"}
    path.write_text(json.dumps({**record, "score": 0.5}) + "\n")
    with pytest.raises(InputError, match="at most 256") as info:
        import_scores_file(store, path)
    assert (info.value.line, info.value.field) == (1, "model")


def test_lm_eval_names_with_a_zero_width_space_are_refused(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "out"
    shutil.copytree(LM_EVAL_OUT, root)
    for results in (root / "tiny-gpt2").glob("results_*.json"):
        data = json.loads(results.read_text())
        data["model_name"] = "tiny-gpt2\u200b"
        results.write_text(json.dumps(data))
    with pytest.raises(InputError, match="U\\+200B") as info:
        import_lm_eval(store, root)
    assert info.value.field == "model_name"
    with pytest.raises(InputError, match="U\\+202E"):
        import_lm_eval(store, LM_EVAL_OUT, model="gpt\u202e2")


def test_euroeval_language_with_a_bidi_override_is_refused(store: Store, tmp_path: Path) -> None:
    lines = [json.loads(x) for x in LEGACY.read_text().splitlines() if x.strip()]
    lines[0]["languages"] = ["d\u202ea"]
    file = tmp_path / LEGACY.name
    file.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    with pytest.raises(InputError, match="U\\+202E") as info:
        import_euroeval(store, file)
    assert (info.value.line, info.value.field) == (1, "languages")


# ---------------------------------------------------------------- language codes


@pytest.mark.parametrize("bad", [".", "..", "e", "en gb", "x" * 9, "de-"])
def test_xtreme_file_name_that_is_no_language_code_is_refused(
    store: Store, tmp_path: Path, bad: str
) -> None:
    pred, gold = tmp_path / "pred", tmp_path / "gold"
    shutil.copytree(XT / "predictions", pred)
    shutil.copytree(XT / "labels", gold)
    task = sorted(p for p in pred.iterdir() if p.is_dir())[0]
    source = sorted(task.glob("test-*.*"))[0]
    ext = source.name.split(".", 1)[1]
    shutil.copy(source, task / f"test-{bad}.{ext}")
    with pytest.raises(InputError, match="not a language code") as info:
        import_xtreme(store, pred, gold, model="sub")
    assert info.value.path == str(task / f"test-{bad}.{ext}")
    assert _store_count(store) == (0, 0)


# ---------------------------------------------------------------- YAML and suite paths


def _suite(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(text)
    return path


SUITE = """\
name: s
needs_data_dir: true
datasets:
  - name: d
    task: sentiment
    language: da
    loader: table
    paths: [{path}]
models:
  - name: majority
    kind: majority
"""


def test_a_suite_with_a_key_twice_is_refused(tmp_path: Path) -> None:
    text = SUITE.format(path="x.csv") + "models:\n  - name: other\n    kind: majority\n"
    with pytest.raises(InputError, match="'models' appears twice") as info:
        load_suite(_suite(tmp_path, text), data_dir=tmp_path)
    assert (info.value.line, info.value.field) == (12, "models")


def test_a_nested_yaml_key_twice_is_refused_but_merge_keys_may_be_overridden() -> None:
    with pytest.raises(InputError) as info:
        load_yaml("a:\n  b: 1\n  c: 2\n  b: 3\n", "x.yaml")
    assert (info.value.line, info.value.field) == (4, "b")
    merged = load_yaml("base: &b {x: 1, y: 2}\nthis:\n  <<: *b\n  x: 3\n")
    assert merged["this"] == {"x": 3, "y": 2}


@pytest.mark.parametrize("bad", ["../../../tmp/x.csv", "/etc/passwd", "a/../../x.csv"])
def test_suite_paths_may_not_leave_the_data_dir(tmp_path: Path, bad: str) -> None:
    data = tmp_path / "data"
    data.mkdir()
    path = _suite(tmp_path, SUITE.format(path=json.dumps(bad)))
    with pytest.raises(InputError, match="leaves data_dir") as info:
        load_suite(path, data_dir=data)
    assert info.value.field == "datasets[0].paths"
    allowed = _suite(tmp_path, "allow_outside_paths: true\n" + SUITE.format(path=json.dumps(bad)))
    assert load_suite(allowed, data_dir=data).allow_outside_paths
    inside = _suite(tmp_path, SUITE.format(path="sub/../x.csv"))
    assert load_suite(inside, data_dir=data).datasets[0].paths == ["sub/../x.csv"]


def test_suite_model_names_pass_the_name_check(tmp_path: Path) -> None:
    text = SUITE.format(path="x.csv").replace("name: majority", 'name: "majority\\u200b"')
    with pytest.raises(InputError, match="U\\+200B") as info:
        load_suite(_suite(tmp_path, text), data_dir=tmp_path)
    assert info.value.field == "models[0].name"


# ---------------------------------------------------------------- fuzz

visible = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cc", "Cf", "Cs", "Zl", "Zp")),
    min_size=1,
    max_size=12,
).filter(lambda s: s.strip())


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    name=visible,
    bad=st.sampled_from(INVISIBLE + CONTROL),
    at=st.integers(0, 12),
    col=st.integers(0, 3),
)
@pytest.mark.slow
@example(name="mBERT", bad="\u200b", at=5, col=0)
def test_fuzz_an_invisible_character_anywhere_in_any_name_is_refused(
    store: Store, tmp_path: Path, name: str, bad: str, at: int, col: int
) -> None:
    hostile = name[:at] + bad + name[at:]
    cells = ["m", "xnli", "de", "accuracy"]
    cells[col] = hostile
    record = dict(zip(["model", "task", "language", "metric"], cells, strict=True))
    path = tmp_path / "f.jsonl"
    path.write_text(json.dumps({**record, "score": 0.5}) + "\n", encoding="utf-8")
    before = _store_count(store)
    try:
        import_scores_file(store, path, allow_unknown_metrics=True)
    except InputError as exc:
        assert exc.line == 1
    else:  # only a whitespace control at either end, stripped like a space
        assert bad.isspace() and hostile.strip() == name.strip()
        stored = store.scores.frame()
        assert all(bad not in str(v) for v in stored.iloc[-1][["model", "task", "language"]])
        return
    assert _store_count(store) == before


yaml_keys = st.sampled_from(["a", "b", "models", "1", "x y", "null"])
yaml_scalars = st.one_of(st.integers(-5, 5), st.sampled_from(["t", "u", "true", "1.5"]))


@settings(max_examples=60, deadline=None)
@given(
    pairs=st.lists(st.tuples(yaml_keys, yaml_scalars), min_size=1, max_size=6), nested=st.booleans()
)
def test_fuzz_yaml_repeated_keys_are_refused_else_read_as_safe_load(pairs, nested) -> None:
    import yaml

    body = "".join(f"{'  ' if nested else ''}{k}: {v}\n" for k, v in pairs)
    text = ("outer:\n" if nested else "") + body
    keys = [k for k, _ in pairs]
    parsed_keys = [yaml.safe_load(f"{k}: 0") for k in keys]  # "1" is the integer 1, "null" None
    repeated = len(set(map(repr, parsed_keys))) != len(parsed_keys)
    if repeated:
        with pytest.raises(InputError, match="appears twice") as info:
            load_yaml(text, "f.yaml")
        assert info.value.line is not None and info.value.line >= 2
    else:
        assert load_yaml(text, "f.yaml") == yaml.safe_load(text)


@settings(max_examples=80, deadline=None)
@given(code=st.text(alphabet="abcXYZ019-_. /", min_size=0, max_size=12))
@example(code="..")
@example(code="zh-Hans")
def test_fuzz_language_codes(code: str) -> None:
    from glotbench.store.names import LANGUAGE_CODE_RE, check_language_code

    parts = code.replace("_", "-").split("-")
    shaped = (
        2 <= len(parts[0]) <= 8
        and parts[0].isalpha()
        and parts[0].isascii()
        and all(1 <= len(p) <= 8 and p.isalnum() and p.isascii() for p in parts[1:])
    )
    assert bool(LANGUAGE_CODE_RE.fullmatch(code)) == shaped
    if shaped:
        assert check_language_code(code) == code
    else:
        with pytest.raises(InputError, match="not a language code"):
            check_language_code(code, path="test-x.tsv")


@settings(max_examples=100, deadline=None)
@given(
    lines=st.lists(st.binary(max_size=20).map(lambda b: b.replace(b"\n", b"")), max_size=8),
    limit=st.integers(1, 16),
    final_newline=st.booleans(),
)
def test_fuzz_bounded_lines_refuse_exactly_the_first_over_long_line(
    lines: list[bytes], limit: int, final_newline: bool
) -> None:
    """Lines of at most ``limit`` bytes (plus the newline) are read as ``readlines`` reads them;
    the first longer line is refused by its number."""
    import io

    from glotbench.ingest.limits import bounded_lines

    data = b"\n".join(lines) + (b"\n" if final_newline and lines else b"")
    expected = io.BytesIO(data).readlines()
    first_long = next(
        (i for i, line in enumerate(expected, 1) if len(line.rstrip(b"\n")) > limit), None
    )
    if first_long is None:
        got = [line for _, line in bounded_lines(io.BytesIO(data), "f", limit=limit)]
        assert got == expected
    else:
        with pytest.raises(InputError, match="longer than") as info:
            list(bounded_lines(io.BytesIO(data), "f", limit=limit))
        assert info.value.line == first_long


def test_a_reuben_config_with_a_key_twice_is_refused(tmp_path: Path) -> None:
    from glotbench.importers.reuben import ReubenConfig

    config = tmp_path / "c.yaml"
    config.write_text("score_col: F1\nseed_sd_col: a\nboot_sd_col: b\nscore_col: F2\n")
    with pytest.raises(InputError, match="'score_col' appears twice") as info:
        ReubenConfig.from_yaml(config)
    assert (info.value.path, info.value.line, info.value.field) == (str(config), 4, "score_col")


def test_a_reuben_csv_refuses_an_over_long_line(tmp_path: Path) -> None:
    from glotbench.importers.reuben import ReubenConfig, read_reuben
    from glotbench.ingest.limits import MAX_LINE_BYTES, MiB

    path = tmp_path / "r.csv"
    path.write_text("Model,Task,Mean,SD_seed,SD_boot_avg\nm,de,0.5,0.01,0.01\n")
    size = path.stat().st_size
    os.truncate(path, size + MAX_LINE_BYTES + MiB)
    config = ReubenConfig.from_mapping(
        {"score_col": "Mean", "seed_sd_col": "SD_seed", "boot_sd_col": "SD_boot_avg"}
    )
    with pytest.raises(InputError, match="longer than 64 MiB") as info:
        read_reuben(path, config, metrics=["Mean=accuracy"])
    assert info.value.line == 3
