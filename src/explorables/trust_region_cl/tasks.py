"""The task sequences: five 2-D generation tasks, and the digit classes of scikit-learn's ``load_digits``.

Every task is a distribution to generate. The 2-D ones are drawn fresh from their generator (no
fixed data set), scaled to coordinates of order one; a digits task is one class of the 8x8 images
bundled with scikit-learn (about 180 images per class), pixels mapped to ``[-1, 1]`` and dequantised.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import torch

from ..core.arguments import checked
from ..core.device import resolve_device
from ..core.params import Choice, Int
from ..core.resources import check_memory
from ..core.validation import check_choice, check_int

TOY_TASKS: tuple[str, ...] = ("gaussians", "moons", "circles", "spiral", "checkerboard")
DIGIT_TASKS: tuple[str, ...] = tuple(f"digit{k}" for k in range(10))
TASKS: tuple[str, ...] = TOY_TASKS + DIGIT_TASKS
TASK_LABELS: dict[str, str] = {
    "gaussians": "8 Gaussians",
    "moons": "two moons",
    "circles": "circles",
    "spiral": "spiral",
    "checkerboard": "checkerboard",
    **{f"digit{k}": f"digit {k}" for k in range(10)},
}


def task_dim(name: str) -> int:
    """The data dimension of task ``name``: 2 for the toy tasks, 64 for a digit class."""
    check_choice("task", name, TASKS)
    return 2 if name in TOY_TASKS else 64


@checked()
def check_tasks(tasks: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """``tasks`` as a tuple of known, distinct task names of one dimension, or a ``ValueError``."""
    tasks = tuple(tasks)
    if not tasks:
        raise ValueError("tasks must hold at least one task, got an empty list")
    for t in tasks:
        check_choice("tasks", t, TASKS)
    if len(set(tasks)) != len(tasks):
        raise ValueError(f"tasks must be distinct, got {tasks!r}")
    if len({task_dim(t) for t in tasks}) != 1:
        raise ValueError(f"tasks must all be 2-D toy tasks or all digit classes, got {tasks!r}")
    return tasks


@lru_cache(maxsize=1)
def _digits() -> tuple[torch.Tensor, np.ndarray]:
    from sklearn.datasets import load_digits

    data = load_digits()
    images = torch.as_tensor(data.data, dtype=torch.float32) / 8.0 - 1.0  # pixels 0..16 -> [-1, 1]
    return images, data.target


@checked(name=Choice(TASKS), n=Int(1, 10**9))
def sample_task(name: str, n: int, generator: torch.Generator, device: torch.device | str = "cpu") -> torch.Tensor:
    """``n`` samples of task ``name``, shape ``(n, task_dim(name))``, drawn with ``generator`` (on the CPU)."""
    check_choice("task", name, TASKS)
    n = check_int("n", n, 1)
    if n * task_dim(name) > 2**24:  # a large request: is there room for it (not asked on every training batch)
        check_memory({f"the samples and their draws (n x {task_dim(name)} coordinates)": 16.0 * n * task_dim(name)})
    device = resolve_device(device)
    g = generator
    if name == "gaussians":  # 8 Gaussians on a circle of radius 2
        k = torch.randint(0, 8, (n,), generator=g)
        angle = k * (2 * math.pi / 8)
        centres = 2.0 * torch.stack([torch.cos(angle), torch.sin(angle)], -1)
        x = centres + 0.15 * torch.randn(n, 2, generator=g)
    elif name == "moons":
        upper = torch.rand(n, generator=g) < 0.5
        s = math.pi * torch.rand(n, generator=g)
        a = torch.stack([torch.cos(s), torch.sin(s)], -1)
        b = torch.stack([1 - torch.cos(s), 0.5 - torch.sin(s)], -1)
        x = torch.where(upper[:, None], a, b) + 0.08 * torch.randn(n, 2, generator=g)
        x = 1.3 * (x - torch.tensor([0.5, 0.25]))
    elif name == "circles":
        r = torch.where(torch.rand(n, generator=g) < 0.5, 1.0, 2.0)
        s = 2 * math.pi * torch.rand(n, generator=g)
        x = r[:, None] * torch.stack([torch.cos(s), torch.sin(s)], -1) + 0.08 * torch.randn(n, 2, generator=g)
    elif name == "spiral":
        s = torch.sqrt(torch.rand(n, generator=g)) * 3 * math.pi
        x = 0.2 * s[:, None] * torch.stack([torch.cos(s), torch.sin(s)], -1) + 0.08 * torch.randn(n, 2, generator=g)
    elif name == "checkerboard":
        x1 = 4 * torch.rand(n, generator=g) - 2
        x2 = 2 * torch.rand(n, generator=g) - 2 + (torch.floor(x1) % 2) * 2  # alternate columns up / down
        x = torch.stack([x1, x2], -1) * 1.0
    else:  # a digit class
        images, target = _digits()
        pool = np.flatnonzero(target == int(name[-1]))
        idx = torch.as_tensor(pool)[torch.randint(0, len(pool), (n,), generator=g)]
        x = images[idx] + torch.rand(n, 64, generator=g) / 8.0  # dequantise (one grey level is 1/8)
    return x.to(device=device, dtype=torch.float32)
