"""A task-conditioned denoising diffusion model (DDPM), as an ensemble of small MLPs.

The noise predictor is an MLP ``eps_theta(x_t, t, task)``: the input is the noisy point, a
sinusoidal embedding of the step ``t`` and a one-hot task label. Many copies (*members*: every
method and every seed of the experiment) train side by side as one batched network whose weights
have shape ``(members, in, out)``; member ``m`` only ever sees its own loss, so each member is an
independent model (Adam is elementwise, so summing the members' losses changes nothing).

Parameters are a plain ``dict`` of tensors (``params``) so that ``torch.func`` can take
per-sample gradients for the Fisher estimate (:mod:`.continual`).
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

from ..core.arguments import ArgumentError, Array, checked
from ..core.device import resolve_device
from ..core.params import Float, Int, Tuple
from ..core.resources import check_memory
from ..core.validation import check_int

Params = dict[str, torch.Tensor]

#: the shapes of a denoising batch: ``x0``/``noise`` ``(M, B, d)``, ``task``/``t`` ``(M, B)`` integer labels and steps
X_BATCH = Array("m b d")
LABELS = Array("m b", integer=True)


@dataclass(frozen=True)
class Schedule:
    """A linear-beta DDPM noise schedule with ``n_steps`` steps (Ho et al., 2020)."""

    betas: torch.Tensor
    alphas_bar: torch.Tensor

    @property
    def n_steps(self) -> int:
        return int(self.betas.numel())


@checked(n_steps=Int(2, 10_000), beta_min=Float(0.0, 1.0, low_inclusive=False, high_inclusive=False),
         beta_max=Float(0.0, 1.0, low_inclusive=False, high_inclusive=False))  # fmt: skip
def make_schedule(
    n_steps: int, beta_min: float = 1e-4, beta_max: float = 0.2, device: torch.device | str = "cpu"
) -> Schedule:
    """Betas spaced linearly from ``beta_min`` to ``beta_max``; ``alphas_bar[t] = prod_{s<=t} (1 - beta_s)``."""
    n_steps = check_int("n_steps", n_steps, 2, 10_000)
    if beta_max < beta_min:
        raise ValueError(f"beta_max must be >= beta_min, got beta_min={beta_min!r}, beta_max={beta_max!r}")
    device = resolve_device(device)
    betas = torch.linspace(beta_min, beta_max, n_steps, dtype=torch.float32, device=device)
    return Schedule(betas, torch.cumprod(1 - betas, 0))


@checked(d_data=Int(1, 100_000), n_tasks=Int(1, 10_000), width=Int(1, 100_000), depth=Int(1, 100),
         d_time=Int(0, 10_000))  # fmt: skip
@dataclass(frozen=True)
class Net:
    """Shape of the noise predictor: data dimension, number of task labels, width, depth, time features."""

    d_data: int
    n_tasks: int
    width: int = 64
    depth: int = 3
    d_time: int = 16

    def __post_init__(self) -> None:
        if self.d_time % 2:
            raise ValueError(f"d_time must be even (half sines, half cosines), got {self.d_time}")

    @property
    def d_in(self) -> int:
        return self.d_data + self.d_time + self.n_tasks

    def shapes(self) -> dict[str, tuple[int, int]]:
        """The shape of every weight ``w{i}`` and bias ``b{i}`` of one member."""
        dims = [self.d_in] + [self.width] * self.depth + [self.d_data]
        out: dict[str, tuple[int, int]] = {}
        for i, (a, b) in enumerate(itertools.pairwise(dims)):
            out[f"w{i}"], out[f"b{i}"] = (a, b), (1, b)
        return out


def check_param_dict(name: str, params: Any, shapes: dict[str, tuple[int, ...]] | None = None) -> int:
    """``params`` a non-empty dict of finite float tensors with one leading member axis (of the given per-member
    ``shapes`` if any); returns the number of members."""
    if not isinstance(params, dict) or not params:
        raise ArgumentError(f"{name} must be a non-empty dict of tensors (w0, b0, ...), got {type(params).__name__}")
    members = None
    for key, value in params.items():
        if not isinstance(value, torch.Tensor) or not value.is_floating_point() or value.dim() < 1:
            raise ArgumentError(f"{name}[{key!r}] must be a float tensor with a leading member axis, got {value!r:.60}")
        if members is None:
            members = value.shape[0]
        if value.shape[0] != members or members == 0:
            raise ArgumentError(f"{name} must hold the same number (>= 1) of members in every tensor, got {key!r} "
                                f"with {value.shape[0]} and {members}")  # fmt: skip
        if not bool(torch.isfinite(value).all()):
            raise ArgumentError(f"{name}[{key!r}] must hold only finite numbers (no NaN or inf)")
    if shapes is not None:
        got = {k: tuple(v.shape[1:]) for k, v in params.items()}
        if got != {k: tuple(v) for k, v in shapes.items()}:
            raise ArgumentError(f"{name} must hold one member's tensors of shapes {shapes}, got {got}")
    return int(members)


def check_inputs(net: Net, n_steps: int, members: int, where: str = "", **tensors: torch.Tensor) -> None:
    """Batch tensors (already of checked shapes) against the net and the schedule: data of ``net.d_data``
    coordinates, ``members`` rows, steps in ``[0, n_steps)``, task labels in ``[0, net.n_tasks)``."""
    for name, value in tensors.items():
        if not isinstance(value, torch.Tensor):
            raise ArgumentError(f"{where}{name} must be a torch.Tensor, got {type(value).__name__}")
        if value.shape[0] != members:
            raise ArgumentError(f"{where}{name} must have one row per member ({members}), got {tuple(value.shape)}")
        if name in ("x", "x0", "noise") and value.shape[-1] != net.d_data:
            raise ArgumentError(
                f"{where}{name} must have net.d_data = {net.d_data} coordinates, got shape {tuple(value.shape)}"
            )
        limits = {"t": ("step", n_steps), "task": ("task label", net.n_tasks)}
        if name in limits:
            what, top = limits[name]
            low, high = int(value.min()), int(value.max())
            if low < 0 or high >= top:
                raise ArgumentError(f"{where}{name} must hold {what}s in [0, {top - 1}], got {low}..{high}")


@checked(seeds=Tuple(Int(0, 2**63 - 1), max_len=10**6))
def init_params(net: Net, seeds: list[int] | tuple[int, ...], device: torch.device | str = "cpu") -> Params:
    """One member per entry of ``seeds``; members with the same seed start from the same weights."""
    if not seeds:
        raise ValueError("seeds must hold at least one seed")
    n_weights = sum(a * b for a, b in net.shapes().values())
    check_memory({"the weights (len(seeds) x the net's weights)": 8.0 * len(seeds) * n_weights})
    device = resolve_device(device)
    dims = [net.d_in] + [net.width] * net.depth + [net.d_data]
    per_member: list[Params] = []
    for s in seeds:
        g = torch.Generator().manual_seed(int(s))
        p = {}
        for i, (a, b) in enumerate(itertools.pairwise(dims)):
            bound = 1.0 / math.sqrt(a)  # torch.nn.Linear's default uniform initialisation
            p[f"w{i}"] = (2 * torch.rand(a, b, generator=g) - 1) * bound
            p[f"b{i}"] = (2 * torch.rand(1, b, generator=g) - 1) * bound
        per_member.append(p)
    return {k: torch.stack([p[k] for p in per_member]).to(device) for k in per_member[0]}


def n_layers(params: Params) -> int:
    return sum(1 for k in params if k.startswith("w"))


def time_features(t: torch.Tensor, n_steps: int, d_time: int) -> torch.Tensor:
    """Sinusoidal features of the step ``t`` (``d_time`` of them, half sines, half cosines)."""
    half = d_time // 2
    freqs = torch.exp(torch.arange(half, device=t.device, dtype=torch.float32) * (-math.log(100.0) / max(half - 1, 1)))
    angle = (t.float() / n_steps * 100.0).unsqueeze(-1) * freqs
    return torch.cat([torch.sin(angle), torch.cos(angle)], -1)


@functools.lru_cache(maxsize=16)
def _time_table(n_steps: int, d_time: int, device: torch.device) -> torch.Tensor:
    """``time_features`` of every step ``0 .. n_steps - 1``, ``(n_steps, d_time)``: the forward passes look the
    features up instead of recomputing them (elementwise, so the same numbers)."""
    return time_features(torch.arange(n_steps, device=device), n_steps, d_time)


@checked(x=X_BATCH, t=LABELS, task=LABELS, n_steps=Int(1, 10**6))
def predict_noise(
    params: Params, net: Net, x: torch.Tensor, t: torch.Tensor, task: torch.Tensor, n_steps: int
) -> torch.Tensor:
    """``eps_theta(x_t, t, task)`` for every member: ``x`` is ``(M, B, d)``, ``t`` and ``task`` are ``(M, B)``."""
    members = check_param_dict("params", params, net.shapes())
    check_inputs(net, n_steps, members, x=x, t=t, task=task)
    return _predict_noise(params, net, x, t, task, n_steps)


def _predict_noise(params: Params, net: Net, x: torch.Tensor, t: torch.Tensor, task: torch.Tensor, n_steps: int):
    """:func:`predict_noise` without the argument checks (the package's inner loops, ``torch.func`` transforms)."""
    h = torch.cat(
        [
            x,
            _time_table(n_steps, net.d_time, t.device)[t],
            (task.unsqueeze(-1) == torch.arange(net.n_tasks, device=task.device)).float(),
        ],
        -1,
    )
    last = n_layers(params) - 1
    for i in range(last + 1):
        h = torch.baddbmm(params[f"b{i}"], h, params[f"w{i}"])
        if i < last:
            h = F.silu(h)
    return h


@checked(x0=X_BATCH, task=LABELS, t=LABELS, noise=X_BATCH)
def per_sample_loss(
    params: Params,
    net: Net,
    schedule: Schedule,
    x0: torch.Tensor,
    task: torch.Tensor,
    t: torch.Tensor,
    noise: torch.Tensor,
) -> torch.Tensor:
    """The denoising loss of every sample, eq. (trcl-denoise).

    ``|eps - eps_theta(sqrt(abar_t) x0 + sqrt(1 - abar_t) eps, t, c)|^2`` with the data ``x0``, its task label ``c``.

    Shapes: ``x0`` and ``noise`` ``(M, B, d)``; ``task`` and ``t`` ``(M, B)``. Returns ``(M, B)``
    (the squared error averaged over coordinates).
    """
    members = check_param_dict("params", params, net.shapes())
    check_inputs(net, schedule.n_steps, members, x0=x0, task=task, t=t, noise=noise)
    return _per_sample_loss(params, net, schedule, x0, task, t, noise)


def _per_sample_loss(
    params: Params, net: Net, schedule: Schedule, x0: torch.Tensor, task: torch.Tensor, t: torch.Tensor,
    noise: torch.Tensor,
) -> torch.Tensor:
    """:func:`per_sample_loss` without the argument checks (the package's inner loops, ``torch.func`` transforms)."""
    ab = schedule.alphas_bar[t].unsqueeze(-1)
    xt = ab.sqrt() * x0 + (1 - ab).sqrt() * noise
    return (_predict_noise(params, net, xt, t, task, schedule.n_steps) - noise).pow(2).mean(-1)


def draw_t_noise(shape: tuple[int, int, int], n_steps: int, generator: torch.Generator, device) -> tuple:
    """Random steps ``t`` (``shape[:2]``) and Gaussian noise (``shape``) for a denoising batch."""
    t = torch.randint(0, n_steps, shape[:2], generator=generator).to(device)
    noise = torch.randn(shape, generator=generator).to(device)
    return t, noise


@checked(task=LABELS)
@torch.no_grad()
def sample(
    params: Params,
    net: Net,
    schedule: Schedule,
    task: torch.Tensor,
    generator: torch.Generator,
) -> torch.Tensor:
    """Ancestral DDPM sampling for every member: ``task`` is ``(M, B)`` labels; returns ``(M, B, d)``."""
    members = check_param_dict("params", params, net.shapes())
    check_inputs(net, schedule.n_steps, members, task=task)
    return _sample(params, net, schedule, task, generator)


@torch.no_grad()
def _sample(params: Params, net: Net, schedule: Schedule, task: torch.Tensor, generator: torch.Generator,
            rows: torch.Tensor | None = None):  # fmt: skip
    """``rows`` (optional, ``(M,)``): member ``m`` takes the noise of draw ``rows[m]`` (members with the same row
    get the same noise: common random numbers); by default every member draws its own."""
    m, b = task.shape
    device = task.device
    n_draws = m if rows is None else int(rows.max()) + 1
    pick = (lambda z: z) if rows is None else (lambda z: z[rows])
    x = pick(torch.randn(n_draws, b, net.d_data, generator=generator).to(device))
    for step in reversed(range(schedule.n_steps)):
        t = torch.full((m, b), step, dtype=torch.long, device=device)
        eps = _predict_noise(params, net, x, t, task, schedule.n_steps)
        beta, ab = schedule.betas[step], schedule.alphas_bar[step]
        x = (x - beta / (1 - ab).sqrt() * eps) / (1 - beta).sqrt()
        if step > 0:
            x = x + beta.sqrt() * pick(torch.randn((n_draws, *x.shape[1:]), generator=generator).to(device))
    return x
