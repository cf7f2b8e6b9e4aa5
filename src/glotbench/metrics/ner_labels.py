"""ScandEval/EuroEval's four entity types, and the map from other NER tag sets onto them.

ScandEval and EuroEval score NER on PER, LOC, ORG and MISC (``micro_f1`` and
``micro_f1_no_misc``, :class:`glotbench.metrics.tagging.NerF1NoMisc`). Their
datasets are converted to these types before evaluation; for NorNE
(Jørgensen et al. 2020) EuroEval's ``src/scripts/create_norne.py`` maps

    GPE_LOC -> LOC,  GPE_ORG -> ORG,  PROD, DRV, EVT -> MISC

and keeps PER, LOC, ORG, MISC (learnt from, not copied). Without this map a
NorNE test set has no MISC entities at all (its products, events and derived
names are PROD, EVT, DRV), so ``ner_f1_no_misc`` equals ``ner_f1`` — not
ScandEval's figure.

For other sources (glotbench's choice, where EuroEval has no dataset to
follow): the common long names PERSON, LOCATION, ORGANIZATION/ORGANISATION and
OntoNotes' GPE go to PER, LOC, ORG and LOC; every other entity type goes to
MISC (a named entity of none of the three types). IOB2 prefixes are kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

#: the entity types of ScandEval/EuroEval's NER tasks
SCANDEVAL_TYPES: tuple[str, ...] = ("PER", "LOC", "ORG", "MISC")

#: entity type -> ScandEval type; NorNE's from EuroEval's create_norne.py
SCANDEVAL_TYPE_MAP: Mapping[str, str] = {
    "PER": "PER",
    "LOC": "LOC",
    "ORG": "ORG",
    "MISC": "MISC",
    # NorNE (EuroEval's conversion)
    "GPE_LOC": "LOC",
    "GPE_ORG": "ORG",
    "PROD": "MISC",
    "DRV": "MISC",
    "EVT": "MISC",
    # other tag sets (glotbench)
    "PERSON": "PER",
    "LOCATION": "LOC",
    "GPE": "LOC",
    "ORGANIZATION": "ORG",
    "ORGANISATION": "ORG",
}


def scandeval_type(entity_type: str) -> str:
    """The ScandEval type of ``entity_type`` (case-insensitive; unknown types: MISC)."""
    return SCANDEVAL_TYPE_MAP.get(entity_type.strip().upper(), "MISC")


def scandeval_tag(tag: str) -> str:
    """An IOB2 tag (``O``, ``B-TYPE``, ``I-TYPE``) with its type mapped to ScandEval's."""
    if tag == "O" or len(tag) < 3 or tag[1] != "-":
        return tag
    return f"{tag[:2]}{scandeval_type(tag[2:])}"


def scandeval_tags(tags: Iterable[str]) -> list[str]:
    """:func:`scandeval_tag` of every tag of a sentence."""
    return [scandeval_tag(str(t)) for t in tags]
