"""The Dirichlet Concept Diffusion Model: forward process, ELBO, sampler and interventions.

Notation (the chapter's equations):

* ``x_0`` a data point in ``R^D``; ``C`` the ``K`` concept centres, shape ``(K, D)``;
* ``alpha(x_0) > 0`` the concentrations a concept encoder infers, ``pi ~ Dir(alpha(x_0))`` the
  concept weights and ``m = pi C`` the weighted centre;
* the forward process, eq. (dcdm-forward):
  ``q(x_t | x_0, m) = N(sqrt(abar_t) x_0 + (1 - sqrt(abar_t)) m, (1 - abar_t) I)``, so ``x_T -> N(m, I)``;
* the loss, eq. (dcdm-elbo): ``E || eps - eps_theta(x_t, t, m) ||^2 / D + beta KL(Dir(alpha(x_0)) || Dir(alpha_0))``.

The abstract says that the weighted centre "shapes the forward diffusion mean and reverse
denoising process" and that everything is trained by one ELBO; the exact mean shift above, the
noise-prediction form of the ELBO and the weight ``beta`` are our reconstruction.

Every function works on tensors with any leading batch dimensions (the experiment trains several
models side by side with a leading "member" dimension). Random draws use torch's global generator
(``torch.distributions.Dirichlet`` has no generator argument); the experiment seeds it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.distributions import Dirichlet

from ..core.validation import check_int, check_positive

#: a noise predictor ``(x_t, t, m) -> eps_hat`` with the shapes of ``x_t``
Denoiser = Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]

#: concentrations are ``exp`` of the encoder's outputs, clamped to this range (stable Dirichlet gradients)
LOG_ALPHA_RANGE = (-3.0, 5.0)


@dataclass
class NoiseSchedule:
    """DDPM's discrete schedule (cosine, Nichol and Dhariwal 2021): ``betas``, ``alphas``, ``alpha_bars``."""

    betas: torch.Tensor
    alphas: torch.Tensor
    alpha_bars: torch.Tensor

    @classmethod
    def cosine(
        cls, n_steps: int, device: str | torch.device = "cpu", offset: float = 0.008, max_beta: float = 0.5
    ) -> NoiseSchedule:
        """The cosine schedule with ``beta_t <= max_beta``: Nichol and Dhariwal clamp at 0.999, but with
        few steps the last reverse step then divides by ``sqrt(1 - 0.999)`` and multiplies the
        denoiser's error by 30; 0.5 keeps ``abar_T`` near 0 (``< 0.01`` for ``T >= 20``) without that."""
        n_steps = check_int("n_steps", n_steps, minimum=1)
        s = torch.arange(n_steps + 1, dtype=torch.float64) / n_steps
        f = torch.cos((s + offset) / (1 + offset) * math.pi / 2) ** 2
        betas = (1 - f[1:] / f[:-1]).clamp(max=max_beta)
        alphas = 1 - betas
        return cls(betas.float().to(device), alphas.float().to(device), torch.cumprod(alphas, 0).float().to(device))

    @property
    def n_steps(self) -> int:
        return len(self.betas)


def _bcast(values: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """``values`` (shape of ``like`` without its last dimension) with a trailing axis to broadcast over ``D``."""
    return values.view(*values.shape, *([1] * (like.ndim - values.ndim)))


def forward_mean_std(
    x0: torch.Tensor, m: torch.Tensor, t: torch.Tensor, schedule: NoiseSchedule
) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean and standard deviation of ``q(x_t | x_0, m)``, eq. (dcdm-forward)."""
    ab = _bcast(schedule.alpha_bars[t], x0)
    return ab.sqrt() * x0 + (1 - ab.sqrt()) * m, (1 - ab).sqrt().expand_as(x0)


def forward_sample(
    x0: torch.Tensor, m: torch.Tensor, t: torch.Tensor, eps: torch.Tensor, schedule: NoiseSchedule
) -> torch.Tensor:
    """``x_t = sqrt(abar_t) x_0 + (1 - sqrt(abar_t)) m + sqrt(1 - abar_t) eps``, eq. (dcdm-forward)."""
    mean, std = forward_mean_std(x0, m, t, schedule)
    return mean + std * eps


def concentrations(encoder_out: torch.Tensor) -> torch.Tensor:
    """The Dirichlet concentrations ``alpha(x_0) = exp(h)`` of the encoder's outputs ``h`` (clamped)."""
    return encoder_out.clamp(*LOG_ALPHA_RANGE).exp()


def dirichlet_kl(alpha: torch.Tensor, prior: torch.Tensor | float) -> torch.Tensor:
    """``KL(Dir(alpha) || Dir(prior))`` in closed form over the last axis, eq. (dir-kl).

    ``KL = ln G(a_0) - sum ln G(a_k) - ln G(b_0) + sum ln G(b_k) + sum (a_k - b_k)(psi(a_k) - psi(a_0))``
    with ``a_0 = sum a_k`` and ``b_0 = sum b_k``; ``prior`` may be a number (a symmetric prior).
    """
    prior = torch.as_tensor(prior, dtype=alpha.dtype, device=alpha.device).expand_as(alpha)
    a0, b0 = alpha.sum(-1), prior.sum(-1)
    return (
        torch.lgamma(a0)
        - torch.lgamma(alpha).sum(-1)
        - torch.lgamma(b0)
        + torch.lgamma(prior).sum(-1)
        + ((alpha - prior) * (torch.digamma(alpha) - torch.digamma(a0)[..., None])).sum(-1)
    )


def concept_weights(encoder_out: torch.Tensor, softmax: torch.Tensor | bool = False) -> torch.Tensor:
    """Concept weights ``pi``: a reparameterised draw from ``Dir(alpha(x_0))`` (gradients flow through
    ``rsample``), or, for the softmax ablation, the deterministic ``softmax(h)``. ``softmax`` may be a
    boolean per leading index (one per ensemble member)."""
    alpha = concentrations(encoder_out)
    pi = Dirichlet(alpha).rsample() if alpha.shape[-1] > 1 else torch.ones_like(alpha)
    soft = torch.as_tensor(softmax, device=pi.device)
    return torch.where(_bcast(soft, pi), encoder_out.softmax(-1), pi) if soft.any() else pi


def dcdm_loss(
    x0: torch.Tensor,
    encoder_out: torch.Tensor,
    centres: torch.Tensor,
    denoiser: Denoiser,
    schedule: NoiseSchedule,
    *,
    beta: torch.Tensor | float,
    prior: float,
    softmax: torch.Tensor | bool = False,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """The DCDM objective of eq. (dcdm-elbo) on a batch; returns the loss per leading index and its parts.

    Shapes: ``x0 (..., B, D)``, ``encoder_out (..., B, K)``, ``centres (..., K, D)``; ``beta`` a number
    or one per leading index. The loss averages over the batch ``B``.
    """
    pi = concept_weights(encoder_out, softmax)  # pi ~ Dir(alpha(x_0)), reparameterised
    m = pi @ centres  # m = sum_k pi_k c_k, the weighted centre
    t = torch.randint(schedule.n_steps, x0.shape[:-1], device=x0.device)  # t ~ U{0, ..., T-1}
    eps = torch.randn_like(x0)  # eps ~ N(0, I)
    x_t = forward_sample(x0, m, t, eps, schedule)  # eq. (dcdm-forward): the mean is shifted toward m
    reconstruction = ((eps - denoiser(x_t, t, m)) ** 2).mean(-1)  # || eps - eps_theta(x_t, t, m) ||^2 / D
    kl = dirichlet_kl(concentrations(encoder_out), prior)  # KL(Dir(alpha(x_0)) || Dir(alpha_0)), eq. (dir-kl)
    beta = _bcast(torch.as_tensor(beta, device=x0.device, dtype=x0.dtype), kl)
    loss = (reconstruction + beta * kl).mean(-1)
    return loss, {"reconstruction": reconstruction.mean(-1), "kl": kl.mean(-1)}


def ddpm_loss(x0: torch.Tensor, denoiser: Denoiser, schedule: NoiseSchedule) -> torch.Tensor:
    """Plain DDPM's simple loss ``E || eps - eps_theta(x_t, t) ||^2 / D`` (``m = 0``), for comparison."""
    t = torch.randint(schedule.n_steps, x0.shape[:-1], device=x0.device)
    eps = torch.randn_like(x0)
    ab = _bcast(schedule.alpha_bars[t], x0)
    x_t = ab.sqrt() * x0 + (1 - ab).sqrt() * eps
    return ((eps - denoiser(x_t, t, torch.zeros_like(x0))) ** 2).mean(-1).mean(-1)


@torch.no_grad()
def reverse_process(
    denoiser: Denoiser,
    schedule: NoiseSchedule,
    m: torch.Tensor,
    *,
    x_start: torch.Tensor | None = None,
    t_start: int | None = None,
    noise: Callable[[tuple[int, ...]], torch.Tensor] | None = None,
) -> torch.Tensor:
    """Ancestral sampling given weighted centres ``m``, eq. (dcdm-reverse).

    In ``y = x - m`` the forward process is DDPM's, so each step is DDPM's posterior step on ``y`` and
    ``x = y + m``. Starts from ``x_T ~ N(m, I)``, or from ``x_start`` at step ``t_start`` (interventions).
    ``noise(shape)`` draws the Gaussians (default ``torch.randn``).
    """
    draw = noise or (lambda shape: torch.randn(shape, device=m.device))
    t_start = schedule.n_steps - 1 if t_start is None else check_int("t_start", t_start, 0, schedule.n_steps - 1)
    y = draw(tuple(m.shape)) if x_start is None else x_start - m
    for t in range(t_start, -1, -1):
        tt = torch.full(m.shape[:-1], t, device=m.device, dtype=torch.long)
        eps = denoiser(y + m, tt, m)
        beta, alpha, ab = schedule.betas[t], schedule.alphas[t], schedule.alpha_bars[t]
        y = (y - beta / (1 - ab).sqrt() * eps) / alpha.sqrt()
        if t > 0:
            sigma = (beta * (1 - schedule.alpha_bars[t - 1]) / (1 - ab)).sqrt()  # DDPM's posterior std
            y = y + sigma * draw(tuple(m.shape))
    return y + m


def intervene(
    x0: torch.Tensor,
    pi: torch.Tensor,
    pi_new: torch.Tensor,
    centres: torch.Tensor,
    denoiser: Denoiser,
    schedule: NoiseSchedule,
    t_edit: int,
) -> torch.Tensor:
    """Swap an input's concept weights and regenerate, eq. (dcdm-intervene).

    ``x_0`` is noised to step ``t_edit`` under its own centre ``m = pi C``; the mean shift is moved to
    the new centre ``m' = pi' C`` (``x'_t = x_t + (1 - sqrt(abar_t)) (m' - m)``, the same noise under the
    new concept's forward process), and the reverse process runs from there with ``m'``.
    """
    t_edit = check_int("t_edit", t_edit, 0, schedule.n_steps - 1)
    m, m_new = pi @ centres, pi_new @ centres
    t = torch.full(x0.shape[:-1], t_edit, device=x0.device, dtype=torch.long)
    x_t = forward_sample(x0, m, t, torch.randn_like(x0), schedule)
    x_t = x_t + (1 - schedule.alpha_bars[t_edit].sqrt()) * (m_new - m)
    return reverse_process(denoiser, schedule, m_new, x_start=x_t, t_start=t_edit)


def swap_weights(pi: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """``pi`` with the weight of its top concept and of concept ``target`` exchanged (per row)."""
    top = pi.argmax(-1, keepdim=True)
    tgt = target.view(*pi.shape[:-1], 1).to(top.device)
    out = pi.clone()
    out.scatter_(-1, top, pi.gather(-1, tgt))
    out.scatter_(-1, tgt, pi.gather(-1, top))
    return out


def check_prior(prior: float) -> float:
    """The symmetric Dirichlet prior ``alpha_0`` must be a positive number."""
    return check_positive("prior", prior)
