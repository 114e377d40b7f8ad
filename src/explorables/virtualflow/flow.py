"""Conditional flow matching on STFT bins, its ODE sampler, reflow, and the regression baselines.

Every time-frequency bin of the virtual microphone's STFT (real and imaginary part: two numbers)
is generated from Gaussian noise by integrating a learned velocity field, conditioned on the real
microphones' bins shifted to the virtual position (eq. vf-delay, this frame and its neighbours),
the bin's frequency and the geometric weights of eq. (vf-pseudo). One small residual MLP
(:class:`FrameMLP`) with a filter-and-sum output head (:func:`mix_channels`, eq. vf-head) serves the
flow and, without the noisy input and the time, the supervised baseline and the control.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from ..core.arguments import ArgumentError, Array, checked
from ..core.checkpoint import Checkpointer, LoopState
from ..core.params import Choice, Float, Int

SOLVERS: tuple[str, ...] = ("euler", "heun")
#: the rules of the networks' sizes (the config's ranges: up to 8 real mics, 8192 wide, 32 blocks)
NET_RULES = dict(n_mics=Int(1, 64), d_cond=Int(1, 2**16), d_hidden=Int(1, 8192), n_layers=Int(1, 64))
#: training and sampling steps
STEPS = Int(1, 10**7)
#: an Adam learning rate
LR = Float(0.0, 1.0, low_inclusive=False)


def _check_cond_width(n_mics: int, d_cond: int) -> None:
    """The head of eq. (vf-head) reads ``2 n_mics`` aligned channels and ``n_mics`` weights from the condition."""
    if d_cond < 3 * n_mics:
        raise ArgumentError(f"d_cond must be >= 3 n_mics = {3 * n_mics} (channels and weights), got {d_cond}")


def _check_bins(net: nn.Module, cond: torch.Tensor, **frames: torch.Tensor | None) -> None:
    """The tensors a network reads: ``cond`` ``(B, net.d_cond)`` and frames ``(B, 2)``, on one device, one dtype."""
    for name, value in {"cond": cond, **frames}.items():
        if value is not None and not isinstance(value, torch.Tensor):
            raise ArgumentError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
        if value is not None and not value.is_floating_point():
            raise ArgumentError(f"{name} must be a float tensor, got dtype {value.dtype}")
        if value is not None and (value.device != cond.device or value.dtype != cond.dtype):
            raise ArgumentError(
                f"{name} must be on cond's device and of its dtype ({cond.device}, {cond.dtype}), "
                f"got {value.device}, {value.dtype}"
            )
    if cond.shape[1] != net.d_cond:
        raise ArgumentError(f"cond must have the network's d_cond = {net.d_cond} columns, got {tuple(cond.shape)}")
    weight = next(net.parameters())
    if weight.device != cond.device or weight.dtype != cond.dtype:
        raise ArgumentError(
            f"cond must be on the network's device and of its dtype ({weight.device}, {weight.dtype}), "
            f"got {cond.device}, {cond.dtype}"
        )


class FrameMLP(nn.Module):
    """A residual MLP with SiLU activations and layer norm: ``d_in -> d_hidden (x n_layers) -> d_out``."""

    def __init__(self, d_in: int, d_out: int, d_hidden: int = 256, n_layers: int = 3) -> None:
        super().__init__()
        self.inp = nn.Linear(d_in, d_hidden)
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.LayerNorm(d_hidden), nn.Linear(d_hidden, d_hidden), nn.SiLU()) for _ in range(n_layers)
        )
        self.out = nn.Linear(d_hidden, d_out)
        nn.init.zeros_(self.out.bias)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        h = self.inp(h)
        for block in self.blocks:
            h = h + block(h)
        return self.out(h)


def mix_channels(out: torch.Tensor, cond: torch.Tensor, n_mics: int) -> torch.Tensor:
    """The filter-and-sum head, eq. (vf-head): ``sum_m (w_m + g_m) a_m + r`` in complex arithmetic.

    ``out`` holds ``2 n_mics`` numbers (complex corrections ``g_m``) and then 2 (a residual ``r``);
    the first ``2 n_mics`` columns of ``cond`` are the aligned real channels ``a_m`` of this bin
    (real, imaginary per mic) and its last ``n_mics`` the geometric weights ``w_m`` of eq. (vf-pseudo).
    With ``g = r = 0`` the head *is* the pseudo-target. Returns ``(B, 2)``.
    """
    b = out.shape[0]
    g = out[:, : 2 * n_mics].reshape(b, n_mics, 2)
    w = cond[:, -n_mics:]
    a = cond[:, : 2 * n_mics].reshape(b, n_mics, 2)
    g_real, g_imag = w + g[..., 0], g[..., 1]
    real = (g_real * a[..., 0] - g_imag * a[..., 1]).sum(1)
    imag = (g_real * a[..., 1] + g_imag * a[..., 0]).sum(1)
    return torch.stack([real, imag], 1) + out[:, 2 * n_mics : 2 * n_mics + 2]


def _head(d_hidden: int, n_layers: int, d_in: int, n_mics: int) -> FrameMLP:
    """An MLP for :func:`mix_channels` whose output starts small (the head starts near the pseudo-target)."""
    mlp = FrameMLP(d_in, 2 * n_mics + 2, d_hidden, n_layers)
    with torch.no_grad():
        mlp.out.weight.mul_(0.1)
    return mlp


def time_features(t: torch.Tensor, n: int = 8) -> torch.Tensor:
    """Sinusoidal features of the flow time ``t`` in [0, 1]: ``(B, 2n)``."""
    freqs = torch.pi * 2.0 ** torch.arange(n, device=t.device, dtype=t.dtype)
    return torch.cat([torch.sin(t[:, None] * freqs), torch.cos(t[:, None] * freqs)], -1)


@checked(**NET_RULES)
class VelocityNet(nn.Module):
    """``v_theta(x_t, t | c)``: the velocity field of eq. (vf-ode) over one time-frequency bin.

    The network predicts the endpoint ``x1_hat(x_t, t | c)`` and the velocity is
    ``(x1_hat - x_t) / (1 - t)``, eq. (vf-velocity): on the straight path of eq. (vf-path) this is
    exactly the target velocity ``x1 - x0`` when ``x1_hat = x1``.
    """

    def __init__(self, n_mics: int, d_cond: int, d_hidden: int = 64, n_layers: int = 2) -> None:
        _check_cond_width(n_mics, d_cond)
        super().__init__()
        self.d_frame, self.d_cond, self.n_mics = 2, d_cond, n_mics
        self.mlp = _head(d_hidden, n_layers, 2 + d_cond + 16, n_mics)

    @checked(x_t=Array("b 2", tensor=True), t=Array("b", tensor=True), cond=Array("b d_cond", tensor=True))
    def endpoint(self, x_t: torch.Tensor, t: torch.Tensor, cond: torch.Tensor) -> torch.Tensor:
        """The predicted endpoint ``x1_hat`` of the path through ``x_t`` at time ``t``, eq. (vf-head): ``x_t``
        (B, 2), ``t`` (B,) in [0, 1] and ``cond`` (B, d_cond), all finite float tensors. :meth:`forward` and the
        training loss call :meth:`_endpoint` (no checks)."""
        if cond.shape[1] != self.d_cond:
            raise ArgumentError(f"cond must have shape (B, d_cond={self.d_cond}), got {tuple(cond.shape)}")
        for name, value in (("x_t", x_t), ("t", t), ("cond", cond)):
            if not value.is_floating_point():
                raise ArgumentError(f"{name} must be a float tensor, got dtype {value.dtype}")
        if bool((t < 0).any()) or bool((t > 1).any()):
            raise ArgumentError("t must hold flow times in [0, 1]")
        return self._endpoint(x_t, t, cond)

    def _endpoint(self, x_t: torch.Tensor, t: torch.Tensor, cond: torch.Tensor) -> torch.Tensor:
        return mix_channels(self.mlp(torch.cat([x_t, cond, time_features(t)], -1)), cond, self.n_mics)

    def forward(self, x_t: torch.Tensor, t: torch.Tensor, cond: torch.Tensor) -> torch.Tensor:
        return (self._endpoint(x_t, t, cond) - x_t) / (1 - t[:, None]).clamp_min(1e-3)  # eq. (vf-velocity)


@checked(**NET_RULES)
class Regressor(nn.Module):
    """``f_theta(c)``: one bin of the VM predicted directly from the condition, with the same head (the
    regression baselines)."""

    def __init__(self, n_mics: int, d_cond: int, d_hidden: int = 64, n_layers: int = 2) -> None:
        _check_cond_width(n_mics, d_cond)
        super().__init__()
        self.d_frame, self.d_cond, self.n_mics = 2, d_cond, n_mics
        self.mlp = _head(d_hidden, n_layers, d_cond, n_mics)

    def forward(self, cond: torch.Tensor) -> torch.Tensor:
        return mix_channels(self.mlp(cond), cond, self.n_mics)


@checked(x1=Array("b 2"), cond=Array("b d_cond"), x0=Array("b 2"), t=Array("b"))
def cfm_loss(net: VelocityNet, x1: torch.Tensor, cond: torch.Tensor, x0: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """Conditional flow matching on the straight path ``x_t = (1 - t) x0 + t x1`` (eq. vf-path), in the
    endpoint form of eq. (vf-cfm): ``|| x1_hat(x_t, t | c) - x1 ||^2``, which is the velocity loss
    ``|| v(x_t, t | c) - (x1 - x0) ||^2`` weighted by ``(1 - t)^2``. ``x1`` is the pseudo-target (or, in
    reflow, the base model's own sample from ``x0``); ``t`` lies in ``[0, 1]``."""
    _check_bins(net, cond, x1=x1, x0=x0, t=t)
    if not bool(((t >= 0) & (t <= 1)).all()):
        raise ArgumentError("t must hold flow times in [0, 1]")
    x_t = (1 - t[:, None]) * x0 + t[:, None] * x1  # eq. (vf-path)
    return (net._endpoint(x_t, t, cond) - x1).pow(2).mean()  # eq. (vf-cfm)


@checked(
    skip_nested=True,  # cfm_loss in the training loop runs bare: its inputs are checked here, once
    target=Array("b 2"),
    cond=Array("b d_cond"),
    n_steps=STEPS,
    batch_size=Int(1, 10**7),
    lr=LR,
    x0=Array("b 2"),
)
def train_flow(
    net: VelocityNet,
    target: torch.Tensor,
    cond: torch.Tensor,
    *,
    n_steps: int,
    batch_size: int,
    lr: float,
    generator: torch.Generator,
    x0: torch.Tensor | None = None,
    on_step: Callable[[int], None] | None = None,
    checkpoint: Checkpointer | None = None,
    name: str = "",
) -> list[float]:
    """Adam (gradient norm clipped at 1, cosine learning-rate decay) on :func:`cfm_loss` over random bins;
    fresh Gaussian ``x0`` each step, or the fixed couplings
    ``(x0[i], target[i])`` of reflow when ``x0`` is given. Returns the loss per step.

    With a ``checkpoint`` and a ``name``, the loop state (weights, optimiser, schedule, ``generator`` and the
    losses) is stored under ``name`` (throttled, and always at the end); a resumed run continues from it and
    ends with the same weights and the same ``generator`` state."""
    _check_bins(net, cond, target=target, x0=x0)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, n_steps)
    dev = target.device
    loop, start, losses = _loop_state(checkpoint, name, net, opt, sched, generator)
    for step in range(start, n_steps):
        idx = torch.randint(0, target.shape[0], (batch_size,), generator=generator).to(dev)
        noise = (
            x0[idx]
            if x0 is not None
            else torch.randn(batch_size, target.shape[1], generator=generator).to(dev, target.dtype)
        )
        t = torch.rand(batch_size, generator=generator).to(dev, target.dtype)
        loss = cfm_loss(net, target[idx], cond[idx], noise, t)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(net.parameters(), 1.0)  # a few loud bins must not throw the weights off
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
        _save(loop, step + 1, losses, n_steps)
        if on_step is not None:
            on_step(step)
    return losses


def _loop_state(checkpoint, name, net, opt, sched, generator) -> tuple[LoopState, int, list[float]]:
    """The loop's :class:`~explorables.core.checkpoint.LoopState` and the step and losses it resumes from (``0, []``
    without a stored state), its state restored."""
    loop = LoopState(checkpoint, name, modules={"net": net}, optimizers={"optimizer": opt},
                     schedulers={"scheduler": sched}, generators={"generator": generator})  # fmt: skip
    start, extra = loop.restore()
    return loop, start, [float(v) for v in extra.get("losses", [])]


def _save(loop: LoopState, step: int, losses: list[float], n_steps: int) -> None:
    """Store the loop's state after ``step`` steps: throttled during the loop, always at its end."""
    loop.save(step, lambda: {"losses": torch.tensor(losses, dtype=torch.float64)}, final=step == n_steps)


@torch.no_grad()
def fixed_loss(net: VelocityNet | Regressor, target: torch.Tensor, cond: torch.Tensor, *, n: int, seed: int) -> float:
    """The training loss on ``n`` fixed bins with fixed draws of ``x0`` and ``t`` (eq. vf-cfm for a flow, the
    mean squared error for a regressor): comparable before and after training, free of minibatch noise."""
    gen = torch.Generator().manual_seed(seed)
    idx = torch.randperm(target.shape[0], generator=gen)[:n].to(target.device)
    x1, c = target[idx], cond[idx]
    if isinstance(net, Regressor):
        return float((net(c) - x1).pow(2).mean())
    x0 = torch.randn(x1.shape, generator=gen).to(x1.device, x1.dtype)
    t = torch.rand(x1.shape[0], generator=gen).to(x1.device, x1.dtype)
    return float(cfm_loss(net, x1, c, x0, t))


@checked(target=Array("b 2"), cond=Array("b d_cond"), n_steps=STEPS, batch_size=Int(1, 10**7), lr=LR)
def train_regression(
    net: Regressor,
    target: torch.Tensor,
    cond: torch.Tensor,
    *,
    n_steps: int,
    batch_size: int,
    lr: float,
    generator: torch.Generator,
    checkpoint: Checkpointer | None = None,
    name: str = "",
) -> list[float]:
    """Adam on the mean squared error ``|| f(c) - target ||^2`` (the supervised baseline and the control);
    checkpointed under ``name`` like :func:`train_flow`."""
    _check_bins(net, cond, target=target)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, n_steps)
    dev = target.device
    loop, start, losses = _loop_state(checkpoint, name, net, opt, sched, generator)
    for step in range(start, n_steps):
        idx = torch.randint(0, target.shape[0], (batch_size,), generator=generator).to(dev)
        loss = (net(cond[idx]) - target[idx]).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
        _save(loop, step + 1, losses, n_steps)
    return losses


@checked(cond=Array("b d_cond"), x0=Array("b 2"), n_steps=Int(1, 10**5), solver=Choice(SOLVERS))
@torch.no_grad()
def sample(net: VelocityNet, cond: torch.Tensor, x0: torch.Tensor, n_steps: int, solver: str = "euler") -> torch.Tensor:
    """Integrate ``dx/dt = v(x, t | c)`` from ``x0`` at ``t = 0`` to ``t = 1`` in ``n_steps`` equal steps,
    eq. (vf-ode): Euler (one network evaluation per step) or Heun (two per step). Heun's second evaluation
    of the last step would fall on ``t = 1``, where the velocity of eq. (vf-velocity) divides by
    ``1 - t = 0``; that step is the explicit midpoint rule instead (also second order, two evaluations,
    the second at ``t = 1 - dt / 2``)."""
    _check_bins(net, cond, x0=x0)
    return _solve(net, cond, x0, n_steps, solver)


@torch.no_grad()
def _solve(
    net: VelocityNet,
    cond: torch.Tensor,
    x0: torch.Tensor,
    n_steps: int,
    solver: str,
    v0: torch.Tensor | None = None,
) -> torch.Tensor:
    """:func:`sample` without the checks. ``v0``, when given, is the first network evaluation ``v(x0, 0 | c)``
    (:func:`first_velocity`: the same for every step count and solver from the same ``x0``, ``cond`` and network,
    so solves from one ``x0`` at several step counts evaluate it once)."""
    x, dt = x0, 1.0 / n_steps
    for k in range(n_steps):
        t = torch.full((x.shape[0],), k * dt, dtype=x.dtype, device=x.device)
        v = v0 if k == 0 and v0 is not None else net(x, t, cond)
        if solver == "heun" and k < n_steps - 1:
            v = 0.5 * (v + net(x + dt * v, t + dt, cond))
        elif solver == "heun":  # the last step: midpoint, never evaluated at t = 1
            v = net(x + 0.5 * dt * v, t + 0.5 * dt, cond)
        x = x + dt * v
    return x


@torch.no_grad()
def first_velocity(net: VelocityNet, cond: torch.Tensor, x0: torch.Tensor) -> torch.Tensor:
    """``v(x0, 0 | c)``: the first evaluation of every solve from ``x0`` (:func:`_solve`'s ``v0``), computed as the
    solve computes it."""
    return net(x0, torch.full((x0.shape[0],), 0.0, dtype=x0.dtype, device=x0.device), cond)


def evaluations_per_sample(n_steps: int, solver: str = "euler") -> int:
    """Network evaluations one ODE solve costs (Heun: two per step)."""
    return n_steps * (2 if solver == "heun" else 1)


@checked(  # sample in the body runs bare: its arguments are checked here
    skip_nested=True, cond=Array("b d_cond"), n_steps=Int(1, 10**5), solver=Choice(SOLVERS), chunk=Int(1, 10**7)
)
def reflow_pairs(
    base: VelocityNet,
    cond: torch.Tensor,
    *,
    n_steps: int,
    generator: torch.Generator,
    solver: str = "euler",
    chunk: int = 4096,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Reflow's couplings (eq. vf-reflow): fresh noise ``x0`` and the base model's ODE solution ``x1 = ODE(x0 | c)``."""
    _check_bins(base, cond)
    x0 = torch.randn(cond.shape[0], base.d_frame, generator=generator).to(cond.device, cond.dtype)
    x1 = torch.cat(
        [
            sample(base, cond[i : i + chunk], x0[i : i + chunk], n_steps, solver)
            for i in range(0, cond.shape[0], chunk)
        ]
    )
    return x0, x1


def parameter_count(net: nn.Module) -> int:
    """Number of trainable parameters."""
    return sum(p.numel() for p in net.parameters() if p.requires_grad)
