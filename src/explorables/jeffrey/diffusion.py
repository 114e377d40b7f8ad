"""A small DDPM in torch, time-dependent classifiers, and guided sampling (Jeffrey and classifier guidance).

Everything follows a ``device`` argument; random draws come from CPU ``torch.Generator`` objects
and are moved to the device, so a seed gives the same numbers on the CPU whatever else ran before.

* :class:`NoiseSchedule`: the cosine schedule of DDPM, ``x_t = sqrt(abar_t) x_0 + sqrt(1 - abar_t) eps``.
* :class:`TimeMLP`: an MLP on ``(x_t, features of t)``; it is the noise predictor ``eps_theta``,
  the time-dependent classifier ``c_t(s | x_t)`` and the ``log h_t`` network.
* :func:`fit`: one resumable training loop for all three.
* :func:`jeffrey_log_h` / :func:`classifier_log_prob`: the two guidance potentials.
* :func:`guided_epsilon` and :func:`sample`: ancestral sampling with the guided score, eq. (guided-eps).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn
from torch.nn import functional as F

from ..core.arguments import ArgumentError, Array, checked, package_callable
from ..core.checkpoint import Checkpointer, LoopState
from ..core.diffusion import MAX_DIFFUSION_STEPS, NoiseSchedule, time_features
from ..core.params import Float, Int, Positive, Tuple
from ..core.resources import check_memory
from ..core.validation import check_int

#: a guidance potential: ``(x_t, t) -> log h_t(x_t)`` per sample (shape ``(n,)``)
Potential = Callable[[torch.Tensor, int], torch.Tensor]
#: the largest guidance scale the sampler takes
MAX_SCALE = 1e3


@checked(
    d_in=Int(1, 10**7),
    d_out=Int(1, 10**7),
    n_steps=Int(1, MAX_DIFFUSION_STEPS),
    d_hidden=Int(1, 10**6),
    n_layers=Int(0, 1000),
    d_time=Int(2, 10**4),
)
class TimeMLP(nn.Module):
    """An MLP on ``[x_t, features(t)]`` with SiLU activations; ``d_out`` outputs.

    ``d_in`` is the size of a flattened input ``x_t``, ``n_steps`` the schedule's ``T`` (it scales the
    step features), ``d_time`` (even) the number of sinusoidal step features.
    """

    def __init__(self, d_in: int, d_out: int, n_steps: int, d_hidden: int = 128, n_layers: int = 3, d_time: int = 16):
        if d_time % 2:
            raise ArgumentError(f"d_time must be an even integer (sine and cosine features), got {d_time}")
        # an upper bound on the weights: first layer, hidden layers, output layer
        n_weights = (d_in + d_time + 1) * (d_hidden + d_out) + n_layers * (d_hidden + 1) * (d_hidden + d_out)
        check_memory({"TimeMLP weights (d_in, d_hidden, n_layers, d_out)": 4.0 * n_weights})
        super().__init__()
        self.n_steps, self.d_time = n_steps, d_time
        layers: list[nn.Module] = []
        width = d_in + d_time
        for _ in range(n_layers):
            layers += [nn.Linear(width, d_hidden), nn.SiLU()]
            width = d_hidden
        layers.append(nn.Linear(width, d_out))
        self.net = nn.Sequential(*layers)
        # the step features of every t in [0, n_steps), computed once (a hot path: every forward call)
        table = time_features(torch.arange(n_steps), n_steps, d_time)
        self.register_buffer("time_table", table, persistent=False)

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        x = x.flatten(1)
        return self.net(torch.cat([x, self.time_table[t]], dim=1))


@checked(skip_nested=True, n_steps=Int(1), lr=Positive())
def fit(
    model: nn.Module,
    batch_loss: Callable[[nn.Module, torch.Generator], torch.Tensor],
    *,
    n_steps: int,
    lr: float,
    generator: torch.Generator,
    checkpoint: Checkpointer | None = None,
    name: str = "",
) -> list[float]:
    """Adam on ``batch_loss(model, generator)`` for ``n_steps`` steps, with a cosine learning-rate decay.

    Resumable: with a ``checkpoint`` the loop stores the model, the optimiser, the generator and
    the step under ``name`` (throttled), and a resumed run continues from there. Returns the
    loss every 50 steps. The package's batch losses (:func:`denoiser_loss`, ...) run bare in the loop; a reader's
    ``batch_loss`` runs checked.
    """
    params = list(model.parameters())
    # fused Adam (one kernel for all parameters) where torch has it: about a fifth faster on our small networks
    fused = all(p.device.type in ("cpu", "cuda") for p in params)
    opt = torch.optim.Adam(params, lr=lr, fused=fused)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda k: 0.5 * (1 + math.cos(math.pi * min(k, n_steps) / n_steps)))
    loop = LoopState(checkpoint, name, modules={"model": model}, optimizers={"optimizer": opt},
                     schedulers={"scheduler": sched}, generators={"generator": generator})  # fmt: skip
    start, extra = loop.restore()
    losses = list(extra.get("losses", []))
    model.train()
    for step in range(start, n_steps):
        loss = batch_loss(model, generator)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        if step % 50 == 0:
            losses.append(float(loss.detach()))
        loop.save(step + 1, {"losses": losses})
    model.eval()
    return losses


def _batch(data: torch.Tensor, batch_size: int, schedule: NoiseSchedule, gen: torch.Generator):
    """A random batch of training points, steps and noises; the noised points ``x_t``."""
    device = data.device
    idx = torch.randint(len(data), (batch_size,), generator=gen).to(device)
    t = torch.randint(schedule.n_steps, (batch_size,), generator=gen).to(device)
    eps = torch.randn((batch_size, *data.shape[1:]), generator=gen).to(device)
    return idx, t, eps, schedule.noise(data[idx], t, eps)


def denoiser_loss(data: torch.Tensor, schedule: NoiseSchedule, batch_size: int):
    """DDPM's simple loss ``|| eps - eps_theta(x_t, t) ||^2`` on random batches of ``data``."""

    @package_callable  # fit runs it bare: its tensors are the package's own
    def loss(model: nn.Module, gen: torch.Generator) -> torch.Tensor:
        _, t, eps, x_t = _batch(data, batch_size, schedule, gen)
        return F.mse_loss(model(x_t, t), eps.flatten(1))

    return loss


def classifier_loss(data: torch.Tensor, labels: torch.Tensor, schedule: NoiseSchedule, batch_size: int):
    """Cross-entropy of a time-dependent classifier ``c_t(s | x_t)`` on noised ``data`` with labels ``s(x_0)``."""

    @package_callable  # fit runs it bare: its tensors are the package's own
    def loss(model: nn.Module, gen: torch.Generator) -> torch.Tensor:
        idx, t, _, x_t = _batch(data, batch_size, schedule, gen)
        return F.cross_entropy(model(x_t, t), labels[idx])

    return loss


def log_h_loss(data: torch.Tensor, weights: torch.Tensor, schedule: NoiseSchedule, batch_size: int):
    """Weighted logistic loss whose minimiser is ``f(x_t, t) = log E[w(x_0) | x_t] = log h_t(x_t)``, eq. (h-logistic).

    Each noised model sample counts once as a "positive" with weight ``w(x_0)`` and once as a
    "negative" with weight 1: ``w softplus(-f) + softplus(f)``, minimised pointwise by
    ``sigmoid(f) = h / (1 + h)``.
    """

    @package_callable  # fit runs it bare: its tensors are the package's own
    def loss(model: nn.Module, gen: torch.Generator) -> torch.Tensor:
        idx, t, _, x_t = _batch(data, batch_size, schedule, gen)
        f = model(x_t, t)[:, 0]
        return (weights[idx] * F.softplus(-f) + F.softplus(f)).mean()

    return loss


def _log_weights(log_w: torch.Tensor) -> None:
    """:func:`jeffrey_log_h`'s relation: log weights below ``+inf``, at least one finite."""
    if bool((log_w == math.inf).any()) or not bool(torch.isfinite(log_w).any()):
        raise ArgumentError("log_w must hold log weights < inf, at least one of them finite (w > 0 somewhere)")


@checked(logits=Array("... s", tensor=True), log_w=Array("s", finite=False, tensor=True), relation=_log_weights)
def jeffrey_log_h(logits: torch.Tensor, log_w: torch.Tensor) -> torch.Tensor:
    """``log h_t(x_t) = log sum_s c_t(s | x_t) w(s)`` from a classifier's logits, eq. (jeffrey-discrete).

    ``logits`` is ``(..., S)``, ``log_w`` ``(S,)``; ``log_w`` may hold ``-inf`` where the target puts no mass
    (``w = 0``), but not ``+inf`` and not only ``-inf``.
    """
    # c_t(s | x_t) = softmax(logits)_s, so log sum_s c_t(s|x_t) w(s) = LSE(logits + log w) - LSE(logits)
    return torch.logsumexp(logits + log_w, dim=-1) - torch.logsumexp(logits, dim=-1)


def _labels_of_logits(logits: torch.Tensor, labels: torch.Tensor) -> None:
    """:func:`classifier_log_prob`'s relation: each label one of the logits' classes."""
    if int(labels.min()) < 0 or int(labels.max()) >= logits.shape[1]:
        raise ArgumentError(f"labels must lie in [0, {logits.shape[1] - 1}] (one class of logits per sample)")


@checked(logits=Array("n s", tensor=True), labels=Array("n", integer=True, tensor=True), relation=_labels_of_logits)
def classifier_log_prob(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """``log c_t(y | x_t)`` for one label per sample: plain classifier guidance's potential, eq. (cg-eps).

    ``logits`` is ``(n, S)``, ``labels`` ``(n,)`` integers in ``[0, S)``.
    """
    return torch.log_softmax(logits, dim=-1).gather(1, labels[:, None])[:, 0]


def group_logits(logits: torch.Tensor, groups: torch.Tensor, n_groups: int) -> torch.Tensor:
    """Logits of a coarser statistic: ``log sum_{s in g} exp(logit_s)`` for each group ``g`` of cells."""
    out = torch.full((*logits.shape[:-1], n_groups), -math.inf, device=logits.device, dtype=logits.dtype)
    for g in range(n_groups):
        out[..., g] = torch.logsumexp(logits[..., groups == g], dim=-1)
    return out


def _guidance_inputs(eps: torch.Tensor, x_t: torch.Tensor, t: int, schedule: NoiseSchedule) -> None:
    """:func:`guided_epsilon`'s relation: ``eps`` of ``x_t``'s shape ``(n, ...)``, ``t`` a step of ``schedule``."""
    if tuple(eps.shape) != tuple(x_t.shape) or x_t.ndim == 0:
        raise ArgumentError(f"eps must have the shape of x_t {tuple(x_t.shape)} (n, ...), got {tuple(eps.shape)}")
    check_int("t", t, 0, schedule.n_steps - 1)


@checked(
    eps=Array(tensor=True),
    x_t=Array(tensor=True),
    t=Int(0, MAX_DIFFUSION_STEPS - 1),
    scale=Float(0.0, MAX_SCALE),
    relation=_guidance_inputs,
)
def guided_epsilon(
    eps: torch.Tensor, x_t: torch.Tensor, t: int, schedule: NoiseSchedule, potential: Potential, scale: float
) -> torch.Tensor:
    """The guided noise prediction of eq. (guided-eps): ``eps - scale sqrt(1 - abar_t) grad log h_t(x_t)``.

    ``eps_theta = -sqrt(1 - abar_t) grad log p_t``, so subtracting ``scale sqrt(1 - abar_t) grad log h_t``
    adds ``scale * grad log h_t`` to the score: ``grad log p'_t = grad log p_t + grad log h_t`` at scale 1.
    ``eps`` and ``x_t`` are ``(n, ...)``; ``t`` is a step in ``[0, T)``; ``scale`` in ``[0, 1000]``;
    ``potential(x, t)`` returns one value per sample, ``(n,)``.
    """
    with torch.enable_grad():
        x = x_t.detach().requires_grad_(True)
        value = potential(x, t)
        if not isinstance(value, torch.Tensor) or tuple(value.shape) != (len(x),):  # the potential may be a reader's
            raise ArgumentError(f"potential must return a tensor of shape ({len(x)},) (one value per sample)")
        (grad,) = torch.autograd.grad(value.sum(), x)  # grad_x log h_t(x_t), one row per sample
    return eps - scale * (1 - schedule.alpha_bars[t]).sqrt() * grad


@checked(skip_nested=True, n=Int(1, 10**8), shape=Tuple(Int(1, 10**7)), scale=Float(0.0, MAX_SCALE), clip=Positive())
@torch.no_grad()
def sample(
    denoiser: nn.Module,
    schedule: NoiseSchedule,
    n: int,
    shape: tuple[int, ...],
    *,
    generator: torch.Generator,
    potential: Potential | None = None,
    scale: float = 0.0,
    clip: float | None = None,
) -> torch.Tensor:
    """Ancestral DDPM sampling of ``n`` points of ``shape``, guided by ``potential`` at ``scale`` (0: unguided).

    ``clip`` clamps the final samples to ``[-clip, clip]`` (images live in ``[-1, 1]``); ``scale`` lies in
    ``[0, 1000]``.
    """
    check_memory({"samples and their noise (n x prod(shape))": 4.0 * 4 * n * math.prod(shape)})
    device = schedule.betas.device
    x = torch.randn((n, *shape), generator=generator).to(device)
    for t in reversed(range(schedule.n_steps)):
        tt = torch.full((n,), t, device=device, dtype=torch.long)
        eps = denoiser(x, tt).view_as(x)
        if potential is not None and scale > 0:
            eps = guided_epsilon(eps, x, t, schedule, potential, scale)  # bare here: sample checked its inputs
        beta, alpha, ab = schedule.betas[t], schedule.alphas[t], schedule.alpha_bars[t]
        mean = (x - beta / (1 - ab).sqrt() * eps) / alpha.sqrt()
        if t > 0:
            ab_prev = schedule.alpha_bars[t - 1]
            sigma = (beta * (1 - ab_prev) / (1 - ab)).sqrt()  # DDPM's posterior standard deviation
            x = mean + sigma * torch.randn(x.shape, generator=generator).to(device)
        else:
            x = mean
    return x.clamp(-clip, clip) if clip is not None else x


def time_potential(model: nn.Module, fn: Callable[[torch.Tensor], torch.Tensor]) -> Potential:
    """A potential ``(x_t, t) -> fn(model(x_t, t))`` (the model is evaluated at the sampler's step)."""

    def potential(x: torch.Tensor, t: int) -> torch.Tensor:
        tt = torch.full((len(x),), t, device=x.device, dtype=torch.long)
        return fn(model(x, tt))

    return potential
