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

import itertools
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from ..core.validation import check_int

Params = dict[str, torch.Tensor]


@dataclass(frozen=True)
class Schedule:
    """A linear-beta DDPM noise schedule with ``n_steps`` steps (Ho et al., 2020)."""

    betas: torch.Tensor
    alphas_bar: torch.Tensor

    @property
    def n_steps(self) -> int:
        return int(self.betas.numel())


def make_schedule(
    n_steps: int, beta_min: float = 1e-4, beta_max: float = 0.2, device: torch.device | str = "cpu"
) -> Schedule:
    """Betas spaced linearly from ``beta_min`` to ``beta_max``; ``alphas_bar[t] = prod_{s<=t} (1 - beta_s)``."""
    n_steps = check_int("n_steps", n_steps, 2, 10_000)
    betas = torch.linspace(beta_min, beta_max, n_steps, dtype=torch.float32, device=device)
    return Schedule(betas, torch.cumprod(1 - betas, 0))


@dataclass(frozen=True)
class Net:
    """Shape of the noise predictor: data dimension, number of task labels, width, depth, time features."""

    d_data: int
    n_tasks: int
    width: int = 64
    depth: int = 3
    d_time: int = 16

    @property
    def d_in(self) -> int:
        return self.d_data + self.d_time + self.n_tasks


def init_params(net: Net, seeds: list[int] | tuple[int, ...], device: torch.device | str = "cpu") -> Params:
    """One member per entry of ``seeds``; members with the same seed start from the same weights."""
    if not seeds:
        raise ValueError("seeds must hold at least one seed")
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


def predict_noise(params: Params, net: Net, x: torch.Tensor, t: torch.Tensor, task: torch.Tensor, n_steps: int):
    """``eps_theta(x_t, t, task)`` for every member: ``x`` is ``(M, B, d)``, ``t`` and ``task`` are ``(M, B)``."""
    h = torch.cat(
        [
            x,
            time_features(t, n_steps, net.d_time),
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
    ab = schedule.alphas_bar[t].unsqueeze(-1)
    xt = ab.sqrt() * x0 + (1 - ab).sqrt() * noise
    return (predict_noise(params, net, xt, t, task, schedule.n_steps) - noise).pow(2).mean(-1)


def draw_t_noise(shape: tuple[int, int, int], n_steps: int, generator: torch.Generator, device) -> tuple:
    """Random steps ``t`` (``shape[:2]``) and Gaussian noise (``shape``) for a denoising batch."""
    t = torch.randint(0, n_steps, shape[:2], generator=generator).to(device)
    noise = torch.randn(shape, generator=generator).to(device)
    return t, noise


@torch.no_grad()
def sample(
    params: Params,
    net: Net,
    schedule: Schedule,
    task: torch.Tensor,
    generator: torch.Generator,
) -> torch.Tensor:
    """Ancestral DDPM sampling for every member: ``task`` is ``(M, B)`` labels; returns ``(M, B, d)``."""
    m, b = task.shape
    device = task.device
    x = torch.randn(m, b, net.d_data, generator=generator).to(device)
    for step in reversed(range(schedule.n_steps)):
        t = torch.full((m, b), step, dtype=torch.long, device=device)
        eps = predict_noise(params, net, x, t, task, schedule.n_steps)
        beta, ab = schedule.betas[step], schedule.alphas_bar[step]
        x = (x - beta / (1 - ab).sqrt() * eps) / (1 - beta).sqrt()
        if step > 0:
            x = x + beta.sqrt() * torch.randn(x.shape, generator=generator).to(device)
    return x
