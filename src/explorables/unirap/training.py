"""Training regimes, losses, and the ensemble's training loop.

Every regime gets the *same number of optimiser steps* and batch size (the control against "the
curriculum simply trains longer"). Per step, each member draws its own batch from a pool that
holds the general-parsing scenes (query: the tool's name; targets: its box and whole mask) and
the member's instruction-labelled scenes (targets: box, part mask, grasp). Which pool and which
losses depend on the regime and the stage:

* ``curriculum``: stage 1, detection on parsing data; stage 2, + segmentation (parsing data);
  stage 3, box + part mask + pose on the instruction-labelled scenes;
* ``joint`` (no parsing data: the abstract's comparison for the transfer claim): all three losses on the
  instruction-labelled scenes from the first step; no parsing scene ever enters its batches;
* ``joint_parsing`` (control): the curriculum's data without its order: every batch half parsing
  (box + mask), half instruction-labelled (all three losses).

The architectures ``pose_direct`` and ``separate`` train with the curriculum's schedule. Each member's
gradient is clipped on its own (:func:`clip_members`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch.nn import functional as F
from tqdm.auto import tqdm

from ..core.arguments import Array, checked
from ..core.checkpoint import Checkpointer, LoopState
from ..core.params import Choice, Float, Int, Probability, Tuple
from .model import ARCHS, UniRAP, check_outputs

REGIMES: tuple[str, ...] = ("curriculum", "joint", "joint_parsing")
LABELS = {"curriculum": "unified + curriculum",
          "joint": "no parsing data: joint training on the instruction scenes alone",
          "joint_parsing": "control: joint on the curriculum's data", "separate": "separate task heads",
          "pose_direct": "pose from its own attention map (no mask)"}


@checked(regime=Choice(REGIMES), n_labelled=Int(1, 10**6), arch=Choice(ARCHS))
@dataclass(frozen=True)
class Member:
    """One ensemble member: its regime, its instruction-labelled scene count, its seed and its architecture
    (the schedule depends on the first three only: an ablation trains on its regime's very batches)."""

    regime: str
    n_labelled: int
    seed: int
    arch: str = "unified"


@checked(
    n_steps=Int(1, 10**7),
    batch_size=Int(1, 10**5),
    n_parsing=Int(1, 10**7),
    labelled=Array("k", integer=True),
    stage_fractions=Tuple(Probability(), min_len=2, max_len=2),
)
def schedule(member: Member, n_steps: int, batch_size: int, n_parsing: int, labelled: np.ndarray,
             stage_fractions: tuple[float, float], rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Per step: the batch's indices into the pool (parsing scenes first, then instruction scenes) and
    the loss weights ``(box, mask, pose)`` per sample: ``(n_steps, batch_size)`` and ``(n_steps, batch_size, 3)``."""
    if sum(stage_fractions) > 1:
        raise ValueError(f"stage_fractions must sum to at most 1, got {stage_fractions}")
    labelled = np.asarray(labelled)
    if labelled.min() < 0:
        raise ValueError(f"labelled must hold indices >= 0, got min {labelled.min()}")
    idx = np.zeros((n_steps, batch_size), np.int64)
    w = np.zeros((n_steps, batch_size, 3), np.float32)
    s1 = round(stage_fractions[0] * n_steps)
    s2 = s1 + round(stage_fractions[1] * n_steps)
    lab = n_parsing + labelled
    for t in range(n_steps):
        if member.regime == "joint":
            n_parse = 0
        elif member.regime == "joint_parsing":
            n_parse = batch_size // 2
        elif member.regime == "curriculum":
            n_parse = batch_size if t < s2 else 0
        else:
            raise ValueError(f"regime must be one of {REGIMES}, got {member.regime!r}")
        idx[t, :n_parse] = rng.integers(0, n_parsing, n_parse)
        idx[t, n_parse:] = lab[rng.integers(0, len(lab), batch_size - n_parse)]
        w[t, :n_parse] = (1, 1, 0) if (member.regime != "curriculum" or t >= s1) else (1, 0, 0)
        w[t, n_parse:] = (1, 1, 1)
    return idx, w


def targets(pool: dict[str, torch.Tensor], image_size: int) -> dict[str, torch.Tensor]:
    """The pool's targets in the model's units: box (cx, cy, w, h) / S, pose (x, y, cos 2θ, sin 2θ, w / S)."""
    s = float(image_size)
    b, g = pool["boxes"], pool["grasps"]
    box = torch.stack([(b[:, 0] + b[:, 2]) / 2, (b[:, 1] + b[:, 3]) / 2, b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]], 1) / s
    pose = torch.stack([g[:, 0] / s, g[:, 1] / s, torch.cos(2 * g[:, 2]), torch.sin(2 * g[:, 2]), g[:, 3] / s], 1)
    return {"box": box, "mask": pool["masks"].float(), "pose": pose}


@checked()
def losses(out: dict[str, torch.Tensor], target: dict[str, torch.Tensor]) -> torch.Tensor:
    """Per member and sample, the three losses ``(M, B, 3)``: box L1, mask BCE + Dice, pose L1 + angle MSE."""
    check_outputs("out", out, ("box", "mask_logits", "pose"))
    if not isinstance(target, dict) or any(not isinstance(target.get(k), torch.Tensor) for k in ("box", "mask", "pose")):  # noqa: E501
        raise ValueError("target must be a dict of tensors with keys ('box', 'mask', 'pose')")
    for k, key in (("box", "box"), ("mask_logits", "mask"), ("pose", "pose")):
        if target[key].shape != out[k].shape:
            raise ValueError(f"target[{key!r}] has shape {tuple(target[key].shape)}, out[{k!r}] {tuple(out[k].shape)}")
    l_box = 5 * (out["box"] - target["box"]).abs().sum(-1)
    logits, mask = out["mask_logits"], target["mask"]
    pos_weight = torch.tensor(4.0, device=logits.device)  # parts are a few percent of the pixels
    bce = F.binary_cross_entropy_with_logits(logits, mask, reduction="none", pos_weight=pos_weight).mean((-2, -1))
    p = torch.sigmoid(logits)
    dice = 1 - (2 * (p * mask).sum((-2, -1)) + 1) / (p.sum((-2, -1)) + mask.sum((-2, -1)) + 1)
    pose, t = out["pose"], target["pose"]
    l_pose = 5 * (pose[..., :2] - t[..., :2]).abs().sum(-1) + ((pose[..., 2:4] - t[..., 2:4]) ** 2).sum(-1) \
        + 5 * (pose[..., 4] - t[..., 4]).abs()
    return torch.stack([l_box, 3 * (bce + dice), l_pose], -1)


#: each member's gradient norm is clipped to this (a loss spike of one member cannot throw its Adam state off)
MAX_GRAD_NORM = 1.0


def clip_members(model: UniRAP, max_norm: float) -> torch.Tensor:
    """Scale each member's gradient (all its parameters together) to a norm of at most ``max_norm``, member by
    member (members stay independent); returns the norms before clipping ``(M,)``."""
    n = model.n_members
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    # a parameter's rows are its members' (the separate decoders: 3 rows per member, member-major)
    sq = sum(g.reshape(n, -1).pow(2).sum(1) for g in grads)
    norms = torch.sqrt(sq)
    factor = (max_norm / (norms + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(factor.repeat_interleave(g.shape[0] // n).view(-1, *([1] * (g.dim() - 1))))
    return norms


@checked(  # the model's mask_statistics and losses in the training loop run bare
    skip_nested=True, idx=Array("t m b", integer=True), weights=Array("t m b 3"), lr=Float(0, 1, low_inclusive=False)
)
def train(model: UniRAP, pool: dict[str, torch.Tensor], idx: torch.Tensor, weights: torch.Tensor, *, lr: float,
          checkpoint: Checkpointer | None = None, name: str = "train", progress: bool = False) -> np.ndarray:
    """Adam on every member at once: member ``m`` at step ``t`` trains on ``pool[idx[t, m]]`` with the loss
    weights ``weights[t, m]`` ``(B, 3)``. Resumes from ``checkpoint`` (entry ``<name>``) if it holds a state.
    Returns each member's training loss per step ``(T, M)`` (its weighted loss, averaged over its batch)."""
    if not isinstance(pool, dict) or any(k not in pool for k in ("images", "tokens", "boxes", "masks", "grasps")):
        raise ValueError("pool must be a dict of tensors with keys images, tokens, boxes, masks, grasps")
    if idx.shape[1] != model.n_members:
        raise ValueError(f"idx must have one column per member ({model.n_members}), got shape {tuple(idx.shape)}")
    if int(idx.min()) < 0 or int(idx.max()) >= len(pool["images"]):
        raise ValueError(
            f"idx must index the pool (0 to {len(pool['images']) - 1}), got {int(idx.min())}..{int(idx.max())}"
        )
    device = next(model.parameters()).device
    opt = torch.optim.Adam(model.parameters(), lr=lr, foreach=True)  # the per-tensor loop's steps, fewer calls
    n_steps = idx.shape[0]
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda t: min(1.0, (t + 1) / 20) * (1 - 0.8 * t / n_steps))
    tgt = targets(pool, model.image_size)
    curve = np.zeros((n_steps, model.n_members), np.float32)
    loop = LoopState(checkpoint, name, modules={"model": model}, optimizers={"optimizer": opt},
                     schedulers={"scheduler": sched})  # fmt: skip
    start, saved = loop.restore()
    if start:
        curve[:start] = saved["curve"][:start]
    model.train()
    for t in tqdm(range(start, n_steps), disable=not progress, desc=name, leave=False):
        batch = idx[t].to(device)
        out = model(pool["images"][batch], pool["tokens"][batch])
        per = losses(out, {k: v[batch] for k, v in tgt.items()})
        w = weights[t].to(device)
        member_loss = ((per * w).sum(-1)).mean(-1)
        loss = member_loss.sum()  # a sum over members: each member's gradient is its own
        opt.zero_grad(set_to_none=True)
        loss.backward()
        clip_members(model, MAX_GRAD_NORM)
        opt.step()
        sched.step()
        curve[t] = member_loss.detach().cpu().numpy()
        loop.save(t + 1, lambda: {"curve": curve.copy()})
    model.eval()
    return curve


@checked(skip_nested=True, chunk=Int(1, 10**7))  # the model's mask_statistics in the loop runs bare
@torch.no_grad()
def predict(model: UniRAP, images: torch.Tensor, tokens: torch.Tensor, chunk: int = 100,
            pose_mask: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
    """Every member on the same ``images`` (N, 3, S, S) and ``tokens`` (N, L), in chunks; ``pose_mask``
    (N, S, S), if given, is the mask every member's pose head reads (the true-mask positive control)."""
    model.eval()
    m = model.n_members
    def part(i: int) -> torch.Tensor | None:
        return None if pose_mask is None else pose_mask[i: i + chunk][None].expand(m, -1, -1, -1)

    outs = [model(images[i: i + chunk][None].expand(m, -1, -1, -1, -1), tokens[i: i + chunk][None].expand(m, -1, -1),
                  pose_mask=part(i))
            for i in range(0, len(images), chunk)]
    return {k: torch.cat([o[k] for o in outs], 1) for k in outs[0]}
