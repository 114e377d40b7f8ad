"""Long-rollout stability: blow-ups, energy drift, the invariant measure and the largest Lyapunov exponent."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
from scipy.stats import wasserstein_distance

from ..core.arguments import Array, checked
from ..core.params import Int, Positive
from .solvers import check_states_fit, loop_map


def _trajectories(trajectories: torch.Tensor | np.ndarray) -> torch.Tensor:
    """Rollouts ``(T + 1, ...batch, d)`` as a tensor; later states may be non-finite, the initial ones may not."""
    t = torch.as_tensor(trajectories)
    if t.ndim < 2:
        raise ValueError(f"trajectories must have shape (T + 1, ..., d), got {tuple(t.shape)}")
    if t.is_floating_point() and not bool(torch.isfinite(t[0]).all()):
        raise ValueError("trajectories must start from finite states: trajectories[0] holds NaN or inf")
    return t


@checked(trajectories=Array(finite=False, allow_nan=True), radius=Positive())
def blow_up_step(trajectories: torch.Tensor | np.ndarray, radius: float) -> torch.Tensor:
    """First step at which a rollout leaves the ball of ``radius`` (or turns non-finite); ``T + 1`` if never.

    ``trajectories``: ``(T + 1, ...batch, d)``, finite at step 0 (later steps may blow up); returns
    ``(...batch)`` integers.
    """
    trajectories = _trajectories(trajectories)
    norm = trajectories.norm(dim=-1)
    bad = ~torch.isfinite(norm) | (norm > radius)
    n = trajectories.shape[0]
    first = torch.where(bad.any(0), bad.int().argmax(0), torch.full_like(bad[0], n, dtype=torch.long))
    return first


@checked(trajectories=Array(finite=False, allow_nan=True), window=Int(1))
def energy_drift(
    trajectories: torch.Tensor | np.ndarray,
    energy: Callable[[torch.Tensor], torch.Tensor],
    window: int | None = None,
) -> torch.Tensor:
    """Per rollout: ``|H(x_T) - H(x_0)|``, or with ``window`` the mean of ``|H(x_t) - H(x_0)|`` over
    ``t = 1 .. window`` (NaN where the rollout is not finite in what is measured).

    ``trajectories``: ``(T + 1, ...batch, d)``, finite at step 0; ``energy`` maps it to ``(T + 1, ...batch)``;
    ``window`` at most ``T``. The windowed drift is a rate: it stays informative when every model has lost its
    energy by step ``T``, where the end-point drift of each saturates at the energy it started with.
    """
    trajectories = _trajectories(trajectories)
    if window is not None and window > trajectories.shape[0] - 1:
        raise ValueError(
            f"window must be <= the steps of trajectories (axis 0 minus one: {trajectories.shape[0] - 1}), got {window}"
        )
    h = energy(trajectories)
    if not isinstance(h, torch.Tensor) or tuple(h.shape) != tuple(trajectories.shape[:-1]):
        raise ValueError(
            f"energy must map trajectories {tuple(trajectories.shape)} to a tensor of shape "
            f"{tuple(trajectories.shape[:-1])}, got {getattr(h, 'shape', type(h).__name__)}"
        )
    drift = (h[-1] - h[0]).abs() if window is None else (h[1 : window + 1] - h[:1]).abs().mean(0)
    return torch.where(torch.isfinite(drift), drift, torch.full_like(drift, float("nan")))


@checked(trajectories=Array(finite=False, allow_nan=True), rest=Array(), dt=Positive())
def energy_half_life(
    trajectories: torch.Tensor | np.ndarray,
    energy: Callable[[torch.Tensor], torch.Tensor],
    rest: float,
    dt: float,
) -> torch.Tensor:
    """Per rollout: the first time ``t * dt`` at which the energy above the resting level has halved,
    ``H(x_t) - rest <= (H(x_0) - rest) / 2``; ``inf`` when it never does within the rollout (a conserving or
    energy-gaining model), NaN when the rollout turns non-finite first.

    A long-horizon number that does not saturate like the end-point drift: a model that dissipates fast halves
    its energy early, a slow one late, the truth never. ``rest``: the energy of the state at rest (the pendulum's
    minimum, -1); ``trajectories`` ``(T + 1, ...batch, d)``, finite at step 0.
    """
    trajectories = _trajectories(trajectories)
    h = energy(trajectories)
    rest = float(rest)
    above = h - rest
    halved = above <= 0.5 * above[:1]
    bad = ~torch.isfinite(h)
    n = trajectories.shape[0]
    first_half = torch.where(halved.any(0), halved.int().argmax(0), torch.full_like(h[0], n, dtype=torch.long))
    first_bad = torch.where(bad.any(0), bad.int().argmax(0), torch.full_like(h[0], n, dtype=torch.long))
    out = first_half.to(trajectories.dtype) * dt
    out = torch.where(first_half >= n, torch.full_like(out, math.inf), out)
    return torch.where(first_bad < first_half, torch.full_like(out, math.nan), out)


@checked(samples=Array(finite=False, allow_nan=True), reference=Array())
def histogram_distance(samples: np.ndarray | torch.Tensor, reference: np.ndarray | torch.Tensor) -> float:
    """1-Wasserstein distance between two 1-D empirical distributions (``scipy.stats.wasserstein_distance``).

    NaN when ``samples`` holds no finite value (every rollout blew up).
    """
    samples = _numpy(samples).ravel()
    samples = samples[np.isfinite(samples)]
    if samples.size == 0:
        return float("nan")
    return float(wasserstein_distance(samples, _numpy(reference).ravel()))


def _numpy(values: np.ndarray | torch.Tensor) -> np.ndarray:
    if isinstance(values, torch.Tensor):
        values = values.detach().cpu().numpy()
    return np.asarray(values, dtype=float)


@checked(x0=Array("... d"), n_steps=Int(1, 10**8), dt=Positive(), n_transient=Int(0, 10**8), d0=Positive())
def lyapunov_exponent(
    one_step: Callable[[torch.Tensor], torch.Tensor],
    x0: torch.Tensor | np.ndarray,
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
    x0 = torch.as_tensor(x0)
    if not x0.is_floating_point():
        x0 = x0.to(torch.float64)
    check_states_fit("x0", x0, one_step)
    direction = torch.randn(x0.shape, generator=generator, dtype=x0.dtype).to(x0.device)
    direction = direction / direction.norm(dim=-1, keepdim=True)
    x, y = x0, x0 + d0 * direction
    one_step = loop_map(one_step)  # a checked one-step method runs unchecked: a trajectory that blows up gives NaN
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
