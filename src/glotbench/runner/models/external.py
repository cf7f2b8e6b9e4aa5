"""Adapters for models that live outside glotbench: a Python callable, a predictions file."""

from __future__ import annotations

import importlib
import inspect
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glotbench.runner.errors import ModelError
from glotbench.runner.models.base import Model

if TYPE_CHECKING:
    from glotbench.runner.datasets.base import Dataset, Record
    from glotbench.runner.tasks import Task


def import_object(target: str) -> Any:
    """``"package.module:attribute"`` -> the object."""
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise ModelError(
            f"callable target must look like 'package.module:function', got {target!r}"
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ModelError(
            f"cannot import {module_name!r} for model target {target!r}: {exc}"
        ) from None
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ModelError(
                f"{module_name!r} has no attribute {attr!r} (model target {target!r})"
            ) from None
    return obj


def _accepts_seed(factory: Any) -> bool:
    try:
        return "seed" in inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return False


class CallableModel(Model):
    """Any Python callable ``predict(list[str]) -> list[label]``.

    ``target`` is the callable itself or ``"module:function"``; with
    ``factory=True`` the target is called once (with ``factory_kwargs``) and
    returns the predict function — how pretrained tools such as language
    identifiers load their model. ``task_kind`` says which task kind the
    callable answers (``sequence`` by default; ``token`` for a tagger
    ``predict(list[list[str]]) -> list[list[tag]]``).
    """

    trains = False

    def __init__(
        self,
        name: str,
        target: str | Callable[[list[Any]], Sequence[Any]],
        factory: bool = False,
        factory_kwargs: dict[str, Any] | None = None,
        task_kind: str = "sequence",
        batch_size: int | None = None,
    ) -> None:
        super().__init__(name, target=target if isinstance(target, str) else repr(target))
        self.target = target
        self.factory = factory
        self.factory_kwargs = factory_kwargs or {}
        self.task_kind = task_kind
        self.batch_size = batch_size
        self._fn: Callable[[list[Any]], Sequence[Any]] | None = None
        self._seed: int | None = None
        if task_kind not in ("sequence", "token"):
            raise ModelError(f"callable model {name!r}: task_kind must be 'sequence' or 'token'")

    def _target(self) -> Any:
        return import_object(self.target) if isinstance(self.target, str) else self.target

    def fit(
        self,
        task: Task,
        dataset: Dataset,
        train: Sequence[Record],
        validation: Sequence[Record],
        seed: int,
    ) -> None:
        """Nothing to learn; a factory that takes ``seed`` gets the iteration's seed.

        That is how a stochastic tool (``langdetect``) is seeded per iteration,
        so the protocol measures its run-to-run variance reproducibly.
        """
        if self.factory and "seed" not in self.factory_kwargs and _accepts_seed(self._target()):
            self._seed = seed
            self._fn = None

    def _get(self) -> Callable[[list[Any]], Sequence[Any]]:
        if self._fn is None:
            obj = self._target()
            if self.factory:
                kwargs = dict(self.factory_kwargs)
                if self._seed is not None:
                    kwargs["seed"] = self._seed
                obj = obj(**kwargs)
            if not callable(obj):
                raise ModelError(f"model {self.name!r}: target {self.target!r} is not callable")
            self._fn = obj
        return self._fn

    def _call(self, items: list[Any]) -> list[Any]:
        fn = self._get()
        if not self.batch_size:
            return list(fn(items))
        out: list[Any] = []
        for start in range(0, len(items), self.batch_size):
            out.extend(fn(items[start : start + self.batch_size]))
        return out

    def supports(self, task: Task) -> bool:
        return task.kind == self.task_kind

    def predict_labels(self, texts: list[Any]) -> list[Any]:
        if self.task_kind != "sequence":
            raise ModelError(f"model {self.name!r} answers {self.task_kind} tasks only")
        return self._call(texts)

    def predict_tags(self, sentences: list[list[str]]) -> list[list[Any]]:
        if self.task_kind != "token":
            raise ModelError(f"model {self.name!r} answers {self.task_kind} tasks only")
        return self._call(sentences)

    def metadata(self) -> dict[str, Any]:
        target = (
            self.target
            if isinstance(self.target, str)
            else getattr(self.target, "__qualname__", repr(self.target))
        )
        out: dict[str, Any] = {"family": "callable", "target": target}
        if self._seed is not None:
            out["factory_seed"] = self._seed
        # a callable may describe itself (package, version, inventory) with a
        # ``metadata`` dict attribute, as the built-in language identifiers do
        extra = getattr(self._fn, "metadata", None)
        if isinstance(extra, dict):
            out.update(extra)
        return out


class PredictionsFile(Model):
    """Evaluation only: predictions read from a file, matched to the test split.

    * ``.jsonl``: objects ``{"id": ..., "prediction": ...}`` matched by id
      (every test id must be present; extra ids are an error too);
    * ``.txt``: one prediction per line in test order (for token tasks the
      tags separated by spaces); the number of lines must equal the test size;
    * ``.conllu``: sentences in test order; parsing takes (HEAD, DEPREL),
      POS the UPOS column, NER ``name=`` in MISC.
    """

    trains = False

    def __init__(self, name: str, path: str | Path, base: str | Path | None = None) -> None:
        super().__init__(name, path=str(path))
        p = Path(path)
        if base is not None and not p.is_absolute():
            p = Path(base) / p
        self.path = p
        self._test: list[Record] | None = None

    def fit(
        self,
        task: Task,
        dataset: Dataset,
        train: Sequence[Record],
        validation: Sequence[Record],
        seed: int,
    ) -> None:
        self._test = dataset.test
        self._task = task

    def supports(self, task: Task) -> bool:
        return task.kind in ("sequence", "token", "parsing", "qa", "translation")

    def _load(self, n_expected: int) -> list[Any]:
        if not self.path.exists():
            raise ModelError(f"model {self.name!r}: predictions file {self.path} does not exist")
        assert self._test is not None
        ids = [str(r["id"]) for r in self._test]
        suffix = self.path.suffix.lower()
        if suffix in (".jsonl", ".json"):
            found: dict[str, Any] = {}
            with self.path.open(encoding="utf-8") as handle:
                for line_no, line in enumerate(handle, start=1):
                    if not line.strip():
                        continue
                    try:
                        obj = json.loads(line)
                        found[str(obj["id"])] = obj["prediction"]
                    except (json.JSONDecodeError, KeyError, TypeError):
                        raise ModelError(
                            f"{self.path}, line {line_no}: expected a JSON object with 'id' and "
                            "'prediction'"
                        ) from None
            missing = [i for i in ids if i not in found]
            if missing:
                raise ModelError(
                    f"{self.path}: no prediction for {len(missing)} test item(s), e.g. "
                    f"{missing[0]!r}; the file must cover the whole test split"
                )
            extra = sorted(set(found) - set(ids))
            if extra:
                raise ModelError(
                    f"{self.path}: {len(extra)} prediction(s) for ids not in the test split, "
                    f"e.g. {extra[0]!r}"
                )
            return [found[i] for i in ids]
        if suffix == ".conllu":
            from glotbench.runner.datasets.conllu import read_conllu

            sents = list(read_conllu(self.path, ner=self._task.name == "ner"))
            if len(sents) != n_expected:
                raise ModelError(
                    f"{self.path}: {len(sents)} sentences but the test split has {n_expected}; "
                    "the predictions file must hold one sentence per test item, in test order"
                )
            if self._task.kind == "parsing":
                return [list(zip(s["heads"], s["deprels"], strict=True)) for s in sents]
            if self._task.name == "ner":
                return [s["ner"] for s in sents]
            return [s["upos"] for s in sents]
        with self.path.open(encoding="utf-8") as handle:
            lines = handle.read().splitlines()
        while lines and not lines[-1].strip():
            lines.pop()
        if len(lines) != n_expected:
            raise ModelError(
                f"{self.path}: {len(lines)} lines but the test split has {n_expected} items; "
                "write one prediction per line, in test order"
            )
        return [line.split() if self._task.kind == "token" else line for line in lines]

    def _answers(self, n: int) -> list[Any]:
        if self._test is None:
            raise ModelError(f"model {self.name!r}: fit() must be called with the dataset first")
        if n != len(self._test):
            raise ModelError(f"model {self.name!r} can only answer the whole test split at once")
        return self._load(n)

    def predict_labels(self, texts: list[Any]) -> list[Any]:
        return self._answers(len(texts))

    def predict_tags(self, sentences: list[list[str]]) -> list[list[Any]]:
        return self._answers(len(sentences))

    def parse(self, records: list[Record]) -> list[Any]:
        return self._answers(len(records))

    def answer(self, questions: list[str], contexts: list[str]) -> list[str]:
        return self._answers(len(questions))

    def translate(
        self, sources: list[str], source_languages: list[str], target_languages: list[str]
    ) -> list[str]:
        return self._answers(len(sources))

    def metadata(self) -> dict[str, Any]:
        return {"family": "predictions file", "path": str(self.path)}
