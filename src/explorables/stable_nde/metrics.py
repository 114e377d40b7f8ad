"""Long-rollout stability: blow-ups, energy drift, the invariant measure and the largest Lyapunov exponent."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
from scipy.stats import wasserstein_distance

from ..core.validation import check_int, check_positive


def blow_up_step(trajectories: torch.Tensor, radius: float) -> torch.Tensor:
    """First step at which a rollout leaves the ball of ``radius`` (or turns non-finite); ``T + 1`` if never.

    ``trajectories``: ``(T + 1, ...batch, d)``; returns ``(...batch)`` integers.
    """
    check_positive("radius", radius)
    norm = trajectories.norm(dim=-1)
    bad = ~torch.isfinite(norm) | (norm > radius)
    n = trajectories.shape[0]
    first = torch.where(bad.any(0), bad.int().argmax(0), torch.full_like(bad[0], n, dtype=torch.long))
    return first


def energy_drift(trajectories: torch.Tensor, energy: Callable[[torch.Tensor], torch.Tensor]) -> torch.Tensor:
    """``|H(x_T) - H(x_0)|`` per rollout (NaN where the rollout is not finite)."""
    h = energy(trajectories)
    drift = (h[-1] - h[0]).abs()
    return torch.where(torch.isfinite(drift), drift, torch.full_like(drift, float("nan")))


def histogram_distance(samples: np.ndarray, reference: np.ndarray) -> float:
    """1-Wasserstein distance between two 1-D empirical distributions (``scipy.stats.wasserstein_distance``).

    NaN when ``samples`` holds no finite value (every rollout blew up).
    """
    samples = np.asarray(samples, dtype=float).ravel()
    samples = samples[np.isfinite(samples)]
    if samples.size == 0:
        return float("nan")
    return float(wasserstein_distance(samples, np.asarray(reference, dtype=float).ravel()))


def lyapunov_exponent(
    one_step: Callable[[torch.Tensor], torch.Tensor],
    x0: torch.Tensor,
    n_steps: int,
    dt: float,
    *,
    n_transient: int = 0,
    d0: float = 1e-7,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Largest Lyapunov exponent by the two-trajectory (Benettin) method, per starting state.

    A companion starts ``d0`` away along a random direction; after each step the separation's
    log-growth is accumulated and the companion is pulled back to distance ``d0``.
    ``lambda = sum_t log(|d_t| / d0) / (n_steps dt)`` after ``n_transient`` steps. NaN where a
    trajectory is not finite. ``x0``: ``(S, B, d)`` for an ensemble step.
    """
    n_steps = check_int("n_steps", n_steps)
    n_transient = check_int("n_transient", n_transient, minimum=0)
    check_positive("dt", dt)
    direction = torch.randn(x0.shape, generator=generator, dtype=x0.dtype).to(x0.device)
    direction = direction / direction.norm(dim=-1, keepdim=True)
    x, y = x0, x0 + d0 * direction
    total = torch.zeros(x0.shape[:-1], dtype=x0.dtype, device=x0.device)
    with torch.no_grad():
        for t in range(n_transient + n_steps):
            x, y = one_step(x), one_step(y)
            sep = (y - x).norm(dim=-1, keepdim=True).clamp_min(1e-300)
            if t >= n_transient:
                total = total + torch.log(sep[..., 0] / d0)
            y = x + (y - x) * (d0 / sep)
    lam = total / (n_steps * dt)
    return torch.where(torch.isfinite(lam), lam, torch.full_like(lam, math.nan))
