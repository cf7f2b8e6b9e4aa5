"""Device placement and mixed precision of the Hugging Face adapters.

``device``: ``auto`` (the default) takes the first CUDA GPU when torch sees
one, else Apple's MPS, else the CPU; ``cpu``, ``cuda``, ``cuda:N`` and ``mps``
pick one explicitly (an error when it is not available).

``precision``: ``fp32`` (the default: full precision, bit-reproducible on
one device), ``bf16`` or ``fp16`` run the forward passes under
``torch.autocast`` with that dtype (matrix products in half precision, the
weights kept in fp32; PyTorch's automatic mixed precision, see
https://pytorch.org/docs/stable/amp.html), and ``auto`` means bf16 on a GPU
that supports it and fp32 otherwise.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Any

from glotbench.runner.errors import ModelError

PRECISIONS = ("fp32", "bf16", "fp16", "auto")


def resolve_device(device: str, torch: Any, model: str = "model") -> str:
    """The torch device string that ``device`` (``auto``, ``cpu``, ``cuda[:N]``, ``mps``) means."""
    name = str(device).strip().lower()
    cuda = bool(torch.cuda.is_available())
    mps_backend = getattr(getattr(torch, "backends", None), "mps", None)
    mps = bool(mps_backend is not None and mps_backend.is_available())
    if name == "auto":
        return "cuda" if cuda else "mps" if mps else "cpu"
    if name == "cpu":
        return "cpu"
    if name == "cuda" or name.startswith("cuda:"):
        if not cuda:
            raise ModelError(
                f"model {model!r}: device {device!r} asked for, but torch sees no CUDA GPU "
                "(use device: auto or cpu)"
            )
        if name.startswith("cuda:"):
            index = name.split(":", 1)[1]
            if not index.isdigit() or int(index) >= torch.cuda.device_count():
                raise ModelError(
                    f"model {model!r}: device {device!r}: torch sees "
                    f"{torch.cuda.device_count()} CUDA device(s)"
                )
        return name
    if name == "mps":
        if not mps:
            raise ModelError(f"model {model!r}: device 'mps' asked for, but it is not available")
        return "mps"
    raise ModelError(
        f"model {model!r}: unknown device {device!r}; use auto, cpu, cuda, cuda:N or mps"
    )


def check_precision(precision: str, model: str = "model") -> str:
    name = str(precision).strip().lower()
    if name not in PRECISIONS:
        raise ModelError(
            f"model {model!r}: unknown precision {precision!r}; use one of {', '.join(PRECISIONS)}"
        )
    return name


def resolve_precision(precision: str, device: str, torch: Any) -> str:
    """``auto`` → ``bf16`` on a CUDA GPU with bf16 support, else ``fp32``."""
    if precision != "auto":
        return precision
    if device.startswith("cuda") and bool(torch.cuda.is_bf16_supported()):
        return "bf16"
    return "fp32"


def autocast(precision: str, device: str, torch: Any) -> AbstractContextManager[Any]:
    """``torch.autocast`` for ``bf16`` / ``fp16`` on ``device``; a no-op for ``fp32``."""
    if precision == "fp32":
        return nullcontext()
    dtype = torch.bfloat16 if precision == "bf16" else torch.float16
    return torch.autocast(device_type=device.split(":", 1)[0], dtype=dtype)
