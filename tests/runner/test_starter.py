"""The starter suite: CLDR language-id data, pretrained identifiers, per-language runs, the demo."""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score, f1_score

from glotbench.runner.datasets import DatasetSpec, build_dataset
from glotbench.runner.errors import DatasetError, ModelError
from glotbench.runner.models import ModelSpec
from glotbench.runner.models.identifiers import IDENTIFIERS, UNDETERMINED, normalise_code
from glotbench.runner.protocol import Job, Protocol, execute_job, run_keys, write_outcome
from glotbench.store.store import Store

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("babel") is None,
    reason="the starter suite needs babel: pip install 'glotbench[starter]'",
)

NORTH_GERMANIC = ("da", "nb", "nn", "sv")
IBERIAN = ("es", "pt", "ca")


def _needs(package: str) -> None:
    if importlib.util.find_spec(package) is None:
        pytest.skip(f"{package} is not installed (pip install 'glotbench[starter]')")


@pytest.fixture(scope="module")
def cldr_records() -> list[dict]:
    from glotbench.runner.datasets.cldr import build_cldr_lid

    return build_cldr_lid()


# -- data ------------------------------------------------------------------------


def test_cldr_dataset_covers_30_languages_with_related_ones(cldr_records: list[dict]) -> None:
    counts = Counter(r["label"] for r in cldr_records)
    assert len(counts) >= 30
    for lang in (*NORTH_GERMANIC, *IBERIAN, "fo", "gl"):
        assert counts[lang] == 150, lang  # balanced: every language reaches the cap
    assert len({r["id"] for r in cldr_records}) == len(cldr_records)


def test_cldr_items_have_one_gold_language(cldr_records: list[dict]) -> None:
    """No text occurs under two labels, and no phrase is reused across items."""
    owners: dict[str, set[str]] = {}
    for r in cldr_records:
        owners.setdefault(r["text"].casefold(), set()).add(r["label"])
    assert all(len(v) == 1 for v in owners.values())


def test_cldr_text_is_real_locale_data() -> None:
    """Items are CLDR phrases joined by the locale's own list grammar."""
    from babel import localedata

    from glotbench.runner.datasets.cldr import build_cldr_lid, locale_phrases

    nn = set(locale_phrases("nn"))
    nb = set(locale_phrases("nb"))
    no_own = localedata.load("no", merge_inherited=False)
    nn_own = localedata.load("nn", merge_inherited=False)
    assert no_own["territories"]["AT"] in nb  # Bokmål is CLDR's "no" ("Østerrike")
    assert nn_own["territories"]["AT"] in nn  # Nynorsk's own override ("Austerrike")
    assert no_own["territories"]["AT"] not in nn  # nn keeps only what it defines itself
    records = build_cldr_lid(["nn", "sv"], phrases_per_item=2, max_items_per_language=20)
    for r in records:
        conjunction = " og " if r["label"] == "nn" else " och "
        assert conjunction in r["text"], r
    single = build_cldr_lid(["nn", "sv"], phrases_per_item=1, max_items_per_language=5)
    assert all(r["text"] in set(locale_phrases(r["label"])) for r in single)


@pytest.mark.slow
def test_cldr_dataset_is_deterministic_and_seeded() -> None:
    from glotbench.runner.datasets.cldr import build_cldr_lid

    a = build_cldr_lid(["da", "sv", "nb"], max_items_per_language=30)
    b = build_cldr_lid(["da", "sv", "nb"], max_items_per_language=30)
    c = build_cldr_lid(["da", "sv", "nb"], max_items_per_language=30, seed=1)
    assert a == b
    assert [r["text"] for r in a] != [r["text"] for r in c]


def test_cldr_bad_options_are_clear_errors() -> None:
    from glotbench.runner.datasets.cldr import build_cldr_lid

    with pytest.raises(DatasetError, match="no locale 'xx-nope'"):
        build_cldr_lid(["da", "xx-nope"])
    with pytest.raises(DatasetError, match="phrases_per_item"):
        build_cldr_lid(["da", "sv"], phrases_per_item=0)
    with pytest.raises(DatasetError, match="at least two languages"):
        build_cldr_lid(["da"])
    spec = DatasetSpec(
        name="x", task="language_id", language="mul", loader="cldr", options={"colour": 1}
    )
    with pytest.raises(DatasetError, match="bad loader options"):
        build_dataset(spec)
    wrong_task = DatasetSpec(name="x", task="sentiment", language="mul", loader="cldr")
    with pytest.raises(DatasetError, match="builds language_id data"):
        build_dataset(wrong_task)


# -- identifiers -------------------------------------------------------------------


def test_normalise_code() -> None:
    assert normalise_code("no") == "nb"
    assert normalise_code("nn") == "nn"
    assert normalise_code("zh-cn") == "zh"
    assert normalise_code("pt_BR") == "pt"
    assert normalise_code("un") == UNDETERMINED
    assert normalise_code(None) == UNDETERMINED
    assert normalise_code("NB") == "nb"


SENTENCES = {
    "en": "The weather is very nice today and we are going to the beach with the children.",
    "de": "Das Wetter ist heute sehr schön und wir gehen mit den Kindern an den Strand.",
    "es": "Hoy hace muy buen tiempo y vamos a la playa con los niños.",
    "fi": "Tänään on todella kaunis sää ja menemme lasten kanssa rannalle.",
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(IDENTIFIERS))
def test_identifier_answers_iso_codes(name: str) -> None:
    factory, package = IDENTIFIERS[name]
    module = {"lingua-language-detector": "lingua", "pycld2": "pycld2"}.get(package, package)
    _needs(module)
    predict = factory()
    answers = predict(list(SENTENCES.values()))
    assert answers == list(SENTENCES)
    assert predict.metadata["package"] == package  # type: ignore[attr-defined]
    assert predict.metadata["package_version"]  # type: ignore[attr-defined]


@pytest.mark.slow
def test_lingua_one_text_at_a_time_answers_as_its_preloaded_parallel_detection(
    cldr_records: list[dict],
) -> None:
    """lingua loads its language models as texts need them and detects one text at a
    time (less CPU: docs/performance.md, Demo); the reference is lingua's preloaded
    detector with its parallel detection, as the starter suite used before."""
    _needs("lingua")
    import lingua as lingua_package

    from glotbench.runner.models.identifiers import lingua

    texts = [r["text"] for r in cldr_records[::12]]  # every language, ~490 texts
    builder = lingua_package.LanguageDetectorBuilder.from_all_languages()
    reference = builder.with_preloaded_language_models().build()
    expected = [
        normalise_code(found.iso_code_639_1.name) if found is not None else UNDETERMINED
        for found in reference.detect_languages_in_parallel_of(texts)
    ]
    assert lingua()(texts) == expected
    assert len(set(expected)) > 30


@pytest.mark.slow
def test_langdetect_is_reproducible_per_seed_and_varies_between_seeds(
    cldr_records: list[dict],
) -> None:
    _needs("langdetect")
    from glotbench.runner.models.identifiers import langdetect

    texts = [r["text"] for r in cldr_records if r["label"] in NORTH_GERMANIC][:200]
    first = langdetect(seed=1)(texts)
    assert langdetect(seed=1)(texts) == first
    assert langdetect(seed=2)(texts) != first  # sampled trials: model-side variance


# -- per-language runs ---------------------------------------------------------------


def _lid_dataset(tmp_path: Path) -> tuple[DatasetSpec, object]:
    spec = DatasetSpec(
        name="lid-small",
        task="language_id",
        language="mul",
        loader="cldr",
        options={"languages": ["da", "nb", "nn", "sv", "es", "pt"], "max_items_per_language": 40},
        splits={"train": 90, "validation": 0, "test": 120},
    )
    return spec, build_dataset(spec)


def test_multilingual_language_id_stores_one_accuracy_run_per_language(tmp_path: Path) -> None:
    """Per-language accuracies average to balanced accuracy; macro-F1 matches scikit-learn."""
    spec, dataset = _lid_dataset(tmp_path)
    model = ModelSpec(name="nb", kind="tfidf-nb", options={"word_ngrams": [1, 1]})
    job = Job(model=model, dataset=spec, iteration=0, protocol=Protocol(speed_iterations=0))
    outcome = execute_job(job, dataset)
    keys = {(k.metric, k.language) for k in run_keys(job, dataset)}
    stored = {(rec.metric, rec.language) for rec, _, _ in outcome.runs}
    assert stored == keys
    assert {lang for metric, lang in keys if metric == "accuracy"} == {
        "da", "nb", "nn", "sv", "es", "pt"
    }  # fmt: skip
    # rebuild the predictions from the stored statistics and compare with scikit-learn
    gold = [r["label"] for r in dataset.test]
    id_to_row = {r["id"]: i for i, r in enumerate(dataset.test)}
    correct = np.zeros(len(gold), dtype=bool)
    recalls = []
    for record, ids, stats in outcome.runs:
        if record.metric == "accuracy":
            assert {gold[id_to_row[i]] for i in ids} == {record.language}
            correct[[id_to_row[i] for i in ids]] = stats[:, 0] == 1
            recalls.append(stats[:, 0].sum() / stats[:, 1].sum())
    from glotbench.runner.models import build_model
    from glotbench.runner.protocol import training_sample
    from glotbench.runner.tasks import get_task

    adapter = build_model(model)
    task = get_task("language_id")
    adapter.fit(task, dataset, training_sample(dataset.train, job.seed, True), [], job.seed)
    predicted = adapter.predict_labels([r["text"] for r in dataset.test])
    assert np.array_equal(correct, np.asarray(predicted) == np.asarray(gold))
    assert np.mean(recalls) == pytest.approx(balanced_accuracy_score(gold, predicted), abs=1e-12)
    macro = next(s for r, _, s in outcome.runs if r.metric == "f1_macro")
    assert outcome.runs[0][0].language == "mul"
    from glotbench.metrics import get_metric

    f1 = get_metric("f1_macro", labels=list(dataset.labels)).score(macro.sum(axis=0))
    expected = f1_score(gold, predicted, average="macro", labels=list(dataset.labels))
    assert f1 == pytest.approx(expected, abs=1e-12)


def test_deterministic_model_predicts_once_and_stores_every_iteration(tmp_path: Path) -> None:
    spec, dataset = _lid_dataset(tmp_path)
    calls: list[int] = []

    def predict(texts: list[str]) -> list[str]:
        calls.append(len(texts))
        return ["da" if "og" in t else "sv" for t in texts]

    model = ModelSpec(name="rule", kind="callable", options={"target": predict}, deterministic=True)
    protocol = Protocol(iterations=3, speed_iterations=0)
    store = Store.open(tmp_path / "s.duckdb")
    outcomes = [
        execute_job(
            Job(model=model, dataset=spec, iteration=i, protocol=protocol, session="s1"), dataset
        )
        for i in range(3)
    ]
    assert calls == [len(dataset.test)]  # predicted once within a session
    execute_job(
        Job(model=model, dataset=spec, iteration=0, protocol=protocol, session="s2"), dataset
    )
    assert len(calls) == 2  # a new session (run) predicts afresh: an edited model is never stale
    for outcome in outcomes:
        write_outcome(store, outcome)
    runs = store.runs.frame(metrics=["accuracy"])
    assert sorted(runs["seed"].unique()) == [protocol.seed_of(i) for i in range(3)]
    first = {
        r["language"]: store.stats.of_run(r["run_id"])[1]
        for _, r in runs.iterrows()
        if r["seed"] == protocol.seed
    }
    for _, r in runs.iterrows():
        assert np.array_equal(store.stats.of_run(r["run_id"])[1], first[r["language"]])
        assert r["model_metadata"]["predictions_of_iteration"] == 0
    store.close()


def test_deterministic_flag_on_a_trained_model_is_an_error(tmp_path: Path) -> None:
    spec, dataset = _lid_dataset(tmp_path)
    model = ModelSpec(name="nb", kind="tfidf-nb", deterministic=True)
    with pytest.raises(ModelError, match="trains"):
        execute_job(Job(model=model, dataset=spec, iteration=0, protocol=Protocol()), dataset)


def test_callable_factory_receives_the_iteration_seed(tmp_path: Path) -> None:
    spec, dataset = _lid_dataset(tmp_path)
    from glotbench.runner.models import build_model
    from glotbench.runner.tasks import get_task

    seen: list[int] = []

    def factory(seed: int = 0):  # noqa: ANN202
        seen.append(seed)
        return lambda texts: ["da"] * len(texts)

    adapter = build_model(
        ModelSpec(name="f", kind="callable", options={"target": factory, "factory": True})
    )
    adapter.fit(get_task("language_id"), dataset, [], [], 1234)
    adapter.predict_labels(["x"])
    assert seen == [1234]
    assert adapter.metadata()["factory_seed"] == 1234


# -- the suite and the demo -------------------------------------------------------------


def test_builtin_starter_suite_is_listed_and_valid() -> None:
    from glotbench.runner.suite import load_suite

    suite = load_suite("starter")
    assert not suite.needs_data_dir
    kinds = {m.name: m.kind for m in suite.models}
    assert {"lingua", "cld2", "py3langid", "langid.py", "langdetect"} <= set(kinds)
    assert {"tfidf-nb", "tfidf-logreg", "majority"} <= set(kinds.values())
    assert not next(m for m in suite.models if m.name == "langdetect").deterministic


@pytest.mark.slow
def test_run_starter_subset_resumes(cli, tmp_path: Path) -> None:  # noqa: ANN001
    _needs("py3langid")
    store = tmp_path / "starter.duckdb"
    args = ["run", "starter", "--store", str(store), "--iterations", "2"]
    args += ["--model", "py3langid", "--model", "char-nb", "--json"]
    first = cli(*args)
    assert first.exit_code == 0, first.stderr
    payload = json.loads(first.stdout)
    assert payload["completed"] == 4 and payload["skipped"] == 0
    with Store.open(store, read_only=True) as handle:
        runs = handle.runs.frame(metrics=["accuracy"])
    assert runs.groupby("model")["language"].nunique().to_dict() == {"char-nb": 39, "py3langid": 39}
    again = json.loads(cli(*args).stdout)
    assert again["completed"] == 0 and again["skipped"] == 4


@pytest.mark.slow
def test_demo_runs_the_starter_suite_then_the_analyses(cli, tmp_path: Path) -> None:  # noqa: ANN001
    for package in ("py3langid", "langid", "lingua", "pycld2", "langdetect"):
        _needs(package)
    out = tmp_path / "demo"
    result = cli(
        "demo", "--out", str(out), "--iterations", "2", "--draws", "300", "--all-models", "--json"
    )
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    starter = payload["starter"]
    summary = {row["model"]: row for row in starter["summary"]}
    assert len(summary) == 8 and all(row["languages"] == 39 for row in summary.values())
    assert summary["majority"]["mean_accuracy"] < 0.1 < summary["py3langid"]["mean_accuracy"]
    per_model = {r["model"]: r for r in starter["variance"]["per_model"]}
    assert per_model["cld2"]["sigma_seed_mean"] == 0.0  # deterministic: no seed variance
    assert per_model["char-logreg"]["sigma_seed_mean"] > 0.0  # bootstrap-trained
    assert per_model["langdetect"]["sigma_seed_mean"] > 0.0  # sampled trials
    assert payload["xtreme_r"]["leaderboard"]["overall"][0]["model"] == "XLM-R Large"
    names = [Path(p).relative_to(out).as_posix() for p in payload["written"]]
    assert names == [
        "leaderboard/index.html",
        "report.html",
        "xtreme-r/leaderboard/index.html",
        "xtreme-r/report.html",
    ]
    assert "py3langid" in (out / "leaderboard" / "index.html").read_text(encoding="utf-8")
    # a second demo resumes the stored runs
    again = json.loads(
        cli(
            "demo",
            "--out",
            str(out),
            "--iterations",
            "2",
            "--draws",
            "300",
            "--no-pages",
            "--all-models",
            "--json",
        ).stdout
    )
    assert again["starter"]["run"]["completed"] == 0
    assert again["starter"]["notes"] == []
    # the default demo leaves langdetect out: no note about its stored runs
    default = json.loads(
        cli(
            "demo", "--out", str(out), "--iterations", "2", "--draws", "300", "--no-pages", "--json"
        ).stdout
    )
    assert {r["model"] for r in default["starter"]["summary"]} == set(summary) - {"langdetect"}
    assert default["starter"]["notes"] == [] and default["starter"]["run"]["completed"] == 0
    # runs of another configuration (an older babel, say) are named, not mixed in silently
    with Store.open(out / "starter.duckdb") as handle:
        row = handle.runs.frame(models=["cld2"], metrics=["accuracy"]).iloc[0]
        ids, stats = handle.stats.of_run(row["run_id"])
        from glotbench.store.schema import RunRecord

        other = RunRecord(
            model="cld2",
            dataset=row["dataset"],
            task=row["task"],
            language=row["language"],
            seed=int(row["seed"]),
            config_hash="older-config",
            metric="accuracy",
            stat_names=list(row["stat_names"]),
        )
        assert handle.runs.write(other, list(ids), stats)
    stale_run = cli(
        "demo",
        "--out",
        str(out),
        "--iterations",
        "2",
        "--draws",
        "300",
        "--no-pages",
        "--all-models",
        "--json",
    )
    assert stale_run.exit_code == 0, stale_run.stderr
    stale = json.loads(stale_run.stdout)
    assert any("another configuration of cld2" in n for n in stale["starter"]["notes"])
    assert {row["model"] for row in stale["starter"]["summary"]} == set(summary)  # no "[config]"
    assert stale["starter"]["summary"] == again["starter"]["summary"]


def test_demo_without_the_starter_packages_says_how_to_get_them(
    cli,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,  # noqa: ANN001
) -> None:
    import glotbench.demo_starter as demo_starter

    monkeypatch.setattr(
        demo_starter, "missing_starter_packages", lambda: ["lingua-language-detector"]
    )
    result = cli("demo", "--out", str(tmp_path), "--draws", "200", "--no-pages")
    assert result.exit_code == 0, result.stderr
    assert "glotbench[starter]" in result.out
    assert "XLM-R Large" in result.out


def test_language_filter_restricts_a_multilingual_dataset() -> None:
    from glotbench.runner.errors import UnknownNameError
    from glotbench.runner.suite import load_suite

    suite = load_suite("starter").select(languages=["da", "nb", "nn", "sv"])
    (dataset,) = suite.datasets
    assert dataset.name == "cldr-lid:da+nb+nn+sv"
    assert dataset.options["languages"] == ["da", "nb", "nn", "sv"]
    built = build_dataset(dataset)
    assert set(built.labels) == {"da", "nb", "nn", "sv"}
    with pytest.raises(UnknownNameError, match="at least two"):
        load_suite("starter").select(languages=["da"])
    with pytest.raises(UnknownNameError, match="unknown language"):
        load_suite("starter").select(languages=["xx"])


def test_single_configuration_keeps_the_plain_model_name(tmp_path: Path) -> None:
    """Runs of one model with one config hash per cell are seeds of one system."""
    from glotbench import api

    spec, dataset = _lid_dataset(tmp_path)
    model = ModelSpec(name="nb", kind="tfidf-nb", options={"word_ngrams": [1, 1]})
    protocol = Protocol(iterations=2, speed_iterations=0)
    with Store.open(tmp_path / "s.duckdb") as store:
        for i in range(2):
            job = Job(model=model, dataset=spec, iteration=i, protocol=protocol)
            write_outcome(store, execute_job(job, dataset))
    scores = api.load_replicated(store=tmp_path / "s.duckdb", metric="accuracy", n_replicates=50)
    assert scores.models == ("nb",)


def test_pretrained_adapter_is_loaded_once_and_seeded_factories_per_iteration(
    tmp_path: Path,
) -> None:
    """A model that does not train is built once per process; fit still gets each seed."""
    spec, dataset = _lid_dataset(tmp_path)
    loads: list[int | None] = []

    def plain() -> object:
        loads.append(None)
        return lambda texts: ["da"] * len(texts)

    def seeded(seed: int = 0) -> object:
        loads.append(seed)
        return lambda texts: ["da" if seed % 2 else "sv"] * len(texts)

    protocol = Protocol(iterations=3, speed_iterations=0)
    for target in (plain, seeded):
        model = ModelSpec(
            name=target.__name__, kind="callable", options={"target": target, "factory": True}
        )
        outcomes = [
            execute_job(
                Job(model=model, dataset=spec, iteration=i, protocol=protocol, session="s"),
                dataset,
            )
            for i in range(3)
        ]
        assert all(o.runs for o in outcomes)
    assert loads == [None, protocol.seed_of(0), protocol.seed_of(1), protocol.seed_of(2)]
