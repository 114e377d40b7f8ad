"""Explicit one-step solvers in torch, and rollouts.

A *one-step map* ``Phi(x) = x + dt * increment(f, x)`` turns a vector field ``f`` into the discrete
dynamics the chapter trains and rolls out, eq. (nde-step). The solvers are the textbook explicit
Runge–Kutta schemes: forward Euler (order 1) and classical RK4 (order 4). They work on tensors of
any leading shape (``(..., d)``) and any device; the vector field decides the rest.

The integrating-factor RK4 step (:func:`integrating_factor_rk4_step`) is RK4 applied to
``v = exp(-L t) x`` for a stiff diagonal linear part ``L`` known in closed form (Kuramoto–
Sivashinsky in Fourier space, the full-scale system): the linear part is then exact and RK4 only
integrates the nonlinear (partly learned) term.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable

import numpy as np
import torch

from ..core.arguments import Array, checked
from ..core.params import Choice, Int, Positive
from ..core.resources import check_memory
from ..core.validation import check_choice, check_positive

VectorField = Callable[[torch.Tensor], torch.Tensor]

SOLVERS: tuple[str, ...] = ("euler", "rk4")
#: order of accuracy of each solver (global error ~ dt**order)
SOLVER_ORDER: dict[str, int] = {"euler": 1, "rk4": 4}


def _euler_step(f: VectorField, x: torch.Tensor | np.ndarray, dt: float) -> torch.Tensor:
    """Forward Euler, ``x + dt f(x)``: eq. (nde-step) with a first-order increment."""
    x = _as_tensor(x)
    return x + dt * f(x)


def _as_tensor(x: torch.Tensor | np.ndarray) -> torch.Tensor:
    """A floating-point tensor (a numpy array or a tensor of integers becomes a float64 tensor)."""
    t = torch.as_tensor(x)
    return t if t.is_floating_point() or t.is_complex() else t.to(torch.float64)


def _rk4_step(f: VectorField, x: torch.Tensor | np.ndarray, dt: float) -> torch.Tensor:
    """Classical RK4: ``x + dt/6 (k1 + 2 k2 + 2 k3 + k4)``, eq. (nde-step) with a fourth-order increment."""
    x = _as_tensor(x)
    k1 = f(x)
    k2 = f(x + 0.5 * dt * k1)
    k3 = f(x + 0.5 * dt * k2)
    k4 = f(x + dt * k3)
    return x + (dt / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def step(f: VectorField, x: torch.Tensor, dt: float, solver: str = "rk4") -> torch.Tensor:
    """One step of ``solver`` (``"euler"`` or ``"rk4"``) with step size ``dt > 0``."""
    check_positive("dt", dt)
    check_choice("solver", solver, SOLVERS)
    # the steps check nothing: a rollout's states may blow up (the stability metrics count that), and
    # checks would cost every step of every rollout
    return (_rk4_step if solver == "rk4" else _euler_step)(f, x, dt)


@checked(x0=Array("... d"), t_end=Positive(), n_steps=Int(1, 10**7), solver=Choice(SOLVERS))
def integrate(
    f: VectorField, x0: torch.Tensor | np.ndarray, t_end: float, n_steps: int, solver: str = "rk4"
) -> torch.Tensor:
    """The state at ``t_end`` after ``n_steps`` equal steps of ``solver`` from ``x0`` (used to measure the order).

    Raises ``ValueError`` when the steps ``t_end / n_steps`` are too large for the field: the state
    stops being finite (an explicit solver is only stable for small steps).
    """
    dt = t_end / n_steps
    x = _as_tensor(x0)
    for _ in range(n_steps):
        x = step(f, x, dt, solver)
    if not bool(torch.isfinite(x).all()):
        raise ValueError(
            f"the solution is not finite at t_end = {t_end:g} with n_steps = {n_steps} (step {dt:g}): "
            "make t_end smaller or n_steps larger"
        )
    return x


def integrating_factor_rk4_step(
    nonlinear: VectorField, x_hat: torch.Tensor, linear_symbol: torch.Tensor, dt: float
) -> torch.Tensor:
    """RK4 on ``v = exp(-L t) x`` for ``dx/dt = L x + N(x)``, ``L`` diagonal (here: Fourier multipliers).

    ``x_hat`` holds the Fourier coefficients, ``linear_symbol`` the diagonal of ``L`` and
    ``nonlinear(x_hat)`` returns ``N`` in Fourier space. With ``E = exp(L dt/2)``:
    ``k1 = N(x)``, ``k2 = N(E x + dt/2 E k1)``, ``k3 = N(E x + dt/2 k2)``, ``k4 = N(E^2 x + dt E k3)``,
    ``x' = E^2 x + dt/6 (E^2 k1 + 2 E (k2 + k3) + k4)``: the linear part is exact, RK4 handles ``N``.
    """
    check_positive("dt", dt)
    e_half = torch.exp(linear_symbol * (dt / 2))
    e_full = e_half * e_half
    k1 = nonlinear(x_hat)
    k2 = nonlinear(e_half * x_hat + (dt / 2) * e_half * k1)
    k3 = nonlinear(e_half * x_hat + (dt / 2) * k2)
    k4 = nonlinear(e_full * x_hat + dt * e_half * k3)
    return e_full * x_hat + (dt / 6) * (e_full * k1 + 2 * e_half * (k2 + k3) + k4)


#: estimates below this many bytes fit any machine the book runs on: not worth reading the memory limit
SMALL_BYTES = 2**28


def check_fits(estimate: dict[str, float]) -> None:
    """:func:`~explorables.core.resources.check_memory`, skipped for an estimate under :data:`SMALL_BYTES`."""
    if sum(estimate.values()) > SMALL_BYTES:
        check_memory(estimate)


def check_states_fit(name: str, x: torch.Tensor, one_step: Callable) -> None:
    """States ``x`` fit a one-step map that is a system's or a hybrid model's method: the last axis is the
    system's ``dim`` (and, for an ensemble model, ``x`` is ``(n_members, batch, dim)``)."""
    owner = getattr(one_step, "__self__", None)
    system = getattr(owner, "system", owner)
    dim = getattr(system, "dim", None)
    members = getattr(owner, "n_members", None)
    if isinstance(members, int) and isinstance(dim, int) and (x.ndim != 3 or x.shape[0] != members):
        raise ValueError(f"{name} must have shape (n_members={members}, batch, dim={dim}), got {tuple(x.shape)}")
    if isinstance(dim, int) and x.shape[-1] != dim:
        label = getattr(system, "name", type(system).__name__)
        raise ValueError(f"{name} must have shape (..., dim={dim}) for the system {label!r}, got {tuple(x.shape)}")


def loop_map(one_step: Callable[[torch.Tensor], torch.Tensor]) -> Callable[[torch.Tensor], torch.Tensor]:
    """The map a rollout's loop calls: ``one_step`` itself, or, when it is one of the package's checked one-step
    methods (:meth:`.HybridModel.step`, :meth:`.System.true_step`), that method without its checks. They refuse
    a non-finite state at the boundary; inside a rollout the first states were checked once, and a state that
    blows up later is what the stability metrics count, not an error (and no step pays for a check)."""
    fn = getattr(one_step, "__func__", None)
    owner = getattr(one_step, "__self__", None)
    if owner is None or not hasattr(fn, "__explorables_rules__"):
        return one_step
    # every checked layer off (a recording wrapper of the test suite may sit on top of the checked one)
    return types.MethodType(inspect.unwrap(fn, stop=lambda f: not hasattr(f, "__explorables_rules__")), owner)


@checked(x0=Array("... d"), n_steps=Int(0, 10**8))
def rollout(
    one_step: Callable[[torch.Tensor], torch.Tensor], x0: torch.Tensor | np.ndarray, n_steps: int
) -> torch.Tensor:
    """``x0, Phi(x0), Phi^2(x0), ...``: shape ``(n_steps + 1, *x0.shape)`` (no gradient kept).

    Non-finite states stay non-finite: a blow-up is something the stability metrics count, not an error
    (the initial states ``x0`` must be finite). A checked one-step method runs unchecked in the loop
    (:func:`loop_map`), so a state that blows up is kept, never refused.
    """
    x0 = _as_tensor(x0)
    check_states_fit("x0", x0, one_step)
    check_fits({"the rollout (n_steps + 1) x x0.numel()": (n_steps + 1) * x0.numel() * x0.element_size()})
    out = torch.empty((n_steps + 1, *x0.shape), dtype=x0.dtype, device=x0.device)
    out[0] = x0
    x, one_step = x0, loop_map(one_step)
    with torch.no_grad():
        for t in range(n_steps):
            x = one_step(x)
            out[t + 1] = x
    return out
