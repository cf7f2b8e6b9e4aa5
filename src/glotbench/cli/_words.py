"""Library messages in command-line words.

Library errors and notes name their parameters as the Python API spells them,
in keyword form: ``metric='nli=accuracy'``, ``scheme='parametric'``,
``metric=TASK=METRIC`` (``docs/api.md``; ``glotbench.errors``). The command
line shows them as its options: ``--metric nli=accuracy``, ``--scheme
parametric``, ``--metric TASK=METRIC``. Only the keywords below are rewritten,
and only in that keyword form, so prose that merely mentions a parameter
("each task's metric") stays as it is; so does a row named by four or more of
its fields (``model='A', task='t', language='de', seed=0``).
"""

from __future__ import annotations

import re

#: API keyword -> command-line option (the same name unless listed here)
FLAGS: dict[str, str] = {
    "attributes": "--attributes",
    "dataset": "--dataset",
    "demo": "--demo",
    "disagree": "--disagree",
    "emmeans": "--emmeans",
    "examples": "--examples",
    "gold": "--gold",
    "input": "--input",
    "labels": "--labels",
    "language": "--language",
    "languages": "--language",
    "metric": "--metric",
    "method": "--method",
    "metrics": "--metric",
    "min_size": "--min-size",
    "model": "--model",
    "models": "--model",
    "predictions": "--pred",
    "references": "--references",
    "scheme": "--scheme",
    "sigma_b": "--sigma-b",
    "sigma_boot": "--sigma-boot",
    "sigma_seed": "--sigma-seed",
    "correlation": "--correlation",
    "simulate_models": "--simulate-models",
    "store": "--store",
    "task": "--task",
    "tasks": "--task",
    "train_sizes": "--train-sizes",
    "keep_outputs": "--keep-outputs",
    "lock_timeout": "--lock-timeout",
    "out": "--out",
    "percent": "--percent",
    "data_dir": "--data-dir",
    "data": "--data",
    "model_args": "--model-arg",
    "device": "--device",
    "batch_size": "--batch-size",
    "force": "--force",
    "allow_unknown_metrics": "--allow-unknown-metrics",
}
#: ``languages='with'`` is the settings' language resampling, not the language filter
RESAMPLING = {"with", "without", "none"}

_KEYWORD = re.compile(
    r"(?<![\w.-])(" + "|".join(sorted(FLAGS, key=len, reverse=True)) + r")="
    r"(?:'([^']*)'|([A-Z][A-Za-z_]*(?:[=:][A-Z][A-Za-z_]*)*|True\b|[0-9][0-9.]*))"
)


def _flag(match: re.Match[str]) -> str:
    keyword, quoted, bare = match.group(1), match.group(2), match.group(3)
    value = quoted if quoted is not None else bare
    if keyword == "languages" and value in RESAMPLING:
        return f"--resample-languages {value}"
    if value == "True":
        return FLAGS[keyword]
    return f"{FLAGS[keyword]} {value}"


#: a row named by its fields: four or more ``key=value`` in one comma-separated run
#: (``model='A', task='t', language='de', seed=0``; RunRecord.describe): data, not advice
_PAIR = r"[a-z_]+=(?:'[^']*'|[^\s,;()']+)"
_RECORD = re.compile(rf"(?<![\w.-]){_PAIR}(?:, {_PAIR}){{3,}}")


def cli_words(text: str) -> str:
    """``text`` with every ``keyword='value'`` of :data:`FLAGS` as its option, except
    inside a row described by its fields (:data:`_RECORD`)."""
    pieces, start = [], 0
    for record in _RECORD.finditer(text):
        pieces += [_KEYWORD.sub(_flag, text[start : record.start()]), record.group()]
        start = record.end()
    return "".join([*pieces, _KEYWORD.sub(_flag, text[start:])])
