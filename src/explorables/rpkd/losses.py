"""The distillation losses: cross-entropy, Hinton KD, OFA, and RPKD's two prototype branches.

Every loss takes ensemble tensors (member axis first) and returns one value *per member*
``(M,)``, so that arms with different losses can share a batched forward pass: the training loss
is ``sum_m sum_term weight[m, term] * term[m]``.

RPKD (eqs. rpkd-scores to rpkd-map of the chapter) is reconstructed from the paper's abstract:
the frozen random prototypes, the two branches (a global prototype-similarity distribution and
per-prototype spatial activation maps) are the paper's; the projections, the cosine scores, the
softmax over locations and the KL divergences are our reading of it.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from ..core.arguments import ArgumentError, Array, checked
from ..core.params import Float, Int
from ..core.resources import check_memory
from .models import SEED

#: what the temperatures and OFA's exponent accept (the config's fields use the same rules)
TAU = Float(0.0, 10.0, low_inclusive=False)
TEMPERATURE = Float(0.0, 100.0, low_inclusive=False)
OFA_EPS = Float(0.0, 10.0, low_inclusive=False)  # (p_t + y)^eps: a larger exponent overflows float32
#: the side of the common grid of the feature branch
GRID = Int(1, 64)


def require_tensors(**tensors: object) -> None:
    """Refuse anything but a torch tensor (an ``Array`` rule also lets numpy arrays through)."""
    for name, value in tensors.items():
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")


def check_labels(name: str, labels: torch.Tensor, n_classes: int, *, unknown: bool = True) -> None:
    """Labels must be class indices ``< n_classes``; negative ones mean "unknown" if ``unknown``, else are refused."""
    if not labels.numel():
        return
    low, high = int(labels.min()), int(labels.max())
    if high >= n_classes or (not unknown and low < 0):
        allowed = f"class indices < {n_classes} (negative: unknown)" if unknown else f"classes in [0, {n_classes})"
        raise ValueError(f"{name} must hold {allowed}, got values in [{low}, {high}]")


@checked(logits=Array("m b c"), labels=Array("m b", integer=True))
def cross_entropy(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy per member; ``logits (M, B, C)``, ``labels (M, B)`` (entries ``< 0`` are skipped)."""
    require_tensors(logits=logits, labels=labels)
    check_labels("labels", labels, logits.shape[-1])
    return _cross_entropy(logits, labels)


def _cross_entropy(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    m, b, c = logits.shape
    keep = labels >= 0
    losses = F.cross_entropy(logits.reshape(m * b, c), labels.clamp(min=0).reshape(m * b), reduction="none")
    losses = losses.reshape(m, b) * keep
    return losses.sum(dim=1) / keep.sum(dim=1).clamp(min=1)


def kl_rows(p_log: torch.Tensor, q_log: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """``KL(p || q)`` along ``dim`` from log-probabilities."""
    return (p_log.exp() * (p_log - q_log)).sum(dim=dim)


@checked(student_logits=Array("m b c"), teacher_logits=Array("m b c"), temperature=TEMPERATURE)
def kd_loss(student_logits: torch.Tensor, teacher_logits: torch.Tensor, temperature: float) -> torch.Tensor:
    """Hinton KD, eq. (rpkd-kd): ``T^2 KL(softmax(z_t / T) || softmax(z_s / T))``, mean over the batch."""
    require_tensors(student_logits=student_logits, teacher_logits=teacher_logits)
    t = float(temperature)
    kl = kl_rows(F.log_softmax(teacher_logits / t, dim=-1), F.log_softmax(student_logits / t, dim=-1))
    return t * t * kl.mean(dim=1)


@checked(
    student_logits=Array("m b c"), teacher_logits=Array("m b c"), target_mask=Array("m b c"), eps=OFA_EPS,
    temperature=TEMPERATURE,
)
def ofa_loss(
    student_logits: torch.Tensor, teacher_logits: torch.Tensor, target_mask: torch.Tensor, eps: float,
    temperature: float = 1.0,
) -> torch.Tensor:
    """OFA's adaptive target loss, eq. (rpkd-ofa): ``-sum_c ((p_t + y)^eps - y) log p_s``.

    ``target_mask`` is the one-hot true label where the label is known, and zeros where it is not
    (then the loss is a cross-entropy against the teacher's sharpened, ``eps > 1``, distribution).
    """
    require_tensors(student_logits=student_logits, teacher_logits=teacher_logits, target_mask=target_mask)
    p_t = F.softmax(teacher_logits / temperature, dim=-1)
    log_p_s = F.log_softmax(student_logits / temperature, dim=-1)
    target = (p_t + target_mask).pow(eps) - target_mask
    return -(target * log_p_s).sum(dim=-1).mean(dim=1)


@checked(features=Array(None), grid=GRID)
def as_tokens(features: torch.Tensor, grid: int) -> torch.Tensor:
    """A CNN map ``(M, B, c, h, w)`` or a token sequence ``(M, B, T, c)`` (T a square) as ``grid x grid``
    locations ``(M, B, grid^2, c)``, by adaptive average pooling (the common grid of the feature branch)."""
    require_tensors(features=features)
    if features.dim() == 4:  # tokens: (M, B, T, c) -> (M, B, c, s, s)
        m, b, t, c = features.shape
        side = math.isqrt(t)
        if side * side != t:
            raise ValueError(f"features must hold a square number of tokens, got {t}")
        features = features.transpose(-1, -2).reshape(m, b, c, side, side)
    if features.dim() != 5:
        raise ValueError(f"features must be (M, B, c, h, w) or (M, B, T, c), got shape {tuple(features.shape)}")
    m, b, c, h, w = features.shape
    pooled = F.adaptive_avg_pool2d(features.reshape(m * b, c, h, w), grid)
    return pooled.reshape(m, b, c, grid * grid).transpose(-1, -2)


@checked(n_prototypes=Int(2, 65536), d_prototype=Int(1, 4096), d_teacher=Int(1, 65536), seed=SEED)
class RandomPrototypes(nn.Module):
    """``K`` frozen random prototypes on the unit sphere of ``R^d``, and a frozen random teacher projection.

    Both are buffers drawn once from ``seed``: nothing trains them, and they never see a label.
    """

    def __init__(self, n_prototypes: int, d_prototype: int, d_teacher: int, seed: int):
        super().__init__()
        check_memory({"random prototypes ((n_prototypes + d_teacher) x d_prototype)":
                      3 * 4 * (n_prototypes + d_teacher) * d_prototype})
        g = torch.Generator().manual_seed(seed)
        self.register_buffer("prototypes", F.normalize(torch.randn(n_prototypes, d_prototype, generator=g), dim=-1))
        self.register_buffer("teacher_projection", torch.randn(d_teacher, d_prototype, generator=g) / d_teacher**0.5)

    @checked(tokens=Array("... e", tensor=True))
    def project_teacher(self, tokens: torch.Tensor) -> torch.Tensor:
        """The teacher's locations ``(..., c_T)`` (finite, ``c_T`` the teacher width ``d_teacher``) in ``R^d``
        through the frozen random map ``g_T``. The training loop calls :meth:`_project_teacher` (no checks)."""
        d_teacher = self.teacher_projection.shape[0]
        if tokens.shape[-1] != d_teacher:
            raise ArgumentError(f"tokens must have shape (..., d_teacher={d_teacher}), got {tuple(tokens.shape)}")
        if not tokens.is_floating_point():
            raise ArgumentError(f"tokens must be a float tensor, got dtype {tokens.dtype}")
        return self._project_teacher(tokens.to(self.teacher_projection.dtype))

    def _project_teacher(self, tokens: torch.Tensor) -> torch.Tensor:
        return tokens @ self.teacher_projection


@checked(z=Array("... d"), prototypes=Array("k d"), tau=TAU)
def prototype_scores(z: torch.Tensor, prototypes: torch.Tensor, tau: float) -> torch.Tensor:
    """Eq. (rpkd-scores): ``s_k = cos(z, P_k) / tau`` for every location: ``(..., d) -> (..., K)``."""
    require_tensors(z=z, prototypes=prototypes)
    return _prototype_scores(z, prototypes, tau)


def _prototype_scores(z: torch.Tensor, prototypes: torch.Tensor, tau: float) -> torch.Tensor:
    """Eq. (rpkd-scores): each location's cosine with every prototype, over the temperature."""
    return F.normalize(z, dim=-1) @ prototypes.T / tau


@checked(z=Array("... l d"), prototypes=Array("k d"), tau=TAU)
def global_distribution(z: torch.Tensor, prototypes: torch.Tensor, tau: float) -> torch.Tensor:
    """Eq. (rpkd-global): log of ``softmax_k(cos(mean_l z_l, P_k) / tau)`` for ``z (M, B, L, d)`` -> ``(M, B, K)``."""
    require_tensors(z=z, prototypes=prototypes)
    return _global_distribution(z, prototypes, tau)


def _global_distribution(z: torch.Tensor, prototypes: torch.Tensor, tau: float) -> torch.Tensor:
    """Eq. (rpkd-global): the pooled feature's distribution over the prototypes (log-probabilities)."""
    return F.log_softmax(_prototype_scores(z.mean(dim=-2), prototypes, tau), dim=-1)


@checked(z=Array("... l d"), prototypes=Array("k d"), tau=TAU)
def activation_maps(z: torch.Tensor, prototypes: torch.Tensor, tau: float) -> torch.Tensor:
    """Eq. (rpkd-map): log of each prototype's softmax over the ``L`` locations, ``(M, B, L, d) -> (M, B, K, L)``."""
    require_tensors(z=z, prototypes=prototypes)
    return _activation_maps(z, prototypes, tau)


def _activation_maps(z: torch.Tensor, prototypes: torch.Tensor, tau: float) -> torch.Tensor:
    """Eq. (rpkd-map): each prototype's distribution over the locations (log-probabilities)."""
    return F.log_softmax(_prototype_scores(z, prototypes, tau).transpose(-1, -2), dim=-1)


@checked(z_student=Array("m b l d"), z_teacher=Array("m b l d"), prototypes=Array("k d"), tau=TAU)
def rpkd_losses(
    z_student: torch.Tensor, z_teacher: torch.Tensor, prototypes: torch.Tensor, tau: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """RPKD's two branches per member: ``(L_glob, L_map)``, eqs. (rpkd-glob-loss) and (rpkd-map-loss).

    ``z_student``, ``z_teacher``: projected locations ``(M, B, L, d)`` on the same grid.
    """
    require_tensors(z_student=z_student, z_teacher=z_teacher, prototypes=prototypes)
    return _rpkd_losses(z_student, _global_distribution(z_teacher, prototypes, tau),
                        _activation_maps(z_teacher, prototypes, tau), prototypes, tau)


def _rpkd_losses(z_student: torch.Tensor, glob_teacher: torch.Tensor, maps_teacher: torch.Tensor,
                 prototypes: torch.Tensor, tau: float) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`rpkd_losses` from the teacher's side already computed: its global distribution ``(M, B, K)``
    (:func:`global_distribution`) and its activation maps ``(M, B, K, L)`` (:func:`activation_maps`), both
    log-probabilities (the training loop computes them once over the transfer set and reads each batch's rows)."""
    glob = kl_rows(glob_teacher, _global_distribution(z_student, prototypes, tau))
    maps = kl_rows(maps_teacher, _activation_maps(z_student, prototypes, tau))
    return glob.mean(dim=1), maps.mean(dim=(1, 2))


@checked(z_student=Array("m b l d"), z_teacher=Array("m b l d"))
def feature_match_loss(z_student: torch.Tensor, z_teacher: torch.Tensor) -> torch.Tensor:
    """The control: ``1 - cos(z_s, z_t)`` per location through the same random projection, no prototypes."""
    require_tensors(z_student=z_student, z_teacher=z_teacher)
    return (1 - F.cosine_similarity(z_student, z_teacher, dim=-1)).mean(dim=(1, 2))
