"""The dependency parser (kinds ``parser``, ``parse-baseline``) and its decoder.

References outside glotbench: brute-force enumeration of all head
assignments (and networkx's Edmonds for larger n) for the decoder; a
synthetic grammar with a known tree for the perceptron; an independent
count of LAS/UAS (CoNLL 2018: universal relation, gold tokenisation) for the
statistics the runner stores.
"""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from glotbench.runner.datasets import build_dataset
from glotbench.runner.errors import ModelError
from glotbench.runner.models import build_model
from glotbench.runner.models.depparse import (
    ArcFactoredParser,
    DependencyParser,
    ParseBaseline,
    Sentence,
)
from glotbench.runner.models.depparse.arborescence import (
    _cle,
    is_single_root_tree,
    max_arborescence,
    tree_score,
)
from glotbench.runner.models.depparse.features import (
    ARC_FEATURE_GROUPS,
    arc_feature_index,
    sentence_attributes,
)
from glotbench.runner.tasks import get_task

# -- decoder -------------------------------------------------------------------


def _brute_force(scores: np.ndarray) -> tuple[float, np.ndarray]:
    n = scores.shape[0] - 1
    best, best_heads = -np.inf, None
    for assignment in itertools.product(range(n + 1), repeat=n):
        heads = np.array((-1, *assignment))
        if is_single_root_tree(heads):
            s = tree_score(scores, heads)
            if s > best:
                best, best_heads = s, heads
    assert best_heads is not None
    return best, best_heads


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_max_arborescence_matches_brute_force(n: int):
    rng = np.random.default_rng(100 + n)
    for _ in range(60 if n < 4 else 20 if n == 4 else 6):
        scores = rng.normal(size=(n + 1, n + 1)) * rng.choice([0.1, 1.0, 10.0])
        heads = max_arborescence(scores)
        assert is_single_root_tree(heads)
        best, best_heads = _brute_force(scores)
        assert tree_score(scores, heads) == pytest.approx(best, abs=1e-9)
        np.testing.assert_array_equal(heads, best_heads)  # continuous scores: unique optimum


def test_max_arborescence_single_root_even_when_root_arcs_dominate():
    # every word prefers the root: the unconstrained MST attaches all of them there
    scores = np.zeros((5, 5))
    scores[0, 1:] = 10.0
    scores[1, 2:] = 1.0
    heads = max_arborescence(scores)
    assert is_single_root_tree(heads)
    assert _brute_force(scores)[0] == pytest.approx(tree_score(scores, heads))
    free = scores.copy()
    np.fill_diagonal(free, -np.inf)
    free[:, 0] = -np.inf
    unconstrained = _cle(free)
    assert (unconstrained[1:] == 0).sum() > 1  # the constraint matters here


@pytest.mark.slow
def test_max_arborescence_matches_networkx_edmonds_on_larger_sentences():
    nx = pytest.importorskip("networkx")
    rng = np.random.default_rng(7)
    for n, repeats in ((8, 3), (15, 2), (25, 1)):
        for _ in range(repeats):
            scores = rng.normal(size=(n + 1, n + 1))
            heads = max_arborescence(scores)
            assert is_single_root_tree(heads)
            # networkx Edmonds on the graph where the root has exactly one way out per
            # child: try every root child and keep the best (exact by enumeration)
            best = -np.inf
            for child in range(1, n + 1):
                g = nx.DiGraph()
                g.add_edge(0, child, weight=scores[0, child])
                for h in range(1, n + 1):
                    for d in range(1, n + 1):
                        if h != d and d != child:
                            g.add_edge(h, d, weight=scores[h, d])
                tree = nx.maximum_spanning_arborescence(g, attr="weight")
                best = max(best, sum(scores[h, d] for h, d in tree.edges()))
            assert tree_score(scores, heads) == pytest.approx(best, abs=1e-9)


def test_max_arborescence_rejects_bad_input():
    with pytest.raises(ValueError, match="square"):
        max_arborescence(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="NaN"):
        max_arborescence(np.full((3, 3), np.nan))
    np.testing.assert_array_equal(max_arborescence(np.zeros((1, 1))), [-1])


def test_is_single_root_tree():
    assert is_single_root_tree([-1, 0, 1, 1])
    assert not is_single_root_tree([-1, 0, 0, 1])  # two root arcs
    assert not is_single_root_tree([-1, 0, 3, 2])  # cycle 2 <-> 3
    assert not is_single_root_tree([-1, 1])  # self-loop


# -- features ------------------------------------------------------------------


def test_between_features_match_a_direct_count():
    tokens = ["a", "b", "c", "d", "e", "f"]
    upos = ["DET", "NOUN", "VERB", "DET", "ADJ", "NOUN"]
    attrs = sentence_attributes(tokens, upos)
    n_features = 2**16
    idx = arc_feature_index(attrs, ["between"], n_features)
    tags = ["<root>", *upos]
    for h in range(7):
        for d in range(1, 7):
            if h == d:
                continue
            lo, hi = min(h, d), max(h, d)
            expected = len(set(tags[lo + 1 : hi]))
            present = int((idx[:, h, d] != n_features).sum())
            assert present == expected, (h, d)


def test_feature_index_is_process_independent_and_grouped():
    attrs = sentence_attributes(
        ["The", "dog", "barks"], ["DET", "NOUN", "VERB"], ["the", "dog", "bark"]
    )
    a = arc_feature_index(attrs, ARC_FEATURE_GROUPS, 2**18)
    b = arc_feature_index(attrs, ARC_FEATURE_GROUPS, 2**18)
    np.testing.assert_array_equal(a, b)
    assert a.min() >= 0 and a.max() <= 2**18
    small = arc_feature_index(attrs, ["upos"], 2**18)
    assert small.shape == (3, 4, 4)  # three POS templates, no distance conjunction
    with_distance = arc_feature_index(attrs, ["upos", "distance"], 2**18)
    assert with_distance.shape == (7, 4, 4)  # 3 + 3 conjoined + the distance alone
    # CRC-32 hashing: a fixed value, the same in every process
    assert int(a[0, 2, 1]) == int(arc_feature_index(attrs, ARC_FEATURE_GROUPS, 2**18)[0, 2, 1])


# -- the perceptron on a grammar with known trees -------------------------------


def _toy_sentence(rng: np.random.Generator) -> tuple[Sentence, list[int]]:
    """DET ADJ* NOUN VERB (DET NOUN): determiners and adjectives attach to their
    noun, the subject noun and the object noun to the verb, the verb to the root."""
    words, tags, heads = [], [], []

    def noun_phrase() -> int:
        start = len(words)
        n_adj = int(rng.integers(0, 3))
        words.append(str(rng.choice(["the", "a"])))
        tags.append("DET")
        for _ in range(n_adj):
            words.append(str(rng.choice(["big", "red", "old"])))
            tags.append("ADJ")
        words.append(str(rng.choice(["dog", "cat", "man"])))
        tags.append("NOUN")
        noun = len(words)  # 1-based
        heads.extend([noun] * (noun - 1 - start))
        heads.append(-1)  # filled by the caller
        return noun

    subj = noun_phrase()
    words.append(str(rng.choice(["sees", "likes"])))
    tags.append("VERB")
    verb = len(words)
    heads.append(0)
    heads[subj - 1] = verb
    if rng.random() < 0.5:
        obj = noun_phrase()
        heads[obj - 1] = verb
    return Sentence(tuple(words), tuple(tags)), heads


def test_perceptron_learns_a_known_grammar():
    rng = np.random.default_rng(3)
    train = [_toy_sentence(rng) for _ in range(150)]
    test = [_toy_sentence(rng) for _ in range(100)]
    parser = ArcFactoredParser(["upos", "distance"], epochs=5, n_features=2**16)
    parser.fit([s for s, _ in train], [h for _, h in train], seed=1)
    correct = sum(p == g for s, h in test for p, g in zip(parser.predict(s), h, strict=True))
    words = sum(len(h) for _, h in test)
    assert correct == words  # the grammar is deterministic given the POS sequence


# -- the model kinds in the runner ----------------------------------------------


def _records(sentences: list[tuple[Sentence, list[int]]]) -> list[dict]:
    out = []
    for i, (s, h) in enumerate(sentences):
        out.append(
            {
                "id": f"t{i}",
                "tokens": list(s.tokens),
                "upos": list(s.upos),
                "lemmas": None,
                "heads": h,
                "deprels": [
                    "root" if x == 0 else ("det" if t == "DET" else "dep")
                    for x, t in zip(h, s.upos, strict=True)
                ],
            }
        )
    return out


def test_model_kinds_build_and_validate_options():
    assert isinstance(build_model({"name": "p", "kind": "parser"}), DependencyParser)
    assert isinstance(build_model({"name": "b", "kind": "parse-baseline"}), ParseBaseline)
    with pytest.raises(ModelError, match="unknown feature group"):
        build_model({"name": "p", "kind": "parser", "options": {"features": ["suffix"]}})
    with pytest.raises(ModelError, match="epochs"):
        build_model({"name": "p", "kind": "parser", "options": {"epochs": 0}})
    with pytest.raises(ModelError, match="strategy"):
        build_model({"name": "b", "kind": "parse-baseline", "options": {"strategy": "up"}})
    parser = build_model({"name": "p", "kind": "parser"})
    assert parser.supports(get_task("parsing")) and not parser.supports(get_task("pos"))
    with pytest.raises(ModelError, match="trained"):
        parser.parse(_records([_toy_sentence(np.random.default_rng(0))]))


def test_baselines_attach_to_neighbours():
    rec = _records([_toy_sentence(np.random.default_rng(1))])
    left = ParseBaseline("l", "left")
    right = ParseBaseline("r", "right")
    task = get_task("parsing")
    for m in (left, right):
        m.fit(task, None, rec, [], 0)  # type: ignore[arg-type]
    n = len(rec[0]["tokens"])
    assert [h for h, _ in left.parse(rec)[0]] == list(range(n))
    assert [h for h, _ in right.parse(rec)[0]] == [*range(2, n + 1), 0]
    assert left.parse(rec)[0][0] == (0, "root")
    counts = Counter(r for r, h in zip(rec[0]["deprels"], rec[0]["heads"], strict=True) if h)
    majority = max(sorted(counts), key=lambda k: counts[k])
    assert {rel for h, rel in left.parse(rec)[0] if h} == {majority}


# -- real data -----------------------------------------------------------------


def _ud(shared_data: Path, treebank: str, train: int, test: int):
    return build_dataset(
        {
            "name": treebank,
            "task": "parsing",
            "language": "xx",
            "loader": "conllu",
            "paths": [str(shared_data / "ud" / treebank / "*.conllu")],
            "splits": {"train": train, "validation": 0, "test": test},
        }
    )


def _independent_attachment(pred: list, records: list) -> tuple[float, float]:
    """CoNLL 2018 LAS/UAS counted directly (gold tokenisation, universal relations)."""
    words = uas = las = 0
    for arcs, r in zip(pred, records, strict=True):
        for (h, rel), gh, grel in zip(arcs, r["heads"], r["deprels"], strict=True):
            words += 1
            if h == gh:
                uas += 1
                if rel.split(":")[0] == grel.split(":")[0]:
                    las += 1
    return las / words, uas / words


@pytest.mark.slow
def test_parser_on_ud_beats_baselines_and_matches_independent_counts(shared_data: Path):
    ds = _ud(shared_data, "UD_English-EWT", 250, 250)
    task = get_task("parsing")
    results = {}
    for name, model in (
        ("parser", build_model({"name": "p", "kind": "parser", "options": {"epochs": 3}})),
        ("left", build_model({"name": "l", "kind": "parse-baseline"})),
        (
            "right",
            build_model({"name": "r", "kind": "parse-baseline", "options": {"strategy": "right"}}),
        ),
    ):
        model.fit(task, ds, ds.train, ds.validation, 5)
        pred = task.predict(model, ds.test, ds)
        stats = {m.name: m for m in task.statistics(pred, ds.test, ds)}
        las, uas = _independent_attachment(pred, ds.test)
        assert stats["las"].score() == pytest.approx(las, abs=1e-12)
        assert stats["uas"].score() == pytest.approx(uas, abs=1e-12)
        # per-sentence additive statistics: (correct, words)
        assert stats["las"].stats.shape == (len(ds.test), 2)
        assert stats["las"].stats[:, 1].sum() == sum(len(r["tokens"]) for r in ds.test)
        if name == "parser":
            for arcs in pred:
                assert is_single_root_tree([-1, *(h for h, _ in arcs)])
        results[name] = (las, uas)
    # a wide margin over the trivial baselines (about 0.3 UAS for the right neighbour)
    assert results["parser"][1] > results["right"][1] + 0.25
    assert results["parser"][0] > results["right"][0] + 0.35
    assert results["parser"][1] > 0.6 and results["parser"][0] > 0.5


@pytest.mark.slow
def test_parser_is_deterministic_per_seed(shared_data: Path):
    from glotbench.runner.protocol import training_sample

    ds = _ud(shared_data, "UD_Norwegian-Bokmaal", 60, 30)
    task = get_task("parsing")

    def run(seed: int) -> list:
        model = build_model({"name": "p", "kind": "parser", "options": {"epochs": 2}})
        model.fit(task, ds, training_sample(ds.train, seed, True), [], seed)
        return task.predict(model, ds.test, ds)

    first = run(11)
    assert run(11) == first
    assert run(12) != first  # another bootstrap of the training sentences, another order
