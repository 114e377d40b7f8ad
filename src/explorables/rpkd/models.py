"""Teacher and students as *ensembles*: many independent networks trained side by side.

Every layer holds one set of weights per member (``M`` members): a member is one (method, seed)
arm of the experiment, so all arms train in one batched forward and backward pass while staying
independent (no weight or gradient is shared; the loss is a sum over members). Inputs and
outputs carry the member axis first: images ``(M, B, 1, H, W)``.

* :class:`CNN`: the teacher (and the narrow-CNN student): 3x3 convolutions, ReLU, one 2x2 max-pool;
  its last feature map is a ``(M, B, c, h, w)`` grid.
* :class:`Mixer`: an MLP-mixer-like student (tokens of ``patch x patch`` pixels, a token-mixing
  and a channel-mixing MLP); its last features are a token sequence ``(M, B, T, c)``.

Both return ``(logits, features, stage1)``: ``stage1`` is the pooled output of the first stage,
which OFA's intermediate exit head reads.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from ..core.arguments import checked
from ..core.params import Bool, Choice, Int, Rule
from ..core.resources import check_memory

STUDENTS: tuple[str, ...] = ("mixer", "cnn")
#: what the ensemble builders accept
MEMBERS = Int(1, 4096)
CLASSES = Int(2, 1000)
WIDTH = Int(1, 512)
DEVICES = ("cpu", "cuda", "mps")
SEED_MAX = 2**62


@dataclass(frozen=True, repr=False)
class Seed(Rule):
    """A seed of a torch generator: an integer in ``[0, 2**62]`` (the run derives seeds as ``seed + offset``, so a
    config's largest seed, ``2**32 - 1``, plus an offset is still one)."""

    def check(self, name: str, value: Any) -> int:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= int(value) <= SEED_MAX:
            raise ValueError(f"{name} must be {self.describe()}, got {value!r}")
        return int(value)

    def describe(self) -> str:
        return "an integer seed in [0, 2**62]"

    def bad_values(self) -> list[Any]:
        return ["seven", 2.5, True, -1, SEED_MAX + 1]


SEED = Seed()


def check_device(name: str, device: torch.device | str) -> torch.device:
    """A ``torch.device``, or a name ``cpu``, ``cuda``, ``cuda:N`` or ``mps``, that this machine has."""
    text = str(device) if isinstance(device, torch.device) else device
    base, _, index = text.partition(":") if isinstance(text, str) else ("", "", "")
    if base not in DEVICES or (index and not (base == "cuda" and index.isdigit())):
        raise ValueError(f"{name} must be a torch.device or one of 'cpu', 'cuda', 'cuda:N', 'mps', got {device!r}")
    if base == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"{name}={device!r} was requested but torch sees no CUDA GPU")
    if base == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        raise ValueError(f"{name}={device!r} was requested but MPS is not available")
    return device if isinstance(device, torch.device) else torch.device(device)


def _weights_bytes(n_members: int, widths: tuple[int, ...], n_classes: int) -> int:
    """Bytes of an ensemble's 3x3 convolutions over ``widths`` channels and its head (with Adam's two moments)."""
    params = sum(9 * a * b + b for a, b in itertools.pairwise(widths)) + widths[-1] * (n_classes + 1)
    return 4 * 4 * n_members * params


class EnsembleLinear(nn.Module):
    """``M`` independent linear maps: ``(M, ..., d_in) -> (M, ..., d_out)``."""

    def __init__(self, n_members: int, d_in: int, d_out: int, generator: torch.Generator):
        super().__init__()
        bound = 1.0 / math.sqrt(d_in)
        self.weight = nn.Parameter((torch.rand(n_members, d_in, d_out, generator=generator) * 2 - 1) * bound)
        self.bias = nn.Parameter((torch.rand(n_members, d_out, generator=generator) * 2 - 1) * bound)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        flat = x.reshape(shape[0], -1, shape[-1])
        out = torch.baddbmm(self.bias[:, None, :], flat, self.weight)
        return out.reshape(*shape[:-1], out.shape[-1])


class EnsembleConv2d(nn.Module):
    """``M`` independent 3x3 convolutions (padding 1), computed as one grouped convolution."""

    def __init__(self, n_members: int, c_in: int, c_out: int, generator: torch.Generator):
        super().__init__()
        bound = 1.0 / math.sqrt(c_in * 9)
        self.n_members = n_members
        self.weight = nn.Parameter((torch.rand(n_members * c_out, c_in, 3, 3, generator=generator) * 2 - 1) * bound)
        self.bias = nn.Parameter((torch.rand(n_members * c_out, generator=generator) * 2 - 1) * bound)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        m, b, c, h, w = x.shape
        flat = x.permute(1, 0, 2, 3, 4).reshape(b, m * c, h, w)
        out = F.conv2d(flat, self.weight, self.bias, padding=1, groups=self.n_members)
        return out.reshape(b, m, -1, h, w).permute(1, 0, 2, 3, 4)


class EnsembleBatchNorm(nn.Module):
    """``M`` independent batch normalisations of ``c`` channels, ``(M, B, c, h, w) -> (M, B, c, h, w)``: per member
    and channel, the statistics of the batch and the locations while training, running statistics (momentum 0.1)
    in ``eval()`` mode; a learned scale and shift (init 1 and 0). ``momentum`` (0.1) is the weight of a batch in
    the running statistics; 1.0 makes them those of the next batch alone (:func:`recompute_batch_norm`)."""

    def __init__(self, n_members: int, channels: int):
        super().__init__()
        self.momentum = 0.1
        self.weight = nn.Parameter(torch.ones(n_members * channels))
        self.bias = nn.Parameter(torch.zeros(n_members * channels))
        self.register_buffer("running_mean", torch.zeros(n_members * channels))
        self.register_buffer("running_var", torch.ones(n_members * channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        m, b, c, h, w = x.shape
        flat = x.permute(1, 0, 2, 3, 4).reshape(b, m * c, h, w)
        out = F.batch_norm(flat, self.running_mean, self.running_var, self.weight, self.bias, training=self.training,
                           momentum=self.momentum, eps=1e-5)
        return out.reshape(b, m, c, h, w).permute(1, 0, 2, 3, 4)


@torch.no_grad()
def recompute_batch_norm(model: nn.Module, images: torch.Tensor) -> None:
    """Replace the running statistics of every :class:`EnsembleBatchNorm` of ``model`` by those of ``images``
    (``(M, N, 1, H, W)``, each member its own set) in one pass: the statistics a trained network is evaluated
    with are then those of its final weights on its whole training set, not a moving average of the last
    batches, taken while the weights still moved. Leaves ``model`` in ``eval()`` mode; weights are unchanged."""
    norms = [m for m in model.modules() if isinstance(m, EnsembleBatchNorm)]
    if not norms:
        model.eval()
        return
    model.train()
    for m in norms:
        m.momentum = 1.0
    try:
        model(images)
    finally:
        for m in norms:
            m.momentum = 0.1
        model.eval()


def _pool2(x: torch.Tensor) -> torch.Tensor:
    m, b, c, h, w = x.shape
    return F.max_pool2d(x.reshape(m * b, c, h, w), 2).reshape(m, b, c, h // 2, w // 2)


class CNN(nn.Module):
    """conv(1->c1), conv(c1->c1), max-pool, conv(c1->c2): a ``(c2, H/2, W/2)`` feature map, pooled to logits.
    ``norm``: a batch normalisation between the last convolution and its ReLU (the teacher's, so that no channel
    of its feature map dies: ``benchmarks/rpkd_teacher_transfer_rule.md``)."""

    def __init__(self, n_members: int, n_classes: int, c1: int, c2: int, generator: torch.Generator,
                 norm: bool = False):
        super().__init__()
        self.conv1 = EnsembleConv2d(n_members, 1, c1, generator)
        self.conv2 = EnsembleConv2d(n_members, c1, c1, generator)
        self.conv3 = EnsembleConv2d(n_members, c1, c2, generator)
        self.norm3 = EnsembleBatchNorm(n_members, c2) if norm else nn.Identity()
        self.head = EnsembleLinear(n_members, c2, n_classes, generator)
        self.d_feature = c2

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        h = F.relu(self.conv1(x))
        stage1 = h.mean(dim=(-2, -1))
        h = _pool2(F.relu(self.conv2(h)))
        features = F.relu(self.norm3(self.conv3(h)))  # (M, B, c2, h, w)
        return self.head(features.mean(dim=(-2, -1))), features, stage1


class Mixer(nn.Module):
    """An MLP-mixer with one block: patch embedding, token-mixing MLP, channel-mixing MLP (pre-LayerNorm)."""

    def __init__(
        self, n_members: int, n_classes: int, d_model: int, image_size: int, patch: int, generator: torch.Generator
    ):
        super().__init__()
        self.patch = patch
        n_tokens = (image_size // patch) ** 2
        self.embed = EnsembleLinear(n_members, patch * patch, d_model, generator)
        self.token_mlp1 = EnsembleLinear(n_members, n_tokens, n_tokens, generator)
        self.token_mlp2 = EnsembleLinear(n_members, n_tokens, n_tokens, generator)
        self.channel_mlp1 = EnsembleLinear(n_members, d_model, 2 * d_model, generator)
        self.channel_mlp2 = EnsembleLinear(n_members, 2 * d_model, d_model, generator)
        self.head = EnsembleLinear(n_members, d_model, n_classes, generator)
        self.d_feature = d_model

    def tokens(self, x: torch.Tensor) -> torch.Tensor:
        """Non-overlapping ``patch x patch`` patches, row-major: ``(M, B, 1, H, W) -> (M, B, T, patch^2)``."""
        m, b, _, h, w = x.shape
        p = self.patch
        t = x.reshape(m, b, h // p, p, w // p, p).permute(0, 1, 2, 4, 3, 5)
        return t.reshape(m, b, (h // p) * (w // p), p * p)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        h = self.embed(self.tokens(x))  # (M, B, T, d)
        stage1 = h.mean(dim=2)
        mixed = F.layer_norm(h, h.shape[-1:]).transpose(-1, -2)  # (M, B, d, T)
        h = h + self.token_mlp2(F.gelu(self.token_mlp1(mixed))).transpose(-1, -2)
        h = h + self.channel_mlp2(F.gelu(self.channel_mlp1(F.layer_norm(h, h.shape[-1:]))))
        return self.head(h.mean(dim=2)), h, stage1


@checked(n_members=MEMBERS, n_classes=CLASSES, width=WIDTH, seed=SEED, norm=Bool())
def make_teacher(n_members: int, n_classes: int, width: int, seed: int, device: torch.device | str = "cpu",
                 norm: bool = True) -> CNN:
    """The CNN teacher ensemble (channels ``width`` then ``2 * width``; ``norm``: batch normalisation before the
    last ReLU)."""
    device = check_device("device", device)
    check_memory({"teacher weights (n_members x width^2)": _weights_bytes(n_members, (1, width, width, 2 * width),
                                                                          n_classes)})
    return CNN(n_members, n_classes, width, 2 * width, torch.Generator().manual_seed(seed), norm).to(device)


@checked(kind=Choice(STUDENTS), n_members=MEMBERS, n_classes=CLASSES, width=WIDTH, seed=SEED, image_size=Int(2, 64))
def make_student(
    kind: str, n_members: int, n_classes: int, width: int, seed: int, image_size: int = 8,
    device: torch.device | str = "cpu",
) -> nn.Module:
    """The student ensemble: ``'mixer'`` (tokens of 2x2 pixels, ``d_model = width``) or ``'cnn'`` (narrow CNN)."""
    device = check_device("device", device)
    if kind == "mixer" and image_size % 2:
        raise ValueError(f"image_size must be even for the mixer student (2x2-pixel tokens), got {image_size}")
    n_tokens = (image_size // 2) ** 2
    check_memory({"student weights (n_members x width^2, image_size^4)": 16 * n_members * (
        2 * n_tokens**2 + 4 * width**2 + (4 + n_classes) * width + 9 * width**2)})
    g = torch.Generator().manual_seed(seed)
    if kind == "mixer":
        return Mixer(n_members, n_classes, width, image_size, 2, g).to(device)
    return CNN(n_members, n_classes, max(1, width // 2), width, g).to(device)
