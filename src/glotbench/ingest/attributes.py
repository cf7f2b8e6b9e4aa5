"""Built-in attributes of examples and entities for fine-grained buckets.

The attributes follow XTREME-R's fine-grained analysis (Ruder et al. 2021,
§5 and Table 6: XQuAD by context, question and answer length and question
type; NER by entity length, label and out-of-vocabulary status), which in turn
follows Fu et al. (2020, "Interpretable Multi-dataset Evaluation for Named
Entity Recognition", EMNLP; ExplainaBoard):

* classification / tagging (sentence level): ``sentence_length`` (word tokens),
  ``oov_rate`` (share of the tokens whose lower-cased form never occurs in the
  train split) and, for classification, the gold ``label``;
* NER (entity level, one *unit* per entity): ``entity_length`` (tokens),
  ``entity_label`` and ``entity_oov`` (share of the entity's tokens unseen in
  train), plus the sentence's ``sentence_length``;
* extractive QA: ``context_length``, ``question_length``, ``answer_length``
  (first gold answer) and ``question_word`` (what, who, when, where, why, how,
  which, other; :data:`QUESTION_WORDS` lists the languages).

Entity units and their statistics (Fu et al. 2020, §3: precision-side
attributes are those of the *predicted* entity). A unit is an entity span
``(label, start, end)`` of a sentence that is gold or predicted. Its span-F1
statistics ``(correct, predicted, gold)`` are

* a gold entity: ``(1, 1, 1)`` when predicted exactly (true positive), else
  ``(0, 0, 1)`` (false negative);
* a predicted entity that is not gold: ``(0, 1, 0)`` (false positive), with
  the attributes of the predicted span itself.

Because gold and predicted span sets are disjoint outside their intersection,
the statistics of a sentence's units sum to its ``(|P ∩ G|, |P|, |G|)``,
seqeval's counts (:class:`glotbench.metrics.tagging.NerF1`), and a matched
prediction has the same span, label and tokens as its gold entity, so every
attribute of an entity is the same whether it is read from the gold or the
predicted side.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from glotbench.metrics.tagging import iob_spans

TOKEN = re.compile(r"\w+", re.UNICODE)

#: question words per language, first match in the question wins. Multi-word
#: cues come first. Categories after XTREME-R Table 6 / SQuAD analyses.
QUESTION_WORDS: dict[str, tuple[tuple[str, str], ...]] = {
    "en": (
        ("how", "how"),
        ("what", "what"),
        ("which", "which"),
        ("who", "who"),
        ("whom", "who"),
        ("whose", "who"),
        ("when", "when"),
        ("where", "where"),
        ("why", "why"),
    ),
    "de": (
        ("wie", "how"),
        ("was", "what"),
        ("welche", "which"),
        ("welcher", "which"),
        ("welches", "which"),
        ("welchen", "which"),
        ("welchem", "which"),
        ("wer", "who"),
        ("wen", "who"),
        ("wem", "who"),
        ("wessen", "who"),
        ("wann", "when"),
        ("wo", "where"),
        ("wohin", "where"),
        ("woher", "where"),
        ("warum", "why"),
        ("weshalb", "why"),
        ("wieso", "why"),
    ),
    "es": (
        ("cómo", "how"),
        ("cuánto", "how"),
        ("cuánta", "how"),
        ("cuántos", "how"),
        ("cuántas", "how"),
        ("qué", "what"),
        ("cuál", "which"),
        ("cuáles", "which"),
        ("quién", "who"),
        ("quiénes", "who"),
        ("cuándo", "when"),
        ("dónde", "where"),
        ("por qué", "why"),
    ),
    "fr": (
        ("pourquoi", "why"),
        ("comment", "how"),
        ("combien", "how"),
        ("quoi", "what"),
        ("que", "what"),
        ("qu", "what"),
        ("quel", "which"),
        ("quelle", "which"),
        ("quels", "which"),
        ("quelles", "which"),
        ("lequel", "which"),
        ("laquelle", "which"),
        ("qui", "who"),
        ("quand", "when"),
        ("où", "where"),
    ),
    "da": (
        ("hvorfor", "why"),
        ("hvordan", "how"),
        ("hvor mange", "how"),
        ("hvor meget", "how"),
        ("hvor", "where"),
        ("hvad", "what"),
        ("hvilken", "which"),
        ("hvilket", "which"),
        ("hvilke", "which"),
        ("hvem", "who"),
        ("hvornår", "when"),
    ),
    "nb": (
        ("hvorfor", "why"),
        ("hvordan", "how"),
        ("hvor mange", "how"),
        ("hvor mye", "how"),
        ("hvor", "where"),
        ("hva", "what"),
        ("hvilken", "which"),
        ("hvilket", "which"),
        ("hvilke", "which"),
        ("hvem", "who"),
        ("når", "when"),
    ),
    "sv": (
        ("varför", "why"),
        ("hur", "how"),
        ("vad", "what"),
        ("vilken", "which"),
        ("vilket", "which"),
        ("vilka", "which"),
        ("vem", "who"),
        ("vems", "who"),
        ("när", "when"),
        ("var", "where"),
        ("vart", "where"),
        ("varifrån", "where"),
    ),
}
QUESTION_WORDS["no"] = QUESTION_WORDS["nb"]
QUESTION_WORDS["nn"] = QUESTION_WORDS["nb"]

#: the question-word categories, ``other`` when no cue is found
QUESTION_TYPES = ("what", "who", "when", "where", "why", "how", "which", "other")

#: attributes of entity units (the others are attributes of examples)
UNIT_ATTRIBUTES = ("entity_length", "entity_label", "entity_oov")


def tokens(text: Any) -> list[str]:
    """Word tokens (Unicode ``\\w+``), lower-cased; missing text has none."""
    if text is None or (isinstance(text, float) and np.isnan(text)):
        return []
    return [t.lower() for t in TOKEN.findall(str(text))]


def vocabulary(token_lists: Iterable[Sequence[str]]) -> set[str]:
    """Lower-cased token types of a split (the train vocabulary for OOV)."""
    return {str(t).lower() for toks in token_lists for t in toks}


def oov_rate(toks: Sequence[str], vocab: set[str]) -> float:
    """Share of ``toks`` whose lower-cased form is not in ``vocab`` (0 for no tokens)."""
    if not toks:
        return 0.0
    return sum(str(t).lower() not in vocab for t in toks) / len(toks)


def question_word(question: str, language: str = "en") -> str | None:
    """Question type of ``question`` (:data:`QUESTION_TYPES`); ``None`` for a language without cues.

    The earliest cue in the question wins (ties: the longer, multi-word cue),
    so "In which year …" is ``which`` and "How many …" is ``how``.
    """
    cues = QUESTION_WORDS.get(language.split("-")[0].split("_")[0].lower())
    if cues is None:
        return None
    words = tokens(question)
    best: tuple[int, int, str] | None = None
    for cue, kind in cues:
        parts = tokens(cue)
        width = len(parts)
        for i in range(len(words) - width + 1):
            if words[i : i + width] == parts:
                candidate = (i, -width, kind)
                if best is None or candidate < best:
                    best = candidate
                break
    return best[2] if best else "other"


def unit_id(label: str, start: int, end: int) -> str:
    """Key of an entity unit: ``start:end:label`` (end inclusive)."""
    return f"{start}:{end}:{label}"


def entity_attributes(
    toks: Sequence[str], label: str, start: int, end: int, vocab: set[str] | None
) -> dict[str, Any]:
    """``entity_length``, ``entity_label`` and (with a train vocabulary) ``entity_oov``."""
    out: dict[str, Any] = {"entity_length": end - start + 1, "entity_label": label}
    if vocab is not None:
        out["entity_oov"] = oov_rate(list(toks[start : end + 1]), vocab)
    return out


def entity_units(
    prediction: Sequence[str], reference: Sequence[str], *, drop_misc: bool = False
) -> list[tuple[str, str, int, int, np.ndarray]]:
    """Entity units of one sentence: ``(unit_id, label, start, end, (correct, predicted, gold))``.

    Gold entities give ``(1, 1, 1)`` (found) or ``(0, 0, 1)`` (missed); predicted
    entities that are not gold give ``(0, 1, 0)``. Summed over the units they
    are the sentence's span statistics (chunking of
    :func:`glotbench.metrics.tagging.iob_spans`, as seqeval's). ``drop_misc``
    maps ``*MISC`` tags to ``O`` first (``ner_f1_no_misc``).
    """
    pred, gold = list(prediction), list(reference)
    if drop_misc:
        pred = ["O" if t[-4:].lower() == "misc" else t for t in pred]
        gold = ["O" if t[-4:].lower() == "misc" else t for t in gold]
    pred_spans, gold_spans = iob_spans(pred), iob_spans(gold)
    out = []
    for label, start, end in sorted(gold_spans, key=lambda s: (s[1], s[2], s[0])):
        hit = float((label, start, end) in pred_spans)
        out.append((unit_id(label, start, end), label, start, end, np.array([hit, hit, 1.0])))
    for label, start, end in sorted(pred_spans - gold_spans, key=lambda s: (s[1], s[2], s[0])):
        out.append((unit_id(label, start, end), label, start, end, np.array([0.0, 1.0, 0.0])))
    return out
