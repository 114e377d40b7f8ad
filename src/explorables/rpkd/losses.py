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

from ..core.validation import check_int, check_positive


def cross_entropy(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy per member; ``logits (M, B, C)``, ``labels (M, B)`` (entries ``< 0`` are skipped)."""
    m, b, c = logits.shape
    keep = labels >= 0
    losses = F.cross_entropy(logits.reshape(m * b, c), labels.clamp(min=0).reshape(m * b), reduction="none")
    losses = losses.reshape(m, b) * keep
    return losses.sum(dim=1) / keep.sum(dim=1).clamp(min=1)


def kl_rows(p_log: torch.Tensor, q_log: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """``KL(p || q)`` along ``dim`` from log-probabilities."""
    return (p_log.exp() * (p_log - q_log)).sum(dim=dim)


def kd_loss(student_logits: torch.Tensor, teacher_logits: torch.Tensor, temperature: float) -> torch.Tensor:
    """Hinton KD, eq. (rpkd-kd): ``T^2 KL(softmax(z_t / T) || softmax(z_s / T))``, mean over the batch."""
    t = check_positive("temperature", temperature)
    kl = kl_rows(F.log_softmax(teacher_logits / t, dim=-1), F.log_softmax(student_logits / t, dim=-1))
    return t * t * kl.mean(dim=1)


def ofa_loss(
    student_logits: torch.Tensor, teacher_logits: torch.Tensor, target_mask: torch.Tensor, eps: float,
    temperature: float = 1.0,
) -> torch.Tensor:
    """OFA's adaptive target loss, eq. (rpkd-ofa): ``-sum_c ((p_t + y)^eps - y) log p_s``.

    ``target_mask`` is the one-hot true label where the label is known, and zeros where it is not
    (then the loss is a cross-entropy against the teacher's sharpened, ``eps > 1``, distribution).
    """
    check_positive("eps", eps)
    p_t = F.softmax(teacher_logits / temperature, dim=-1)
    log_p_s = F.log_softmax(student_logits / temperature, dim=-1)
    target = (p_t + target_mask).pow(eps) - target_mask
    return -(target * log_p_s).sum(dim=-1).mean(dim=1)


def as_tokens(features: torch.Tensor, grid: int) -> torch.Tensor:
    """A CNN map ``(M, B, c, h, w)`` or a token sequence ``(M, B, T, c)`` (T a square) as ``grid x grid``
    locations ``(M, B, grid^2, c)``, by adaptive average pooling (the common grid of the feature branch)."""
    check_int("grid", grid, 1)
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


class RandomPrototypes(nn.Module):
    """``K`` frozen random prototypes on the unit sphere of ``R^d``, and a frozen random teacher projection.

    Both are buffers drawn once from ``seed``: nothing trains them, and they never see a label.
    """

    def __init__(self, n_prototypes: int, d_prototype: int, d_teacher: int, seed: int):
        super().__init__()
        check_int("n_prototypes", n_prototypes, 2)
        check_int("d_prototype", d_prototype, 1)
        check_int("d_teacher", d_teacher, 1)
        g = torch.Generator().manual_seed(seed)
        self.register_buffer("prototypes", F.normalize(torch.randn(n_prototypes, d_prototype, generator=g), dim=-1))
        self.register_buffer("teacher_projection", torch.randn(d_teacher, d_prototype, generator=g) / d_teacher**0.5)

    def project_teacher(self, tokens: torch.Tensor) -> torch.Tensor:
        """The teacher's locations ``(..., c_T)`` in ``R^d`` through the frozen random map ``g_T``."""
        return tokens @ self.teacher_projection


def prototype_scores(z: torch.Tensor, prototypes: torch.Tensor, tau: float) -> torch.Tensor:
    """Eq. (rpkd-scores): ``s_k = cos(z, P_k) / tau`` for every location: ``(..., d) -> (..., K)``."""
    check_positive("tau", tau)
    return F.normalize(z, dim=-1) @ prototypes.T / tau


def global_distribution(z: torch.Tensor, prototypes: torch.Tensor, tau: float) -> torch.Tensor:
    """Eq. (rpkd-global): log of ``softmax_k(cos(mean_l z_l, P_k) / tau)`` for ``z (M, B, L, d)`` -> ``(M, B, K)``."""
    return F.log_softmax(prototype_scores(z.mean(dim=-2), prototypes, tau), dim=-1)


def activation_maps(z: torch.Tensor, prototypes: torch.Tensor, tau: float) -> torch.Tensor:
    """Eq. (rpkd-map): log of each prototype's softmax over the ``L`` locations, ``(M, B, L, d) -> (M, B, K, L)``."""
    return F.log_softmax(prototype_scores(z, prototypes, tau).transpose(-1, -2), dim=-1)


def rpkd_losses(
    z_student: torch.Tensor, z_teacher: torch.Tensor, prototypes: torch.Tensor, tau: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """RPKD's two branches per member: ``(L_glob, L_map)``, eqs. (rpkd-glob-loss) and (rpkd-map-loss).

    ``z_student``, ``z_teacher``: projected locations ``(M, B, L, d)`` on the same grid.
    """
    glob = kl_rows(global_distribution(z_teacher, prototypes, tau), global_distribution(z_student, prototypes, tau))
    maps = kl_rows(activation_maps(z_teacher, prototypes, tau), activation_maps(z_student, prototypes, tau))
    return glob.mean(dim=1), maps.mean(dim=(1, 2))


def feature_match_loss(z_student: torch.Tensor, z_teacher: torch.Tensor) -> torch.Tensor:
    """The control: ``1 - cos(z_s, z_t)`` per location through the same random projection, no prototypes."""
    return (1 - F.cosine_similarity(z_student, z_teacher, dim=-1)).mean(dim=(1, 2))
