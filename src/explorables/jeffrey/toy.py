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


# --- the toy's exact networks: its noised score and the Bayes classifier of its cells, in closed form ---------
def _posterior(x: torch.Tensor, t: int, alpha_bars: torch.Tensor, joint: tuple[float, ...]) -> tuple:
    """Per component ``k`` of the mixture noised to step ``t`` (``x_t = sqrt(abar) x_0 + sqrt(1 - abar) eps``):
    the log of its responsibility for ``x`` (n, 8), ``x - sqrt(abar) mu_k`` (n, 8, 2), the noised variance,
    ``sqrt(abar)`` and ``1 - abar`` (float64)."""
    means, weights = _components(np.asarray(joint, dtype=float))
    mu = torch.as_tensor(means, dtype=torch.float64, device=x.device)
    log_pi = torch.log(torch.as_tensor(weights / weights.sum(), dtype=torch.float64, device=x.device))
    ab = alpha_bars[t].double()
    a, b2 = ab.sqrt(), 1 - ab
    var = ab * MODE_STD**2 + b2
    d = x.double()[:, None, :] - a * mu[None]
    log_r = torch.log_softmax(log_pi[None] - (d**2).sum(-1) / (2 * var), dim=-1)
    return log_r, d, var, a, b2


class ExactNoisePredictor(torch.nn.Module):
    """The toy's exact noise prediction ``-sqrt(1 - abar_t) grad log p_t(x_t)`` (the mixture noised to step ``t``):
    what a perfectly trained denoiser outputs. Call it as a denoiser: ``(x_t, t)`` with one step for the batch."""

    def __init__(self, alpha_bars: torch.Tensor, joint: tuple[float, ...] = TOY_JOINT):
        super().__init__()
        self.alpha_bars, self.joint = alpha_bars, tuple(float(v) for v in joint)

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        log_r, d, var, _, b2 = _posterior(x, int(t[0]), self.alpha_bars, self.joint)
        score = -(log_r.exp()[..., None] * d).sum(1) / var
        return (-b2.sqrt() * score).to(x.dtype)


class ExactCellClassifier(torch.nn.Module):
    """Logits of the toy's Bayes classifier ``c_t(s | x_t)`` of the cells ``s = 2a + b`` at step ``t``; with a
    ``confusion`` ``F[s, s']`` it is the Bayes classifier of labels drawn from ``F[s, .]`` (flipped labels):
    ``c_t(s' | x_t) = sum_s p_t(s | x_t) F[s, s']``.

    Given ``x_t`` and a component, ``x_0`` is Gaussian (isotropic), so the chance of each quadrant is a product of
    two normal tail probabilities, computed as log-probabilities (``log_ndtr``) so that far tails do not underflow."""

    def __init__(
        self, alpha_bars: torch.Tensor, joint: tuple[float, ...] = TOY_JOINT, confusion: np.ndarray | None = None
    ):
        super().__init__()
        self.alpha_bars, self.joint = alpha_bars, tuple(float(v) for v in joint)
        self.confusion = None if confusion is None else torch.as_tensor(np.asarray(confusion), dtype=torch.float64)

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        log_r, d, var, a, b2 = _posterior(x, int(t[0]), self.alpha_bars, self.joint)
        mean = torch.as_tensor(_components(np.asarray(self.joint))[0], dtype=torch.float64, device=x.device)[None]
        mean = mean + (a * MODE_STD**2 / var) * d  # E[x_0 | x_t, k]
        sd = torch.sqrt(MODE_STD**2 * b2 / var).clamp_min(1e-6)
        z = mean / sd
        # log P(x_i > 0) = log Phi(z_i) and log P(x_i < 0) = log Phi(-z_i) per component, in log space (log_ndtr,
        # scipy.special.log_ndtr's torch twin, differentiable): far tails keep their value and their gradient
        up, down = torch.special.log_ndtr(z), torch.special.log_ndtr(-z)
        log_cells = torch.stack(
            [
                down[..., 0] + down[..., 1],
                down[..., 0] + up[..., 1],
                up[..., 0] + down[..., 1],
                up[..., 0] + up[..., 1],
            ],
            dim=-1,
        )
        log_c = torch.logsumexp(log_r[..., None] + log_cells, dim=1)  # log sum_k r_k P(s | x_t, k)
        if self.confusion is not None:  # log sum_s c_t(s | x_t) F[s, s']
            log_f = torch.log(self.confusion.to(x.device))
            log_c = torch.logsumexp(log_c[..., :, None] + log_f[None], dim=1)
        return log_c.to(x.dtype)
