"""Rollouts and long-rollout stability: blow-ups, energy drift, the invariant measure and the largest Lyapunov exponent.

A rollout (:func:`rollout`, :func:`lyapunov_exponent`) steps a hybrid model (:meth:`.HybridModel.step`), a system's
truth (:meth:`.System.true_step`) or a one-step map of the reader's. It is the boundary of "check once": it checks its
initial states, and its body calls the model's or system's checked step with the checks off (``skip_nested``), so a
state that blows up later is kept for the metrics to count, never refused, and no step pays for a check. A one-step
function the reader hands in is the reader's code and runs with checks on.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from scipy.stats import wasserstein_distance

from ..core.arguments import ArgumentError, Array, checked
from ..core.params import Int, Positive, Rule
from .models import HybridModel
from .solvers import _as_tensor, check_fits
from .systems import System

#: what a rollout steps: a hybrid model, a system (its truth) or a one-step map ``x -> Phi(x)`` of the reader's
Dynamics = HybridModel | System | Callable[[torch.Tensor], torch.Tensor]


class _DynamicsRule(Rule):
    """A model or system is handed in itself, not as its bound step method: a bound method is the reader's code and
    would run checked at every step, refusing the first state that blows up."""

    def check(self, name: str, value: Any) -> Any:
        owner = getattr(value, "__self__", None)
        if isinstance(owner, (HybridModel, System)):
            kind = "model" if isinstance(owner, HybridModel) else "system"
            raise ArgumentError(f"{name} must be the {kind} itself, not its method {getattr(value, '__name__', '')!r}: "
                                f"pass the {kind} (its steps then run unchecked, so a blow-up is kept and counted)")
        return value

    def describe(self) -> str:
        return "a HybridModel, a System (its truth) or a one-step function x -> Phi(x)"

    def bad_values(self) -> list[Any]:
        return [None, 3, "step"]


def _step_of(dynamics: Dynamics) -> Callable[[torch.Tensor], torch.Tensor]:
    """The one-step map a rollout's loop calls: the model's step, the system's true step or the reader's map."""
    if isinstance(dynamics, HybridModel):
        return dynamics.step
    if isinstance(dynamics, System):
        return dynamics.true_step
    return dynamics


def _check_states_fit(name: str, x: torch.Tensor, dynamics: Dynamics) -> None:
    """States ``x`` fit a model or system: the last axis is the system's ``dim`` (and, for an ensemble model, ``x``
    is ``(n_members, batch, dim)``). A reader's one-step map says nothing of its states: nothing is checked."""
    system = dynamics.system if isinstance(dynamics, HybridModel) else dynamics
    if isinstance(dynamics, HybridModel) and (x.ndim != 3 or x.shape[0] != dynamics.n_members):
        raise ValueError(f"{name} must have shape (n_members={dynamics.n_members}, batch, dim={system.dim}), "
                         f"got {tuple(x.shape)}")
    if isinstance(system, System) and x.shape[-1] != system.dim:
        raise ValueError(f"{name} must have shape (..., dim={system.dim}) for the system {system.name!r}, "
                         f"got {tuple(x.shape)}")


@checked(skip_nested=True, dynamics=_DynamicsRule(), x0=Array("... d"), n_steps=Int(0, 10**8))
def rollout(dynamics: Dynamics, x0: torch.Tensor | np.ndarray, n_steps: int) -> torch.Tensor:
    """``x0, Phi(x0), Phi^2(x0), ...``: shape ``(n_steps + 1, *x0.shape)`` (no gradient kept).

    ``dynamics`` is a :class:`.HybridModel` (``Phi`` its step), a :class:`.System` (its truth) or a one-step function.
    Non-finite states stay non-finite: a blow-up is something the stability metrics count, not an error
    (the initial states ``x0`` must be finite). A model's or system's step runs unchecked in the loop (this is a
    ``skip_nested`` boundary), so a state that blows up is kept, never refused; a function of the reader's runs
    as it would on its own, checks on.
    """
    x0 = _as_tensor(x0)
    _check_states_fit("x0", x0, dynamics)
    check_fits({"the rollout (n_steps + 1) x x0.numel()": (n_steps + 1) * x0.numel() * x0.element_size()})
    out = torch.empty((n_steps + 1, *x0.shape), dtype=x0.dtype, device=x0.device)
    out[0] = x0
    x, one_step = x0, _step_of(dynamics)
    with torch.no_grad():
        for t in range(n_steps):
            x = one_step(x)
            out[t + 1] = x
    return out


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


@checked(
    skip_nested=True,
    dynamics=_DynamicsRule(),
    x0=Array("... d"),
    n_steps=Int(1, 10**8),
    dt=Positive(),
    n_transient=Int(0, 10**8),
    d0=Positive(),
)
def lyapunov_exponent(
    dynamics: Dynamics,
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
    trajectory is not finite. ``x0``: ``(S, B, d)`` for an ensemble model. ``dynamics`` as in :func:`rollout`: a
    model's or system's step runs unchecked in the loop, so a trajectory that blows up gives NaN.
    """
    x0 = torch.as_tensor(x0)
    if not x0.is_floating_point():
        x0 = x0.to(torch.float64)
    _check_states_fit("x0", x0, dynamics)
    direction = torch.randn(x0.shape, generator=generator, dtype=x0.dtype).to(x0.device)
    direction = direction / direction.norm(dim=-1, keepdim=True)
    x, y = x0, x0 + d0 * direction
    one_step = _step_of(dynamics)
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
