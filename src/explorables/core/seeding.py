"""Seeding: the same seed gives the same numbers on the CPU."""

from __future__ import annotations

import random

import numpy as np
import torch

from .arguments import checked


@checked()
def seed_everything(seed: int) -> np.random.Generator:
    """Seed Python, numpy and torch, and return a fresh ``numpy.random.Generator`` for ``seed``.

    Chapters should prefer passing the returned generator around over relying on global state.
    """
    random.seed(seed)
    np.random.seed(seed % 2**32)  # noqa: NPY002 - seeds third-party code that uses the legacy global RNG
    torch.manual_seed(seed)
    return np.random.default_rng(seed)
