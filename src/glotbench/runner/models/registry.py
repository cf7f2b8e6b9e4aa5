"""The model kinds: one registry that the loader, suite validation, the CLI and docs read.

Each :class:`ModelKind` says which adapter class a kind builds (``module:Class``
under :mod:`glotbench.runner.models`, imported only when a model of that kind
is built, so a kind that needs torch or vLLM costs nothing until used), which
constructor keywords the kind fixes (``tfidf-nb`` is the text classifier with
``estimator="nb"``), the Python modules and the optional extra it needs, the
option that receives the ``ID`` of ``--model KIND:ID``, whether it generates
text, and which options only say how requests travel (left out of the
configuration hash). ``glotbench run --list-models`` prints this table.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from dataclasses import dataclass, field
from typing import Any

from glotbench.runner.errors import UnknownNameError

_HF = ("torch", "transformers")
#: options of the ``openai`` kind about how requests travel, not what is answered
_HTTP_TRANSPORT = frozenset(
    {
        "base_url",
        "api_key_env",
        "concurrency",
        "timeout",
        "max_retries",
        "retry_base_seconds",
        "max_retry_seconds",
        "requests_per_second",
        "cache",
    }
)


@dataclass(frozen=True)
class ModelKind:
    """One model kind (see the module docstring)."""

    name: str
    #: the adapter class, ``module:Class`` under ``glotbench.runner.models``
    adapter: str
    description: str
    #: constructor keywords the kind fixes (not options of its suite entries)
    fixed: dict[str, Any] = field(default_factory=dict)
    #: importable modules the kind needs, and the extra that installs them
    requires: tuple[str, ...] = ()
    extra: str | None = None
    #: the option that receives ``ID`` in ``--model KIND:ID`` (None: ``ID`` names the model)
    id_option: str | None = None
    #: generates text (outputs kept by default, prompts and sampling options)
    generative: bool = False
    #: options about transport only, left out of the configuration hash
    transport: frozenset[str] = frozenset()
    #: options whose default is resolved when the model loads: hashed with their default,
    #: so a run under an older default is not taken for a run under this one
    hashed_defaults: dict[str, Any] = field(default_factory=dict)

    @property
    def needs_torch(self) -> bool:
        return "torch" in self.requires

    def adapter_class(self) -> Any:
        module, name = self.adapter.split(":")
        return getattr(importlib.import_module(f"glotbench.runner.models.{module}"), name)

    def missing(self) -> list[str]:
        """The required modules that are not installed."""
        return [m for m in self.requires if not importable(m)]

    def install_hint(self) -> str:
        return f"pip install 'glotbench[{self.extra}]'" if self.extra else ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.name,
            "description": self.description,
            "requires": list(self.requires),
            "extra": self.extra,
            "available": not self.missing(),
            "id_option": self.id_option,
            "generative": self.generative,
        }


def importable(module: str) -> bool:
    """Whether ``module`` can be imported (already imported counts; nothing is imported)."""
    if module in sys.modules:
        return sys.modules[module] is not None
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _kinds(*kinds: ModelKind) -> dict[str, ModelKind]:
    return {k.name: k for k in kinds}


#: every model kind, in the order the CLI lists them
REGISTRY: dict[str, ModelKind] = _kinds(
    *(
        ModelKind(
            f"tfidf-{est}",
            "sklearn:TextClassifier",
            f"TF-IDF word+char n-grams + {what}",
            fixed={"estimator": est},
        )
        for est, what in (
            ("logreg", "logistic regression"),
            ("nb", "complement naive Bayes"),
            ("svm", "linear SVM"),
        )
    ),
    ModelKind("majority", "sklearn:Majority", "majority-class baseline"),
    ModelKind("tagger", "sklearn:TokenTagger", "token-level linear tagger (NER, POS)"),
    ModelKind(
        "parser",
        "depparse:DependencyParser",
        "graph-based dependency parser: hashed arc features, averaged perceptron, "
        "Chu-Liu/Edmonds (parsing)",
    ),
    ModelKind(
        "parse-baseline",
        "depparse:ParseBaseline",
        "attach every word to its left/right neighbour, majority relation (parsing)",
    ),
    ModelKind(
        "hashing-embed", "sklearn:HashingEmbedder", "character n-gram hashing vectors (retrieval)"
    ),
    ModelKind(
        "callable",
        "external:CallableModel",
        "a Python callable predict(list[str]) -> list[label]",
        id_option="target",
    ),
    ModelKind(
        "predictions",
        "external:PredictionsFile",
        "a predictions file (evaluation only)",
        id_option="path",
    ),
    ModelKind(
        "hf-encoder",
        "hf_encoder:HFEncoder",
        "Hugging Face encoder, fine-tuned; biaffine head on parsing",
        requires=_HF,
        extra="neural",
        id_option="path",
    ),
    ModelKind(
        "hf-generative",
        "hf_generative:HFGenerative",
        "Hugging Face causal LM, zero/few-shot classification, QA, translation; chat templates",
        requires=_HF,
        extra="neural",
        id_option="path",
        generative=True,
        hashed_defaults={"chat": "auto"},
    ),
    ModelKind(
        "hf-qa",
        "hf_qa:HFQuestionAnswering",
        "Hugging Face encoder, fine-tuned for extractive QA",
        requires=_HF,
        extra="neural",
        id_option="path",
    ),
    ModelKind(
        "hf-embed",
        "hf_retrieval:HFEmbedder",
        "Hugging Face encoder, mean-pooled vectors for retrieval",
        requires=_HF,
        extra="neural",
        id_option="path",
    ),
    ModelKind(
        "openai",
        "openai_http:OpenAICompatible",
        "a model behind an OpenAI-compatible HTTP server (vLLM, TGI, llama.cpp, hosted "
        "APIs): zero/few-shot classification, QA, translation; completions or chat",
        id_option="model",
        generative=True,
        transport=_HTTP_TRANSPORT,
    ),
    ModelKind(
        "vllm",
        "vllm_offline:VLLMGenerative",
        "a causal LM run in-process by vLLM on a GPU: zero/few-shot classification, QA, "
        "translation; chat templates",
        requires=("vllm",),
        extra="vllm",
        id_option="path",
        generative=True,
        hashed_defaults={"chat": "auto"},
    ),
)

#: kind -> description (the CLI's list and error messages)
MODEL_KINDS: dict[str, str] = {name: kind.description for name, kind in REGISTRY.items()}
#: kinds that need torch and transformers (extra ``neural``)
NEURAL_KINDS = frozenset(name for name, kind in REGISTRY.items() if kind.needs_torch)
#: kinds that generate text
GENERATIVE_KINDS = frozenset(name for name, kind in REGISTRY.items() if kind.generative)


def model_kind(name: str) -> ModelKind:
    """The registered kind ``name``; an unknown kind lists the known ones."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise UnknownNameError(
            f"unknown model kind {name!r}; known kinds: {', '.join(REGISTRY)}"
        ) from None


def kinds_table() -> list[dict[str, Any]]:
    """Every kind as a row (``glotbench run --list-models``, ``--json``)."""
    return [kind.as_dict() for kind in REGISTRY.values()]
