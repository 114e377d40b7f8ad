"""The networks: a concept encoder ``x_0 -> log alpha(x_0)`` and a noise predictor ``eps_theta(x_t, t, m)``.

Two sizes, one interface (flat vectors in, flat vectors out): MLPs for the 2-D mixtures and the
8x8 digits, and a small CNN encoder with a U-Net noise predictor for 32x32 colour images at paper
scale (the weighted centre ``m`` is an image too, and enters the U-Net as extra input channels).

:class:`Ensemble` trains several copies side by side (``torch.func.vmap`` over stacked parameters):
the seeds and the ablations of one experiment are one batched model, so on a CPU they cost little
more than one.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence

import torch
from torch import nn
from torch.func import functional_call, stack_module_state, vmap

from ..core.diffusion import time_features


def mlp(d_in: int, d_out: int, d_hidden: int, n_layers: int) -> nn.Sequential:
    """``n_layers`` hidden SiLU layers of width ``d_hidden``, then a linear output."""
    layers: list[nn.Module] = []
    width = d_in
    for _ in range(n_layers):
        layers += [nn.Linear(width, d_hidden), nn.SiLU()]
        width = d_hidden
    layers.append(nn.Linear(width, d_out))
    return nn.Sequential(*layers)


def stacked_mlp(params: dict[str, torch.Tensor], prefix: str, n_linear: int, x: torch.Tensor) -> torch.Tensor:
    """The MLP of :func:`mlp` for every member at once, from stacked parameters ``{prefix}.{2i}.weight``
    ``(E, out, in)`` and ``.bias`` ``(E, out)``; ``x`` is ``(E, ..., in)``.

    One batched matrix product per layer (``baddbmm``): the same arithmetic as mapping ``nn.Linear`` over
    the members with ``vmap``, bit for bit on the CPU (tested), without its per-call dispatch."""
    lead = x.shape[:-1]
    h = x.reshape(lead[0], -1, x.shape[-1])
    for i in range(n_linear):
        weight, bias = params[f"{prefix}.{2 * i}.weight"], params[f"{prefix}.{2 * i}.bias"]
        h = torch.baddbmm(bias.unsqueeze(1), h, weight.transpose(1, 2))
        if i < n_linear - 1:
            h = nn.functional.silu(h)
    return h.reshape(*lead, h.shape[-1])


class MLPEncoder(nn.Module):
    """The concept encoder on flat inputs: ``x_0 -> h``, with ``alpha(x_0) = exp(h)`` (``K`` outputs)."""

    def __init__(self, d_data: int, n_concepts: int, d_hidden: int = 128, n_layers: int = 2):
        super().__init__()
        self.net = mlp(d_data, n_concepts, d_hidden, n_layers)
        self.n_linear = n_layers + 1

    def forward(self, x0: torch.Tensor) -> torch.Tensor:
        return self.net(x0)

    def stacked_forward(self, params: dict[str, torch.Tensor], x0: torch.Tensor) -> torch.Tensor:
        """:meth:`forward` of every member of an :class:`Ensemble` (inputs with a leading member axis)."""
        return stacked_mlp(params, "net", self.n_linear, x0)


class MLPDenoiser(nn.Module):
    """``eps_theta(x_t, t, m)``: an MLP on ``[x_t, m, features(t)]``."""

    def __init__(self, d_data: int, n_steps: int, d_hidden: int = 128, n_layers: int = 3, d_time: int = 16):
        super().__init__()
        self.n_steps, self.d_time = n_steps, d_time
        self.net = mlp(2 * d_data + d_time, d_data, d_hidden, n_layers)
        self.n_linear = n_layers + 1

    def forward(self, x_t: torch.Tensor, t: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
        return self.net(torch.cat([x_t, m, time_features(t, self.n_steps, self.d_time)], dim=-1))

    def stacked_forward(
        self, params: dict[str, torch.Tensor], x_t: torch.Tensor, t: torch.Tensor, m: torch.Tensor
    ) -> torch.Tensor:
        """:meth:`forward` of every member of an :class:`Ensemble` (inputs with a leading member axis)."""
        features = torch.cat([x_t, m, time_features(t, self.n_steps, self.d_time)], dim=-1)
        return stacked_mlp(params, "net", self.n_linear, features)


class ConvEncoder(nn.Module):
    """The concept encoder for ``channels x size x size`` images given as flat vectors."""

    def __init__(self, channels: int, size: int, n_concepts: int, width: int = 64):
        super().__init__()
        self.shape = (channels, size, size)
        self.net = nn.Sequential(
            nn.Conv2d(channels, width, 3, 2, 1),
            nn.SiLU(),
            nn.Conv2d(width, 2 * width, 3, 2, 1),
            nn.SiLU(),
            nn.Conv2d(2 * width, 2 * width, 3, 2, 1),
            nn.SiLU(),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
            nn.Linear(2 * width, n_concepts),
        )

    def forward(self, x0: torch.Tensor) -> torch.Tensor:
        lead = x0.shape[:-1]
        return self.net(x0.reshape(-1, *self.shape)).reshape(*lead, -1)


class _ResBlock(nn.Module):
    def __init__(self, c_in: int, c_out: int, d_time: int):
        super().__init__()
        self.norm1, self.conv1 = nn.GroupNorm(8, c_in), nn.Conv2d(c_in, c_out, 3, padding=1)
        self.norm2, self.conv2 = nn.GroupNorm(8, c_out), nn.Conv2d(c_out, c_out, 3, padding=1)
        self.time = nn.Linear(d_time, c_out)
        self.skip = nn.Conv2d(c_in, c_out, 1) if c_in != c_out else nn.Identity()

    def forward(self, x: torch.Tensor, temb: torch.Tensor) -> torch.Tensor:
        h = self.conv1(nn.functional.silu(self.norm1(x))) + self.time(temb)[:, :, None, None]
        return self.skip(x) + self.conv2(nn.functional.silu(self.norm2(h)))


class UNet(nn.Module):
    """A two-level U-Net ``eps_theta(x_t, t, m)`` for flat ``channels x size x size`` images; ``m`` is
    concatenated to ``x_t`` as ``channels`` extra input channels."""

    def __init__(self, channels: int, size: int, n_steps: int, width: int = 64, d_time: int = 64):
        super().__init__()
        self.shape, self.n_steps, self.d_time = (channels, size, size), n_steps, d_time
        self.temb = nn.Sequential(nn.Linear(d_time, d_time), nn.SiLU(), nn.Linear(d_time, d_time))
        self.inp = nn.Conv2d(2 * channels, width, 3, padding=1)
        self.down1, self.down2 = _ResBlock(width, width, d_time), _ResBlock(width, 2 * width, d_time)
        self.mid = _ResBlock(2 * width, 2 * width, d_time)
        self.up2, self.up1 = _ResBlock(4 * width, width, d_time), _ResBlock(2 * width, width, d_time)
        self.out = nn.Sequential(nn.GroupNorm(8, width), nn.SiLU(), nn.Conv2d(width, channels, 3, padding=1))

    def forward(self, x_t: torch.Tensor, t: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
        lead = x_t.shape[:-1]
        x = torch.cat([x_t.reshape(-1, *self.shape), m.reshape(-1, *self.shape)], dim=1)
        temb = self.temb(time_features(t.reshape(-1), self.n_steps, self.d_time))
        h1 = self.down1(self.inp(x), temb)
        h2 = self.down2(nn.functional.avg_pool2d(h1, 2), temb)
        h = self.mid(h2, temb)
        h = self.up2(torch.cat([h, h2], 1), temb)
        h = self.up1(torch.cat([nn.functional.interpolate(h, scale_factor=2.0), h1], 1), temb)
        return self.out(h).reshape(*lead, -1)


class Ensemble(nn.Module):
    """``len(seeds)`` copies of ``make()``, each initialised from its own seed, evaluated together.

    Inputs carry a leading member dimension; ``torch.func.vmap`` maps the one module over the stacked
    parameters, so the members are independent models that share nothing but the batched arithmetic.
    Modules with a ``stacked_forward(params, *inputs)`` (the MLPs) compute it directly instead.
    Building it seeds torch's global generator with each member's seed in turn (the draws that follow
    are then fixed by the last seed, so a run stays reproducible from its base seed).
    """

    def __init__(self, make: Callable[[], nn.Module], seeds: Sequence[int], device: str | torch.device = "cpu"):
        super().__init__()
        members = []
        for s in seeds:
            torch.manual_seed(int(s))
            members.append(make().to(device))
        params, buffers = stack_module_state(members)
        self.params = nn.ParameterDict({k.replace(".", "__"): nn.Parameter(v) for k, v in params.items()})
        self._buffers_stacked = buffers
        self._base = [copy.deepcopy(members[0]).to("meta")]  # a list: not registered as a submodule
        self.n_members = len(seeds)

    def stacked(self) -> dict[str, torch.Tensor]:
        return {k.replace("__", "."): v for k, v in self.params.items()}

    def forward(self, *args: torch.Tensor) -> torch.Tensor:
        base = self._base[0]
        if hasattr(base, "stacked_forward") and not self._buffers_stacked:
            # the MLPs: one batched product per layer instead of vmap (same numbers, less dispatch)
            n = self.n_members
            if all(a.dim() >= 2 and a.shape[0] == n for a in args):
                return base.stacked_forward(self.stacked(), *args)

        def one(p: dict, b: dict, *a: torch.Tensor) -> torch.Tensor:
            return functional_call(base, (p, b), a)

        return vmap(one)(self.stacked(), self._buffers_stacked, *args)

    def member(self, index: int) -> Callable[..., torch.Tensor]:
        """Member ``index`` as a plain function of unbatched inputs."""
        base = self._base[0]
        p = {k: v[index] for k, v in self.stacked().items()}
        b = {k: v[index] for k, v in self._buffers_stacked.items()}
        return lambda *a: functional_call(base, (p, b), a)
