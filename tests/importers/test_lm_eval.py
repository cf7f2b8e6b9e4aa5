"""lm-evaluation-harness importer, on real harness output (tests/fixtures/importers/lm_eval_out)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from glotbench.errors import InputError
from glotbench.importers.lm_eval import import_lm_eval, recompute_scores
from glotbench.importers.task_languages import TaskLanguageMap
from glotbench.store import Store

from .conftest import LM_EVAL_OUT

OPTIONS = {"families": ["tinymt"], "task_map": ["tinyboolq=tinyboolq:en"]}


def _model_dir(root: Path) -> Path:
    (sub,) = [p for p in root.iterdir() if p.is_dir()]
    return sub


def _results(root: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(_model_dir(root).glob("results_*.json"))]


def test_samples_reproduce_every_reported_metric(store: Store) -> None:
    """Importing samples and recomputing each task's metric gives the results JSON's value."""
    result = import_lm_eval(store, LM_EVAL_OUT, **OPTIONS)
    assert result.status == "imported"
    checks = recompute_scores(store)
    # 2 seeds × (xnli de/fr acc + tinyboolq acc, acc_norm, f1, mcc + tinymt bleu, chrf, em)
    assert len(checks) == 2 * (2 + 4 + 3)
    for row in checks:
        assert row["reported"] is not None, row
        assert row["recomputed"] == pytest.approx(row["reported"], rel=1e-9, abs=1e-12), row
    # and the check is not vacuous: the reported values are non-trivial
    values = {(r["task"], r["metric"], r["seed"]): r["reported"] for r in checks}
    assert values[("tinymt", "bleu", 0)] > 0 and values[("tinymt", "chrf", 1)] > 0
    assert values[("tinyboolq", "mcc", 0)] != values[("tinyboolq", "mcc", 1)]


def test_runs_keys_languages_and_seeds(store: Store) -> None:
    import_lm_eval(store, LM_EVAL_OUT, **OPTIONS)
    runs = store.runs.frame()
    assert set(runs["model"]) == {"tiny-gpt2"}  # a local checkpoint path -> its folder name
    assert sorted(set(runs["seed"].astype(int))) == [0, 1]
    xnli = runs[runs["task"] == "xnli"]
    assert set(xnli["language"]) == {"de", "fr"}
    assert set(runs[runs["task"] == "tinymt"]["language"]) == {"de"}
    assert set(runs[runs["task"] == "tinyboolq"]["language"]) == {"en"}
    assert set(runs["metric"]) == {"accuracy", "f1_binary", "mcc", "bleu", "chrf"}
    # acc_norm / exact_match are accuracies under another config_hash, apart from acc
    acc = runs[runs["metric"] == "accuracy"]
    assert set(acc["config_hash"]) == {"", "lm_eval=acc_norm", "lm_eval=exact_match"}
    # every run of a task covers the same doc_ids, so paired analyses line up
    m = store.stats.matrix("xnli", "xnli", "fr", "accuracy", config_hash="")
    assert m.stats.shape == (2, 12, 2)
    assert list(m.example_ids) == [str(i) for i in range(12)]
    mcc = store.stats.matrix("tinyboolq", "tinyboolq", "en", "mcc")
    assert mcc.metric_config == {"labels": [0, 1]}


def test_scores_with_stderr_and_groups_apart(store: Store) -> None:
    import_lm_eval(store, LM_EVAL_OUT, **OPTIONS)
    scores = store.scores.frame()
    data = _results(LM_EVAL_OUT)
    group = scores[scores["task"] == "tinyxnli"]
    assert set(group["language"]) == {"all"}
    assert all(m["lm_eval_kind"] == "group" for m in group["metadata"])
    tasks = scores[scores["task"] != "tinyxnli"]
    assert all(m["lm_eval_kind"] == "task" for m in tasks["metadata"])
    row = scores[(scores["task"] == "xnli") & (scores["language"] == "de") & (scores["seed"] == 0)]
    reported = next(d for d in data if d["config"]["fewshot_seed"] == 0)["results"]["xnli_de"]
    assert row["score"].iloc[0] == reported["acc,none"]
    assert row["stderr"].iloc[0] == reported["acc_stderr,none"]
    assert row["n"].iloc[0] == 12
    assert "sample_len" not in set(scores["metric"])


def test_reimport_is_idempotent_and_resumes(store: Store, lm_eval_copy: Path) -> None:
    first = import_lm_eval(store, lm_eval_copy, **OPTIONS)
    n_runs, n_scores = len(store.runs.frame()), len(store.scores.frame())
    again = import_lm_eval(store, lm_eval_copy, **OPTIONS)
    assert again.status == "skipped"
    assert (len(store.runs.frame()), len(store.scores.frame())) == (n_runs, n_scores)
    # a changed option is another input, but every run and score is already there
    other = import_lm_eval(store, lm_eval_copy, **OPTIONS, seed_from="config", tasks=None)
    assert other.status == "skipped"
    assert first.runs_added == n_runs
    # simulate an interruption: drop half of the runs, import again -> resumed
    con = store.connection
    ids = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall()]
    con.execute("DELETE FROM example_stats WHERE run_id IN (SELECT unnest(?))", [ids[::2]])
    con.execute("DELETE FROM runs WHERE run_id IN (SELECT unnest(?))", [ids[::2]])
    con.execute("UPDATE imports SET completed_at = NULL WHERE kind = 'examples'")
    resumed = import_lm_eval(store, lm_eval_copy, **OPTIONS)
    assert resumed.status == "resumed"
    assert resumed.runs_added == len(ids[::2]) and resumed.runs_skipped == len(ids[1::2])
    assert len(store.runs.frame()) == n_runs


def test_results_only(store: Store, lm_eval_copy: Path) -> None:
    for p in _model_dir(lm_eval_copy).glob("samples_*.jsonl"):
        p.unlink()
    result = import_lm_eval(store, lm_eval_copy, **OPTIONS)
    assert result.runs_added == 0 and result.scores_added > 0
    assert store.runs.frame().empty
    assert {"acc", "acc_norm", "f1", "mcc", "bleu", "chrf", "exact_match"} <= set(
        store.scores.frame()["metric"]
    )


def test_task_language_map() -> None:
    m = TaskLanguageMap.build(["tinymt"], ["boolq=boolq:en"])
    assert m.split("xnli_de") == ("xnli", "de")
    assert m.split("belebele_dan_Latn") == ("belebele", "dan_Latn")
    assert m.split("xquad_es") == ("xquad", "es")
    assert m.split("tinymt_de") == ("tinymt", "de")
    assert m.split("arc_challenge") == ("arc_challenge", "und")
    assert m.split("boolq") == ("boolq", "en")
    assert m.split("hellaswag") == ("hellaswag", "und")


# --------------------------------------------------------------------------- errors


def _samples(root: Path, task: str, stamp_index: int = 0) -> Path:
    return sorted(_model_dir(root).glob(f"samples_{task}_*.jsonl"))[stamp_index]


def test_truncated_samples_line(store: Store, lm_eval_copy: Path) -> None:
    path = _samples(lm_eval_copy, "xnli_de")
    text = path.read_text()
    path.write_text(text[: len(text) - 40])  # cut inside the last record
    n_lines = text.count("\n")
    with pytest.raises(InputError) as err:
        import_lm_eval(store, lm_eval_copy, **OPTIONS)
    assert err.value.path == str(path) and err.value.line == n_lines
    assert "truncated" in str(err.value)
    assert store.runs.frame().empty and store.scores.frame().empty  # nothing written


def test_missing_field(store: Store, lm_eval_copy: Path) -> None:
    path = _samples(lm_eval_copy, "tinyboolq")
    lines = path.read_text().splitlines()
    rec = json.loads(lines[3])
    del rec["acc_norm"]
    lines[3] = json.dumps(rec)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as err:
        import_lm_eval(store, lm_eval_copy, **OPTIONS)
    assert (err.value.path, err.value.line, err.value.field) == (str(path), 4, "acc_norm")


def test_unknown_task(store: Store, lm_eval_copy: Path) -> None:
    path = _samples(lm_eval_copy, "xnli_fr")
    bad = path.with_name(path.name.replace("xnli_fr", "xnli_xx"))
    path.rename(bad)
    with pytest.raises(InputError) as err:
        import_lm_eval(store, lm_eval_copy, **OPTIONS)
    assert err.value.path == str(bad) and err.value.field == "task"
    assert "unknown task 'xnli_xx'" in str(err.value)
    with pytest.raises(InputError, match="unknown task name"):
        import_lm_eval(store, LM_EVAL_OUT, tasks=["no_such_task"])


def test_doc_ids_disagree_with_another_model(store: Store, lm_eval_copy: Path) -> None:
    import_lm_eval(store, LM_EVAL_OUT, **OPTIONS)
    before = (len(store.runs.frame()), len(store.scores.frame()))
    for p in sorted(_model_dir(lm_eval_copy).iterdir())[1::2]:
        p.unlink()  # keep the seed-0 evaluation only (results + samples)
    path = _samples(lm_eval_copy, "xnli_de")
    lines = path.read_text().splitlines()
    rec = json.loads(lines[5])
    rec["doc_id"] = 999
    lines[5] = json.dumps(rec)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as err:
        import_lm_eval(store, lm_eval_copy, model="other-model", **OPTIONS)
    assert err.value.path == str(path) and err.value.field == "doc_id"
    assert "tiny-gpt2" in str(err.value) and "999" in str(err.value)
    assert (
        len(store.runs.frame()),
        len(store.scores.frame()),
    ) == before  # nothing lost, nothing added


def test_doc_ids_disagree_between_seeds_is_an_import_error(
    store: Store, lm_eval_copy: Path
) -> None:
    path = _samples(lm_eval_copy, "xnli_de", 1)
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(InputError) as err:
        import_lm_eval(store, lm_eval_copy, **OPTIONS)
    assert err.value.path == str(path) and err.value.field == "doc_id"
    assert store.runs.frame().empty


def test_conflicting_rerun_keeps_the_store(store: Store, lm_eval_copy: Path) -> None:
    import_lm_eval(store, LM_EVAL_OUT, **OPTIONS)
    before = store.runs.frame()[["run_id"]].copy()
    path = _samples(lm_eval_copy, "xnli_fr")
    lines = path.read_text().splitlines()
    rec = json.loads(lines[0])
    rec["acc"] = 1.0 - rec["acc"]
    lines[0] = json.dumps(rec)
    path.write_text("\n".join(lines) + "\n")
    # keep the results JSON consistent with the changed samples (they are checked to agree)
    stamp = path.name.rsplit("_", 1)[1].removesuffix(".jsonl")
    results_path = path.parent / f"results_{stamp}.json"
    results = json.loads(results_path.read_text())
    accs = [json.loads(line)["acc"] for line in lines if line.strip()]
    results["results"]["xnli_fr"]["acc,none"] = sum(accs) / len(accs)
    results_path.write_text(json.dumps(results))
    with pytest.raises(InputError, match="already stored with different statistics"):
        import_lm_eval(store, lm_eval_copy, **OPTIONS)
    assert np.array_equal(store.runs.frame()[["run_id"]].to_numpy(), before.to_numpy())


def test_cli_json(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from glotbench.cli import app

    db = tmp_path / "cli.duckdb"
    args = ["import", "lm-eval", str(LM_EVAL_OUT), "--store", str(db), "--family", "tinymt"]
    res = CliRunner().invoke(app, [*args, "--map", "tinyboolq=tinyboolq:en", "--json"])
    assert res.exit_code == 0, res.output
    payload = json.loads(res.output)
    assert payload["status"] == "imported" and payload["runs_added"] == 18
    assert payload["languages"] == ["all", "de", "en", "fr"]


# --------------------------------------------------------------------------- task languages


def test_iso_639_suffixes_are_split_automatically() -> None:
    m = TaskLanguageMap.build()
    assert m.split("scala_da") == ("scala", "da")  # no family needed
    assert m.split("xnli_de") == ("xnli", "de")
    assert m.split("flores_dan_Latn") == ("flores", "dan_Latn")
    assert m.split("mytask_pt-BR") == ("mytask", "pt-BR")
    assert m.split("wmt16_de_en") == ("wmt16_de_en", "und")  # a translation direction
    assert m.split("arc_challenge") == ("arc_challenge", "und")
    assert m.split("truthfulqa_gen") == ("truthfulqa_gen", "und")  # 3 letters, no script
    off = TaskLanguageMap.build(auto_suffix=False)
    assert off.split("scala_da") == ("scala_da", "und")
    assert off.split("xnli_de") == ("xnli", "de")  # families still apply


@pytest.mark.slow
def test_task_language_flag_file_and_auto_detection(tmp_path: Path) -> None:
    from glotbench import api

    def languages(db: Path) -> dict[str, str]:
        runs = api.open_store(db, read_only=True)
        with runs as handle:
            frame = handle.runs.frame()
        return {
            str(meta["lm_eval_task"]): f"{task}/{lang}"
            for task, lang, meta in zip(
                frame["task"], frame["language"], frame["model_metadata"], strict=True
            )
        }

    # no --family: tinymt_de is split by its ISO 639-1 suffix; tinyboolq names no language
    db = tmp_path / "auto.duckdb"
    api.import_lm_eval(LM_EVAL_OUT, store=db)
    assert languages(db) == {
        "tinyboolq": "tinyboolq/und",
        "tinymt_de": "tinymt/de",
        "xnli_de": "xnli/de",
        "xnli_fr": "xnli/fr",
    }
    db = tmp_path / "off.duckdb"
    api.import_lm_eval(LM_EVAL_OUT, store=db, auto_language=False)
    assert languages(db)["tinymt_de"] == "tinymt_de/und"
    # a mapping file (JSON or CSV); --task-language entries win over it
    json_map = tmp_path / "map.json"
    json_map.write_text(json.dumps({"tinyboolq": "boolq:en", "tinymt_de": "de"}))
    db = tmp_path / "json.duckdb"
    api.import_lm_eval(LM_EVAL_OUT, store=db, task_map_file=json_map, task_map=["tinyboolq=nb"])
    found = languages(db)
    assert found["tinyboolq"] == "tinyboolq/nb" and found["tinymt_de"] == "tinymt_de/de"
    csv_map = tmp_path / "map.csv"
    csv_map.write_text("task,name,language\ntinyboolq,boolq,en\n")
    db = tmp_path / "csv.duckdb"
    api.import_lm_eval(LM_EVAL_OUT, store=db, task_map_file=csv_map)
    assert languages(db)["tinyboolq"] == "boolq/en"
    bad = tmp_path / "bad.csv"
    bad.write_text("task,language\ntinyboolq,\n")
    with pytest.raises(InputError, match="empty language") as info:
        api.import_lm_eval(LM_EVAL_OUT, store=tmp_path / "bad.duckdb", task_map_file=bad)
    assert info.value.line == 2 and info.value.field == "language"


@pytest.mark.slow
def test_cli_task_language_flags(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from glotbench.cli import app

    db = tmp_path / "cli.duckdb"
    res = CliRunner().invoke(
        app,
        ["import", "lm-eval", str(LM_EVAL_OUT), "--store", str(db), "--task-language",
         "tinyboolq=en", "--json"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["languages"] == ["all", "de", "en", "fr"]
    assert "--task-language" in CliRunner().invoke(app, ["import", "lm-eval", "--help"]).output


def test_primary_metric_and_source_metric_are_recorded(store: Store) -> None:
    import_lm_eval(store, LM_EVAL_OUT, **OPTIONS)
    runs = store.runs.frame()
    meta = {
        (m["lm_eval_task"], m["source_metric"]): m["primary_metric"] for m in runs["model_metadata"]
    }
    # the first metric of each task's metric_list in the results' configs
    configs = _results(LM_EVAL_OUT)[0]["configs"]
    for (task, _source), primary in meta.items():
        assert primary == configs[task]["metric_list"][0]["metric"]
    assert ("tinyboolq", "acc_norm") in meta and ("tinymt_de", "exact_match") in meta
    scores = store.scores.frame()
    assert {m["primary_metric"] for m in scores["metadata"]} == {"acc", "bleu"}
