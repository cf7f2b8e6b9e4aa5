"""Model adapters and ``build_model(spec)``.

Kinds (``ModelSpec.kind``):

``tfidf-logreg`` / ``tfidf-nb`` / ``tfidf-svm``  TF-IDF word+char n-grams + a linear model
``majority``        the most frequent training label / tag
``tagger``          token-level linear tagger (NER, POS)
``parser``          graph-based dependency parser (arc-factored, Chu-Liu/Edmonds) + relations
``parse-baseline``  every word attached to its left/right neighbour, majority relation
``hashing-embed``   character n-gram hashing vectors (retrieval baseline)
``callable``        any ``predict(list[str]) -> list[label]`` (``options.target: module:function``)
``predictions``     a predictions file (``options.path``), evaluation only
``hf-encoder``      Hugging Face encoder fine-tuned ScandEval-style; on parsing a deep biaffine
                    head decoded with Chu-Liu/Edmonds (extra ``neural``)
``hf-generative``   Hugging Face causal LM, zero/few-shot classification, QA and translation,
                    one sampled answer per iteration (extra ``neural``)
``hf-qa``           Hugging Face encoder fine-tuned for extractive QA (extra ``neural``)
``hf-embed``        Hugging Face encoder, mean-pooled sentence vectors for retrieval
                    (extra ``neural``)
``openai``          a model behind an OpenAI-compatible HTTP server (vLLM, TGI, llama.cpp,
                    hosted APIs): completions or chat, cached responses (standard library only)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from glotbench.runner.errors import ModelError, UnknownNameError
from glotbench.runner.models.base import Model, ModelSpec
from glotbench.runner.models.depparse import DependencyParser, ParseBaseline
from glotbench.runner.models.external import CallableModel, PredictionsFile, import_object
from glotbench.runner.models.sklearn import HashingEmbedder, Majority, TextClassifier, TokenTagger

MODEL_KINDS: dict[str, str] = {
    "tfidf-logreg": "TF-IDF word+char n-grams + logistic regression",
    "tfidf-nb": "TF-IDF word+char n-grams + complement naive Bayes",
    "tfidf-svm": "TF-IDF word+char n-grams + linear SVM",
    "majority": "majority-class baseline",
    "tagger": "token-level linear tagger (NER, POS)",
    "parser": "graph-based dependency parser: hashed arc features, averaged perceptron, "
    "Chu-Liu/Edmonds (parsing)",
    "parse-baseline": "attach every word to its left/right neighbour, majority relation (parsing)",
    "hashing-embed": "character n-gram hashing vectors (retrieval)",
    "callable": "a Python callable predict(list[str]) -> list[label]",
    "predictions": "a predictions file (evaluation only)",
    "hf-encoder": "Hugging Face encoder, fine-tuned; biaffine head on parsing "
    "(needs torch, transformers)",
    "hf-generative": "Hugging Face causal LM, zero/few-shot classification, QA, translation "
    "(needs torch, transformers)",
    "hf-qa": "Hugging Face encoder, fine-tuned for extractive QA (needs torch, transformers)",
    "hf-embed": "Hugging Face encoder, mean-pooled vectors for retrieval "
    "(needs torch, transformers)",
    "openai": "a model behind an OpenAI-compatible HTTP server (vLLM, TGI, llama.cpp, hosted "
    "APIs): zero/few-shot classification, QA, translation; completions or chat",
}
NEURAL_KINDS = frozenset({"hf-encoder", "hf-generative", "hf-qa", "hf-embed"})


def neural_available() -> bool:
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("torch", "transformers"))


def build_model(spec: ModelSpec | dict[str, Any], *, base: str | Path | None = None) -> Model:
    """A fresh adapter for ``spec`` (relative paths resolve against ``base``)."""
    if isinstance(spec, dict):
        spec = ModelSpec(**spec)
    opts = dict(spec.options)
    kind = spec.kind
    try:
        if kind.startswith("tfidf-"):
            return TextClassifier(spec.name, estimator=kind.removeprefix("tfidf-"), **opts)
        if kind == "majority":
            return Majority(spec.name, **opts)
        if kind == "tagger":
            return TokenTagger(spec.name, **opts)
        if kind == "parser":
            return DependencyParser(spec.name, **opts)
        if kind == "parse-baseline":
            return ParseBaseline(spec.name, **opts)
        if kind == "hashing-embed":
            return HashingEmbedder(spec.name, **opts)
        if kind == "callable":
            return CallableModel(spec.name, **opts)
        if kind == "predictions":
            return PredictionsFile(spec.name, base=base, **opts)
        if kind == "hf-encoder":
            from glotbench.runner.models.hf_encoder import HFEncoder

            return HFEncoder(spec.name, base=base, **opts)
        if kind == "hf-generative":
            from glotbench.runner.models.hf_generative import HFGenerative

            return HFGenerative(spec.name, base=base, **opts)
        if kind == "hf-qa":
            from glotbench.runner.models.hf_qa import HFQuestionAnswering

            return HFQuestionAnswering(spec.name, base=base, **opts)
        if kind == "hf-embed":
            from glotbench.runner.models.hf_retrieval import HFEmbedder

            return HFEmbedder(spec.name, base=base, **opts)
        if kind == "openai":
            from glotbench.runner.models.openai_http import OpenAICompatible

            return OpenAICompatible(spec.name, **opts)
    except TypeError as exc:
        raise ModelError(f"model {spec.name!r} (kind {kind}): bad options: {exc}") from None
    raise UnknownNameError(
        f"unknown model kind {kind!r} for model {spec.name!r}; known kinds: "
        f"{', '.join(MODEL_KINDS)}"
    )


__all__ = [
    "MODEL_KINDS",
    "NEURAL_KINDS",
    "CallableModel",
    "DependencyParser",
    "HashingEmbedder",
    "Majority",
    "Model",
    "ModelSpec",
    "ParseBaseline",
    "PredictionsFile",
    "TextClassifier",
    "TokenTagger",
    "build_model",
    "import_object",
    "neural_available",
]
