"""One canonical name per task, with every harness's names for it as aliases.

The same task reaches glotbench under several names: XTREME's ``evaluate.py``
folders (``panx``, ``mewslix``, ``tydiqa``, ``udpos``), the XTREME-R paper's
tables (WikiANN-NER, Mewsli-X, TyDiQA-GoldP, UD-POS), lm-evaluation-harness
(``paws`` for PAWS-X) and tidy files written by hand. Results of one task must
meet under one name, or a published baseline and one's own run of the same
task become two tasks and neither is compared with the other.

:data:`TASK_ALIASES` is the one table: canonical name -> aliases. The
canonical names are the XTREME-R paper's (lower case, as the embedded
baselines, :func:`glotbench.data.xtreme_r_baselines`, spell them) where the
paper names the task, else XTREME's identifier. :data:`METRIC_ALIASES` maps a
harness's generic metric name on a task to glotbench's registry name (the
paper's "F1" on XQuAD is SQuAD v1.1 F1, ``squad_f1``; on WikiANN-NER it is
span F1, ``ner_f1``). Sources: Hu et al. 2020 (XTREME) and Ruder et al. 2021
(XTREME-R), Tables 15-24; ``google-research/xtreme`` task folders.
"""

from __future__ import annotations

from collections.abc import Mapping

#: canonical task name -> the other names harnesses and papers use for it
TASK_ALIASES: Mapping[str, tuple[str, ...]] = {
    "xnli": ("xnli",),
    "pawsx": ("paws-x", "paws_x", "paws"),
    "xcopa": ("xcopa",),
    "udpos": ("ud-pos", "ud_pos"),  # not "pos": the runner's own task of that name
    "wikiann-ner": ("panx", "pan-x", "pan_x", "wikiann", "wikiann_ner", "wikiann ner"),
    "xquad": ("xquad",),
    "mlqa": ("mlqa",),
    "tydiqa-goldp": ("tydiqa", "tydiqa_goldp", "tydiqa-gold-p", "tydi qa-goldp"),
    "bucc2018": ("bucc", "bucc-2018"),
    "tatoeba": ("tatoeba",),
    "mewsli-x": ("mewslix", "mewsli_x", "mewsli"),
    "lareqa": ("lareqa",),
}

#: canonical task -> {a harness's metric name: glotbench's registry name}
METRIC_ALIASES: Mapping[str, Mapping[str, str]] = {
    **{
        task: {"f1": "squad_f1", "em": "squad_exact_match", "exact_match": "squad_exact_match"}
        for task in ("xquad", "mlqa", "tydiqa-goldp")
    },
    "wikiann-ner": {"f1": "ner_f1"},
    "udpos": {"f1": "ner_f1"},  # XTREME's evaluate.py scores UD-POS with seqeval's F1 too
    "mewsli-x": {"map": "map@20", "mAP@20": "map@20"},
    "lareqa": {"map": "map@20", "mAP@20": "map@20"},
}


#: canonical task -> the metric its benchmark reports first (XTREME-R's tables give QA
#: as "F1 / EM"), used when a store declares no primary metric for a task with several
PRIMARY_METRICS: Mapping[str, str] = {
    "xquad": "squad_f1",
    "mlqa": "squad_f1",
    "tydiqa-goldp": "squad_f1",
}


def _key(name: str) -> str:
    return name.strip().lower()


_CANONICAL: dict[str, str] = {}
for _canonical, _aliases in TASK_ALIASES.items():
    for _alias in (_canonical, *_aliases):
        _previous = _CANONICAL.setdefault(_key(_alias), _canonical)
        if _previous != _canonical:  # pragma: no cover - a mistake in the table
            raise RuntimeError(f"task alias {_alias!r} names {_previous!r} and {_canonical!r}")


def canonical_task(name: str) -> str:
    """The canonical name of task ``name`` (case-insensitive); unknown names are kept as given."""
    return _CANONICAL.get(_key(str(name)), str(name))


def canonical_metric(task: str, metric: str) -> str:
    """glotbench's registry name of a harness's ``metric`` on ``task`` (else ``metric``)."""
    aliases = METRIC_ALIASES.get(canonical_task(task), {})
    return aliases.get(str(metric), aliases.get(_key(str(metric)), str(metric)))


def task_aliases(task: str) -> tuple[str, ...]:
    """Every name of ``task``'s canonical task, the canonical name first."""
    canonical = canonical_task(task)
    return (canonical, *TASK_ALIASES.get(canonical, ()))


def known_primary(task: str) -> str | None:
    """The benchmark's primary metric of ``task`` (:data:`PRIMARY_METRICS`), if known."""
    return PRIMARY_METRICS.get(canonical_task(task))
