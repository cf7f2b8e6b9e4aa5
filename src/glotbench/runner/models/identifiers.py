"""Pretrained language identifiers that PyPI wheels ship with their models inside.

Each function here is a *factory* for the ``callable`` model kind: it loads
the tool once and returns ``predict(list[str]) -> list[str]`` answering
ISO 639-1 codes (``und`` when the tool abstains). In a suite::

    - name: langid.py
      kind: callable
      options: {target: "glotbench.runner.models.identifiers:langid_py", factory: true}

Every tool keeps its own, full language inventory (as deployed), so a tool
that does not know Faroese or Nynorsk is wrong on those items — coverage is
part of what an LID benchmark measures. Codes are normalised once, the same
way for every tool:

* a generic Norwegian ``no`` answer counts as Bokmål ``nb`` (the written
  standard of most Norwegian text), while an explicit Nynorsk ``nn`` stays
  ``nn``;
* region and script suffixes are dropped (``zh-cn`` -> ``zh``), and the
  legacy codes ``iw``, ``in`` and ``jw`` become ``he``, ``id`` and ``jv``;
* "unknown" answers (``un``, ``xx``, ``zxx``) become ``und``.

``langdetect`` is stochastic (it samples n-gram trials); its factory takes the
iteration's ``seed``, so the replication protocol measures its run-to-run
variance while every run stays reproducible.

Each predictor carries a ``metadata`` dict (identifier, package, version) that
the ``callable`` adapter stores with every run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from functools import lru_cache
from importlib import metadata as importlib_metadata
from typing import Any

from glotbench.runner.errors import ModelError

Predict = Callable[[Sequence[str]], list[str]]

UNDETERMINED = "und"
_ALIASES = {"no": "nb", "iw": "he", "in": "id", "jw": "jv", "zh-cn": "zh", "zh-tw": "zh"}


def normalise_code(code: str | None) -> str:
    """A tool's language answer as an ISO 639-1 code (``und`` for none)."""
    if not code:
        return UNDETERMINED
    c = str(code).strip().lower().replace("_", "-")
    if c in _ALIASES:
        return _ALIASES[c]
    c = c.split("-")[0]
    if c in ("un", "xx", "unknown", "zxx", ""):
        return UNDETERMINED
    return _ALIASES.get(c, c)


def _described(predict: Predict, identifier: str, package: str) -> Predict:
    """Attach package and version so the run's model metadata names them."""
    predict.metadata = {  # type: ignore[attr-defined]
        "identifier": identifier,
        "package": package,
        "package_version": version_of(package),
    }
    return predict


def _require(module: str, package: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise ModelError(
            f"language identifier {package!r} is not installed: pip install 'glotbench[starter]' "
            f"(or pip install {package})"
        ) from None


def version_of(package: str) -> str | None:
    try:
        return importlib_metadata.version(package)
    except importlib_metadata.PackageNotFoundError:
        return None


def py3langid() -> Predict:
    """py3langid (Barbaresi's fork of langid.py; 97 languages, shipped model)."""
    mod = _require("py3langid", "py3langid")

    def predict(texts: Sequence[str]) -> list[str]:
        return [normalise_code(mod.classify(t)[0]) for t in texts]

    return _described(predict, "py3langid", "py3langid")


@lru_cache(maxsize=1)
def _langid_identifier() -> Any:
    _require("langid", "langid")
    from langid.langid import LanguageIdentifier, model

    return LanguageIdentifier.from_modelstring(model, norm_probs=False)


def langid_py() -> Predict:
    """langid.py (Lui & Baldwin 2012; 97 languages, naive Bayes over byte n-grams)."""
    identifier = _langid_identifier()

    def predict(texts: Sequence[str]) -> list[str]:
        return [normalise_code(identifier.classify(t)[0]) for t in texts]

    return _described(predict, "langid", "langid")


@lru_cache(maxsize=1)
def _lingua_detector() -> Any:
    """All 75 languages, their n-gram models loaded as texts need them: the demo's texts
    reach most of them, yet lazy loading with one text at a time took 11.4 s of CPU against
    12.6 s for preloading every model (and 13 s with lingua's parallel detection) — the
    same answers (docs/performance.md, Demo)."""
    lingua = _require("lingua", "lingua-language-detector")
    return lingua.LanguageDetectorBuilder.from_all_languages().build()


def lingua() -> Predict:
    """lingua-language-detector (75 languages, n-gram models up to 5-grams, high-accuracy mode).

    One text at a time in this thread: jobs already run one per core (``--executor
    processes``), and lingua's own thread pool only competed with them."""
    detector = _lingua_detector()

    def predict(texts: Sequence[str]) -> list[str]:
        found = [detector.detect_language_of(text) for text in texts]
        return [
            normalise_code(lang.iso_code_639_1.name) if lang is not None else UNDETERMINED
            for lang in found
        ]

    return _described(predict, "lingua", "lingua-language-detector")


def cld2() -> Predict:
    """pycld2 (Google's Compact Language Detector 2; 80+ languages in the wheel)."""
    mod = _require("pycld2", "pycld2")

    def one(text: str) -> str:
        try:
            _, _, details = mod.detect(text, bestEffort=True)
        except mod.error:  # invalid UTF-8 and similar: the tool abstains
            return UNDETERMINED
        return normalise_code(details[0][1])

    def predict(texts: Sequence[str]) -> list[str]:
        return [one(t) for t in texts]

    return _described(predict, "cld2", "pycld2")


_LANGDETECT_LOCK = threading.Lock()


def langdetect(seed: int = 0) -> Predict:
    """langdetect (port of Shuyo's language-detection; 55 languages; seeded sampling).

    Every item is detected with a fresh detector seeded with ``seed`` (the
    detector draws its n-gram trials and smoothing noise from it).
    """
    _require("langdetect", "langdetect")
    from langdetect import detector_factory
    from langdetect.lang_detect_exception import LangDetectException

    with _LANGDETECT_LOCK:
        detector_factory.init_factory()
    factory = detector_factory._factory

    def one(text: str) -> str:
        detector = factory.create()
        detector.seed = seed
        detector.append(text)
        try:
            return normalise_code(detector.detect())
        except LangDetectException:
            return UNDETERMINED

    def predict(texts: Sequence[str]) -> list[str]:
        return [one(t) for t in texts]

    return _described(predict, "langdetect", "langdetect")


#: name -> (factory, PyPI package)
IDENTIFIERS: dict[str, tuple[Callable[..., Predict], str]] = {
    "py3langid": (py3langid, "py3langid"),
    "langid": (langid_py, "langid"),
    "lingua": (lingua, "lingua-language-detector"),
    "cld2": (cld2, "pycld2"),
    "langdetect": (langdetect, "langdetect"),
}
