"""Import EuroEval / ScandEval results files.

``euroeval_benchmark_results.jsonl`` (``scandeval_benchmark_results.jsonl``
for ScandEval) holds one JSON record per (model, dataset) evaluation, in one of
two layouts (see ``docs/importers/euroeval.md``):

* **before v17** — ``BenchmarkResult.model_dump()``: ``model``, ``dataset``,
  ``task``, ``dataset_languages`` (``languages`` in later versions),
  ``results.raw`` (one dict of scores per iteration; very old files nest them
  as ``{"test": [...]}``) and ``results.total`` (``test_<metric>`` on 0–100 and
  ``test_<metric>_se``, which holds **1.96 × SE**, the half-width of the 95 %
  interval), plus model metadata (``num_model_parameters``,
  ``vocabulary_size``, ``max_sequence_length``, ``generative``,
  ``generative_type``, ``merge``, ``few_shot``, ``validation_split``);
* **v17+ "Every Eval Ever" (EEE)** records: ``model_info`` (id, and the model
  metadata as strings under ``additional_details``), ``eval_library``
  (``additional_details`` with ``dataset``, ``task``, ``languages`` as JSON
  text and ``raw_results``, the per-iteration dicts as JSON text) and
  ``evaluation_results`` (``evaluation_name`` ``test_<metric>``,
  ``score_details.score`` and the 95 % ``confidence_interval``).

Each record becomes aggregate scores on glotbench's 0–1 scale (EuroEval's
0–100 divided by 100; speed metrics keep their unit):

* the total, with ``stderr = half-width / 1.96 / 100`` and ``n`` = iterations;
* one score per iteration with ``replicate`` = the iteration's index (the
  iterations are EuroEval's seed + bootstrapped-test-set replicates).

The metric name is EuroEval's without ``test_`` (``mcc``, ``macro_f1``,
``micro_f1_no_misc``, ``em``, ``f1``...), the task EuroEval's task, the
dataset EuroEval's dataset, the language the dataset's language (several
joined with ``+``). A generative model evaluated zero-shot or on the
validation split gets EuroEval's leaderboard suffix (``model (zero-shot,
val)``) so those results do not collide with the few-shot test results.

Every row's metadata declares the task's ``primary_metric`` (EuroEval's first
metric of the task, :data:`PRIMARY_METRICS`), which analyses rank the task on
by default (:mod:`glotbench.analysis.selection`).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from glotbench.errors import InputError
from glotbench.importers.common import HarnessImportResult, ScoreRow
from glotbench.importers.json_files import finite_number, iter_jsonl
from glotbench.importers.writer import write_import
from glotbench.ingest.readers import file_sha256
from glotbench.resample.scandeval import CI_MULTIPLIER
from glotbench.store.names import check_name
from glotbench.store.store import Store

#: EuroEval's primary metric per task: the first of the task's metrics, the one its
#: leaderboards rank with (EuroEval ``tasks.py``, docs/tasks/*.md "The primary metric").
#: ``None``: a task EuroEval does not rank (speed). A task not listed takes the first
#: metric of its record's totals, which EuroEval writes in the task's metric order.
PRIMARY_METRICS: dict[str, str | None] = {
    "linguistic-acceptability": "mcc",
    "sentiment-classification": "mcc",
    "named-entity-recognition": "micro_f1_no_misc",
    "reading-comprehension": "f1",
    "summarization": "bertscore",
    "knowledge": "mcc",
    "multiple-choice-reading-comprehension": "mcc",
    "common-sense-reasoning": "mcc",
    "speed": None,
}

_MODEL_SUFFIX = re.compile(r"\s*\((?P<inner>[^()]*(?:few-shot|zero-shot|val)[^()]*)\)\s*$")


@dataclass
class EuroEvalRecord:
    """One normalised record, whichever layout it came in."""

    line: int
    layout: str  # "legacy" or "eee"
    model: str
    dataset: str
    task: str
    languages: list[str]
    total: dict[str, float]
    ci_half_width: dict[str, float]
    raw: list[dict[str, Any]]
    metadata: dict[str, Any]
    few_shot: bool | None
    validation_split: bool | None
    generative: bool | None


def _bool(value: Any) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("true", "1", "yes"):
            return True
        if text in ("false", "0", "no"):
            return False
        if text in ("none", "null", ""):
            return None
    if isinstance(value, int | float):
        return bool(value)
    return None


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return int(value)
    if isinstance(value, str):
        try:
            return int(float(value))
        except ValueError:
            return None
    return None


def _maybe_json(value: Any, path: Path, line: int, field: str) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"expected JSON text, cannot parse it ({exc.msg})",
                path=str(path),
                line=line,
                field=field,
            ) from None
    return value


def _raw_list(raw: Any, path: Path, line: int, field: str) -> list[dict[str, Any]]:
    raw = _maybe_json(raw, path, line, field)
    if raw is None:
        return []
    if isinstance(raw, Mapping):  # very old ScandEval: {"test": [...], "train": [...]}
        raw = raw.get("test") if "test" in raw else raw.get("val", [])
    if not isinstance(raw, list):
        raise InputError(
            f"expected a list of per-iteration score objects, got {type(raw).__name__}",
            path=str(path),
            line=line,
            field=field,
        )
    for i, item in enumerate(raw):
        if not isinstance(item, Mapping):
            raise InputError(
                f"iteration {i} is not an object of scores: {item!r}",
                path=str(path),
                line=line,
                field=f"{field}[{i}]",
            )
    return [dict(item) for item in raw]


def _name(value: Any, what: str, path: Path, line: int, field: str) -> str:
    """A name as stored (:func:`glotbench.store.names.check_name`): text, NFC, visible."""
    return check_name(value, what, path=str(path), line=line, field=field)


def _language_list(value: Any, path: Path, line: int, field: str) -> list[str]:
    """The record's languages: a code or a non-empty list of non-empty codes."""
    if isinstance(value, str):
        value = [value]
    if (
        not isinstance(value, list)
        or not value
        or not all(isinstance(x, str) and x.strip() for x in value)
    ):
        raise InputError(
            f"the record names no language: expected a list of language codes such as "
            f'["da"], got {value!r}',
            path=str(path),
            line=line,
            field=field,
        )
    return [_name(x, "language", path, line, field) for x in value]


def _require(rec: Mapping[str, Any], key: str, path: Path, line: int, prefix: str = "") -> Any:
    value = rec.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise InputError(
            f"missing field {prefix + key!r}", path=str(path), line=line, field=prefix + key
        )
    return value


def _legacy(rec: dict[str, Any], path: Path, line: int) -> EuroEvalRecord:
    # names are text, never str()-converted (an object as a model was stored as "{'a': 1}")
    model = _name(_require(rec, "model", path, line), "model", path, line, "model")
    dataset = _name(_require(rec, "dataset", path, line), "dataset", path, line, "dataset")
    task = _name(_require(rec, "task", path, line), "task", path, line, "task")
    results = _require(rec, "results", path, line)
    if not isinstance(results, Mapping):
        raise InputError(
            "'results' must be an object with 'raw' and 'total'",
            path=str(path),
            line=line,
            field="results",
        )
    total_raw = results.get("total")
    if not isinstance(total_raw, Mapping):
        raise InputError(
            "missing field 'results.total' (the mean scores)",
            path=str(path),
            line=line,
            field="results.total",
        )
    langs = rec.get("dataset_languages", rec.get("languages"))
    if langs is None:
        raise InputError(
            "missing field 'dataset_languages' (or 'languages')",
            path=str(path),
            line=line,
            field="dataset_languages",
        )
    langs = _language_list(
        langs, path, line, "dataset_languages" if "dataset_languages" in rec else "languages"
    )
    total, half = _legacy_totals(total_raw, path, line)
    model, few_shot, validation, generative = _legacy_mode(rec, model)
    meta = {
        k: rec.get(k)
        for k in (
            "num_model_parameters",
            "max_sequence_length",
            "vocabulary_size",
            "merge",
            "generative_type",
            "euroeval_version",
            "scandeval_version",
            "transformers_version",
            "torch_version",
            "vllm_version",
        )
        if rec.get(k) is not None
    }
    failed = finite_number(total_raw.get("num_failed_instances"))
    if failed is not None:
        meta["num_failed_instances"] = failed
    return EuroEvalRecord(
        line=line,
        layout="legacy",
        model=model,
        dataset=dataset,
        task=task,
        languages=[str(x) for x in langs],
        total=total,
        ci_half_width=half,
        raw=_raw_list(results.get("raw"), path, line, "results.raw"),
        metadata=meta,
        few_shot=few_shot,
        validation_split=validation,
        generative=generative,
    )


def _legacy_totals(
    total_raw: Mapping[str, Any], path: Path, line: int
) -> tuple[dict[str, float], dict[str, float]]:
    """The mean scores of ``results.total`` and their interval half-widths (``*_se``); a
    NaN score is kept as NaN, a NaN half-width dropped."""
    total: dict[str, float] = {}
    half: dict[str, float] = {}
    for key, value in total_raw.items():
        if key == "num_failed_instances":
            continue
        num = finite_number(value)
        if num is None:
            if value is None:
                continue
            if isinstance(value, float) and math.isnan(value):
                if key.endswith("_se"):
                    continue  # no interval: the score is stored without a standard error
                num = math.nan  # not stored; write_import notes where it was
        if num is None:
            raise InputError(
                f"expected a number, got {value!r}",
                path=str(path),
                line=line,
                field=f"results.total.{key}",
            )
        if key.endswith("_se"):
            half[key[: -len("_se")]] = num
        else:
            total[key] = num
    return total, half


def _legacy_mode(
    rec: dict[str, Any], model: str
) -> tuple[str, bool | None, bool | None, bool | None]:
    """The model's name and its few-shot, validation-split and generative flags: given as
    fields, else read from an old name's suffix ("org/model (few-shot, val)")."""
    # old names carry the mode in the model name: "org/model (few-shot, val)"
    few_shot = _bool(rec.get("few_shot"))
    validation = _bool(rec.get("validation_split"))
    generative = _bool(rec.get("generative"))
    m = _MODEL_SUFFIX.search(model)
    if m:
        inner = m.group("inner")
        model = model[: m.start()].strip()
        if validation is None:
            validation = "val" in inner
        if few_shot is None and ("few-shot" in inner or "zero-shot" in inner):
            few_shot = "few-shot" in inner
        if generative is None:
            generative = "shot" in inner
    return model, few_shot, validation, generative


def _eee(rec: dict[str, Any], path: Path, line: int) -> EuroEvalRecord:
    """One record of the every-eval-ever layout (``model_info``, ``eval_library``,
    ``evaluation_results``)."""
    model_info = _require(rec, "model_info", path, line)
    library = _require(rec, "eval_library", path, line)
    results = rec.get("evaluation_results")
    if not isinstance(model_info, Mapping):
        raise InputError(
            "'model_info' must be an object", path=str(path), line=line, field="model_info"
        )
    if not isinstance(library, Mapping):
        raise InputError(
            "'eval_library' must be an object", path=str(path), line=line, field="eval_library"
        )
    if not isinstance(results, list):
        raise InputError(
            "missing field 'evaluation_results' (a list of metric results)",
            path=str(path),
            line=line,
            field="evaluation_results",
        )
    model = _eee_model(model_info, path, line)
    details = library.get("additional_details") or {}
    if not isinstance(details, Mapping):
        details = {}
    dataset, task, langs = _eee_target(details, results, path, line)
    total, half, failed = _eee_scores(results, path, line)
    add = model_info.get("additional_details") or {}
    metadata = _eee_metadata(rec, add, library, details, failed)
    return EuroEvalRecord(
        line=line,
        layout="eee",
        model=model,
        dataset=_name(dataset, "dataset", path, line, "eval_library.additional_details.dataset"),
        task=_name(task, "task", path, line, "eval_library.additional_details.task"),
        languages=[str(x) for x in langs],
        total=total,
        ci_half_width=half,
        raw=_raw_list(
            details.get("raw_results"), path, line, "eval_library.additional_details.raw_results"
        ),
        metadata=metadata,
        few_shot=_bool(details.get("few_shot")),
        validation_split=_bool(details.get("validation_split")),
        generative=_bool(add.get("generative")),
    )


def _eee_model(model_info: Mapping[str, Any], path: Path, line: int) -> str:
    """The model's name: ``model_info.id``, else ``model_info.name``."""
    model_key = "id" if model_info.get("id") else "name"
    model = model_info.get(model_key)
    if not model:
        raise InputError(
            "missing field 'model_info.id'", path=str(path), line=line, field="model_info.id"
        )
    return _name(model, "model", path, line, f"model_info.{model_key}")


def _eee_target(
    details: Mapping[str, Any], results: list[Any], path: Path, line: int
) -> tuple[Any, Any, list[str]]:
    """The dataset, task and language codes a record evaluated (``eval_library``'s
    ``additional_details``; the dataset else from the first result's ``source_data``)."""
    dataset = details.get("dataset")
    if not dataset and results and isinstance(results[0], Mapping):
        dataset = (results[0].get("source_data") or {}).get("dataset_name")
    if not dataset:
        raise InputError(
            "missing field 'eval_library.additional_details.dataset'",
            path=str(path),
            line=line,
            field="eval_library.additional_details.dataset",
        )
    task = details.get("task")
    if not task:
        raise InputError(
            "missing field 'eval_library.additional_details.task'",
            path=str(path),
            line=line,
            field="eval_library.additional_details.task",
        )
    langs = _maybe_json(
        details.get("languages", "[]"), path, line, "eval_library.additional_details.languages"
    )
    if isinstance(langs, str):
        langs = [langs]
    if not isinstance(langs, list) or not langs:
        raise InputError(
            "missing field 'eval_library.additional_details.languages' (a JSON list of "
            "language codes)",
            path=str(path),
            line=line,
            field="eval_library.additional_details.languages",
        )
    langs = _language_list(langs, path, line, "eval_library.additional_details.languages")
    return dataset, task, langs


def _eee_scores(
    results: list[Any], path: Path, line: int
) -> tuple[dict[str, float], dict[str, float], float | None]:
    """The ``evaluation_results``: scores by metric, their CI half-widths (``<metric>_se``
    results, else half the confidence interval) and the last number of failed instances."""
    total: dict[str, float] = {}
    half: dict[str, float] = {}
    failed: float | None = None
    for i, item in enumerate(results):
        where = f"evaluation_results[{i}]"
        if not isinstance(item, Mapping):
            raise InputError("expected an object", path=str(path), line=line, field=where)
        name = item.get("evaluation_name")
        if not name:
            raise InputError(
                "missing field 'evaluation_name'",
                path=str(path),
                line=line,
                field=f"{where}.evaluation_name",
            )
        sd = item.get("score_details")
        if not isinstance(sd, Mapping) or "score" not in sd:
            raise InputError(
                "missing field 'score_details.score'",
                path=str(path),
                line=line,
                field=f"{where}.score_details.score",
            )
        score = finite_number(sd["score"])
        if score is None:
            raise InputError(
                f"expected a finite number, got {sd['score']!r}",
                path=str(path),
                line=line,
                field=f"{where}.score_details.score",
            )
        if str(name).endswith("_se"):
            half.setdefault(str(name)[: -len("_se")], score)
            continue
        total[str(name)] = score
        ci = ((sd.get("uncertainty") or {}).get("confidence_interval")) or {}
        lo, hi = finite_number(ci.get("lower")), finite_number(ci.get("upper"))
        if lo is not None and hi is not None:
            half[str(name)] = (hi - lo) / 2
        fail = finite_number((sd.get("details") or {}).get("num_failed_instances"))
        if fail is None:
            try:
                fail = float((sd.get("details") or {}).get("num_failed_instances"))  # type: ignore[arg-type]  # None: TypeError, handled
            except (TypeError, ValueError):
                fail = None
        failed = fail if fail is not None else failed
    return total, half, failed


def _eee_metadata(
    rec: Mapping[str, Any],
    add: Mapping[str, Any],
    library: Mapping[str, Any],
    details: Mapping[str, Any],
    failed: float | None,
) -> dict[str, Any]:
    """The model metadata of a record: sizes and kind (``model_info.additional_details``,
    ``add``), the library's versions and scoring method, the evaluation id, failures."""
    meta: dict[str, Any] = {}
    for key in ("num_model_parameters", "max_sequence_length", "vocabulary_size"):
        value = _int(add.get(key))
        if value is not None:
            meta[key] = value
    if _bool(add.get("merge")) is not None:
        meta["merge"] = _bool(add.get("merge"))
    if add.get("generative_type"):
        meta["generative_type"] = add.get("generative_type")
    if library.get("version"):
        meta["euroeval_version"] = library.get("version")
    for key in ("transformers_version", "torch_version", "vllm_version", "scoring_method"):
        if details.get(key):
            meta[key] = details[key]
    if rec.get("evaluation_id"):
        meta["evaluation_id"] = rec["evaluation_id"]
    if failed is not None:
        meta["num_failed_instances"] = failed
    return meta


def read_euroeval(path: str | Path) -> list[EuroEvalRecord]:
    """Read and validate every record of a EuroEval / ScandEval results file."""
    p = Path(path)
    if not p.is_file():
        raise InputError("file not found", path=str(p))
    records: list[EuroEvalRecord] = []
    for line, rec in iter_jsonl(p):
        if "evaluation_results" in rec or "model_info" in rec or "eval_library" in rec:
            records.append(_eee(rec, p, line))
        else:
            records.append(_legacy(rec, p, line))
    if not records:
        raise InputError("the file holds no records", path=str(p))
    return records


def _metric_name(key: str) -> str:
    return key[len("test_") :] if key.startswith("test_") else key


def _is_unscaled(metric: str) -> bool:
    """Metrics EuroEval does not report in percent (tokens per second)."""
    return "speed" in metric


def _model_label(rec: EuroEvalRecord) -> str:
    parts = []
    if rec.generative and rec.few_shot is False:
        parts.append("zero-shot")
    if rec.validation_split:
        parts.append("val")
    return f"{rec.model} ({', '.join(parts)})" if parts else rec.model


def primary_metric(rec: EuroEvalRecord) -> str | None:
    """The record's primary metric (glotbench name, see :data:`PRIMARY_METRICS`)."""
    if rec.task in PRIMARY_METRICS:
        return PRIMARY_METRICS[rec.task]
    return _metric_name(next(iter(rec.total))) if rec.total else None


def score_rows(records: Sequence[EuroEvalRecord], path: Path) -> list[ScoreRow]:
    """Totals and per-iteration replicates as score rows (0–1 scale)."""
    rows: list[ScoreRow] = []
    for rec in records:
        model = _model_label(rec)
        if not rec.languages or any(not lang.strip() for lang in rec.languages):
            raise InputError(
                f"the record names no language (languages {rec.languages!r}); every result "
                "needs the language(s) of its dataset",
                path=str(path),
                line=rec.line,
                field="dataset_languages" if rec.layout == "legacy" else "languages",
            )
        language = "+".join(rec.languages)
        base_meta: dict[str, Any] = {
            "source": "euroeval",
            "primary_metric": primary_metric(rec),
            "layout": rec.layout,
            "model_id": rec.model,
            "languages": rec.languages,
            "generative": rec.generative,
            "few_shot": rec.few_shot,
            "validation_split": rec.validation_split,
            **rec.metadata,
        }
        field_prefix = "results.total" if rec.layout == "legacy" else "evaluation_results"
        n_iter = len(rec.raw) or None
        for key, value in rec.total.items():
            metric = _metric_name(key)
            scale = 1.0 if _is_unscaled(metric) else 100.0
            half = rec.ci_half_width.get(key)
            rows.append(
                ScoreRow(
                    model=model,
                    task=rec.task,
                    language=language,
                    dataset=rec.dataset,
                    metric=metric,
                    score=value / scale,
                    stderr=None if half is None else half / CI_MULTIPLIER / scale,
                    n=n_iter,
                    metadata={
                        **base_meta,
                        "kind": "total",
                        "reported_score": value,
                        "reported_ci_half_width": half,
                        "scale": "0-1 (EuroEval's 0-100 / 100)" if scale == 100 else "as reported",
                    },
                    path=str(path),
                    line=rec.line,
                    field=f"{field_prefix}.{key}",
                )
            )
        raw_field = "results.raw" if rec.layout == "legacy" else "raw_results"
        for i, it in enumerate(rec.raw):
            for key, value in it.items():
                metric = _metric_name(key)
                if key.startswith(("train_", "val_")) or key == "num_failed_instances":
                    continue
                num = finite_number(value)
                if num is None:
                    if not (isinstance(value, float) and math.isnan(value)):
                        continue
                    num = math.nan  # not stored; write_import notes where it was
                total = rec.total.get(f"test_{metric}", rec.total.get(metric))
                # per-iteration scores are fractions; EuroEval's totals are percents
                if not _is_unscaled(metric) and abs(num) > 1.0 + 1e-9:
                    num = num / 100.0
                rows.append(
                    ScoreRow(
                        model=model,
                        task=rec.task,
                        language=language,
                        dataset=rec.dataset,
                        metric=metric,
                        score=num,
                        replicate=i,
                        metadata={**base_meta, "kind": "iteration", "iteration": i}
                        | ({"total": total} if total is not None else {}),
                        path=str(path),
                        line=rec.line,
                        field=f"{raw_field}[{i}].{key}",
                    )
                )
    return rows


def import_euroeval(store: Store, path: str | Path) -> HarnessImportResult:
    """Import a EuroEval / ScandEval results JSONL file (both layouts) into ``store``."""
    t0 = time.perf_counter()
    p = Path(path)
    records = read_euroeval(p)
    rows = score_rows(records, p)
    # the content alone identifies the input (the same file under another name is skipped)
    sha = hashlib.sha256((file_sha256(p) + ":euroeval").encode()).hexdigest()
    result = write_import(
        store,
        kind="euroeval",
        source=p,
        sha=sha,
        runs=[],
        score_rows=rows,
        n_files=1,
        t0=t0,
    )
    layouts = sorted({r.layout for r in records})
    result.notes = [f"{len(records)} record(s), layout(s): {', '.join(layouts)}", *result.notes]
    return result
