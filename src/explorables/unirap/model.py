"""The model, as an ensemble: every member (a regime, a label count, a seed, an architecture) has its own weights and
all members run in one batched forward pass (grouped convolutions, batched matrix products).

Reconstructed (the abstract names the parts, not their design): a CNN image encoder; learned word
embeddings for the instruction; a learnable interface token ``[AFF]``, fused with the
instruction's mean embedding, that attends (with the instruction's words) over the image tokens
through a few transformer decoder layers; and the Unified Affordance Decoder's three heads on the
decoded ``[AFF]`` token ``q``: a box head (the centroid of a detection map ``softmax_p <W_b q,
F_pixel>`` plus a size), a mask head ``sigmoid(<W_m q, F_pixel>)`` (the LISA/SAM pattern) and a pose
head that reads the *mask*: the mask-weighted pixel features, the mask's centroid and second
moments, with ``q``. The mask the pose reads passes no gradient back (a stop-gradient): the pose
loss does not reach the mask through the mask's weights ``a(p)``; it still reaches the shared token
``q`` (which the pose head also reads) and the pixel features ``F(p)`` the mask is computed from.

Architectures (``arch``): ``"unified"`` (the above), ``"pose_direct"`` (the same, but the pose
head reads the same statistics -- pooled features, centroid, moments, long axis -- of an attention
map of its own, ``softmax_p <W_p q, F_pixel>``, not of the mask: the ablation removes the
*segmentation*, not the geometry) and ``"separate"`` (three independent decoders, one interface
token each, for box, mask and pose; the pose head reads the arm's own *predicted mask*, the mask
decoder's ``sigmoid(<W_m q_mask, F_pixel>)``, through the same stop-gradient as the unified arm, with
the pose decoder's token ``q_pose``: a pipeline, segmentation then pose, as a reviewer's fairness fix
made it, so that "the pose reads a predicted mask" holds in both arms). The arms ``"unified"`` and
``"separate"`` differ only in one shared decoder against three; the pose loss trains no weight of the
mask in any arm. The
forward pass takes the image and the instruction's word ids only; ``pose_mask`` (the positive
control of the experiment) replaces the mask the pose reads.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from ..core.arguments import ArgumentError, Array, checked
from ..core.params import Int, Tuple

ARCHS: tuple[str, ...] = ("unified", "pose_direct", "separate")
#: the mask head's bias at initialisation: the logit of the fraction of pixels a tool covers in the parsing scenes,
#: where the mask is first trained (0.079 in 300 scenes; log(0.079 / 0.921) = -2.46, rounded), so that every pixel
#: starts as "probably background" rather than at one half: the prior initialisation of dense detection heads
#: (Lin et al. 2017, "Focal loss for dense object detection"). Started at 0, the bias had stayed near 0 in trained
#: models (-0.5 to +0.3), so the pixel features had to carry the background themselves; chosen on tuning base seeds
#: 100-103 (issue 41, sixth pass), by a rule fixed before those runs
MASK_BIAS_INIT = -2.45
#: the slope, below zero, of the pixel features' last activation (a leaky ReLU): with a plain ReLU, a quarter to a
#: third of the 16 pixel-feature channels ended inactive (zero on over 99 % of the pixels of 50 test scenes) in
#: trained curriculum models, and the more channels died the weaker the model (correlation -0.3 to -0.4 between the
#: fraction of dead channels and the margin over the competence bars, in 160 models of two rejected changes); a
#: channel that is negative everywhere still passes a tenth of its gradient and can come back. Chosen on tuning base
#: seeds 100-107 (80 curriculum models at 512 labels, against zero-initialised mask weights and averaged weights)
#: by a rule fixed before the runs (issue 41, seventh pass); it costs about 1 ms per training step of the
#: 15-model ensemble (about 0.4 s a book run)
PIXEL_SLOPE = 0.1


def _init(gens: list[torch.Generator], shape: tuple[int, ...], scale: float) -> nn.Parameter:
    """One parameter of shape ``(members, *shape)``, member ``m`` drawn from its own generator."""
    return nn.Parameter(torch.stack([torch.randn(shape, generator=g) * scale for g in gens]))


def _zeros(n: int, shape: tuple[int, ...]) -> nn.Parameter:
    return nn.Parameter(torch.zeros((n, *shape)))


class _Unfold(torch.autograd.Function):
    """``F.unfold(t, k, padding=padding, stride=stride)`` (dilation 1) as one strided copy of the (padded) input:
    on a CPU, PyTorch's im2col is several times slower for these small images (the 3 x 3 pixel convolution at full
    resolution above all). Its gradient is ``F.unfold``'s own, ``F.fold`` (col2im) with the same arguments, so
    values and gradients are ``F.unfold``'s to the bit (a copy moves values and adds none)."""

    @staticmethod
    def forward(ctx, t: torch.Tensor, k: int, padding: int, stride: int) -> torch.Tensor:
        n, c, h, w = t.shape
        ctx.geometry = (h, w), k, padding, stride
        tp = F.pad(t, (padding,) * 4) if padding else t
        h_out, w_out = (h + 2 * padding - k) // stride + 1, (w + 2 * padding - k) // stride + 1
        s = tp.stride()
        # (n, c, ki, kj, i, j) -> tp[n, c, i * stride + ki, j * stride + kj]: F.unfold's channel order (c, ki, kj)
        view = tp.as_strided((n, c, k, k, h_out, w_out), (s[0], s[1], s[2], s[3], s[2] * stride, s[3] * stride))
        return view.reshape(n, c * k * k, h_out * w_out)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        size, k, padding, stride = ctx.geometry
        return F.fold(grad, size, k, padding=padding, stride=stride), None, None, None


def unfold(t: torch.Tensor, k: int, padding: int, stride: int) -> torch.Tensor:
    """``F.unfold(t, k, padding=padding, stride=stride)`` of a 4-d ``t``, the same numbers and gradient, faster on a
    CPU (:class:`_Unfold`)."""
    return _Unfold.apply(t, k, padding, stride)


class _AddContext(torch.autograd.Function):
    """``local (B, C, g, 4, g, 4) + context[:, :, :, None, :, None]`` (``context`` (B, C, g, g): each image token's
    context added to its 4 x 4 pixels), with the context widened along the rows first: the broadcast over two
    axes of four is a slow loop on a CPU. The sums are the same additions, and the gradient is the one autograd
    gives the broadcast (``sum_to``: a sum over the two broadcast axes, kept): on this book's CPU and for the
    contiguous gradient the model passes, the same numbers to the bit (``tests/test_unirap_kernels.py``); for another
    gradient layout or another device, the same to rounding."""

    @staticmethod
    def forward(ctx, local: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        b, c, g = context.shape[:3]
        wide = context.repeat_interleave(4, -1)[:, :, :, None, :]  # (B, C, g, 1, 4 g)
        out = torch.empty_like(local)
        torch.add(local.reshape(b, c, g, 4, 4 * g), wide, out=out.view(b, c, g, 4, 4 * g))
        return out

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        # autograd's sum_to, grad.sum((3, 5), keepdim=True), as two sums: the same additions in the same order
        # for the contiguous gradient the model passes (tests/test_unirap_kernels.py), a third faster
        b, c, g = grad.shape[:3]
        return grad, grad.sum(5, keepdim=True).sum(3, keepdim=True).view(b, c, g, g)


class EConv(nn.Module):
    """A convolution per member, on the batch-first layout ``(B, M * C_in, H, W) -> (B, M * C_out, H', W')``
    (grouped by member: no copies between layers)."""

    def __init__(self, gens, c_in: int, c_out: int, k: int, stride: int, padding: int):
        super().__init__()
        self.weight = _init(gens, (c_out, c_in, k, k), math.sqrt(2.0 / (c_in * k * k)))
        self.bias = _zeros(len(gens), (c_out,))
        self.stride, self.padding, self.groups = stride, padding, len(gens)

    def forward(self, x: torch.Tensor, shared: torch.Tensor | None = None) -> torch.Tensor:
        """``x`` (B, M * C, H, W); ``shared`` (C_s, H, W), if given, are the last ``C_s`` input channels of every
        image and member (the pixel coordinates): their part of the convolution is computed once."""
        # the same as F.conv2d(..., groups=M), as im2col and one batched matrix product per member: on a CPU,
        # PyTorch's grouped convolutions (and their backward) are several times slower for these small sizes
        b, _, h, w = x.shape
        m, c_out, c_in, k, _ = self.weight.shape
        c_x = c_in - (0 if shared is None else shared.shape[0])
        h_out, w_out = (h + 2 * self.padding - k) // self.stride + 1, (w + 2 * self.padding - k) // self.stride + 1

        def columns(t: torch.Tensor, c: int) -> torch.Tensor:  # (N, c * k * k, H_out * W_out)
            if k == 1 and self.stride == 1 and self.padding == 0:
                return t.reshape(t.shape[0], c, h * w)
            return unfold(t, k, self.padding, self.stride)

        bias = self.bias[..., None]
        if shared is not None:
            bias = bias + self.weight[:, :, c_x:].flatten(2) @ columns(shared[None], shared.shape[0])[0]
        y = torch.matmul(self.weight[:, :, :c_x].flatten(2), columns(x, m * c_x).reshape(b, m, c_x * k * k, -1))
        return y.add_(bias).reshape(b, m * c_out, h_out, w_out)  # in place: the product's output, read by no gradient


class ELinear(nn.Module):
    """A linear map per member on the last axis: ``(M, ..., d_in) -> (M, ..., d_out)``."""

    def __init__(self, gens, d_in: int, d_out: int, scale: float = 1.0):
        super().__init__()
        self.weight = _init(gens, (d_in, d_out), scale / math.sqrt(d_in))
        self.bias = _zeros(len(gens), (d_out,))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        y = torch.baddbmm(self.bias[:, None], x.reshape(shape[0], -1, shape[-1]), self.weight)
        return y.reshape(*shape[:-1], -1)


class ELayerNorm(nn.Module):
    def __init__(self, n: int, d: int):
        super().__init__()
        self.gain = nn.Parameter(torch.ones(n, d))
        self.bias = _zeros(n, (d,))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        view = (x.shape[0],) + (1,) * (x.dim() - 2) + (x.shape[-1],)
        return F.layer_norm(x, x.shape[-1:]) * self.gain.view(view) + self.bias.view(view)


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, n_heads: int,
              valid: torch.Tensor | None = None) -> torch.Tensor:
    """Scaled dot-product attention ``(M, B, T, D)``, heads split from ``D``; ``valid`` (M, B, T_k) masks keys."""
    m, b, tq, d = q.shape
    split = lambda x: x.reshape(m, b, x.shape[2], n_heads, d // n_heads).transpose(2, 3)  # noqa: E731
    scores = split(q) @ split(k).transpose(-1, -2) / math.sqrt(d // n_heads)
    if valid is not None:
        scores = scores.masked_fill(~valid[:, :, None, None, :], float("-inf"))
    return (scores.softmax(-1) @ split(v)).transpose(2, 3).reshape(m, b, tq, d)


class DecoderLayer(nn.Module):
    """Queries ([AFF] + words): self-attention, cross-attention to the image tokens, an MLP."""

    def __init__(self, gens, d: int, n_heads: int):
        super().__init__()
        n = len(gens)
        self.n_heads = n_heads
        self.ln1, self.ln2, self.ln3 = ELayerNorm(n, d), ELayerNorm(n, d), ELayerNorm(n, d)
        self.qkv = ELinear(gens, d, 3 * d)
        self.out1 = ELinear(gens, d, d, 0.5)
        self.q2 = ELinear(gens, d, d)
        self.out2 = ELinear(gens, d, d, 0.5)
        self.mlp1 = ELinear(gens, d, 2 * d)
        self.mlp2 = ELinear(gens, 2 * d, d, 0.5)

    def forward(self, x, keys, values, valid):
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        x = x + self.out1(attention(q, k, v, self.n_heads, valid))
        x = x + self.out2(attention(self.q2(self.ln2(x)), keys, values, self.n_heads))
        return x + self.mlp2(F.gelu(self.mlp1(self.ln3(x))))


class InterfaceDecoder(nn.Module):
    """The [AFF] interface token fused with the instruction, decoded against the image tokens."""

    def __init__(self, gens, d: int, n_layers: int, n_heads: int):
        super().__init__()
        n = len(gens)
        self.aff = _init(gens, (d,), 0.5)
        self.ln_img = ELayerNorm(n, d)
        self.kv = ELinear(gens, d, 2 * d)
        self.layers = nn.ModuleList(DecoderLayer(gens, d, n_heads) for _ in range(n_layers))
        self.ln_out = ELayerNorm(n, d)

    def forward(self, image_tokens: torch.Tensor, words: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
        """``image_tokens`` (M, B, T, D), ``words`` (M, B, L, D), ``valid`` (M, B, L) -> ``q`` (M, B, D)."""
        w = valid[..., None].float()
        fused = self.aff[:, None] + (words * w).sum(2) / w.sum(2).clamp(min=1)  # [AFF] + the instruction
        x = torch.cat([fused[:, :, None], words], dim=2)
        mask = torch.cat([torch.ones_like(valid[:, :, :1]), valid], dim=2)
        keys, values = self.kv(self.ln_img(image_tokens)).chunk(2, dim=-1)
        for layer in self.layers:
            x = layer(x, keys, values, mask)
        return self.ln_out(x[:, :, 0])


class Head(nn.Module):
    """A two-layer MLP per member."""

    def __init__(self, gens, d_in: int, d_hidden: int, d_out: int):
        super().__init__()
        self.l1, self.l2 = ELinear(gens, d_in, d_hidden), ELinear(gens, d_hidden, d_out, 0.5)

    def forward(self, x):
        return self.l2(F.relu(self.l1(x)))


class _Pool(torch.autograd.Function):
    """``a @ features.transpose(-1, -2)``: ``a`` (..., K, P) weights, ``features`` (..., D, P) -> (..., K, D), the
    same product; the features' gradient is computed as ``grad^T @ a`` (..., D, P) in the features' own layout, not
    as autograd's ``(a^T @ grad)^T``, whose transposed layout costs a copy and a strided sum where it meets the
    maps' gradient (each element is the same sum of K products in the same order)."""

    @staticmethod
    def forward(ctx, a: torch.Tensor, features: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(a, features)
        return a @ features.transpose(-1, -2)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        a, features = ctx.saved_tensors
        grad_a = grad @ features if ctx.needs_input_grad[0] else None
        grad_f = grad.transpose(-1, -2) @ a if ctx.needs_input_grad[1] else None
        return grad_a, grad_f


def _check_mask_shapes(prob: torch.Tensor, features: torch.Tensor) -> bool:
    """:func:`mask_statistics`' shape rules that its ``Array`` rules cannot state (h*w columns, one axis fewer or
    one more, leading axes that broadcast); returns whether ``prob`` holds several maps."""
    h, w = prob.shape[-2:]
    if features.shape[-1] != h * w:
        raise ValueError(f"features must have h*w = {h * w} columns (from prob's shape), got {features.shape[-1]}")
    several = prob.dim() == features.dim() + 1
    if not several and prob.dim() != features.dim():
        raise ValueError(f"prob must have one axis fewer than features (one map) or one more (several maps), got "
                         f"shapes {tuple(prob.shape)} and {tuple(features.shape)}")
    try:  # the leading axes (...) of the two must broadcast
        torch.broadcast_shapes(prob.shape[: -3 if several else -2], features.shape[:-2])
    except RuntimeError:
        raise ValueError(f"prob and features must have the same leading axes (...), got shapes {tuple(prob.shape)} "
                         f"and {tuple(features.shape)}") from None
    return several


@checked(prob=Array("... h w"), features=Array("... d hw"))
def mask_statistics(prob: torch.Tensor, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """What the pose head reads from the mask: ``prob`` (..., h, w) in [0, 1] and ``features``
    (..., D, h*w) -> the mask-weighted features (..., D) and the geometry (..., 5): the centroid
    (x, y in [0, 1]) and the second moments (xx, yy, xy, times 20), eq. (unirap-pose).

    Several maps of the same features at once: ``prob`` (..., K, h, w) with ``features`` (..., D, h*w)
    (``prob`` one axis longer) give (..., K, D) and (..., K, 5)."""
    several = _check_mask_shapes(prob, features)  # one map, or several maps of the same features
    h, w = prob.shape[-2:]
    ys, xs = torch.meshgrid((torch.arange(h, device=prob.device) + 0.5) / h,
                            (torch.arange(w, device=prob.device) + 0.5) / w, indexing="ij")
    a = prob.flatten(-2)
    a = a / (a.sum(-1, keepdim=True) + 1e-3)                       # a(p), the mask's weights
    xs, ys = xs.flatten(), ys.flatten()
    cx, cy = (a * xs).sum(-1), (a * ys).sum(-1)                   # c, the centroid
    dx, dy = xs - cx[..., None], ys - cy[..., None]
    moments = torch.stack([(a * dx * dx).sum(-1), (a * dy * dy).sum(-1), (a * dx * dy).sum(-1)], -1) * 20  # Sigma
    # f, the mask-weighted features, as a matrix product (a single map: one row)
    pooled = _Pool.apply(a, features) if several else (a[..., None, :] @ features.transpose(-1, -2))[..., 0, :]
    return pooled, torch.cat([torch.stack([cx, cy], -1), moments], -1)


def mask_weights(logits: torch.Tensor) -> torch.Tensor:
    """What the pose head reads of a predicted mask: its probability squared, ``sigmoid(logits) ** 2``. The
    plain probability gives every background pixel a small weight (0.05 at a logit of -3), and the thousand
    of them pull the centroid and the moments away from the part; squared, that tail is twenty times smaller,
    while every pixel keeps a gradient. Where the pose reads the *segmentation* (``"unified"``, and
    ``"separate"``'s mask decoder), the forward pass reads ``mask_weights(logits.detach())``: a stop-gradient, so
    that the pose loss does not reach the mask through its weights ``a(p)`` (with the pose loss flowing into them,
    the masks came out worse and more uneven across seeds); it still reaches the shared token ``q``, which the pose head
    reads too, and the pixel features ``F(p)`` it pools, from which the mask is also computed."""
    return torch.sigmoid(logits) ** 2


def orientation(geometry: torch.Tensor) -> torch.Tensor:
    """From a map's geometry (..., 5: centroid, second moments xx, yy, xy) the direction of its long axis as
    the unit vector (cos 2φ, sin 2φ), and its spread along the short axis (..., 3)."""
    xx, yy, xy = geometry[..., 2], geometry[..., 3], geometry[..., 4]
    diff = xx - yy
    r = torch.sqrt(diff * diff + 4 * xy * xy + 1e-6)
    minor = torch.sqrt(((xx + yy - r) / 2).clamp(min=0) + 1e-6)
    return torch.stack([diff / r, 2 * xy / r, minor], -1)


@checked(
    seeds=Tuple(Int(0)),
    image_size=Int(8, 512),
    width=Int(1, 4096),
    d_model=Int(1, 4096),
    n_layers=Int(1, 64),
    n_heads=Int(1, 64),
    n_words=Int(1, 100_000),
    max_words=Int(1, 1024),
)
class UniRAP(nn.Module):
    """The ensemble model; ``seeds[m]`` initialises member ``m`` (same seed, same initial encoder).

    ``arch`` is one of :data:`ARCHS` for every member, or a tuple with one per member mixing ``"unified"`` and
    ``"pose_direct"`` (they have the same weights; only what the pose reads differs): one batched ensemble then
    trains both (``self.arch`` is ``"mixed"``)."""

    def __init__(self, seeds: list[int], arch: str | tuple[str, ...] = "unified", image_size: int = 32,
                 width: int = 16, d_model: int = 24, n_layers: int = 2, n_heads: int = 2, n_words: int = 64,
                 max_words: int = 8):
        super().__init__()
        archs = (arch,) * len(seeds) if isinstance(arch, str) else tuple(arch)
        if any(a not in ARCHS for a in archs):
            raise ValueError(f"arch must be one of {ARCHS} (or a tuple of them, one per member), got {arch!r}")
        if len(archs) != len(seeds):
            raise ValueError(f"arch must name one architecture per member ({len(seeds)}), got {len(archs)}")
        if len(set(archs)) > 1 and "separate" in archs:
            raise ValueError("arch 'separate' cannot be mixed with others in one ensemble (it has three decoders)")
        arch = archs[0] if len(set(archs)) == 1 else "mixed"
        self.archs = archs
        self._direct = torch.tensor([a == "pose_direct" for a in archs])  # per member: the pose reads its own map
        if image_size % 4:
            raise ValueError(f"image_size must be a multiple of 4, got {image_size}")
        if d_model % n_heads:
            raise ValueError(f"d_model must be a multiple of n_heads ({n_heads}), got {d_model}")
        self.arch, self.n_members, self.image_size, self.d_model = arch, len(seeds), image_size, d_model
        gens = [torch.Generator().manual_seed(int(s)) for s in seeds]
        n, d, g = len(gens), d_model, image_size // 4
        # image encoder: image tokens from a small CNN at S/4; pixel features at full resolution from each
        # pixel's colour, position and 3x3 neighbourhood, plus its image token's context
        self.conv1 = EConv(gens, 5, width, 4, 4, 0)  # RGB + the pixel's (x, y) coordinates, 4x4 patches
        self.conv2 = EConv(gens, width, d, 3, 1, 1)
        self.pos = _init(gens, (g * g, d), 0.5)
        self.pix_low = EConv(gens, 5, width, 3, 1, 1)  # each pixel's colour, position and 3x3 neighbourhood
        self.pix_mid, self.pix_tok = EConv(gens, width, width, 1, 1, 0), EConv(gens, d, width, 1, 1, 0)
        # instruction encoder: learned word and position embeddings
        self.words = _init(gens, (n_words, d), 0.5)
        self.word_pos = _init(gens, (max_words, d), 0.2)
        # decoders: one shared by the three heads, or one per head ("separate")
        n_dec = 3 * n if arch == "separate" else n
        dec_gens = gens if arch != "separate" else [torch.Generator().manual_seed(int(s) * 7919 + k)
                                                     for s in seeds for k in range(3)]
        assert len(dec_gens) == n_dec
        self.decoder = InterfaceDecoder(dec_gens, d, n_layers, n_heads)
        # the UAD's heads: each reads a map <W q, F_pixel> over the pixel features
        self.box_embed = ELinear(gens, d, width)
        self.box_head = Head(gens, d + width + 5, d, 4)
        self.mask_embed = ELinear(gens, d, width)
        self.mask_bias = nn.Parameter(torch.full((n, 1), MASK_BIAS_INIT))  # the prior: background
        self.pose_embed = ELinear(gens, d, width)  # the pose's own attention map (arch "pose_direct" only)
        self.pose_head = Head(gens, d + width + 8, d, 5)
        self.pose_skip = ELinear(gens, 8, 5, 0.1)  # a linear read-out of the map's geometry (its axis, its spread)

    @checked(images=Array("m b 3 s s", tensor=True), tokens=Array("m b l", integer=True, tensor=True))
    def encode(self, images: torch.Tensor, tokens: torch.Tensor):
        """Image tokens (M, B, T, D), pixel features at full resolution (B, M, width, S*S; after a leaky ReLU,
        :data:`PIXEL_SLOPE`), word embeddings (M, B, L, D), valid words. ``images`` (M, B, 3, S, S) finite, with
        ``M`` the members and ``S`` the model's image size; ``tokens`` (M, B, L) word ids in ``[0, n_words)``, ``L``
        at most ``max_words``. :meth:`forward` calls :meth:`_encode` (no checks)."""
        m, s = images.shape[0], images.shape[-1]
        if m != self.n_members or s != self.image_size:
            raise ArgumentError(f"images must have shape (M={self.n_members}, B, 3, S={self.image_size}, "
                                f"S={self.image_size}), got {tuple(images.shape)}")
        if not images.is_floating_point():
            raise ArgumentError(f"images must be a float tensor, got dtype {images.dtype}")
        n_words, max_words = self.words.shape[-2], self.word_pos.shape[-2]
        if tokens.shape[-1] > max_words:
            raise ArgumentError(f"tokens must hold at most max_words = {max_words} words (last axis), "
                                f"got shape {tuple(tokens.shape)}")
        if bool((tokens < 0).any()) or bool((tokens >= n_words).any()):
            raise ArgumentError(f"tokens must hold word ids in [0, {n_words - 1}]")
        return self._encode(images, tokens)

    def _encode(self, images: torch.Tensor, tokens: torch.Tensor):
        m, b, _, h, w = images.shape
        ys, xs = torch.meshgrid(torch.linspace(-1, 1, h, device=images.device),
                                torch.linspace(-1, 1, w, device=images.device), indexing="ij")
        coords = torch.stack([xs, ys])  # two more input channels, the same for every image
        x = images.transpose(0, 1).reshape(b, m * 3, h, w)  # batch-first for the per-member convolutions
        f = F.relu(self.conv2(F.relu(self.conv1(x, coords))))      # (B, M * D, S/4, S/4)
        g = f.shape[-1]
        image_tokens = f.reshape(b, m, -1, g * g).permute(1, 0, 3, 2) + self.pos[:, None]
        ctx = self.pix_tok(f)  # each token's context, added to its 4 x 4 pixels (nearest upsampling)
        local = self.pix_mid(F.relu(self.pix_low(x, coords)))
        pixels = F.leaky_relu(_AddContext.apply(local.reshape(b, -1, g, 4, g, 4), ctx), PIXEL_SLOPE)
        pixels = pixels.reshape(b, m, -1, h * w)
        idx = torch.arange(m, device=tokens.device)[:, None, None]
        words = self.words[idx, tokens] + self.word_pos[:, None, : tokens.shape[-1]]
        return image_tokens, pixels, words, tokens != 0

    def forward(self, images: torch.Tensor, tokens: torch.Tensor,
                pose_mask: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
        """``images`` (M, B, 3, S, S) and instruction word ids ``tokens`` (M, B, L): nothing else.
        ``pose_mask`` (M, B, S, S) in [0, 1], if given, is what the pose head reads in place of its own
        mask (the true-mask positive control; not for ``"pose_direct"``).

        Returns ``box`` (M, B, 4: cx, cy, w, h in [0, 1]), ``mask_logits`` (M, B, S, S) and
        ``pose`` (M, B, 5: x, y in [0, 1], the vector (cos 2θ, sin 2θ) unnormalised, width / S).
        """
        image_tokens, pixels, words, valid = self._encode(images, tokens)
        m, b = images.shape[:2]
        if self.arch == "separate":  # three decoders: each sees the same encodings
            rep = lambda x: x[:, None].expand(m, 3, *x.shape[1:]).flatten(0, 1)  # noqa: E731
            q = self.decoder(rep(image_tokens), rep(words), rep(valid)).reshape(m, 3, *words.shape[1:2], -1)
            q_box, q_mask, q_pose = q[:, 0], q[:, 1], q[:, 2]
        else:
            q_box = q_mask = q_pose = self.decoder(image_tokens, words, valid)
        size = self.image_size  # the maps are at full resolution
        scale = 1.0 / math.sqrt(pixels.shape[2])
        bm = lambda t: t.transpose(0, 1)  # noqa: E731  (M, B, ...) <-> (B, M, ...)

        # the maps <W q, F(p)> of the heads, in one batched product: box, mask (and the pose's own) (B, M, 2-3, S*S)
        heads = [(self.box_embed, q_box), (self.mask_embed, q_mask)]
        if self.arch in ("pose_direct", "mixed"):  # the ablation's own attention map
            heads.append((self.pose_embed, q_pose))
        embeds = torch.stack([bm(e(q)) for e, q in heads], 2)
        maps = (embeds @ pixels) * scale
        # box: a detection map over the pixels; its centroid is the box centre, the head adds the size
        det = maps[:, :, 0].softmax(-1).reshape(b, m, size, size)
        # mask: sigmoid(<W q, F_pixel>) (eq. unirap-mask)
        bias = bm(self.mask_bias[:, None])
        logits = (maps[:, :, 1] + bias).reshape(b, m, size, size)
        if self.arch in ("pose_direct", "mixed"):  # the ablation: the pose reads an attention map of its own
            if pose_mask is not None:
                raise ValueError("pose_mask is for the architectures whose pose reads a mask, not 'pose_direct'")
            read = maps[:, :, 2].softmax(-1).reshape(b, m, size, size)
            if self.arch == "mixed":  # its "unified" members read their mask
                direct = self._direct.to(read.device)[None, :, None, None]
                read = torch.where(direct, read, mask_weights(logits.detach()))  # stop-gradient, as below
        elif pose_mask is not None:  # the positive control: the pose head reads the given (true) mask
            if pose_mask.shape != (m, b, size, size):
                raise ValueError(f"pose_mask must have shape {(m, b, size, size)}, got {tuple(pose_mask.shape)}")
            read = bm(pose_mask.float())
        else:  # the pose head reads the segmentation (eq. unirap-pose), stop-gradient: the unified decoder's mask,
            # or, with separate decoders, the mask decoder's predicted mask (the pose decoder adds its token q_pose)
            read = mask_weights(logits.detach())
        # the statistics of the detection map and of what the pose reads, in one call: (B, M, 2, ...)
        pooled, geometry = mask_statistics(torch.stack([det, read], 2), pixels)
        pooled, geometry = bm(pooled), bm(geometry)
        out = self.box_head(torch.cat([q_box, pooled[:, :, 0], geometry[:, :, 0]], -1))
        box = torch.cat([geometry[..., 0, :2] + 0.2 * torch.tanh(out[..., :2]), torch.sigmoid(out[..., 2:])], -1)
        pooled, geometry = pooled[:, :, 1], geometry[:, :, 1]
        geometry = torch.cat([geometry, orientation(geometry)], -1)
        out = self.pose_head(torch.cat([q_pose, pooled, geometry], -1)) + self.pose_skip(geometry)
        xy = geometry[..., :2] + 0.2 * torch.tanh(out[..., :2])
        pose = torch.cat([xy, out[..., 2:4], torch.sigmoid(out[..., 4:])], -1)
        return {"box": box, "mask_logits": bm(logits), "pose": pose}


def check_outputs(name: str, out: dict, keys: tuple[str, ...]) -> None:
    """``out`` must be a dict holding finite float tensors under ``keys`` (``ValueError`` naming ``name``)."""
    if not isinstance(out, dict):
        raise ValueError(f"{name} must be a dict of tensors with keys {keys}, got {type(out).__name__}")
    missing = [k for k in keys if k not in out]
    if missing:
        raise ValueError(f"{name} lacks the key(s) {missing} (needs {keys})")
    for k in keys:
        v = out[k]
        if not isinstance(v, torch.Tensor) or not v.is_floating_point() or v.ndim < 2:
            raise ValueError(f"{name}[{k!r}] must be a float tensor with member and batch axes, got {type(v).__name__}")
        if not bool(torch.isfinite(v).all()):
            raise ValueError(f"{name}[{k!r}] must hold only finite numbers")


@checked(image_size=Int(8, 512))
def decode(out: dict[str, torch.Tensor], image_size: int) -> dict:
    """Model outputs -> pixel-space predictions (numpy): ``boxes`` (M, B, 4: x0, y0, x1, y1),
    ``masks`` (M, B, S, S) booleans, ``grasps`` (M, B, 4: x, y, theta in [0, pi), width)."""
    check_outputs("out", out, ("box", "pose", "mask_logits"))
    if out["box"].shape[-1] != 4 or out["pose"].shape[-1] != 5:
        raise ValueError(f"out['box'] must end in 4 and out['pose'] in 5 values, got {tuple(out['box'].shape)}, "
                         f"{tuple(out['pose'].shape)}")
    s = float(image_size)
    cx, cy, w, h = out["box"].unbind(-1)
    boxes = torch.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], -1) * s
    p = out["pose"]
    theta = (0.5 * torch.atan2(p[..., 3], p[..., 2])) % math.pi
    grasps = torch.stack([p[..., 0] * s, p[..., 1] * s, theta, p[..., 4] * s], -1)
    return {"boxes": boxes.detach().cpu().numpy(), "masks": (out["mask_logits"] > 0).cpu().numpy(),
            "grasps": grasps.detach().cpu().numpy()}


def member_state(model: UniRAP, index: int) -> dict[str, torch.Tensor]:
    """The weights of member ``index`` (a 1-member model's state dict, of that member's architecture; not for
    ``"separate"``)."""
    if model.arch == "separate":
        raise ValueError("member_state takes a 'unified', 'pose_direct' or mixed model")
    return {k: v[index: index + 1].detach().clone() for k, v in model.state_dict().items()}
