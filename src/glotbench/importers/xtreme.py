"""Import an XTREME / XTREME-R submission: a predictions folder scored per example.

The layout is the one ``google-research/xtreme``'s ``evaluate.py`` reads::

    PREDICTIONS/<task>/test-<lang>.<ext>      LABELS/<task>/test-<lang>.<ext>

* ``tsv`` — classification (``xnli``, ``pawsx``) and retrieval (``tatoeba``):
  one label per line; tagging (``panx``, ``udpos``): one tag per line,
  sentences separated by a blank line (a line ``token<TAB>tag`` uses its last
  column);
* ``json`` — QA (``xquad``, ``mlqa``, ``tydiqa``): predictions
  ``{question id: answer}``, labels in SQuAD format; Mewsli-X (``mewslix``)
  and LAReQA (``lareqa``): ``{query id: [ranked ids]}`` against
  ``{query id: [relevant ids]}``;
* ``jsonl`` — ``xcopa``: one object per line with ``label`` (and ``idx``).

Each (task, language) becomes a run with per-example statistics, scored with
the metric ``evaluate.py`` uses: accuracy (classification, tatoeba, xcopa),
span F1 as seqeval (``ner_f1``; panx and, as in ``evaluate.py``, udpos), SQuAD
v1.1 exact match and F1 (``squad_exact_match``, ``squad_f1``) and mAP@20
(``map@20``). MLQA's official script normalises answers per language
(punctuation and articles); glotbench uses SQuAD v1.1 normalisation for all QA
tasks, so MLQA numbers can differ slightly from the official ones.

XTREME's averaging is reproduced by :func:`xtreme_average`: a task's score is
the unweighted mean over its languages, QA tasks' the mean of EM and F1,
groups and the overall score the unweighted mean of their tasks (0–100).
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from glotbench.errors import InputError
from glotbench.importers.common import HarnessImportResult, PendingRun, Progress, check_runs
from glotbench.importers.json_files import files_sha256, iter_jsonl, read_json_file
from glotbench.importers.writer import write_import
from glotbench.ingest.limits import bounded_lines
from glotbench.ingest.spool import RunSpool
from glotbench.ingest.staging import staging_dir
from glotbench.metrics import get_metric
from glotbench.metrics.task_names import canonical_metric, canonical_task
from glotbench.store.names import check_language_code, check_name
from glotbench.store.schema import RunRecord
from glotbench.store.store import Store


@dataclass(frozen=True)
class XtremeTask:
    """How a task's files are read and scored."""

    kind: str  # classification | tagging | qa | ranking | xcopa
    ext: str
    metrics: tuple[str, ...]
    group: str


TASKS: dict[str, XtremeTask] = {
    "xnli": XtremeTask("classification", "tsv", ("accuracy",), "classification"),
    "pawsx": XtremeTask("classification", "tsv", ("accuracy",), "classification"),
    "xcopa": XtremeTask("xcopa", "jsonl", ("accuracy",), "classification"),
    "panx": XtremeTask("tagging", "tsv", ("ner_f1",), "tagging"),
    "udpos": XtremeTask("tagging", "tsv", ("ner_f1",), "tagging"),
    "xquad": XtremeTask("qa", "json", ("squad_exact_match", "squad_f1"), "qa"),
    "mlqa": XtremeTask("qa", "json", ("squad_exact_match", "squad_f1"), "qa"),
    "tydiqa": XtremeTask("qa", "json", ("squad_exact_match", "squad_f1"), "qa"),
    "tatoeba": XtremeTask("classification", "tsv", ("accuracy",), "retrieval"),
    "mewslix": XtremeTask("ranking", "json", ("map@20",), "retrieval"),
    "lareqa": XtremeTask("ranking", "json", ("map@20",), "retrieval"),
}
#: tasks of the XTREME (2020) and XTREME-R (2021) overall scores
XTREME_TASKS = ("pawsx", "xnli", "udpos", "panx", "xquad", "mlqa", "tydiqa", "bucc2018", "tatoeba")
XTREME_R_TASKS = (
    "xnli",
    "xcopa",
    "udpos",
    "panx",
    "xquad",
    "mlqa",
    "tydiqa",
    "mewslix",
    "lareqa",
    "tatoeba",
)
_UNSUPPORTED = {
    "bucc2018": "BUCC is scored by F1 over the set of predicted sentence pairs, which has no "
    "per-example statistics; score it with evaluate.py and import the result with "
    "'glotbench import scores'",
}


def _lines(path: Path) -> list[str]:
    try:
        with open(path, encoding="utf-8") as fh:  # an over-long line is refused while read
            return [line.rstrip("\n").rstrip("\r") for _, line in bounded_lines(fh, str(path))]
    except OSError as exc:
        raise InputError(f"cannot read the file: {exc}", path=str(path)) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason})", path=str(path)) from None


def _read_labels(path: Path) -> list[str]:
    lines = _lines(path)
    while lines and not lines[-1].strip():
        lines.pop()
    return [line.strip() for line in lines]


def _read_tags(path: Path) -> tuple[list[list[str]], list[int]]:
    """Sentences of tags and each sentence's first line number."""
    sentences: list[list[str]] = []
    starts: list[int] = []
    current: list[str] = []
    start = 0
    for lineno, line in enumerate(_lines(path), start=1):
        text = line.strip()
        if text:
            if not current:
                start = lineno
            current.append(text.split("\t")[-1].strip())
        elif current:
            sentences.append(current)
            starts.append(start)
            current = []
    if current:
        sentences.append(current)
        starts.append(start)
    return sentences, starts


def _squad_answers(path: Path) -> dict[str, list[str]]:
    data = read_json_file(path)
    articles = data.get("data", data) if isinstance(data, Mapping) else data
    if not isinstance(articles, list):
        raise InputError(
            "expected SQuAD-format labels: {'data': [{'paragraphs': [{'qas': [...]}]}]}",
            path=str(path),
            field="data",
        )
    out: dict[str, list[str]] = {}
    for a, article in enumerate(articles):
        for p, para in enumerate(
            article.get("paragraphs", []) if isinstance(article, Mapping) else []
        ):
            for q, qa in enumerate(para.get("qas", [])):
                where = f"data[{a}].paragraphs[{p}].qas[{q}]"
                if "id" not in qa:
                    raise InputError("missing field 'id'", path=str(path), field=f"{where}.id")
                answers = qa.get("answers")
                if not isinstance(answers, list) or not answers:
                    raise InputError(
                        "missing field 'answers' (a non-empty list of {'text': ...})",
                        path=str(path),
                        field=f"{where}.answers",
                    )
                texts = []
                for ans in answers:
                    text = ans.get("text") if isinstance(ans, Mapping) else ans
                    if not isinstance(text, str):
                        raise InputError(
                            f"an answer must have a 'text' string, got {ans!r}",
                            path=str(path),
                            field=f"{where}.answers",
                        )
                    texts.append(text)
                out[str(qa["id"])] = texts
    if not out:
        raise InputError("no questions in the labels file", path=str(path), field="data")
    return out


def _json_object(path: Path) -> dict[str, Any]:
    data = read_json_file(path)
    if not isinstance(data, Mapping):
        raise InputError("expected a JSON object {id: prediction, ...}", path=str(path), line=1)
    return {str(k): v for k, v in data.items()}


def _xcopa(path: Path) -> tuple[list[str], list[Any], list[int]]:
    ids, labels, lines = [], [], []
    for n, (lineno, rec) in enumerate(iter_jsonl(path)):
        if "label" not in rec:
            raise InputError("missing field 'label'", path=str(path), line=lineno, field="label")
        ids.append(str(rec.get("idx", rec.get("id", n))))
        labels.append(rec["label"])
        lines.append(lineno)
    return ids, labels, lines


def _score_pair(
    task: str, spec: XtremeTask, pred_path: Path, label_path: Path
) -> tuple[np.ndarray, list[Any], list[Any], int | None]:
    """(example ids, predictions, references, first line) of one language."""
    preds: list[Any]
    refs: list[Any]
    if spec.kind == "classification":
        preds, refs = _read_labels(pred_path), _read_labels(label_path)
        if len(preds) != len(refs):
            raise InputError(
                f"{len(preds)} predictions but the labels file {label_path} has {len(refs)} "
                "lines; write one prediction per test example, in order",
                path=str(pred_path),
                line=min(len(preds), len(refs)) + 1,
            )
        ids = np.asarray([str(i) for i in range(1, len(refs) + 1)], dtype=object)
        return ids, preds, refs, 1
    if spec.kind == "tagging":
        preds, pstarts = _read_tags(pred_path)
        refs, _ = _read_tags(label_path)
        if len(preds) != len(refs):
            raise InputError(
                f"{len(preds)} sentences but the labels file {label_path} has {len(refs)}; "
                "separate sentences by one blank line, in the order of the test set",
                path=str(pred_path),
            )
        for i, (p, r) in enumerate(zip(preds, refs, strict=True)):
            if len(p) != len(r):
                raise InputError(
                    f"sentence {i + 1} has {len(p)} tags but {len(r)} in the labels file",
                    path=str(pred_path),
                    line=pstarts[i],
                )
        ids = np.asarray([str(i) for i in range(1, len(refs) + 1)], dtype=object)
        return ids, preds, refs, 1
    if spec.kind == "qa":
        gold = _squad_answers(label_path)
        pred = _json_object(pred_path)
        for qid, text in pred.items():
            if not isinstance(text, str):
                raise InputError(
                    f"the prediction for question {qid!r} must be a string, got {text!r}",
                    path=str(pred_path),
                    field=qid,
                )
        ids = np.asarray(list(gold), dtype=object)
        # an unanswered question scores 0, as in the official SQuAD script
        return ids, [pred.get(q, "") for q in gold], [gold[q] for q in gold], None
    if spec.kind == "ranking":
        gold_obj = _json_object(label_path)
        pred_obj = _json_object(pred_path)
        for qid, ranked in pred_obj.items():
            if not isinstance(ranked, list):
                raise InputError(
                    f"the prediction for query {qid!r} must be a ranked list of ids",
                    path=str(pred_path),
                    field=qid,
                )
        ids = np.asarray(list(gold_obj), dtype=object)
        refs = [v if isinstance(v, list) else [v] for v in gold_obj.values()]
        return ids, [pred_obj.get(q, []) for q in gold_obj], refs, None
    # xcopa
    pids, plabels, plines = _xcopa(pred_path)
    gids, glabels, _ = _xcopa(label_path)
    if len(pids) != len(gids):
        raise InputError(
            f"{len(pids)} predictions but the labels file {label_path} has {len(gids)}",
            path=str(pred_path),
        )
    index = {g: i for i, g in enumerate(gids)}
    if set(pids) == set(gids):
        order = [index[p] for p in pids]
        refs = [glabels[i] for i in order]
        return np.asarray(pids, dtype=object), plabels, refs, plines[0] if plines else None
    return np.asarray(gids, dtype=object), plabels, glabels, plines[0] if plines else None


def _languages(folder: Path, ext: str) -> dict[str, Path]:
    """``test-<language>.<ext>`` files by language; a name that is no language code is refused
    (``test-..tsv`` became the language ``.``)."""
    out = {}
    for p in sorted(folder.glob(f"test-*.{ext}")):
        code = p.name[len("test-") : -len(ext) - 1]
        out[check_language_code(code, path=str(p), field="language (from the file name)")] = p
    return out


def _selected_tasks(pred_root: Path, tasks: Sequence[str] | None) -> list[str]:
    """The task folders of ``pred_root``, those of ``tasks`` when given (under any of a
    task's names: the task wikiann-ner selects the folder panx); one asked for but absent
    is an error."""
    pred_tasks = sorted(p.name for p in pred_root.iterdir() if p.is_dir())
    if tasks:
        wanted = {canonical_task(t): t for t in tasks}
        pred_tasks = [t for t in pred_tasks if canonical_task(t) in wanted]
        found = {canonical_task(t) for t in pred_tasks}
        missing = sorted(name for key, name in wanted.items() if key not in found)
        if missing:
            raise InputError(
                f"no predictions for task(s) {', '.join(missing)}",
                path=str(pred_root),
                field="task",
            )
    return pred_tasks


def _task_files(
    task: str, pred_root: Path, label_root: Path
) -> tuple[XtremeTask, dict[str, Path], dict[str, Path]]:
    """A task folder's spec and its prediction and labels files by language, checked: a
    supported task, a labels folder, predictions, a labels file for each of them."""
    if task in _UNSUPPORTED:
        raise InputError(_UNSUPPORTED[task], path=str(pred_root / task), field="task")
    spec = TASKS.get(task)
    if spec is None:
        raise InputError(
            f"unknown task {task!r}; XTREME / XTREME-R tasks are "
            f"{', '.join(sorted(TASKS))} (name each folder as evaluate.py does)",
            path=str(pred_root / task),
            field="task",
        )
    if not (label_root / task).is_dir():
        raise InputError(
            f"no labels for task {task!r}: {label_root / task} does not exist",
            path=str(pred_root / task),
            field="task",
        )
    pred_langs = _languages(pred_root / task, spec.ext)
    label_langs = _languages(label_root / task, spec.ext)
    if not pred_langs:
        raise InputError(
            f"no prediction files test-<lang>.{spec.ext} for task {task!r}",
            path=str(pred_root / task),
        )
    extra = sorted(set(pred_langs) - set(label_langs))
    if extra:
        raise InputError(
            f"predictions for language(s) {', '.join(extra)} have no labels file in "
            f"{label_root / task}",
            path=str(pred_langs[extra[0]]),
            field="language",
        )
    return spec, pred_langs, label_langs


def _language_runs(
    task: str,
    spec: XtremeTask,
    lang: str,
    pred_path: Path,
    label_path: Path,
    *,
    model: str,
    seed: int | None,
    origin: Path,
) -> Iterator[PendingRun]:
    """The runs (one per metric of the task) of one language's predictions and labels files,
    each scored when the caller asks for it."""
    ids, preds, refs, line = _score_pair(task, spec, pred_path, label_path)
    if ids.size == 0:
        raise InputError("no test examples", path=str(label_path))
    if len(set(ids.tolist())) != ids.size:
        raise InputError(
            "example ids (question / query ids) must be unique",
            path=str(label_path),
            field="id",
        )
    for metric_name in spec.metrics:
        metric = get_metric(metric_name)
        try:
            stats = metric.stats(preds, refs)
        except (InputError, ValueError, TypeError) as exc:
            raise InputError(
                f"cannot score with {metric_name}: {exc}", path=str(pred_path), line=line
            ) from None
        record = RunRecord(
            model=model,
            dataset=task,
            task=task,
            language=lang,
            seed=seed,
            metric=metric.name,
            metric_config=metric.config(),
            stat_names=tuple(metric.stat_names()),
            model_metadata={"harness": "xtreme", "predictions": str(origin)},
            source=str(pred_path),
        )
        yield PendingRun(
            record=record,
            example_ids=ids,
            stats=np.ascontiguousarray(stats, dtype=np.float64),
            path=str(pred_path),
            line=line,
        )


def read_xtreme(
    predictions: str | Path,
    labels: str | Path,
    *,
    model: str | None = None,
    tasks: Sequence[str] | None = None,
    seed: int | None = None,
    spool: RunSpool | None = None,
) -> tuple[list[PendingRun], list[Path]]:
    """Score a predictions folder against a labels folder, per example (nothing written).

    With a ``spool`` each run is checked (:func:`check_runs`) and its example
    ids and statistics moved to the spool as soon as its (task, language)
    files are scored (:meth:`PendingRun.spill`), so memory holds one pair of
    files at a time, not the folder.
    """
    pred_root, label_root = Path(predictions), Path(labels)
    for root, what in ((pred_root, "predictions"), (label_root, "labels")):
        if not root.is_dir():
            raise InputError(f"the {what} folder does not exist", path=str(root))
    model_name = check_name(
        model or pred_root.resolve().name,
        "model",
        path=None if model else str(pred_root),
        field="model" if model else "model (the predictions folder's name)",
    )
    runs: list[PendingRun] = []
    files: list[Path] = []
    for task in _selected_tasks(pred_root, tasks):
        spec, pred_langs, label_langs = _task_files(task, pred_root, label_root)
        for lang, pred_path in pred_langs.items():
            label_path = label_langs[lang]
            files += [pred_path, label_path]
            scored = _language_runs(
                task,
                spec,
                lang,
                pred_path,
                label_path,
                model=model_name,
                seed=seed,
                origin=pred_root,
            )
            for run in scored:
                if spool is not None:
                    check_runs([run])
                    run.spill(spool)
                runs.append(run)
    if not runs:
        raise InputError(
            "no task folders with predictions (expected PREDICTIONS/<task>/test-<lang>.<ext>)",
            path=str(pred_root),
        )
    return runs, files


def xtreme_average(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """XTREME's averages from per-language scores (columns task, language, metric, score 0–1).

    Returns rows (0–100 like XTREME's tables): per task ``avg_<metric>`` over
    its languages (unweighted) and ``avg_metric`` (QA: mean of EM and F1,
    tagging: F1, else accuracy / mAP@20); per group and ``all_task`` over the
    tasks present, with ``complete`` telling whether every task of the group
    (or of XTREME-R, for ``all_task``) is there.
    """
    out: list[dict[str, Any]] = []
    task_metric: dict[str, float] = {}
    # XTREME's folder name of each task, whichever name the frame uses (the embedded
    # baselines say wikiann-ner, the importer panx: glotbench.metrics.task_names)
    folder = {canonical_task(name): name for name in TASKS}
    frame = frame.assign(
        task=[folder.get(canonical_task(str(t)), str(t)) for t in frame["task"]],
        metric=[
            canonical_metric(str(t), str(m))
            for t, m in zip(frame["task"], frame["metric"], strict=True)
        ],
    )
    for task, sub in frame.groupby("task", sort=True):
        per_metric = sub.groupby("metric")["score"].mean() * 100.0
        for metric, value in per_metric.items():
            out.append(
                {
                    "level": "task",
                    "name": str(task),
                    "metric": f"avg_{metric}",
                    "score": float(value),
                    "languages": int((sub["metric"] == metric).sum()),
                }
            )
        spec = TASKS.get(str(task))
        if spec is not None and spec.kind == "qa":
            # the mean of EM and F1; a published table with F1 only: F1
            both = [per_metric[m] for m in ("squad_exact_match", "squad_f1") if m in per_metric]
            main = float(np.mean(both)) if both else np.nan
        else:
            main = float(per_metric.iloc[0]) if len(per_metric) == 1 else float(per_metric.mean())
        task_metric[str(task)] = float(main)
        out.append(
            {"level": "task", "name": str(task), "metric": "avg_metric", "score": float(main)}
        )
    groups: dict[str, list[str]] = defaultdict(list)
    for name, spec in TASKS.items():
        groups[spec.group].append(name)
    for group, members in sorted(groups.items()):
        present = [t for t in members if t in task_metric]
        if present:
            out.append(
                {
                    "level": "group",
                    "name": group,
                    "metric": "avg_metric",
                    "score": float(np.mean([task_metric[t] for t in present])),
                    "tasks": present,
                    "complete": len(present) == len(members),
                }
            )
    if task_metric:
        out.append(
            {
                "level": "overall",
                "name": "all_task",
                "metric": "avg_metric",
                "score": float(np.mean(list(task_metric.values()))),
                "tasks": sorted(task_metric),
                "complete": set(XTREME_R_TASKS) <= set(task_metric),
            }
        )
    return out


def _run_scores(runs: Sequence[PendingRun]) -> pd.DataFrame:
    rows = []
    for run in runs:
        metric = get_metric(run.record.metric, **run.record.metric_config)
        rows.append(
            {
                "task": run.record.task,
                "language": run.record.language,
                "metric": run.record.metric,
                "score": float(metric.score(run.stat_totals())),
            }
        )
    return pd.DataFrame(rows)


def import_xtreme(
    store: Store,
    predictions: str | Path,
    labels: str | Path,
    *,
    model: str | None = None,
    tasks: Sequence[str] | None = None,
    seed: int | None = None,
    progress: Progress | None = None,
) -> HarnessImportResult:
    """Score an XTREME(-R) predictions folder per example and store the runs."""
    t0 = time.perf_counter()
    # the runs' examples wait on disk (next to the store) until they are written
    with RunSpool(staging_dir(store.path)) as spool:
        runs, files = read_xtreme(
            predictions, labels, model=model, tasks=tasks, seed=seed, spool=spool
        )
        return _write(store, predictions, runs, files, seed, tasks, progress, t0)


def _write(
    store: Store,
    predictions: str | Path,
    runs: list[PendingRun],
    files: list[Path],
    seed: int | None,
    tasks: Sequence[str] | None,
    progress: Progress | None,
    t0: float,
) -> HarnessImportResult:
    """Write what :func:`read_xtreme` read; the import's hash covers the files and options."""
    pred_root = Path(predictions)
    common_root = Path(*Path(predictions).resolve().parts[:1])
    sha = files_sha256(
        [f.resolve() for f in files],
        common_root,
        json.dumps([runs[0].record.model, seed, sorted(tasks or [])]),
    )
    result = write_import(
        store,
        kind="xtreme",
        source=pred_root,
        sha=sha,
        runs=runs,
        score_rows=[],
        n_files=len(files),
        progress=progress,
        t0=t0,
    )
    result.aggregates = xtreme_average(_run_scores(runs))
    return result
