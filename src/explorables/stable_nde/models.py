"""Hybrid models: known physics plus a learned residual, as an *ensemble* of independent members.

Every tensor carries a leading member axis ``S``: states are ``(S, B, d)`` and member ``s`` only
ever touches its own weights. Members are the seeds of one method (and, for the joint rollouts,
several methods side by side), so one batched forward pass trains or rolls out all of them; since
the loss is a sum over members and Adam is elementwise, each member trains exactly as it would
alone.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import torch
from torch import nn

from ..core.arguments import ArgumentError, Array, checked
from ..core.device import resolve_device
from ..core.params import Choice, Device, Int
from .solvers import SOLVERS, check_fits
from .systems import System

#: the largest ensemble, width and depth a constructor takes (the memory check bounds their product)
MAX_MEMBERS = 2**16
MAX_WIDTH = 2**16
MAX_DEPTH = 64


def _mlp_bytes(n_members: int, dim: int, width: int, depth: int, itemsize: int = 8) -> float:
    return float(n_members) * (2 * dim * width + (depth - 1) * width * width + depth * width + dim) * itemsize


def _cnn_bytes(n_members: int, channels: int, depth: int, kernel_size: int, itemsize: int = 8) -> float:
    return float(n_members) * (2 * channels + (depth - 1) * channels * channels) * (kernel_size + 1) * itemsize


@checked(
    n_members=Int(1, MAX_MEMBERS),
    dim=Int(1, 2**20),
    width=Int(1, MAX_WIDTH),
    depth=Int(1, MAX_DEPTH),
)
class EnsembleMLP(nn.Module):
    """``S`` independent tanh MLPs ``R^d -> R^d`` with ``depth`` hidden layers of ``width`` units.

    Weights are ``(S, fan_in, fan_out)``; a member's parameters are row ``s`` of every tensor. The
    last layer starts small (x 0.1) so a fresh hybrid model starts close to its known physics.
    """

    def __init__(
        self,
        n_members: int,
        dim: int,
        width: int = 32,
        depth: int = 2,
        *,
        generators: list[torch.Generator] | None = None,
        init_gain: float = 0.1,
        dtype: torch.dtype = torch.float64,
    ):
        super().__init__()
        if not dtype.is_floating_point:
            raise ValueError(f"dtype must be a floating-point torch dtype, got {dtype}")
        if generators is not None:
            if len(generators) != n_members:
                raise ValueError(f"generators must hold one generator per member ({n_members}), got {len(generators)}")
            if not all(isinstance(g, torch.Generator) for g in generators):
                raise ValueError("generators must hold torch.Generator objects")
        weights = _mlp_bytes(n_members, dim, width, depth)
        check_fits({"the weights (n_members x (dim x width x 2 + width^2 x depth))": weights})
        sizes = [dim] + [width] * depth + [dim]
        self.weights = nn.ParameterList()
        self.biases = nn.ParameterList()
        for i, (a, b) in enumerate(itertools.pairwise(sizes)):
            gain = init_gain if i == len(sizes) - 2 else 1.0
            w = torch.stack(
                [
                    torch.randn(a, b, generator=None if generators is None else generators[s], dtype=dtype)
                    for s in range(n_members)
                ]
            ) * (gain / math.sqrt(a))
            self.weights.append(nn.Parameter(w))
            self.biases.append(nn.Parameter(torch.zeros(n_members, 1, b, dtype=dtype)))
        self.n_members = n_members

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        """``h``: ``(S, B, d)`` normalised states -> ``(S, B, d)`` residual (normalised)."""
        last = len(self.weights) - 1
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            h = torch.baddbmm(b, h, w)
            if i < last:
                h = torch.tanh(h)
        return h


@checked(
    n_members=Int(1, MAX_MEMBERS),
    channels=Int(1, MAX_WIDTH),
    depth=Int(1, MAX_DEPTH),
    kernel_size=Int(1, 1025),
    seed=Int(0, 2**63 - 1),
)
class EnsembleCNN(nn.Module):
    """``S`` independent periodic 1-D CNNs on a grid (Kuramoto–Sivashinsky), as grouped convolutions.

    Channels of member ``s`` are the ``s``-th block of every layer (``groups = S``), so the first
    axis of every weight and bias splits into ``S`` equal member blocks, like :class:`EnsembleMLP`.
    """

    def __init__(
        self,
        n_members: int,
        channels: int = 32,
        depth: int = 3,
        kernel_size: int = 5,
        *,
        seed: int = 0,
        dtype: torch.dtype = torch.float64,
    ):
        super().__init__()
        if kernel_size % 2 == 0:
            raise ValueError(f"kernel_size must be odd, got {kernel_size}")
        if not dtype.is_floating_point:
            raise ValueError(f"dtype must be a floating-point torch dtype, got {dtype}")
        weights = _cnn_bytes(n_members, channels, depth, kernel_size)
        check_fits({"the weights (n_members x channels^2 x depth x kernel_size)": weights})
        with torch.random.fork_rng(devices=[]):  # seeded init without touching the global random state
            torch.manual_seed(seed)
            sizes = [1] + [channels] * depth + [1]
            self.layers = nn.ModuleList(
                nn.Conv1d(
                    a * n_members,
                    b * n_members,
                    kernel_size,
                    padding=kernel_size // 2,
                    padding_mode="circular",
                    groups=n_members,
                    dtype=dtype,
                )
                for a, b in itertools.pairwise(sizes)
            )
            with torch.no_grad():
                self.layers[-1].weight.mul_(0.1)
                self.layers[-1].bias.zero_()
        self.n_members = n_members

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        """``h``: ``(S, B, N)`` -> ``(S, B, N)``."""
        z = h.transpose(0, 1)  # (B, S, N): member s is channel block s
        for i, layer in enumerate(self.layers):
            z = layer(z)
            if i < len(self.layers) - 1:
                z = torch.tanh(z)
        return z.transpose(0, 1)


#: a hybrid model's states: a finite tensor (the method checks (n_members, batch, dim))
_STATES = Array("s b d", tensor=True)


@checked(solver=Choice(SOLVERS))
class HybridModel(nn.Module):
    """The hybrid model's one-step map ``Phi_theta``, eq. (nde-hybrid) and (nde-step).

    ``f_theta(x) = f_known(x) + out_scale * net((x - center) / scale)``, stepped by the system's
    solver. ``step(x)`` maps ``(S, B, d)`` to ``(S, B, d)``.
    """

    def __init__(self, system: System, net: EnsembleMLP | EnsembleCNN, solver: str = "rk4"):
        super().__init__()
        if isinstance(net, EnsembleMLP) and net.weights[0].shape[1] != system.dim:
            width = net.weights[0].shape[1]
            raise ValueError(f"net must map the system's dim = {system.dim}, got an MLP of input width {width}")
        self.system, self.net, self.solver = system, net, solver
        self.register_buffer("center", system.center.clone())
        self.register_buffer("scale", system.scale.clone())

    @property
    def n_members(self) -> int:
        return self.net.n_members

    def _check_states(self, name: str, x: torch.Tensor) -> torch.Tensor:
        """``x`` (already checked finite) is a float tensor ``(n_members, batch, dim)`` of the model's system."""
        if not x.is_floating_point():
            raise ArgumentError(f"{name} must be a float tensor of states, got dtype {x.dtype}")
        if x.ndim != 3 or x.shape[0] != self.n_members or x.shape[-1] != self.system.dim:
            raise ArgumentError(
                f"{name} must have shape (n_members={self.n_members}, batch, dim={self.system.dim}), "
                f"got {tuple(x.shape)}"
            )
        return x

    @checked(x=_STATES)
    def residual(self, x: torch.Tensor) -> torch.Tensor:
        """The learned part of the vector field, in the system's units, at finite states ``x``
        ``(n_members, batch, dim)``; the steps call :meth:`_residual` (no checks)."""
        return self._residual(self._check_states("x", x))

    def _residual(self, x: torch.Tensor) -> torch.Tensor:
        return self.system.out_scale * self.net((x - self.center) / self.scale)

    @checked(x=_STATES)
    def step(self, x: torch.Tensor) -> torch.Tensor:
        """One step of the hybrid model from finite states ``x`` ``(n_members, batch, dim)``. A state that is not
        finite is refused here; inside :func:`.metrics.rollout` the steps run unchecked, so a rollout that blows up
        keeps its non-finite states and the stability metrics count them. Losses and loops call :meth:`_step`."""
        return self._step(self._check_states("x", x))

    def _step(self, x: torch.Tensor) -> torch.Tensor:
        return self.system._step_with(self._residual, x, solver=self.solver)

    @checked()
    def member_vectors(self, tensors: list[torch.Tensor] | None = None) -> torch.Tensor:
        """Parameters (or gradients given as ``tensors``, in parameter order: one tensor of each parameter's shape) as
        one row per member: ``(S, P)``. The training loop calls :meth:`_member_vectors` (no checks)."""
        if tensors is not None:
            shapes = [tuple(p.shape) for p in self.parameters()]
            fits = len(tensors) == len(shapes) and all(
                isinstance(t, torch.Tensor) and tuple(t.shape) == s for t, s in zip(tensors, shapes, strict=True)
            )
            if not fits:
                raise ArgumentError(f"tensors must hold one tensor per parameter ({len(shapes)}), of its shape, "
                                    "in parameter order")
        return self._member_vectors(tensors)

    def _member_vectors(self, tensors: list[torch.Tensor] | None = None) -> torch.Tensor:
        tensors = [p for p in self.parameters()] if tensors is None else tensors
        return torch.cat([t.reshape(self.n_members, -1) for t in tensors], dim=1)


@checked(
    n_members=Int(1, MAX_MEMBERS),
    width=Int(1, MAX_WIDTH),
    depth=Int(1, MAX_DEPTH),
    solver=Choice(SOLVERS),
)
def make_model(
    system: System,
    n_members: int,
    *,
    width: int = 32,
    depth: int = 2,
    seeds: Sequence[int] = (),
    solver: str = "rk4",
    init_gain: float = 0.1,
    device: str | torch.device = "cpu",
) -> HybridModel:
    """A fresh hybrid ensemble for ``system``: an MLP residual for ODEs, a CNN for Kuramoto–Sivashinsky.

    Member ``s`` is initialised from ``seeds[s]`` (default ``0, 1, ...``; integers in ``[0, 2**63)``).
    """
    seeds = tuple(seeds) or tuple(range(n_members))
    if len(seeds) != n_members:
        raise ValueError(f"seeds must hold one seed per member ({n_members}), got {len(seeds)}")
    seeds = tuple(Int(0, 2**63 - 1).check(f"seeds[{i}]", s) for i, s in enumerate(seeds))
    if isinstance(device, str):
        device = resolve_device(Device().check("device", device))
    if system.linear_symbol is not None:
        check_fits({"the weights (n_members x width^2 x depth)": _cnn_bytes(n_members, width, depth, 5)})
        net: nn.Module = EnsembleCNN(n_members, channels=width, depth=depth, seed=seeds[0])
    else:
        gens = [torch.Generator().manual_seed(int(s)) for s in seeds]
        net = EnsembleMLP(n_members, system.dim, width, depth, generators=gens, init_gain=init_gain)
    return HybridModel(system, net, solver).to(device)


def _architecture(model: HybridModel) -> tuple:
    """What two models must share to be stacked: the system, the solver, the net's kind and every
    parameter's shape past the member axis, and its dtype."""
    shapes = tuple((tuple(p.shape[1:]), p.dtype) for p in model.net.parameters())
    if isinstance(model.net, EnsembleCNN):  # grouped convolutions: the first axis is members x channels
        shapes = tuple((p.shape[0] // model.n_members, *p.shape[1:]) for p in model.net.parameters())
    return (model.system.name, model.system.dim, model.system.dt), model.solver, type(model.net), shapes


@checked()
def stack_models(models: Sequence[HybridModel]) -> HybridModel:
    """One ensemble holding every member of ``models`` (same system, solver and architecture), in order."""
    if not models:
        raise ValueError("models must hold at least one model")
    if not all(isinstance(m, HybridModel) for m in models):
        raise ValueError(f"models must hold HybridModel objects, got {[type(m).__name__ for m in models]}")
    first = models[0]
    if any(_architecture(m) != _architecture(first) for m in models[1:]):
        raise ValueError("models must share one system, solver and architecture (width, depth, dtype) to be stacked")
    if sum(m.n_members for m in models) > MAX_MEMBERS:
        raise ValueError(f"models must hold at most {MAX_MEMBERS} members in all")
    if isinstance(first.net, EnsembleMLP):
        depth = len(first.net.weights) - 1
        width = first.net.weights[0].shape[-1]
        net: nn.Module = EnsembleMLP(
            sum(m.n_members for m in models), first.system.dim, width, depth, dtype=first.net.weights[0].dtype
        )
    else:
        channels = first.net.layers[0].out_channels // first.n_members
        net = EnsembleCNN(
            sum(m.n_members for m in models), channels, len(first.net.layers) - 1, first.net.layers[0].kernel_size[0]
        )
    stacked = HybridModel(first.system, net, first.solver).to(first.center.device)
    with torch.no_grad():
        for target, *sources in zip(stacked.net.parameters(), *(m.net.parameters() for m in models), strict=True):
            target.copy_(torch.cat([s.detach() for s in sources], dim=0))
    return stacked
