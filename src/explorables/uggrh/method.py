"""UGGRH as we reconstruct it from the abstract, and the DJSRH-style baseline it is compared with.

Training functions receive an :class:`~.data.IncompletePairs` (two views, the masks of what is
observed, no labels) and never read a value the mask marks missing: every fill goes through
:func:`observed_means` and :func:`fill_missing`, which start from the observed rows only.

The pipeline (each step switchable for the ablations, :class:`Modules`):

1. **generative completion** (:func:`train_completion`): two MLP translators image -> text and
   text -> image, trained on the complete pairs with an L2 loss plus an adversarial loss against
   one discriminator per modality, eq. (completion-loss); they fill the missing modalities;
2. **discriminator-guided similarity refinement** (:func:`similarity_target`): intra-modal cosine
   similarities and an image-text matching similarity, each entry weighted by the discriminators'
   realness of the samples involved, eq. (refined-similarity), then DJSRH's second-order mix;
3. **hash-aware graph attention** (:class:`HashGraphAttention`) over the kNN graph of that matrix,
   eq. (hash-attention);
4. **cross-modal fusion** into a unified code, and the loss eq. (uggrh-loss) that trains the two
   modality hash functions towards the similarity target and the unified codes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..core.arguments import ArgumentError, Array, checked
from ..core.device import resolve_device
from ..core.params import Float, Int, Positive, Probability
from ..core.resources import check_memory
from ..core.threads import one_cpu_thread
from .data import IncompletePairs

EPS = 1e-8
#: the widest layer (hidden units, features, bits) a network here takes: a Linear of 2**17 x 2**17 is 64 GiB
MAX_WIDTH = 2**17


def _same_device(**values: torch.Tensor | None) -> None:
    """A ``ValueError`` naming an argument whose tensor is on another device than the first one."""
    device = None
    for name, value in values.items():
        if value is None:
            continue
        if device is None:
            device = value.device
        elif value.device != device:
            raise ArgumentError(f"{name} must be on the device of the other tensors ({device}), got {value.device}")


@checked()
@dataclass(frozen=True)
class Modules:
    """Which UGGRH modules are on (the ablations turn one off each)."""

    use_completion: bool = True
    use_refinement: bool = True
    use_graph_attention: bool = True
    use_fusion: bool = True


@checked(
    n_hidden=Int(2, MAX_WIDTH),
    n_epochs=Int(1, 10**7),
    lr=Float(0.0, 1.0, low_inclusive=False),
    n_completion_steps=Int(1, 10**7),
    adversarial_weight=Float(0.0, 10.0),
    k_neighbours=Int(1),
    eta=Probability(),
    similarity_scale=Positive(),
    quantization_weight=Float(0.0, 100.0),
)
@dataclass(frozen=True)
class TrainSettings:
    """Sizes and weights shared by the baseline and UGGRH (the same for both, so only the modules differ)."""

    n_hidden: int = 256
    n_epochs: int = 150
    lr: float = 3e-3
    n_completion_steps: int = 200
    adversarial_weight: float = 0.05
    k_neighbours: int = 10
    eta: float = 0.4
    similarity_scale: float = 1.5
    quantization_weight: float = 0.5


# ---------------------------------------------------------------- filling, without reading missing values


def observed_means(pairs: IncompletePairs) -> tuple[np.ndarray, np.ndarray]:
    """Per-feature means of the observed rows of each modality (the centring of every method)."""
    return pairs.image[pairs.has_image].mean(0), pairs.text[pairs.has_text].mean(0)


@checked()
def fill_missing(pairs: IncompletePairs) -> tuple[np.ndarray, np.ndarray]:
    """Centred features with every missing row set to 0, i.e. to the observed mean: *mean-fill*.

    Built from the observed rows only (``np.where`` never does arithmetic on a hidden value).
    """
    mean_i, mean_t = observed_means(pairs)
    image = np.where(pairs.has_image[:, None], pairs.image - mean_i, 0.0)
    text = np.where(pairs.has_text[:, None], pairs.text - mean_t, 0.0)
    return image, text


def _mlp(d_in: int, d_hidden: int, d_out: int, device: torch.device | None = None) -> nn.Sequential:
    return nn.Sequential(nn.Linear(d_in, d_hidden, device=device), nn.ReLU(), nn.Linear(d_hidden, d_out, device=device))


# ---------------------------------------------------------------- 1. generative completion


@dataclass
class Completion:
    """The translators and discriminators of eq. (completion-loss)."""

    image_to_text: nn.Module
    text_to_image: nn.Module
    image_critic: nn.Module
    text_critic: nn.Module


def _completion_inputs(image: torch.Tensor, text: torch.Tensor, complete: torch.Tensor) -> None:
    """:func:`train_completion`'s relation: one device, float features of one dtype, at least 2 complete pairs."""
    _same_device(image=image, text=text, complete=complete)
    for name, value in (("image", image), ("text", text)):
        if not value.is_floating_point():
            raise ArgumentError(f"{name} must be a float tensor, got dtype {value.dtype}")
    if text.dtype != image.dtype:
        raise ArgumentError(f"text must have the dtype of image ({image.dtype}), got {text.dtype}")
    if complete.dtype != torch.bool:
        raise ArgumentError(f"complete must be a boolean tensor (True: both modalities observed), got {complete.dtype}")
    if int(complete.sum()) < 2:
        raise ArgumentError(f"complete must mark at least 2 complete pairs to train on, got {int(complete.sum())}")


@checked(
    image=Array("n d_image", tensor=True),
    text=Array("n d_text", tensor=True),
    complete=Array("n", tensor=True),
    relation=_completion_inputs,
)
def train_completion(
    image: torch.Tensor, text: torch.Tensor, complete: torch.Tensor, settings: TrainSettings
) -> Completion:
    """Train ``G_i->t``, ``G_t->i`` and the critics ``D_i``, ``D_t`` on the complete pairs, eq. (completion-loss).

    ``image``/``text``: centred, mean-filled features (float tensors); only the rows where the boolean
    tensor ``complete`` is true are read, and there must be at least 2 of them.
    """
    x, t = image[complete], text[complete]
    h = settings.n_hidden
    dev = x.device  # the networks live on the inputs' device (a CUDA run found them left on the CPU)
    g_it, g_ti = _mlp(x.shape[1], h, t.shape[1], dev), _mlp(t.shape[1], h, x.shape[1], dev)
    d_i, d_t = _mlp(x.shape[1], h // 2, 1, dev), _mlp(t.shape[1], h // 2, 1, dev)
    opt_g = torch.optim.Adam([*g_it.parameters(), *g_ti.parameters()], lr=settings.lr)
    opt_d = torch.optim.Adam([*d_i.parameters(), *d_t.parameters()], lr=settings.lr)
    bce = F.binary_cross_entropy_with_logits
    ones, zeros = torch.ones(len(x), 1, device=x.device), torch.zeros(len(x), 1, device=x.device)
    for _ in range(settings.n_completion_steps):
        fake_t, fake_i = g_it(x), g_ti(t)
        loss_d = (bce(d_t(t), ones) + bce(d_t(fake_t.detach()), zeros)
                  + bce(d_i(x), ones) + bce(d_i(fake_i.detach()), zeros))  # fmt: skip
        opt_d.zero_grad()
        loss_d.backward()
        opt_d.step()
        loss_g = (F.mse_loss(fake_t, t) + F.mse_loss(fake_i, x)
                  + settings.adversarial_weight * (bce(d_t(fake_t), ones) + bce(d_i(fake_i), ones)))  # fmt: skip
        opt_g.zero_grad()
        loss_g.backward()
        opt_g.step()
    return Completion(g_it, g_ti, d_i, d_t)


@torch.no_grad()
def realness(critic: nn.Module, generated: torch.Tensor, observed: torch.Tensor) -> torch.Tensor:
    """Confidence of generated rows: the critic's probability "real", relative to observed rows, capped at 1."""
    p_gen = torch.sigmoid(critic(generated)).squeeze(1)
    p_obs = torch.sigmoid(critic(observed)).squeeze(1).mean()
    return (p_gen / p_obs.clamp_min(EPS)).clamp(0.0, 1.0)


@torch.no_grad()
def complete_views(
    image: torch.Tensor, text: torch.Tensor, has_image: torch.Tensor, has_text: torch.Tensor, completion: Completion
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Fill each missing modality with its translation; return ``(image, text, c_image, c_text, image_as_text)``.

    Confidences are 1 for observed rows and the critic's relative realness for generated ones.
    ``image_as_text`` is ``G_i->t`` of every (completed) image: the matching signal of eq. (refined-similarity).
    """
    gen_i, gen_t = completion.text_to_image(text), completion.image_to_text(image)
    img = torch.where(has_image[:, None], image, gen_i)
    txt = torch.where(has_text[:, None], text, gen_t)
    c_i, c_t = torch.ones(len(img), device=img.device), torch.ones(len(img), device=img.device)
    if (~has_image).any():
        c_i[~has_image] = realness(completion.image_critic, gen_i[~has_image], image[has_image])
    if (~has_text).any():
        c_t[~has_text] = realness(completion.text_critic, gen_t[~has_text], text[has_text])
    return img, txt, c_i, c_t, completion.image_to_text(img)


# ---------------------------------------------------------------- 2. similarity target


def _target_inputs(
    image: torch.Tensor,
    text: torch.Tensor,
    c_image: torch.Tensor | None,
    c_text: torch.Tensor | None,
    image_as_text: torch.Tensor | None,
) -> None:
    """:func:`similarity_target`'s relation: one device, confidences in ``[0, 1]``."""
    _same_device(image=image, text=text, c_image=c_image, c_text=c_text, image_as_text=image_as_text)
    for name, value in (("c_image", c_image), ("c_text", c_text)):
        if value is not None and not bool(((value >= 0) & (value <= 1)).all()):
            raise ArgumentError(f"{name} must hold confidences in [0, 1]")


@checked(
    image=Array("n d_image", tensor=True),
    text=Array("n d_text", tensor=True),
    c_image=Array("n", tensor=True),
    c_text=Array("n", tensor=True),
    image_as_text=Array("n d_text", tensor=True),
    eta=Probability(),
    scale=Positive(),
    relation=_target_inputs,
)
def similarity_target(
    image: torch.Tensor,
    text: torch.Tensor,
    c_image: torch.Tensor | None = None,
    c_text: torch.Tensor | None = None,
    image_as_text: torch.Tensor | None = None,
    *,
    eta: float = 0.4,
    scale: float = 1.5,
) -> torch.Tensor:
    """The training target S: confidence-weighted fusion, eq. (refined-similarity), then DJSRH's mix, eq. (djsrh-mix).

    With no confidences (all 1) and no matching signal this is DJSRH's joint similarity
    ``(S_I + S_T) / 2`` of the baseline. Confidences lie in ``[0, 1]``; ``eta`` in ``[0, 1]``.
    """
    n = image.shape[0]
    ones = torch.ones(n, device=image.device)
    c_i = ones if c_image is None else c_image
    c_t = ones if c_text is None else c_text
    f_i, f_t = F.normalize(image, dim=1), F.normalize(text, dim=1)  # a zero row (mean-fill) stays zero
    w_i, w_t = torch.outer(c_i, c_i), torch.outer(c_t, c_t)  # W^I_jl = c^I_j c^I_l, W^T likewise
    num, den = w_i * (f_i @ f_i.T) + w_t * (f_t @ f_t.T), w_i + w_t
    if image_as_text is not None:  # matching: image j (as text) against text l, both ways
        f_x = F.normalize(image_as_text, dim=1)
        w_x = 0.5 * (torch.outer(c_i, c_t) + torch.outer(c_t, c_i))
        num = num + w_x * 0.5 * (f_x @ f_t.T + f_t @ f_x.T)
        den = den + w_x
    s = torch.where(den > EPS, num / den.clamp_min(EPS), torch.zeros_like(num))
    s = (1 - eta) * s + eta * (s @ s.T) / n  # second-order neighbours (DJSRH)
    return (scale * s).clamp(-1.0, 1.0)


def knn_graph(s: torch.Tensor, k: int) -> torch.Tensor:
    """Each sample's ``k`` most similar samples under ``s``, itself first: an ``(n, k + 1)`` index matrix."""
    k = min(k, s.shape[0] - 1)
    self_first = s + 2.0 * torch.eye(s.shape[0], device=s.device)  # S is clipped to [-1, 1]: self wins
    return torch.topk(self_first, k + 1, dim=1).indices


# ---------------------------------------------------------------- 3. + 4. the hash network


@checked(dim=Int(1, MAX_WIDTH // 8))
class HashGraphAttention(nn.Module):
    """One graph-attention layer whose scores also reward agreeing relaxed codes, eq. (hash-attention)."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.proj = nn.Linear(dim, dim, bias=False)
        self.a_src = nn.Parameter(torch.randn(dim) * 0.1)
        self.a_dst = nn.Parameter(torch.randn(dim) * 0.1)

    def forward(self, h: torch.Tensor, neighbours: torch.Tensor, codes: torch.Tensor) -> torch.Tensor:
        g = self.proj(h)  # W h
        g_nb = g[neighbours]  # (n, k + 1, d): W h_l for the kNN neighbours l of each j
        scores = F.leaky_relu((g @ self.a_src)[:, None] + g_nb @ self.a_dst, 0.2)  # GAT score a·[Wh_j ‖ Wh_l]
        scores = scores + (codes[:, None, :] * codes[neighbours]).sum(-1) / codes.shape[1]  # + u_j·u_l / n_bits
        alpha = torch.softmax(scores, dim=1)  # over the neighbours of j
        return h + F.elu((alpha[:, :, None] * g_nb).sum(1))  # residual message passing


@checked(d_image=Int(1, MAX_WIDTH), d_text=Int(1, MAX_WIDTH), n_bits=Int(1, 4096), n_hidden=Int(1, MAX_WIDTH))
class HashNet(nn.Module):
    """Two modality hash functions (used at query time) and, for UGGRH, attention and fusion (training only)."""

    def __init__(self, d_image: int, d_text: int, n_bits: int, n_hidden: int, modules: Modules | None) -> None:
        check_memory(
            {
                "hash network weights ((d_image + d_text + 4 n_bits) x n_hidden + (2 n_bits)^2 floats)": 4.0
                * ((d_image + d_text + 4 * n_bits) * n_hidden + (2 * n_bits) ** 2)
            }
        )
        super().__init__()
        self.n_bits = n_bits
        self.image_encoder = _mlp(d_image, n_hidden, n_bits)
        self.text_encoder = _mlp(d_text, n_hidden, n_bits)
        self.uses = modules
        if modules is not None and modules.use_graph_attention:
            self.attention = HashGraphAttention(2 * n_bits)
        if modules is not None and modules.use_fusion:
            self.fusion = _mlp(2 * n_bits, n_hidden, n_bits)

    def _codes_and_graph(self, z_image: torch.Tensor, neighbours: torch.Tensor) -> None:
        """:meth:`unified`'s relation: codes of this net's width, neighbours that are rows of ``z_image``."""
        if z_image.shape[1] != self.n_bits:
            raise ArgumentError(f"z_image must have shape (n, n_bits={self.n_bits}), got {tuple(z_image.shape)}")
        if bool((neighbours < 0).any()) or bool((neighbours >= len(z_image)).any()):
            raise ArgumentError(f"neighbours must hold row indices in [0, {len(z_image) - 1}]")

    @checked(
        z_image=Array("n b", tensor=True),
        z_text=Array("n b", tensor=True),
        neighbours=Array("n k", integer=True, tensor=True),
        relation=_codes_and_graph,
    )
    def unified(self, z_image: torch.Tensor, z_text: torch.Tensor, neighbours: torch.Tensor) -> torch.Tensor:
        """Relaxed unified codes of the training samples: attention over the graph, then fusion. ``z_image`` and
        ``z_text`` are the ``(n, n_bits)`` outputs of the two encoders, ``neighbours`` the ``(n, k)`` row indices of
        each sample's graph neighbours (itself included)."""
        h = torch.cat([z_image, z_text], dim=1)
        if self.uses.use_graph_attention:
            h = self.attention(h, neighbours, torch.tanh(0.5 * (z_image + z_text)))
        if self.uses.use_fusion:
            return torch.tanh(self.fusion(h))
        return torch.tanh(0.5 * (h[:, : self.n_bits] + h[:, self.n_bits :]))


def _loss_inputs(u_image: torch.Tensor, u_text: torch.Tensor, u_unified: torch.Tensor | None, s: torch.Tensor) -> None:
    """:func:`uggrh_loss`'s relation: one device and the float dtype of ``s``."""
    _same_device(u_image=u_image, u_text=u_text, u_unified=u_unified, s=s)
    for name, value in (("u_image", u_image), ("u_text", u_text), ("u_unified", u_unified), ("s", s)):
        if value is not None and value.dtype != s.dtype:
            raise ArgumentError(f"{name} must have the float dtype of s ({s.dtype}), got {value.dtype}")


@checked(
    u_image=Array("n n_bits", tensor=True),
    u_text=Array("n n_bits", tensor=True),
    u_unified=Array("n n_bits", tensor=True),
    s=Array("n n", tensor=True),
    quantization_weight=Float(0.0),
    relation=_loss_inputs,
)
def uggrh_loss(
    u_image: torch.Tensor,
    u_text: torch.Tensor,
    u_unified: torch.Tensor | None,
    s: torch.Tensor,
    quantization_weight: float,
) -> torch.Tensor:
    """Eq. (uggrh-loss): code inner products reconstruct S; modality codes are pulled to the unified binary code.

    With ``u_unified = None`` it is the baseline's DJSRH-style loss (intra- and cross-modal terms only).
    """
    k = u_image.shape[1]

    def reconstruction(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        diff = torch.addmm(s, a, b.T, beta=-1.0, alpha=1.0 / k)  # A Bᵀ / k − S in one kernel
        return torch.linalg.vector_norm(diff) ** 2 / diff.numel()  # ‖A Bᵀ / k − S‖² / n²

    loss = reconstruction(u_image, u_image) + reconstruction(u_text, u_text) + reconstruction(u_image, u_text)
    if u_unified is not None:
        b = torch.sign(u_unified).detach()  # B = sign(u_F), the unified binary codes
        loss = loss + reconstruction(u_unified, u_unified)
        loss = loss + quantization_weight * (((u_image - b) ** 2).mean() + ((u_text - b) ** 2).mean())
    return loss


# ---------------------------------------------------------------- fitting


@dataclass
class Prepared:
    """What the hash network trains on: filled, centred features, the similarity target and its kNN graph."""

    image: torch.Tensor
    text: torch.Tensor
    target: torch.Tensor
    neighbours: torch.Tensor
    image_mean: np.ndarray
    text_mean: np.ndarray
    confidence: dict


@dataclass
class HashFunctions:
    """The trained modality hash functions: ``image_codes(x)`` and ``text_codes(t)`` give ±1 codes."""

    net: HashNet
    image_mean: np.ndarray
    text_mean: np.ndarray
    device: torch.device

    @torch.no_grad()
    def _codes(self, encoder: nn.Module, x: np.ndarray, mean: np.ndarray) -> np.ndarray:
        z = encoder(torch.as_tensor(np.asarray(x, float) - mean, dtype=torch.float32, device=self.device))
        return np.where(z.cpu().numpy() >= 0, 1, -1).astype(np.int8)

    def image_codes(self, image: np.ndarray) -> np.ndarray:
        return self._codes(self.net.image_encoder, image, self.image_mean)

    def text_codes(self, text: np.ndarray) -> np.ndarray:
        return self._codes(self.net.text_encoder, text, self.text_mean)


@checked()
def prepare(
    pairs: IncompletePairs,
    modules: Modules | None,
    settings: TrainSettings,
    *,
    seed: int,
    device: str | torch.device = "cpu",
) -> Prepared:
    """Steps 1-2: fill the missing modalities and build the similarity target (``modules=None``: the baseline).

    Baseline: mean-fill and DJSRH's joint similarity. UGGRH: generative completion (or, without it,
    mean-fill with confidence 0: a critic tells a constant fill from data perfectly) and the
    refined similarity (or, without refinement, DJSRH's joint similarity of the completed views).
    """
    if not isinstance(pairs, IncompletePairs):
        raise ValueError(f"pairs must be IncompletePairs (views and masks, no labels), got {type(pairs).__name__}")
    for name, mask in (("image", pairs.has_image), ("text", pairs.has_text)):
        if not mask.any():
            raise ValueError(f"pairs must observe the {name} of at least one sample (has_{name} is all False)")
    dev = resolve_device(device)
    mean_i, mean_t = observed_means(pairs)
    filled_i, filled_t = fill_missing(pairs)
    as_tensor = lambda a: torch.as_tensor(a, dtype=torch.float32, device=dev)  # noqa: E731
    img, txt = as_tensor(filled_i), as_tensor(filled_t)
    has_i, has_t = as_tensor(pairs.has_image).bool(), as_tensor(pairs.has_text).bool()
    with one_cpu_thread(dev), torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        c_i = c_t = image_as_text = None
        if modules is not None and modules.use_completion:
            if int((has_i & has_t).sum()) < 2:
                raise ValueError("generative completion needs at least 2 complete pairs; lower missing_rate")
            completion = train_completion(img, txt, has_i & has_t, settings)
            img, txt, c_i, c_t, image_as_text = complete_views(img, txt, has_i, has_t, completion)
        elif modules is not None:
            c_i, c_t = has_i.float(), has_t.float()
        if modules is None or not modules.use_refinement:
            c_i = c_t = image_as_text = None
        target = similarity_target(img, txt, c_i, c_t, image_as_text, eta=settings.eta, scale=settings.similarity_scale)
        neighbours = knn_graph(target, settings.k_neighbours)
    conf = {}  # mean confidence of the generated rows, where there are any
    if c_i is not None and (~has_i).any():
        conf["image_generated"] = float(c_i[~has_i].mean())
    if c_t is not None and (~has_t).any():
        conf["text_generated"] = float(c_t[~has_t].mean())
    return Prepared(img, txt, target, neighbours, mean_i, mean_t, conf)


@checked(n_bits=Int(1, 4096), skip_nested=True)
def train_hashing(
    prepared: Prepared,
    n_bits: int,
    modules: Modules | None,
    settings: TrainSettings,
    *,
    seed: int,
    device: str | torch.device = "cpu",
) -> HashFunctions:
    """Steps 3-4: train the hash network on ``prepared`` with eq. (uggrh-loss) (``modules=None``: the baseline)."""
    dev = resolve_device(device)
    with one_cpu_thread(dev), torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        net = HashNet(prepared.image.shape[1], prepared.text.shape[1], n_bits, settings.n_hidden, modules).to(dev)
        opt = torch.optim.Adam(net.parameters(), lr=settings.lr)
        for epoch in range(settings.n_epochs):
            z_i, z_t = net.image_encoder(prepared.image), net.text_encoder(prepared.text)
            u_f = None if modules is None else net.unified(z_i, z_t, prepared.neighbours)
            ramp = min(1.0, 2.0 * epoch / settings.n_epochs)  # unified codes are noise at first: ramp their pull
            loss = uggrh_loss(  # inside this boundary: the network's own tensors, not checked per epoch
                torch.tanh(z_i), torch.tanh(z_t), u_f, prepared.target, ramp * settings.quantization_weight
            )
            opt.zero_grad()
            loss.backward()
            opt.step()
    net.eval()
    return HashFunctions(net, prepared.image_mean, prepared.text_mean, dev)
