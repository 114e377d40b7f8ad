"""Training the teachers and the students: every (method, seed) arm is one member of an ensemble.

The student's labels reach only the cross-entropy term (and OFA's target mask), and only on the
labelled subset; the distillation terms read the teacher's outputs on the transfer set.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F
from tqdm.auto import tqdm

from ..core.arguments import Array, checked
from ..core.checkpoint import Checkpointer, LoopState
from ..core.params import Bool, Choice, Float, Int, Tuple
from .data import _translate
from .losses import (
    GRID,
    OFA_EPS,
    TAU,
    TEMPERATURE,
    RandomPrototypes,
    _activation_maps,
    _cross_entropy,
    _global_distribution,
    _rpkd_losses,
    as_tokens,
    check_labels,
    feature_match_loss,
    kd_loss,
    ofa_loss,
    require_tensors,
    rpkd_losses,
)
from .models import (
    CLASSES,
    MEMBERS,
    SEED,
    STUDENTS,
    WIDTH,
    EnsembleLinear,
    check_device,
    make_student,
    make_teacher,
    recompute_batch_norm,
)

#: the methods compared, and the control (CE plus feature matching through the same random projection, no prototypes)
CONTROL = "feature_match"
ARMS: tuple[str, ...] = ("ce", "kd", "ofa", "rpkd", "rpkd_kd", CONTROL)
ARM_LABELS = {
    "ce": "CE",
    "kd": "KD",
    "ofa": "OFA",
    "rpkd": "RPKD",
    "rpkd_kd": "RPKD + KD",
    CONTROL: "random-projection feature matching (control)",
}
TERMS: tuple[str, ...] = ("ce", "kd", "ofa", "glob", "map", "feature")
#: which loss terms each arm switches on (their weights come from :class:`LossWeights`)
ARM_TERMS: dict[str, tuple[str, ...]] = {
    "ce": ("ce",),
    "kd": ("ce", "kd"),
    "ofa": ("ce", "ofa"),
    "rpkd": ("ce", "glob", "map"),
    "rpkd_kd": ("ce", "kd", "glob", "map"),
    CONTROL: ("ce", "feature"),
}


#: a term's weight (the config's ``*_weight`` fields use the same rule)
WEIGHT = Float(0.0, 1e4)
#: Adam's learning rate: a step above 10 in every weight is never meant (the loss runs to NaN)
LR = Float(0.0, 10.0, low_inclusive=False)
#: optimiser steps of one training call
STEPS = Int(1, 10**7)
#: the largest offset (pixels) of the students' fresh views (0: no augmentation)
AUGMENT = Int(0, 8)
#: images: one channel, at least 2x2 pixels (the CNN max-pools once)
IMAGES = Array("s n 1 h w", min_size=(("h", 2), ("w", 2)))


@checked(kd=WEIGHT, ofa=WEIGHT, glob=WEIGHT, map=WEIGHT, feature=WEIGHT)
@dataclass(frozen=True)
class LossWeights:
    """Weights of the terms; eq. (rpkd-total): ``L = CE + alpha KD + beta L_glob + gamma L_map``."""

    kd: float = 1.0
    ofa: float = 1.0
    glob: float = 1.0
    map: float = 1.0
    feature: float = 1.0

    @checked(arms=Tuple(Choice(ARMS)), n_seeds=Int(1, 10**4))
    def matrix(self, arms: tuple[str, ...], n_seeds: int) -> torch.Tensor:
        """``(len(arms) * n_seeds, len(TERMS))``: the weight of every term for every member (arm-major)."""
        rows = []
        for arm in arms:
            row = [(1.0 if t == "ce" else getattr(self, t)) if t in ARM_TERMS[arm] else 0.0 for t in TERMS]
            rows += [row] * n_seeds
        return torch.tensor(rows)


@checked(images=IMAGES, labels=Array("s n", integer=True), n_classes=CLASSES, width=WIDTH, n_steps=STEPS,
         batch_size=Int(1), lr=LR, seed=SEED, norm=Bool())
def train_teachers(
    images: torch.Tensor, labels: torch.Tensor, n_classes: int, *, width: int, n_steps: int, batch_size: int,
    lr: float, seed: int, device: torch.device | str, progress: bool = False,
    checkpoint: Checkpointer | None = None, name: str = "teachers", norm: bool = True,
) -> nn.Module:
    """One CNN teacher per seed (``images (S, N, 1, H, W)``, super-class ``labels (S, N)``), trained with CE.

    The loop state (weights, optimiser, batch sampler, step) is stored under ``name`` with
    ``checkpoint.maybe_save`` (and once at the end); a resumed run continues from it, to the bit."""
    require_tensors(images=images, labels=labels)
    check_labels("labels", labels, n_classes, unknown=False)
    device = check_device("device", device)
    n_seeds, n = labels.shape
    teacher = make_teacher(n_seeds, n_classes, width, seed, device, norm=norm)
    opt = torch.optim.Adam(teacher.parameters(), lr=lr)
    g = torch.Generator().manual_seed(seed + 1)

    loop = LoopState(checkpoint, name, modules={"model": teacher}, optimizers={"optimizer": opt},
                     generators={"generator": g})  # fmt: skip
    start, _ = loop.restore()
    for t in tqdm(range(start, n_steps), desc="teachers", disable=not progress, leave=False):
        idx = torch.randint(n, (n_seeds, min(batch_size, n)), generator=g).to(device)
        x = torch.gather(images, 1, idx[..., None, None, None].expand(-1, -1, *images.shape[2:]))
        logits, _, _ = teacher(x)
        loss = _cross_entropy(logits, torch.gather(labels, 1, idx)).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        loop.save(t + 1)
    if start < n_steps:
        loop.save(n_steps, final=True)  # the finished teacher: a later kill never retrains it
    # eval() mode reads running statistics: those of the final weights on the whole training set (one pass), not a
    # moving average of the last batches, which lagged the weights (benchmarks/rpkd_standard_kd_rule.md)
    recompute_batch_norm(teacher, images)
    return teacher


@torch.no_grad()
def teacher_targets(
    teacher: nn.Module, images: torch.Tensor, grid: int, reference: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """The teacher's logits ``(S, N, C)`` and its feature map on the common grid, each channel
    standardised over the transfer set: ``(S, N, grid^2, c_T)``. The transfer set is ``images``
    unless ``reference`` (images ``(S, N', ...)``) is given: then a few other images (the lab's
    test images) are standardised with the statistics the students were trained against."""
    logits, features, _ = teacher(images)
    tokens = as_tokens(features, grid)
    ref = tokens if reference is None else as_tokens(teacher(reference)[1], grid)
    mean = ref.mean(dim=(1, 2), keepdim=True)
    std = ref.std(dim=(1, 2), keepdim=True).clamp(min=1e-6)
    return logits, (tokens - mean) / std


class Distiller(nn.Module):
    """A student ensemble with its learnable projector ``g_S`` into the prototype space and OFA's exit head."""

    def __init__(self, student: nn.Module, n_members: int, d_stage1: int, n_classes: int, d_prototype: int, seed: int):
        super().__init__()
        g = torch.Generator().manual_seed(seed + 17)
        self.student = student
        self.projector = EnsembleLinear(n_members, student.d_feature, d_prototype, g)
        self.ofa_head = EnsembleLinear(n_members, d_stage1, n_classes, g)

    def forward(self, x: torch.Tensor, grid: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        logits, features, stage1 = self.student(x)
        return logits, self.projector(as_tokens(features, grid)), self.ofa_head(stage1)


#: the most bytes :class:`TeacherRows` may hold; a larger transfer set (the paper scale) computes the teacher's side
#: of every batch in the step instead
TEACHER_ROWS_BYTES = 2**28


class TeacherRows:
    """The teacher's side of RPKD (its projected map ``z_T``, global distribution and activation maps) over the
    whole transfer set, computed once: the teacher's tokens are fixed, so the training loop reads each batch's
    rows instead of recomputing them every step for every member (the same numbers: each row is computed alone;
    tested). ``teacher_tokens (S, N, L, c_T)``; :meth:`batch` sets the batch ``idx (S, B)``; called with a
    table's name (``"z"``, ``"glob"``, ``"maps"``) and members ``m`` (member ``a * S + s`` reads seed ``s``'s
    rows), it returns ``(len(m), B, ...)``."""

    def __init__(self, prototypes: RandomPrototypes, teacher_tokens: torch.Tensor, tau: float):
        with torch.no_grad():
            z = prototypes._project_teacher(teacher_tokens)
            self.tables = {"z": z, "glob": _global_distribution(z, prototypes.prototypes, tau),
                           "maps": _activation_maps(z, prototypes.prototypes, tau)}
        self.n_seeds = teacher_tokens.shape[0]
        self.idx: torch.Tensor | None = None

    @staticmethod
    def nbytes(teacher_tokens: torch.Tensor, prototypes: RandomPrototypes) -> int:
        """What the tables of ``teacher_tokens`` would hold, in bytes."""
        s, n, locations, _ = teacher_tokens.shape
        k, d = prototypes.prototypes.shape
        return 4 * s * n * (locations * d + k + k * locations)

    def batch(self, idx: torch.Tensor) -> TeacherRows:
        self.idx = idx
        return self

    def __call__(self, name: str, members: torch.Tensor) -> torch.Tensor:
        seeds = members % self.n_seeds
        return self.tables[name][seeds[:, None], self.idx[seeds]]


def member_losses(
    model: Distiller, prototypes: RandomPrototypes, x: torch.Tensor, labels: torch.Tensor,
    teacher_logits: torch.Tensor, teacher_tokens: torch.Tensor, *, grid: int, temperature: float, tau: float,
    ofa_eps: float, members: dict[str, torch.Tensor] | None = None, teacher_rows: TeacherRows | None = None,
) -> torch.Tensor:
    """Every term for every member on one batch: ``(M, len(TERMS))``.

    ``labels (M, B)`` are ``-1`` where the student has no label; they reach only CE and OFA's mask.
    ``members`` (optional): per term, the members whose value is computed; the others read 0. The training
    loop passes the members whose weight of that term is not 0: the rest could change neither the loss nor
    a gradient, and skipping them leaves every number as it was (each member's value is computed alone).
    ``teacher_rows`` (optional): the teacher's side of RPKD and of the control, computed once over the transfer
    set (:class:`TeacherRows`, set to this batch); ``teacher_tokens`` is then not read (the same numbers: tested).
    """
    logits, z_student, ofa_logits = model(x, grid)
    n_classes = logits.shape[-1]
    mask = F.one_hot(labels.clamp(min=0), n_classes).float() * (labels >= 0)[..., None]

    def term(names: tuple[str, ...], fn, *tensors: torch.Tensor) -> torch.Tensor:
        """``fn(*tensors)`` on the members of ``names`` (all of them without ``members``), 0 elsewhere."""
        if members is None:
            return fn(*tensors)
        idx = torch.unique(torch.cat([members[n] for n in names]))
        if len(idx) == len(logits):
            return fn(*tensors)
        out = logits.new_zeros(len(logits))
        return out if not len(idx) else out.index_copy(0, idx, fn(*(t[idx] for t in tensors)))

    # the public losses run bare inside train_students (skip_nested): it checked their inputs once, not every step
    def rpkd(z_s: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        glob, maps = rpkd_losses(z_s, prototypes._project_teacher(tokens), prototypes.prototypes, tau)
        return torch.stack([glob, maps], dim=1)

    def ofa(s_logits: torch.Tensor, o_logits: torch.Tensor, t_logits: torch.Tensor, m: torch.Tensor):
        return ofa_loss(s_logits, t_logits, m, ofa_eps) + ofa_loss(o_logits, t_logits, m, ofa_eps)

    def rpkd_rows(idx: torch.Tensor) -> torch.Tensor:  # the teacher's side read from teacher_rows
        glob, maps = _rpkd_losses(z_student[idx], teacher_rows("glob", idx), teacher_rows("maps", idx),
                                  prototypes.prototypes, tau)
        return torch.stack([glob, maps], dim=1)

    every = torch.arange(len(logits), device=logits.device)
    if members is None:
        glob_maps = rpkd(z_student, teacher_tokens) if teacher_rows is None else rpkd_rows(every)
    else:
        idx = torch.unique(torch.cat([members["glob"], members["map"]]))
        glob_maps = logits.new_zeros(len(logits), 2)
        if len(idx):
            glob_maps = glob_maps.index_copy(0, idx, rpkd(z_student[idx], teacher_tokens[idx]) if teacher_rows is None
                                             else rpkd_rows(idx))
    if teacher_rows is None:
        feature = term(("feature",), lambda z, t: feature_match_loss(z, prototypes._project_teacher(t)),
                       z_student, teacher_tokens)
    else:  # the members' indices stand in for the teacher's tensor: term() picks those it computes
        feature = term(("feature",), lambda z, m: feature_match_loss(z, teacher_rows("z", m)), z_student,
                       every)
    terms = [
        term(("ce",), _cross_entropy, logits, labels),
        term(("kd",), lambda s, t: kd_loss(s, t, temperature), logits, teacher_logits),
        term(("ofa",), ofa, logits, ofa_logits, teacher_logits, mask),
        glob_maps[:, 0],
        glob_maps[:, 1],
        feature,
    ]
    return torch.stack(terms, dim=1)


def _take(t: torch.Tensor, idx: torch.Tensor, n_arms: int) -> torch.Tensor:
    """Rows ``idx (S, B)`` of each seed's ``t (S, N, ...)``, repeated: member ``a * S + s`` gets seed ``s``'s."""
    picked = torch.gather(t, 1, idx.view(*idx.shape, *[1] * (t.dim() - 2)).expand(-1, -1, *t.shape[2:]))
    return picked.repeat(n_arms, *[1] * (t.dim() - 1))


@checked(  # the losses, the student's and teacher's maps (as_tokens) and make_student run bare in the body
    skip_nested=True,
    kind=Choice(STUDENTS), arms=Tuple(Choice(ARMS)), images=IMAGES, labels=Array("s n", integer=True),
    teacher_logits=Array("s n c"), teacher_tokens=Array("s n l e"), width=WIDTH, grid=GRID, n_steps=STEPS,
    batch_size=Int(1), lr=LR, temperature=TEMPERATURE, tau=TAU, ofa_eps=OFA_EPS, seed=SEED, augment=AUGMENT,
    teacher_rows=Bool(),
)
def train_students(
    kind: str, arms: tuple[str, ...], images: torch.Tensor, labels: torch.Tensor, teacher_logits: torch.Tensor,
    teacher_tokens: torch.Tensor, prototypes: RandomPrototypes, weights: LossWeights, *, width: int, grid: int,
    n_steps: int, batch_size: int, lr: float, temperature: float, tau: float, ofa_eps: float, seed: int,
    device: torch.device | str, progress: bool = False, checkpoint: Checkpointer | None = None,
    name: str = "students", augment: int = 0, teacher: nn.Module | None = None, teacher_rows: bool = True,
) -> tuple[Distiller, list[float]]:
    """All arms x seeds trained side by side. ``images (S, N, 1, H, W)``; ``labels (S, N)`` hold ``-1``
    where the student has no label. With some labels missing, the labelled images join every batch; with
    every label known (the standard protocol) batches are plain random draws. Returns the ensemble (member
    ``a * S + s``) and the loss curve. The loop state is stored under ``name`` with ``checkpoint.maybe_save``;
    a resumed run continues from it, to the bit.

    ``augment > 0``: consistent augmentation (Beyer et al., 2022). Every step each batch image is moved by a
    fresh random offset in ``[-augment, augment]^2`` pixels (zero fill), and every arm of a seed, and the
    ``teacher`` (a one-member ensemble: the one that gave ``teacher_logits`` and ``teacher_tokens``), see that
    same view: the teacher's logits and feature map are computed on it, the map standardised with the transfer
    set's statistics (as :func:`teacher_targets` does), and CE reads the view with its image's label. The
    precomputed ``teacher_logits`` / ``teacher_tokens`` then only fix the shapes.

    ``teacher_rows`` (without ``augment``): the teacher's side of RPKD and the control is computed once over the
    transfer set (:class:`TeacherRows`, if it holds at most ``TEACHER_ROWS_BYTES``) and each batch reads its rows;
    ``False``: computed in every step from the batch's ``teacher_tokens``. The numbers are the same (tested)."""
    require_tensors(images=images, labels=labels, teacher_logits=teacher_logits, teacher_tokens=teacher_tokens)
    n_classes = teacher_logits.shape[-1]
    CLASSES.check("the classes of teacher_logits (last axis)", n_classes)  # make_student's rule: it runs bare
    check_labels("labels", labels, n_classes)
    if teacher_tokens.shape[2] != grid * grid:
        raise ValueError(f"teacher_tokens must hold grid^2 = {grid * grid} locations (axis 2), "
                         f"got shape {tuple(teacher_tokens.shape)}")
    d_teacher = prototypes.teacher_projection.shape[0]
    if teacher_tokens.shape[3] != d_teacher:
        raise ValueError(f"teacher_tokens must have the prototypes' teacher width {d_teacher} on its last axis, "
                         f"got shape {tuple(teacher_tokens.shape)}")
    side = images.shape[-1]
    if images.shape[-2] != side or side > 64 or (kind == "mixer" and side % 2):
        raise ValueError(f"images must be square pictures of side <= 64 (even for the mixer), "
                         f"got shape {tuple(images.shape)}")
    device = check_device("device", device)
    if augment:
        view_targets = _view_targets(teacher, images[:1], grid, n_classes, d_teacher, augment)
    n_seeds, n = labels.shape
    n_arms = len(arms)
    MEMBERS.check("the members (len(arms) x seeds)", n_arms * n_seeds)  # make_student's rule: it runs bare
    student = make_student(kind, n_arms * n_seeds, n_classes, width, seed, images.shape[-1], device)
    d_stage1 = student.conv1.weight.shape[0] // (n_arms * n_seeds) if kind == "cnn" else width
    model = Distiller(student, n_arms * n_seeds, d_stage1, n_classes, prototypes.prototypes.shape[1], seed).to(device)
    weight = weights.matrix(arms, n_seeds).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    g = torch.Generator().manual_seed(seed + 2)
    # the views' own generator: the batches are those of the run without augmentation
    generators = {"generator": g} | ({"augment_generator": torch.Generator().manual_seed(seed + 3)} if augment else {})
    curve: list[float] = []

    loop = LoopState(checkpoint, name, modules={"model": model}, optimizers={"optimizer": opt}, generators=generators)
    start, saved = loop.restore()
    if start:
        curve = [float(v) for v in saved["curve"]]
    labelled = torch.nonzero(labels[0] >= 0).flatten()
    # each term on the members that weigh it (a term of weight 0 changes neither the loss nor a gradient)
    members = {t: torch.nonzero(weight[:, j]).flatten() for j, t in enumerate(TERMS)}
    rows = None
    if (not augment and teacher_rows and any(len(members[t]) for t in ("glob", "map", "feature"))
            and TeacherRows.nbytes(teacher_tokens, prototypes) <= TEACHER_ROWS_BYTES):
        rows = TeacherRows(prototypes, teacher_tokens, tau)
    for step in tqdm(range(start, n_steps), desc="students", disable=not progress, leave=False):
        idx = torch.randint(n, (n_seeds, min(batch_size, n)), generator=g).to(device)
        if len(labelled) < n:  # semi-supervised: the few labelled images join every batch
            idx = torch.cat([labelled.expand(n_seeds, -1), idx], dim=1)
        if augment:  # one fresh view per seed and image, shared by every arm and the teacher
            views = _take(images, idx, 1)
            offsets = torch.randint(-augment, augment + 1, (views.shape[0] * views.shape[1], 2),
                                    generator=generators["augment_generator"]).to(device)
            views = _translate(views.flatten(0, 1), offsets, augment).view(views.shape)
            batch = (views, _take(labels, idx, 1), *view_targets(views))
            batch = tuple(b.repeat(n_arms, *[1] * (b.dim() - 1)) for b in batch)
        elif rows is not None:  # the teacher's side of RPKD and the control read from the precomputed rows
            batch = (*(_take(t, idx, n_arms) for t in (images, labels, teacher_logits)), None)
        else:
            batch = tuple(_take(t, idx, n_arms) for t in (images, labels, teacher_logits, teacher_tokens))
        terms = member_losses(model, prototypes, *batch, grid=grid, temperature=temperature, tau=tau,
                              ofa_eps=ofa_eps, members=members, teacher_rows=None if rows is None else rows.batch(idx))
        loss = (weight * terms).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        curve.append(float(loss.detach()) / weight.shape[0])
        loop.save(step + 1, lambda: {"curve": list(curve)})
    model.eval()
    return model, curve


def _view_targets(teacher: nn.Module | None, transfer: torch.Tensor, grid: int, n_classes: int, d_teacher: int,
                  augment: int):
    """For ``train_students(augment=...)``: a function from views ``(S, B, 1, H, W)`` to the teacher's logits
    ``(S, B, C)`` and its feature map on the common grid ``(S, B, grid^2, c_T)``, standardised with the
    statistics of the (unshifted) ``transfer`` set ``(1, N, 1, H, W)``, the ones the precomputed targets have."""
    if teacher is None or not isinstance(teacher, nn.Module):
        raise ValueError(f"teacher must be the teacher network (a one-member ensemble) when augment = {augment} > 0, "
                         f"got {type(teacher).__name__}")
    with torch.no_grad():
        logits, features, _ = teacher(transfer)
        tokens = as_tokens(features, grid)
    if logits.shape[0] != 1 or logits.shape[-1] != n_classes or tokens.shape[-1] != d_teacher:
        raise ValueError(f"teacher must be one network with {n_classes} classes and {d_teacher} channels (the "
                         f"targets' shapes), got {logits.shape[0]} member(s), {logits.shape[-1]} classes, "
                         f"{tokens.shape[-1]} channels")
    mean = tokens.mean(dim=(1, 2), keepdim=True)
    std = tokens.std(dim=(1, 2), keepdim=True).clamp(min=1e-6)

    @torch.no_grad()
    def targets(views: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        s, b = views.shape[:2]
        logits, features, _ = teacher(views.reshape(1, s * b, *views.shape[2:]))
        tokens = (as_tokens(features, grid) - mean) / std
        return logits.reshape(s, b, -1), tokens.reshape(s, b, *tokens.shape[2:])

    return targets


@torch.no_grad()
def accuracy(model: nn.Module, images: torch.Tensor, labels: torch.Tensor, n_arms: int = 1) -> torch.Tensor:
    """Test accuracy per member; ``images (S, N, ...)`` and ``labels (S, N)`` are repeated over ``n_arms``."""
    x = images.repeat(n_arms, *[1] * (images.dim() - 1))
    y = labels.repeat(n_arms, 1)
    net = model.student if isinstance(model, Distiller) else model
    logits, _, _ = net(x)
    return (logits.argmax(dim=-1) == y).float().mean(dim=1)
