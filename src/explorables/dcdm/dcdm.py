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

from collections.abc import Callable

import torch
from torch.distributions import Dirichlet

from ..core import diffusion
from ..core.arguments import ArgumentError, Array, checked
from ..core.params import Int, Positive
from ..core.validation import check_int, check_positive

#: a noise predictor ``(x_t, t, m) -> eps_hat`` with the shapes of ``x_t``
Denoiser = Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]

#: concentrations are ``exp`` of the encoder's outputs, clamped to this range (stable Dirichlet gradients)
LOG_ALPHA_RANGE = (-3.0, 5.0)
#: the most diffusion steps a schedule takes (beyond it ``abar_1`` rounds to 1 in float32)
MAX_DIFFUSION_STEPS = diffusion.MAX_DIFFUSION_STEPS


def _check_shape(name: str, value: torch.Tensor, shape: tuple[int, ...], what: str) -> None:
    if tuple(value.shape) != tuple(shape):
        raise ArgumentError(f"{name} must have shape {tuple(shape)} ({what}), got {tuple(value.shape)}")


def _check_prefix(name: str, value: torch.Tensor, like: torch.Tensor, like_name: str) -> None:
    """``value`` holds one entry per leading index of ``like`` (its shape is a prefix of ``like.shape[:-1]``)."""
    if value.ndim >= like.ndim or tuple(value.shape) != tuple(like.shape[: value.ndim]):
        raise ArgumentError(
            f"{name} must be a number or hold one entry per leading index of {like_name} (a shape that starts "
            f"{tuple(like.shape[:-1])}), got shape {tuple(value.shape)}"
        )


def _check_steps(name: str, t: torch.Tensor, lead: tuple[int, ...], schedule: NoiseSchedule) -> None:
    """``t``: integer steps in ``[0, T)``, one per row (shape ``lead``) or one for all (0-d)."""
    if t.ndim and tuple(t.shape) != tuple(lead):
        raise ArgumentError(
            f"{name} must have shape () or x0's leading axes {tuple(lead)} (one step per row of x0), "
            f"got {tuple(t.shape)}"
        )
    if int(t.min()) < 0 or int(t.max()) >= schedule.n_steps:
        raise ArgumentError(
            f"{name} must hold steps in [0, {schedule.n_steps - 1}], got [{int(t.min())}, {int(t.max())}]"
        )


def _centre_shape(pi_name: str, pi: torch.Tensor, centres: torch.Tensor) -> tuple[int, ...]:
    """The shape of ``pi @ centres`` (weights ``(..., K)``, centres ``(..., K, D)``)."""
    try:
        lead = torch.broadcast_shapes(tuple(pi.shape[:-2]), tuple(centres.shape[:-2]))
    except RuntimeError:
        raise ArgumentError(
            f"centres (shape {tuple(centres.shape)}) must have leading axes that broadcast with those of "
            f"{pi_name} (shape {tuple(pi.shape)})"
        ) from None
    return (*lead, *pi.shape[-2:-1], centres.shape[-1])


def _check_number_or_tensor(name: str, value: torch.Tensor | float, minimum: float, strict: bool) -> None:
    bad = (value <= minimum) if strict else (value < minimum)
    if bool(torch.as_tensor(bad).any()):
        raise ArgumentError(f"{name} must be {'>' if strict else '>='} {minimum:g}, got {value!r}"[:200])


#: dcdm clamps the cosine schedule's betas lower than Nichol and Dhariwal's 0.999: with few steps the last reverse
#: step would divide by ``sqrt(1 - 0.999)`` and multiply the denoiser's error by 30; 0.5 keeps ``abar_T`` near 0
#: (``< 0.01`` for ``T >= 20``) without that
MAX_BETA = 0.5


class NoiseSchedule(diffusion.NoiseSchedule):
    """DDPM's discrete schedule (:class:`explorables.core.diffusion.NoiseSchedule`), by default with the cosine
    schedule's betas clamped at :data:`MAX_BETA`."""

    @classmethod
    def cosine(
        cls, n_steps: int, device: str | torch.device = "cpu", offset: float = 0.008, max_beta: float = MAX_BETA
    ) -> NoiseSchedule:
        """:meth:`explorables.core.diffusion.NoiseSchedule.cosine` with ``max_beta`` :data:`MAX_BETA`."""
        return super().cosine(n_steps, device, offset, max_beta)


def _bcast(values: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """``values`` (shape of ``like`` without its last dimension) with a trailing axis to broadcast over ``D``."""
    return values.view(*values.shape, *([1] * (like.ndim - values.ndim)))


def _check_forward(x0: torch.Tensor, m: torch.Tensor, t: torch.Tensor, schedule: NoiseSchedule) -> None:
    try:
        fits = torch.broadcast_shapes(tuple(m.shape), tuple(x0.shape)) == tuple(x0.shape)
    except RuntimeError:
        fits = False
    if not fits:
        raise ArgumentError(f"m must broadcast to the shape of x0 {tuple(x0.shape)}, got {tuple(m.shape)}")
    _check_steps("t", t, tuple(x0.shape[:-1]), schedule)


@checked(
    x0=Array("... d", tensor=True),
    m=Array("... d", tensor=True),
    t=Array(integer=True, tensor=True),
    relation=_check_forward,
)
def forward_mean_std(
    x0: torch.Tensor, m: torch.Tensor, t: torch.Tensor, schedule: NoiseSchedule
) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean and standard deviation of ``q(x_t | x_0, m)``, eq. (dcdm-forward).

    ``x0`` is ``(..., D)``, ``m`` broadcasts to it, ``t`` holds integer steps in ``[0, T)``: one per row
    (shape ``x0.shape[:-1]``) or one for all (0-d).
    """
    ab = _bcast(schedule.alpha_bars[t], x0)
    return ab.sqrt() * x0 + (1 - ab.sqrt()) * m, (1 - ab).sqrt().expand_as(x0)


def _sample_inputs(
    x0: torch.Tensor, m: torch.Tensor, t: torch.Tensor, eps: torch.Tensor, schedule: NoiseSchedule
) -> None:
    """:func:`forward_sample`'s relation: :func:`forward_mean_std`'s, and ``eps`` of ``x0``'s shape."""
    _check_shape("eps", eps, tuple(x0.shape), "the shape of x0")
    _check_forward(x0, m, t, schedule)


@checked(
    skip_nested=True,  # forward_mean_std runs bare: this relation checked x0, m and t against the schedule
    x0=Array("... d", tensor=True),
    m=Array("... d", tensor=True),
    t=Array(integer=True, tensor=True),
    eps=Array("... d", tensor=True),
    relation=_sample_inputs,
)
def forward_sample(
    x0: torch.Tensor, m: torch.Tensor, t: torch.Tensor, eps: torch.Tensor, schedule: NoiseSchedule
) -> torch.Tensor:
    """``x_t = sqrt(abar_t) x_0 + (1 - sqrt(abar_t)) m + sqrt(1 - abar_t) eps``, eq. (dcdm-forward).

    Shapes as in :func:`forward_mean_std`; the noise ``eps`` has the shape of ``x0``.
    """
    mean, std = forward_mean_std(x0, m, t, schedule)
    return mean + std * eps


@checked(encoder_out=Array("... k", tensor=True))
def concentrations(encoder_out: torch.Tensor) -> torch.Tensor:
    """The Dirichlet concentrations ``alpha(x_0) = exp(h)`` of the encoder's outputs ``h`` ``(..., K)`` (clamped)."""
    return encoder_out.clamp(*LOG_ALPHA_RANGE).exp()


def _dirichlet_kl(alpha: torch.Tensor, prior: torch.Tensor | float) -> torch.Tensor:
    prior = torch.as_tensor(prior, dtype=alpha.dtype, device=alpha.device).expand_as(alpha)
    a0, b0 = alpha.sum(-1), prior.sum(-1)
    return (
        torch.lgamma(a0)
        - torch.lgamma(alpha).sum(-1)
        - torch.lgamma(b0)
        + torch.lgamma(prior).sum(-1)
        + ((alpha - prior) * (torch.digamma(alpha) - torch.digamma(a0)[..., None])).sum(-1)
    )


@checked(alpha=Array("... k", tensor=True, above=0.0))
def dirichlet_kl(alpha: torch.Tensor, prior: torch.Tensor | float) -> torch.Tensor:
    """``KL(Dir(alpha) || Dir(prior))`` in closed form over the last axis, eq. (dir-kl).

    ``KL = ln G(a_0) - sum ln G(a_k) - ln G(b_0) + sum ln G(b_k) + sum (a_k - b_k)(psi(a_k) - psi(a_0))``
    with ``a_0 = sum a_k`` and ``b_0 = sum b_k``; ``alpha`` ``(..., K)`` and ``prior`` hold concentrations
    ``> 0``; ``prior`` may be a number (a symmetric prior) or a tensor that broadcasts to ``alpha``.
    """
    if isinstance(prior, torch.Tensor):
        try:
            fits = torch.broadcast_shapes(tuple(prior.shape), tuple(alpha.shape)) == tuple(alpha.shape)
        except RuntimeError:
            fits = False
        if not fits:
            raise ArgumentError(
                f"prior must broadcast to the shape of alpha {tuple(alpha.shape)}, got {tuple(prior.shape)}"
            )
    _check_number_or_tensor("prior", prior, 0.0, strict=True)
    return _dirichlet_kl(alpha, prior)


def _check_softmax(softmax: torch.Tensor | bool, encoder_out: torch.Tensor) -> None:
    if isinstance(softmax, torch.Tensor):
        if softmax.dtype != torch.bool:
            raise ArgumentError(f"softmax must be True, False or a bool tensor, got dtype {softmax.dtype}")
        _check_prefix("softmax", softmax, encoder_out, "encoder_out")


@checked(skip_nested=True, encoder_out=Array("... k", tensor=True))
def concept_weights(encoder_out: torch.Tensor, softmax: torch.Tensor | bool = False) -> torch.Tensor:
    """Concept weights ``pi``: a reparameterised draw from ``Dir(alpha(x_0))`` (gradients flow through
    ``rsample``), or, for the softmax ablation, the deterministic ``softmax(h)``. ``softmax`` may be a
    boolean per leading index (one per ensemble member)."""
    _check_softmax(softmax, encoder_out)
    alpha = concentrations(encoder_out)
    pi = Dirichlet(alpha).rsample() if alpha.shape[-1] > 1 else torch.ones_like(alpha)
    soft = torch.as_tensor(softmax, device=pi.device)
    return torch.where(_bcast(soft, pi), encoder_out.softmax(-1), pi) if soft.any() else pi


def _loss_inputs(
    x0: torch.Tensor,
    encoder_out: torch.Tensor,
    centres: torch.Tensor,
    beta: torch.Tensor | float,
    softmax: torch.Tensor | bool,
) -> None:
    """:func:`dcdm_loss`'s relation: the leading axes of ``x0``, ``encoder_out``, ``centres`` and ``beta`` agree;
    ``beta >= 0``; ``softmax`` fits ``encoder_out``."""
    _check_shape("encoder_out", encoder_out, (*x0.shape[:-1], encoder_out.shape[-1]), "x0's leading axes, then K")
    if _centre_shape("encoder_out", encoder_out, centres) != tuple(x0.shape):
        raise ArgumentError(
            f"centres (shape {tuple(centres.shape)}) must have leading axes that broadcast to those of "
            f"x0 {tuple(x0.shape[:-2])}"
        )
    if isinstance(beta, torch.Tensor):
        _check_prefix("beta", beta, x0, "x0")
    _check_number_or_tensor("beta", beta, 0.0, strict=False)
    _check_softmax(softmax, encoder_out)


@checked(
    skip_nested=True,  # the loss's own steps are checked here: a training loop's calls run bare
    x0=Array("... b d", tensor=True),
    encoder_out=Array("... b k", tensor=True),
    centres=Array("... k d", tensor=True),
    prior=Positive(),
    relation=_loss_inputs,
)
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

    Shapes: ``x0 (..., B, D)``, ``encoder_out (..., B, K)``, ``centres (..., K, D)``; ``beta >= 0`` a number
    or one per leading index; ``prior > 0``. The loss averages over the batch ``B``.
    """
    pi = concept_weights(encoder_out, softmax)  # pi ~ Dir(alpha(x_0)), reparameterised
    m = pi @ centres  # m = sum_k pi_k c_k, the weighted centre
    t = torch.randint(schedule.n_steps, x0.shape[:-1], device=x0.device)  # t ~ U{0, ..., T-1}
    eps = torch.randn_like(x0)  # eps ~ N(0, I)
    x_t = forward_sample(x0, m, t, eps, schedule)  # eq. (dcdm-forward): the mean is shifted toward m
    reconstruction = ((eps - denoiser(x_t, t, m)) ** 2).mean(-1)  # || eps - eps_theta(x_t, t, m) ||^2 / D
    kl = _dirichlet_kl(concentrations(encoder_out), prior)  # KL(Dir(alpha(x_0)) || Dir(alpha_0)), eq. (dir-kl)
    beta = _bcast(torch.as_tensor(beta, device=x0.device, dtype=x0.dtype), kl)
    loss = (reconstruction + beta * kl).mean(-1)
    return loss, {"reconstruction": reconstruction.mean(-1), "kl": kl.mean(-1)}


@checked(x0=Array("... b d", tensor=True))
def ddpm_loss(x0: torch.Tensor, denoiser: Denoiser, schedule: NoiseSchedule) -> torch.Tensor:
    """Plain DDPM's simple loss ``E || eps - eps_theta(x_t, t) ||^2 / D`` (``m = 0``) on ``x0 (..., B, D)``,
    for comparison."""
    t = torch.randint(schedule.n_steps, x0.shape[:-1], device=x0.device)
    eps = torch.randn_like(x0)
    ab = _bcast(schedule.alpha_bars[t], x0)
    x_t = ab.sqrt() * x0 + (1 - ab).sqrt() * eps
    return ((eps - denoiser(x_t, t, torch.zeros_like(x0))) ** 2).mean(-1).mean(-1)


def _start_inputs(schedule: NoiseSchedule, m: torch.Tensor, x_start: torch.Tensor | None, t_start: int | None) -> None:
    """:func:`reverse_process`'s relation: ``x_start`` of ``m``'s shape, ``t_start`` a step of ``schedule``."""
    if x_start is not None:
        _check_shape("x_start", x_start, tuple(m.shape), "the shape of m")
    if t_start is not None:
        check_int("t_start", t_start, 0, schedule.n_steps - 1)


@torch.no_grad()
@checked(
    m=Array("... b d", tensor=True),
    x_start=Array("... b d", tensor=True),
    t_start=Int(0, MAX_DIFFUSION_STEPS - 1),
    relation=_start_inputs,
)
def reverse_process(
    denoiser: Denoiser,
    schedule: NoiseSchedule,
    m: torch.Tensor,
    *,
    x_start: torch.Tensor | None = None,
    t_start: int | None = None,
    noise: Callable[[tuple[int, ...]], torch.Tensor] | None = None,
) -> torch.Tensor:
    """Ancestral sampling given weighted centres ``m`` ``(..., B, D)``, eq. (dcdm-reverse).

    In ``y = x - m`` the forward process is DDPM's, so each step is DDPM's posterior step on ``y`` and
    ``x = y + m``. Starts from ``x_T ~ N(m, I)``, or from ``x_start`` (the shape of ``m``) at step
    ``t_start`` in ``[0, T)`` (interventions). ``noise(shape)`` draws the Gaussians (default ``torch.randn``).
    """
    draw = noise or (lambda shape: torch.randn(shape, device=m.device))
    t_start = schedule.n_steps - 1 if t_start is None else t_start
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


@checked(
    skip_nested=True,  # the forward draw and the reverse process get checked values and run bare
    x0=Array("... b d", tensor=True),
    pi=Array("... b k", tensor=True),
    pi_new=Array("... b k", tensor=True),
    centres=Array("... k d", tensor=True),
    t_edit=Int(0, MAX_DIFFUSION_STEPS - 1),
)
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

    ``x_0`` ``(..., B, D)`` is noised to step ``t_edit`` in ``[0, T)`` under its own centre ``m = pi C`` (weights
    ``pi`` ``(..., B, K)``, centres ``C`` ``(..., K, D)``); the mean shift is moved to the new centre
    ``m' = pi' C`` (``x'_t = x_t + (1 - sqrt(abar_t)) (m' - m)``, the same noise under the new concept's
    forward process), and the reverse process runs from there with ``m'``.
    """
    t_edit = check_int("t_edit", t_edit, 0, schedule.n_steps - 1)
    _check_shape("pi_new", pi_new, tuple(pi.shape), "the shape of pi")
    if _centre_shape("pi", pi, centres) != tuple(x0.shape):
        raise ArgumentError(
            f"pi (shape {tuple(pi.shape)}) and centres (shape {tuple(centres.shape)}) must give weighted centres "
            f"pi @ centres of the shape of x0 {tuple(x0.shape)}"
        )
    m, m_new = pi @ centres, pi_new @ centres
    t = torch.full(x0.shape[:-1], t_edit, device=x0.device, dtype=torch.long)
    x_t = forward_sample(x0, m, t, torch.randn_like(x0), schedule)
    x_t = x_t + (1 - schedule.alpha_bars[t_edit].sqrt()) * (m_new - m)
    return reverse_process(denoiser, schedule, m_new, x_start=x_t, t_start=t_edit)


@checked(pi=Array("... k", tensor=True), target=Array(integer=True, tensor=True))
def swap_weights(pi: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """``pi`` ``(..., K)`` with the weight of its top concept and of concept ``target`` exchanged (per row);
    ``target`` holds one concept in ``[0, K)`` per row (shape ``pi.shape[:-1]``)."""
    _check_shape("target", target, tuple(pi.shape[:-1]), "one concept per row of pi")
    if int(target.min()) < 0 or int(target.max()) >= pi.shape[-1]:
        raise ArgumentError(
            f"target must hold concepts in [0, {pi.shape[-1] - 1}], got [{int(target.min())}, {int(target.max())}]"
        )
    top = pi.argmax(-1, keepdim=True)
    tgt = target.view(*pi.shape[:-1], 1).to(top.device)
    out = pi.clone()
    out.scatter_(-1, top, pi.gather(-1, tgt))
    out.scatter_(-1, tgt, pi.gather(-1, top))
    return out


def check_prior(prior: float) -> float:
    """The symmetric Dirichlet prior ``alpha_0`` must be a positive number."""
    return check_positive("prior", prior)
