"""The dynamical systems: known physics, the part a network must learn, and the truth.

Each :class:`System` splits its vector field as ``f = f_known + f_residual`` (eq. (nde-hybrid)):
the hybrid model keeps ``f_known`` and replaces ``f_residual`` by a network. The true residual is
used only to *generate data* (and, for the two methods that say so, the true system's
directional derivatives); the model's step never calls it.

* :func:`pendulum`: ``q' = p``, ``p' = -sin q``; known part the linearised pendulum ``p' = -q``,
  residual ``q - sin q``; energy ``H = p^2/2 - cos q`` is conserved by the truth.
* :func:`lorenz63`: Lorenz's 1963 system with sigma = 10, rho = 28, beta = 8/3; known part the
  linear terms, residual the two quadratic ones ``(0, -x z, x y)``.
* :func:`kuramoto_sivashinsky`: ``u_t = -u_xx - u_xxxx - u u_x`` on a periodic domain (the full-scale
  system); known part the linear operator (exact in Fourier space), residual the nonlinear term,
  learned by a 1-D CNN.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from ..core.arguments import ArgumentError, Array, OfInstance, checked
from ..core.device import resolve_device
from ..core.params import Choice, Device, Float, Int, Positive, Rule, Text
from .solvers import SOLVERS, check_fits, integrating_factor_rk4_step, step

Field = Callable[[torch.Tensor], torch.Tensor]
SYSTEMS: tuple[str, ...] = ("pendulum", "lorenz", "ks")

#: a one-step method's states: a finite tensor ``(..., dim)`` (the method checks ``dim`` against its system)
_STATES = Array("... d", tensor=True)
_N_TRAJECTORIES = Int(1, 10**7)
_N_STEPS = Int(0, 10**8)


@dataclass(frozen=True, repr=False)
class _FloatDtype(Rule):
    """A torch floating-point dtype (the states' precision)."""

    def check(self, name: str, value: Any) -> torch.dtype:
        if not isinstance(value, torch.dtype) or not value.is_floating_point:
            raise ArgumentError(f"{name} must be {self.describe()}, got {value!r}")
        return value

    def describe(self) -> str:
        return "a torch floating-point dtype (torch.float32, torch.float64)"

    def bad_values(self) -> list[Any]:
        return [None, torch.int64, "float64"]


@dataclass(frozen=True, repr=False)
class _TorchDevice(Rule):
    """A ``torch.device``, or a device name that this machine has (``auto``, ``cpu``, ``cuda``, ...)."""

    def check(self, name: str, value: Any) -> torch.device:
        if isinstance(value, torch.device):
            return value
        return resolve_device(Device().check(name, value))

    def describe(self) -> str:
        return "a torch.device or one of 'auto', 'cpu', 'cuda', 'cuda:N', 'mps'"

    def bad_values(self) -> list[Any]:
        return [None, 0, "tpu"]


_FLOAT_DTYPE = _FloatDtype()
_DEVICE = _TorchDevice()


@checked(
    name=Text(nonempty=True),
    dim=Int(1, 2**20),
    dt=Positive(),
    center=Array("d"),
    scale=Array("d"),
    out_scale=Positive(),
    blow_up_radius=Positive(),
    substeps=Int(1, 10**4),
    spin_up_steps=Int(0, 10**7),
    linear_symbol=Array("k"),
)
@dataclass
class System:
    """A system ``dx/dt = f_known(x) + f_residual(x)`` sampled every ``dt``.

    ``center``/``scale`` normalise the network's input and ``out_scale`` its output (fixed, from
    the system's known ranges, not from data); ``blow_up_radius`` is the norm beyond which a
    rollout counts as blown up; ``substeps`` is how many solver steps the *truth* takes per ``dt``.
    """

    name: str
    dim: int
    dt: float
    known: Field
    true_residual: Field
    sample_initial: Callable[[int, torch.Generator], torch.Tensor]
    center: torch.Tensor
    scale: torch.Tensor
    out_scale: float
    blow_up_radius: float
    substeps: int = 4
    spin_up_steps: int = 0
    energy: Field | None = None
    linear_symbol: torch.Tensor | None = field(default=None, repr=False)  # KS only: Fourier multipliers

    def __post_init__(self) -> None:
        self.center = torch.as_tensor(self.center)
        self.scale = torch.as_tensor(self.scale)
        for name in ("center", "scale"):
            shape = tuple(getattr(self, name).shape)
            if shape != (self.dim,):
                raise ValueError(f"{name} must have shape (dim,) = ({self.dim},), got {shape}")
        if not bool((self.scale > 0).all()):
            raise ValueError("scale must hold positive numbers (it divides the network's input)")
        if self.linear_symbol is not None:
            self.linear_symbol = torch.as_tensor(self.linear_symbol)
            if tuple(self.linear_symbol.shape) != (self.dim // 2 + 1,):
                raise ValueError(
                    f"linear_symbol must have shape (dim // 2 + 1,) = ({self.dim // 2 + 1},) (real FFT of the grid), "
                    f"got {tuple(self.linear_symbol.shape)}"
                )

    def _check_state(self, name: str, x: torch.Tensor) -> torch.Tensor:
        """States ``x`` (already checked finite, ``(..., d)``) are float states of this system: ``d = dim``."""
        if not x.is_floating_point():
            raise ArgumentError(f"{name} must be a float tensor of states, got dtype {x.dtype}")
        if x.shape[-1] != self.dim:
            raise ArgumentError(f"{name} must have shape (..., dim={self.dim}) for the system {self.name!r}, "
                                f"got {tuple(x.shape)}")
        return x

    def _check_dt(self, name: str, dt: float) -> float:
        if not 0 < dt <= self.dt:
            raise ArgumentError(f"{name} must be a step size in (0, {self.dt:g}] (at most the system's dt), got {dt!r}")
        return dt

    @checked(x=_STATES, dt=OfInstance("_check_dt", "a step size in (0, dt]"),
             solver=Choice(SOLVERS))
    def step_with(self, residual: Field, x: torch.Tensor, dt: float | None = None, solver: str = "rk4") -> torch.Tensor:
        """One hybrid step of size ``dt`` (default ``self.dt``) with ``residual`` as the unknown part, eq. (nde-step).

        ODE systems: ``solver`` (RK4 or Euler) on ``f_known + residual``. KS: integrating-factor
        RK4 with the exact linear part and ``residual`` (in physical space) as the nonlinear term. ``x``
        ``(..., dim)`` holds finite states (a rollout's later states may blow up: :func:`.metrics.rollout` runs the
        steps unchecked); ``dt`` in ``(0, self.dt]``. The package's loops call :meth:`_step_with` (no checks).
        """
        self._check_state("x", x)
        return self._step_with(residual, x, dt, solver)

    def _step_with(
        self, residual: Field, x: torch.Tensor, dt: float | None = None, solver: str = "rk4"
    ) -> torch.Tensor:
        dt = self.dt if dt is None else dt
        if self.linear_symbol is None:
            return step(lambda z: self.known(z) + residual(z), x, dt, solver)
        symbol = self.linear_symbol.to(x.device)

        def nonlinear(u_hat: torch.Tensor) -> torch.Tensor:
            return torch.fft.rfft(residual(torch.fft.irfft(u_hat, n=self.dim)))

        return torch.fft.irfft(integrating_factor_rk4_step(nonlinear, torch.fft.rfft(x), symbol, dt), n=self.dim)

    @checked(x=_STATES)
    def true_step(self, x: torch.Tensor) -> torch.Tensor:
        """The truth's one-step map ``Phi`` (``substeps`` solver steps of the true field per ``dt``) of finite states
        ``x`` ``(..., dim)``; the package's loops call :meth:`_true_step` (no checks)."""
        return self._true_step(self._check_state("x", x))

    def _true_step(self, x: torch.Tensor) -> torch.Tensor:
        h = self.dt / self.substeps
        for _ in range(self.substeps):
            x = self._step_with(self.true_residual, x, h)
        return x

    @checked(n_trajectories=_N_TRAJECTORIES, n_steps=_N_STEPS, dtype=_FLOAT_DTYPE, device=_DEVICE)
    def trajectories(
        self,
        n_trajectories: int,
        n_steps: int,
        generator: torch.Generator,
        dtype: torch.dtype = torch.float64,
        device: str | torch.device = "cpu",
    ) -> torch.Tensor:
        """``n_trajectories`` true trajectories of ``n_steps`` steps: shape ``(n_trajectories, n_steps + 1, dim)``.

        Initial states come from :attr:`sample_initial`, then ``spin_up_steps`` discarded steps
        (Lorenz: onto the attractor).
        """
        return self.trajectories_per_seed(n_trajectories, n_steps, [generator], dtype, device)[0]

    @checked(n_trajectories=_N_TRAJECTORIES, n_steps=_N_STEPS, dtype=_FLOAT_DTYPE, device=_DEVICE)
    def trajectories_per_seed(
        self,
        n_trajectories: int,
        n_steps: int,
        generators: Sequence[torch.Generator],
        dtype: torch.dtype = torch.float64,
        device: str | torch.device = "cpu",
    ) -> torch.Tensor:
        """:meth:`trajectories` for each generator, integrated together in one batch (the same initial states as
        one call per generator; one integration instead of one per seed): ``(len(generators), n_trajectories,
        n_steps + 1, dim)``."""
        if not generators:
            raise ValueError("generators must hold at least one torch.Generator, got none")
        if not all(isinstance(g, torch.Generator) for g in generators):
            kinds = sorted({type(g).__name__ for g in generators})
            raise ArgumentError(f"generators must hold torch.Generator objects, got {kinds}")
        states = len(generators) * n_trajectories * (n_steps + 1) * self.dim
        check_fits({"the trajectories (generators x n_trajectories x (n_steps + 1) x dim)":
                    states * torch.empty((), dtype=dtype).element_size()})
        x = torch.cat([self.sample_initial(n_trajectories, g) for g in generators]).to(dtype=dtype, device=device)
        out = torch.empty((n_steps + 1, *x.shape), dtype=dtype, device=device)
        with torch.no_grad():
            for _ in range(self.spin_up_steps):
                x = self._true_step(x)
            out[0] = x
            for t in range(n_steps):
                x = self._true_step(x)
                out[t + 1] = x
        return out.transpose(0, 1).reshape(len(generators), n_trajectories, n_steps + 1, -1).contiguous()


def _uniform(n: int, low: float, high: float, generator: torch.Generator) -> torch.Tensor:
    return low + (high - low) * torch.rand(n, generator=generator, dtype=torch.float64)


@checked(dt=Positive(), max_energy=Float(-1.0, 1.0, low_inclusive=False, high_inclusive=False))
def pendulum(dt: float = 0.1, max_energy: float = 0.7) -> System:
    """The frictionless pendulum; initial states with energy ``H < max_energy`` (below the separatrix at 1,
    so ``max_energy`` lies in (-1, 1): oscillations only)."""

    def known(x: torch.Tensor) -> torch.Tensor:
        return torch.stack((x[..., 1], -x[..., 0]), dim=-1)

    def true_residual(x: torch.Tensor) -> torch.Tensor:
        q = x[..., 0]
        return torch.stack((torch.zeros_like(q), q - torch.sin(q)), dim=-1)

    def energy(x: torch.Tensor) -> torch.Tensor:
        return 0.5 * x[..., 1] ** 2 - torch.cos(x[..., 0])

    q_max = math.acos(-max_energy)

    def sample_initial(n: int, generator: torch.Generator) -> torch.Tensor:
        # a point of each orbit: q0 in [0.3, q_max) at rest, then a random phase along the orbit
        # (sign flips of q and p keep H)
        q0 = _uniform(n, 0.3, q_max, generator)
        h = -torch.cos(q0)
        q = q0 * _uniform(n, -1.0, 1.0, generator)
        p2 = torch.clamp(2 * (h + torch.cos(q)), min=0.0)
        sign = torch.where(torch.rand(n, generator=generator, dtype=torch.float64) < 0.5, -1.0, 1.0)
        return torch.stack((q, sign * p2.sqrt()), dim=-1)

    return System(
        name="pendulum",
        dim=2,
        dt=dt,
        known=known,
        true_residual=true_residual,
        sample_initial=sample_initial,
        center=torch.zeros(2, dtype=torch.float64),
        scale=torch.tensor([1.5, 1.5], dtype=torch.float64),
        out_scale=1.0,
        blow_up_radius=10.0,
        energy=energy,
    )


@checked(dt=Float(1e-6, math.inf))
def lorenz63(dt: float = 0.01, sigma: float = 10.0, rho: float = 28.0, beta: float = 8.0 / 3.0) -> System:
    """Lorenz-63; initial states spun up onto the attractor (``10 / dt`` steps, so ``dt >= 1e-6``)."""

    def known(x: torch.Tensor) -> torch.Tensor:
        a, b, c = x[..., 0], x[..., 1], x[..., 2]
        return torch.stack((sigma * (b - a), rho * a - b, -beta * c), dim=-1)

    def true_residual(x: torch.Tensor) -> torch.Tensor:
        a, b, c = x[..., 0], x[..., 1], x[..., 2]
        return torch.stack((torch.zeros_like(a), -a * c, a * b), dim=-1)

    def sample_initial(n: int, generator: torch.Generator) -> torch.Tensor:
        x = torch.randn(n, 3, generator=generator, dtype=torch.float64) * torch.tensor([8.0, 8.0, 8.0])
        return x + torch.tensor([0.0, 0.0, 25.0])

    return System(
        name="lorenz",
        dim=3,
        dt=dt,
        known=known,
        true_residual=true_residual,
        sample_initial=sample_initial,
        center=torch.tensor([0.0, 0.0, 25.0], dtype=torch.float64),
        scale=torch.tensor([8.0, 9.0, 8.5], dtype=torch.float64),
        out_scale=150.0,
        blow_up_radius=200.0,
        substeps=2,
        spin_up_steps=round(10.0 / dt),
    )


@checked(n_grid=Int(8, 2**16), length=Positive(), dt=Float(1e-5, math.inf))
def kuramoto_sivashinsky(n_grid: int = 64, length: float = 22.0, dt: float = 0.25) -> System:
    """Kuramoto–Sivashinsky ``u_t = -u_xx - u_xxxx - (u^2/2)_x`` on ``[0, length)``, ``n_grid`` points (even).

    Initial states are spun up for ``100 / dt`` steps, so ``dt >= 1e-5``.
    """
    if n_grid % 2:
        raise ValueError(f"n_grid must be even (real FFT), got {n_grid}")
    k = 2 * math.pi / length * torch.arange(n_grid // 2 + 1, dtype=torch.float64)
    symbol = (k**2 - k**4).to(torch.complex128)
    dealias = (torch.arange(n_grid // 2 + 1) < (2 * n_grid) // 6 + 1).to(torch.float64)  # 2/3 rule

    def known(u: torch.Tensor) -> torch.Tensor:  # the linear part, in physical space (for reference)
        return torch.fft.irfft(symbol.to(u.device) * torch.fft.rfft(u), n=n_grid)

    def true_residual(u: torch.Tensor) -> torch.Tensor:
        u_hat = torch.fft.rfft(u * u) * dealias.to(u.device)
        return torch.fft.irfft(-0.5j * k.to(u.device) * u_hat, n=n_grid)

    def sample_initial(n: int, generator: torch.Generator) -> torch.Tensor:
        x = torch.arange(n_grid, dtype=torch.float64) * (length / n_grid)
        phase = 2 * math.pi * torch.rand(n, 4, 1, generator=generator, dtype=torch.float64)
        amp = torch.randn(n, 4, 1, generator=generator, dtype=torch.float64)
        modes = torch.arange(1, 5, dtype=torch.float64).view(1, 4, 1)
        return (amp * torch.cos(2 * math.pi * modes * x / length + phase)).sum(1)

    return System(
        name="ks",
        dim=n_grid,
        dt=dt,
        known=known,
        true_residual=true_residual,
        sample_initial=sample_initial,
        center=torch.zeros(n_grid, dtype=torch.float64),
        scale=torch.full((n_grid,), 1.5, dtype=torch.float64),
        out_scale=3.0,
        blow_up_radius=20.0 * math.sqrt(n_grid),
        substeps=4,
        spin_up_steps=round(100.0 / dt),
        linear_symbol=symbol,
    )


@checked(name=Choice(SYSTEMS))
def make_system(name: str, **kwargs) -> System:
    """The system called ``name`` (``"pendulum"``, ``"lorenz"`` or ``"ks"``), with its keyword arguments."""
    return {"pendulum": pendulum, "lorenz": lorenz63, "ks": kuramoto_sivashinsky}[name](**kwargs)
