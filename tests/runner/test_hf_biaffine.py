"""The biaffine parsing head of ``hf-encoder`` on tiny random local BERTs (skipped without torch).

References outside the adapter: a toy language whose trees are a known
function of its words (the head must learn them, and beat attaching every
word to the word before it); the tree check of the exact decoder's tests;
LAS/UAS counted directly from the predicted heads (CoNLL 2018: gold
tokenisation, universal relations) against the statistics the runner
stores.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (extra 'neural')")
transformers = pytest.importorskip(
    "transformers", reason="transformers is not installed (extra 'neural')"
)
os.environ["HF_HUB_OFFLINE"] = "1"

from glotbench.runner.datasets import build_dataset  # noqa: E402
from glotbench.runner.errors import ModelError  # noqa: E402
from glotbench.runner.models import build_model  # noqa: E402
from glotbench.runner.models.depparse import ParseBaseline, is_single_root_tree  # noqa: E402
from glotbench.runner.protocol import Job, Protocol, execute_job, training_sample  # noqa: E402
from glotbench.runner.tasks import get_task  # noqa: E402

from .hf_tiny import save_bert, train_tokenizer  # noqa: E402

# -- a toy language with known trees ---------------------------------------------

DETS, ADJS = ["the", "a", "every"], ["big", "red", "old", "tiny"]
NOUNS = ["dog", "cat", "man", "woman", "bird", "farmer"]
VERBS = ["sees", "likes", "chases", "feeds"]


def _noun_phrase(rng: np.random.Generator, words: list, heads: list, rels: list) -> int:
    """DET ADJ* NOUN: determiner and adjectives attach to the noun; returns its index."""
    start = len(words)
    n_adj = int(rng.integers(0, 3))
    words.append(str(rng.choice(DETS)))
    words.extend(str(rng.choice(ADJS)) for _ in range(n_adj))
    words.append(str(rng.choice(NOUNS)))
    noun = len(words)  # 1-based
    heads.extend([noun] * (noun - 1 - start) + [-1])
    rels.extend(["det"] + ["amod"] * n_adj + ["?"])
    return noun


def toy_sentence(rng: np.random.Generator) -> tuple[list[str], list[int], list[str]]:
    """NP VERB (NP) (and NP VERB (NP)): nouns attach to their verb (nsubj/obj); the first
    verb is the root; a second clause's verb attaches to the first (conj), ``and`` to it (cc)."""
    words: list[str] = []
    heads: list[int] = []
    rels: list[str] = []

    def clause() -> int:
        subj = _noun_phrase(rng, words, heads, rels)
        words.append(str(rng.choice(VERBS)))
        verb = len(words)
        heads.append(-1)
        rels.append("?")
        heads[subj - 1], rels[subj - 1] = verb, "nsubj"
        if rng.random() < 0.6:
            obj = _noun_phrase(rng, words, heads, rels)
            heads[obj - 1], rels[obj - 1] = verb, "obj"
        return verb

    main = clause()
    heads[main - 1], rels[main - 1] = 0, "root"
    if rng.random() < 0.4:
        words.append("and")
        heads.append(-1)
        rels.append("cc")
        and_at = len(words)
        second = clause()
        heads[second - 1], rels[second - 1] = main, "conj"
        heads[and_at - 1] = second
    return words, heads, rels


def write_conllu(path: Path, sentences: list[tuple[list[str], list[int], list[str]]]) -> Path:
    upos = {**dict.fromkeys(DETS, "DET"), **dict.fromkeys(ADJS, "ADJ")}
    upos.update({**dict.fromkeys(NOUNS, "NOUN"), **dict.fromkeys(VERBS, "VERB"), "and": "CCONJ"})
    lines = []
    for k, (words, heads, rels) in enumerate(sentences):
        lines += [f"# sent_id = toy-{k}", f"# text = {' '.join(words)}"]
        for i, (w, h, r) in enumerate(zip(words, heads, rels, strict=True), start=1):
            lines.append(f"{i}\t{w}\t{w}\t{upos[w]}\t_\t_\t{h}\t{r}\t_\t_")
        lines.append("")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def toy(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("biaffine")
    rng = np.random.default_rng(2017)
    sentences = [toy_sentence(rng) for _ in range(400)]
    write_conllu(folder / "toy.conllu", sentences)
    texts = [" ".join(w) for w, _, _ in sentences]
    # a vocabulary too small for whole words: longer words split into several sub-tokens
    save_bert(folder / "bert", train_tokenizer(texts, vocab_size=60), positions=64)
    return folder


def _toy_spec(folder: Path, train: int = 240, validation: int = 40, test: int = 100) -> dict:
    return {
        "name": "toy",
        "task": "parsing",
        "language": "xx",
        "loader": "conllu",
        "paths": [str(folder / "toy.conllu")],
        "splits": {"train": train, "validation": validation, "test": test},
    }


def _bert(folder: Path, **options) -> dict:
    return {
        "name": "biaffine",
        "kind": "hf-encoder",
        "options": {
            "path": str(folder / "bert"),
            "max_epochs": 12,
            "patience": 12,
            "warmup_steps": 5,
            "batch_size": 16,
            "learning_rate": 2e-3,
            "arc_mlp": 64,
            "label_mlp": 32,
            "mlp_dropout": 0.1,
            **options,
        },
    }


def independent_attachment(pred: list, records: list) -> tuple[np.ndarray, np.ndarray]:
    """Per sentence (correct, words) for LAS and UAS, counted directly (CoNLL 2018)."""
    las, uas = [], []
    for arcs, r in zip(pred, records, strict=True):
        u = lab = 0
        for (h, rel), gh, grel in zip(arcs, r["heads"], r["deprels"], strict=True):
            if int(h) == int(gh):
                u += 1
                lab += rel.split(":")[0] == grel.split(":")[0]
        las.append((lab, len(arcs)))
        uas.append((u, len(arcs)))
    return np.array(las, dtype=float), np.array(uas, dtype=float)


def _fit(spec: dict, ds, seed: int):
    model = build_model(spec)
    model.fit(get_task("parsing"), ds, ds.train, ds.validation, seed)
    return model


# -- tests -----------------------------------------------------------------------


@pytest.mark.slow
def test_biaffine_learns_the_toy_language_and_beats_neighbour_attachment(toy):
    ds = build_dataset(_toy_spec(toy, train=160, validation=20, test=80))
    model = _fit(_bert(toy, max_epochs=8, patience=8), ds, 3)
    pred = model.parse(ds.test)
    for arcs, r in zip(pred, ds.test, strict=True):
        assert len(arcs) == len(r["tokens"])
        assert is_single_root_tree([-1, *(h for h, _ in arcs)])
        assert all((rel == "root") == (h == 0) for h, rel in arcs)

    def scores(arcs: list) -> tuple[float, float]:
        las, uas = independent_attachment(arcs, ds.test)
        return las[:, 0].sum() / las[:, 1].sum(), uas[:, 0].sum() / uas[:, 1].sum()

    las, uas = scores(pred)
    print(f"biaffine LAS {las:.3f} UAS {uas:.3f}")
    for strategy in ("left", "right"):
        baseline = ParseBaseline(strategy, strategy)
        baseline.fit(get_task("parsing"), ds, ds.train, [], 3)
        base_las, base_uas = scores(baseline.parse(ds.test))
        print(f"attach-{strategy} LAS {base_las:.3f} UAS {base_uas:.3f}")
        # this seed: 0.88 LAS / 0.90 UAS; attach-right 0.20 / 0.45, attach-left 0 / 0
        assert las > base_las + 0.5 and uas > base_uas + 0.3
    assert las > 0.8 and uas > 0.8
    meta = model.metadata()
    assert meta["head"].startswith("biaffine") and meta["arc_mlp"] == 64
    assert meta["relations"] == ["amod", "cc", "conj", "det", "nsubj", "obj", "root"]
    assert meta["history"] and meta["parameters"] > 0


@pytest.mark.slow
def test_runner_statistics_equal_an_independent_count_and_seeds_reproduce(toy):
    spec, ds_spec = _bert(toy, max_epochs=3), _toy_spec(toy, train=80, validation=10, test=40)
    ds = build_dataset(ds_spec)
    protocol = Protocol(iterations=1, seed=21, speed_iterations=0)

    def job() -> Job:
        from glotbench.runner.datasets import DatasetSpec
        from glotbench.runner.models import ModelSpec

        return Job(ModelSpec(**spec), DatasetSpec(**ds_spec), 0, protocol)

    outcome = execute_job(job(), ds)
    again = execute_job(job(), ds)
    stats = {run.metric: s for run, _, s in outcome.runs}
    for (run, ids, s), (_, ids2, s2) in zip(outcome.runs, again.runs, strict=True):
        assert ids == ids2 and np.array_equal(s, s2), run.metric  # same seed, same statistics
    # an independent fit with the job's seed and training sample: the same trees, and
    # LAS/UAS counted from its heads equal the runner's statistics
    seed = job().seed
    model = build_model(spec)
    model.fit(get_task("parsing"), ds, training_sample(ds.train, seed, True), ds.validation, seed)
    pred = model.parse(ds.test)
    las, uas = independent_attachment(pred, ds.test)
    np.testing.assert_array_equal(stats["las"], las)
    np.testing.assert_array_equal(stats["uas"], uas)
    assert model.parse(ds.test) == pred
    other = build_model(spec)
    other.fit(get_task("parsing"), ds, training_sample(ds.train, 99, True), ds.validation, 99)
    assert other.parse(ds.test) != pred  # another seed, another bootstrap and initialisation


@pytest.mark.slow
def test_truncated_words_still_give_trees(toy):
    ds = build_dataset(_toy_spec(toy, train=40, validation=0, test=30))
    model = _fit(_bert(toy, max_epochs=1, max_length=8), ds, 1)
    assert model.max_length == 8
    pred = model.parse(ds.test)
    long = [
        r
        for r in ds.test
        if len(model.tokenizer(r["tokens"], is_split_into_words=True)["input_ids"]) > 8
    ]
    assert long  # some sentences lose words to truncation
    for arcs, r in zip(pred, ds.test, strict=True):
        assert len(arcs) == len(r["tokens"])
        assert is_single_root_tree([-1, *(h for h, _ in arcs)])
    # words without any sub-token (a lone space): not scored, attached leftwards
    odd = [
        {"id": "a", "tokens": [" ", "the", "dog", " ", "sees"]},
        {"id": "b", "tokens": [" "]},
        {"id": "c", "tokens": ["the", "old", "red", "farmer", "feeds", "every", "tiny", "bird"]},
    ]
    arcs = model.parse(odd)
    assert [len(a) for a in arcs] == [5, 1, 8]
    assert all(is_single_root_tree([-1, *(h for h, _ in a)]) for a in arcs)
    assert arcs[1] == [(0, "root")]
    assert arcs[0][3] == (3, model.fallback_relation)  # hangs from "dog"
    assert arcs[0][0][0] == next(i + 1 for i, (h, _) in enumerate(arcs[0]) if h == 0)


def test_options_and_task_selection(toy):
    pos, parsing = get_task("pos"), get_task("parsing")
    auto = build_model(_bert(toy))
    assert auto.supports(parsing) and auto.supports(pos)
    only = build_model(_bert(toy, head="biaffine"))
    assert only.supports(parsing) and not only.supports(pos)
    with pytest.raises(ModelError, match="head must be one of"):
        build_model(_bert(toy, head="mlp"))
    with pytest.raises(ModelError, match="arc_mlp"):
        build_model(_bert(toy, arc_mlp=0))
    with pytest.raises(ModelError, match="mlp_dropout"):
        build_model(_bert(toy, mlp_dropout=1.0))
    with pytest.raises(ModelError, match="head_learning_rate"):
        build_model(_bert(toy, head_learning_rate=0))
    with pytest.raises(ModelError, match="fine-tuned on a parsing task"):
        auto.parse([{"id": "x", "tokens": ["a"]}])


def test_suite_jobs_pick_the_head_from_the_task(toy, tmp_path):
    from glotbench.runner.suite import load_suite

    from .conftest import write_sentiment

    write_sentiment(tmp_path / "sent.jsonl")
    (tmp_path / "suite.yaml").write_text(
        f"""
name: heads
protocol: {{iterations: 2, seed: 1, speed_iterations: 0}}
datasets:
  - {{name: sent, task: sentiment, language: en, loader: jsonl, paths: [sent.jsonl]}}
  - {{name: toy, task: parsing, language: xx, loader: conllu, paths: ["{toy}/toy.conllu"]}}
models:
  - {{name: enc, kind: hf-encoder, options: {{path: "{toy}/bert"}}}}
  - {{name: parser-only, kind: hf-encoder, options: {{path: "{toy}/bert", head: biaffine}}}}
""",
        encoding="utf-8",
    )
    jobs, _ = load_suite(tmp_path / "suite.yaml").jobs()
    cells = sorted({(j.model.name, j.dataset.name) for j in jobs})
    assert cells == [("enc", "sent"), ("enc", "toy"), ("parser-only", "toy")]
    assert len(jobs) == 6  # two iterations (seeds) each


@pytest.mark.slow
def test_head_learning_rate_makes_two_parameter_groups(toy):
    ds = build_dataset(_toy_spec(toy, train=16, validation=0, test=4))
    model = _fit(_bert(toy, max_epochs=1, head_learning_rate=1e-2), ds, 0)
    groups = model._parameter_groups()
    assert [g.get("lr") for g in groups] == [None, 1e-2]
    n_encoder = sum(p.numel() for p in model.model.encoder.parameters())
    assert sum(p.numel() for p in groups[0]["params"]) == n_encoder
    assert model.metadata()["head_learning_rate"] == 1e-2


@pytest.mark.slow
def test_out_of_memory_halves_the_parser_batch_with_the_same_result(toy, monkeypatch):
    """Training forward passes of more than 4 sentences run out of memory: the steps are
    recomputed in micro-batches of 4, and the weights and trees equal a 4 x 4 run."""
    from glotbench.runner.models.hf_encoder import HFEncoder

    ds = build_dataset(_toy_spec(toy, train=32, validation=8, test=16))
    spec = _bert(toy, max_epochs=1, batch_size=16)
    reference = _fit(_bert(toy, max_epochs=1, batch_size=16, gradient_accumulation=4), ds, 4)
    original = HFEncoder._forward
    raised = []

    def forward(self, items, **kwargs):
        if self.model.training and len(items) > 4:
            raised.append(len(items))
            raise RuntimeError("CUDA out of memory. Tried to allocate 1.00 GiB")
        return original(self, items, **kwargs)

    monkeypatch.setattr(HFEncoder, "_forward", forward)
    model = _fit(spec, ds, 4)
    assert raised == [16, 8]
    meta = model.metadata()
    assert meta["batch_size"] == 4 and meta["gradient_accumulation"] == 4
    a, b = model.model.state_dict(), reference.model.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert model.parse(ds.test) == reference.parse(ds.test)


def test_scores_and_loss_match_the_biaffine_formulas():
    """s[h, d] = a_h^T U a'_d + a_h^T u and r_d^T U_l r'_h + W_l [r_d; r'_h] + b_l (Dozat &
    Manning 2017, eq. 2-5), recomputed in float64 from the MLP outputs; the loss is the mean
    negative log-likelihood of the gold heads over the allowed heads plus that of the gold
    relations at the gold heads."""
    from glotbench.runner.models.hf_biaffine import biaffine_module

    torch.manual_seed(0)
    encoder = transformers.BertModel(
        transformers.BertConfig(
            vocab_size=50,
            hidden_size=16,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=32,
            max_position_embeddings=32,
        )
    )
    module = biaffine_module(encoder, n_relations=3, arc_mlp=6, label_mlp=5, dropout=0.0)
    with torch.no_grad():
        for p in (module.arc_U, module.arc_u, module.label_U):
            p.normal_()
    module.eval()
    input_ids = torch.randint(5, 50, (2, 9))
    attention_mask = torch.tensor([[1] * 9, [1] * 6 + [0] * 3])
    first = torch.tensor([[1, 2, 4, 6], [1, 3, 4, 0]])
    word_mask = torch.tensor([[True] * 4, [True] * 3 + [False]])
    heads = torch.tensor([[2, 0, 2, 3], [0, 1, 1, -100]])
    rels = torch.tensor([[1, 0, 2, 1], [0, 2, 1, -100]])
    with torch.no_grad():
        out = module(input_ids, attention_mask, first, word_mask, heads=heads, rels=rels)
        states = encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
    f64 = lambda t: t.detach().double().numpy()  # noqa: E731
    U, u = f64(module.arc_U), f64(module.arc_u)
    LU = f64(module.label_U)
    LW, Lb = f64(module.label_W.weight), f64(module.label_W.bias)
    nll, label_nll = [], []
    for b in range(2):
        m = int(word_mask[b].sum())
        with torch.no_grad():
            nodes = torch.cat([module.root[None], states[b, first[b, :m]]])
            a, a_dep = f64(module.arc_head(nodes)), f64(module.arc_dep(nodes[1:]))
            r, r_dep = f64(module.label_head(nodes)), f64(module.label_dep(nodes[1:]))
        got = f64(out.arc[b])
        for d in range(m):
            column = np.array([a[h] @ U @ a_dep[d] + a[h] @ u for h in range(m + 1)])
            allowed = [h for h in range(m + 1) if h != d + 1]
            np.testing.assert_allclose(got[allowed, d], column[allowed], rtol=1e-4, atol=1e-5)
            assert got[d + 1, d] < -1e30 and (got[m + 1 :, d] < -1e30).all()  # masked
            log_z = np.log(np.exp(column[allowed]).sum())
            nll.append(log_z - column[int(heads[b, d])])
            h = int(heads[b, d])
            pair = np.concatenate([r_dep[d], r[h]])
            labels = np.array([r_dep[d] @ LU[k] @ r[h] + LW[k] @ pair + Lb[k] for k in range(3)])
            label_nll.append(np.log(np.exp(labels).sum()) - labels[int(rels[b, d])])
    assert float(out.loss) == pytest.approx(np.mean(nll) + np.mean(label_nll), rel=1e-4)
    # no scored word in the batch (every word cut off): loss 0, not NaN
    with torch.no_grad():
        none = torch.full_like(heads, -100)
        empty = module(input_ids, attention_mask, first, word_mask, heads=none, rels=none)
    assert float(empty.loss) == 0.0


# -- UD English through the runner into a store -----------------------------------


@pytest.mark.slow
def test_ud_english_end_to_end_into_a_store(shared_data: Path, tmp_path: Path):
    from glotbench import api
    from glotbench.runner.suite import load_suite
    from glotbench.store import Store

    treebank = shared_data / "ud" / "UD_English-EWT"
    files = sorted(treebank.glob("*.conllu"))
    if not files:
        pytest.skip(f"no CoNLL-U files of UD English-EWT under {treebank}")
    texts = []
    for line in files[0].read_text(encoding="utf-8").splitlines()[:3000]:
        if line.startswith("# text = "):
            texts.append(line.removeprefix("# text = "))
    save_bert(tmp_path / "bert", train_tokenizer(texts, vocab_size=400), positions=128)
    (tmp_path / "suite.yaml").write_text(
        f"""
name: biaffine-ud
protocol: {{iterations: 1, seed: 5, speed_iterations: 0}}
splits: {{train: 24, validation: 4, test: 12}}
datasets:
  - {{name: ud-en, task: parsing, language: en, loader: conllu,
     paths: ["{treebank}/*.conllu"]}}
models:
  - {{name: biaffine, kind: hf-encoder, options: {{path: bert, max_epochs: 1,
     batch_size: 8, arc_mlp: 32, label_mlp: 16}}}}
""",
        encoding="utf-8",
    )
    summary = api.run_benchmark(tmp_path / "suite.yaml", store=tmp_path / "s.duckdb")
    assert summary.completed == 1 and not summary.failures
    stored = {}
    with Store.open(tmp_path / "s.duckdb", read_only=True) as store:
        runs = store.runs.frame(metrics=["las", "uas"])
        assert sorted(runs["metric"]) == ["las", "uas"]
        for _, run in runs.iterrows():
            assert run["model_metadata"]["head"].startswith("biaffine")
            stored[run["metric"]] = store.stats.of_run(run["run_id"])
            seed = int(run["seed"])
    # the same fit outside the runner (the job's seed and bootstrap): LAS/UAS counted
    # directly from its trees equal the stored statistics, example by example
    suite = load_suite(tmp_path / "suite.yaml")
    ds = build_dataset(suite.datasets[0], data_dir=suite.base_dir)
    model = build_model(suite.models[0], base=suite.base_dir)
    train = training_sample(ds.train, seed, suite.protocol.bootstrap_train)
    model.fit(get_task("parsing"), ds, train, ds.validation, seed)
    pred = model.parse(ds.test)
    assert all(is_single_root_tree([-1, *(h for h, _ in arcs)]) for arcs in pred)
    las, uas = independent_attachment(pred, ds.test)
    ids = [r["id"] for r in ds.test]
    for metric, expected in (("las", las), ("uas", uas)):
        stored_ids, stats = stored[metric]
        assert list(stored_ids) == ids and stats.shape == (12, 2)
        np.testing.assert_array_equal(stats, expected)
