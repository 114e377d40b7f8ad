"""The 2-D toy: a mixture of Gaussians whose two attributes, the signs of x1 and x2, are dependent.

Attributes ``a = [x1 > 0]`` and ``b = [x2 > 0]`` define four cells ``s = 2a + b``. Each quadrant
holds two Gaussian modes of unequal weight (2:1), so every conditional ``p(x | s)`` has structure a
guidance method can preserve or distort. The quadrant weights make the attributes strongly
dependent (``P(a = b) = 0.9`` by default); the fairness target is ``q(a, b) = p(a) p(b)``.

Exact samples of the Jeffrey-updated distribution ``p'(x) = p(x) q(s(x)) / p(s(x))`` come from
:func:`sample_jeffrey_target`: draw from ``p`` and keep, in each cell, as many points as ``q`` asks
for (rejection sampling of ``p(x | s)``, exact).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import torch

from ..core.validation import check_int, check_positive
from .rule import check_distribution_table, check_target

#: default quadrant masses for cells s = 2a + b: (a,b) = (0,0), (0,1), (1,0), (1,1)
TOY_JOINT: tuple[float, ...] = (0.45, 0.05, 0.05, 0.45)
#: the two modes of each quadrant: angles (fractions of the quadrant) and relative weights
MODE_ANGLES: tuple[float, float] = (0.25, 0.75)
MODE_WEIGHTS: tuple[float, float] = (2 / 3, 1 / 3)
RADIUS, MODE_STD = 2.0, 0.35
N_CELLS = 4


def toy_cells(x: torch.Tensor) -> torch.Tensor:
    """The statistic ``s(x) = 2 [x1 > 0] + [x2 > 0]`` (cells 0..3), as int64."""
    return 2 * (x[:, 0] > 0).long() + (x[:, 1] > 0).long()


def _components(quadrant_joint: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Means (8, 2) and weights (8,) of the mixture."""
    # quadrant of cell s = 2a + b: angle range starts at these angles
    starts = {0: math.pi, 1: math.pi / 2, 2: 3 * math.pi / 2, 3: 0.0}
    means, weights = [], []
    for s in range(N_CELLS):
        for frac, w in zip(MODE_ANGLES, MODE_WEIGHTS, strict=True):
            angle = starts[s] + frac * math.pi / 2
            means.append((RADIUS * math.cos(angle), RADIUS * math.sin(angle)))
            weights.append(quadrant_joint[s] * w)
    return np.array(means), np.array(weights)


def sample_toy(n: int, generator: torch.Generator, joint: tuple[float, ...] = TOY_JOINT) -> torch.Tensor:
    """``n`` points of the toy mixture (float32, CPU)."""
    n = check_int("n", n, minimum=1)
    q = check_distribution_table("joint", joint)
    if q.shape != (N_CELLS,):
        raise ValueError(f"joint must have {N_CELLS} entries (cells s = 2a + b), got shape {q.shape}")
    means, weights = _components(q)
    comp = torch.multinomial(torch.as_tensor(weights), n, replacement=True, generator=generator)
    noise = torch.randn((n, 2), generator=generator, dtype=torch.float64)
    return (torch.as_tensor(means)[comp] + MODE_STD * noise).float()


def sample_jeffrey_target(
    n: int, target: object, generator: torch.Generator, joint: tuple[float, ...] = TOY_JOINT
) -> torch.Tensor:
    """``n`` exact samples of ``p'(x) = p(x | s) q(s)``, eq. (jeffrey-rule), for the toy ``p``.

    The cell counts are drawn from ``q``; within a cell, points are draws of ``p`` that landed in
    that cell (rejection sampling of ``p(x | s)``). ``q`` must be 0 on cells ``p`` cannot reach.
    """
    n = check_int("n", n, minimum=1)
    q = check_target(target, cell_marginal(joint))
    counts = np.bincount(
        torch.multinomial(torch.as_tensor(q), n, replacement=True, generator=generator).numpy(), minlength=N_CELLS
    )
    kept: list[list[torch.Tensor]] = [[] for _ in range(N_CELLS)]
    have = np.zeros(N_CELLS, dtype=int)
    while np.any(have < counts):
        x = sample_toy(max(4 * n, 4096), generator, joint)
        cells = toy_cells(x)
        for s in range(N_CELLS):
            need = counts[s] - have[s]
            if need > 0:
                got = x[cells == s][:need]
                kept[s].append(got)
                have[s] += len(got)
    out = torch.cat([torch.cat(k) for k in kept if k])
    return out[torch.randperm(len(out), generator=generator)]


def cell_marginal(joint: tuple[float, ...] = TOY_JOINT, n: int = 400_000, seed: int = 12345) -> np.ndarray:
    """The cell marginal ``p(s)`` of the toy, by Monte Carlo (the Gaussian tails cross the axes a little).

    Cached per ``(joint, n, seed)``: the same numbers every call, drawn once (the lab calls it on every rerun).
    """
    return _cell_marginal(tuple(float(v) for v in joint), n, seed).copy()


@functools.lru_cache(maxsize=8)
def _cell_marginal(joint: tuple[float, ...], n: int, seed: int) -> np.ndarray:
    x = sample_toy(n, torch.Generator().manual_seed(seed), joint)
    return np.bincount(toy_cells(x).numpy(), minlength=N_CELLS) / n


def joint_target(p_a: float, p_b: float, coupling: float = 0.0) -> np.ndarray:
    """A target over the four cells with ``P(a=1) = p_a``, ``P(b=1) = p_b`` and a coupling in [-1, 1].

    ``coupling = 0`` is independence; ``1`` (``-1``) is the largest positive (negative) dependence
    these marginals allow. Cells are ordered ``s = 2a + b``.
    """
    p_a = check_positive("p_a", p_a)
    p_b = check_positive("p_b", p_b)
    if not (p_a < 1 and p_b < 1):
        raise ValueError(f"p_a and p_b must lie in (0, 1), got {p_a}, {p_b}")
    if not -1 <= coupling <= 1:
        raise ValueError(f"coupling must lie in [-1, 1], got {coupling}")
    ind = np.array([(1 - p_a) * (1 - p_b), (1 - p_a) * p_b, p_a * (1 - p_b), p_a * p_b])
    if coupling >= 0:
        room = min(p_a, p_b) - p_a * p_b  # P(a=1,b=1) can grow up to min(p_a, p_b)
    else:
        room = p_a * p_b - max(0.0, p_a + p_b - 1)
    c = coupling * room
    q = ind + c * np.array([1, -1, -1, 1])
    q = np.clip(q, 0, None)
    return q / q.sum()
