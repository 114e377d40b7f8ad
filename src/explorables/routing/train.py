"""Training and evaluating :class:`~.model.RouteReader` on the RRT; resumable from a checkpoint."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import nn

from ..core.checkpoint import Checkpointer
from ..core.validation import check_int, check_positive
from .model import N_STATS, RouteReader, routing_statistics
from .rrt import RRTBatch


@dataclass
class TrainedModel:
    kind: str
    model: RouteReader
    accuracy: float
    parameters: int
    steps: list[int] = field(default_factory=list)
    loss: list[float] = field(default_factory=list)


@torch.no_grad()
def accuracy(model: RouteReader, data: RRTBatch, batch: int = 4096) -> float:
    """Fraction of ``data`` whose predicted source position equals the label."""
    model.eval()
    hits = 0
    for start in range(0, len(data), batch):
        b = data[start : start + batch]
        hits += int((model(b.keys, b.pointers, b.query, b.alphas).argmax(1) == b.label).sum())
    model.train()
    return hits / len(data)


@torch.no_grad()
def rounding_accuracy(data: RRTBatch, statistic: int = 3) -> float:
    """A baseline without training: round one routing statistic of the last hop to a position.

    The centroids lie in ``[0, 1]`` (positions ``p_j = j / (m - 1)``), so ``round((m - 1) c)`` is a
    position; this is the fraction of ``data`` where it equals the label. For the squared-weight
    centroid ``c_2`` (``statistic=3``) this is high: ``c_2`` is close to a soft argmax.
    """
    statistic = check_int("statistic", statistic, minimum=0, maximum=N_STATS - 1)
    alpha = data.alphas[-1][:, 0].double()
    m = alpha.shape[-1]
    guess = (routing_statistics(alpha)[:, statistic] * (m - 1)).round().long()
    return float((guess == data.label).double().mean())


def train_model(
    model: RouteReader,
    train: RRTBatch,
    test: RRTBatch,
    *,
    steps: int,
    batch: int = 64,
    lr: float = 3e-3,
    seed: int = 0,
    record_every: int = 50,
    checkpoint: Checkpointer | None = None,
    name: str = "rrt/model",
) -> TrainedModel:
    """AdamW on cross-entropy over ``steps`` minibatches drawn (seeded) from ``train``.

    The loop state (weights, optimiser, sampler and the loss record) is stored under ``name`` with
    ``checkpoint.maybe_save``; a resumed run continues from it and ends with the same weights.
    ``model``, ``train`` and ``test`` must be on the same device.
    """
    steps = check_int("steps", steps)
    batch = check_int("batch", batch, maximum=len(train))
    check_positive("lr", lr)
    check_int("record_every", record_every)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    gen = torch.Generator().manual_seed(seed)
    start, rec_steps, rec_loss = 0, [], []
    saved = checkpoint.get(name) if checkpoint is not None else None
    if saved is not None:
        model.load_state_dict(saved["model"])
        opt.load_state_dict(saved["optimizer"])
        gen.set_state(saved["generator"])
        start, rec_steps, rec_loss = saved["step"], list(saved["steps"]), list(saved["loss"])
    running = 0.0
    for step in range(start, steps):
        idx = torch.randint(len(train), (batch,), generator=gen).to(train.label.device)
        b = train[idx]
        loss = nn.functional.cross_entropy(model(b.keys, b.pointers, b.query, b.alphas), b.label)
        opt.zero_grad()
        loss.backward()
        opt.step()
        running += loss.item()
        if (step + 1) % record_every == 0 or step + 1 == steps:
            rec_steps.append(step + 1)
            rec_loss.append(running / (record_every if (step + 1) % record_every == 0 else (step + 1) % record_every))
            running = 0.0
            if checkpoint is not None:
                checkpoint.maybe_save(
                    name,
                    lambda step=step: {
                        "model": model.state_dict(),
                        "optimizer": opt.state_dict(),
                        "generator": gen.get_state(),
                        "step": step + 1,
                        "steps": rec_steps,
                        "loss": rec_loss,
                    },
                )
    n_params = sum(p.numel() for p in model.parameters())
    return TrainedModel(model.kind, model, accuracy(model, test), n_params, rec_steps, rec_loss)
