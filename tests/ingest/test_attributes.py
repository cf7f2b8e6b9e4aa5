"""Built-in attributes and entity units, against hand counts and seqeval."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from glotbench.analysis.buckets import analyze_buckets, unit_bucket_stats
from glotbench.ingest.attributes import (
    entity_attributes,
    entity_units,
    oov_rate,
    question_word,
    tokens,
    vocabulary,
)
from glotbench.metrics import get_metric
from glotbench.resample.weights import BLOCK, make_support, weight_block

seqeval = pytest.importorskip("seqeval.metrics")
from seqeval.metrics.sequence_labeling import (  # noqa: E402
    get_entities,
    precision_recall_fscore_support,
)

LABELS = ("PER", "LOC", "ORG", "MISC")


def test_tokens_vocabulary_and_oov_by_hand() -> None:
    assert tokens("Kari bor i Oslo, 2024!") == ["kari", "bor", "i", "oslo", "2024"]
    vocab = vocabulary([["Kari", "bor"], ["i", "Bergen"]])
    assert vocab == {"kari", "bor", "i", "bergen"}
    # "oslo" and "nå" unseen: 2 of 5
    assert oov_rate(["Kari", "bor", "i", "Oslo", "nå"], vocab) == pytest.approx(2 / 5)
    assert oov_rate([], vocab) == 0.0
    attrs = entity_attributes(["Kari", "bor", "i", "Nye", "Oslo"], "LOC", 3, 4, vocab)
    assert attrs == {"entity_length": 2, "entity_label": "LOC", "entity_oov": 1.0}
    assert "entity_oov" not in entity_attributes(["a"], "PER", 0, 0, None)


@pytest.mark.parametrize(
    ("question", "language", "expected"),
    [
        ("What is the capital of Norway?", "en", "what"),
        ("Who wrote Peer Gynt?", "en", "who"),
        ("Whose book is it?", "en", "who"),
        ("In which year did it open?", "en", "which"),
        ("How many people live there?", "en", "how"),
        ("When did the war end?", "en", "when"),
        ("Where is Bergen?", "en", "where"),
        ("Why is the sky blue?", "en", "why"),
        ("The capital of Norway is?", "en", "other"),
        ("Wann endete der Krieg?", "de", "when"),
        ("¿Por qué es azul el cielo?", "es", "why"),
        ("¿Quién escribió el libro?", "es", "who"),
        ("Qu'est-ce que c'est ?", "fr", "what"),
        ("Hvor mange bor i Oslo?", "da", "how"),
        ("Hvor ligger Bergen?", "nb", "where"),
        ("Vem skrev boken?", "sv", "who"),
    ],
)
def test_question_words(question: str, language: str, expected: str) -> None:
    assert question_word(question, language) == expected


def test_question_word_of_a_language_without_cues_is_none() -> None:
    assert question_word("Nani desu ka", "ja") is None


def test_entity_units_by_hand() -> None:
    gold = ["B-PER", "I-PER", "O", "B-LOC", "O", "B-MISC"]
    pred = ["B-PER", "I-PER", "O", "B-ORG", "I-ORG", "B-MISC"]
    units = {u: s.tolist() for u, *_, s in entity_units(pred, gold)}
    assert units == {
        "0:1:PER": [1, 1, 1],  # found
        "3:3:LOC": [0, 0, 1],  # missed
        "5:5:MISC": [1, 1, 1],
        "3:4:ORG": [0, 1, 0],  # predicted, not gold
    }
    no_misc = {u: s.tolist() for u, *_, s in entity_units(pred, gold, drop_misc=True)}
    assert "5:5:MISC" not in no_misc and len(no_misc) == 3


def _random_tags(rng: np.random.Generator, n: int) -> list[str]:
    """Well-formed IOB2 tags with entities of length 1-3."""
    tags = ["O"] * n
    i = 0
    while i < n:
        if rng.random() < 0.3:
            length = int(rng.integers(1, 4))
            label = LABELS[int(rng.integers(len(LABELS)))]
            end = min(n, i + length)
            tags[i] = f"B-{label}"
            for j in range(i + 1, end):
                tags[j] = f"I-{label}"
            i = end + 1
        else:
            i += 1
    return tags


def _corpus(seed: int, sentences: int = 150) -> tuple[list[list[str]], dict[str, list[list[str]]]]:
    rng = np.random.default_rng(seed)
    gold = [_random_tags(rng, int(rng.integers(3, 15))) for _ in range(sentences)]
    systems = {}
    for name, noise in (("good", 0.15), ("weak", 0.5)):
        systems[name] = [t if rng.random() > noise else _random_tags(rng, len(t)) for t in gold]
    return gold, systems


def _seqeval_counts(gold: list[list[str]], pred: list[list[str]]) -> tuple[int, int, int]:
    """seqeval's own counts: entities of the corpus (sentences joined), |P∩G|, |P|, |G|."""
    true_entities, pred_entities = set(get_entities(gold)), set(get_entities(pred))
    return len(true_entities & pred_entities), len(pred_entities), len(true_entities)


def _units_frame(
    gold: list[list[str]], systems: dict[str, list[list[str]]]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    stats_rows, attr_rows = [], {}
    for name, preds in systems.items():
        for i, (p, g) in enumerate(zip(preds, gold, strict=True)):
            for unit, label, start, end, values in entity_units(p, g):
                stats_rows.append(
                    {"run_id": name, "example_id": f"s{i}", "unit": unit, "stats": values}
                )
                attr_rows[(f"s{i}", unit)] = {
                    "entity_label": label,
                    "entity_length": end - start + 1,
                }
    attrs = pd.DataFrame.from_dict(attr_rows, orient="index")
    attrs.index = pd.MultiIndex.from_tuples(attrs.index, names=["example_id", "unit"])
    return pd.DataFrame(stats_rows), attrs


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_entity_units_sum_to_seqeval_counts(seed: int) -> None:
    gold, systems = _corpus(seed)
    metric = get_metric("ner_f1")
    for preds in systems.values():
        units = np.zeros(3)
        for p, g in zip(preds, gold, strict=True):
            sentence = sum((s for *_, s in entity_units(p, g)), np.zeros(3))
            np.testing.assert_array_equal(sentence, metric.example_stats(p, g))
            units += sentence
        assert tuple(units.astype(int)) == _seqeval_counts(gold, preds)


def test_entity_buckets_add_up_and_match_seqeval_on_the_buckets_entities() -> None:
    gold, systems = _corpus(3)
    metric = get_metric("ner_f1")
    names = list(systems)
    ids = [f"s{i}" for i in range(len(gold))]
    stats = np.stack([metric.stats(systems[m], gold) for m in names])
    units, attrs = _units_frame(gold, systems)
    for column in ("entity_label", "entity_length"):
        labels, bucket_stats, _, _ = unit_bucket_stats(units, attrs[column], names, ids, 3)
        # additivity: the buckets' statistics sum to every run's, example by example
        np.testing.assert_allclose(bucket_stats.sum(axis=0), stats)
    # label buckets: seqeval's per-type F1 (precision of a type from its predicted entities)
    result = analyze_buckets(
        stats,
        metric,
        pd.DataFrame(index=pd.Index(ids, name="example_id")),
        systems=names,
        example_ids=ids,
        unit_attributes=attrs,
        unit_stats=units,
        run_ids=names,
        n_resamples=200,
    )
    assert not result.notes
    table = result.buckets
    for name in names:
        _, _, f1, support = precision_recall_fscore_support(gold, systems[name], average=None)
        types = sorted({e[0] for e in get_entities(gold)})
        for label, f in zip(types, f1, strict=True):
            row = table[
                (table.attribute == "entity_label")
                & (table.bucket == label)
                & (table.system == name)
            ]
            assert row.score.item() == pytest.approx(f)
        # length buckets: seqeval on the bucket's entities only (others mapped to O)
        for length in (1, 2, 3):
            row = table[
                (table.attribute == "entity_length")
                & (table.bucket == str(length))
                & (table.system == name)
            ]
            keep_g = [_only_length(t, length) for t in gold]
            keep_p = [_only_length(t, length) for t in systems[name]]
            assert row.score.item() == pytest.approx(seqeval.f1_score(keep_g, keep_p))


def _only_length(tags: list[str], length: int) -> list[str]:
    out = ["O"] * len(tags)
    for label, start, end in get_entities(tags):
        if end - start + 1 == length:
            out[start] = f"B-{label}"
            for j in range(start + 1, end + 1):
                out[j] = f"I-{label}"
    return out


def test_entity_bucket_intervals_resample_sentences() -> None:
    from glotbench.analysis.buckets import stats_replicates

    gold, systems = _corpus(4, sentences=60)
    metric = get_metric("ner_f1")
    names = list(systems)
    ids = [f"s{i}" for i in range(len(gold))]
    units, attrs = _units_frame(gold, systems)
    _, bucket_stats, _, _ = unit_bucket_stats(units, attrs["entity_label"], names, ids, 3)
    reps = stats_replicates(bucket_stats, metric, n_resamples=BLOCK, seed=5, compress=False)
    # W over sentences, as the engine draws it for the (B·m) stacked statistic matrices
    flat = bucket_stats.reshape(-1, len(ids), 3).transpose(1, 0, 2).reshape(len(ids), -1)
    weights = weight_block("multinomial", 5, 0, make_support(flat, False), BLOCK)
    for b in range(bucket_stats.shape[0]):
        for s in range(len(names)):
            summed = weights @ bucket_stats[b, s]
            with np.errstate(invalid="ignore", divide="ignore"):
                expected = metric.score(summed)
            np.testing.assert_allclose(reps[:, b, s], expected)
