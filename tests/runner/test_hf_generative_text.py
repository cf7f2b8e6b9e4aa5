"""hf-generative on free-text tasks: QA (SQuAD F1/EM) and translation (chrF/BLEU), end to end.

A tiny GPT-2 with a byte-level BPE tokenizer is built in the test (nothing is
downloaded). Its final layer norm and output head are set so that the words
of the answers and references and the newline get most of the probability
(a random model would almost never say them), while the context still moves
the logits: sampled responses vary and score between 0 and 1, greedy ones
do not vary with the seed.

References are computed independently of glotbench: ``sacrebleu``'s
``corpus_bleu`` / ``corpus_chrf`` on the generated texts, and the SQuAD v1.1
F1 / exact-match formula of the official evaluation script written out here.
"""

from __future__ import annotations

import json
import os
import re
import string
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (extra 'neural')")
transformers = pytest.importorskip(
    "transformers", reason="transformers is not installed (extra 'neural')"
)
sacrebleu = pytest.importorskip("sacrebleu")
os.environ["HF_HUB_OFFLINE"] = "1"

from glotbench import api  # noqa: E402
from glotbench.metrics import get_metric  # noqa: E402
from glotbench.runner.datasets import build_dataset  # noqa: E402
from glotbench.runner.errors import ModelError  # noqa: E402
from glotbench.runner.models import build_model  # noqa: E402
from glotbench.runner.models.hf_generative import cut_at_stop  # noqa: E402
from glotbench.runner.tasks import get_task  # noqa: E402
from glotbench.store import Store  # noqa: E402

from .conftest import store_digests  # noqa: E402

NAMES = ["Kari", "Ola", "Siri", "Nils", "Ingrid", "Jonas", "Liv", "Erik"]
CITIES = ["Oslo", "Bergen", "Aarhus", "Malmo", "Turku", "Tromso", "Odense", "Uppsala"]
ITERATIONS = 3
SEED = 11


def write_data(folder: Path) -> list[str]:
    """A SQuAD-layout QA file and a parallel TSV (two references); returns the raw texts."""
    paragraphs = []
    for i in range(20):
        name, home, work = NAMES[i % 8], CITIES[(i * 3) % 8], CITIES[(i * 3 + 1) % 8]
        context = f"{name} lives in {home} and works in {work}."
        paragraphs.append(
            {
                "context": context,
                "qas": [
                    {
                        "id": f"live{i}",
                        "question": f"Where does {name} live?",
                        "answers": [{"text": home, "answer_start": context.find(home)}],
                    },
                    {
                        "id": f"work{i}",
                        "question": f"Where does {name} work?",
                        "answers": [
                            {"text": work, "answer_start": context.rfind(work)},
                            {"text": f"in {work}", "answer_start": context.rfind(work) - 3},
                        ],
                    },
                ],
            }
        )
    (folder / "qa.json").write_text(
        json.dumps({"data": [{"title": "t", "paragraphs": paragraphs}]}), encoding="utf-8"
    )
    lines, texts = [], []
    for i in range(32):
        name, city = NAMES[i % 8], CITIES[(i * 5 + i // 8) % 8]  # no two sources alike
        verb, en, en2 = ("bor", "lives", "stays") if i % 2 else ("jobber", "works", "is working")
        src, ref, ref2 = (
            f"{name} {verb} i {city}.",
            f"{name} {en} in {city}.",
            (f"{name} {en2} in {city}."),
        )
        lines.append(f"{src}\t{ref}\t{ref2}")
        texts += [src, ref, ref2]
    (folder / "mt.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for p in paragraphs:
        texts.append(p["context"])
        texts += [q["question"] for q in p["qas"]]
    return texts


def save_biased_gpt(folder: Path, texts: list[str]) -> Path:
    """A 1-layer GPT-2 whose output favours the data's words, with a byte-level BPE tokenizer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    prompts = texts + ["Context: x\nQuestion: y\nAnswer:", "Translate Norwegian Bokmål to English:"]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(
        prompts,
        trainers.BpeTrainer(
            vocab_size=400,
            special_tokens=["<|endoftext|>"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|endoftext|>", pad_token="<|endoftext|>"
    )
    words = {w for t in texts for w in t.replace(".", " .").split()}
    favoured = sorted({i for w in words for i in fast(" " + w)["input_ids"]})
    cities = sorted({i for w in CITIES for i in fast(" " + w)["input_ids"]})
    newline = fast("\n")["input_ids"]
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(
        transformers.GPT2Config(
            vocab_size=len(fast),
            n_embd=16,
            n_layer=1,
            n_head=2,
            n_positions=256,
            bos_token_id=fast.eos_token_id,
            eos_token_id=fast.eos_token_id,
            tie_word_embeddings=False,
        )
    )
    with torch.no_grad():
        # logits = lm_head · ln_f(h): component 0 of ln_f's output is the constant 1 (its
        # bias), and column 0 of the head adds 2-3 to the favoured tokens (4.5 to the cities,
        # 4.4 to the newline); the other 15 components carry the context, weights N(0, 0.3)
        ln_f, head = model.transformer.ln_f, model.lm_head
        ln_f.weight.fill_(0.5)
        ln_f.weight[0] = 0.0
        ln_f.bias.zero_()
        ln_f.bias[0] = 1.0
        head.weight.normal_(0.0, 0.3, generator=torch.Generator().manual_seed(1))
        head.weight[:, 0] = 0.0
        boost = 2.0 + torch.rand(len(favoured), generator=torch.Generator().manual_seed(2))
        head.weight[favoured, 0] = boost
        head.weight[cities, 0] = 4.5  # answers are likely, and so is ending the line
        head.weight[newline, 0] = 4.4
    model.save_pretrained(folder)
    fast.save_pretrained(folder)
    return folder


DATASETS = [
    {
        "name": "qa",
        "task": "qa",
        "language": "en",
        "loader": "squad",
        "paths": ["qa.json"],
        "splits": {"train": 8, "validation": 0, "test": 12},
    },
    {
        "name": "mt",
        "task": "translation",
        "language": "en",
        "loader": "parallel",
        "paths": ["mt.tsv"],
        "options": {"source_language": "nb"},
        "splits": {"train": 8, "validation": 0, "test": 12},
    },
]
MODELS = [
    {
        "name": "sampled",
        "kind": "hf-generative",
        "options": {"path": "gpt", "max_new_tokens": 8, "batch_size": 4},
    },
    {
        "name": "greedy",
        "kind": "hf-generative",
        "options": {"path": "gpt", "max_new_tokens": 8, "decoding": "greedy"},
    },
]


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("gentext")
    texts = write_data(folder)
    save_biased_gpt(folder / "gpt", texts)
    suite = {
        "name": "generative-text",
        "protocol": {"iterations": ITERATIONS, "seed": SEED, "speed_iterations": 0},
        "datasets": DATASETS,
        "models": MODELS,
    }
    (folder / "suite.yaml").write_text(json.dumps(suite), encoding="utf-8")  # JSON is YAML
    return folder


# -- the SQuAD v1.1 evaluation formula, written out independently -------------------------


def squad_normalize(s: str) -> str:
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def squad_f1(prediction: str, gold: str) -> float:
    p, g = squad_normalize(prediction).split(), squad_normalize(gold).split()
    common = sum((Counter(p) & Counter(g)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(p), common / len(g)
    return 2 * precision * recall / (precision + recall)


def squad_scores(predictions: list[str], golds: list[list[str]]) -> tuple[np.ndarray, np.ndarray]:
    f1 = np.array(
        [max(squad_f1(p, g) for g in gs) for p, gs in zip(predictions, golds, strict=True)]
    )
    em = np.array(
        [
            max(float(squad_normalize(p) == squad_normalize(g)) for g in gs)
            for p, gs in zip(predictions, golds, strict=True)
        ]
    )
    return f1, em


# -- helpers ----------------------------------------------------------------------------


def regenerate(folder: Path, model_spec: dict, dataset_spec: dict, seed: int) -> list[str]:
    """The texts the runner generated for one job, produced again by a fresh adapter."""
    ds = build_dataset(dataset_spec, data_dir=folder)
    task = get_task(ds.task)
    model = build_model(model_spec, base=folder)
    model.fit(task, ds, ds.train, ds.validation, seed)
    return task.predict(model, ds.test, ds)


def stored_runs(path: Path) -> dict[tuple[str, str, int, str], tuple[list[str], np.ndarray]]:
    with Store.open(path, read_only=True) as store:
        runs = store.runs.frame()
        out = {}
        for _, run in runs.iterrows():
            ids, stats = store.stats.of_run(run["run_id"])
            key = (run["model"], run["dataset"], int(run["seed"]), run["metric"])
            out[key] = ([str(i) for i in ids], stats)
    return out


@pytest.fixture(scope="module")
def stores(folder) -> dict[str, Path]:
    paths = {"a": folder / "a.duckdb", "b": folder / "b.duckdb"}
    summary = api.run_benchmark(folder / "suite.yaml", store=paths["a"], scores=False)
    assert summary.completed == 2 * 2 * ITERATIONS and not summary.failures
    # a second run (a new session: the model is loaded afresh) of the sampling model
    summary = api.run_benchmark(
        folder / "suite.yaml", store=paths["b"], models=["sampled"], iterations=2, scores=False
    )
    assert summary.completed == 2 * 2 and not summary.failures
    return paths


@pytest.mark.slow
def test_same_seeds_store_identical_statistics(stores):
    a, b = store_digests(stores["a"]), store_digests(stores["b"])
    # models × iterations × metrics (QA: F1, EM; translation: chrF, chrF++, BLEU)
    assert len(a) == 2 * ITERATIONS * (2 + 3)
    assert len(b) == 2 * (2 + 3) and all(a[run] == digest for run, digest in b.items())


@pytest.mark.slow
def test_stored_statistics_reproduce_sacrebleu_and_squad(folder, stores):
    runs = stored_runs(stores["a"])
    seen = {"qa": [], "mt": []}
    for model_spec in MODELS:
        for spec in DATASETS:
            ds = build_dataset(spec, data_dir=folder)
            ids = [str(r["id"]) for r in ds.test]
            for it in range(ITERATIONS):
                seed = SEED + it
                texts = regenerate(folder, model_spec, spec, seed)
                seen[spec["name"]].append((model_spec["name"], seed, texts))
                stored = {
                    m: runs[(model_spec["name"], spec["name"], seed, m)]
                    for m in (
                        ("squad_f1", "squad_exact_match")
                        if spec["name"] == "qa"
                        else ("chrf", "chrf++", "bleu")
                    )
                }
                for run_ids, _ in stored.values():
                    assert run_ids == ids
                if spec["name"] == "qa":
                    f1, em = squad_scores(texts, [list(r["answers"]) for r in ds.test])
                    np.testing.assert_allclose(stored["squad_f1"][1][:, 0], f1, rtol=0, atol=1e-12)
                    np.testing.assert_allclose(
                        stored["squad_exact_match"][1][:, 0], em, rtol=0, atol=0
                    )
                    for name, ref in (("squad_f1", f1), ("squad_exact_match", em)):
                        summed = stored[name][1].sum(axis=0)
                        assert get_metric(name).score(summed) == pytest.approx(
                            ref.mean(), abs=1e-12
                        )
                else:
                    refs = [[r["target"][j] for r in ds.test] for j in range(2)]
                    bleu = sacrebleu.corpus_bleu(texts, refs).score
                    chrf = sacrebleu.corpus_chrf(texts, refs).score
                    task = get_task("translation")
                    for res in task.statistics(texts, ds.test, ds):
                        np.testing.assert_array_equal(res.stats, stored[res.name][1])
                    got_bleu = get_metric("bleu").score(stored["bleu"][1].sum(axis=0))
                    got_chrf = get_metric("chrf").score(stored["chrf"][1].sum(axis=0))
                    assert got_bleu == pytest.approx(bleu, abs=1e-9)
                    assert got_chrf == pytest.approx(chrf, abs=1e-9)
                    chrf_pp = sacrebleu.corpus_chrf(texts, refs, word_order=2).score
                    got_pp = get_metric("chrf++").score(stored["chrf++"][1].sum(axis=0))
                    assert got_pp == pytest.approx(chrf_pp, abs=1e-9)
    # the tiny model's answers are neither all right nor all wrong
    golds = [list(r["answers"]) for r in build_dataset(DATASETS[0], data_dir=folder).test]
    qa_f1 = [squad_scores(texts, golds)[0].mean() for _, _, texts in seen["qa"]]
    assert 0 < min(qa_f1) and max(qa_f1) < 1
    for name in ("qa", "mt"):
        sampled = [tuple(t) for m, _, t in seen[name] if m == "sampled"]
        greedy = [tuple(t) for m, _, t in seen[name] if m == "greedy"]
        assert len(set(sampled)) == ITERATIONS  # every iteration samples other responses
        assert len(set(greedy)) == 1  # greedy: the same responses in every iteration


def test_sigma_seed_is_sampling_variance(stores):
    for metric in ("chrf", "squad_f1"):
        source = api.load_replicated(store=stores["a"], metric=metric, n_replicates=50)
        table = api.analyze_variance(source).per_unit
        table = table.set_index(table["model"].str.split(" ").str[0])
        assert table.loc["sampled", "n_seeds"] == ITERATIONS
        assert table.loc["sampled", "sigma_seed"] > 0
        assert table.loc["greedy", "sigma_seed"] == 0


# -- the adapter's options ----------------------------------------------------------------


def _loaded(folder: Path, spec: dict, seed: int = 3, **options):
    ds = build_dataset(spec, data_dir=folder)
    task = get_task(ds.task)
    model = build_model(
        {
            "name": "g",
            "kind": "hf-generative",
            "options": {"path": "gpt", "max_new_tokens": 8, **options},
        },
        base=folder,
    )
    model.fit(task, ds, ds.train, ds.validation, seed)
    return model, task, ds


@pytest.mark.slow
def test_stop_strings_stop_early_without_changing_responses(folder):
    model, task, ds = _loaded(folder, DATASETS[1], batch_size=5, stop=[])
    prompts = [
        model.translation_prompt(r["source"], r["source_language"], r["target_language"])
        for r in ds.test
    ]
    unstopped = [r[0] for r in model.generate(prompts)]
    assert any("\n" in t for t in unstopped)  # the newline stop string matters here
    model.stop = ("\n",)
    stopped = [r[0] for r in model.generate(prompts)]
    assert stopped == [cut_at_stop(t, ["\n"]) for t in unstopped]
    # one prompt at a time and in reverse order: the same responses
    model.batch_size = 1
    assert [r[0] for r in model.generate(prompts[::-1])] == stopped[::-1]
    assert cut_at_stop("a. b\nc", [".", "\n"]) == "a" and cut_at_stop("abc", ["x", ""]) == "abc"


def test_prompts_templates_and_few_shot(folder):
    model, task, ds = _loaded(folder, DATASETS[0], few_shot=2, shot_seed=0)
    r = ds.test[0]
    prompt = model.qa_prompt(r["question"], r["context"])
    blocks = prompt.split("\n\n")
    assert len(blocks) == 3
    assert blocks[-1] == f"Context: {r['context']}\nQuestion: {r['question']}\nAnswer:"
    shot = model.shots[0]
    assert blocks[0] == (
        f"Context: {shot['context']}\nQuestion: {shot['question']}\nAnswer: {shot['answers'][0]}"
    )
    assert model.qa_prompt("Who?", "") == "\n\n".join([*blocks[:2], "Question: Who?\nAnswer:"])
    # abstractive QA without a context: one stripped one-line answer per question
    answers = model.answer(["Where does Kari live?", "Who?"], ["", ""])
    assert len(answers) == 2 and all(a == a.strip() and "\n" not in a for a in answers)
    assert model.metadata()["empty_response_rate"] in (0.0, 0.5, 1.0)
    mt, _, mt_ds = _loaded(folder, DATASETS[1], templates={"translation": "{source} => "})
    assert mt.translation_prompt("Hei", "nb", "en") == "Hei => "
    meta = mt.metadata()
    assert meta["template"] == "{source} => " and meta["stop"] == ["\n"]
    assert meta["task_kind"] == "translation" and meta["max_new_tokens"] == 8
    default, _, _ = _loaded(folder, DATASETS[1])
    assert default.translation_prompt("Hei", "nb", "en") == (
        "Translate Norwegian Bokmål to English:\nHei\n"
    )
    shots, _, _ = _loaded(folder, DATASETS[1], few_shot=1, shot_seed=0)
    shot = shots.shots[0]
    assert shots.translation_prompt("Hei", "nb", "en") == (
        f"Translate Norwegian Bokmål to English:\n{shot['source']}\n{shot['target'][0]}\n\n"
        "Translate Norwegian Bokmål to English:\nHei\n"
    )
    bad, _, _ = _loaded(folder, DATASETS[1], templates={"translation": "{text}"})
    with pytest.raises(ModelError, match="cannot be filled"):
        bad.translation_prompt("Hei", "nb", "en")


def test_decoding_options_are_checked(folder):
    def build(**options):
        return build_model(
            {"name": "g", "kind": "hf-generative", "options": {"path": "x", **options}}
        )

    assert build(decoding="greedy").do_sample is False
    assert build(do_sample=False).do_sample is False
    assert build().do_sample is True
    with pytest.raises(ModelError, match="contradicts"):
        build(decoding="greedy", do_sample=True)
    with pytest.raises(ModelError, match="'sampling' or 'greedy'"):
        build(decoding="beam")
    with pytest.raises(ModelError, match="max_new_tokens"):
        build(max_new_tokens=0)
    with pytest.raises(ModelError, match="vote: 3 is for classification"):
        _loaded(folder, DATASETS[0], vote=3)
    # the extractive QA encoder cannot answer without a context; the generative LM can
    qa_encoder = build_model({"name": "e", "kind": "hf-qa", "options": {"path": "x"}})
    assert qa_encoder.supports(get_task("qa"))
    assert not qa_encoder.supports(get_task("abstractive_qa"))
    assert build().supports(get_task("abstractive_qa")) and build().supports(get_task("mt"))
