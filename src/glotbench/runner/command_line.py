"""Models and tasks named on the command line, as lm-eval and EuroEval users name them.

``--model KIND:ID`` builds a suite model entry without a YAML file:

* ``hf:ID`` — a Hugging Face causal LM (kind ``hf-generative``), ``ID`` a
  local folder or a Hub id (lm-eval's ``--model hf --model_args pretrained=ID``);
* ``openai:NAME`` — a model behind an OpenAI-compatible server (kind
  ``openai``; the server address from ``--model-arg base_url=…`` or
  ``$OPENAI_BASE_URL``);
* any kind of ``glotbench run --list-models`` (``hf-encoder:ID``,
  ``majority:``, ``tfidf-logreg:``, ``callable:module:function``, …). Kinds
  without an identifier take ``ID`` as the model's name (default: the kind).

A ``--model`` without a known ``KIND:`` prefix keeps its old meaning: the
name of one of the suite's models. ``--model-arg key=value`` (repeatable, or
lm-eval's comma list ``a=1,b=2``; values read as YAML scalars, so ``8`` is an
integer and ``true`` a boolean) sets options of every command-line model;
``--device`` and ``--batch-size`` set those options where the model's kind
has them. :func:`dump_suite` writes a command-line run as a suite YAML that
``glotbench run FILE`` runs again, with the same run keys.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glotbench.errors import InputError
from glotbench.runner.models import REGISTRY, ModelSpec

if TYPE_CHECKING:
    from glotbench.runner.suite import Suite

#: short kind names of the command line
KIND_ALIASES: dict[str, str] = {"hf": "hf-generative", "hf-causal": "hf-generative"}
#: the built-in suite that ``glotbench run --model KIND:ID --task …`` uses without a suite
DEFAULT_TASK_SUITE = "euroeval-hub"


def split_list(values: list[str] | None) -> list[str] | None:
    """Repeated options and comma lists alike: ``["a,b", "c"]`` -> ``["a", "b", "c"]``."""
    if not values:
        return None
    out = [part.strip() for value in values for part in str(value).split(",")]
    return [v for v in out if v] or None


def model_kind(text: str) -> str | None:
    """The kind a ``--model`` value names (``hf:…`` -> ``hf-generative``), or None for a name."""
    prefix, sep, _ = text.partition(":")
    if not sep:
        return None
    kind = KIND_ALIASES.get(prefix, prefix)
    return kind if kind in REGISTRY else None


#: a comma that starts the next ``key=value`` pair (not one inside a value)
_PAIR_START = re.compile(r"\s*[A-Za-z_][\w.-]*\s*=")


def split_pairs(value: str) -> list[str]:
    """``a=1,b=x, y`` -> ``["a=1", "b=x, y"]``: a comma separates pairs only outside quotes
    and when a ``key=`` follows it, so commas inside a value (a system prompt) stay."""
    parts: list[str] = []
    start, quote = 0, ""
    for i, char in enumerate(value):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"" and value[start:i].rstrip().endswith("="):
            quote = char  # a quoted value starts right after its '='
        elif char == "," and _PAIR_START.match(value, i + 1):
            parts.append(value[start:i])
            start = i + 1
    parts.append(value[start:])
    return parts


def parse_model_args(values: list[str] | None) -> dict[str, Any]:
    """``["a=1,b=true", "c=x"]`` -> ``{"a": 1, "b": True, "c": "x"}`` (YAML scalars).

    Commas separate pairs only where a ``key=`` follows (:func:`split_pairs`); a value may
    be quoted (``system="Be brief, a=b"``) and is then taken verbatim."""
    from glotbench.ingest.yaml_files import load_yaml

    out: dict[str, Any] = {}
    for value in values or []:
        for part in split_pairs(value):
            key, sep, text = part.partition("=")
            key = key.strip()
            if not sep or not key:
                raise InputError(f"model_args=KEY=VALUE: {part!r} is not of that form")
            text = text.strip()
            parsed = load_yaml(text, "model_args") if text else ""
            if parsed is None or (isinstance(parsed, dict) and not text.startswith("{")):
                parsed = text  # "Answer: yes" is text, not a mapping
            out[key] = parsed
    return out


def _adapter_parameters(kind: str) -> set[str]:
    """Keyword options the adapter of ``kind`` accepts (``{"**"}``: any keyword)."""
    from glotbench.runner.models.options import option_schema

    names, open_ended = option_schema(kind)
    return {"**"} if open_ended else set(names)


def command_line_models(
    values: list[str],
    *,
    model_args: list[str] | None = None,
    device: str | None = None,
    batch_size: int | None = None,
) -> tuple[list[ModelSpec], list[str], list[str]]:
    """``models`` values -> (``KIND:ID`` model entries, suite model names, notes)."""
    from glotbench.runner.models.options import OptionError, check_options
    from glotbench.store.names import check_name

    options = parse_model_args(model_args)
    specs: list[ModelSpec] = []
    names: list[str] = []
    notes: list[str] = []
    for value in values:
        kind = model_kind(value)
        if kind is None:
            names.append(value)
            continue
        ident = value.partition(":")[2].strip()
        opts = dict(options)
        id_option = REGISTRY[kind].id_option
        if id_option is not None:
            if not ident:
                raise InputError(f"kind {kind} needs an identifier after ':' (models={value!r})")
            opts.setdefault(id_option, ident)
            local = Path(ident)
            name = local.name if kind != "openai" and local.exists() else ident
        else:
            name = ident or kind
        accepted = _adapter_parameters(kind)
        for key, given in (("device", device), ("batch_size", batch_size)):
            if given is None:
                continue
            if kind == "openai" and key == "batch_size":
                opts.setdefault("concurrency", given)  # requests in flight
            elif key in accepted:
                opts.setdefault(key, given)
            else:
                notes.append(f"{key}={given!r} does not apply to model {name!r} (kind {kind})")
        unknown = sorted(set(opts) - accepted) if "**" not in accepted else []
        if unknown:
            raise InputError(
                f"model_args=KEY=VALUE: {', '.join(unknown)} is not an option of kind {kind} "
                f"(model {name!r}); its options are {', '.join(sorted(accepted)) or 'none'}"
            )
        name = check_name(name, "model", field="models")
        try:
            opts = check_options(kind, opts)
        except OptionError as exc:
            raise InputError(f"{exc} (models={value!r})", field="model_args") from None
        specs.append(ModelSpec(name=name, kind=kind, options=opts))
    seen: set[str] = set()
    for spec in specs:
        if spec.name in seen:
            raise InputError(f"model {spec.name!r} is given twice in models=KIND:ID")
        seen.add(spec.name)
    return specs, names, notes


def data_suite(paths: list[str], task: str, language: str) -> Suite:
    """A suite of local data files for one task and language (``data=[FILE]``), no models.

    The loader follows the file: ``.conllu`` (CoNLL-U), a folder (a saved Hugging
    Face dataset), else JSONL/CSV/TSV. Records with a ``split`` field keep their
    splits (``splits: predefined``); otherwise they are split uniformly with the
    fixed seed. Paths inside the working folder are stored relative to it.
    """
    from glotbench.runner.datasets import DatasetSpec
    from glotbench.runner.suite import Suite
    from glotbench.runner.tasks import get_task
    from glotbench.store.names import check_name

    task = get_task(task).name  # an unknown task: an error naming the known ones
    here = Path.cwd().resolve()
    datasets: list[DatasetSpec] = []
    outside = False
    for text in paths:
        path = Path(text).expanduser()
        if not path.exists():
            raise InputError("the data file does not exist", path=text, field="data")
        resolved = path.resolve()
        try:
            shown = str(resolved.relative_to(here))
        except ValueError:
            shown, outside = str(resolved), True
        name = check_name(path.stem if path.is_file() else path.name, "dataset", field="data")
        if path.is_dir():
            spec: dict[str, Any] = {"loader": "hf", "hf": shown}
        elif path.suffix.lower() == ".conllu":
            spec = {"loader": "conllu", "paths": [shown]}
        else:
            spec = {"loader": "table", "paths": [shown]}
            if _has_split_field(resolved):
                spec["splits"] = "predefined"
        datasets.append(DatasetSpec(name=name, task=task, language=language, **spec))
    names = [d.name for d in datasets]
    if len(set(names)) < len(names):
        raise InputError(f"the data files share a name: {', '.join(names)} (rename one)")
    return Suite(
        name="command-line",
        datasets=datasets,
        models=[],
        base_dir=str(here),
        allow_outside_paths=outside,
    )


def _has_split_field(path: Path) -> bool:
    """Whether the first record of a JSONL / CSV / TSV file has a ``split`` field."""
    import csv
    import json

    try:
        with path.open(encoding="utf-8") as fh:
            if path.suffix.lower() in (".jsonl", ".ndjson", ".json"):
                first = next((line for line in fh if line.strip()), "{}")
                record = json.loads(first)
                return isinstance(record, dict) and "split" in record
            delimiter = "\t" if path.suffix.lower() in (".tsv", ".tab") else ","
            return "split" in next(csv.reader(fh, delimiter=delimiter), [])
    except (OSError, ValueError, UnicodeDecodeError):
        return False  # the loader reports the problem


def with_models(suite: Suite, specs: list[ModelSpec], keep: list[str]) -> Suite:
    """``suite`` with its models replaced by ``specs`` (and the suite models named in ``keep``)."""
    from glotbench.runner.errors import UnknownNameError

    have = [m.name for m in suite.models]
    unknown = sorted(set(keep) - set(have))
    if unknown:
        raise UnknownNameError(
            f"unknown model(s) {', '.join(map(repr, unknown))} in suite {suite.name!r}; it has: "
            f"{', '.join(have) or 'none'} (a model of its own is models=KIND:ID, e.g. hf:gpt2)"
        )
    out = suite.model_copy(deep=True)
    out.models = [m for m in out.models if m.name in keep] + list(specs)
    clash = sorted({m.name for m in out.models if [x.name for x in out.models].count(m.name) > 1})
    if clash:
        raise InputError(f"model name(s) {', '.join(clash)} used twice")
    return out


def suite_yaml(suite: Suite) -> str:
    """The YAML of a (selected, command-line) suite: ``glotbench run FILE`` runs it again."""
    import yaml

    data = suite.model_dump(mode="json", exclude_defaults=True, exclude={"base_dir"})
    data["name"] = suite.name
    data.setdefault("datasets", [])
    data.setdefault("models", [])
    header = "# written by 'glotbench run --dump-suite': the suite of a command-line run\n"
    if suite.base_dir and any(d.paths or d.pool for d in suite.datasets):
        header += (
            f"# its data paths are relative to {suite.base_dir}:\n"
            f"#   glotbench run THIS_FILE --data-dir {suite.base_dir}\n"
        )
    return header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def dump_suite(suite: Suite, path: str | Path) -> Path:
    """Write :func:`suite_yaml` to ``path`` (atomically)."""
    from glotbench.store.atomic_files import write_text_atomic

    target = Path(path)
    write_text_atomic(target, suite_yaml(suite))
    return target
