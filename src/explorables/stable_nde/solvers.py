"""Explicit one-step solvers in torch (rollouts of a model or system: :mod:`.metrics`).

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
