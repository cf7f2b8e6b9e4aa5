"""Sentence embeddings from a pretrained Hugging Face encoder (extra ``neural``; lazy imports).

For retrieval tasks (``embed(texts) -> vectors``; the task ranks the pool by
cosine similarity). No training: the model is loaded once, in evaluation
mode. A text's vector is the mean of one layer's hidden states over its
tokens, weighted by the attention mask (special tokens included, padding
excluded), as XTREME's BUCC / Tatoeba baselines. ``layer`` picks the layer:
``None`` (default) the last; ``k`` the output of transformer layer ``k``
(``hidden_states[k]``, 0 being the embedding layer; negative counts from the
end). XTREME uses layer 8 of mBERT / XLM-R (``--specific_layer 7``, counted
from 0 over the transformer layers).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from glotbench.runner.errors import ModelError
from glotbench.runner.models.hf_encoder import HFBase, _torch

if TYPE_CHECKING:
    from glotbench.runner.datasets.base import Dataset, Record
    from glotbench.runner.tasks import Task


class HFEmbedder(HFBase):
    """Mean-pooled hidden states of a pretrained encoder (no fine-tuning)."""

    trains = False
    family = "hf-embed"

    def __init__(
        self,
        name: str,
        path: str,
        base: str | Path | None = None,
        layer: int | None = None,
        batch_size: int = 32,
        max_length: int = 512,
        trust_remote_code: bool = False,
        device: str = "auto",
        precision: str = "fp32",
    ) -> None:
        super().__init__(
            name,
            path,
            base=base,
            batch_size=batch_size,
            max_length=max_length,
            trust_remote_code=trust_remote_code,
            device=device,
            precision=precision,
        )
        if layer is not None and not isinstance(layer, int):
            raise ModelError(f"model {name!r}: layer must be an integer or null (the last)")
        self.layer = layer
        self.layers = 0

    def supports(self, task: Task) -> bool:
        return task.kind == "retrieval"

    def fit(
        self,
        task: Task,
        dataset: Dataset,
        train: Sequence[Record],
        validation: Sequence[Record],
        seed: int,
    ) -> None:
        if self.model is not None:  # loaded by an earlier fit: nothing is learned
            return
        _, transformers = _torch()
        self._load(transformers.AutoModel)
        model: Any = self.model
        model.eval()
        self.layers = int(getattr(model.config, "num_hidden_layers", 0) or 0)
        bounded = -self.layers - 1 <= (self.layer or 0) <= self.layers
        if self.layer is not None and self.layers and not bounded:
            raise ModelError(
                f"model {self.name!r} has {self.layers} layers; layer {self.layer} does not exist "
                f"(use 0..{self.layers}, 0 = embeddings, or a negative index)"
            )
        if self.tokenizer.pad_token is None:  # decoder tokenizers: pad with EOS (masked anyway)
            self.tokenizer.pad_token = self.tokenizer.eos_token or self.tokenizer.unk_token

    def _pool(self, chunk: list[dict[str, Any]]) -> np.ndarray:
        want_all = self.layer is not None
        out = self._forward(chunk, output_hidden_states=want_all)
        hidden = out.hidden_states[self.layer] if want_all else out.last_hidden_state
        torch, _ = _torch()
        width = hidden.shape[1]
        lengths = [len(item["input_ids"]) for item in chunk]  # right padding: mask = length
        mask = torch.tensor([[1.0] * n + [0.0] * (width - n) for n in lengths])
        mask = mask.to(device=hidden.device, dtype=hidden.dtype).unsqueeze(-1)
        summed = (hidden * mask).sum(dim=1)
        counts = mask.sum(dim=1).clamp(min=1.0)
        return (summed / counts).float().cpu().numpy()

    def embed(self, texts: list[str]) -> np.ndarray:
        if self.model is None:
            raise ModelError(f"model {self.name!r} must be loaded (fit) before it embeds")
        items = []
        for text in texts:
            enc = self.tokenizer(str(text), truncation=True, max_length=self.max_length)
            items.append({k: list(v) for k, v in enc.items()})
        if not items:
            return np.zeros((0, int(self.model.config.hidden_size)), dtype=np.float32)
        parts = self._map_batches(items, self._pool)
        return np.concatenate(parts, axis=0)

    def metadata(self) -> dict[str, Any]:
        return {
            **super().metadata(),
            "layer": self.layer,
            "layers": self.layers,
            "pooling": "mean (attention mask)",
        }
