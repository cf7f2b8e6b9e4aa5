"""Results files of an lm-evaluation-harness output folder.

Finding the ``results_<timestamp>.json`` files and their samples files, the
model name and seed, the aggregate score rows, lm-eval's metric names and
the run records (see :mod:`glotbench.importers.lm_eval`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from glotbench.errors import InputError
from glotbench.importers.common import ScoreRow
from glotbench.importers.json_files import finite_number, read_json_file
from glotbench.importers.task_languages import TaskLanguageMap
from glotbench.store.names import check_name
from glotbench.store.schema import RunRecord

#: lm-eval corpus aggregations glotbench can rebuild from per-sample records
CORPUS_METRICS: dict[str, str] = {
    "f1": "f1_binary",
    "mcc": "mcc",
    "matthews_corrcoef": "mcc",
    "bleu": "bleu",
    "chrf": "chrf",
    "chrf++": "chrf++",
}


#: lm-eval mean metrics with a registry metric of their own
MEAN_METRICS: dict[str, str] = {"acc": "accuracy"}


#: aggregations that are a plain mean of the per-sample values
MEAN_AGGREGATIONS = frozenset({"mean", None})


_RESULTS_RE = re.compile(r"^results_(?P<stamp>.+)\.json$")


_SAMPLES_RE = re.compile(r"^samples_(?P<task>.+)_(?P<stamp>[^_]+)\.jsonl$")


@dataclass
class LmEvalRun:
    """One ``results_<timestamp>.json`` and the samples files written with it."""

    results_path: Path
    stamp: str
    data: dict[str, Any]
    samples: dict[str, Path] = field(default_factory=dict)


def _find_runs(root: Path) -> list[LmEvalRun]:
    if root.is_file():
        if not _RESULTS_RE.match(root.name):
            raise InputError(
                "expected an lm-evaluation-harness output folder or a results_<timestamp>.json "
                "file",
                path=str(root),
            )
        candidates = [root]
        folder = root.parent
    elif root.is_dir():
        candidates = sorted(p for p in root.rglob("results_*.json") if _RESULTS_RE.match(p.name))
        folder = root
    else:
        raise InputError("no such file or folder", path=str(root))
    if not candidates:
        raise InputError(
            "no results_<timestamp>.json in this folder; pass the --output_path folder of "
            "lm_eval (or the model folder inside it)",
            path=str(root),
        )
    runs: list[LmEvalRun] = []
    for path in candidates:
        stamp = _RESULTS_RE.match(path.name).group("stamp")  # type: ignore[union-attr]
        data = read_json_file(path)
        if not isinstance(data, dict):
            raise InputError("expected a JSON object at the top level", path=str(path), line=1)
        run = LmEvalRun(path, stamp, data)
        for sample in sorted(path.parent.glob(f"samples_*_{stamp}.jsonl")):
            m = _SAMPLES_RE.match(sample.name)
            if m and m.group("stamp") == stamp:
                run.samples[m.group("task")] = sample
        runs.append(run)
    del folder
    return runs


def _not_available(value: Any) -> bool:
    """lm-eval's "no value here": ``"N/A"`` (its stderr placeholder) or null."""
    return value is None or (isinstance(value, str) and value.strip().upper() in ("N/A", ""))


def _json_number(value: Any, path: str, field: str) -> float:
    """``value`` when it is a JSON number (a boolean counts as 0/1), else InputError.

    A number written as a string (``"0.5"``), a list or an object is refused,
    never converted: the file was not written by lm-eval as documented.
    """
    if isinstance(value, bool | int | float):
        return float(value)
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    raise InputError(
        f"a metric value must be a JSON number, got {type(value).__name__} {shown}"
        + (" (a number written as text: remove the quotes)" if isinstance(value, str) else ""),
        path=path,
        field=field,
    )


def _model_name(data: Mapping[str, Any], override: str | None, path: str) -> str:
    if override:
        return override
    name = data.get("model_name")
    if not name:
        cfg = data.get("config") or {}
        args = cfg.get("model_args")
        if isinstance(args, str):
            m = re.search(r"(?:pretrained|model|engine)=([^,]+)", args)
            name = m.group(1) if m else None
        elif isinstance(args, Mapping):
            name = args.get("pretrained") or args.get("model")
        name = name or cfg.get("model")
    if not name:
        return "unknown-model"
    if not isinstance(name, str):  # never str()-converted: "{'a': 1}" is not a model
        raise InputError(
            f"the model name must be text, got {type(name).__name__} {name!r:.60}",
            path=path,
            field="model_name",
        )
    text = name
    if text.startswith(("/", "./", "../", "~")):  # a local checkpoint: its folder name
        return Path(text.rstrip("/")).name or text
    return text


def _seed(run: LmEvalRun, index: int, seed_from: str) -> int | None:
    if seed_from == "order":
        return index
    cfg = run.data.get("config") or {}
    for key in ("fewshot_seed", "random_seed"):
        value = cfg.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _split_key(key: str) -> tuple[str, str]:
    name, _, filt = key.partition(",")
    return name, filt or "none"


def _aggregations(data: Mapping[str, Any], task: str) -> dict[str, Any]:
    cfg = (data.get("configs") or {}).get(task) or {}
    out: dict[str, Any] = {}
    for item in cfg.get("metric_list") or []:
        if isinstance(item, Mapping) and "metric" in item:
            agg = item.get("aggregation")
            out[str(item["metric"])] = agg if isinstance(agg, str) else None
    return out


def _score_name(metric: str, filt: str) -> str:
    """How glotbench names an lm-eval metric: ``acc``; ``exact_match,strict-match``."""
    return metric if filt == "none" else f"{metric},{filt}"


def primary_metric(data: Mapping[str, Any], task: str) -> str | None:
    """lm-eval's primary metric of ``task``: the first of its ``metric_list`` that it reports.

    The task's configured ``metric_list`` order (the first is the metric lm-eval's
    own tables lead with), with the first filter the results list for it; a task
    without a configuration (a group) takes its first reported metric.
    """
    entries = (data.get("results") or {}).get(task) or (data.get("groups") or {}).get(task) or {}
    reported = [
        _split_key(key)
        for key, value in entries.items()
        if "," in key and "_stderr," not in key and finite_number(value) is not None
    ]
    if not reported:
        return None
    for name in _aggregations(data, task):
        for metric, filt in reported:
            if metric == name:
                return _score_name(metric, filt)
    return _score_name(*reported[0])


def _group_names(data: Mapping[str, Any]) -> set[str]:
    groups = set((data.get("groups") or {}).keys())
    for name, subtasks in (data.get("group_subtasks") or {}).items():
        if subtasks:
            groups.add(name)
    return groups


def _score_rows(
    run: LmEvalRun, model: str, seed: int | None, mapping: TaskLanguageMap
) -> list[ScoreRow]:
    data = run.data
    path = str(run.results_path)
    results = data.get("results")
    if not isinstance(results, Mapping):
        raise InputError(
            "missing the 'results' object (is this an lm-evaluation-harness results file?)",
            path=path,
            field="results",
        )
    groups = _group_names(data)
    n_samples = data.get("n-samples") or {}
    rows: list[ScoreRow] = []
    sections: list[tuple[str, Mapping[str, Any]]] = [("results", results)]
    if isinstance(data.get("groups"), Mapping):
        sections.append(("groups", data["groups"]))
    for section, table in sections:
        for task, metrics in table.items():
            if not isinstance(metrics, Mapping):
                raise InputError(
                    f"expected an object of metric values for task {task!r}",
                    path=path,
                    field=f"{section}.{task}",
                )
            is_group = task in groups
            if is_group:
                name, language = task, "all"
            else:
                name, language = mapping.split(task)
            n_info = n_samples.get(task) or {}
            n = n_info.get("effective") if isinstance(n_info, Mapping) else None
            if n is None:
                n = metrics.get("sample_len")
            for key, value in metrics.items():
                # metric entries are "<metric>,<filter>"; skip alias, name, sample_len, ...
                if "," not in key or "_stderr," in key:
                    continue
                metric, filt = _split_key(key)
                where = f"{section}.{task}.{key}"
                if _not_available(value):
                    continue  # lm-eval writes "N/A" (or null) where it has no value
                score = finite_number(_json_number(value, path, where))
                if score is None:
                    score = math.nan  # not stored; write_import notes where it was
                stderr_key = f"{metric}_stderr,{filt}"
                stderr = metrics.get(stderr_key)
                se = (
                    None
                    if _not_available(stderr)
                    else finite_number(_json_number(stderr, path, f"{section}.{task}.{stderr_key}"))
                )
                stored_metric = _score_name(metric, filt)
                meta: dict[str, Any] = {
                    "source": "lm-evaluation-harness",
                    "lm_eval_task": task,
                    "lm_eval_metric": key,
                    "lm_eval_kind": "group" if is_group else "task",
                    "primary_metric": primary_metric(data, task),
                    "results_file": run.results_path.name,
                }
                if is_group:
                    meta["subtasks"] = list((data.get("group_subtasks") or {}).get(task) or [])
                version = (data.get("versions") or {}).get(task)
                if version is not None:
                    meta["task_version"] = version
                shots = (data.get("n-shot") or {}).get(task)
                if shots is not None:
                    meta["num_fewshot"] = shots
                rows.append(
                    ScoreRow(
                        model=model,
                        task=name,
                        language=language,
                        dataset=name,
                        metric=stored_metric,
                        score=score,
                        seed=seed,
                        stderr=se,
                        n=int(n) if isinstance(n, int) and not isinstance(n, bool) else None,
                        metadata=meta,
                        path=path,
                        field=f"{section}.{task}.{key}",
                    )
                )
    return rows


def _model_metadata(data: Mapping[str, Any]) -> dict[str, Any]:
    cfg = data.get("config") or {}
    meta: dict[str, Any] = {"harness": "lm-evaluation-harness"}
    for key in ("model", "model_args", "batch_size", "device"):
        if cfg.get(key) is not None:
            meta[key] = cfg[key]
    for key in ("lm_eval_version", "transformers_version", "model_name", "max_length", "git_hash"):
        if data.get(key) is not None:
            meta[key] = data[key]
    return meta


def _task_language(
    item: tuple[LmEvalRun, str, int | None, str, Path], mapping: TaskLanguageMap
) -> tuple[str, str]:
    """(task, language) of a samples file's task, names checked."""
    run, task = item[0], item[3]
    name, language = mapping.split(task)
    results_path, field_name = str(run.results_path), f"results.{task}"
    name = check_name(name, "task", path=results_path, field=field_name)
    language = check_name(language, "language", path=results_path, field=field_name)
    return name, language


def _record_for(
    item: tuple[LmEvalRun, str, int | None, str, Path],
    metric: str,
    filt: str,
    stored_metric: str,
    metric_config: dict[str, Any],
    stat_names: tuple[str, ...],
    mapping: TaskLanguageMap,
) -> RunRecord:
    """The run record of one (metric, filter) column of a samples file."""
    run, model_name, seed, task, sample_path = item
    name, language = _task_language(item, mapping)
    check_name(metric, "metric", path=str(sample_path), field="metrics")
    config = [] if metric in MEAN_METRICS or metric in CORPUS_METRICS else [f"lm_eval={metric}"]
    if filt != "none":
        config.append(f"filter={filt}")
    return RunRecord(
        model=model_name,
        dataset=name,
        task=name,
        language=language,
        seed=seed,
        config_hash=";".join(config),
        metric=stored_metric,
        metric_config=metric_config,
        stat_names=stat_names,
        model_metadata={
            **_model_metadata(run.data),
            "lm_eval_task": task,
            "lm_eval_metric": f"{metric},{filt}",
            # the name users type (--metric acc_norm) and the task's primary metric
            "source_metric": _score_name(metric, filt),
            "primary_metric": primary_metric(run.data, task),
        },
        source=str(sample_path),
    )
