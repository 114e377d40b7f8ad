"""Device choice for torch code: every chapter takes a ``device`` argument and never assumes CUDA."""

from __future__ import annotations

import torch

from .arguments import checked
from .validation import check_choice

DEVICE_CHOICES = ("auto", "cpu", "cuda", "mps")


@checked()
def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """Turn ``"auto" | "cpu" | "cuda" | "mps"`` (or a ``torch.device``) into a usable device.

    ``"auto"`` picks CUDA, then Apple's MPS, then the CPU (the command line warns when a
    ``paper`` run lands on the CPU). Asking explicitly for a device that this machine does not
    have is an error, not a silent fallback.
    """
    if isinstance(device, torch.device):
        return device
    name = str(device).split(":")[0]
    check_choice("device", name, DEVICE_CHOICES)
    if name == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("device='cuda' was requested but torch sees no CUDA GPU; use 'auto' or 'cpu'")
    if name == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        raise ValueError("device='mps' was requested but MPS is not available; use 'auto' or 'cpu'")
    return torch.device(str(device))
