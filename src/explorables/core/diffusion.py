"""The discrete DDPM noise schedule and step features that the diffusion chapters share.

:class:`NoiseSchedule` is the forward process of Ho et al. (2020) with the cosine schedule of Nichol and Dhariwal
(2021); :func:`time_features` the sinusoidal step features their denoisers read. Chapters 07 (``dcdm``) and 15
(``jeffrey``) build on both; chapter 12 uses a linear schedule of its own and chapter 06 a continuous flow time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .arguments import ArgumentError, Array, checked
from .params import Float, Int, Positive

#: the most diffusion steps a schedule may have
MAX_DIFFUSION_STEPS = 100_000


@checked(
    betas=Array("t", tensor=True, above=0.0, below=1.0),
    alphas=Array("t", tensor=True, above=0.0, below=1.0),
    alpha_bars=Array("t", tensor=True, above=0.0, below=1.0),
)
@dataclass
class NoiseSchedule:
    """DDPM's discrete forward process: ``betas``, ``alphas = 1 - betas`` and their running product ``alpha_bars``.

    Three float tensors of shape ``(T,)`` with entries in ``(0, 1)`` (the sampler divides by ``sqrt(alphas)`` and by
    ``sqrt(1 - alpha_bars)``); :meth:`cosine` builds the schedule of Nichol and Dhariwal (2021).
    """

    betas: torch.Tensor
    alphas: torch.Tensor
    alpha_bars: torch.Tensor

    @classmethod
    @checked(
        n_steps=Int(1, MAX_DIFFUSION_STEPS),
        offset=Positive(),
        max_beta=Float(1e-6, 0.9999),  # a clamp the float32 betas keep inside (0, 1)
    )
    def cosine(
        cls, n_steps: int, device: str | torch.device = "cpu", offset: float = 0.008, max_beta: float = 0.999
    ) -> NoiseSchedule:
        """``abar(s) = f(s) / f(0)`` with ``f(s) = cos((s + offset) / (1 + offset) * pi / 2)^2`` at ``s = t / T``, so
        ``beta_t = 1 - f(t / T) / f((t - 1) / T)``, clamped at ``max_beta`` (Nichol and Dhariwal use 0.999: with few
        steps the last reverse step then divides by ``sqrt(1 - 0.999)``; a chapter may clamp lower)."""
        try:
            device = torch.device(device)
        except (RuntimeError, TypeError, ValueError):
            raise ArgumentError(f"device must be a torch device or its name ('cpu', 'cuda'), got {device!r}") from None
        s = torch.arange(n_steps + 1, dtype=torch.float64) / n_steps
        f = torch.cos((s + offset) / (1 + offset) * math.pi / 2) ** 2
        betas = (1 - f[1:] / f[:-1]).clamp(max=max_beta)
        alphas = 1 - betas
        return cls(betas.float().to(device), alphas.float().to(device), torch.cumprod(alphas, 0).float().to(device))

    @property
    def n_steps(self) -> int:
        return len(self.betas)

    def _rows_and_steps(self, x0: torch.Tensor, t: torch.Tensor, eps: torch.Tensor) -> None:
        """:meth:`noise`'s relation: one row of ``x0`` per step, ``eps`` of ``x0``'s shape, steps in ``[0, T)``."""
        if x0.ndim == 0 or len(x0) != len(t):
            raise ArgumentError(f"x0 must have one row per step of t ({len(t)} rows), got shape {tuple(x0.shape)}")
        if eps.shape != x0.shape:
            raise ArgumentError(f"eps must have the shape of x0, {tuple(x0.shape)}, got {tuple(eps.shape)}")
        if bool((t < 0).any()) or bool((t >= self.n_steps).any()):
            raise ArgumentError(f"t must hold diffusion steps in [0, {self.n_steps - 1}]")

    @checked(
        x0=Array(tensor=True),
        t=Array("b", integer=True, tensor=True),
        eps=Array(tensor=True),
        relation=_rows_and_steps,
    )
    def noise(self, x0: torch.Tensor, t: torch.Tensor, eps: torch.Tensor) -> torch.Tensor:
        """``x_t = sqrt(abar_t) x_0 + sqrt(1 - abar_t) eps`` for a batch of steps ``t`` (one per row of ``x0``; ``eps``
        has the shape of ``x0``). Checked at the boundary; a training loop inside a ``skip_nested`` one runs it bare."""
        ab = self.alpha_bars[t].view(-1, *([1] * (x0.ndim - 1)))
        return ab.sqrt() * x0 + (1 - ab).sqrt() * eps


def time_features(t: torch.Tensor, n_steps: int, d: int = 16) -> torch.Tensor:
    """Sinusoidal features of the step ``t`` (as in Transformers and DDPM): ``d // 2`` sines then as many cosines of
    ``(t / n_steps) * w`` with frequencies ``w`` spaced geometrically from 1 to 200; shape ``(*t.shape, d)``."""
    freqs = torch.exp(torch.linspace(0, math.log(200.0), d // 2, device=t.device))
    angle = (t.float() / n_steps)[..., None] * freqs
    return torch.cat([angle.sin(), angle.cos()], dim=-1)
